"""Rows already in the common form (a dense float64 C-ordered array or a
canonical CSR matrix), accepted as they are by ``_validate_X`` after O(1)
checks and compiled scans: every registered learner plays one such row, or a
chunk of them, as the batch path does, checks what must be checked (its own
row rule included) and raises the full validation's errors."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from _helpers import (
    assert_same_learner,
    assert_same_log,
    assert_same_state,
    single_rows,
    snapshot,
)
from _registry import KERNEL_ENTRIES as ENTRIES
from sklearn.base import BaseEstimator

import skbandit._base._validation as val
from skbandit import BanditFeedback, LoggedFeedback, SeparableOneVsAll

ROWS = 12
CLASSES = np.arange(3)


def _stream(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(ROWS, 5)) / 4.0  # row norms below 1 (rational kernel)
    X[X < -0.15] = 0.0  # sparse rows, some empty columns
    y = rng.integers(0, 3, size=ROWS)
    return X, y


class _Spy:
    """Counts calls to scikit-learn's full input validation and to the full
    parameter validation."""

    def __init__(self, monkeypatch):
        self.validate_data = 0
        self.validate_params = 0
        real_data, real_params = val.validate_data, BaseEstimator._validate_params

        def validate_data(*args, **kwargs):
            self.validate_data += 1
            return real_data(*args, **kwargs)

        def validate_params(est):
            self.validate_params += 1
            return real_params(est)

        monkeypatch.setattr(val, "validate_data", validate_data)
        monkeypatch.setattr(BaseEstimator, "_validate_params", validate_params)

    def reset(self):
        self.validate_data = self.validate_params = 0


@pytest.mark.parametrize("form", ["dense", "csr"])
@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.id)
def test_lean_rows_play_as_the_batch_path(entry, form):
    """One row at a time on the lean path (dense or CSR rows) leaves the same
    learner as one partial_fit of the whole chunk, and the live loop plays the
    simulator's actions (the on-policy equivalence)."""
    X, y = _stream(1)
    batch = entry.make(random_state=0).partial_fit(X, y, classes=CLASSES)
    rows = single_rows(X, form)
    one = entry.make(random_state=0)
    for i in range(ROWS):
        one.partial_fit(rows[i], y[i : i + 1].tolist(), classes=CLASSES)
    assert_same_learner(one, batch)
    if not entry.bandit:
        return
    live = entry.make(random_state=0)
    for i in range(ROWS):
        a, p = live.sample_actions(rows[i], classes=CLASSES if i == 0 else None)
        live.partial_fit(rows[i], LoggedFeedback(a, [float(a[0] == y[i])], p))
    # n_greedy_mistakes_ needs the labels: logged feedback reveals only some
    assert live.n_greedy_mistakes_ <= batch.n_greedy_mistakes_
    live.n_greedy_mistakes_ = batch.n_greedy_mistakes_
    assert_same_learner(live, batch)


def _bad_rows(form):
    X = np.full((1, 5), 0.1)
    wide = np.full((1, 6), 0.1)
    nan, big = X.copy(), X.copy()
    nan[0, 2] = np.nan
    big[0, 1] = 2.0**481
    if form == "dense":
        return [(nan, "NaN"), (big, "2\\*\\*480"), (wide, "features")]
    dup = sp.csr_matrix(
        (np.array([0.1, 0.2]), np.array([3, 1]), np.array([0, 2])), shape=(1, 5)
    )
    dup.indices[0] = 1  # column 1 stored twice: not canonical
    broken = sp.csr_matrix(X)
    broken.indices[0] = 7  # out of range
    return [
        (sp.csr_matrix(nan), "NaN"),
        (sp.csr_matrix(big), "2\\*\\*480"),
        (sp.csr_matrix(wide), "features"),
        (broken, "Malformed"),
        (dup, None),  # accepted by the full path (duplicates summed)
    ]


@pytest.mark.parametrize("form", ["dense", "csr"])
@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.id)
def test_lean_path_refuses_bad_rows_unchanged(entry, form):
    X, y = _stream()
    est = entry.make(random_state=0).partial_fit(X, y, classes=CLASSES)
    for row, message in _bad_rows(form):
        snap = snapshot(est)
        calls = [lambda r=row: est.partial_fit(r, [0])]
        if entry.bandit:
            calls.append(lambda r=row: est.sample_actions(r))
        for call in calls:
            if message is None:
                continue
            with pytest.raises(ValueError, match=message):
                call()
            assert_same_state(est, snap)
    if form == "csr":
        # the non-canonical row is learned as its canonical sum (copied; the
        # caller's matrix is not modified)
        dup = _bad_rows("csr")[-1][0]
        summed = sp.csr_matrix(dup.toarray())
        a = entry.make(random_state=0).partial_fit(X, y, classes=CLASSES)
        b = entry.make(random_state=0).partial_fit(X, y, classes=CLASSES)
        a.partial_fit(dup, [1])
        b.partial_fit(summed, [1])
        assert_same_learner(a, b)
        assert dup.indices.tolist() == [1, 1]


@pytest.mark.parametrize("form", ["dense", "csr"])
def test_row_check_hook_runs_on_the_lean_path(form, monkeypatch):
    """SeparableOneVsAll's rule for the rational kernel (rows of norm <= 1) is
    a ``_check_rows`` hook: the lean path runs it (no full validation)."""
    spy = _Spy(monkeypatch)
    X, y = _stream()
    est = SeparableOneVsAll(kernel="rational", large_norm="raise", random_state=0)
    est.partial_fit(X, y, classes=CLASSES)
    long = np.array([[1.2, 0.0, 0.0, 0.0, 0.0]])
    row = long if form == "dense" else sp.csr_matrix(long)
    snap = snapshot(est)
    spy.reset()
    for call in (
        lambda: est.partial_fit(row, [0]),
        lambda: est.sample_actions(row),
        lambda: est.partial_fit(row, LoggedFeedback([0], [1.0], [0.5])),
    ):
        with pytest.raises(ValueError, match="norm at most 1"):
            call()
        assert_same_state(est, snap)
    assert spy.validate_data == 0
    # the batch paths run the same hook
    with pytest.raises(ValueError, match="norm at most 1"):
        est.predict(row)


# ------------------------------------------------------- chunks on a fitted learner
def _chunks(X, form, sizes=(3, 1, 5, 3)):
    """Consecutive chunks of X (dense float64 C-ordered or canonical CSR) of
    the given numbers of rows."""
    Xf = np.ascontiguousarray(X) if form == "dense" else sp.csr_matrix(X)
    bounds = np.cumsum((0, *sizes))
    return [
        (Xf[a:b], slice(a, b)) for a, b in zip(bounds[:-1], bounds[1:], strict=True)
    ]


@pytest.mark.parametrize("form", ["dense", "csr"])
@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.id)
def test_lean_chunks_play_as_the_full_path(entry, form):
    """The same chunks through partial_fit (the lean path of a fitted learner)
    and through the full path (``_partial_fit_labels``: scikit-learn's
    validation): the same learner and the same feedback logs, bit for bit."""
    X, y = _stream(2)
    lean = entry.make(random_state=0).partial_fit(X[:2], y[:2], classes=CLASSES)
    full = entry.make(random_state=0).partial_fit(X[:2], y[:2], classes=CLASSES)
    for i, (Xc, rows) in enumerate(_chunks(X, form)):
        fa, fb = BanditFeedback(y[rows]), BanditFeedback(y[rows])
        lean.partial_fit(Xc, fa if i % 2 else y[rows].tolist())
        full._partial_fit_labels(Xc, fb if i % 2 else y[rows].tolist(), None)
        assert_same_learner(lean, full)
        if i % 2:
            assert fa.n_rounds_ == Xc.shape[0]
            assert_same_log(fa, fb)


def _error(call):
    with pytest.raises(Exception) as info:
        call()
    return type(info.value), str(info.value)


@pytest.mark.parametrize("form", ["dense", "csr"])
@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.id)
def test_lean_chunks_raise_the_full_paths_errors_unchanged(entry, form):
    """Bad rows, labels, classes or parameters on a fitted learner's chunk:
    the lean path raises the full path's error (type and message), in the same
    order when two things are wrong, and leaves the learner as it was."""
    X, y = _stream()
    est = entry.make(random_state=0).partial_fit(X, y, classes=CLASSES)
    good = X[:2] if form == "dense" else sp.csr_matrix(X[:2])

    def after_a_good_row(row):  # the bad row second (a wider one alone)
        if row.shape[1] != X.shape[1]:
            return row
        if form == "dense":
            return np.vstack([X[:1], row])
        return sp.vstack([sp.csr_matrix(X[:1]), row], format="csr")

    bad_rows = [after_a_good_row(r) for r, message in _bad_rows(form) if message]
    cases = [(rows, y[:2]) for rows in bad_rows]
    cases += [
        (good, np.array([0, 7])),  # a label not in classes_
        (good, y[:3]),  # inconsistent lengths
        (good, np.array([0.0, np.nan])),  # a NaN label
        (bad_rows[0], np.array([0.0, np.nan])),  # both wrong: y's error first
    ]
    for Xc, yc in cases:
        snap = snapshot(est)
        expected = _error(lambda Xc=Xc, yc=yc: est._partial_fit_labels(Xc, yc, None))
        assert_same_state(est, snap)
        assert _error(lambda Xc=Xc, yc=yc: est.partial_fit(Xc, yc)) == expected
        assert_same_state(est, snap)
    snap = snapshot(est)
    expected = _error(lambda: est._partial_fit_labels(good, y[:2], [0, 1, 5]))
    assert _error(lambda: est.partial_fit(good, y[:2], classes=[0, 1, 5])) == expected
    assert_same_state(est, snap)
    for params, message in entry.invalid_params:
        bad = entry.make(random_state=0).partial_fit(X, y, classes=CLASSES)
        bad.partial_fit(good, y[:2])  # caches the validated parameters
        for name, value in params.items():
            setattr(bad, name, value)  # replaced without set_params
        snap = snapshot(bad)
        with pytest.raises(ValueError, match=message):
            bad.partial_fit(good, y[:2])
        assert_same_state(bad, snap)
