"""The live loop's caches (``skbandit._base._transaction``) are never stale.

A fitted learner keeps its compiled kernel, the ``OneRow`` and the one-row
rollback plan from call to call while every slot of the kernel's key
(``_cache_slots``: compiled ``Slots``, compared by identity) holds the object
it held when they were built; its parameters are not re-validated while the
slots of ``_param_slots`` hold theirs. Nothing is assumed about what happens
between two calls: each test below changes something between
``sample_actions`` and the ``partial_fit`` that learns the served round, and
compares with a twin that builds everything anew on every call (``_fresh``),
or checks the error. ``Slots`` itself is tested first.
"""

from __future__ import annotations

import copy
import gc
import pickle
import weakref

import numpy as np
import pytest
from _helpers import assert_same_learner, assert_same_state, snapshot
from sklearn.base import clone
from sklearn.utils._param_validation import InvalidParameterError

from skbandit import (
    Banditron,
    ConservativeOneVsAll,
    LoggedFeedback,
    OnlineSelector,
    SeparableOneVsAll,
    SquareCB,
)
from skbandit._base._state import _RollbackPlan
from skbandit._core._kernel import (
    MISSING,
    SLOT_ATTR,
    SLOT_CLASS_ATTR,
    SLOT_ITEM,
    Slots,
)
from skbandit.exploration import EpsilonGreedy, InverseGap
from skbandit.multiclass._selector import default_candidates
from skbandit.optim import Normalized

pytestmark = pytest.mark.filterwarnings("ignore::skbandit.OffPolicyWarning")

K = 3


# ---------------------------------------------------------------------- Slots
class _Owner:
    def method(self):
        return 1


def test_slots_read_and_compare_by_identity():
    """Each kind reads what it names; ``unchanged`` is identity, not
    equality; a missing entry reads ``MISSING`` (deleted: a change)."""
    obj, other = _Owner(), _Owner()
    obj.a, obj.b = 1.5, [1]
    other.x = "q"
    items = [obj, other]
    slots = Slots(
        [
            (SLOT_ATTR, None, "a"),
            (SLOT_ATTR, None, "nothing"),
            (SLOT_CLASS_ATTR, None, "method"),
            (SLOT_ATTR, other, "x"),
            (SLOT_ITEM, items, 1),
            (SLOT_ITEM, items, 2),
        ],
        obj,
    )
    assert slots.recorded == (1.5, MISSING, _Owner.method, "q", other, MISSING)
    assert slots.read(obj) == slots.recorded and slots.unchanged(obj)
    obj.a = float("1.5")  # equal, another object
    assert obj.a == 1.5 and not slots.unchanged(obj)
    obj.a = slots.recorded[0]
    assert slots.unchanged(obj)
    # another object passed for the owner None: its own entries are read
    assert not slots.unchanged(other)
    for change, undo in [
        (lambda: setattr(obj, "nothing", None), lambda: delattr(obj, "nothing")),
        (lambda: delattr(other, "x"), lambda: setattr(other, "x", "q")),
        (lambda: items.append(3), items.pop),  # grown past the last index
        (lambda: items.__setitem__(1, obj), lambda: items.__setitem__(1, other)),
    ]:
        change()
        assert not slots.unchanged(obj)
        undo()
        assert slots.unchanged(obj)


def test_slots_see_the_class_attribute_replaced_and_the_class_changed(monkeypatch):
    """A class attribute slot reads ``type(owner).name`` at each call: a
    method replaced on the class, or an object whose class is replaced, is a
    change (``_make_kernel`` replaced by a test is one)."""

    class Sub(_Owner):
        def method(self):
            return 2

    obj = _Owner()
    slots = Slots([(SLOT_CLASS_ATTR, None, "method")], obj)
    with monkeypatch.context() as m:
        m.setattr(_Owner, "method", lambda self: 3)
        assert not slots.unchanged(obj)
    assert slots.unchanged(obj)
    obj.__class__ = Sub
    assert not slots.unchanged(obj)


def test_slots_write_puts_the_values_back():
    """``write`` sets each entry back, deletes the ones that were missing,
    and refuses a slot it cannot write before writing anything."""
    obj = _Owner()
    obj.a, obj.b = 1, 2
    slots = Slots([(SLOT_ATTR, None, "a"), (SLOT_ATTR, None, "c")], obj)
    point = slots.read(obj)
    obj.a, obj.c = 10, 30
    slots.write(obj, point)
    assert vars(obj) == {"a": 1, "b": 2}
    with pytest.raises(ValueError, match="not a read"):
        slots.write(obj, (1,))
    mixed = Slots([(SLOT_ATTR, None, "a"), (SLOT_CLASS_ATTR, None, "method")], obj)
    obj.a = 5
    with pytest.raises(TypeError, match="slot 1"):
        mixed.write(obj, (1, MISSING))
    assert obj.a == 5


@pytest.mark.parametrize(
    "slot, match",
    [
        ((9, None, "a"), "unknown kind"),
        ((SLOT_ATTR, None, 3), "must be a str"),
        ((SLOT_ITEM, {}, 0), "list or a tuple"),
        ((SLOT_ITEM, [], -1), "int >= 0"),
    ],
)
def test_slots_refuse_bad_slots(slot, match):
    with pytest.raises((TypeError, ValueError), match=match):
        Slots([slot], _Owner())


def test_slots_are_not_pickled():
    """A key names objects of one process: never pickled (a learner drops
    its cache and its validated parameters' slots, ``__getstate__``)."""
    with pytest.raises(TypeError, match="pickle"):
        pickle.dumps(Slots([], None))
    assert pickle.loads(pickle.dumps(MISSING)) is MISSING


@pytest.mark.parametrize(
    "make",
    [lambda: OnlineSelector(default_candidates(), random_state=0), None],
    ids=["selector", "own-rollback-point"],
)
def test_cached_slots_keep_no_reference_to_the_learner(make):
    """The key and the rollback plan name the learner as the object each
    call passes (owner None), so a learner's caches make no reference cycle:
    a learner let go is freed at once, with its model, without waiting for
    the garbage collector. Catches slots or a plan that hold the learner
    itself (the plan of a learner recording its own rollback point too)."""
    X, y = _stream()
    if make is None:
        est = SeparableOneVsAll(kernel="rational", random_state=0)
    else:
        est = make()
    _live(est, X, y, 0, 5)
    est._validate_params_cached()  # (a lean call's after the cache was dropped)
    est.sample_actions(np.ascontiguousarray(X[5:6]))  # (a OneRow and its plan)
    assert "_validated_params" in est.__dict__
    assert isinstance(est._kernel_cache[-1], _RollbackPlan)
    ref = weakref.ref(est)
    gc.disable()
    try:
        del est
        assert ref() is None
    finally:
        gc.enable()


# ------------------------------------------------------------ the live loop
def _stream(n=60, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / 4.0  # norms below 1 (the rational kernel)
    y = rng.integers(0, K, size=n)
    return X, y


def _selector(candidates=None, **params):
    # the four linear default candidates (the tests name them by position)
    if candidates is None:
        candidates = default_candidates()
    return OnlineSelector(candidates, random_state=0, **params)


def _live(est, X, y, lo, hi, between=None):
    """Rounds lo..hi-1 of the live loop; ``between(i)`` runs between the
    round's ``sample_actions`` and its ``partial_fit``. The rounds served."""
    out = []
    for i in range(lo, hi):
        row = np.ascontiguousarray(X[i : i + 1])
        a, p = est.sample_actions(row, classes=np.arange(K) if i == 0 else None)
        if between is not None:
            between(i)
        est.partial_fit(row, LoggedFeedback(a, [float(a[0] == y[i])], p))
        out.append((a[0], p[0]))
    return out


def _fresh(est):
    """Make ``est`` (a copy) build its kernel, validate its parameters and
    take the general path on every call: nothing cached is ever reused."""
    est._cached_kernel = lambda: None
    return est


def _twins(make, X, y, n=10):
    est = make()
    _live(est, X, y, 0, n)
    return est, _fresh(copy.deepcopy(est))


def _assert_played_as_fresh(est, ref, X, y, change, lo=10, hi=40, at=15):
    """``change(learner)`` between the serving and the learning of round
    ``at``: ``est`` (its caches) and ``ref`` (none) play the same."""

    def between(learner):
        return lambda i: change(learner) if i == at else None

    played = _live(est, X, y, lo, hi, between(est))
    assert _live(ref, X, y, lo, hi, between(ref)) == played
    assert_same_learner(est, ref)
    return played


_CHANGES = {
    # set_params on the selector: its mixing rule in place, its window
    "selector-epsilon": lambda s: s.set_params(exploration__epsilon=0.9),
    "selector-window": lambda s: s.set_params(window=3),
    # set_params on a candidate: a number, and its rule's parameter in place
    "candidate-learning-rate": lambda s: s.candidates_[0].set_params(
        step_size__learning_rate=20.0
    ),
    "candidate-rule-in-place": lambda s: s.candidates_[1].set_params(
        exploration__scale=1e-3
    ),
    # a candidate's parameter assigned directly, and its rule's attribute
    "candidate-assigned": lambda s: setattr(
        s.candidates_[0], "exploration", InverseGap(1e-3)
    ),
    "candidate-rule-assigned": lambda s: setattr(
        s.candidates_[1].exploration, "exponent", 0.0
    ),
    # a candidate's state array replaced (zeros: the play changes)
    "candidate-state-array": lambda s: setattr(
        s.candidates_[0], "coef_", np.zeros_like(s.candidates_[0].coef_)
    ),
    # the selector's own state array replaced
    "selector-state-array": lambda s: setattr(
        s, "mix_shares_", np.array([0.97, 0.01, 0.01, 0.01])
    ),
    # a candidate replaced in the list: the leader by a copy of another
    "candidate-replaced": lambda s: s.candidates_.__setitem__(
        0, copy.deepcopy(s.candidates_[1])
    ),
}


@pytest.mark.parametrize("name", list(_CHANGES))
def test_a_change_between_serving_and_learning(name):
    """Each change made between ``sample_actions`` and the ``partial_fit``
    that learns the served round is played from that ``partial_fit`` on,
    exactly as by a learner that caches nothing. Not vacuous: without the
    change the play differs. Catches a key missing the candidates' slots,
    their rules', their state arrays, the list's items, or a round's key
    reused from ``sample_actions`` (planted: each fails a case here)."""
    X, y = _stream()
    est, ref = _twins(_selector, X, y)
    played = _assert_played_as_fresh(est, ref, X, y, _CHANGES[name])
    same, _ = _twins(_selector, X, y)
    assert _live(same, X, y, 10, 40) != played


def test_unfitted_candidates_are_validated_not_played():
    """``candidates`` (the unfitted objects, cloned at the first call) are
    validated with the selector's parameters: one given an invalid value is
    refused by every call, lean or not, with nothing changed; a valid
    change does not alter the play (the fitted candidates are the clones)
    until a new fit. Catches ``_param_slots`` without the given candidates
    (the lean calls then skip their validation)."""
    X, y = _stream()
    make = lambda: _selector(  # noqa: E731
        [SquareCB(), Banditron(exploration=EpsilonGreedy(0.2))]
    )
    est, ref = _twins(make, X, y)
    unchanged, _ = _twins(make, X, y)
    before = snapshot(est)
    row = np.ascontiguousarray(X[10:11])
    for bad in (
        lambda c: setattr(c[0], "step_size", Normalized(-1.0)),
        lambda c: setattr(c[1].exploration, "epsilon", 2.0),
        lambda c: c.append("not a learner"),
    ):
        bad(est.candidates)
        with pytest.raises(InvalidParameterError):
            est.sample_actions(row)
        with pytest.raises(InvalidParameterError):
            est.partial_fit(row, LoggedFeedback([0], [1.0], [0.5]))
        with pytest.raises(InvalidParameterError):
            est.partial_fit(row, [y[10]])
        assert_same_state(est, before)
        est.candidates = make().candidates  # valid again
    est.candidates[1].exploration.epsilon = 0.9  # valid: played from a new fit

    def change(s):
        s.candidates[0].learning_rate = 5.0

    played = _assert_played_as_fresh(est, ref, X, y, change)
    assert _live(unchanged, X, y, 10, 40) == played


def test_clone_and_pickle_between_serving_and_learning():
    """Pickled (and deep-copied) between the serving and the learning of a
    round, a selector learns it and plays on as the original; a clone is a
    new unfitted learner, and cloning leaves the original's caches valid.
    Catches a cache or a key carried into the copy (``Slots`` cannot be
    pickled, and name the original's objects)."""
    X, y = _stream()
    est = _selector()
    _live(est, X, y, 0, 5)
    est.set_params(confidence=0.9)  # the next lean call validates (and keeps
    _live(est, X, y, 5, 10)  # its parameters' slots, ``_validated_params``)
    assert "_validated_params" in est.__dict__
    row = np.ascontiguousarray(X[10:11])
    a, p = est.sample_actions(row)
    copies = [pickle.loads(pickle.dumps(est)), copy.deepcopy(est)]
    new = clone(est)
    assert not hasattr(new, "classes_")
    for c in copies:
        assert "_kernel_cache" not in c.__dict__
        assert "_validated_params" not in c.__dict__
    cache = est._kernel_cache
    for learner in (est, *copies):
        learner.partial_fit(row, LoggedFeedback(a, [float(a[0] == y[10])], p))
    assert est._kernel_cache[1] is cache[1]  # the original's kernel kept
    played = _live(est, X, y, 11, 30)
    for c in copies:
        assert _live(c, X, y, 11, 30) == played
        assert_same_learner(c, est)
    fresh = _selector()
    assert _live(new, X, y, 0, 20) == _live(fresh, X, y, 0, 20)


@pytest.mark.parametrize("replace", [False, True], ids=["reseeded", "replaced"])
def test_the_generator_changed_between_serving_and_learning(replace):
    """The generator replaced by another, or reseeded in place (the same
    object, its state set), between the serving and the learning of a
    round: the learning call and the next ones draw from the new state, as
    a learner that caches nothing. Catches a ``OneRow`` bound to the old
    generator, or one whose state was read when it was bound."""
    X, y = _stream()
    est, ref = _twins(_selector, X, y)

    def change(s):
        if replace:
            s._rng = np.random.default_rng(99)
        else:
            s._rng.bit_generator.state = np.random.default_rng(99).bit_generator.state

    played = _assert_played_as_fresh(est, ref, X, y, change)
    same, _ = _twins(_selector, X, y)
    assert _live(same, X, y, 10, 40) != played


def _interrupt_last(selector):
    """Make the selector's last candidate's end-of-block hook raise: the
    others' hooks ran and their round counters moved (``_after_block``)."""
    last = selector.candidates_[-1]

    def fail(kernel):
        raise KeyboardInterrupt

    last._after_block = fail
    return lambda: last.__dict__.pop("_after_block")


@pytest.mark.parametrize(
    "candidates",
    [
        None,
        lambda: [
            ConservativeOneVsAll(),
            SeparableOneVsAll(kernel="rational"),
            Banditron(),
        ],
    ],
    ids=["default", "with-own-rollback"],
)
def test_a_failed_one_row_call_then_a_good_one(candidates):
    """A logged one-row call that fails after the candidates' counters and
    arrays were written leaves the selector and every candidate as before it
    (the rollback plan's compiled record; a candidate recording its own
    point, SeparableOneVsAll's support set, through its own), and the next
    calls play as if it had not been made. Catches a plan without the
    candidates' slots (their counters stay moved) or without the learners
    that record their own point."""
    X, y = _stream()
    make = lambda: _selector(None if candidates is None else candidates())  # noqa: E731
    est, ref = _twins(make, X, y, n=12)
    row = np.ascontiguousarray(X[12:13])
    a, p = est.sample_actions(row)
    ref.sample_actions(row)
    before = snapshot(est)
    undo = _interrupt_last(est)
    with pytest.raises(KeyboardInterrupt):
        est.partial_fit(row, LoggedFeedback(a, [1.0], p))
    undo()
    assert_same_state(est, before)
    for c, c_ref in zip(est.candidates_, ref.candidates_, strict=True):
        assert_same_learner(c, c_ref)
    for learner in (est, ref):
        learner.partial_fit(row, LoggedFeedback(a, [1.0], p))
    assert _live(est, X, y, 13, 40) == _live(ref, X, y, 13, 40)
    assert_same_learner(est, ref)


def test_the_rollback_plan_records_what_the_rollback_point_records():
    """The plan's compiled record (a one-row call's rollback point) holds the
    objects ``_rollback_point(rng=False)`` holds, for the selector and each
    candidate; a candidate with its own rollback point is recorded by it."""
    X, y = _stream()
    est = _selector([SquareCB(), SeparableOneVsAll(kernel="rational")])
    _live(est, X, y, 0, 8)
    plan = _RollbackPlan(est)
    values, subs = plan.record(est)
    state, cand_points = est._rollback_point(rng=False)
    recorded = {(s[1], s[2]): v for s, v in zip(plan.slots.slots, values, strict=True)}
    first = est.candidates_[0]
    assert recorded.keys() == {(None, name) for name in state} | {
        (first, name) for name in cand_points[0][0]
    }
    for owner, point in ((None, state), (first, cand_points[0][0])):
        for name, value in point.items():
            assert recorded[owner, name] is value
    assert plan.own == (est.candidates_[1],)
    assert subs[0][0].keys() == cand_points[1][0].keys()
    # a learner with its own rollback point is recorded by it alone
    solo = SeparableOneVsAll(kernel="rational", random_state=0)
    _live(solo, X, y, 0, 5)
    plan = _RollbackPlan(solo)
    assert len(plan.slots) == 0 and plan.own == (None,)  # (None: the learner)
    assert plan.record(solo)[1][0][0].keys() == solo._rollback_point()[0].keys() - {
        "_rng"
    }


def test_one_kernel_for_a_whole_live_stream(monkeypatch):
    """The selector builds its kernel once over a live stream (its key holds
    across calls: no slot reads an object made anew each round), and once
    more after each change. Catches a key that misses on every call (the
    live round then pays for a new kernel)."""
    X, y = _stream()
    builds = []
    real = OnlineSelector._selector_kernel

    def counting(self, kernels):
        builds.append(1)
        return real(self, kernels)

    monkeypatch.setattr(OnlineSelector, "_selector_kernel", counting)
    est = _selector()
    _live(est, X, y, 0, 30)
    assert len(builds) == 1
    est.candidates_[0].set_params(step_size__learning_rate=2.0)
    _live(est, X, y, 30, 60)
    assert len(builds) == 2
