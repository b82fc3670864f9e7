"""One live round through the public calls.

* The generator's state is saved and restored exactly (``bit_generator.state``)
  by the read-ahead of ``sample_actions`` and by the rollback point of every
  block, its buffered 32-bit word included.
* ``LoggedFeedback`` of one round checks Python scalars (``_one_round``)
  instead of converting and checking arrays (``_checked_rounds``): the same
  arrays where it accepts, and what it refuses gets the general path's error.
* A replaced parameter is validated again; a failed one-row call restores the
  generator; a one-row call journals what it writes.
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from _helpers import assert_same_learner, assert_same_state, snapshot
from _registry import KERNEL_ENTRIES
from numpy.testing import assert_array_equal
from sklearn.utils._param_validation import InvalidParameterError

import skbandit._base._acting as acting_module
import skbandit._base._state as state_module
import skbandit.feedback as feedback_module
from skbandit import Banditron, LoggedFeedback, OnlineSelector, SquareCB
from skbandit._base._validation import _one_code
from skbandit._core._kernel import Journal
from skbandit.exploration import EpsilonGreedy, InverseGap

# (the Python-loop learners have no live session: KERNEL_ENTRIES)
BANDIT_ENTRIES = [e for e in KERNEL_ENTRIES if e.bandit]


def _buffered_rng(seed=0) -> np.random.Generator:
    """A default generator holding a buffered 32-bit word (``has_uint32``)."""
    rng = np.random.default_rng(seed)
    rng.integers(0, 2**31, dtype=np.uint32)  # draws 64 bits, keeps 32
    assert rng.bit_generator.state["has_uint32"] == 1
    return rng


def _fitted(seed=0, cls=Banditron):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(40, 6))
    y = rng.integers(0, 3, size=40)
    est = cls(random_state=seed).partial_fit(X[:20], y[:20], classes=[0, 1, 2])
    return est, X[20:], y[20:]


# ------------------------------------------------------------------ generator
@pytest.mark.parametrize("buffered", [False, True])
def test_snapshot_restores_the_whole_state(buffered):
    """Draws after a snapshot, then a restore: ``bit_generator.state`` (every
    field) and the following draws are those at the snapshot. Catches a
    snapshot missing a field (the increment, the buffered word)."""
    rng = _buffered_rng(1) if buffered else np.random.default_rng(1)
    before = rng.bit_generator.state
    snap = state_module._rng_snapshot(rng)
    rng.bit_generator.advance(7)  # clears the buffered word
    rng.random(5)
    rng.integers(0, 2**31, dtype=np.uint32)
    state_module._rng_restore(rng, snap)
    assert rng.bit_generator.state == before
    twin = np.random.default_rng()
    twin.bit_generator.state = before
    assert_array_equal(rng.random(4), twin.random(4))
    assert rng.integers(0, 2**31, size=3).tolist() == (
        twin.integers(0, 2**31, size=3).tolist()
    )


def test_snapshot_into_another_generator_and_as_a_dict():
    """A raw snapshot decodes to the generator's ``state`` dictionary, and
    restores into another generator object through it; a dictionary (a
    learner's own rollback point) restores as the state property does."""
    rng = _buffered_rng(2)
    before = rng.bit_generator.state
    snap = state_module._rng_snapshot(rng)
    if type(snap) is tuple:
        assert state_module._raw_to_state(snap) == before
    other = np.random.default_rng(99)
    state_module._rng_restore(other, snap)
    assert other.bit_generator.state == before
    rng.random(3)
    state_module._rng_restore(rng, before)
    assert rng.bit_generator.state == before


def test_other_bit_generator_uses_the_state_property():
    rng = np.random.Generator(np.random.MT19937(3))
    snap = state_module._rng_snapshot(rng)
    assert type(snap) is dict
    expected = rng.random(3)
    state_module._rng_restore(rng, snap)
    assert_array_equal(rng.random(3), expected)


@pytest.mark.parametrize("served", [1, 3])
def test_sample_actions_leaves_a_buffered_generator_unchanged(served):
    """Reading ahead past served rows jumps with ``PCG64.advance``, which
    clears the buffered 32-bit word; the restore must bring it back: the
    generator's whole state after ``sample_actions`` is the state before."""
    est, X, _ = _fitted(3)
    est._rng = _buffered_rng(4)
    before = est._rng.bit_generator.state
    for i in range(served):
        est.sample_actions(X[i : i + 1])
    assert est._rng.bit_generator.state == before
    assert est.n_pending_ == served


def test_failed_block_restores_the_generator_through_the_snapshot():
    """A block that fails after drawing its uniforms is rolled back to the
    generator's state at its start, the buffered word included (the rollback
    point's raw snapshot)."""
    est, X, y = _fitted(5)
    est._rng = _buffered_rng(6)
    before = snapshot(est)
    rng_before = est._rng.bit_generator.state

    def fail(kernel):
        raise KeyboardInterrupt

    est._after_block = fail  # after the kernel played and drew
    with pytest.raises(KeyboardInterrupt):
        est.partial_fit(X[:1], y[:1])
    assert est._rng.bit_generator.state == rng_before
    assert est.t_ == before["t_"]


def test_pickling_mid_stream_after_raw_snapshots():
    """A learner pickled or copied between ``sample_actions`` and the
    feedback (after rounds whose generator was saved raw) learns and serves
    on exactly as the original."""
    est, X, _ = _fitted(7, SquareCB)
    for i in range(3):
        a, p = est.sample_actions(X[i : i + 1])
        est.partial_fit(X[i : i + 1], LoggedFeedback(a, [1.0], p))
    acts, props = est.sample_actions(X[3:5])
    copies = [pickle.loads(pickle.dumps(est)), copy.deepcopy(est)]
    logged = LoggedFeedback(acts, np.array([0.0, 1.0]), props)
    for learner in (est, *copies):
        learner.partial_fit(X[3:5], logged)
    served = est.sample_actions(X[5:9])
    for other in copies:
        assert_same_learner(other, est)
        assert_array_equal(other.sample_actions(X[5:9])[0], served[0])


def _interrupt(kernel):
    raise KeyboardInterrupt


# ---------------------------------------------------------- LoggedFeedback
_ACTION_FORMS = [
    np.array([2]),
    np.array(["b"]),
    np.array([1.5]),
    np.array([True]),
    np.array([3], dtype=np.int8),
    np.array([[2]]),
    [2],
    (2,),
    np.array([2, 1]),
    np.array([None], dtype=object),
    np.array(["b"], dtype=object),
]
_REWARD_FORMS = [
    [1.0],
    [0.0],
    [0.25],
    [-0.5],
    [float("nan")],
    [float("inf")],
    [1],
    [True],
    [np.float64(1.0)],
    np.array([1.0]),
    np.array([0.5], dtype=np.float32),
    np.array([[1.0]]),
    np.array([np.nan]),
    (1.0,),
    [1.0, 0.0],
    ["x"],
]
_PROPENSITY_FORMS = [
    np.array([0.5]),
    np.array([1.0]),
    np.array([1.0 + 1e-16]),
    np.array([np.nextafter(1.0, 2.0)]),
    np.array([0.0]),
    np.array([5e-324]),
    np.array([-0.1]),
    np.array([np.nan]),
    np.array([0.5], dtype=np.float32),
    np.array([[0.5]]),
    [0.5],
    np.array([0.5, 0.5]),
]


def _outcome(make):
    try:
        a, r, p = make()
    except ValueError as exc:
        return ("error", str(exc))
    return ("ok", a, r, p)


def _same_as_general_path(actions, rewards, propensities) -> None:
    """``LoggedFeedback(actions, rewards, propensities)`` gives the general
    path's arrays or its error (the assertions of the test below)."""
    general = _outcome(
        lambda: feedback_module._checked_rounds(actions, rewards, propensities)
    )
    try:
        logged = LoggedFeedback(actions, rewards, propensities)
    except ValueError as exc:
        assert general == ("error", str(exc))
        return
    assert general[0] == "ok", general
    for got, want in zip(
        (logged.actions, logged.rewards, logged.propensities), general[1:], strict=True
    ):
        assert type(got) is np.ndarray
        assert got.dtype == want.dtype and got.shape == want.shape
        assert_array_equal(got, want)
        for source in (actions, rewards, propensities):
            if want is source:
                assert got is source  # neither path copies the caller's array


# one item per action form, looping over the reward x propensity forms: the
# 2,112 combinations are each a few microseconds of work, and as many test items
# cost more in pytest's (and xdist's) per-item overhead than in the checks
@pytest.mark.parametrize("actions", _ACTION_FORMS, ids=repr)
def test_one_round_fast_path(actions):
    """``LoggedFeedback`` gives the general path's arrays (values, dtypes,
    shapes, and the caller's arrays themselves where the general path keeps
    them) or its error, on every combination of forms one round may take.
    Catches a fast path accepting what the general path refuses (a
    propensity 0 or above 1, a NaN reward) or converting differently. A
    failure names the combination."""
    for rewards in _REWARD_FORMS:
        for propensities in _PROPENSITY_FORMS:
            try:
                _same_as_general_path(actions, rewards, propensities)
            except AssertionError as exc:
                raise AssertionError(
                    f"actions={actions!r}, rewards={rewards!r}, "
                    f"propensities={propensities!r}: {exc}"
                ) from exc


def test_one_round_fast_path_is_taken():
    """The live loop's round (``sample_actions``' arrays, a float reward in a
    list) takes the fast path, so the comparison above covers it."""
    a, p = np.array(["b"]), np.array([0.5])
    assert feedback_module._one_round(a, [1.0], p) is not None
    assert feedback_module._one_round(a, np.array([0.0]), p) is not None


# ---------------------------------------------------------------- one code
def test_one_code_is_a_read_only_cached_code():
    codes = _one_code(2)
    assert codes.dtype == np.int32 and codes.tolist() == [2]
    assert not codes.flags.writeable and _one_code(2) is codes
    with pytest.raises(ValueError, match="read-only"):
        codes[0] = 1


# ------------------------------------------------ parameters and the kernel
def _live_calls(est, X, y):
    """The three one-row calls of a fitted learner (lean paths)."""
    row = X[:1]

    def serve():
        est.sample_actions(row)

    def learn():
        est.partial_fit(row, LoggedFeedback(np.array([y[0]]), [1.0], np.array([0.5])))

    def simulate():
        est.partial_fit(row, [y[0]])

    return {"sample_actions": serve, "logged": learn, "simulator": simulate}


@pytest.mark.parametrize("call", ["sample_actions", "logged", "simulator"])
@pytest.mark.parametrize(
    "make, bad",
    [
        (lambda: Banditron(random_state=0), {"exploration": EpsilonGreedy(2.0)}),
        (lambda: SquareCB(random_state=0), {"exploration": InverseGap(-1.0)}),
        (
            lambda: OnlineSelector(
                candidates=[Banditron(exploration=EpsilonGreedy(0.1)), SquareCB()],
                random_state=0,
            ),
            {"exploration": EpsilonGreedy(-0.5)},
        ),
    ],
    ids=["Banditron", "SquareCB", "OnlineSelector"],
)
def test_a_replaced_parameter_is_validated_on_the_lean_path(make, bad, call):
    """The lean one-row calls skip the parameters' check while the cached
    kernel is valid (``TransactionMixin._lean_kernel``: its key holds the
    parameter objects it was built with). A parameter replaced by an invalid
    value mid-stream must still be refused by each call, with nothing changed;
    put back, the learner goes on as one that never saw it. Catches a lean
    path that trusts a kernel cache the new parameter does not match."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 5))
    y = rng.integers(0, 3, size=30)
    est, twin = make(), make()
    for learner in (est, twin):
        learner.partial_fit(X[:10], y[:10], classes=[0, 1, 2])
        for fn in _live_calls(learner, X[10:], y[10:]).values():
            fn()  # the kernel is cached now
    pending = est.n_pending_
    good = {name: est.get_params()[name] for name in bad}
    est.set_params(**bad)
    with pytest.raises(InvalidParameterError):
        _live_calls(est, X[10:], y[10:])[call]()
    assert est.n_pending_ == pending
    est.set_params(**good)
    assert_same_learner(est, twin)
    for fn in _live_calls(est, X[11:], y[11:]).values():
        fn()
    for fn in _live_calls(twin, X[11:], y[11:]).values():
        fn()
    assert_same_learner(est, twin)
    assert est.n_pending_ == twin.n_pending_


def _one_row_spy(monkeypatch):
    """Counts the general drivers' calls on the live loop's paths."""
    counts = {"run_act": 0, "run_logged": 0}
    for name in counts:
        real = getattr(acting_module, name)

        def spy(*args, _real=real, _name=name):
            counts[_name] += 1
            return _real(*args)

        monkeypatch.setattr(acting_module, name, spy)
    return counts


def _live_rows(X, form):
    if form == "dense":
        return [np.ascontiguousarray(X[i : i + 1]) for i in range(X.shape[0])]
    Xs = sp.csr_matrix(X)
    return [Xs[i : i + 1] for i in range(X.shape[0])]


def _general_path_only(est):
    """Make ``est`` take the general one-row path (no ``OneRow``)."""
    est._one_row = lambda X, cached: None


def _scenario(est, X, y, rows):
    """A live stream with everything that may leave a compiled call's caches
    stale: served rows learned later (a read-ahead past pending rows),
    off-policy rounds, a refused call, ``set_params``, the generator replaced
    and reseeded in place, pickling mid-stream, a call that fails after its
    draw. Returns the learner it ends with and every served action and
    propensity."""
    served = []

    def serve(i):
        a, p = est.sample_actions(rows[i])
        served.append((a.tolist(), p.tolist()))
        return a, p

    def learn(i, a, p, reward=None):
        r = float(a[0] == y[i]) if reward is None else reward
        est.partial_fit(rows[i], LoggedFeedback(a, [r], p))

    for i in range(3):
        learn(i, *serve(i))
    pending = [serve(i) for i in range(3, 6)]  # served ahead, learned later
    for i, (a, p) in zip(range(3, 6), pending, strict=True):
        learn(i, a, p)
    learn(6, np.array([0]), np.array([0.25]), 1.0)  # not the learner's draw
    bad = np.full((1, X.shape[1]), np.nan) if type(rows[0]) is np.ndarray else None
    if bad is not None:
        with pytest.raises(ValueError, match="NaN"):
            est.sample_actions(bad)
    with pytest.raises(ValueError, match="actions not in classes_"):
        learn(7, np.array([9]), np.array([0.5]), 1.0)
    learn(7, *serve(7))
    est.set_params(random_state=1)  # a parameter replaced: a new kernel
    learn(8, *serve(8))
    est._rng = np.random.default_rng(11)  # the generator replaced
    learn(9, *serve(9))
    est._rng.bit_generator.state = np.random.default_rng(12).bit_generator.state
    learn(10, *serve(10))  # reseeded in place: the same object
    est = pickle.loads(pickle.dumps(est))
    learn(11, *serve(11))
    a, p = serve(12)

    def fail(kernel):
        raise KeyboardInterrupt

    est._after_block = fail  # after the round was played and its pair drawn
    with pytest.raises(KeyboardInterrupt):
        learn(12, a, p)
    del est._after_block
    learn(12, a, p)
    for i in range(13, 16):
        learn(i, *serve(i))
    return est, served


def test_a_failed_one_row_call_restores_the_generator():
    """A logged one-row call that fails after its round was played (the
    pair drawn, the state written) leaves the learner as before it, the
    generator's buffered word included (``OneRow.save_generator`` and the
    journal), and the next call plays as if it had not been made."""
    est, X, y = _fitted(5, SquareCB)
    est._rng = _buffered_rng(6)
    row = np.ascontiguousarray(X[:1])
    a, p = est.sample_actions(row)
    twin = copy.deepcopy(est)
    before, rng_before = snapshot(est), est._rng.bit_generator.state
    est._after_block = _interrupt
    with pytest.raises(KeyboardInterrupt):
        est.partial_fit(row, LoggedFeedback(a, [1.0], p))
    del est._after_block
    assert est._rng.bit_generator.state == rng_before
    assert_same_state(est, before)
    for learner in (est, twin):
        learner.partial_fit(row, LoggedFeedback(a, [1.0], p))
    assert_same_learner(est, twin)


@pytest.mark.filterwarnings("ignore::skbandit.OffPolicyWarning")
@pytest.mark.parametrize("form", ["dense", "csr"])
@pytest.mark.parametrize("entry", BANDIT_ENTRIES, ids=lambda e: e.id)
def test_one_row_journal(entry, form, monkeypatch):
    """``OneRow``'s journal is the transaction's (``_transaction.Journal``,
    made once per kernel and reused): no one-row round records more than its
    kernel's bound (``overrun``), and one that cannot grow fails the call with
    a ``MemoryError`` before the row writes anything, the learner and its
    generator as before it, its next calls as if it had not been made.
    Catches a one-row round played without its reservation, or a journal not
    undone or not reset between calls."""
    made = []

    def journal(limit, cap=0):
        j = Journal(limit)
        j.max_capacity = cap
        made.append(j)
        return j

    monkeypatch.setattr("skbandit._base._transaction.Journal", journal)
    rng = np.random.default_rng(9)
    X = rng.normal(size=(30, 6)) / 4.0
    X[X < -0.1] = 0.0
    y = rng.integers(0, 3, size=30)
    rows = _live_rows(X, form)
    est = entry.make(random_state=9).partial_fit(X[:5], y[:5], classes=[0, 1, 2])
    for i in range(5, 15):
        a, p = est.sample_actions(rows[i])
        est.partial_fit(rows[i], LoggedFeedback(a, [float(a[0] == y[i])], p))
    assert made and not any(j.overrun for j in made)
    if len(est._kernel_cache) > 3:  # (SeparableOneVsAll's store remakes it)
        assert est._kernel_cache[3].journal in made
        assert est._kernel_cache[3].journal.n_entries == 0  # committed
    # a journal that cannot hold one row: the next OneRow gets it
    monkeypatch.setattr(
        "skbandit._base._transaction.Journal", lambda limit: journal(limit, 1)
    )
    est._kernel_cache = est._kernel_cache[:3]
    a, p = est.sample_actions(rows[15])
    twin = copy.deepcopy(est)
    before, rng_before = snapshot(est), est._rng.bit_generator.state
    bound = est._kernel()[0].py_journal_bound(int(np.count_nonzero(X[15])))[0]
    if bound <= 1:
        return  # this learner writes at most one entry per round
    with pytest.raises(MemoryError, match="undo journal"):
        est.partial_fit(rows[15], LoggedFeedback(a, [1.0], p))
    assert_same_state(est, before)
    assert est._rng.bit_generator.state == rng_before
    monkeypatch.setattr("skbandit._base._transaction.Journal", journal)
    for learner in (est, twin):
        for i in range(15, 20):
            a, p = learner.sample_actions(rows[i])
            learner.partial_fit(rows[i], LoggedFeedback(a, [1.0], p))
    assert_same_learner(est, twin)
