"""The regressors of ``RegressionReduction``: the model bank, its buffer and state.

:class:`_RegressorBank` holds what the reduction's rounds read and write: one
clone of the regressor per class (or one multi-output regressor), the buffer
of played rounds they learn from in ``batch_size`` segments, their predicted
rewards, their copies for the state protocol (``skbandit._base._state``) and
the rollback of a failed call.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.linear_model import SGDRegressor
from sklearn.utils import get_tags
from sklearn.utils.validation import check_is_fitted

from skbandit._base._state import StateMixin, _rng_restore, _rng_snapshot

__all__: list[str] = []


def _default_regressor() -> SGDRegressor:
    """The regressor of ``estimator=None``: plain SGD on the squared loss with
    a constant step and no penalty (every played round is one step of size
    ``eta0`` towards its reward)."""
    return SGDRegressor(learning_rate="constant", eta0=0.01, penalty=None)


def _regressor_outputs(model, X, n: int) -> np.ndarray:
    """``model.predict(X)`` as ``n`` floats. For scikit-learn's
    ``SGDRegressor`` itself (the default regressor, or one the user passed;
    not a subclass, which may predict otherwise) the same numbers from its
    public fitted attributes: its ``predict`` is ``X @ coef_ + intercept_``
    (``safe_sparse_dot``: the same NumPy or SciPy product, so the same bits)
    after validating ``X``, which the learner has done; skipping that
    validation saves most of the cost of each of the ``k`` calls a round
    (measured in ``docs/results/regression-reduction/bench.txt``)."""
    if type(model) is SGDRegressor:
        out = X @ model.coef_ + model.intercept_
    else:
        out = model.predict(X)
    return np.asarray(out, dtype=np.float64).reshape(n)


class _RegressorBank(StateMixin):
    """The regressors, their buffer and their state: the first base of
    ``RegressionReduction`` (``_get_state`` and ``_set_state`` extend
    ``StateMixin``'s, later in its bases)."""

    # the host's parameters and fitted classes, which the bank reads
    estimator: Any
    per_class: bool
    initial_reward: float
    classes_: np.ndarray
    n_features_in_: int

    # rows reach the regressor as given, dense or CSR: the two inputs play
    # alike only when the regressor's sparse and dense paths round alike
    # (scikit-learn's SGDRegressor's do not, in the last bits)
    _dense_csr_alike = False

    # the arrays of the state protocol (skbandit._base._state); the regressors
    # and the buffer are added by ``_get_state``
    _state_attrs = ("n_updates_",)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        base = _default_regressor() if self.estimator is None else self.estimator
        try:
            tags.input_tags.sparse = get_tags(base).input_tags.sparse
        except (AttributeError, TypeError):  # not an estimator (refused by fit)
            tags.input_tags.sparse = False
        return tags

    def _score_rows(self, X) -> np.ndarray:
        """Scores of validated rows (``ScoringMixin``'s hook, which
        ``decision_function`` and ``predict`` read): predicted rewards."""
        self._check_structure()
        return self._predict_rewards(X)

    # ------------------------------------------------------------- state
    def _init_state(self, n_features: int, n_classes: int) -> None:
        base = _default_regressor() if self.estimator is None else self.estimator
        n_models = n_classes if self.per_class else 1
        # seeds for the clones' own randomness (an MLP's initial weights), from
        # a child of the learner's seed sequence: the generator's draws (the
        # uniforms of the rounds) are not touched
        seq = getattr(self._rng.bit_generator, "seed_seq", None)
        if not isinstance(seq, np.random.SeedSequence):
            seq = np.random.SeedSequence()
        seeds = seq.spawn(1)[0].generate_state(n_models)
        models = []
        for seed in seeds:
            model = clone(base)
            if "random_state" in model.get_params() and (
                model.get_params()["random_state"] is None
            ):
                model.set_params(random_state=int(seed))
            models.append(model)
        self.estimators_ = models
        self.n_updates_ = np.zeros(n_classes, dtype=np.int64)
        # (X rows, actions, rewards, offsets) per segment of play
        self._buffer: list[tuple] = []

    def _get_state(self) -> dict:
        """The state protocol's copy (``skbandit._base._state``), with deep
        copies of the regressors (``_ModelCopies``: equal when every attribute
        is, arrays bitwise) and the buffer as arrays (its rows dense)."""
        state = super()._get_state()
        state["estimators_"] = _ModelCopies(self.estimators_)
        buffer, k = self._buffer, self.classes_.shape[0]
        rows = [e[0].toarray() if sp.issparse(e[0]) else e[0] for e in buffer]
        state["_buffer"] = {
            "X": np.vstack(rows) if rows else np.empty((0, self.n_features_in_)),
            "actions": np.concatenate([e[1] for e in buffer] or [np.empty(0, int)]),
            "rewards": np.concatenate([e[2] for e in buffer] or [np.empty(0)]),
            "offsets": np.vstack([e[3] for e in buffer] or [np.empty((0, k))]),
        }
        return state

    def _set_state(self, state: dict) -> None:
        state = dict(state)
        self.estimators_ = copy.deepcopy(state.pop("estimators_").models)
        b = state.pop("_buffer")
        self._buffer = (
            [
                (
                    b["X"].copy(),
                    b["actions"].copy(),
                    b["rewards"].copy(),
                    b["offsets"].copy(),
                )
            ]
            if b["actions"].shape[0]
            else []
        )
        super()._set_state(state)

    @property
    def n_buffered_(self) -> int:
        """Rounds played and waiting in the buffer for the next update."""
        check_is_fitted(self)
        return self._n_buffered()

    # ------------------------------------------------------- transaction
    def _transaction(self, method, *args):
        """Run ``method``; on failure set every attribute back (the regressors
        from the deep copy ``_before_update`` made before their first update in
        the call) and the generator to its state before the call."""
        self._check_unlocked(method.__name__.lstrip("_"))  # (a LiveSession's)
        saved = self.__dict__.copy()
        if "_buffer" in saved:  # (appended to in place)
            saved["_buffer"] = list(saved["_buffer"])
        rng = self.__dict__.get("_rng")
        rng_state = None if rng is None else _rng_snapshot(rng)
        self._call_copies = {}
        try:
            return method(*args)
        except BaseException:
            copies = self._call_copies
            self.__dict__.clear()
            self.__dict__.update(saved)
            if "estimators_" in copies:
                self.estimators_ = copies["estimators_"]
            if "n_updates_" in copies:
                self.n_updates_ = copies["n_updates_"]
            if rng is not None:
                _rng_restore(rng, rng_state)
            raise
        finally:
            self.__dict__.pop("_call_copies", None)

    def _before_update(self) -> None:
        """Keep a copy of the regressors and counts for the call's rollback
        (once per call, before the first update)."""
        copies = self.__dict__.get("_call_copies")
        if copies is not None and "estimators_" not in copies:
            copies["estimators_"] = copy.deepcopy(self.estimators_)
            copies["n_updates_"] = self.n_updates_.copy()

    # --------------------------------------------------------- the model
    def _predict_rewards(self, X) -> np.ndarray:
        """Predicted rewards (n_samples, n_classes): ``initial_reward`` plus
        the regressors' outputs (``_predict_offsets``)."""
        return self._predict_rewards_from(self._predict_offsets(X))

    def _predict_rewards_from(self, D) -> np.ndarray:
        S = float(self.initial_reward) + D
        if not np.all(np.isfinite(S)):
            raise ValueError(
                f"{type(self).__name__}: the regressor predicted a non-finite "
                "reward (it diverged); scale the features or lower its step. "
                "The call was rolled back."
            )
        return S

    def _predict_offsets(self, X) -> np.ndarray:
        """The regressors' outputs (n_samples, n_classes): the predicted
        offsets of the rewards from ``initial_reward``, 0 for a class whose
        regressor has not learned yet."""
        n, k = X.shape[0], self.classes_.shape[0]
        if n == 0 or self.n_updates_.sum() == 0:
            return np.zeros((n, k))
        if not self._per_class_fitted():
            D = np.asarray(self.estimators_[0].predict(X), dtype=np.float64)
            if D.shape != (n, k):
                raise ValueError(
                    f"{type(self).__name__}(per_class=False): the regressor "
                    f"predicted an array of shape {D.shape} for {n} rows; it "
                    f"must predict the {k} classes' rewards, shape ({n}, {k})."
                )
            return np.ascontiguousarray(D)
        D = np.zeros((n, k))
        for a, model in enumerate(self.estimators_):
            if self.n_updates_[a] > 0:
                D[:, a] = _regressor_outputs(model, X, n)
        return D

    def _per_class_fitted(self) -> bool:
        """Whether the fitted state holds one regressor per class (else one
        multi-output regressor; there are at least two classes)."""
        return len(self.estimators_) == self.classes_.shape[0]

    def _n_buffered(self) -> int:
        return sum(entry[1].shape[0] for entry in self._buffer)

    def _check_structure(self) -> None:
        """``per_class`` cannot change mid-stream (the regressors are fitted)."""
        if "estimators_" in self.__dict__ and self._per_class_fitted() != bool(
            self.per_class
        ):
            raise ValueError(
                f"per_class={self.per_class} differs from the setting the "
                f"learner was fitted with ({len(self.estimators_)} regressor(s) "
                f"for {self.classes_.shape[0]} classes); call fit, or "
                "partial_fit on a new learner, to change it."
            )

    def _flush(self) -> None:
        """The regressors learn the buffered rounds (one ``partial_fit`` per
        regressor that has rows)."""
        buffer = self._buffer
        if not buffer:
            return
        self._before_update()
        Xs = [entry[0] for entry in buffer]
        sparse = any(sp.issparse(rows) for rows in Xs)
        X = sp.vstack(Xs, format="csr") if sparse else np.vstack(Xs)
        actions = np.concatenate([entry[1] for entry in buffer])
        # the regressors model the reward's offset from initial_reward
        rewards = np.concatenate([entry[2] for entry in buffer])
        rewards -= float(self.initial_reward)
        if self.per_class:
            for a in np.unique(actions):
                mask = actions == a
                self.estimators_[a].partial_fit(X[mask], rewards[mask])
                self.n_updates_[a] += int(np.count_nonzero(mask))
        else:
            # the play-time outputs: zero residual on the classes not played
            Y = np.concatenate([entry[3] for entry in buffer])
            Y[np.arange(Y.shape[0]), actions] = rewards
            try:
                self.estimators_[0].partial_fit(X, Y)
            except ValueError as exc:
                raise ValueError(
                    f"{type(self).__name__}(per_class=False) needs a regressor "
                    "whose partial_fit accepts a 2-D target (one output per "
                    f"class); {type(self.estimators_[0]).__name__} refused it "
                    f"({exc}). Use per_class=True."
                ) from exc
            self.n_updates_ += np.bincount(actions, minlength=self.n_updates_.shape[0])
        self._buffer = []


class _ModelCopies:
    """Deep copies of the regressors, for the state protocol: two are equal
    when every attribute of every regressor is (recursively; arrays bitwise,
    generators by state). A pickle is not a comparable copy: its bytes change
    with a round trip."""

    __slots__ = ("models",)
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, models) -> None:
        self.models = copy.deepcopy(models)

    def __eq__(self, other) -> bool:
        return isinstance(other, _ModelCopies) and _same(self.models, other.models)

    def __repr__(self) -> str:
        return f"_ModelCopies({self.models!r})"


def _same(a, b) -> bool:
    """Structural equality of two objects' contents (``_ModelCopies``)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[key], b[key]) for key in a)
    if isinstance(a, np.random.RandomState):
        return _same(a.get_state(legacy=False), b.get_state(legacy=False))
    if isinstance(a, np.random.Generator):
        return _same(a.bit_generator.state, b.bit_generator.state)
    if hasattr(a, "__dict__") and not isinstance(a, type):
        return _same(vars(a), vars(b))
    return bool(a == b) or (a != a and b != b)  # (NaN equals NaN here)
