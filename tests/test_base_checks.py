"""The compiled per-call checks of ``skbandit/_base/_checks.pyx``, each
against what it replaces written plainly: the model's size that sizes the
undo journal (``array_bytes``), the rollback point's record
(``rollback_record``), the kernel cache's identity check (``key_holds``)
and a live round's record of its rollback point (``record_attributes``)."""

from __future__ import annotations

import numpy as np
import pytest
from _data import make_stream
from _registry import KERNEL_ENTRIES, entry_params

ALL = entry_params(KERNEL_ENTRIES)


@pytest.mark.parametrize("entry", ALL)
def test_model_bytes_counts_every_state_array(entry):
    """``_model_bytes`` (which sizes the undo journal) is the bytes of every
    state array, a meta-learner's candidates' included. Catches the compiled
    sum (``_checks.array_bytes``) skipping an array or counting a non-array."""
    X, y = make_stream(60, 12, 3, seed=0)
    est = entry.make(random_state=0).partial_fit(X, y, classes=np.arange(3))
    if "_sv_live" in est.__dict__:  # the rational store sizes itself (its CSR)
        pytest.skip("the live support-set store counts its own entries")

    def state_bytes(learner) -> int:
        # its state arrays, its candidates' and a pipeline's final learner's
        own = sum(
            value.nbytes
            for name in learner._state_attrs
            if isinstance(value := getattr(learner, name), np.ndarray)
        )
        held = [*getattr(learner, "candidates_", ())]
        held += [learner.learner_] if hasattr(learner, "learner_") else []
        return own + sum(state_bytes(sub) for sub in held)

    assert est._model_bytes() == state_bytes(est) > 0


@pytest.mark.parametrize("entry", ALL)
def test_rollback_point_records_the_attributes_getattr_reads(entry):
    """The compiled rollback point (``_checks.rollback_record``) records, for
    every learner, the very objects ``getattr`` gives for its state
    attributes and counters, in order, and the same for its held learners
    (``_held_learners``). Catches a record that skips a name or reads another
    attribute (planted: ``t_`` recorded for ``coef_``, 27 of 30 fail)."""
    from skbandit._base._state import _BASE_POINT, _COUNTERS

    X, y = make_stream(60, 12, 3, seed=0)
    est = entry.make(random_state=0).partial_fit(X, y, classes=np.arange(3))
    if type(est)._rollback_point is not _BASE_POINT:
        pytest.skip("a learner with its own rollback point")

    def check(learner, point) -> None:
        state, subs = point
        names = [*learner._state_attrs, *_COUNTERS]
        assert [n for n in state if n != "_rng"] == names
        for name in names:
            assert state[name] is getattr(learner, name), name
        held = learner._held_learners()
        assert len(subs) == len(held)
        for sub_learner, sub in zip(held, subs, strict=True):
            if type(sub_learner)._rollback_point is _BASE_POINT:
                check(sub_learner, sub)

    check(est, est._rollback_point())


def test_array_bytes_sums_only_arrays():
    """``array_bytes(obj, names)``: the arrays' ``nbytes`` (any dtype, shape,
    layout, subclass), 0 for other values."""
    from skbandit._base._checks import array_bytes

    class Holder:
        pass

    h = Holder()
    h.a = np.zeros(3)
    h.b = 5
    h.c = np.zeros((4, 2), dtype=np.float32)[::2]  # a strided view: 16 bytes
    h.d = np.ma.masked_array(np.zeros(2, dtype=np.int64))
    h.e = None
    assert array_bytes(h, ("a", "b", "c", "d", "e")) == 24 + 16 + 16
    assert array_bytes(h, ()) == 0
    with pytest.raises(AttributeError):
        array_bytes(h, ("missing",))


def test_key_holds_is_the_key_compared_object_by_object():
    """``key_holds(key, est)`` (the check of every training call) is true
    exactly when ``kernel_key(est)`` now holds the same objects as ``key``, in
    order: an attribute replaced, added or deleted (the walk longer or
    shorter than the key), an item of a held list replaced, an attribute of
    a held object replaced, or a counter changed (not keyed) are each told
    apart. Catches a comparison that accepts a walk shorter than the key."""
    from skbandit._base._checks import kernel_key, key_holds
    from skbandit._base._transaction import _NOT_KEYED, TransactionMixin

    class Rule:
        def __init__(self):
            self.scale = 1.0

    class Learner(TransactionMixin):
        def _make_kernel(self):
            return None

    def fresh():
        est = Learner()
        est.rule, est.items, est.coef_ = Rule(), [Rule(), 2], np.zeros(3)
        est.t_ = 0
        return est

    def holds(change) -> bool:
        est = fresh()
        key = kernel_key(est, _NOT_KEYED, TransactionMixin)
        assert key_holds(key, est, _NOT_KEYED, TransactionMixin)
        change(est)
        return key_holds(key, est, _NOT_KEYED, TransactionMixin)

    assert holds(lambda est: setattr(est, "t_", 5))  # a counter: not keyed
    assert not holds(lambda est: setattr(est, "coef_", np.zeros(3)))
    assert not holds(lambda est: setattr(est, "extra_", 1))
    assert not holds(lambda est: delattr(est, "coef_"))
    assert not holds(lambda est: est.items.__setitem__(1, 3))
    assert not holds(lambda est: setattr(est.items[0], "scale", 2.0))
    assert not holds(lambda est: setattr(est.rule, "scale", 2.0))


def test_live_round_record_reads_what_getattr_reads():
    """A live round's rollback point (``record_attributes`` with the plan's
    instance dictionaries, ``plain_dicts``) holds what ``getattr`` reads for
    every entry: the dictionary is read directly only for a plain instance
    attribute, never past a property of the same name, a class attribute of
    that name (read when the instance has none) or a class with its own
    ``__getattr__``. Catches ``plain_dicts`` handing out every instance
    dictionary (the property's and the class attribute's entries differ)."""
    from skbandit._base._checks import record_attributes
    from skbandit._live_hooks import plain_dicts

    class Plain:
        pass

    class Shadowed:
        @property
        def t_(self):
            return 7

    class Defaulted:
        n_mistakes_ = 3

    class Dynamic:
        def __getattr__(self, name):
            return "dynamic"

    missing = object()
    plain, shadowed, defaulted, dynamic = Plain(), Shadowed(), Defaulted(), Dynamic()
    plain.t_ = 1
    shadowed.__dict__["t_"] = 2  # (hidden by the property)
    objects = [plain, plain, shadowed, defaulted, dynamic]
    names = ["t_", "n_mistakes_", "t_", "n_mistakes_", "t_"]
    dicts = plain_dicts(objects, names)
    assert [d is not None for d in dicts] == [True, True, False, False, False]
    expected = [getattr(o, n, missing) for o, n in zip(objects, names, strict=True)]
    assert expected == [1, missing, 7, 3, "dynamic"]
    assert record_attributes(objects, names, dicts, missing) == expected
    with pytest.raises(TypeError):
        record_attributes([plain], ["t_"], [["not", "a", "dict"]], missing)
    with pytest.raises(ValueError, match="differ in length"):
        record_attributes([plain], ["t_"], [], missing)
