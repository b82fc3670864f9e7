"""The state protocol (``StateMixin``).

A learner's mutable state is the attributes named in ``_state_attrs`` (arrays
that the kernel updates in place, or scalars), the counters ``t_``,
``n_mistakes_`` and ``n_greedy_mistakes_``, and the generator ``_rng``.
``_get_state`` copies all of it and ``_set_state`` restores it; the tests'
snapshot/compare helpers, the NumPy reference runners and OnlineSelector's
candidates use them, so a learner with other state (a diagonal, an inverse, a
support set) is covered without special cases. Training never calls them: its
rollback is the undo journal (``skbandit._base._transaction``), which restores
the attributes as objects from ``_rollback_point`` (a one-row call: from the
same record made by one compiled read, ``_RollbackPlan``). ``_reset`` starts a new
state (``_init_state``, the learner's hook), ``_model_bytes`` and
``_state_finite`` measure and check it.
"""

from __future__ import annotations

import ctypes
import sys
from typing import TYPE_CHECKING, Any

import numpy as np

from skbandit._core._kernel import SLOT_ATTR, Slots, within_bound

if TYPE_CHECKING:
    from skbandit._typing import RandomStateLike

_COUNTERS = ("t_", "n_mistakes_", "n_greedy_mistakes_")

# The largest finite float64: ``within_bound(values, _FLOAT_MAX)`` is "every
# value finite" in one compiled scan.
_FLOAT_MAX = float(np.finfo(np.float64).max)


# ctypes' foreign function behind ``ctypes.string_at`` (called directly: a
# Python frame less per snapshot), or the public wrapper
_string_at = getattr(ctypes, "_string_at", ctypes.string_at)
_memmove = ctypes.memmove


def _pcg64_raw_size() -> int | None:
    """Bytes of a ``PCG64``'s state in its object's memory from
    ``bit_generator.ctypes.state_address``, or None where this does not hold.

    NumPy's ``pcg64_state`` is ``{pcg64_random_t *pcg_state; int has_uint32;
    uint32_t uinteger}`` and points into the same object at the 128-bit
    ``state`` and ``inc``; the region from the struct to the end of ``inc``
    (``offset + 32`` bytes) holds the whole state, so copying it out and back
    saves and restores the generator exactly (``bit_generator.state`` does the
    same through a dictionary of Python ints, about 1.4 us each way). The
    layout is NumPy's, not a documented API: it is verified here once per
    process on a probe generator, every field against ``.state`` (the buffered
    32-bit word set to a known value), and where it does not match the
    generator's own ``state`` property is used.
    """
    try:
        probe = np.random.PCG64(20261125)
        state: dict[str, Any] = dict(probe.state)
        state["has_uint32"], state["uinteger"] = 1, 0x9E3779B9
        probe.state = state  # type: ignore[assignment]  # the same keys
        addr = probe.ctypes.state_address
        offset = int.from_bytes(_string_at(addr, 8), sys.byteorder) - addr
        if not 16 <= offset <= 64:
            return None
        raw = _string_at(addr, offset + 32)
        order = sys.byteorder
        fields = (
            int.from_bytes(raw[offset : offset + 16], order),
            int.from_bytes(raw[offset + 16 : offset + 32], order),
            int.from_bytes(raw[8:12], order),
            int.from_bytes(raw[12:16], order),
        )
        expected = (state["state"]["state"], state["state"]["inc"], 1, 0x9E3779B9)
    except Exception:  # no ctypes interface: the state property
        return None
    return offset + 32 if fields == expected else None


# the raw state's size for PCG64 (None: use the ``state`` property)
_PCG64_RAW_SIZE = _pcg64_raw_size()


def _rng_snapshot(rng: np.random.Generator):
    """The generator's state, to be given back to ``_rng_restore``: the raw
    bytes of a ``PCG64`` (``_pcg64_raw_size``), else ``bit_generator.state``."""
    bit_generator = rng.bit_generator
    if type(bit_generator) is np.random.PCG64 and _PCG64_RAW_SIZE is not None:
        addr = bit_generator.ctypes.state_address
        return (bit_generator, _string_at(addr, _PCG64_RAW_SIZE))
    return bit_generator.state


def _rng_restore(rng: np.random.Generator, snapshot) -> None:
    """Set ``rng`` back to a ``_rng_snapshot`` (or a ``bit_generator.state``
    dictionary, e.g. a learner's own rollback point)."""
    bit_generator = rng.bit_generator
    if type(snapshot) is dict:
        bit_generator.state = snapshot
    elif snapshot[0] is bit_generator:
        raw = snapshot[1]  # (only made when _PCG64_RAW_SIZE is known)
        _memmove(bit_generator.ctypes.state_address, raw, len(raw))
    else:  # another generator object: through its state property
        bit_generator.state = _raw_to_state(snapshot)


def _raw_to_state(snapshot) -> dict:
    """The ``bit_generator.state`` dictionary of a raw ``PCG64`` snapshot."""
    raw = snapshot[1]
    order = sys.byteorder
    offset = len(raw) - 32
    return {
        "bit_generator": "PCG64",
        "state": {
            "state": int.from_bytes(raw[offset : offset + 16], order),
            "inc": int.from_bytes(raw[offset + 16 :], order),
        },
        "has_uint32": int.from_bytes(raw[8:12], order),
        "uinteger": int.from_bytes(raw[12:16], order),
    }


def _make_rng(random_state) -> np.random.Generator:
    """The learner's own generator, from an int, None or a RandomState."""
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(2**31 - 1))
    return np.random.default_rng(random_state)


class StateMixin:
    """The learner's mutable state: copy, restore, rollback point, new state."""

    # State arrays of shape (n_classes, n_features) (or (n_nodes, n_features))
    # stored feature-major: Fortran-ordered, so that their transpose, which
    # the kernel receives (``LinearKernel``: W is (d, k)), is C-contiguous and
    # a feature's k weights are adjacent in memory. ``_own_state_arrays``
    # restores the layout of an array assigned or unpickled otherwise.
    _feature_major: tuple[str, ...] = ()

    if TYPE_CHECKING:  # what it uses of the skeleton (skbandit.base)
        _state_attrs: tuple[str, ...]
        random_state: RandomStateLike

        def _init_state(self, n_features: int, n_classes: int) -> None: ...

    def _get_state(self) -> dict:
        """A copy of the whole mutable state: declared state, counters, generator."""
        state = {}
        for name in (*self._state_attrs, *_COUNTERS):
            value = getattr(self, name)
            # order="K": a feature-major array's copy stays feature-major
            state[name] = (
                value.copy(order="K") if isinstance(value, np.ndarray) else value
            )
        state["_rng"] = self._rng.bit_generator.state
        return state

    def _set_state(self, state: dict) -> None:
        """Restore a ``_get_state`` copy (arrays in place where shapes allow)."""
        # a cached kernel may hold values derived from the arrays (``_kernel``)
        self.__dict__.pop("_kernel_cache", None)
        for name, value in state.items():
            if name == "_rng":
                self._rng.bit_generator.state = value
                continue
            current = getattr(self, name, None)
            if (
                isinstance(value, np.ndarray)
                and isinstance(current, np.ndarray)
                and current.shape == value.shape
                and current.dtype == value.dtype
                and current.flags.writeable
            ):
                np.copyto(current, value)
            else:
                setattr(self, name, value.copy() if hasattr(value, "copy") else value)

    def _own_state_arrays(self) -> None:
        """Make every state array writeable and contiguous in its layout: those
        named in ``_feature_major`` Fortran-ordered, the others C-ordered (a
        learner loaded read-only, e.g. memory-mapped by joblib, gets private
        copies; so does a weight matrix assigned or unpickled class-major)."""
        feature_major = self._feature_major
        for name in self._state_attrs:
            value = getattr(self, name)
            if not isinstance(value, np.ndarray):
                continue
            if name in feature_major:
                if not (value.flags.writeable and value.flags.f_contiguous):
                    setattr(self, name, np.array(value, order="F", copy=True))
            elif not (value.flags.writeable and value.flags.c_contiguous):
                setattr(self, name, np.array(value, order="C", copy=True))

    def _reset(self, classes: np.ndarray, n_features: int) -> None:
        # a new state: the old kernel (and the arrays it holds) is let go now
        self.__dict__.pop("_kernel_cache", None)
        self.classes_ = classes
        self._rng = _make_rng(self.random_state)
        self.t_ = 0
        self.n_mistakes_ = 0
        self.n_greedy_mistakes_ = 0
        self._n_pending = 0
        self._init_state(n_features, classes.shape[0])

    def _model_bytes(self) -> int:
        """Bytes of the state arrays (a meta-learner's candidates' included,
        each by its own ``_model_bytes``: a pipeline's learner, a store)."""
        own = sum(
            value.nbytes
            for name in self._state_attrs
            if isinstance(value := getattr(self, name), np.ndarray)
        )
        return own + sum(c._model_bytes() for c in self.__dict__.get("candidates_", ()))

    def _state_finite(self) -> bool:
        """Every value of every floating-point state array finite (O(model):
        the copy mode's check), by the compiled scan that bounds the input
        (``within_bound`` at the largest float64, False for NaN and
        infinities); integer arrays are finite."""
        return all(
            value.dtype.kind != "f"
            or within_bound(
                np.ascontiguousarray(value, dtype=np.float64).reshape(-1), _FLOAT_MAX
            )
            for learner in (self, *self.__dict__.get("candidates_", ()))
            for name in learner._state_attrs
            if isinstance(value := getattr(learner, name), np.ndarray)
        )

    def _rollback_point(self, rng: bool = True):
        """What a rollback restores besides the journal: the state attributes
        as objects (arrays by reference: a hook may replace an array, its
        contents are the journal's business), counters, generator (unless
        ``rng`` is false), and the same for a meta-learner's ``candidates_``
        but their generators, which are never drawn from (the meta-learner's
        uniforms drive them: ``OnlineSelector._init_state``). O(number of
        attributes)."""
        state = {name: getattr(self, name) for name in (*self._state_attrs, *_COUNTERS)}
        if rng:
            state["_rng"] = _rng_snapshot(self._rng)
        subs = [
            c._rollback_point(rng=False) for c in self.__dict__.get("candidates_", ())
        ]
        return state, subs

    def _restore_point(self, point) -> None:
        state, subs = point
        for name, value in state.items():
            if name == "_rng":
                _rng_restore(self._rng, value)
            else:
                setattr(self, name, value)
        for learner, sub in zip(
            self.__dict__.get("candidates_", ()), subs, strict=True
        ):
            learner._restore_point(sub)


class _RollbackPlan:
    """How a one-row call records its rollback point: what
    ``StateMixin._rollback_point(rng=False)`` records and restores, with one
    compiled read (``skbandit._core._kernel.Slots``) instead of a dictionary
    per learner.

    The slots are the state attributes and counters (as objects, in the
    instance dictionaries) of the learner and of each of its ``candidates_``
    whose rollback point is ``StateMixin``'s; a learner that records its own
    (an override, e.g. ``SeparableOneVsAll``'s) records it itself
    (``own``; None stands for the learner itself, as a slot's owner does, so
    the plan kept in the learner's cache holds no reference to it), and then
    for its candidates too. Built from the learners and their classes'
    declarations (``_state_attrs``, the two methods), which the kernel key
    watches (``TransactionMixin._cache_slots``): the plan kept with the cached
    kernel is the one built anew while the key holds.
    """

    __slots__ = ("slots", "own")

    def __init__(self, learner: StateMixin) -> None:
        slots: list[tuple] = []
        own = []
        if _base_rollback(learner):
            for each in (learner, *learner.__dict__.get("candidates_", ())):
                if each is learner or _base_rollback(each):
                    owner = None if each is learner else each
                    names = (*each._state_attrs, *_COUNTERS)
                    slots += [(SLOT_ATTR, owner, name) for name in names]
                else:
                    own.append(each)
        else:
            own.append(None)  # the learner itself
        self.slots = Slots(slots, learner)
        self.own = tuple(own)

    def record(self, learner: StateMixin):
        """The rollback point (O(number of attributes))."""
        own = self.own
        subs = (
            [
                (learner if each is None else each)._rollback_point(rng=False)
                for each in own
            ]
            if own
            else ()
        )
        return self.slots.read(learner), subs

    def restore(self, learner: StateMixin, point) -> None:
        """Set the attributes back to ``point`` (a ``record``)."""
        values, subs = point
        self.slots.write(learner, values)
        for each, sub in zip(self.own, subs, strict=True):
            (learner if each is None else each)._restore_point(sub)


def _base_rollback(learner) -> bool:
    """Whether ``learner`` records and restores its rollback point with
    ``StateMixin``'s methods (no override)."""
    cls = type(learner)
    return (
        cls._rollback_point is StateMixin._rollback_point
        and cls._restore_point is StateMixin._restore_point
    )
