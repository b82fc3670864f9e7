"""One-vs-all for the separable case: linear or rational-kernel Perceptrons."""

from __future__ import annotations

from numbers import Integral
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions

from skbandit._core._drivers import run_scores
from skbandit._learner_docs import learner_doc
from skbandit.base import (
    _COUNTERS,
    BaseBanditClassifier,
    _kernel_arrays,
    feature_major_zeros,
    linear_scores,
)
from skbandit.exploration import (
    ExplorationMixin,
    exploration_constraint,
    rule_values,
)
from skbandit.multiclass._separable_ova_fast import (
    SeparableLinearKernel,
    SeparableRationalKernel,
)

if TYPE_CHECKING:
    from skbandit._typing import RandomStateLike
    from skbandit.exploration import BaseExploration

__all__ = ["SeparableOneVsAll"]

# Rows of the rational-kernel learner must satisfy ||x||^2 <= 1 + _NORM_SLACK:
# the slack admits rows normalised to norm 1 with a rounding error.
_NORM_SLACK = 1e-9


class _WorkLender:
    """Lends the rational kernel's length-``d`` work vector (all zeros between
    rounds: each round clears the entries it scattered) from one training call
    to the next, so that a call does not allocate one. Only kernels made
    during a training call (``training`` > 0) borrow it, one at a time
    (``list.pop`` under the GIL); a prediction's kernel allocates its own and
    changes nothing here. Compares by identity; not pickled."""

    __slots__ = ("training", "vectors")

    def __init__(self) -> None:
        self.training = 0
        self.vectors: list[np.ndarray] = []

    def take(self, d: int) -> np.ndarray | None:
        try:
            vector = self.vectors.pop()
        except IndexError:
            return None
        return vector if vector.shape[0] == d else None

    def give(self, vector: np.ndarray) -> None:
        vectors = self.vectors
        if len(vectors) != 1 or vectors[0] is not vector:  # (kept: no new list)
            vectors[:] = [vector]


@learner_doc
class SeparableOneVsAll(ExplorationMixin, BaseBanditClassifier):
    r"""One-vs-all Perceptrons for linearly separable bandit streams.

    One binary online learner ``A_i`` per class answers "is x in class i?"
    with ``f_i(x) >= 0``. Each round, with ``S = {i : f_i(x) >= 0}``:

    * ``S`` non-empty: play ``ŷ = argmax_i f_i(x)`` (the highest score in
      ``S``, exact ties at random). If wrong, ``A_ŷ`` learns ``(x, NO)``.
    * ``S`` empty: play ``ŷ`` uniformly over the ``k`` classes. If right,
      ``A_ŷ`` learns ``(x, YES)``.

    Equivalently the played learner learns ``(x, YES)`` if the action was
    right and ``(x, NO)`` otherwise, and each binary learner is a Perceptron
    that changes only on its own mistakes. The distribution of a round is
    ``p = e_ŷ`` if ``max_i f_i(x) >= 0`` else ``p = 1/k`` (its exploration
    rule, ``Conservative()``), which ``exploration_distribution`` returns.

    Binary learners:

    * ``kernel=None``: ``f_i(x) = w_i . x`` and a mistake adds ``±x`` to ``w_i``
      (state ``coef_``). On strongly separable data (margin ``γ``, radius
      ``R``) the expected number of mistakes is at most
      ``(k - 1) ⌊4 (R/γ)^2⌋``, whatever the horizon.
    * ``kernel="rational"``: kernel Perceptrons with the rational kernel

      .. math:: k(x, x') = \frac{1}{1 - \tfrac12 \langle x, x' \rangle},

      which needs ``||x|| <= 1`` (a row with ``||x||^2 > 1 + 1e-9`` is
      refused: rescale, e.g. ``[x, 1] / sqrt(2)`` after dividing ``x`` by the
      largest row norm, as the paper does). A mistake adds ``x`` to the shared
      support set with coefficient ``±1`` for that learner:
      ``f_i(x) = sum_j dual_coef_[j, i] k(support_vectors_[j], x)``. On weakly
      separable data the mistake bound does not depend on ``T``.

    Storage and costs of the kernel learner: support vectors are stored
    sparsely, as their non-zero entries (value and column index; a CSR store
    that grows with the support set by doubling), so memory is
    ``O(nnz of the support set + n_support · k + d)`` whatever the number of
    columns. A round scatters ``x`` into a ``d``-length work vector once (zeroed
    again after the round; allocated once and kept between training calls, not
    pickled), then computes each ``<v_j, x>`` over ``v_j``'s own entries:
    ``O(nnz(x) + sum_j nnz(v_j))``. The store is a ring: with a ``budget``,
    evicting the oldest vector is ``O(1)`` and adding one ``O(nnz(x) + k)``;
    nothing is shifted. The store is kept across training calls (it is the
    cached kernel's): a call costs its rows' rounds, not a copy of the support
    set; the CSR attributes below are exported from it when read (``O(model)``
    once, also by pickling or ``_get_state``), and a failed block is undone
    from the call's journal and a per-block checkpoint of the store.

    Logged feedback (``partial_fit(X, LoggedFeedback(...))``, see
    ``docs/logged.md``): the update uses no probability: a rewarded logged
    action is the label, an unrewarded one is not, whatever policy chose it;
    the mistake bounds are for the learner's own predictions. Rewards must be
    0 or 1.

    Parameters
    ----------
    kernel : {None, "rational"}, default=None
        The binary learners: linear Perceptrons or rational-kernel Perceptrons.
    update_scope : {"played", "all"}, default="played"
        Which binary learners a round updates. ``"played"``: only the played
        class's learner (the analysed algorithm). ``"all"``: also every other
        learner on right rounds, where the label is known, like a
        full-information Perceptron (``A_i`` learns ``(x, NO)`` for
        ``i ≠ y``), as the authors' released code does.
    budget : int or None, default=None
        Only with ``kernel="rational"``: the largest number of support
        vectors. When a mistake would exceed it, the **oldest** support vector
        is removed first (first in, first out). ``None``: unbounded.
    large_norm : {"raise", "project"}, default="raise"
        Only with ``kernel="rational"``: what to do with a row with
        ``||x||^2 > 1 + 1e-9``. ``"raise"``: refuse the call (``ValueError``,
        the learner unchanged). ``"project"``: the kernel uses ``x / ||x||``
        for every row with ``||x|| > 1`` (training and prediction alike): rows are
        projected onto the unit ball; support vectors are stored projected.
    exploration : str, exploration rule or None, default=None
        How a round's scores become the distribution played
        (:mod:`skbandit.exploration`). ``None``: the paper's rule above,
        ``Conservative(threshold=0.0)``; a rule's name or object: that rule
        (``None`` parameters take the rule's own fallbacks). Every rule is
        accepted: the played learner learns ``(x, YES)`` or ``(x, NO)``
        whatever the rule, but the mistake bounds are the paper rule's.
    {passes}
    random_state : int, RandomState instance or None, default=None
        Seeds the learner's generator: two uniforms per round (the uniform
        draw when ``S`` is empty, and argmax ties).

    Attributes
    ----------
    {classes}
    coef_ : ndarray of shape (n_classes, n_features)
        ``kernel=None`` only: the Perceptrons' weights, one row per class.
    support_vectors_ : scipy.sparse.csr_matrix of shape (n_support, n_features)
        ``kernel="rational"`` only: the support set, oldest first (a new matrix
        built from the stored entries at each access).
    dual_coef_ : ndarray of shape (n_support, n_classes)
        ``kernel="rational"`` only: coefficient (-1, 0 or +1) of each support
        vector in each class's learner.
    {label_rounds}

    See Also
    --------
    ConservativeOneVsAll : One-vs-all Passive-Aggressive learners.
    Banditron : Linear bandit learner with epsilon-greedy exploration.

    Notes
    -----
    Learners that do not change state after a mistake ("ignorant" learners)
    make ``Ω(min(√T, 2^Ω(d)))`` mistakes even on strongly separable data; this
    one changes state on every mistake of a played learner.

    References
    ----------
    .. [1] A. Beygelzimer, D. Pál, B. Szörényi, D. Thiruvenkatachari, C.-Y. Wei
       and C. Zhang, "Bandit multiclass linear classification: efficient
       algorithms for the separable case", ICML 2019.

    Examples
    --------
    >>> from skbandit import SeparableOneVsAll
    >>> from skbandit.datasets import make_separable_stream
    >>> X, y = make_separable_stream(20_000, strong=True, random_state=0)
    >>> clf = SeparableOneVsAll(random_state=0)
    >>> clf = clf.partial_fit(X, y, classes=[0, 1, 2])
    >>> print(clf.n_mistakes_ < 500, clf.coef_.shape)
    True (3, 3)
    >>> kernel = SeparableOneVsAll(kernel="rational", random_state=0)
    >>> kernel = kernel.partial_fit(X[:2000], y[:2000], classes=[0, 1, 2])
    >>> print(kernel.support_vectors_.shape[0] == kernel.dual_coef_.shape[0])
    True
    """

    _parameter_constraints: dict = {
        **BaseBanditClassifier._parameter_constraints,
        "kernel": [None, StrOptions({"rational"})],
        "update_scope": [StrOptions({"played", "all"})],
        "budget": [None, Interval(Integral, 1, None, closed="left")],
        "large_norm": [StrOptions({"raise", "project"})],
        "exploration": exploration_constraint(),
    }

    _default_exploration = "conservative"
    _exploration_values = rule_values()

    def __init__(
        self,
        *,
        kernel: str | None = None,
        update_scope: str = "played",
        budget: int | None = None,
        large_norm: str = "raise",
        exploration: str | BaseExploration | None = None,
        max_iter: int = 5,
        shuffle: bool = True,
        random_state: RandomStateLike = None,
    ) -> None:
        super().__init__(max_iter=max_iter, shuffle=shuffle, random_state=random_state)
        self.kernel = kernel
        self.update_scope = update_scope
        self.budget = budget
        self.large_norm = large_norm
        self.exploration = exploration

    # The declared state of the rational-kernel learner: the support set in CSR
    # form (values, column indices, row pointers; oldest vector first) and its
    # coefficients.
    _SUPPORT_STATE = ("_sv_data", "_sv_indices", "_sv_indptr", "dual_coef_")
    # the linear learner's weights, stored feature-major (Fortran order)
    _feature_major = ("coef_",)

    @property
    def _state_attrs(self) -> tuple[str, ...]:  # type: ignore[override]  # a computed _state_attrs over base.py's class attribute (read only, by design)
        # The fitted state decides (the parameter may have been changed since).
        if "coef_" in self.__dict__:
            return ("coef_",)
        if (
            "_sv_indptr" in self.__dict__
            or "_sv_live" in self.__dict__
            or self.kernel is not None
        ):
            return self._SUPPORT_STATE
        return ("coef_",)

    # The support set between calls: after a training block the
    # kernel's store is the state (``_sv_live``, the cached kernel) and the
    # CSR attributes are not kept up to date; reading one of them (directly,
    # through ``support_vectors_``, ``_get_state``, pickling or copying)
    # exports the store, O(model), and the next training call plays on a
    # kernel built from the exported arrays (which a caller may have edited).
    # A call thus costs the rows it plays, not a copy of the support set.
    def __getattr__(self, name):
        if name in SeparableOneVsAll._SUPPORT_STATE:
            live = self.__dict__.get("_sv_live")
            if live is not None:
                self._export_support()
                return self.__dict__[name]
        raise AttributeError(
            f"{type(self).__name__!r} object has no attribute {name!r}"
        )

    def _export_support(self) -> None:
        """Write the live store into the CSR attributes (those not set)."""
        live = self.__dict__.pop("_sv_live", None)
        if live is None:
            return
        for name, value in zip(self._SUPPORT_STATE, live.support_arrays(), strict=True):
            self.__dict__.setdefault(name, value)

    def _init_state(self, n_features, n_classes):
        for name in ("coef_", "_sv_live", *self._SUPPORT_STATE):
            self.__dict__.pop(name, None)
        if self.kernel is None:
            self.coef_ = feature_major_zeros(n_classes, n_features)
        else:
            self._sv_data = np.zeros(0, dtype=np.float64)
            self._sv_indices = np.zeros(0, dtype=np.int32)
            self._sv_indptr = np.zeros(1, dtype=np.int64)
            self.dual_coef_ = np.zeros((0, n_classes), dtype=np.float64)

    @property
    def support_vectors_(self) -> sp.csr_matrix:
        """The support set, oldest first: a new CSR matrix (n_support, n_features)."""
        if "_sv_indptr" not in self.__dict__ and "_sv_live" not in self.__dict__:
            raise AttributeError(
                f"{type(self).__name__} has no support_vectors_: it is fitted "
                "with kernel='rational' only."
            )
        n_support = self._sv_indptr.shape[0] - 1
        return sp.csr_matrix(
            (self._sv_data.copy(), self._sv_indices.copy(), self._sv_indptr.copy()),
            shape=(n_support, self.n_features_in_),
        )

    def _check_state_matches_kernel(self):
        expected = "coef_" if self.kernel is None else "_sv_indptr"
        if expected not in self._state_attrs:
            raise ValueError(
                f"kernel={self.kernel!r} was changed after fitting; call fit to "
                "start again with the new kernel."
            )

    def _make_kernel(self):
        kernel = self._play_kernel()
        kernel.set_explorer(self._explorer(self.classes_.shape[0]))
        return kernel

    def _play_kernel(self):
        """The kernel of the fitted variant (the live store of the rational
        kernel), before its exploration rule is set."""
        self._check_state_matches_kernel()
        full = self.update_scope == "all"
        if self.kernel is None:
            return SeparableLinearKernel(self.coef_.T, full)
        project = self.large_norm == "project"
        budget = 0 if self.budget is None else self.budget
        live = self.__dict__.get("_sv_live")
        if live is not None:
            # the store is the state: play on it (with the current parameters)
            live.configure(full, project, budget)
            return live
        # Copies the committed support set into a new store. During a training
        # call the length-d work vector is the one the last training kernel
        # handed back (``_WorkLender``); otherwise the kernel allocates.
        lender = self.__dict__.get("_work_lender")
        work = None
        if lender is not None and lender.training:
            work = lender.take(max(self.n_features_in_, 1))
        return SeparableRationalKernel(
            self._sv_data,
            self._sv_indices,
            self._sv_indptr,
            self.dual_coef_,
            self.n_features_in_,
            full,
            project,
            budget,
            work,
        )

    def _own_state_arrays(self) -> None:
        if "_sv_live" not in self.__dict__:  # (exporting would cost O(model))
            super()._own_state_arrays()

    def _model_bytes(self) -> int:
        live = self.__dict__.get("_sv_live")
        if live is None:
            return super()._model_bytes()
        # the CSR form of the store: values, indices, row pointers, coefficients
        return int(
            12 * live.n_entries + 8 * (live.n_sv + 1) + 8 * live.n_sv * live.n_classes
        )

    def _rollback_point(self, rng: bool = True):
        # a new block: the last one's checkpoint (``_before_block``) is stale
        self._forget_block()
        if self.kernel is None or "_sv_live" not in self.__dict__:
            point = super()._rollback_point(rng)
        else:
            # the live store is checkpointed in ``_before_block``, not exported
            # (a loop, no comprehension: a one-row call makes this record
            # every round, and a comprehension is a new function object)
            d = self.__dict__
            state = {"_sv_live": d["_sv_live"]}
            for name in _COUNTERS:
                state[name] = d[name]
            if rng:
                state["_rng"] = self._rng.bit_generator.state
            point = (state, ())
        return point

    def _restore_point(self, point) -> None:
        # after the journal's undo: the block's store back to its checkpoint
        block = self._forget_block()
        if block is not None:
            block.restore()
        state, _ = point
        if self.kernel is not None or "_sv_indptr" in state:
            if "_sv_live" in state:
                for name in self._SUPPORT_STATE:
                    self.__dict__.pop(name, None)
            else:
                self.__dict__.pop("_sv_live", None)
        super()._restore_point(point)

    def _forget_block(self):
        """The store checkpointed for the current block (``_before_block``),
        or None, and forget it. ``_sv_block`` is set to None, not deleted,
        so that a call per row does not add and delete an entry of the
        instance dictionary (whose table Python then grows again every few
        calls); it is not pickled."""
        block = self.__dict__.get("_sv_block")
        if block is not None:
            self._sv_block = None
        return block

    def _before_block(self, kernel, n_rows):
        if self.kernel is None:
            return kernel
        kernel.checkpoint()
        self._sv_block = kernel
        if self.budget is not None:
            # the budget may have been lowered between calls: keep the newest
            kernel.trim(self.budget)
        return kernel

    def _after_block(self, kernel):
        if self.kernel is None:
            return
        # the kernel's store is now the state (exported on access)
        for name in self._SUPPORT_STATE:
            self.__dict__.pop(name, None)
        self._sv_live = kernel
        # zeros again after every round: a kernel built later reuses it
        lender = self.__dict__.get("_work_lender")
        if lender is not None:
            lender.give(kernel.work_buffer())

    def _set_state(self, state: dict) -> None:
        if "_sv_indptr" in state:
            self.__dict__.pop("_sv_live", None)
        super()._set_state(state)

    def _play_blocks(self, X, rows, play, logged=False):
        # (the arguments spelt out: no tuple and dictionary packed per call)
        if self.kernel is None:
            return super()._play_blocks(X, rows, play, logged)
        lender = self.__dict__.get("_work_lender")
        if lender is None:
            lender = self._work_lender = _WorkLender()
        lender.training += 1
        try:
            return super()._play_blocks(X, rows, play, logged)
        finally:
            lender.training -= 1
            self._forget_block()

    def __getstate__(self):
        # the store is exported; the work vector is scratch (zeros), not
        # state: not pickled or copied
        self._export_support()
        state = super().__getstate__()
        state.pop("_work_lender", None)
        state.pop("_sv_block", None)
        return state

    def _raise_kernel_status(self, kernel, X, status=None, **where):
        error = getattr(kernel, "error", None)
        if status is None and error is not None:
            raise MemoryError(
                f"{type(self).__name__}: the support set could not grow "
                f"({type(error).__name__}: {error}); the learner is left as after "
                "its last finished block of rows. A budget bounds its size."
            ) from error
        super()._raise_kernel_status(kernel, X, status, **where)

    def _check_rows(self, X):
        if self.kernel == "rational" and self.large_norm == "raise" and X.shape[0]:
            if X.shape[0] == 1:
                # one row (the live loop's): its squared norm without the
                # temporary matrices below (the values of a canonical CSR row
                # are its non-zero entries, each column once)
                x = X.data if sp.issparse(X) else X
                if not np.vdot(x, x) > 1.0 + _NORM_SLACK:
                    return
            if sp.issparse(X):
                sq = np.asarray(X.multiply(X).sum(axis=1)).ravel()
            else:
                sq = np.einsum("ij,ij->i", X, X)
            bad = np.flatnonzero(sq > 1.0 + _NORM_SLACK)
            if bad.size:
                i = int(bad[0])
                raise ValueError(
                    f"kernel='rational' needs rows with norm at most 1 (the kernel "
                    f"1 / (1 - <x, x'> / 2) is defined for them); {bad.size} "
                    f"row(s) exceed it, the first is row {i} with norm "
                    f"{np.sqrt(sq[i]):.4g}. Rescale the rows, e.g. divide X by "
                    "its largest row norm and append a constant feature: "
                    "[x, 1] / sqrt(2), as Beygelzimer et al. (2019) do; or pass "
                    "large_norm='project' to use x / ||x|| for such rows."
                )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Built for separable streams: it learns only from the played class's
        # learner and explores uniformly while no score is >= 0, so five passes
        # over scikit-learn's non-separable blobs (no bias feature) reach an
        # accuracy of about 0.66-0.87, below the check's 0.83.
        tags.classifier_tags.poor_score = True
        return tags

    def _score_rows(self, X):
        if self.kernel is None:
            return linear_scores(X, self.coef_)
        self._own_state_arrays()
        kernel = self._make_kernel()  # the live store, read only, if any
        out = np.empty((X.shape[0], self.classes_.shape[0]), dtype=np.float64)
        data, indices, indptr, dense = _kernel_arrays(X)
        run_scores(kernel, data, indices, indptr, dense, self.t_ + 1, out)
        return out
