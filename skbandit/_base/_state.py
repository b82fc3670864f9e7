"""The state protocol (``StateMixin``).

A learner's mutable state is the attributes named in ``_state_attrs`` (arrays
that the kernel updates in place, or scalars), the counters ``t_``,
``n_mistakes_`` and ``n_greedy_mistakes_``, and the generator ``_rng``.
``_get_state`` copies all of it and ``_set_state`` restores it; the tests'
snapshot/compare helpers, the NumPy reference runners and OnlineSelector's
candidates use them, so a learner with other state (a diagonal, an inverse, a
support set) is covered without special cases. Training never calls them: its
rollback is the undo journal (``skbandit._base._transaction``), which restores
the attributes as objects from ``_rollback_point``. ``_reset`` starts a new
state (``_init_state``, the learner's hook), ``_model_bytes`` and
``_state_finite`` measure and check it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from skbandit._base._checks import array_bytes, rollback_record
from skbandit._core._scans import within_bound

if TYPE_CHECKING:
    from skbandit._typing import RandomStateLike

_COUNTERS = ("t_", "n_mistakes_", "n_greedy_mistakes_")

# The largest finite float64: ``within_bound(values, _FLOAT_MAX)`` is "every
# value finite" in one compiled scan.
_FLOAT_MAX = float(np.finfo(np.float64).max)


def _rng_snapshot(rng: np.random.Generator) -> Mapping[str, Any]:
    """The generator's state, to be given back to ``_rng_restore``: its bit
    generator's ``state`` dictionary (NumPy's public, exact snapshot)."""
    return rng.bit_generator.state


def _rng_restore(rng: np.random.Generator, snapshot: Mapping[str, Any]) -> None:
    """Set ``rng`` back to a ``_rng_snapshot``."""
    rng.bit_generator.state = snapshot


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

    def _check_unlocked(self, method: str) -> None:
        """Refuse ``method`` (a call that changes the parameters or trains)
        while a ``skbandit.LiveSession`` is open on this learner: the
        session's kernel wraps the state arrays and was built from the
        parameters, which it locks until it is closed."""
        session = self.__dict__.get("_live_session")
        if session is not None and not session._inside:
            raise RuntimeError(
                f"{type(self).__name__}.{method} is not allowed while a "
                f"LiveSession is open on this learner ({session!r}): its "
                "parameters and state are locked until the session is closed "
                "(session.close(), or leave its with block)."
            )

    def set_params(self, **params):
        """Set the parameters of this estimator (scikit-learn's ``set_params``).

        Refused (``RuntimeError``) while a ``skbandit.LiveSession`` is open on
        the learner: the session locks its parameters until it is closed.

        Parameters
        ----------
        **params : dict
            Estimator parameters, ``<component>__<parameter>`` for nested ones.

        Returns
        -------
        self : estimator instance
            The estimator.
        """
        self._check_unlocked("set_params")
        # a nested object's parameters may change in place: validate anew
        self.__dict__.pop("_validated_params", None)
        self.__dict__.pop("_kernel_cache", None)
        return super().set_params(**params)

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
        # a kept kernel may hold values derived from the arrays
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
        self.__dict__.pop("_kernel_cache", None)  # (a new state)
        self.classes_ = classes
        self._rng = _make_rng(self.random_state)
        self.t_ = 0
        self.n_mistakes_ = 0
        self.n_greedy_mistakes_ = 0
        self._n_pending = 0
        self._init_state(n_features, classes.shape[0])

    def _held_learners(self) -> list:
        """The learners whose state is part of this one's, in order: a
        meta-learner's ``candidates_``, then a pipeline's ``learner_``. The
        state's size, its finiteness check and the rollback point reach them
        through this list (each held learner through its own methods, so a
        pipeline candidate's learner too); the compiled
        ``_checks.rollback_record`` walks the same two attributes in the same
        order."""
        held = [*self.__dict__.get("candidates_", ())]
        inner = getattr(self, "learner_", None)  # (a pipeline's: a property)
        if isinstance(inner, StateMixin):
            held.append(inner)
        return held

    def _model_bytes(self) -> int:
        """Bytes of the state arrays, the held learners' included (each by
        its own ``_model_bytes``)."""
        total = array_bytes(self, tuple(self._state_attrs))
        for learner in self._held_learners():
            total += learner._model_bytes()
        return total

    def _state_finite(self) -> bool:
        """Every value of every floating-point state array finite, the held
        learners' included (O(model): the copy mode's check), by the compiled
        scan that bounds the input (``within_bound`` at the largest float64,
        False for NaN and infinities); integer arrays are finite."""
        return all(
            value.dtype.kind != "f"
            or within_bound(
                np.ascontiguousarray(value, dtype=np.float64).reshape(-1), _FLOAT_MAX
            )
            for name in self._state_attrs
            if isinstance(value := getattr(self, name), np.ndarray)
        ) and all(learner._state_finite() for learner in self._held_learners())

    def _rollback_point(self, rng: bool = True):
        """What a rollback restores besides the journal: the state attributes
        as objects (arrays by reference: a hook may replace an array, its
        contents are the journal's business), counters, generator (unless
        ``rng`` is false), and the same for the learners it holds, a
        meta-learner's ``candidates_`` then a pipeline's ``learner_``, but
        their generators, which are never drawn from (the holder's uniforms
        drive them: ``OnlineSelector._init_state``). O(number of attributes),
        in one compiled walk (``_checks.rollback_record``), which defers to a
        held learner's own override of this method."""
        state, subs = rollback_record(self, _COUNTERS, _BASE_POINT, StateMixin)
        if rng:
            state["_rng"] = _rng_snapshot(self._rng)
        return state, subs

    def _restore_point(self, point) -> None:
        state, subs = point
        for name, value in state.items():
            if name == "_rng":
                _rng_restore(self._rng, value)
            else:
                setattr(self, name, value)
        for learner, sub in zip(self._held_learners(), subs, strict=True):
            learner._restore_point(sub)


# the skeleton's record (``rollback_record`` calls a held learner's override)
_BASE_POINT = StateMixin.__dict__["_rollback_point"]
