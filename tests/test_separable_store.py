"""The sparse support store of ``SeparableOneVsAll(kernel="rational")``.

Support vectors are stored as their non-zero entries (not as dense rows of
length ``d``), in rings that evict the oldest vector without moving the others:

- memory is O(stored entries + d), not O(d * rows): a stream with d = 120,000
  and one non-zero per row needs a few megabytes (the dense buffer of the
  former store was rows x d doubles);
- with a ``budget``, eviction moves no entry: once the store has grown to hold
  the budget, a longer stream copies nothing more;
- the actions and state match the NumPy reference (``test_ova.py`` for dense
  and CSR rows; here sparse rows of varied length, a budget, ``fit``);
- the support set survives pickling mid-stream, and a failed block (including
  a store that cannot grow) is rolled back.
"""

from __future__ import annotations

import pickle
import tracemalloc

import _reference_ova as ref_ova
import numpy as np
import pytest
import scipy.sparse as sp
from _data import make_stream
from _helpers import assert_same_learner, run_benchmark, snapshot
from numpy.testing import assert_allclose, assert_array_equal

import skbandit.multiclass._separable_ova_fast as fast
from skbandit import BanditFeedback, LoggedFeedback, SeparableOneVsAll


def _one_hot_stream(n, d, k, seed):
    """``n`` CSR rows of ``d`` columns with a single entry 1.0 each (norm 1), and
    random labels: about (k - 1) / k of the rounds are mistakes."""
    rng = np.random.default_rng(seed)
    X = sp.csr_matrix(
        (np.ones(n), rng.integers(0, d, n).astype(np.int32), np.arange(n + 1)),
        shape=(n, d),
    )
    return X, rng.integers(0, k, n)


def _state_nbytes(est) -> int:
    return sum(getattr(est, name).nbytes for name in est._state_attrs)


def _with_kernel_stats(est, stats):
    """Make ``est`` record its kernel's store counters after each block."""
    original = est._after_block

    def after_block(kernel):
        stats.append(
            {
                name: getattr(kernel, name)
                for name in (
                    "n_sv",
                    "n_entries",
                    "n_evicted",
                    "n_reallocations",
                    "n_entries_moved",
                    "pool_capacity",
                    "slot_capacity",
                )
            }
        )
        original(kernel)

    est._after_block = after_block  # instance attribute: not a parameter
    return est


# --------------------------------------------------------------------------------------
# memory: O(stored entries + d)


def test_big_d_sparse_stream_needs_memory_for_its_entries_only():
    """d = 120,000 and one non-zero per row (the issue's stream, shortened). The
    learner's state takes O(entries) bytes and the call's peak allocation is
    O(d + entries + rows): the former store asked for rows x d doubles."""
    n, d, k = 300, 120_000, 3
    X, y = _one_hot_stream(n, d, k, seed=0)
    est = SeparableOneVsAll(kernel="rational", random_state=0)
    tracemalloc.start()
    try:
        est.partial_fit(X, y, classes=np.arange(k))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # the call: the store (at most twice the entries after a doubling), a
    # d-length work vector, the input's and the block's per-row arrays;
    # generous factors, far below the n * d * 8 = 288 MB of a dense store
    per_row = 64 * (1 + k)
    bound = 4 * 8 * d + per_row * n + 64 * 1024
    assert peak < bound, (peak, bound)
    assert bound < n * d * 8 / 50
    n_support = est.dual_coef_.shape[0]
    assert n_support > n // 3  # most rounds are mistakes: a large support set
    # each support vector is a copy of one played row's entries
    assert est._sv_data.shape[0] == n_support
    # state: an entry is a value and a column index, a vector its row pointer
    # and k coefficients
    entry, vector = 8 + 4, 8 + 8 * k
    assert _state_nbytes(est) == entry * n_support + vector * n_support + 8
    # the scores are the rational kernel's: f = A^T (1 / (1 - <sv, x> / 2))
    V = est.support_vectors_
    assert V.shape == (n_support, d) and sp.issparse(V)
    rows = X[:20]
    expected = (1.0 / (1.0 - 0.5 * (rows @ V.T).toarray())) @ est.dual_coef_
    assert_allclose(est.decision_function(rows), expected, rtol=1e-12)


# --------------------------------------------------------------------------------------
# budget: eviction moves nothing


def _budget_run(n, budget, seed=0):
    """A budgeted learner over ``n`` rows of exactly 5 non-zeros each (d = 40),
    played in one block; returns its store counters at the end."""
    rng = np.random.default_rng(seed)
    d, k = 40, 4
    cols = np.stack([rng.choice(d, 5, replace=False) for _ in range(n)])
    cols.sort(axis=1)
    vals = rng.uniform(0.1, 0.4, (n, 5))
    X = sp.csr_matrix(
        (vals.ravel(), cols.ravel(), np.arange(0, 5 * n + 1, 5)), shape=(n, d)
    )
    y = rng.integers(0, k, n)
    stats = []
    est = _with_kernel_stats(
        SeparableOneVsAll(kernel="rational", budget=budget, random_state=seed), stats
    )
    est.partial_fit(X, y, classes=np.arange(k))
    assert len(stats) == 1  # one block, one kernel
    return stats[0]


def test_budget_eviction_moves_no_entry():
    """With ``budget=B`` the store grows until it holds B vectors, then every
    new vector reuses the space of the evicted oldest one: a stream three times
    longer evicts three times as much and copies no more entries, and the store
    stays within a constant factor of B vectors."""
    budget = 30
    short, long = _budget_run(1000, budget), _budget_run(3000, budget)
    for s in (short, long):
        assert s["n_sv"] == budget and s["n_entries"] == 5 * budget
        assert s["slot_capacity"] == budget
        assert s["pool_capacity"] <= 4 * 5 * (budget + 1)
    assert long["n_evicted"] > 2 * short["n_evicted"] > 10 * budget
    # the store grew while the set filled up (pool and slots), then never again
    assert short["n_reallocations"] >= 2
    assert long["n_entries_moved"] == short["n_entries_moved"]
    assert long["n_reallocations"] == short["n_reallocations"]
    # growth copies at most the entries of a full store per doubling
    assert 0 < short["n_entries_moved"] <= 2 * short["pool_capacity"]


# --------------------------------------------------------------------------------------
# the reference on sparse rows of varied length


@pytest.mark.parametrize("budget", [None, 1, 4, 13])
@pytest.mark.parametrize("update_scope", ["played", "all"])
def test_store_matches_reference_on_varied_sparse_rows(budget, update_scope):
    """Rows with 0 to d non-zeros (some empty: zero-length support vectors),
    three calls: the store's rings wrap and grow, the actions and the support
    set stay the reference's (oldest-first eviction)."""
    k, d, seed = 3, 30, 11
    rng = np.random.default_rng(seed)
    X, y = make_stream(n=600, d=d, k=k, n_empty=40, seed=seed)
    X *= rng.random((600, d)) < rng.random((600, 1))  # densities 0 to 1
    X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1.0)
    X = sp.csr_matrix(X)
    est = SeparableOneVsAll(
        kernel="rational", budget=budget, update_scope=update_scope, random_state=seed
    )
    U = np.random.default_rng(seed)
    state = None
    for part in (slice(0, 50), slice(50, 400), slice(400, 600)):
        fb = BanditFeedback(y[part])
        est.partial_fit(X[part], fb, classes=np.arange(k))
        trace = ref_ova.separable_ova_rational(
            X[part], y[part], U.random((part.stop - part.start, 2)), k,
            update_scope=update_scope, budget=budget, state0=state,
        )  # fmt: skip
        state = trace.state
        assert_array_equal(fb.actions_, trace.played)
        assert_array_equal(fb.propensities_, trace.propensities)
        for name, value in state.items():
            assert_array_equal(getattr(est, name), value, err_msg=name)
    assert_array_equal(
        est.support_vectors_.toarray(), ref_ova.support_vectors(state, d)
    )


# --------------------------------------------------------------------------------------
# pickling, rollback, a store that cannot grow


@pytest.mark.parametrize("budget", [None, 5])
def test_pickle_mid_stream_continues_the_same(budget, monkeypatch):
    monkeypatch.setattr("skbandit._base._transaction._BLOCK_ROWS", 32)
    X, y = make_stream(n=200, d=9, k=3, seed=4)
    X = sp.csr_matrix(X / 4.0)
    params = dict(kernel="rational", large_norm="project", budget=budget)
    straight = SeparableOneVsAll(random_state=4, **params)
    straight.partial_fit(X, y, classes=[0, 1, 2])
    half = SeparableOneVsAll(random_state=4, **params)
    half.partial_fit(X[:90], y[:90], classes=[0, 1, 2])
    resumed = pickle.loads(pickle.dumps(half))
    resumed.partial_fit(X[90:], y[90:])
    assert_same_learner(resumed, straight)
    assert_array_equal(resumed.decision_function(X), straight.decision_function(X))


class _Fail(Exception):
    pass


def _fail_after_block(est, n: int) -> None:
    """Make the ``n``-th block of ``est``'s next calls raise ``_Fail`` at its
    end (``_after_block``); delete ``est.__dict__["_after_block"]`` to undo."""
    original, calls = est._after_block, []

    def after_block(kernel):
        calls.append(1)
        if len(calls) == n:
            raise _Fail
        original(kernel)

    est._after_block = after_block


@pytest.mark.parametrize("budget", [None, 3])
def test_failed_block_restores_the_support_set(budget, monkeypatch):
    monkeypatch.setattr("skbandit._base._transaction._BLOCK_ROWS", 40)
    X, y = make_stream(n=200, d=9, k=3, seed=5)
    X = X / 4.0
    params = dict(kernel="rational", large_norm="project", budget=budget)
    est = SeparableOneVsAll(random_state=5, **params)
    _fail_after_block(est, 3)
    with pytest.raises(_Fail):
        est.partial_fit(X, y, classes=[0, 1, 2])
    del est.__dict__["_after_block"]
    ref = SeparableOneVsAll(random_state=5, **params)
    ref.partial_fit(X[:80], y[:80], classes=[0, 1, 2])
    assert est.t_ == 80
    assert_same_learner(est, ref)
    # both continue alike
    est.partial_fit(X[80:], y[80:])
    ref.partial_fit(X[80:], y[80:])
    assert_same_learner(est, ref)


def _varied_sparse_rows(n, d, k, seed):
    """CSR rows with 0 to d non-zeros at varied columns, norm at most 1."""
    rng = np.random.default_rng(seed)
    X, y = make_stream(n=n, d=d, k=k, n_empty=n // 15, seed=seed)
    X *= rng.random((n, d)) < rng.random((n, 1))
    X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1.0)
    return sp.csr_matrix(X), y


@pytest.mark.parametrize("mode", ["journal", "copy"])
@pytest.mark.parametrize("budget", [None, 1, 4])
def test_failed_block_on_a_store_kept_across_calls_is_undone(budget, mode, monkeypatch):
    """The store is kept across calls (not rebuilt from exported arrays): a
    block that fails after it evicted vectors and wrote new ones over their
    entries and slots (other values, other columns) is undone by the journal
    and the store's checkpoint, and the learner goes on as one that played
    only the committed rows (``mode``: the block rolled back by the journal,
    or by a copy of the state, the copy mode of ``skbandit._base._transaction``).
    Catches a rollback that restores the store's scalars but not the column
    indices or values the block overwrote."""
    monkeypatch.setattr("skbandit._base._transaction._BLOCK_ROWS", 40)
    ratio = 0 if mode == "copy" else 1 << 40
    monkeypatch.setattr("skbandit._base._transaction._COPY_RATIO", ratio)
    X, y = _varied_sparse_rows(400, 30, 3, seed=12)
    params = dict(kernel="rational", budget=budget)
    est = SeparableOneVsAll(random_state=12, **params)
    est.partial_fit(X[:100], y[:100], classes=[0, 1, 2])
    live = est._kernel_cache[1]
    _fail_after_block(est, 3)
    with pytest.raises(_Fail):
        est.partial_fit(X[100:300], y[100:300])
    del est.__dict__["_after_block"]
    if mode == "journal":
        assert est.__dict__["_sv_live"] is live  # not exported by the call
    ref = SeparableOneVsAll(random_state=12, **params)
    ref.partial_fit(X[:100], y[:100], classes=[0, 1, 2])
    ref.partial_fit(X[100:180], y[100:180])
    assert est.t_ == 180
    # the store as the reference's (read from the kernel, not exported: the
    # learner goes on playing on it)
    store = est.__dict__["_sv_live"] if mode == "journal" else est._make_kernel()
    for name, value in zip(est._SUPPORT_STATE, store.support_arrays(), strict=True):
        assert_array_equal(value, getattr(ref, name), err_msg=name)
    # the store plays on, then both are compared
    est.partial_fit(X[180:], y[180:])
    ref.partial_fit(X[180:], y[180:])
    assert_same_learner(est, ref)


def test_state_is_exported_on_access_only():
    """Training calls keep the support set in the kernel's store: the CSR
    attributes are exported when read (attribute, ``support_vectors_``,
    pickling), and a learner read after every call plays as one never read."""
    X, y = _varied_sparse_rows(300, 30, 3, seed=13)
    params = dict(kernel="rational", budget=7)
    read = SeparableOneVsAll(random_state=13, **params)
    unread = SeparableOneVsAll(random_state=13, **params)
    for part in (slice(0, 1), slice(1, 120), slice(120, 121), slice(121, 300)):
        read.partial_fit(X[part], y[part], classes=[0, 1, 2])
        unread.partial_fit(X[part], y[part], classes=[0, 1, 2])
        assert "_sv_data" not in unread.__dict__
        assert read.dual_coef_.shape[0] == read._sv_indptr.shape[0] - 1 <= 7
        assert "_sv_live" not in read.__dict__
    assert_array_equal(unread.decision_function(X), read.decision_function(X))
    assert "_sv_data" not in unread.__dict__  # scores read the store in place
    assert_same_learner(unread, read)


def test_one_row_calls_after_a_batch_neither_copy_nor_export(monkeypatch):
    """After a batch call grew the support set, one-row calls play on the
    kept store with the journal: neither ``_get_state`` (the copy mode, chosen
    from the model's bytes: the cached kernel's must follow the store's
    growth, not stay those of the empty store it was built from) nor an
    export of the store."""
    X, y = _varied_sparse_rows(600, 30, 3, seed=14)
    X = sp.csr_matrix(np.where(X.toarray() != 0, X.toarray(), 1e-3))  # 30 nnz
    est = SeparableOneVsAll(kernel="rational", large_norm="project", random_state=14)
    est.partial_fit(X[:-20], y[:-20], classes=[0, 1, 2])
    store = est._kernel()[0]
    assert est._model_bytes() > 16 * 400

    def refuse(self):
        raise AssertionError("the call copied the state")

    monkeypatch.setattr(SeparableOneVsAll, "_get_state", refuse)
    monkeypatch.setattr(SeparableOneVsAll, "_export_support", refuse)
    for i in range(len(y) - 20, len(y)):
        est.partial_fit(X[i : i + 1], y[i : i + 1])
    assert est._kernel()[0] is store
    monkeypatch.undo()
    ref = SeparableOneVsAll(kernel="rational", large_norm="project", random_state=14)
    ref.partial_fit(X, y, classes=[0, 1, 2])
    assert_same_learner(est, ref)


def test_live_loop_plays_as_a_learner_that_keeps_no_kernel():
    """The live loop on the kept store plays as the general path (a learner
    whose kept kernel is dropped before every call)."""
    X, y = _varied_sparse_rows(260, 30, 3, seed=15)
    params = dict(kernel="rational", large_norm="project", random_state=15)
    live = SeparableOneVsAll(**params).partial_fit(X[:200], y[:200], classes=[0, 1, 2])
    plain = SeparableOneVsAll(**params).partial_fit(X[:200], y[:200], classes=[0, 1, 2])
    for i in range(200, 260):
        row = X[i : i + 1]
        plain.__dict__.pop("_kernel_cache", None)
        a, p = live.sample_actions(row)
        b, q = plain.sample_actions(row)
        assert_array_equal(a, b)
        assert_array_equal(p, q)
        r = (a == y[i : i + 1]).astype(np.float64)
        live.partial_fit(row, LoggedFeedback(a, r, p))
        plain.__dict__.pop("_kernel_cache", None)
        plain.partial_fit(row, LoggedFeedback(b, r, q))
    assert_same_learner(live, plain)


class _SmallNumPy:
    """``numpy`` for the kernel module, refusing arrays above ``limit`` items."""

    def __init__(self, limit):
        self.limit = limit

    def __getattr__(self, name):
        return getattr(np, name)

    def empty(self, shape, *args, **kwargs):
        if np.prod(shape) > self.limit:
            raise MemoryError(f"refused {shape}")
        return np.empty(shape, *args, **kwargs)


def test_store_that_cannot_grow_raises_memory_error_and_rolls_back(monkeypatch):
    X, y = make_stream(n=120, d=40, k=3, n_empty=0, density=1.0, seed=6)
    X = X / (2 * np.linalg.norm(X, axis=1, keepdims=True))  # 40 non-zeros per row
    # a fresh store holds 64 entries: the second support vector needs a
    # reallocation, inside the compiled pass
    monkeypatch.setattr(fast, "np", _SmallNumPy(64))
    fresh = SeparableOneVsAll(kernel="rational", random_state=6)
    with pytest.raises(MemoryError, match="support set could not grow"):
        fresh.partial_fit(X, y, classes=[0, 1, 2])
    assert not hasattr(fresh, "classes_")  # a failed first call: unfitted
    monkeypatch.setattr(fast, "np", np)
    est = SeparableOneVsAll(kernel="rational", random_state=6)
    est.partial_fit(X[:1], y[:1], classes=[0, 1, 2])
    snap = snapshot(est)
    monkeypatch.setattr(fast, "np", _SmallNumPy(64))
    with pytest.raises(MemoryError):
        est.partial_fit(X[1:], y[1:])
    monkeypatch.setattr(fast, "np", np)
    for name, value in snap.items():
        if isinstance(value, np.ndarray):
            assert_array_equal(getattr(est, name), value, err_msg=name)
    assert est.t_ == 1
    est.partial_fit(X[1:], y[1:])  # and it learns on


def test_corrupted_support_state_is_refused():
    X, y = make_stream(n=60, d=5, k=3, seed=7)
    est = SeparableOneVsAll(kernel="rational", large_norm="project", random_state=7)
    est.partial_fit(X, y, classes=[0, 1, 2])
    assert est._sv_indices.size > 0
    est._sv_indices[0] = 5  # out of range for 5 features
    with pytest.raises(ValueError, match="inconsistent support set.*out of range"):
        est.predict(X)
    est._sv_indices[0] = 0
    est._sv_indptr[-1] += 1
    with pytest.raises(ValueError, match="inconsistent support set.*indptr"):
        est.partial_fit(X, y)


def test_memory_benchmark_runs():
    out = run_benchmark(
        "bench_separable_memory.py", "--rows", "2000", "--d", "5000", "--budget", "50"
    )
    assert "no budget" in out.stdout and "budget=50" in out.stdout
