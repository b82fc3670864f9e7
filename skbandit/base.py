"""The estimator skeleton shared by every skbandit learner.

``BaseBanditClassifier`` owns everything that is not the algorithm:
parameter and input validation, label encoding, the first-call rule of
``partial_fit``, the random generator, passes over the data, bookkeeping of
mistakes, the feedback log, and the failure guarantee. A learner subclass adds
its parameters, declares its state (``_state_attrs``, created by
``_init_state``), says how it scores rows (``_score_rows``) and which compiled
kernel plays one round (``_make_kernel``); the per-row loop runs in
``skbandit._core._drivers.run_pass``. ``LinearBanditClassifier`` provides the
state and scoring of learners whose scores are ``W x``.

The skeleton is composed of one mixin per responsibility, each in its module
of the private package ``skbandit._base`` (its docstring has the module map;
the contracts are stated in the modules: the state protocol in ``_state``, the
failure guarantee in ``_transaction``, the input form in ``_validation`` and
``_rows``). The method resolution order is ``BaseBanditClassifier``,
``ClassifierMixin``, ``ScoringMixin``, ``ActingMixin``, ``TrainingMixin``,
``TransactionMixin``, ``StateMixin``, ``InputValidationMixin``,
``BaseEstimator``: the mixins define disjoint sets of names (none overrides
another), so their order matters only for ``__getstate__``
(``TransactionMixin``'s, before ``BaseEstimator``'s, which it extends).
"""

from __future__ import annotations

from abc import ABCMeta, abstractmethod
from numbers import Integral
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.extmath import safe_sparse_dot

from skbandit._base._acting import ActingMixin

# Re-exported (``as``) for the learners' modules and the evaluation, which import
# _kernel_arrays, _caller_stacklevel and _COUNTERS from here.
from skbandit._base._rows import _kernel_arrays as _kernel_arrays
from skbandit._base._scoring import ScoringMixin
from skbandit._base._stacklevel import _caller_stacklevel as _caller_stacklevel
from skbandit._base._state import _COUNTERS as _COUNTERS
from skbandit._base._state import StateMixin
from skbandit._base._training import TrainingMixin
from skbandit._base._transaction import TransactionMixin
from skbandit._base._validation import InputValidationMixin

if TYPE_CHECKING:
    from skbandit._typing import RandomStateLike

__all__ = ["BaseBanditClassifier", "LinearBanditClassifier"]


class BaseBanditClassifier(
    ClassifierMixin,
    ScoringMixin,
    ActingMixin,
    TrainingMixin,
    TransactionMixin,
    StateMixin,
    InputValidationMixin,
    BaseEstimator,
    metaclass=ABCMeta,
):
    """Base class of online multiclass learners with bandit feedback.

    Subclasses declare ``_state_attrs`` and implement ``_init_state``,
    ``_make_kernel`` and ``_score_rows``; ``LinearBanditClassifier`` does all
    but the kernel for learners whose scores are ``W x``. Whether a learner
    sees the true label (a full-information baseline) is decided by its kernel
    (``full_information``), nowhere else.

    Protocol of one round: the kernel scores the row, plays an action drawn
    from its distribution using the round's first uniform (ties of the greedy
    argmax use the second), and learns only from ``reward = 1[action == y]``.
    """

    _parameter_constraints: dict = {
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
    }

    # Fitted attributes holding the algorithm's state (skbandit._base._state).
    _state_attrs: tuple[str, ...] = ()

    # True when the kernel's ``compute_scores`` reads the state and writes only
    # its scores, and its ``learn`` depends on nothing but the state and the
    # round: two such learners of one class with equal parameters (but
    # ``exploration``) and equal state score every row alike, and an
    # ``OnlineSelector`` computes their scores once (``_score_twins``).
    _pure_scores: bool = False

    # Learning from logged feedback (docs/logged.md). Which rewards the
    # algorithm's update assumes: "binary" (0 or 1, the papers' bit
    # 1[action == label]) or "unit" (any real value in [0, 1]).
    _logged_rewards: str = "binary"
    # False for a learner whose analysis needs its own (on-policy) data: it
    # warns (OffPolicyWarning) when a logged round was not drawn by its policy.
    _off_policy_ok: bool = True

    def __init__(
        self,
        *,
        max_iter: int = 5,
        shuffle: bool = True,
        random_state: RandomStateLike = None,
    ) -> None:
        self.max_iter = max_iter
        self.shuffle = shuffle
        self.random_state = random_state

    # ---------------------------------------------------------------- hooks
    @abstractmethod
    def _init_state(self, n_features: int, n_classes: int) -> None:
        """Create the attributes named in ``_state_attrs`` for a fresh fit."""

    @abstractmethod
    def _make_kernel(self):
        """A ``BaseKernel`` wrapping the current state arrays (updated in place)."""

    def _before_block(self, kernel, n_rows: int):
        """Called before each block of ``n_rows`` rounds; returns the kernel to
        play it with (e.g. a new one after growing a buffer). Python, once per
        block: no per-round cost."""
        return kernel

    def _after_block(self, kernel) -> None:
        """Called after each block has been played, before it is committed (e.g.
        to project weights or check a capacity). Raising rolls the block back."""

    #: Whether ``_before_block`` is settled by one call while the parameters
    #: are fixed: it does work (rebinds an attribute, returns a new kernel)
    #: only after a change of the parameters, so that a second call with the
    #: same parameters returns its kernel and changes nothing. A
    #: ``LiveSession``, which locks the parameters, then runs it on its first
    #: learned round only, not around every round. Stated by the class that
    #: defines the hook (or a subclass of it); a learner that holds others
    #: settles when they all do. The skeleton's no-op settles.
    _before_block_settles: bool = True

    #: The attributes ``_before_block`` and ``_after_block`` may rebind (assign
    #: a new object to) while a ``LiveSession`` locks the parameters, besides
    #: the round counter ``t_`` of the learners it holds (which a
    #: meta-learner's hooks advance; no hook writes the other counters): a
    #: live round records only these (and its held learners') as its rollback
    #: point. A class that overrides a hook states its own; one that does not
    #: (``None`` or inherited from above its hooks) gets the whole rollback
    #: point every round (``LiveSession``).
    _hook_rebinds: tuple[str, ...] | None = ()

    @abstractmethod
    def _score_rows(self, X) -> np.ndarray:
        """Scores (n_samples, n_classes) of validated rows under the current state."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class LinearBanditClassifier(BaseBanditClassifier):
    """A learner whose state includes ``coef_`` (k x d, zero at the start) and
    whose scores are ``X @ coef_.T``; its kernel derives from ``LinearKernel``.
    ``coef_`` is stored feature-major (Fortran-ordered, ``_feature_major``):
    the kernel updates ``coef_.T``, a C-contiguous (d, k) array in which a
    feature's k weights are adjacent. A subclass may store its weights
    otherwise and override all three: ``PNewtron`` keeps ``U`` as ``Ut_``
    (d, k), its ``coef_`` is the property ``sigma U`` and its kernel a
    ``BaseKernel`` with its own scores."""

    _state_attrs: tuple[str, ...] = ("coef_",)
    _feature_major: tuple[str, ...] = ("coef_",)

    def _init_state(self, n_features, n_classes):
        self.coef_ = feature_major_zeros(n_classes, n_features)

    def _score_rows(self, X):
        return linear_scores(X, self.coef_)


def feature_major_zeros(n_rows: int, n_features: int) -> np.ndarray:
    """A zero (n_rows, n_features) weight matrix stored feature-major
    (Fortran order: ``W.T`` is the C-contiguous (d, k) array the kernels
    update; see ``LinearKernel`` in skbandit/_core/_kernel.pxd)."""
    return np.zeros((n_rows, n_features), dtype=np.float64, order="F")


def linear_scores(X, W: np.ndarray) -> np.ndarray:
    """``X @ W.T`` for a weight matrix ``W`` (k, d) of either layout.

    A dense ``X`` is multiplied by a class-major copy of ``W`` (the (d, k)
    operand ``W.T`` of a C-ordered ``W``): BLAS then takes the path, and sums
    in the order, it takes for a class-major state, whatever the state's
    layout; the copy is one pass over ``W`` against the n k d of the product.
    A sparse ``X`` is multiplied by ``W.T`` as it is (each score a sequential
    sum over the row's stored entries in either layout)."""
    if not sp.issparse(X):
        W = np.ascontiguousarray(W)
    return np.asarray(safe_sparse_dot(X, W.T, dense_output=True))
