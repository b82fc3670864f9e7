"""The lean one-row path: every registered learner serves and learns one dense
float64 row or one canonical CSR row without scikit-learn's ``validate_data``
and without re-validating unchanged parameters, checks what must be checked
(its own row rule included), and plays exactly what the full path plays."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from _helpers import assert_same_learner, assert_same_state, snapshot
from _registry import ENTRIES
from sklearn.base import BaseEstimator

import skbandit._base._validation as val
from skbandit import LoggedFeedback, SeparableOneVsAll

ROWS = 12
CLASSES = np.arange(3)


def _stream(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(ROWS, 5)) / 4.0  # row norms below 1 (rational kernel)
    X[X < -0.15] = 0.0  # sparse rows, some empty columns
    y = rng.integers(0, 3, size=ROWS)
    return X, y


def _rows(X, form):
    if form == "dense":
        return [np.ascontiguousarray(X[i : i + 1]) for i in range(X.shape[0])]
    Xs = sp.csr_matrix(X)
    return [Xs[i : i + 1] for i in range(X.shape[0])]


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
def test_every_learner_takes_the_lean_path(entry, form, monkeypatch):
    spy = _Spy(monkeypatch)
    X, y = _stream()
    rows = _rows(X, form)
    est = entry.make(random_state=0)
    est.partial_fit(rows[0], y[:1], classes=CLASSES)  # the first call: full path
    assert spy.validate_data == 1
    est.partial_fit(rows[0], y[:1])  # caches the validated parameters
    spy.reset()
    for i in range(1, ROWS):
        if entry.bandit:
            actions, propensities = est.sample_actions(rows[i])
            reward = float(actions[0] == y[i])
            est.partial_fit(rows[i], LoggedFeedback(actions, [reward], propensities))
        est.partial_fit(rows[i], [y[i]])  # the simulator's call
        est.partial_fit(rows[i], y[i : i + 1])
    assert (spy.validate_data, spy.validate_params) == (0, 0), (
        f"{entry.id} validated {spy.validate_data} {form} rows and its parameters "
        f"{spy.validate_params} times on the one-row path"
    )
    # A replaced parameter is validated again (a meta-estimator validates its
    # candidates' parameters too), still without the full input validation.
    est.set_params(random_state=1)
    est.partial_fit(rows[1], [y[1]])
    assert spy.validate_data == 0
    assert spy.validate_params >= 1


@pytest.mark.parametrize("form", ["dense", "csr"])
@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.id)
def test_lean_rows_play_as_the_batch_path(entry, form):
    """One row at a time on the lean path (dense or CSR rows) leaves the same
    learner as one partial_fit of the whole chunk, and the live loop plays the
    simulator's actions (the on-policy equivalence)."""
    X, y = _stream(1)
    batch = entry.make(random_state=0).partial_fit(X, y, classes=CLASSES)
    rows = _rows(X, form)
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


def test_overriding_validate_x_leaves_the_lean_path(monkeypatch):
    """A learner that adds checks by overriding ``_validate_X`` is validated in
    full on every row (its checks are never skipped), which the registry test
    above reports; the hook keeps the lean path."""
    from skbandit import Banditron

    class Checked(Banditron):
        def _validate_X(self, X, *, reset):
            return super()._validate_X(X, reset=reset)

    spy = _Spy(monkeypatch)
    X, y = _stream()
    est = Checked(random_state=0).partial_fit(X[:1], y[:1], classes=CLASSES)
    spy.reset()
    est.partial_fit(X[1:2], [y[1]])
    assert spy.validate_data == 1
