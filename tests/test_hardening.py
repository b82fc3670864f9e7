"""The core's guarantees: memory safety on malformed sparse input, the failure
guarantee (rollback to the last finished block), overflow detection, the kernel
protocol (round index, real-valued reward, the probability handed to ``learn``,
status flag, separable ``act``/``learn``), the compiled distributions and their
Python twins, the state protocol and the per-block hooks."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from _data import make_stream
from _helpers import (
    assert_same_learner,
    assert_same_log,
    assert_same_next_actions,
    assert_same_state,
    snapshot,
)
from _registry import KERNEL_ENTRIES as ENTRIES
from _registry import entry_params, spread
from numpy.testing import assert_array_equal
from sklearn import get_config

import skbandit._base._rows
from skbandit import SOBA, BanditFeedback, Banditron, LoggedFeedback
from skbandit._core._scans import py_argmax_ties, py_sample_inverse_cdf
from skbandit._core._testing import PoisonedKernel, RecordingKernel
from skbandit.base import LinearBanditClassifier, _kernel_arrays
from skbandit.exploration import EpsilonGreedy, InverseGap

ALL = entry_params(ENTRIES)
K, D = 4, 6


def _fitted(entry, n=40, seed=3):
    X, y = make_stream(n=200, d=D, k=K, seed=seed)
    est = entry.make(random_state=seed)
    est.partial_fit(X[:n], y[:n], classes=np.arange(K))
    return est, X[n:], y[n:]


# --------------------------------------------------------------------------------------
# memory safety: malformed sparse input is refused before any kernel or SciPy reads it


def _csr(n=5, d=D, seed=0):
    X, _ = make_stream(n=n, d=d, k=K, n_empty=1, seed=seed)
    return sp.csr_matrix(X)


def _malformed():
    """(id, matrix, words the message must contain)."""
    cases = []
    X = _csr()
    bad = X.copy()
    bad.indices[2] = D + 1000  # edited after construction: scipy does not check
    cases.append(("column-too-large", bad, "out of range"))
    bad = X.copy()
    bad.indices[-1] = -1
    cases.append(("column-negative", bad, "out of range"))
    built = sp.csr_matrix(
        (np.ones(3), np.array([0, 7, 1], dtype=np.int32), np.array([0, 2, 3])),
        shape=(2, 3),
    )
    cases.append(("column-out-of-shape-at-construction", built, "out of range"))
    bad = X.copy()
    bad.indptr[2], bad.indptr[3] = bad.indptr[3], bad.indptr[2] - 1
    cases.append(("indptr-decreasing", bad, "non-decreasing"))
    bad = X.copy()
    bad.indptr = bad.indptr.copy()
    bad.indptr[-1] = bad.nnz + 5
    cases.append(("indptr-last-too-large", bad, "indptr"))
    bad = X.copy()
    bad.indptr = bad.indptr.copy()
    bad.indptr[-1] = bad.nnz - 1
    cases.append(("indptr-last-too-small", bad, "indptr"))
    bad = X.copy()
    bad.indptr = bad.indptr[:-1]
    cases.append(("indptr-wrong-length", bad, "indptr"))
    bad = X.copy()
    bad.indptr = bad.indptr.copy()
    bad.indptr[0] = 1
    cases.append(("indptr-not-from-zero", bad, "indptr"))
    csc = sp.csc_matrix(X.toarray())
    csc.indices[1] = 10_000
    cases.append(("csc-row-index", csc, "row index"))
    coo = sp.coo_matrix(X.toarray())
    coo.col[0] = D + 3
    cases.append(("coo-column", coo, "column index"))
    return cases


MALFORMED = _malformed()


# the structure checks are shared code: every malformed matrix on one learner,
# two in turn on each other learner
@pytest.mark.parametrize(
    "entry, case",
    spread(MALFORMED, per_entry=2, entries=ENTRIES, ids=lambda c: c[0]),
)
def test_malformed_sparse_input_is_refused_everywhere(entry, case):
    _, bad, words = case
    if bad.shape[1] != D:  # the small hand-built matrix: fit/first call only
        est = entry.make(random_state=0)
        with pytest.raises(ValueError, match="Malformed sparse"):
            est.fit(bad, np.arange(bad.shape[0]) % 2)
        assert not hasattr(est, "coef_")
        return
    n = bad.shape[0]
    y = np.arange(n) % K
    with pytest.raises(ValueError, match=words):
        entry.make(random_state=0).fit(bad, y)
    fresh = entry.make(random_state=0)
    with pytest.raises(ValueError, match=words):
        fresh.partial_fit(bad, y, classes=np.arange(K))
    assert not hasattr(fresh, "coef_") and not hasattr(fresh, "n_features_in_")

    est, X_cont, y_cont = _fitted(entry)
    snap = snapshot(est)
    fb = BanditFeedback(y)
    calls = [
        lambda: est.partial_fit(bad, fb),
        lambda: est.fit(bad, y),
        lambda: est.predict(bad),
        lambda: est.decision_function(bad),
        lambda: est.score(bad, y),
        lambda: est.exploration_distribution(bad),
    ]
    for call in calls:
        with pytest.raises(ValueError, match="Malformed sparse"):
            call()
        assert_same_state(est, snap)
    assert fb.n_rounds_ == 0
    twin = _fitted(entry)[0]
    assert_same_next_actions(est, twin, X_cont, y_cont)


def test_check_csr_names_each_problem():
    from skbandit._core._scans import check_csr

    ptr = np.array([0, 2, 3], dtype=np.int32)
    ind = np.array([0, 2, 1], dtype=np.int32)
    assert check_csr(ptr, ind, 3, 2, 3) == ""
    assert check_csr(ptr.astype(np.int64), ind.astype(np.int64), 3, 2, 3) == ""
    assert "length" in check_csr(ptr, ind, 3, 3, 3)
    assert "stored values" in check_csr(ptr, ind, 4, 2, 3)
    assert "column index 2" in check_csr(ptr, ind, 3, 2, 2)
    assert "non-decreasing" in check_csr(np.array([0, 3, 1, 3], np.int32), ind, 3, 3, 3)


def test_check_csr_flags_an_index_at_the_int32_limit_exactly():
    from skbandit._core._scans import check_csr

    # int32 indices, n_cols beyond int32: the compiled range scan clamps the
    # bound and the flag is confirmed exactly (2**31 - 1 is a valid column)
    ptr = np.array([0, 1], dtype=np.int32)
    ind = np.array([2**31 - 1], dtype=np.int32)
    assert check_csr(ptr, ind, 1, 1, 2**31) == ""
    assert "out of range" in check_csr(ptr, ind, 1, 1, 2**31 - 1)
    assert "column index -1" in check_csr(ptr, np.array([-1], np.int32), 1, 1, 5)


def _canonical_by_rows(indptr, indices):
    """SciPy's canonical format by definition: every row strictly increasing."""
    return all(
        bool(np.all(np.diff(indices[indptr[i] : indptr[i + 1]]) > 0))
        for i in range(len(indptr) - 1)
    )


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_csr_canonical_scan_is_the_row_by_row_definition(dtype):
    """``csr_is_canonical`` and ``check_csr_canonical`` (one flat scan of the
    indices counting non-increases, compared with the count at the starts of
    non-empty rows) against the row-by-row definition, on random structures
    with empty rows, duplicates and descents at and off row starts."""
    from skbandit._core._scans import check_csr, check_csr_canonical, csr_is_canonical

    rng = np.random.default_rng(0)
    n_cols = 6
    seen = {True: 0, False: 0}
    for _ in range(3000):
        n_rows = int(rng.integers(0, 6))
        lengths = rng.integers(0, 4, size=n_rows) * (rng.random(n_rows) < 0.7)
        indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(dtype)
        rows = []
        for m in lengths:
            row = np.sort(rng.choice(n_cols, size=m, replace=False))
            if m > 1 and rng.random() < 0.2:  # a duplicate or a descent
                a, b = rng.choice(m, size=2, replace=False)
                row[a] = row[b] if rng.random() < 0.5 else row[a]
                row[[a, b]] = row[[b, a]]
            rows.append(row)
        indices = np.concatenate([np.zeros(0, dtype), *rows]).astype(dtype)
        expected = _canonical_by_rows(indptr, indices)
        seen[expected] += 1
        assert csr_is_canonical(indptr, indices) == expected
        nnz = len(indices)
        assert check_csr_canonical(indptr, indices, nnz, n_rows, n_cols) == (
            "",
            expected,
        )
        if nnz:  # a structural problem: the message of check_csr, not canonical
            bad = indices.copy()
            bad[-1] = n_cols
            problem = check_csr(indptr, bad, nnz, n_rows, n_cols)
            assert problem
            assert check_csr_canonical(indptr, bad, nnz, n_rows, n_cols) == (
                problem,
                False,
            )
    assert min(seen.values()) > 300  # both verdicts were exercised


def test_within_bound_is_max_abs_within_the_bound():
    """The integer scan ``within_bound(v, b)`` decides ``max_abs(v) <= b``:
    at the bound, one ulp either side, signed zeros, subnormals, infinities
    and NaNs of either sign (the sign bit of a NaN set too)."""
    from skbandit._core._scans import max_abs, within_bound

    bound = skbandit._base._rows._MAX_ABS_X
    neg_nan = np.copysign(np.nan, -1.0)
    special = np.array(
        [
            0.0,
            -0.0,
            5e-324,
            -5e-324,
            1.0,
            bound,
            -bound,
            np.nextafter(bound, np.inf),
            -np.nextafter(bound, np.inf),
            np.nextafter(bound, 0.0),
            np.finfo(np.float64).max,
            np.inf,
            -np.inf,
            np.nan,
            neg_nan,
        ]
    )
    rng = np.random.default_rng(1)
    for b in (0.0, 1.0, bound, np.finfo(np.float64).max):
        assert within_bound(np.zeros(0), b)
        for _ in range(400):
            v = rng.choice(special, size=int(rng.integers(1, 9)))
            with np.errstate(over="ignore"):
                v = v * rng.choice([1.0, 0.5, 2.0], size=v.shape)
            assert within_bound(v, b) == (max_abs(v) <= b), (v, b)


@pytest.mark.parametrize("entry", ALL)
def test_int64_indices_copy_only_the_index_arrays(entry):
    X, y = make_stream(n=120, d=D, k=K, seed=5)
    X32 = sp.csr_matrix(X)
    X64 = X32.copy()
    X64.indices = X64.indices.astype(np.int64)
    X64.indptr = X64.indptr.astype(np.int64)
    data, indices, indptr, dense = _kernel_arrays(X64)
    assert not dense and indices.dtype == np.int32 and indptr.dtype == np.int32
    assert np.shares_memory(data, X64.data)  # the values are never copied
    a = entry.make(random_state=1).partial_fit(X64, y, classes=np.arange(K))
    b = entry.make(random_state=1).partial_fit(X32, y, classes=np.arange(K))
    assert_same_learner(a, b)


# --------------------------------------------------------------------------------------
# the failure guarantee


class _Fail(Exception):
    pass


def _failing_after_blocks(entry, n_ok, exc=_Fail):
    """A learner of ``entry`` whose ``_after_block`` raises in block n_ok + 1."""
    est = entry.make(random_state=9)
    count = {"blocks": 0}
    original = est._after_block

    def after_block(kernel):
        original(kernel)
        count["blocks"] += 1
        if count["blocks"] > n_ok:
            raise exc("injected")

    est._after_block = after_block  # instance attribute: not a parameter
    return est


@pytest.mark.parametrize("entry", ALL)
@pytest.mark.parametrize("exc", [_Fail, KeyboardInterrupt])
@pytest.mark.parametrize("container", ["dense", "csr"])
def test_failure_between_blocks_leaves_the_last_finished_block(
    entry, exc, container, monkeypatch
):
    monkeypatch.setattr("skbandit._base._transaction._BLOCK_ROWS", 7)
    X, y = make_stream(n=60, d=D, k=K, seed=2)
    Xc = sp.csr_matrix(X) if container == "csr" else X
    # a first successful call, then a call that fails in its third block
    est = _failing_after_blocks(entry, n_ok=3 + 2, exc=exc)
    est.partial_fit(Xc[:20], y[:20], classes=np.arange(K))  # 3 blocks
    fb = BanditFeedback(y[20:50])
    with pytest.raises(exc):
        est.partial_fit(Xc[20:50], fb)
    # as after 14 rows of the second call: state, counters, generator and log
    ref = entry.make(random_state=9)
    ref.partial_fit(Xc[:20], y[:20], classes=np.arange(K))
    fb_ref = BanditFeedback(y[20:34])
    ref.partial_fit(Xc[20:34], fb_ref)
    del est.__dict__["_after_block"]
    assert_same_learner(est, ref)
    assert_same_log(fb, fb_ref)
    assert est.t_ == 34
    assert_same_next_actions(est, ref, Xc[34:], y[34:])


@pytest.mark.parametrize("entry", ALL)
def test_failure_inside_a_block_rolls_that_block_back(entry, monkeypatch):
    """A failure after the kernel played a block but before it was committed (here:
    writing the log) restores the block's start: weights updated in place, the
    generator advanced by the uniforms, the counters and the log."""
    monkeypatch.setattr("skbandit._base._transaction._BLOCK_ROWS", 10)
    X, y = make_stream(n=60, d=D, k=K, seed=4)
    est = entry.make(random_state=4)
    fb = BanditFeedback(y)
    calls = {"n": 0}
    record = fb._record

    def failing_record(*args):
        calls["n"] += 1
        if calls["n"] == 3:
            raise MemoryError("injected")
        record(*args)

    fb._record = failing_record
    with pytest.raises(MemoryError):
        est.partial_fit(X, fb, classes=np.arange(K))
    ref = entry.make(random_state=4)
    fb_ref = BanditFeedback(y[:20])
    ref.partial_fit(X[:20], fb_ref, classes=np.arange(K))
    assert_same_learner(est, ref)
    assert_same_log(fb, fb_ref)


@pytest.mark.parametrize("entry", ALL)
def test_failure_in_the_first_block_restores_the_previous_learner(entry, monkeypatch):
    monkeypatch.setattr("skbandit._base._transaction._BLOCK_ROWS", 8)
    X, y = make_stream(n=60, d=D, k=K, seed=6)
    # first call: the learner stays unfitted
    est = _failing_after_blocks(entry, n_ok=0)
    with pytest.raises(_Fail):
        est.partial_fit(X, y, classes=np.arange(K))
    assert not hasattr(est, "classes_") and not hasattr(est, "n_features_in_")
    # fit on a fitted learner: the previous model is intact
    est, X_cont, y_cont = _fitted(entry)
    snap = snapshot(est)
    failing = copy.deepcopy(est)
    failing._after_block = _failing_after_blocks(entry, n_ok=0)._after_block
    with pytest.raises(_Fail):
        failing.fit(X, y)
    del failing.__dict__["_after_block"]
    assert_same_state(failing, snap)


@pytest.mark.filterwarnings("ignore::skbandit.OffPolicyWarning")
@pytest.mark.parametrize("entry", ALL)
@pytest.mark.parametrize("logged", [False, True], ids=["labels", "logged"])
def test_n_iter_counts_finished_passes(entry, logged, monkeypatch):
    """``n_iter_`` is the number of passes the last call finished: a ``fit`` that
    fails in its first pass (after a finished block, so the learner keeps that
    block) reports 0, one that fails in its third pass 2, a complete one
    ``max_iter``; a ``partial_fit`` that fails after a finished block 0."""
    if logged and not entry.bandit:
        pytest.skip("full-information learners do not learn from logged feedback")
    monkeypatch.setattr("skbandit._base._transaction._BLOCK_ROWS", 8)
    X, y = make_stream(n=20, d=D, k=K, seed=5)  # 3 blocks per pass
    if logged:
        rng = np.random.default_rng(0)
        actions = rng.integers(0, K, size=20)
        actions[:K] = np.arange(K)  # fit's classes are the logged actions
        y = LoggedFeedback(actions, (actions == y).astype(float), np.full(20, 1 / K))
    for n_ok, passes in ((1, 0), (3 * 2 + 1, 2)):
        est = _failing_after_blocks(entry, n_ok=n_ok)
        with pytest.raises(_Fail):
            est.fit(X, y)
        assert est.t_ == 8 * n_ok - 4 * passes  # the finished blocks (8, 8, 4 rows)
        assert est.n_iter_ == passes
    del est.__dict__["_after_block"]
    est.fit(X, y)
    assert est.n_iter_ == est.max_iter
    failing = _failing_after_blocks(entry, n_ok=4)
    failing.partial_fit(X, y, classes=np.arange(K))  # 3 blocks
    assert failing.n_iter_ == 1
    with pytest.raises(_Fail):
        failing.partial_fit(X, y)
    assert failing.t_ == 28 and failing.n_iter_ == 0


# --------------------------------------------------------------------------------------
# every distribution is a probability vector


def _assert_probability_rows(p):
    p = np.atleast_2d(p)
    assert np.isfinite(p).all() and (p >= 0).all()
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=0, atol=1e-9)


_INVALID = "exploration distribution.*not a valid probability vector"


@pytest.mark.filterwarnings("ignore::skbandit.OffPolicyWarning")
@pytest.mark.parametrize("entry", ALL)
@pytest.mark.parametrize("mode", [0, 1, 2], ids=["nan", "negative", "unnormalised"])
def test_invalid_distribution_raises_and_rolls_back(entry, mode, monkeypatch):
    """A kernel whose distribution is corrupted from round 53 on (a NaN, a
    negative entry, or a vector summing to 1.5): every path that plays, serves,
    learns or returns a distribution raises a FloatingPointError naming it, and
    the learner is as after its last finished block; nothing invalid is logged."""
    monkeypatch.setattr("skbandit._base._transaction._BLOCK_ROWS", 8)
    X, y = make_stream(n=120, d=D, k=K, seed=11)
    est = entry.make(random_state=11).partial_fit(X[:40], y[:40], classes=range(K))
    clean = copy.deepcopy(est)
    make_kernel, before_block = type(est)._make_kernel, type(est)._before_block

    def poisoned(self):
        return PoisonedKernel(make_kernel(self), 53, mode)

    def poisoned_before_block(self, kernel, n_rows):
        # a learner may start a new kernel for a block (a grown buffer)
        return PoisonedKernel(before_block(self, kernel.inner, n_rows), 53, mode)

    monkeypatch.setattr(type(est), "_make_kernel", poisoned)
    monkeypatch.setattr(type(est), "_before_block", poisoned_before_block)
    fb = BanditFeedback(y[40:80])
    # round 53 is row 12 of this call, in its second block
    with pytest.raises(FloatingPointError, match="row 12 of X is not a valid"):
        est.partial_fit(X[40:80], fb)
    assert est.t_ == 48 and fb.n_rounds_ == 8
    assert ((fb.propensities_ > 0) & (fb.propensities_ <= 1)).all()
    ref, fb_ref = copy.deepcopy(clean), BanditFeedback(y[40:48])
    ref.partial_fit(X[40:48], fb_ref)
    assert_same_learner(est, ref)
    assert_same_log(fb, fb_ref)
    # acting and predicting at round 49 (its distribution is valid) then 53
    snap = snapshot(est)
    actions, props = est.sample_actions(X[80:84])
    assert ((props > 0) & (props <= 1)).all()
    _assert_probability_rows(est.exploration_distribution(X[80:84]))  # round 49
    with pytest.raises(FloatingPointError, match="row 0 of X is not a valid"):
        est.sample_actions(X[84:85])  # round 53: the fifth row served
    assert est.n_pending_ == 4
    est._n_pending = 0
    assert_same_state(est, snap)
    est.t_ = 52
    with pytest.raises(FloatingPointError, match="row 0 of X is not a valid"):
        est.exploration_distribution(X[80:82])  # round 53
    est.t_ = 48
    if entry.bandit:
        logged = LoggedFeedback(actions, np.zeros(4), props)
        before = snapshot(est)
        est.partial_fit(X[80:84], logged)  # rounds 49-52: valid
        assert est.t_ == 52
        with pytest.raises(FloatingPointError, match=_INVALID):
            est.partial_fit(X[84:85], LoggedFeedback(actions[:1], [0.0], [0.5]))
        assert est.t_ == 52
        est._set_state(before)
    monkeypatch.undo()
    assert_same_learner(est, ref)


def test_squarecb_overflowing_gamma_never_logs_nan():
    """The issue's repro: ``InverseGap(exponent=400)`` makes ``gamma_t`` overflow to
    infinity within a few rounds; on all-zero rows every class ties and the
    inverse gap weighting computes inf * 0. The learner either raises the
    invalid-distribution error (rolling back) or plays valid distributions;
    it never logs or returns NaN."""
    from skbandit import SquareCB

    X, y = np.zeros((30, 3)), np.arange(30) % 3
    est = SquareCB(
        exploration=InverseGap(exponent=400), fit_intercept=False, random_state=0
    )
    fb = BanditFeedback(y)
    try:
        est.partial_fit(X, fb, classes=[0, 1, 2])
    except FloatingPointError as exc:
        assert "not a valid probability vector" in str(exc)
        assert not hasattr(est, "classes_")  # failed in its only block
        assert fb.n_rounds_ == 0
    else:
        assert ((fb.propensities_ > 0) & (fb.propensities_ <= 1)).all()
        _assert_probability_rows(est.exploration_distribution(X[:2]))
    est = SquareCB(
        exploration=InverseGap(exponent=400), fit_intercept=False, random_state=0
    )
    est.partial_fit(X[:3], y[:3], classes=[0, 1, 2])  # rounds 1-3: finite gamma
    fb = BanditFeedback(y)
    try:
        est.partial_fit(X, fb)
    except FloatingPointError as exc:
        assert "not a valid probability vector" in str(exc)
        assert est.t_ == 3 and fb.n_rounds_ == 0
    else:
        assert np.isfinite(fb.propensities_).all()
        assert ((fb.propensities_ > 0) & (fb.propensities_ <= 1)).all()
    try:
        p = est.exploration_distribution(X[:2])
    except FloatingPointError as exc:
        assert "not a valid probability vector" in str(exc)
    else:
        _assert_probability_rows(p)


# --------------------------------------------------------------------------------------
# overflow


@pytest.mark.parametrize("entry", ALL)
@pytest.mark.parametrize("container", ["dense", "csr"])
def test_overflow_raises_and_keeps_the_last_finite_block(entry, container, monkeypatch):
    """The backstop behind the bound on feature values: an overflow inside a
    pass (here provoked by values beyond the bound, which is lifted for the
    test; with it, such rows are refused before anything is played) stops the
    kernel and rolls the block back."""
    monkeypatch.setattr("skbandit._base._transaction._BLOCK_ROWS", 16)
    monkeypatch.setattr("skbandit._base._rows._MAX_ABS_X", np.inf)
    # blocks of exactly 16 rows: SOBA full's pending updates end none early
    monkeypatch.setattr(SOBA, "_pending_passes", np.inf)
    X, y = make_stream(n=120, d=D, k=K, n_empty=0, seed=8)
    X[40:] *= 1e200  # rows 40.. overflow the scores (1e200 * 1e200)
    Xc = sp.csr_matrix(X) if container == "csr" else X
    est = entry.make(random_state=8)
    fb = BanditFeedback(y)
    with pytest.raises(FloatingPointError, match="(?s)non-finite.*[Ss]cale"):
        est.partial_fit(Xc, fb, classes=np.arange(K))
    # the last finished block before the overflow ends at a multiple of 16; a
    # learner that does not update every round (Gaptron with bandit feedback:
    # only on right plays with an active loss) may overflow a few blocks later
    last = 112 if entry.name == "Gaptron" else 48
    assert est.t_ % 16 == 0 and 32 <= est.t_ <= last
    for name in est._state_attrs:
        assert np.isfinite(getattr(est, name)).all(), name
    assert np.isfinite(est.decision_function(X[:40])).all()
    ref = entry.make(random_state=8)
    fb_ref = BanditFeedback(y[: est.t_])
    ref.partial_fit(Xc[: est.t_], fb_ref, classes=np.arange(K))
    assert_same_learner(est, ref)
    assert_same_log(fb, fb_ref)
    # a first call that overflows in its first block leaves the learner unfitted
    fresh = entry.make(random_state=8)
    with pytest.raises(FloatingPointError):
        fresh.partial_fit(Xc[40:], y[40:], classes=np.arange(K))
    assert not hasattr(fresh, "coef_")


@pytest.mark.parametrize("entry", ALL)
def test_exploration_distribution_refuses_overflowing_rows(entry):
    est, _, _ = _fitted(entry)
    X = np.full((2, D), 1e100)  # within the bound on feature values
    if entry.id == "BanditPipeline":  # (the union's row block is not bounded)
        pytest.skip("its random features are bounded: no row overflows its scores")
    # a meta-estimator's state: its candidates' (OnlineSelector), its
    # learner's (BanditPipeline)
    inner = getattr(est, "candidates_", [getattr(est, "learner_", est)])
    for learner in inner:
        if "dual_coef_" in learner._state_attrs:
            # the rational kernel is at most 2 on the unit ball (where the rows
            # are projected): its scores overflow through the dual coefficients
            learner.dual_coef_[...] = np.finfo(np.float64).max
            continue
        # (PNewtron's coef_ is computed from its state: its state is set)
        names = ("coef_",) if "coef_" in learner._state_attrs else learner._state_attrs
        for name in names:
            value = getattr(learner, name)
            if value.dtype.kind == "f":
                value[...] = 1e300
    with pytest.raises(FloatingPointError, match="[Ss]cale"):
        est.exploration_distribution(X)


# --------------------------------------------------------------------------------------
# the kernel protocol, observed through a recording kernel


class Recorder(LinearBanditClassifier):
    """Epsilon-greedy over W x with W fixed; records what ``learn`` receives."""

    _parameter_constraints = {**LinearBanditClassifier._parameter_constraints}

    def __init__(
        self, *, max_iter=2, shuffle=True, random_state=None, stop_at=0, status=0
    ):
        super().__init__(max_iter=max_iter, shuffle=shuffle, random_state=random_state)
        self.stop_at = stop_at
        self.status = status

    def _init_state(self, n_features, n_classes):
        super()._init_state(n_features, n_classes)
        self.rec_ = {
            "rounds": np.zeros(10_000, dtype=np.int64),
            "played": np.zeros(10_000, dtype=np.int32),
            "greedy": np.zeros(10_000, dtype=np.int32),
            "prob": np.zeros(10_000),
            "reward": np.zeros(10_000),
        }
        self.n_rec_ = 0

    def _make_kernel(self):
        r = self.rec_
        return RecordingKernel(
            self.coef_.T,
            0.3,
            r["rounds"],
            r["played"],
            r["greedy"],
            r["prob"],
            r["reward"],
            self.n_rec_,
            self.stop_at,
            self.status,
        )

    def _after_block(self, kernel):
        self.n_rec_ = kernel.n_recorded


def test_round_index_is_global_and_one_based():
    X, y = make_stream(n=30, d=D, k=K, seed=1)
    est = Recorder(random_state=0)
    est.partial_fit(X[:10], y[:10], classes=np.arange(K))
    est.partial_fit(X[10:], y[10:])
    assert_array_equal(est.rec_["rounds"][: est.n_rec_], np.arange(1, 31))
    fitted = Recorder(random_state=0, max_iter=3).fit(X, y)  # epochs continue t
    assert_array_equal(fitted.rec_["rounds"][: fitted.n_rec_], np.arange(1, 91))


def test_learn_receives_the_papers_probability_and_a_real_reward():
    """``learn`` gets p_g(a) for the tie-broken greedy label g (the update's
    probability), while the log holds the marginal; the reward is the double
    1.0 / 0.0 of 1[a == y]."""
    X = np.zeros((50, D))  # every row ties: greedy is the tie-break
    y = np.arange(50) % K
    est = Recorder(random_state=0)
    fb = BanditFeedback(y)
    est.partial_fit(X, fb, classes=np.arange(K))
    r = {name: v[: est.n_rec_] for name, v in est.rec_.items()}
    gamma = 0.3
    expected_prob = np.where(
        r["played"] == r["greedy"], gamma / K + (1 - gamma), gamma / K
    )
    assert_array_equal(r["prob"], expected_prob)
    assert_array_equal(r["reward"], (r["played"] == y).astype(np.float64))
    assert np.allclose(fb.propensities_, 1 / K)  # the marginal at a K-way tie
    assert not np.allclose(r["prob"], 1 / K)


@pytest.mark.parametrize("where", [5, 10])
def test_kernel_status_stops_and_rolls_back_the_block(where, monkeypatch):
    monkeypatch.setattr("skbandit._base._transaction._BLOCK_ROWS", 10)
    X, y = make_stream(n=30, d=D, k=K, seed=1)
    est = Recorder(random_state=0, stop_at=10 + where, status=99)
    with pytest.raises(RuntimeError, match="status 99"):
        est.partial_fit(X, y, classes=np.arange(K))
    assert est.t_ == 10  # the first block stands, the second is rolled back
    ref = Recorder(random_state=0).partial_fit(X[:10], y[:10], classes=np.arange(K))
    assert_same_learner(est, ref)


def test_partial_fit_runs_under_fit_context():
    """Like fit, partial_fit is wrapped by scikit-learn's _fit_context: nested
    parameter validation is skipped while it runs."""
    seen = []

    class Probe(Banditron):
        def _after_block(self, kernel):
            seen.append(get_config()["skip_parameter_validation"])

    X, y = make_stream(n=20, d=D, k=K, seed=1)
    Probe(random_state=0).partial_fit(X, y, classes=np.arange(K))
    Probe(random_state=0).fit(X, y)
    assert seen and all(seen)


# --------------------------------------------------------------------------------------
# compiled distributions, their Python twins, and separable act/learn


def test_inverse_cdf_sampler_follows_its_definition():
    rng = np.random.default_rng(0)
    for _ in range(500):
        k = int(rng.integers(1, 9))
        p = rng.random(k) * (rng.random(k) < 0.7)
        if p.sum() == 0:
            p[rng.integers(k)] = 1.0
        p /= p.sum()
        u = float(rng.random())
        c = np.cumsum(p)
        hits = np.flatnonzero(u < c)
        expected = hits[0] if len(hits) else np.flatnonzero(p > 0)[-1]
        assert py_sample_inverse_cdf(p, u) == expected
    # rounding fallback: u above the total goes to the last positive class
    assert py_sample_inverse_cdf(np.array([0.5, 0.49999, 0.0]), 0.999995) == 1


def test_argmax_ties_follows_its_definition():
    rng = np.random.default_rng(1)
    for _ in range(500):
        s = rng.integers(0, 3, size=int(rng.integers(1, 8))).astype(float)
        u = float(rng.random())
        best = np.flatnonzero(s == s.max())
        g, m = py_argmax_ties(s, u)
        assert m == len(best)
        assert g == best[min(int(u * m), m - 1)]


@pytest.mark.parametrize("entry", ALL)
def test_compiled_distribution_twins(entry):
    est, _, _ = _fitted(entry)
    kernel = est._make_kernel()
    k = K
    s = np.array([0.3, 1.2, -0.5, 1.2])
    for g in range(k):
        p = kernel.py_distribution(s, est.t_ + 1, g)
        if entry.epsilon_greedy:
            gamma = est.exploration_.epsilon
            expected = np.full(k, gamma / k)
            expected[g] += 1 - gamma
        elif not entry.bandit and not entry.randomised_full_information:
            expected = np.eye(k)[g]
        else:  # another policy: its formula is tested with the learner
            expected = kernel.py_distribution(s, est.t_ + 1, g)
        assert_array_equal(p, expected)
    # marginal: the average over the two tied maximisers 1 and 3
    marginal = kernel.py_marginal_distribution(s, est.t_ + 1)
    t = est.t_ + 1
    avg = (kernel.py_distribution(s, t, 1) + kernel.py_distribution(s, t, 3)) / 2
    np.testing.assert_allclose(marginal, avg, rtol=1e-15)


def test_learn_does_not_depend_on_the_draw():
    """act's draw only selects the action: learning from action b after a draw of
    a equals learning from b after a draw of b (what logged-data learning needs)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal(D)
    for _ in range(50):
        W = rng.standard_normal((K, D))
        states = []
        for u1 in (0.01, 0.99):  # two draws: the first and the last class
            est = Banditron(exploration=EpsilonGreedy(0.5), random_state=0)
            est.partial_fit(np.zeros((1, D)), [0], classes=np.arange(K))
            est.coef_[:] = W
            kernel = est._make_kernel()
            a, g, p, _ = kernel.py_act(x, 2, u1, 0.5)
            b = 1  # learn from another action than the one drawn
            pb = kernel.py_distribution(kernel.py_scores(), 2, g)[b]
            kernel.py_learn(x, 2, b, g, pb, 1.0)
            states.append(est.coef_.copy())
        assert_array_equal(states[0], states[1])


# --------------------------------------------------------------------------------------
# state protocol and block hooks


@pytest.mark.parametrize("entry", ALL)
def test_state_protocol_covers_everything_play_changes(entry):
    est, X, y = _fitted(entry)
    state = est._get_state()
    assert set(state) == {
        *est._state_attrs,
        "t_",
        "n_mistakes_",
        "n_greedy_mistakes_",
        "_rng",
        # a meta-estimator's candidates' whole states (OnlineSelector)
        *(f"candidates_[{i}]" for i in range(len(getattr(est, "candidates_", ())))),
        # a pipeline's final learner's whole state (BanditPipeline)
        *(["learner_"] if "steps_" in est.__dict__ else []),
    }
    before = copy.deepcopy(est)
    est.partial_fit(X, y)
    est._set_state(state)
    assert_same_learner(est, before)
    assert_same_next_actions(est, before, X, y)
    # pickling carries the whole state
    assert_same_learner(pickle.loads(pickle.dumps(est)), est)


@pytest.mark.parametrize("entry", ALL)
def test_read_only_state_arrays_are_copied_before_learning(entry, tmp_path):
    """A learner loaded with read-only (memory-mapped) arrays keeps learning."""
    import joblib

    est, X, y = _fitted(entry)
    straight = copy.deepcopy(est).partial_fit(X, y)
    joblib.dump(est, tmp_path / "est.joblib")
    loaded = joblib.load(tmp_path / "est.joblib", mmap_mode="r")
    for name in est._state_attrs:
        if isinstance(getattr(loaded, name), np.ndarray):  # state may hold scalars
            getattr(loaded, name).flags.writeable = False
    assert_array_equal(
        loaded.exploration_distribution(X), est.exploration_distribution(X)
    )
    loaded.partial_fit(X, y)
    assert_same_learner(loaded, straight)


def test_block_hooks_run_once_per_block_and_see_the_committed_state(monkeypatch):
    """_after_block edits the state in place (here: halves W, like a projection);
    the next block starts from it. Equivalent to chunked calls with the same edit."""
    monkeypatch.setattr("skbandit._base._transaction._BLOCK_ROWS", 7)
    sizes = []

    class Halving(Banditron):
        def _before_block(self, kernel, n_rows):
            sizes.append(n_rows)
            return kernel

        def _after_block(self, kernel):
            self.coef_ *= 0.5

    X, y = make_stream(n=30, d=D, k=K, seed=12)
    est = Halving(exploration=EpsilonGreedy(0.2), random_state=1).partial_fit(
        X, y, classes=np.arange(K)
    )
    assert sizes == [7, 7, 7, 7, 2]
    ref = Banditron(exploration=EpsilonGreedy(0.2), random_state=1)
    for start in range(0, 30, 7):
        ref.partial_fit(
            X[start : start + 7], y[start : start + 7], classes=np.arange(K)
        )
        ref.coef_ *= 0.5
    assert_same_learner(est, ref)


def test_plain_labels_build_no_log(monkeypatch):
    def no_record(*args, **kwargs):
        raise AssertionError("a log was built for plain labels")

    monkeypatch.setattr(BanditFeedback, "_record", no_record)
    X, y = make_stream(n=30, d=D, k=K, seed=1)
    Banditron(random_state=0).partial_fit(X, y, classes=np.arange(K)).fit(X, y)


def test_log_arrays_are_concatenated_once(monkeypatch):
    monkeypatch.setattr("skbandit._base._transaction._BLOCK_ROWS", 5)
    X, y = make_stream(n=30, d=D, k=K, seed=1)
    fb = BanditFeedback(y)
    Banditron(random_state=0).partial_fit(X, fb, classes=np.arange(K))
    assert fb.actions_ is fb.actions_ and fb.rows_ is fb.rows_
    assert len(fb.rows_) == 30


def test_registry_flags_come_from_the_kernels():
    flags = {e.name: e.bandit for e in ENTRIES}
    assert flags["Banditron"] is True
    assert flags["MulticlassPerceptron"] is False


def _mixed_density_stream(seed=0, d=16, k=4):
    """Dense rows whose density switches: runs of sparse rows, fully dense rows
    (all entries non-zero), rows exactly half full, empty rows and -0.0 entries,
    long enough (> 64 rows per run) that the pass switches between playing a row
    compacted to its non-zeros and playing it dense, and back."""
    rng = np.random.default_rng(seed)
    runs = [(0.2, 90), (1.0, 3), (0.2, 10), (1.0, 80), (0.5, 70), (0.1, 90)]
    blocks = []
    for density, n in runs:
        X = rng.standard_normal((n, d))
        if density == 0.5:  # exactly d/2 non-zeros: the compacted path's bound
            for row in X:
                row[rng.choice(d, d // 2, replace=False)] = 0.0
        elif density < 1.0:
            X[rng.random((n, d)) >= density] = 0.0
        blocks.append(X)
    X = np.vstack(blocks)
    X[[5, 6, 150, 300]] = 0.0
    X[7, :3] = -0.0
    y = rng.integers(0, k, len(X))
    return X, y


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.id)
def test_dense_rows_of_any_density_play_like_csr(entry):
    """A dense row with many zeros is played through its non-zero entries
    (compacted in the pass); one with more than half non-zero is played dense.
    Both must give the state, log and next actions of the same rows as CSR,
    bit for bit, whatever the switching between the two paths."""
    X, y = _mixed_density_stream()
    classes = np.arange(4)
    a = entry.make(random_state=5)
    b = entry.make(random_state=5)
    fb_a, fb_b = BanditFeedback(y), BanditFeedback(y)
    a.partial_fit(X, fb_a, classes=classes)
    b.partial_fit(sp.csr_matrix(X), fb_b, classes=classes)
    assert_same_log(fb_a, fb_b)
    assert_same_learner(a, b)
    assert_array_equal(a.exploration_distribution(X), b.exploration_distribution(X))
    X2, y2 = _mixed_density_stream(seed=1)
    assert_same_next_actions(a, b, X2, y2)
