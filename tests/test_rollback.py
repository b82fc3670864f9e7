"""Rollback by the undo journal (skbandit._core._kernel.Journal): a failed block
is undone from the kernels' records of what they wrote, not from a copy of the
model, for every registered learner.

* a failure inside the kernel loop (a row that makes the state non-finite, in
  the middle of a block) leaves the learner bit for bit as at the block's
  start, on the label and the logged-feedback paths, dense and CSR;
* blocks ended early by the journal's limit are invisible (the same state, log
  and generator as one block), and a failure after such blocks keeps them;
* a ``partial_fit`` call neither copies the model (``_get_state`` is not
  called) nor allocates memory in proportion to it (``tracemalloc``).
"""

from __future__ import annotations

import copy
import pickle
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from _data import make_stream
from _helpers import (
    assert_same_learner,
    assert_same_log,
    assert_same_state,
    count_state_copies,
    snapshot,
)
from _registry import KERNEL_ENTRIES as ENTRIES
from _registry import entry_params

from skbandit import SOBA, BanditFeedback, Banditron, LoggedFeedback
from skbandit._core._kernel import Journal
from skbandit.base import BaseBanditClassifier

ALL = entry_params(ENTRIES)


def _journal_mode(monkeypatch):
    """Every block of these tests is rolled back by the journal (never by the
    copy a batch call on a small model, or on one whose rounds write much,
    would make instead)."""
    monkeypatch.setattr("skbandit._base._transaction._COPY_RATIO", np.inf)


@pytest.fixture(autouse=True)
def _journal_only(monkeypatch):
    _journal_mode(monkeypatch)


#: what ``_shared_suite.run_check`` applies before this module's checks run on
#: another learner (outside this module, its autouse fixture does not)
SHARED_SETUP = _journal_mode


BANDIT = entry_params([e for e in ENTRIES if e.bandit])
K, D = 4, 8


def _feedback(y, logged, seed=0):
    """Plain labels, or logged feedback of uniformly drawn actions."""
    if not logged:
        return BanditFeedback(y)
    actions = np.random.default_rng(seed).integers(0, K, size=len(y))
    return LoggedFeedback(actions, (actions == y).astype(float), np.full(len(y), 1 / K))


def _state_arrays(est):
    """Every state array of a learner (a meta-learner's candidates' too)."""
    for learner in (est, *getattr(est, "candidates_", ())):
        for name in learner._state_attrs:
            value = getattr(learner, name)
            if isinstance(value, np.ndarray):
                yield f"{type(learner).__name__}.{name}", value


def _changed(est, snap) -> bool:
    """True when some state array of ``est`` differs from the snapshot's."""
    now = snapshot(est)
    for key, value in snap.items():
        if isinstance(value, np.ndarray) and not np.array_equal(
            now[key], value, equal_nan=True
        ):
            return True
        if isinstance(value, dict) and _changed_dict(now[key], value):
            return True
    return False


def _changed_dict(a: dict, b: dict) -> bool:
    return any(
        isinstance(v, np.ndarray) and not np.array_equal(a[k], v) for k, v in b.items()
    )


@pytest.mark.filterwarnings("ignore::skbandit.OffPolicyWarning")
@pytest.mark.parametrize("logged", [False, True], ids=["labels", "logged"])
@pytest.mark.parametrize("container", ["dense", "csr"])
@pytest.mark.parametrize("entry", ALL)
def test_overflow_inside_a_block_undoes_the_block(
    entry, container, logged, monkeypatch
):
    """Rows 20.. of a 120-row call overflow (values beyond the bound, which is
    lifted for the test): the kernel stops inside the call's only block, after
    20 rows that updated the state in place, and the journal undoes them all:
    the learner is bit for bit as before the call, nothing is logged."""
    if logged and not entry.bandit:
        pytest.skip("full-information learners do not learn from logged feedback")
    monkeypatch.setattr("skbandit._base._rows._MAX_ABS_X", np.inf)
    # one block per call: SOBA full's pending updates end none early
    monkeypatch.setattr(SOBA, "_pending_passes", np.inf)
    X, y = make_stream(n=160, d=D, k=K, n_empty=0, seed=21)
    X[60:] *= 1e200
    Xc = sp.csr_matrix(X) if container == "csr" else X
    est = entry.make(random_state=21)
    est.partial_fit(Xc[:40], _feedback(y[:40], logged, seed=1), classes=np.arange(K))
    snap = snapshot(est)
    # not vacuous: the 20 finite rows change the state
    twin = copy.deepcopy(est)
    twin.partial_fit(Xc[40:60], _feedback(y[40:60], logged, seed=2))
    assert _changed(twin, snap)

    fb = _feedback(y[40:], logged, seed=2)
    with pytest.raises(FloatingPointError, match="non-finite"):
        est.partial_fit(Xc[40:], fb)
    assert_same_state(est, snap)
    if not logged:
        assert fb.n_rounds_ == 0
    for name, value in _state_arrays(est):
        assert np.isfinite(value).all(), name


def _limit_one(monkeypatch):
    """Every block ends after its first row that writes the state."""
    monkeypatch.setattr(
        BaseBanditClassifier, "_journal_limit", lambda self, model_bytes: 1
    )


@pytest.mark.filterwarnings("ignore::skbandit.OffPolicyWarning")
@pytest.mark.parametrize("logged", [False, True], ids=["labels", "logged"])
@pytest.mark.parametrize("container", ["dense", "csr"])
@pytest.mark.parametrize("entry", ALL)
def test_blocks_ended_by_the_journal_limit_are_invisible(
    entry, container, logged, monkeypatch
):
    """With a journal limit of one entry the pass ends a block after (nearly)
    every row; the generator is set back to the rows played, the counters, the
    log and a meta-learner's candidates' round counters follow: the same
    learner, log and continuation as with one block per call."""
    if logged and not entry.bandit:
        pytest.skip("full-information learners do not learn from logged feedback")
    X, y = make_stream(n=90, d=D, k=K, seed=22)
    Xc = sp.csr_matrix(X) if container == "csr" else X

    def play():
        est = entry.make(random_state=22)
        fb = _feedback(y[:50], logged, seed=3)
        est.partial_fit(Xc[:50], fb, classes=np.arange(K))
        est.partial_fit(Xc[50:], _feedback(y[50:], logged, seed=4))
        fit = entry.make(random_state=22, max_iter=2).fit(Xc, _feedback(y, logged))
        return est, fb, fit

    whole, fb_whole, fit_whole = play()
    counted = {"blocks": 0}
    after_block = type(whole)._after_block

    def counting(self, kernel):
        counted["blocks"] += 1
        after_block(self, kernel)

    monkeypatch.setattr(type(whole), "_after_block", counting)
    _limit_one(monkeypatch)
    short, fb_short, fit_short = play()
    # the limit did cut the calls into blocks
    assert counted["blocks"] > 30
    assert_same_learner(short, whole)
    if not logged:
        assert_same_log(fb_short, fb_whole)
    assert_same_learner(fit_short, fit_whole)
    for a, b in zip(
        getattr(short, "candidates_", ()),
        getattr(whole, "candidates_", ()),
        strict=True,
    ):
        assert a.t_ == b.t_ == whole.t_


class _Fail(Exception):
    pass


@pytest.mark.parametrize("entry", ALL)
def test_failure_after_blocks_ended_by_the_limit_keeps_them(entry, monkeypatch):
    """A failure in the fifth block of a call whose blocks were ended by the
    journal's limit: the four blocks stand (as a learner that played just
    their rows), the fifth is undone."""
    _limit_one(monkeypatch)
    X, y = make_stream(n=120, d=D, k=K, seed=23)
    est = entry.make(random_state=23)
    est.partial_fit(X[:30], y[:30], classes=np.arange(K))
    clean = copy.deepcopy(est)
    after_block = type(est)._after_block
    count = {"n": 0}

    def failing(self, kernel):
        after_block(self, kernel)
        count["n"] += 1
        if count["n"] == 5:
            raise _Fail("injected")

    monkeypatch.setattr(type(est), "_after_block", failing)
    fb = BanditFeedback(y[30:])
    with pytest.raises(_Fail):
        est.partial_fit(X[30:], fb)
    monkeypatch.undo()
    done = est.t_ - 30
    assert 4 <= done < 90  # four blocks of at least one row each
    ref = copy.deepcopy(clean)
    fb_ref = BanditFeedback(y[30 : 30 + done])
    ref.partial_fit(X[30 : 30 + done], fb_ref)
    assert_same_learner(est, ref)
    assert_same_log(fb, fb_ref)


@pytest.mark.parametrize("fail_at", [1, 5])
@pytest.mark.parametrize("entry", ALL)
def test_failure_while_logging_keeps_exactly_the_committed_rounds(
    entry, fail_at, monkeypatch
):
    """A feedback log that already holds a first call's 60 rounds; the second
    call's ``fail_at``-th block fails just after its rounds were appended to
    the log (an interrupt inside the block's commit). The log keeps exactly
    the first call's rounds and those of the blocks that finished before (none
    when the first block fails: the log exactly as before the call), not one
    round fewer or more, and the learner is as one that played just those."""
    _limit_one(monkeypatch)
    X, y = make_stream(n=60, d=D, k=K, seed=24)
    est = entry.make(random_state=24)
    fb = BanditFeedback(y)
    est.partial_fit(X, fb, classes=np.arange(K))
    assert fb.n_rounds_ == 60
    clean, fb_clean = copy.deepcopy(est), copy.deepcopy(fb)
    twin, fb_twin = copy.deepcopy(est), copy.deepcopy(fb)
    twin.partial_fit(X, fb_twin)  # the uninterrupted call
    record = BanditFeedback._record
    count = {"n": 0}

    def failing(self, *args):
        record(self, *args)
        count["n"] += 1
        if count["n"] == fail_at:
            raise _Fail("interrupted after logging")

    monkeypatch.setattr(BanditFeedback, "_record", failing)
    with pytest.raises(_Fail):
        est.partial_fit(X, fb)
    monkeypatch.undo()
    done = est.t_ - 60
    assert (done == 0) if fail_at == 1 else (fail_at - 1 <= done < 60)
    assert fb.n_rounds_ == 60 + done
    for name in ("rows_", "actions_", "rewards_", "propensities_"):
        np.testing.assert_array_equal(
            getattr(fb, name), getattr(fb_twin, name)[: 60 + done], err_msg=name
        )
    if fail_at == 1:
        assert_same_log(fb, fb_clean)
        assert_same_learner(est, clean)
    else:
        ref = copy.deepcopy(clean)
        ref.partial_fit(X[:done], y[:done])
        assert_same_learner(est, ref)


# --------------------------------------------------------------------------------------
# a journal that cannot grow


def _journals(monkeypatch, max_capacity=0):
    """Every journal made by the estimators from now on, with the test cap
    ``max_capacity`` on its buffers (0: none): a growth past it fails as an
    allocation that returns NULL would."""
    made = []

    def make(limit):
        journal = Journal(limit)
        journal.max_capacity = max_capacity
        made.append(journal)
        return journal

    monkeypatch.setattr("skbandit._base._transaction.Journal", make)
    return made


@pytest.mark.filterwarnings("ignore::skbandit.OffPolicyWarning")
@pytest.mark.parametrize("where", ["early", "mid-call"])
@pytest.mark.parametrize("logged", [False, True], ids=["labels", "logged"])
@pytest.mark.parametrize("container", ["dense", "csr"])
@pytest.mark.parametrize("entry", ALL)
def test_journal_that_cannot_grow_undoes_the_block(
    entry, container, logged, where, monkeypatch
):
    """The journal's buffers are capped at what one row may record
    (``early``) or at half of what a 120-row call grows them to
    (``mid-call``): a growth fails after some rows of the call were played.
    The pass stops before the row that needed it (each row's entries are
    reserved before it writes anything), so every write of the block was
    recorded: a ``MemoryError``, the learner bit for bit as before the call
    (its only block), nothing logged, and its next calls play as if it never
    failed. Before, a row's writes after the failed growth were made
    unrecorded and survived the undo."""
    if logged and not entry.bandit:
        pytest.skip("full-information learners do not learn from logged feedback")
    monkeypatch.setattr(SOBA, "_pending_passes", np.inf)
    # sparse rows in a wide space: the rows after the failed growth write
    # entries no earlier row of the block wrote (whose first record would
    # have restored them anyway)
    d = D if entry.params.get("covariance") == "full" else 1024
    X, y = make_stream(n=220, d=d, k=K, density=6 / d, n_empty=0, seed=28)
    Xc = sp.csr_matrix(X) if container == "csr" else X
    est = entry.make(random_state=28)
    est.partial_fit(Xc[:40], _feedback(y[:40], logged, seed=1), classes=np.arange(K))
    snap = snapshot(est)
    twin = copy.deepcopy(est)
    # (a journal holding the buffers the last one released: the call's
    # journal grows from empty, so that its capacity is what it grew to)
    spare = Journal()
    full = _journals(monkeypatch)
    twin.partial_fit(Xc[40:160], _feedback(y[40:160], logged, seed=2))
    del spare
    assert not full[-1].overrun
    assert full[-1].capacity > 0  # the call records entries
    if where == "early":
        # (the pass drivers read a dense row's non-zeros only)
        nnz = int(np.count_nonzero(X[40:160], axis=1).max())
        cap = max(est._make_kernel().py_journal_bound(nnz))
    else:
        cap = full[-1].capacity // 2

    capped = _journals(monkeypatch, cap)
    fb = _feedback(y[40:160], logged, seed=2)
    with pytest.raises(MemoryError, match="undo journal"):
        est.partial_fit(Xc[40:160], fb)
    assert capped[-1].capacity > 0  # rows before the failure were played
    assert_same_state(est, snap)
    if not logged:
        assert fb.n_rounds_ == 0
    # the learner goes on as if the failed call had not happened
    _journals(monkeypatch)
    ref = copy.deepcopy(twin)
    est.partial_fit(Xc[40:160], _feedback(y[40:160], logged, seed=2))
    assert_same_learner(est, ref)


@pytest.mark.filterwarnings("ignore::skbandit.OffPolicyWarning")
@pytest.mark.parametrize("container", ["dense", "csr"])
@pytest.mark.parametrize("entry", ALL)
def test_no_row_records_more_than_its_kernel_bound(entry, container, monkeypatch):
    """Every row records at most its kernel's ``journal_bound`` (the entries
    reserved before it): a bound too small would let a row grow the journal,
    and a failed growth make a write unrecorded. Labels, logged feedback,
    blocks of one row and a full call, dense and CSR."""
    monkeypatch.setattr(SOBA, "_pending_passes", np.inf)
    journals = _journals(monkeypatch)
    X, y = make_stream(n=200, d=D, k=K, seed=29)
    Xc = sp.csr_matrix(X) if container == "csr" else X
    est = entry.make(random_state=29)
    est.partial_fit(Xc[:100], y[:100], classes=np.arange(K))
    for i in range(100, 120):
        est.partial_fit(Xc[i : i + 1], y[i : i + 1])
    if entry.bandit:
        est.partial_fit(Xc[120:], _feedback(y[120:], True, seed=3))
    assert journals
    assert not any(j.overrun for j in journals)


def test_a_journal_takes_the_buffers_the_last_one_released():
    """A short call allocates no journal: a journal starts with the
    floating-point record buffers the last one released (one set per process,
    at most 2048 entries), and a test cap below them gives them back so that
    growth is tested from empty. (A one-row call of a fitted learner uses the
    journal kept with its ``OneRow`` instead.)"""
    X, y = make_stream(n=60, d=64, k=K, seed=31)
    est = Banditron(random_state=31).partial_fit(X[:20], y[:20], classes=np.arange(K))
    est.partial_fit(X[20:25], y[20:25])  # a five-row call journals its writes
    first = Journal(1 << 16)
    cap = first.capacity
    assert 0 < cap <= 2048
    assert Journal(1 << 16).capacity == 0  # one set: taken by ``first``
    del first  # released again
    again = Journal(1 << 16)
    assert again.capacity == cap
    again.max_capacity = cap - 1
    assert again.capacity == 0
    assert Journal(1 << 16).capacity == cap
    # a call with the buffers taken over plays as one without them
    twin = copy.deepcopy(est)
    for i in range(25, 60, 5):
        holder = [Journal(1 << 16)]  # keeps the spare buffers from twin's call
        twin.partial_fit(X[i : i + 5], y[i : i + 5])
        holder.clear()
        est.partial_fit(X[i : i + 5], y[i : i + 5])
    assert_same_learner(est, twin)


@pytest.mark.parametrize("entry", ALL)
def test_kernel_journal_bound_grows_with_the_row(entry):
    """``journal_bound`` of a writing kernel grows with the row's stored
    entries (the drivers reserve it per row) and is not negative."""
    X, y = make_stream(n=40, d=D, k=K, seed=30)
    est = entry.make(random_state=30).partial_fit(X, y, classes=np.arange(K))
    if entry.name == "BanditPipeline":
        pytest.skip("its learner reads the mapped row: dense, whatever the row")
    kernel = est._make_kernel()
    b0, l0 = kernel.py_journal_bound(0)
    b8, l8 = kernel.py_journal_bound(8)
    assert 0 <= b0 <= b8 and l0 == l8 >= 0
    assert b8 >= b0 + 8
    with pytest.raises(ValueError, match="nnz"):
        kernel.py_journal_bound(-1)


# --------------------------------------------------------------------------------------
# no copy of the model per call


def _large(entry):
    """A fitted learner with a large model and one CSR row to play: d = 2**17
    (SOBA full: d = 256, its inverse is (kd)^2)."""
    full = entry.params.get("covariance") == "full"
    d = 256 if full else 1 << 17
    rng = np.random.default_rng(24)
    # the rational-kernel learner's model is its support set: many rows
    n = 12_001 if entry.params.get("kernel") == "rational" else 31
    rows = []
    for _ in range(n):
        cols = np.sort(rng.choice(d, size=20, replace=False))
        rows.append(sp.csr_matrix((rng.normal(size=20), cols, [0, 20]), shape=(1, d)))
    X = sp.vstack(rows, format="csr")
    X.sort_indices()
    y = rng.integers(0, K, size=n)
    est = entry.make(random_state=24)
    est.partial_fit(X[:-1], y[:-1], classes=np.arange(K))
    return est, X[-1:], y[-1:]


def _model_bytes(est) -> int:
    return sum(value.nbytes for _, value in _state_arrays(est))


@pytest.mark.filterwarnings("ignore::skbandit.OffPolicyWarning")
@pytest.mark.parametrize("entry", ALL)
def test_partial_fit_does_not_copy_the_model(entry, monkeypatch):
    """``_get_state`` (the copy of the whole state) is never called by a
    ``partial_fit`` call, with labels or logged feedback."""
    est, x, y = _large(entry)
    t0 = est.t_

    def refuse(self):
        raise AssertionError("partial_fit copied the learner's state")

    monkeypatch.setattr(type(est), "_get_state", refuse)
    for learner in getattr(est, "candidates_", ()):
        monkeypatch.setattr(type(learner), "_get_state", refuse)
    est.partial_fit(x, y)
    if entry.bandit:
        est.partial_fit(x, LoggedFeedback(y, [1.0], [0.5]))
    assert est.t_ == t0 + (2 if entry.bandit else 1)


def _traced_peak(call) -> int:
    """Peak memory traced by ``tracemalloc`` during ``call()``."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("entry", ALL)
def test_one_row_call_allocates_little_beside_the_model(entry):
    """Peak memory traced during a one-row CSR ``partial_fit`` of a fitted
    learner with a large model is below 1/8 of the model (a copy for rollback
    would be the whole model; so would the rational SeparableOneVsAll's copy
    of its support set into a new store, or its export after a block)."""
    if entry.name == "BanditPipeline":
        pytest.skip(
            "its learner reads the mapped row dense: the journal reserves what "
            "one dense row of d features may write, O(d) per call"
        )
    est, x, y = _large(entry)
    est.partial_fit(x, y)  # warm caches (code tables, validated parameters)
    peak = _traced_peak(lambda: est.partial_fit(x, y))
    # read after the calls (reading the rational learner's state exports it)
    model = _model_bytes(est)
    assert model > 1 << 20
    assert peak < model / 8, (peak, model)


def test_rational_separable_keeps_its_work_vector_between_calls():
    """The rational ``SeparableOneVsAll`` scatters each row into a length-d
    work vector: allocated once and kept between training calls (not per
    call, not pickled). A one-row call at d = 2**17 traces less than half of
    that vector (1 MiB), and a learner that reuses it plays 20 one-row calls
    exactly as one given a fresh vector before each (its pickled copies): the
    vector is back to zeros after every round."""
    (entry,) = [e for e in ENTRIES if e.id == "SeparableOneVsAll-rational"]
    est, x, y = _large(entry)
    d = x.shape[1]
    est.partial_fit(x, y)
    assert [v.shape for v in est._work_lender.vectors] == [(d,)]
    peak = _traced_peak(lambda: est.partial_fit(x, y))
    assert peak < d * 8 / 2, peak
    copied = pickle.loads(pickle.dumps(est))
    assert "_work_lender" not in copied.__dict__
    assert "_work_lender" not in copy.deepcopy(est).__dict__
    rng = np.random.default_rng(31)
    for _ in range(20):
        cols = np.sort(rng.choice(d, size=20, replace=False))
        row = sp.csr_matrix((rng.normal(size=20) / 5, cols, [0, 20]), shape=(1, d))
        label = rng.integers(0, K, size=1)
        est.partial_fit(row, label)
        copied = pickle.loads(pickle.dumps(copied))
        copied.partial_fit(row, label)
        assert not est._work_lender.vectors[0].any()
    assert_same_learner(est, copied)


# --------------------------------------------------------------------------------------
# the copy mode: a batch call on a small model copies the state per block


@pytest.mark.parametrize("entry", ALL)
def test_copy_mode_rolls_back_an_overflow_too(entry, monkeypatch):
    """With every block rolled back by a copy of the state (forced here), an
    overflow inside a block is found by the check of the whole state after
    the block or by the scores, and the copy is restored: as before the call."""
    monkeypatch.setattr("skbandit._base._transaction._COPY_RATIO", 0.0)
    monkeypatch.setattr("skbandit._base._rows._MAX_ABS_X", np.inf)
    monkeypatch.setattr(SOBA, "_pending_passes", np.inf)
    X, y = make_stream(n=160, d=D, k=K, n_empty=0, seed=25)
    X[60:] *= 1e200
    est = entry.make(random_state=25)
    est.partial_fit(X[:40], y[:40], classes=np.arange(K))
    snap = snapshot(est)
    with pytest.raises(FloatingPointError, match="non-finite"):
        est.partial_fit(X[40:], y[40:])
    assert_same_state(est, snap)


@pytest.mark.filterwarnings("ignore::skbandit.OffPolicyWarning")
@pytest.mark.parametrize("logged", [False, True], ids=["labels", "logged"])
@pytest.mark.parametrize("entry", ALL)
def test_copy_and_journal_modes_play_the_same(entry, logged, monkeypatch):
    """The same calls, every block rolled back by a copy or by the journal: the
    same learner (the journal only records; SOBA full's pending updates of its
    inverse give the bits of immediate ones)."""
    if logged and not entry.bandit:
        pytest.skip("full-information learners do not learn from logged feedback")
    X, y = make_stream(n=200, d=D, k=K, seed=26)
    learners = []
    for ratio in (0.0, np.inf):
        monkeypatch.setattr("skbandit._base._transaction._COPY_RATIO", ratio)
        est = entry.make(random_state=26)
        est.partial_fit(X[:120], _feedback(y[:120], logged, 5), classes=np.arange(K))
        est.partial_fit(X[120:], _feedback(y[120:], logged, 6))
        learners.append(est)
    assert_same_learner(*learners)


def test_batch_calls_on_small_models_copy_and_one_row_calls_do_not(monkeypatch):
    """The default choice: a 2,000-row call on a 4 x 8 Banditron copies its
    state per block (the copy is far below 1/16 of the block's input); a
    one-row call uses the journal."""
    monkeypatch.setattr("skbandit._base._transaction._COPY_RATIO", 16)
    X, y = make_stream(n=2001, d=D, k=K, seed=27)
    est = Banditron(random_state=0)
    calls = count_state_copies(monkeypatch, Banditron)
    est.partial_fit(X[:2000], y[:2000], classes=np.arange(K))
    assert calls["n"] == 1
    est.partial_fit(X[2000:], y[2000:])
    assert calls["n"] == 1
