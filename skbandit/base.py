"""The estimator skeleton shared by every skbandit learner.

``BaseBanditClassifier`` owns everything that is not the algorithm:
parameter and input validation, label encoding, the first-call rule of
``partial_fit``, the random generator, passes over the data, bookkeeping of
mistakes, the feedback log, and the failure guarantee. A learner subclass adds
its parameters, declares its state (``_state_attrs``, created by
``_init_state``), says how it scores rows (``_score_rows``) and which compiled
kernel plays one round (``_make_kernel``); the per-row loop runs in
``skbandit._core._kernel.run_pass``. ``LinearBanditClassifier`` provides the
state and scoring of learners whose scores are ``W x``.

The state protocol
------------------
A learner's mutable state is the attributes named in ``_state_attrs`` (arrays
that the kernel updates in place, or scalars), the counters ``t_``,
``n_mistakes_`` and ``n_greedy_mistakes_``, and the generator ``_rng``.
``_get_state`` copies all of it and ``_set_state`` restores it; the tests'
snapshot/compare helpers, the NumPy reference runners and OnlineSelector's
candidates use them, so a learner with other state (a diagonal, an inverse, a
support set) is covered without special cases. Training never calls them: its
rollback is the undo journal below.

The failure guarantee
---------------------
* A call that fails validation (bad input or parameters) changes nothing.
* Rows are played in blocks of at most ``_BLOCK_ROWS``. A failure or interrupt
  while a block is played (including the non-finite check below) restores the
  learner, counters, generator and feedback log to their values after the last
  finished block; if no block of the call had finished, the learner is exactly
  as before the call (a failed first call leaves it unfitted).
* Rollback costs what the block did, not the model's size. Every kernel
  records the address and old value of each state entry before it writes it,
  in an undo journal shared by all kernels of the call
  (``skbandit._core._kernel.Journal``; a selector's candidates write to the
  same one). A failed block is undone by replaying the journal backwards (bit
  for bit); the attributes themselves (arrays by reference, scalars), the
  counters and the generator are restored from a record of O(number of
  attributes) taken at the block's start. ``SOBA(covariance="full")`` does not
  journal its (kd)^2 inverse: its rank-one updates stay pending until the block
  is committed; the rational-kernel ``SeparableOneVsAll`` keeps its support set
  in its cached kernel's store across calls (exported when read), journals the
  store's writes and checkpoints its scalars per block. No learner copies
  its model for rollback beyond the copy mode below (bounded by the input a
  block reads), nor doubles its memory.
* A block whose rows are many for the model's size is rolled back by a copy
  of the state instead (``_get_state`` at its start, ``_set_state`` on a
  failure, and the whole state checked finite after it), when that copy is at
  most ``1/_COPY_RATIO`` (1/16) of the bytes of input the block reads: a batch
  call on a small model then pays less than the journal's per-entry records,
  and the copy is still bounded by the work done. One-row calls, and calls on
  large models, use the journal.
* The journal holds at most ``_journal_limit()`` entries (1/32 of the model's,
  at least 2**16) past a row boundary: the pass then ends the block early,
  after that row, and the next block starts there (the generator is set back
  to after the rows played). Blocks are thus at most ``_BLOCK_ROWS`` rows, and
  fewer on a long call whose rows write much; where they end changes nothing
  but the point a failure rolls back to.
* Before each row the pass driver reserves in the journal the entries the
  row may record (the kernel's ``journal_bound``: an upper bound from the
  row's stored entries). A journal that cannot grow (out of memory) thus
  stops the pass before the row writes anything, and the ``MemoryError`` it
  raises comes with the same rollback: no write is ever made unrecorded. The
  buffers grow from that first reservation, doubling, up to the limit plus
  one row: a call's journal is proportional to what it writes.
* After each row the state entries it wrote are checked to be finite (O(what
  the row wrote); the kernel also stops at the first row whose scores are not
  finite), so an overflow raises a ``FloatingPointError`` that suggests scaling
  the input.
* Every distribution a learner plays, logs or returns is checked to be a
  probability vector (the pass drivers check each round's, in O(k)); an
  invalid one raises a ``FloatingPointError`` naming it, with the same rollback.

Input
-----
``_validate_X`` gives every kernel one row form, on every path (``fit``,
``partial_fit``, logged feedback, ``sample_actions``, ``predict``,
``decision_function``, ``exploration_distribution``, and the lean single-row
path ``_rows_fast``): float64, finite, every ``|x_ij| <= _MAX_ABS_X``, and CSR
rows canonical (duplicate columns summed, indices sorted; the caller's matrix is
copied only when it is not canonical, never modified). A learner's own row rule
is the hook ``_check_rows``, which every path runs. ``_rows_fast`` accepts a
fitted learner's dense float64 C-ordered rows or canonical CSR rows as they are
after O(1) checks and compiled O(nnz) scans (structure, canonical order,
finiteness and magnitude in one pass over the values), without scikit-learn's
``validate_data``; with ``_validate_params_cached`` and a dictionary look-up of
the label or logged action, one round of ``sample_actions`` and
``partial_fit`` costs no per-call validation beyond that, and the compiled
kernel of the previous call is reused while the parameters and state
attributes it was built from are the same objects (``_kernel``).
"""

from __future__ import annotations

import operator
import os
import sys
import warnings
from abc import ABCMeta, abstractmethod
from numbers import Integral
from typing import TYPE_CHECKING, Self

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils._param_validation import Interval
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import (
    check_array,
    check_consistent_length,
    check_is_fitted,
    validate_data,
)

from skbandit._core._kernel import (
    DISTRIBUTION_TOL,
    Journal,
    KernelStatus,
    check_csr_canonical,
    csr_is_canonical,
    run_act,
    run_distribution,
    run_logged,
    run_pass,
    within_bound,
)
from skbandit.feedback import BanditFeedback, LoggedFeedback, OffPolicyWarning

if TYPE_CHECKING:
    from skbandit._typing import ArrayLike, MatrixLike, RandomStateLike

__all__ = ["BaseBanditClassifier", "LinearBanditClassifier"]

# Rows per call of the compiled pass driver. Uniforms are drawn per block so
# memory stays bounded on long streams; the generator yields the same stream
# of numbers whatever the block size, so results do not depend on it.
_BLOCK_ROWS = 1 << 16

# A block is rolled back by a copy of the state (not the undo journal) when
# the copy is at most 1/_COPY_RATIO of the bytes of input the block reads
# (module docstring, The failure guarantee).
_COPY_RATIO = 16

_COUNTERS = ("t_", "n_mistakes_", "n_greedy_mistakes_")

# Frames in these folders are library code, not the caller's (scikit-learn's
# too: ``_fit_context`` wraps ``fit`` and ``partial_fit``).
_LIBRARY_DIRS = tuple(
    os.path.dirname(os.path.abspath(m.__file__)) + os.sep  # type: ignore[type-var, operator]  # packages on disk: __file__ is a str
    for m in (sys.modules[__name__.split(".")[0]], sys.modules["sklearn"])
)


def _caller_stacklevel() -> int:
    """The ``stacklevel`` at which a warning raised by the calling function
    points at the first frame outside skbandit and scikit-learn: the user's
    line, however deep inside the library the warning is raised."""
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(
        _LIBRARY_DIRS
    ):
        frame, level = frame.f_back, level + 1
    return level


STATUS_NONFINITE = int(KernelStatus.STATUS_NONFINITE)
STATUS_INVALID_DISTRIBUTION = int(KernelStatus.STATUS_INVALID_DISTRIBUTION)
STATUS_JOURNAL_ERROR = int(KernelStatus.STATUS_JOURNAL_ERROR)

# The largest feature magnitude any learner accepts: 2**480 (about 3.1e144),
# sqrt(float64 max) / 2**32. With fewer than 2**31 columns (the kernels' 32-bit
# indices) the squared norm of a row and the dot product of two rows stay below
# 2**991, a factor 2**32 below overflow for step sizes, importance weights and
# sums. Larger values are refused by the validation (ValueError) on every path.
_MAX_ABS_X = 2.0**480


def _make_rng(random_state) -> np.random.Generator:
    """The learner's own generator, from an int, None or a RandomState."""
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(2**31 - 1))
    return np.random.default_rng(random_state)


def _check_classes(classes) -> np.ndarray:
    classes = np.unique(np.asarray(classes))
    if classes.ndim != 1 or classes.shape[0] < 2:
        n = classes.shape[0] if classes.ndim == 1 else classes.size
        raise ValueError(
            f"A bandit learner needs at least 2 classes; got {n} "
            f"class{'' if n == 1 else 'es'}: {classes.tolist()}."
        )
    return classes


def _all_finite(a: np.ndarray) -> bool:
    with np.errstate(over="ignore", invalid="ignore"):
        if np.isfinite(a.sum()):
            return True
    return bool(np.isfinite(a).all())


def _input_bytes(X, rows) -> int:
    """Bytes of the rows ``rows`` of X as the kernels read them (all rows when
    None): 8 per dense entry, 12 per stored CSR entry."""
    if not sp.issparse(X):
        return 8 * X.shape[1] * (X.shape[0] if rows is None else rows.shape[0])
    if rows is None:
        return 12 * X.nnz
    indptr = X.indptr
    return 12 * int(np.sum(indptr[rows + 1] - indptr[rows]))


class BaseBanditClassifier(ClassifierMixin, BaseEstimator, metaclass=ABCMeta):
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

    # Fitted attributes holding the algorithm's state (see the module docstring).
    _state_attrs: tuple[str, ...] = ()

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

    # --------------------------------------------------------- state protocol
    def _get_state(self) -> dict:
        """A copy of the whole mutable state: declared state, counters, generator."""
        state = {}
        for name in (*self._state_attrs, *_COUNTERS):
            value = getattr(self, name)
            state[name] = value.copy() if isinstance(value, np.ndarray) else value
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
        """Make every state array writeable and C-contiguous (a learner loaded
        read-only, e.g. memory-mapped by joblib, gets private copies)."""
        for name in self._state_attrs:
            value = getattr(self, name)
            if isinstance(value, np.ndarray) and not (
                value.flags.writeable and value.flags.c_contiguous
            ):
                setattr(self, name, np.array(value, order="C", copy=True))

    # ------------------------------------------------------------ validation
    def _validate_X(self, X, *, reset: bool):
        """Validated rows: float64, C-ordered or canonical CSR, finite, within
        the magnitude bound (module docstring, Input). A learner adding checks
        overrides this and calls it first."""
        original, checked, canonical = X, None, None
        if sp.issparse(X):
            canonical = _check_sparse_structure(X)
            checked = getattr(X, "indices", None)
        X = validate_data(
            self,
            X,
            reset=reset,
            accept_sparse="csr",
            accept_large_sparse=True,
            dtype=np.float64,
            order="C",
            # NaN and infinities: refused by _check_magnitude's bound (with
            # scikit-learn's messages), one scan of the values instead of two
            ensure_all_finite=False,
        )
        if sp.issparse(X):
            if X.indices is not checked:
                # A conversion from another format produced new CSR arrays.
                canonical = _check_sparse_structure(X)
            X = _canonical_csr(self, X, original, canonical)
        _check_magnitude(self, X)
        self._check_rows(X)
        return X

    def _check_rows(self, X) -> None:
        """A learner's own checks of rows already in the common form (float64,
        C-ordered or canonical CSR, finite, within the magnitude bound); raise
        ``ValueError`` to refuse them. Run on every path, the lean single-row
        path (``_rows_fast``) included; the default accepts every row. A
        learner adds checks here rather than by overriding ``_validate_X``
        (an override is not run by the lean path, which then falls back to the
        full validation on every call)."""

    def _validate_fit_input(self, X, y, *, reset: bool):
        # Plain labels are wrapped in a feedback object whose log nobody reads:
        # it is not kept.
        record = isinstance(y, BanditFeedback)
        feedback = y if record else BanditFeedback(y)
        X = self._validate_X(X, reset=reset)
        check_consistent_length(X, feedback)
        return X, feedback, record

    # ------------------------------------------------------------- training
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: MatrixLike, y: ArrayLike | BanditFeedback) -> Self:
        """Learn from scratch: ``max_iter`` passes over (X, y) with bandit feedback.

        The classes are the distinct labels of ``y``. Each pass visits the rows
        in a random order when ``shuffle=True``, else in the given order.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training rows.
        y : array-like of shape (n_samples,), BanditFeedback or LoggedFeedback
            True labels, seen by the learner only through the reward bit; or
            logged feedback, learned instead of the learner's own plays (the
            classes are then the distinct logged actions).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        return self._transaction(self._fit, X, y)

    def _fit(self, X, y):
        if isinstance(y, LoggedFeedback):
            return self._fit_logged(X, y)
        X, feedback, record = self._validate_fit_input(X, y, reset=True)
        classes = _check_classes(feedback._labels_for_classes())
        codes = feedback._encode(classes)
        # Everything is validated: start the new state.
        self._reset(classes, X.shape[1])
        # passes finished (a pass that fails leaves the count of those before it)
        self.n_iter_ = 0
        n = X.shape[0]
        for _ in range(self.max_iter):
            if self.shuffle:
                rows = self._rng.permutation(n).astype(np.int32)
            else:
                rows = np.arange(n, dtype=np.int32)
            self._play(X, codes, rows, feedback, record)
            self.n_iter_ += 1
        return self

    def partial_fit(
        self,
        X: MatrixLike,
        y: ArrayLike | BanditFeedback,
        classes: ArrayLike | None = None,
    ) -> Self:
        """One pass over the rows of X, in order, with bandit feedback.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows of the stream, played in order.
        y : array-like of shape (n_samples,), BanditFeedback or LoggedFeedback
            True labels, seen by the learner only through the reward bit; or
            logged feedback (actions, rewards, propensities), from which the
            learner learns instead of playing its own actions (see
            ``sample_actions`` and ``docs/logged.md``). On a fitted learner,
            with a ``LoggedFeedback`` or one plain label (a list or 1-D array),
            a float64 C-ordered NumPy ``X`` or a canonical CSR ``X`` takes the
            lean single-row path (a few checks and one compiled scan instead
            of scikit-learn's full validation; the same errors for bad input,
            the same play).
        classes : array-like of shape (n_classes,), default=None
            All classes of the stream. Required on the first call, and must be
            the same (or omitted) on later calls.

        Returns
        -------
        self : object
            The updated estimator.
        """
        if type(y) is LoggedFeedback:
            # Logged feedback validates its own parameters and input (the fast
            # single-row path skips scikit-learn's per-call context).
            return self._transaction(self._partial_fit_logged, X, y, classes)
        code = self._lean_label_code(y) if "classes_" in self.__dict__ else None
        if code is not None:
            # One known plain label on a fitted learner (the simulator's
            # one-row call): the lean path.
            return self._transaction(self._partial_fit_lean, X, y, code, classes)
        return self._partial_fit_labels(X, y, classes)

    def _lean_label_code(self, y):
        """The code of ``y`` when it is one plain label of ``classes_`` (a list
        or 1-D array of length 1), else None (the full path then validates it
        and raises the usual errors)."""
        if type(y) is list or (type(y) is np.ndarray and y.ndim == 1):
            if len(y) == 1:
                return self._scalar_code(y[0], self.classes_)
        return None

    def _partial_fit_lean(self, X, y, code, classes):
        """``partial_fit`` of a fitted learner on one known label, without
        scikit-learn's per-call machinery: the parameters are re-validated
        only when one was replaced, the row goes through ``_rows_fast``, the
        label was looked up by ``_lean_label_code``. Same play as the full
        path (``_partial_fit``)."""
        self._validate_params_cached()
        if classes is not None:
            self._check_same_classes(classes, "the first call to partial_fit")
        X = self._rows_fast(X)
        check_consistent_length(X, y)
        self.n_iter_ = 0
        self._play(X, np.array([code], dtype=np.int32), _ONE_ROW, None, False)
        self.n_iter_ = 1
        return self

    def _check_same_classes(self, classes, where: str) -> np.ndarray:
        """``classes`` passed again after the first call: they must be
        ``classes_``."""
        new_classes = _check_classes(classes)
        if not np.array_equal(new_classes, self.classes_):
            raise ValueError(
                f"classes={new_classes.tolist()} is not the same as on "
                f"{where}, was: {self.classes_.tolist()}"
            )
        return new_classes

    def _partial_fit_labels(self, X, y, classes):
        return self._transaction(self._partial_fit, X, y, classes)

    # scikit-learn's _fit_context skips parameter validation for a fitted learner
    # only in a method named partial_fit (_partial_fit re-validates them anyway).
    _partial_fit_labels.__name__ = "partial_fit"
    _partial_fit_labels = _fit_context(prefer_skip_nested_validation=True)(
        _partial_fit_labels
    )

    def _partial_fit(self, X, y, classes):
        if isinstance(y, LoggedFeedback):
            return self._partial_fit_logged(X, y, classes)
        first_call = not hasattr(self, "classes_")
        if not first_call:
            # _fit_context validates the parameters of an unfitted learner only;
            # a parameter changed mid-stream must be checked too.
            self._validate_params()
        if first_call:
            if classes is None:
                raise ValueError(
                    "classes must be passed on the first call to partial_fit "
                    "(the learner must know every possible action up front)."
                )
            new_classes = _check_classes(classes)
        elif classes is not None:
            self._check_same_classes(classes, "the first call to partial_fit")
        X, feedback, record = self._validate_fit_input(X, y, reset=first_call)
        codes = feedback._encode(new_classes if first_call else self.classes_)
        if first_call:
            self._reset(new_classes, X.shape[1])
        self.n_iter_ = 0
        self._play(X, codes, np.arange(X.shape[0], dtype=np.int32), feedback, record)
        self.n_iter_ = 1
        return self

    def _transaction(self, method, *args):
        """Run ``method`` under the failure guarantee (module docstring).

        ``_play`` rolls a failed block back and counts finished blocks in
        ``_blocks_done``; if none finished, every attribute is restored here
        (this undoes what validation records on a first call, such as
        ``n_features_in_``, and a ``fit`` that had replaced the state).
        """
        saved = dict(self.__dict__)
        self._blocks_done = 0
        try:
            return method(*args)
        except BaseException:
            if self._blocks_done == 0:
                self.__dict__.clear()
                self.__dict__.update(saved)
            # the cached kernel may hold values derived from writes the journal
            # undid (``_kernel``): the next call builds a new one
            self.__dict__.pop("_kernel_cache", None)
            raise
        finally:
            self.__dict__.pop("_blocks_done", None)

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

    def _play(self, X, codes, rows, feedback, record) -> None:
        """Play ``rows`` of X in order, block by block; update state, counters
        and (when ``record``) the feedback log. A failed block is rolled back."""
        data, indices, indptr, dense = _kernel_arrays(X)

        def run(kernel, block, uniforms):
            n = block.shape[0]
            out = (
                np.empty(n, dtype=np.int32),  # played
                np.empty(n, dtype=np.int32),  # greedy
                np.empty(n, dtype=np.float64),  # rewards
                np.empty(n, dtype=np.float64),  # propensities
            )
            done = run_pass(
                kernel, data, indices, indptr, dense, block, codes, uniforms,
                self.t_, *out,
            )  # fmt: skip
            return done, out

        def commit(block, out):
            n = block.shape[0]
            played, greedy, rewards, propensities = (a[:n] for a in out)
            self.t_ += n
            self.n_mistakes_ += int(n - np.count_nonzero(rewards))
            # Bookkeeping for evaluation only (the greedy action's mistakes);
            # the learner's state never depends on it.
            self.n_greedy_mistakes_ += int(np.count_nonzero(greedy != codes[block]))
            if record:
                feedback._record(block, played, rewards, propensities, self.classes_)

        mark = [0]

        def begin():
            mark[0] = feedback._log_mark() if record else 0

        def rollback():
            if record:
                feedback._truncate_log(mark[0])

        self._play_blocks(X, rows, run, commit, begin, rollback)

    def _play_blocks(self, X, rows, run, commit, begin, rollback, logged=False):
        """The block loop of every training pass, under the failure guarantee
        (module docstring).

        For each block of at most ``_BLOCK_ROWS`` rounds: ``begin()``, draw the
        uniforms, ``run(kernel, block, uniforms) -> (done, outputs)`` plays it
        with the call's undo journal attached to the kernel, then
        ``_after_block`` and ``commit(block, outputs)`` (counters, log) for the
        ``done`` rounds played, and the journal is committed. A kernel that
        stops early with status 0 (its journal reached its limit) ends a
        shorter block: the generator is set back to after that block's draws.
        On any failure the journal is replayed backwards (the kernels' writes
        undone), the attributes, counters and generator are set back to the
        block's start, then ``rollback()`` (e.g. truncate the log). Per block
        this costs O(entries written + k); in the copy mode (module docstring)
        O(model), at most 1/_COPY_RATIO of the block's input.
        """
        kernel, model_bytes = self._kernel()
        if logged and kernel.full_information:
            raise TypeError(
                f"{type(self).__name__} is a full-information learner: it learns "
                "from the true labels and cannot learn from LoggedFeedback."
            )
        journal = Journal(self._journal_limit(model_bytes))
        # a block is rolled back by a copy of the state instead of the journal
        # when the copy is at most 1/_COPY_RATIO of the input the block reads
        # (batch calls on small models: the copy is then cheaper than journaling)
        may_copy = model_bytes * _COPY_RATIO <= _input_bytes(X, None)
        # rows per block: _BLOCK_ROWS, or after a block the journal ended early
        # twice its rows (doubling again after a full one), so that a call
        # whose rows write much does not draw uniforms for rows it cannot play
        start, total, size = 0, rows.shape[0], _BLOCK_ROWS
        while start < total:
            block = rows[start : start + size]
            n = block.shape[0]
            point = self._rollback_point()
            copy = may_copy and model_bytes * _COPY_RATIO <= _input_bytes(X, block)
            saved = self._get_state() if copy else None
            try:
                begin()
                kernel = self._before_block(kernel, n)
                kernel.set_journal(None if copy else journal)
                uniforms = self._rng.random((n, 2))
                done, out = run(kernel, block, uniforms)
                if kernel.status != 0:
                    self._raise_kernel_status(kernel, X, row=block[min(done, n - 1)])
                if copy and not self._state_finite():
                    self._raise_kernel_status(kernel, X, status=STATUS_NONFINITE)
                block_rows = n
                if done < n:  # the journal reached its limit: a shorter block
                    block, n = block[:done], done
                    self._rng.bit_generator.state = point[0]["_rng"]
                    self._rng.random((n, 2))
                self._after_block(kernel)
                commit(block, out)
                journal.commit()
            except BaseException:
                kernel.status = 0
                journal.undo()
                self._restore_point(point)
                if saved is not None:
                    self._set_state(saved)  # into the block's own arrays
                rollback()
                raise
            start += n
            size = min(_BLOCK_ROWS, 2 * n if n < block_rows else 2 * size)
            self._blocks_done += 1
        kernel.set_journal(None)

    def _journal_limit(self, model_bytes: int) -> int:
        """Entries the undo journal holds before a block ends early: 1/32 of
        the model's entries (``model_bytes`` of state arrays; the journal
        stores 16 bytes per entry: about 6 % of the model's memory), at least
        2**16 (1 MiB)."""
        return max(1 << 16, model_bytes // (8 * 32))

    def _kernel(self):
        """``(kernel, model_bytes)``: the kernel wrapping the current state
        arrays (made writeable and C-contiguous) and the bytes of those arrays.

        Cached across calls (``_kernel_cache``), which a one-row call would
        otherwise spend much of its time rebuilding. A kernel is built from the
        parameters and the state attributes alone (the objects ``_cache_key``
        lists, a meta-learner's candidates' included) and updates the arrays in
        place, so it stays valid while every one of those objects is the same
        (compared by identity, O(number of attributes)): ``set_params``, a
        hook or a restore that replaces an array or a scalar, a new ``fit``,
        all make a new kernel. A kernel may keep values derived from the arrays
        it wraps and update them with its own writes (SquareCB's per-class
        exploration from ``n_updates_``), so only the learner's kernel may
        write the arrays while it is cached: ``_set_state``, which writes them
        in place, drops the cache, and so does a call that fails (``_transaction``;
        its derived values may hold what the journal undid), and pickling and
        copying (``__getstate__``). ``exploration_distribution``,
        not on the live loop, builds its own kernel.
        """
        key = self._cache_key()
        cache = self.__dict__.get("_kernel_cache")
        if (
            cache is not None
            and len(cache[0]) == len(key)
            and all(map(operator.is_, cache[0], key))
        ):
            return cache[1], cache[2]
        self._own_state_arrays()
        kernel = self._make_kernel()
        key = self._cache_key()  # the arrays _own_state_arrays may have replaced
        model_bytes = self._model_bytes()
        self._kernel_cache = (key, kernel, model_bytes)
        return kernel, model_bytes

    def _cache_key(self) -> tuple:
        """The objects a kernel is built from (``_kernel``): the factory
        ``_make_kernel`` itself (a test may replace it), the parameters' values
        and the state attributes; a meta-learner adds its candidates'."""
        get = self.__dict__.get
        return (
            type(self)._make_kernel,
            *map(get, self._parameter_constraints),
            *map(get, self._state_attrs),
        )

    def __getstate__(self):
        # the cached kernel (a compiled object wrapping the state arrays) is
        # not part of the learner: a copy or an unpickled learner builds its own
        # (scikit-learn's __getstate__ may return the instance's own __dict__)
        state = dict(super().__getstate__())
        state.pop("_kernel_cache", None)
        return state

    def _model_bytes(self) -> int:
        """Bytes of the state arrays (a meta-learner's candidates' included)."""
        return sum(
            value.nbytes
            for learner in (self, *self.__dict__.get("candidates_", ()))
            for name in learner._state_attrs
            if isinstance(value := getattr(learner, name), np.ndarray)
        )

    def _state_finite(self) -> bool:
        """Every state array finite (O(model): the copy mode's check)."""
        return all(
            _all_finite(value)
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
            state["_rng"] = self._rng.bit_generator.state
        subs = [
            c._rollback_point(rng=False) for c in self.__dict__.get("candidates_", ())
        ]
        return state, subs

    def _restore_point(self, point) -> None:
        state, subs = point
        for name, value in state.items():
            if name == "_rng":
                self._rng.bit_generator.state = value
            else:
                setattr(self, name, value)
        for learner, sub in zip(
            self.__dict__.get("candidates_", ()), subs, strict=True
        ):
            learner._restore_point(sub)

    def _raise_kernel_status(self, kernel, X, status=None, row=None, proba=None):
        """Raise the error for a kernel's non-zero status (the caller rolls
        back). ``row`` is the index in X of the row that stopped the kernel,
        ``proba`` the invalid distribution (default: the kernel's last)."""
        status = kernel.status if status is None else status
        if status == STATUS_JOURNAL_ERROR:
            raise MemoryError(
                f"{type(self).__name__}: the undo journal of this call could not "
                "grow (out of memory); the learner is left as after its last "
                "finished block of rows."
            )
        if status == STATUS_INVALID_DISTRIBUTION:
            p = kernel.py_proba() if proba is None else proba
            where = "" if row is None else f" on row {int(row)} of X"
            with np.printoptions(precision=4, threshold=10):
                shown = str(np.asarray(p))
            raise FloatingPointError(
                f"{type(self).__name__}: its exploration distribution{where} is "
                f"not a valid probability vector (entries finite and >= 0, "
                f"summing to 1 within {DISTRIBUTION_TOL:g}): p = {shown}, sum "
                f"{float(np.sum(p)):.17g}. Its arithmetic broke down (e.g. an "
                "overflow of its exploration schedule or scores); nothing was "
                "played or logged from that distribution, and the learner is "
                "left as after its last finished block of rows."
            )
        if status == STATUS_NONFINITE:
            data = X.data if sp.issparse(X) else X
            scale = float(np.max(np.abs(data))) if data.size else 0.0
            raise FloatingPointError(
                f"{type(self).__name__}: the scores or the state became "
                f"non-finite (floating-point overflow); the largest |x| in this "
                f"call is {scale:.3g}. Scale the features, e.g. with "
                "sklearn.preprocessing.MaxAbsScaler or StandardScaler. The "
                "learner is left as after its last finished block of rows."
            )
        raise RuntimeError(f"kernel stopped with unknown status {status}")

    # ------------------------------------------------ acting and logged data
    def sample_actions(self, X, classes=None):
        """Draw an action for each row from the current exploration policy.

        Acting without learning: each row gets an action drawn from the
        learner's exploration distribution (``exploration_distribution``) with
        its own generator, and the probability with which it was drawn (the
        propensity to log). Nothing is learned and no state changes, apart from
        the serving cursor described below; ``predict`` stays the greedy action.
        Once the rewards are known, pass them back with
        ``partial_fit(X, LoggedFeedback(actions, rewards, propensities))``.

        **Uniforms.** The simulator's round ``t`` uses the ``t``-th pair of
        uniforms ``(u1, u2)`` of the learner's generator (``u1`` samples,
        ``u2`` breaks ties of the greedy label). ``sample_actions`` does not
        consume them: it *reads ahead* on a copy of the generator. The rows
        it serves get the pairs of the next rounds, after those of rows served
        earlier and not yet learned (a serving cursor, ``n_pending_``), so
        successive calls get fresh draws. ``partial_fit`` with a
        ``LoggedFeedback`` consumes the pairs as the simulator does and
        re-derives the same tie-break: a loop that serves rows and learns them
        back in the same order learns exactly what the simulator would (the
        same actions and the same state; ``docs/logged.md``).

        On an unfitted learner the first call takes ``classes`` (the
        first-call rule of ``partial_fit``) and acts from the initial state.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows (contexts) to act on. A float64 C-ordered 2-D NumPy array or
            a canonical CSR matrix takes the lean path (a few checks and one
            compiled scan instead of scikit-learn's full validation; the same
            errors for bad input).
        classes : array-like of shape (n_classes,), default=None
            All actions. Required on the first call of an unfitted learner.

        Returns
        -------
        actions : ndarray of shape (n_samples,)
            The drawn actions, as class labels.
        propensities : ndarray of shape (n_samples,)
            The probability of each drawn action under the policy: its marginal
            probability, exact ties of the greedy label included (the
            ``exploration_distribution`` of the row at that action, for the
            round at which the row is served when the learner's exploration
            depends on the round index).
        """
        if classes is None and hasattr(self, "classes_"):
            self._validate_params_cached()
            return self._act(self._rows_fast(X))
        return self._transaction(self._sample_actions_first, X, classes)

    @property
    def n_pending_(self) -> int:
        """Rows served by ``sample_actions`` whose feedback was not learned yet."""
        check_is_fitted(self)
        return self.__dict__.get("_n_pending", 0)

    def _sample_actions_first(self, X, classes):
        first_call = not hasattr(self, "classes_")
        self._validate_params()
        if first_call:
            if classes is None:
                raise ValueError(
                    "classes must be passed on the first call to sample_actions "
                    "of an unfitted learner (it must know every possible action)."
                )
            new_classes = _check_classes(classes)
        else:
            new_classes = self._check_same_classes(classes, "the first call")
        X = self._validate_X(X, reset=first_call)
        if first_call:
            self._reset(new_classes, X.shape[1])
        return self._act(X)

    def _act(self, X):
        n = X.shape[0]
        pending = self.__dict__.get("_n_pending", 0)
        uniforms = self._peek_uniforms(pending, n)
        kernel = self._kernel()[0]
        played = np.empty(n, dtype=np.int32)
        propensities = np.empty(n, dtype=np.float64)
        data, indices, indptr, dense = _kernel_arrays(X)
        done = run_act(
            kernel, data, indices, indptr, dense, uniforms, self.t_ + pending,
            played, propensities,
        )  # fmt: skip
        if done != n:
            self.__dict__.pop("_kernel_cache", None)  # it keeps its status
            self._raise_kernel_status(kernel, X, row=done)
        self._n_pending = pending + n
        return self.classes_.take(played), propensities

    def _peek_uniforms(self, skip: int, n: int) -> np.ndarray:
        """The uniform pairs of the rounds ``skip + 1 .. skip + n`` ahead, read
        without advancing the learner's generator."""
        bit_generator = self._rng.bit_generator
        saved = bit_generator.state
        try:
            if skip:
                if type(bit_generator) is np.random.PCG64:
                    # PCG64 makes one 64-bit draw per double: jump in O(log skip).
                    bit_generator.advance(2 * skip)
                else:
                    self._rng.random(2 * skip)
            return self._rng.random((n, 2))
        finally:
            bit_generator.state = saved

    def _validate_params_cached(self) -> None:
        """``_validate_params``, skipped when no parameter object was replaced
        since the last validation (the lean single-row path)."""
        values = tuple(map(self.__dict__.get, self._parameter_constraints))
        cached = self.__dict__.get("_validated_params")
        if (
            cached is not None
            and len(cached) == len(values)
            and all(map(operator.is_, cached, values))
        ):
            return
        self._validate_params()
        self._validated_params = values

    def _rows_fast(self, X):
        """Validated rows of a fitted learner: the lean path. A float64
        C-ordered 2-D NumPy array, or a canonical CSR matrix (float64 values,
        well-formed index arrays, each row's columns strictly increasing), of
        the right width with finite values within the magnitude bound is
        accepted as it is after O(1) checks and one compiled scan of its
        values, then the learner's own ``_check_rows``; anything else (and
        every row of a learner that overrides ``_validate_X`` or was fitted on
        named features) goes through the full validation (``_validate_X``),
        which converts it or raises the usual errors."""
        if (
            type(self)._validate_X is _BASE_VALIDATE_X
            and "feature_names_in_" not in self.__dict__
            and _lean_rows_ok(X, self.n_features_in_)
        ):
            self._check_rows(X)
            return X
        return self._validate_X(X, reset=False)

    def _scalar_code(self, action, classes: np.ndarray):
        """The code of one action (the single-row path), or None if unknown."""
        table = self.__dict__.get("_code_table")
        if table is None or table[0] is not classes:
            table = (classes, {c: i for i, c in enumerate(classes.tolist())})
            if classes is self.__dict__.get("classes_"):
                self._code_table = table
        try:
            code = table[1].get(action.item() if hasattr(action, "item") else action)
        except TypeError:  # unhashable
            return None
        # a dict matches 1 == 1.0 == True; the array path's comparison agrees
        return code

    def _check_logged(self, logged: LoggedFeedback, classes: np.ndarray):
        """Codes of the logged actions and the rewards, checked for this learner."""
        actions = logged.actions
        if actions.shape[0] == 1:
            code = self._scalar_code(actions.item(0), classes)
            r = logged.rewards.item(0)
            if code is not None and (
                r == 0.0
                or r == 1.0
                or (self._logged_rewards != "binary" and 0.0 < r < 1.0)
            ):
                return np.array([code], dtype=np.int32)
            # otherwise the array path below raises the error
        k = classes.shape[0]
        try:
            codes = np.minimum(np.searchsorted(classes, actions), k - 1)
            known = classes[codes] == actions
        except TypeError as exc:
            raise ValueError(
                f"LoggedFeedback: actions of type {actions.dtype} cannot be "
                f"compared with classes of type {classes.dtype}: {exc}"
            ) from None
        if not np.all(known):
            unknown = np.unique(actions[~known])
            raise ValueError(
                f"LoggedFeedback: actions not in classes_: {unknown.tolist()[:10]} "
                f"(classes are {classes.tolist()[:20]})."
            )
        rewards = logged.rewards
        if self._logged_rewards == "binary":
            if not np.all((rewards == 0.0) | (rewards == 1.0)):
                bad = rewards[(rewards != 0.0) & (rewards != 1.0)]
                raise ValueError(
                    f"{type(self).__name__} learns from rewards 0 or 1 (its "
                    f"algorithm assumes the bit 1[action == label]); got "
                    f"rewards {bad[:5].tolist()}."
                )
        elif rewards.shape[0] and not (rewards.min() >= 0.0 and rewards.max() <= 1.0):
            bad = rewards[(rewards < 0.0) | (rewards > 1.0)]
            raise ValueError(
                f"{type(self).__name__} learns from rewards in [0, 1]; got "
                f"rewards {bad[:5].tolist()}."
            )
        return codes.astype(np.int32, copy=False)

    def _partial_fit_logged(self, X, logged, classes):
        first_call = not hasattr(self, "classes_")
        if first_call:
            self._validate_params()
            if classes is None:
                raise ValueError(
                    "classes must be passed on the first call to partial_fit "
                    "(the learner must know every possible action up front)."
                )
            new_classes = _check_classes(classes)
            X = self._validate_X(X, reset=True)
        else:
            self._validate_params_cached()
            new_classes = self.classes_
            if classes is not None:
                self._check_same_classes(classes, "the first call to partial_fit")
            X = self._rows_fast(X)
        if X.shape[0] != len(logged):
            raise ValueError(
                f"X has {X.shape[0]} rows but the LoggedFeedback has "
                f"{len(logged)} rounds."
            )
        codes = self._check_logged(logged, new_classes)
        if first_call:
            self._reset(new_classes, X.shape[1])
        self.n_iter_ = 0
        n = X.shape[0]
        rows = _ONE_ROW if n == 1 else np.arange(n, dtype=np.int32)
        self._warn_off_policy(self._play_logged(X, codes, logged, rows))
        self.n_iter_ = 1
        return self

    def _fit_logged(self, X, logged):
        X = self._validate_X(X, reset=True)
        if X.shape[0] != len(logged):
            raise ValueError(
                f"X has {X.shape[0]} rows but the LoggedFeedback has "
                f"{len(logged)} rounds."
            )
        classes = _check_classes(np.unique(logged.actions))
        codes = self._check_logged(logged, classes)
        self._reset(classes, X.shape[1])
        self.n_iter_ = 0
        n = X.shape[0]
        n_off = 0
        for _ in range(self.max_iter):
            if self.shuffle:
                rows = self._rng.permutation(n).astype(np.int32)
            else:
                rows = np.arange(n, dtype=np.int32)
            n_off += self._play_logged(X, codes, logged, rows)
            self.n_iter_ += 1
        self._warn_off_policy(n_off)
        return self

    def _warn_off_policy(self, n_off: int) -> None:
        if n_off and not self._off_policy_ok:
            warnings.warn(
                f"{type(self).__name__}: {n_off} logged round(s) were not drawn "
                "by the learner's own policy (action or propensity differ from "
                "its own draw); its analysis assumes on-policy data, so its "
                "update is used there with the logged propensity without that "
                "guarantee (see its docstring and docs/logged.md).",
                OffPolicyWarning,
                stacklevel=_caller_stacklevel(),
            )

    def _play_logged(self, X, codes, logged, rows) -> int:
        """Learn the logged rounds ``rows`` of X in order, block by block, under
        the failure guarantee; returns the number of off-policy rounds."""
        data, indices, indptr, dense = _kernel_arrays(X)
        rewards, propensities = logged.rewards, logged.propensities
        binary = self._logged_rewards == "binary"
        n_off = 0
        pending = [0]

        def run(kernel, block, uniforms):
            n = block.shape[0]
            out = (np.empty(n, dtype=np.int32), np.empty(n, dtype=np.int8))
            done = run_logged(
                kernel, data, indices, indptr, dense, block, codes, rewards,
                propensities, uniforms, self.t_, *out,
            )  # fmt: skip
            return done, out

        def commit(block, out):
            nonlocal n_off
            n = block.shape[0]
            greedy, own = out[0][:n], out[1][:n]
            # Greedy mistakes the feedback reveals: the greedy action was
            # played and not rewarded, or (0/1 rewards) another action was
            # rewarded. Without labels the others are unknown.
            if n == 1:  # the single-row path: Python scalars
                i = block.item(0)
                right = rewards.item(i) == 1.0
                same = codes.item(i) == greedy.item(0)
                n_wrong = 0 if right else 1
                n_revealed = int(same != right if binary else same and not right)
                n_own = own.item(0)
            else:
                right = rewards[block] == 1.0
                same = codes[block] == greedy
                n_wrong = int(n - np.count_nonzero(right))
                revealed = same != right if binary else same & ~right
                n_revealed = int(np.count_nonzero(revealed))
                n_own = int(np.count_nonzero(own))
            self.t_ += n
            self.n_mistakes_ += n_wrong
            self.n_greedy_mistakes_ += n_revealed
            self._n_pending = max(0, pending[0] - n)
            n_off += n - n_own

        def begin():
            pending[0] = self.__dict__.get("_n_pending", 0)

        def rollback():
            self._n_pending = pending[0]

        self._play_blocks(X, rows, run, commit, begin, rollback, logged=True)
        return n_off

    # ------------------------------------------------------------ prediction
    @abstractmethod
    def _score_rows(self, X) -> np.ndarray:
        """Scores (n_samples, n_classes) of validated rows under the current state."""

    def _scores(self, X) -> np.ndarray:
        check_is_fitted(self)
        return self._score_rows(self._validate_X(X, reset=False))

    def decision_function(self, X: MatrixLike) -> np.ndarray:
        """Class scores of each row (``X @ coef_.T`` for the linear learners).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows to score.

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes) or (n_samples,)
            With two classes, ``score(classes_[1]) - score(classes_[0])`` as
            scikit-learn's binary convention asks.
        """
        scores = self._scores(X)
        if scores.shape[1] == 2:
            return scores[:, 1] - scores[:, 0]
        return scores

    def predict(self, X: MatrixLike) -> np.ndarray:
        """Greedy prediction: the class with the highest score.

        Deterministic: exact ties go to the first class in ``classes_`` order
        (during training, ties are broken at random).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows to classify.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted class labels.
        """
        scores = self._scores(X)
        return self.classes_[np.argmax(scores, axis=1)]

    def exploration_distribution(self, X: MatrixLike) -> np.ndarray:
        """Probability of playing each class on each row at the next round.

        The learner's exploration policy under its current state, computed by
        the same compiled function its kernel samples from; exact ties of the
        greedy label share the greedy mass, as the random tie-break does. It is
        the policy that plays the actions, not a model of ``P(y | x)``, and the
        logged propensity of a played action is this distribution at that
        action. Predicting does not advance the learner's generator.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Rows sum to one; columns in ``classes_`` order.
        """
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        self._own_state_arrays()
        kernel = self._make_kernel()
        out = np.empty((X.shape[0], self.classes_.shape[0]), dtype=np.float64)
        data, indices, indptr, dense = _kernel_arrays(X)
        done = run_distribution(kernel, data, indices, indptr, dense, self.t_ + 1, out)
        if done != X.shape[0]:
            self._raise_kernel_status(kernel, X, row=done, proba=out[done])
        return out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class LinearBanditClassifier(BaseBanditClassifier):
    """A learner whose state includes ``coef_`` (k x d, zero at the start) and
    whose scores are ``X @ coef_.T``; its kernel derives from ``LinearKernel``."""

    _state_attrs: tuple[str, ...] = ("coef_",)

    def _init_state(self, n_features, n_classes):
        self.coef_ = np.zeros((n_classes, n_features), dtype=np.float64)

    def _score_rows(self, X):
        return np.asarray(safe_sparse_dot(X, self.coef_.T, dense_output=True))


_BASE_VALIDATE_X = BaseBanditClassifier._validate_X


_CSR_TYPES = (sp.csr_matrix, sp.csr_array)
_INDEX_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))
# The rows argument of a one-row ``_play``.
_ONE_ROW = np.zeros(1, dtype=np.int32)
_ONE_ROW.flags.writeable = False


def _lean_rows_ok(X, n_features: int) -> bool:
    """True when ``X`` is already in the common row form (module docstring,
    Input) with ``n_features`` columns and at least one row: a float64
    C-ordered 2-D ``ndarray``, or a CSR matrix with float64 values, index
    arrays that pass ``check_csr`` and canonical rows; every value finite and
    within the magnitude bound. O(1) checks and compiled O(nnz) scans, no copy."""
    kind = type(X)
    if kind is np.ndarray:
        return (
            X.ndim == 2
            and X.dtype == np.float64
            and X.shape[0] > 0
            and X.shape[1] == n_features
            and X.flags.c_contiguous
            and within_bound(X.reshape(-1), _MAX_ABS_X)
        )
    if kind not in _CSR_TYPES:
        return False
    n_rows, n_cols = X.shape
    data, indices, indptr = X.data, X.indices, X.indptr
    return (
        n_rows > 0
        and n_cols == n_features
        and type(data) is np.ndarray
        and data.dtype == np.float64
        and data.ndim == 1
        and data.flags.c_contiguous
        and indices.dtype == indptr.dtype
        and indices.dtype in _INDEX_DTYPES
        and indices.ndim == 1
        and indptr.ndim == 1
        and indices.flags.c_contiguous
        and indptr.flags.c_contiguous
        and check_csr_canonical(indptr, indices, data.shape[0], n_rows, n_cols)
        == ("", True)
        and within_bound(data, _MAX_ABS_X)
    )


def _check_sparse_structure(X) -> bool | None:
    """Refuse a malformed sparse matrix (O(nnz), no copy): compressed index
    arrays out of range or out of order, or COO coordinates outside the shape.
    Nothing a user passes may make a kernel (or SciPy) index out of bounds.
    Returns, for CSR, whether its rows are canonical (``csr_is_canonical``,
    from the same scan of the indices); None for the other formats."""
    canonical = None
    fmt = X.format
    n_rows, n_cols = X.shape
    if fmt in ("csr", "csc"):
        major, minor = (n_rows, n_cols) if fmt == "csr" else (n_cols, n_rows)
        indptr, indices = X.indptr, X.indices
        if indptr.dtype != indices.dtype or indptr.dtype not in (np.int32, np.int64):
            indptr, indices = indptr.astype(np.int64), indices.astype(np.int64)
        if not (indptr.flags.c_contiguous and indices.flags.c_contiguous):
            indptr, indices = (
                np.ascontiguousarray(indptr),
                np.ascontiguousarray(indices),
            )
        if indptr.ndim != 1 or indices.ndim != 1:
            problem = "indptr and indices must be 1-D"
        else:
            problem, canonical = check_csr_canonical(
                indptr, indices, X.data.shape[0], major, minor
            )
            if fmt != "csr":
                canonical = None
        if problem:
            name = "column" if fmt == "csr" else "row"
            raise ValueError(
                f"Malformed sparse {fmt.upper()} matrix of shape {X.shape}: "
                f"{problem.replace('column index', name + ' index')}."
            )
    elif fmt == "coo":
        for coords, size, name in (
            (X.coords[0], n_rows, "row"),
            (X.coords[1], n_cols, "column"),
        ):
            if coords.size and (coords.min() < 0 or coords.max() >= size):
                raise ValueError(
                    f"Malformed sparse COO matrix of shape {X.shape}: a {name} "
                    f"index is outside [0, {size})."
                )
    elif fmt == "bsr":
        try:
            X.check_format(full_check=True)
        except ValueError as exc:
            raise ValueError(f"Malformed sparse BSR matrix: {exc}") from None
    return canonical


def _canonical_csr(est, X, original, canonical: bool | None = None):
    """The validated CSR matrix ``X`` with canonical rows: each column stored at
    most once (duplicates summed, as SciPy reads them) and indices sorted.

    Canonicity is computed from the arrays (``csr_is_canonical``, O(nnz), or
    ``canonical`` when ``_check_sparse_structure`` computed it on these
    arrays), not read from SciPy's cached flag. A canonical ``X`` is returned
    as it is; else its values are checked finite (a sum of duplicates could
    turn an infinity into a NaN and change the message), a copy is made when
    ``X`` shares an array with the caller's ``original`` (the caller's matrix
    is never modified) and summed in place.
    """
    if canonical is None:
        indptr, indices = X.indptr, X.indices
        if indptr.dtype != indices.dtype:
            indptr, indices = indptr.astype(np.int64), indices.astype(np.int64)
        indptr, indices = (
            np.ascontiguousarray(indptr),
            np.ascontiguousarray(indices),
        )
        canonical = csr_is_canonical(indptr, indices)
    if canonical:
        return X
    _check_finite(est, X)
    if sp.issparse(original) and any(
        np.may_share_memory(mine, getattr(original, name, None))
        for name, mine in (
            ("data", X.data),
            ("indices", X.indices),
            ("indptr", X.indptr),
        )
        if isinstance(getattr(original, name, None), np.ndarray)
    ):
        X = X.copy()
    # SciPy trusts its cached flags: clear them so that it sorts and sums.
    X.has_sorted_indices = False
    X.has_canonical_format = False
    X.sum_duplicates()
    return X


def _check_magnitude(est, X) -> None:
    """Refuse a value with ``|x_ij| > _MAX_ABS_X`` (ValueError naming the first
    one), in one compiled pass without a copy."""
    data = X.data if sp.issparse(X) else X.reshape(-1)
    if within_bound(np.ascontiguousarray(data), _MAX_ABS_X):
        return
    _check_finite(est, X)
    first = int(np.flatnonzero(np.abs(data) > _MAX_ABS_X)[0])
    if sp.issparse(X):
        row = int(np.searchsorted(X.indptr, first, side="right")) - 1
        col = int(X.indices[first])
    else:
        row, col = divmod(first, X.shape[1])
    raise ValueError(
        f"{type(est).__name__}: X[{row}, {col}] = {data[first]:.6g} is larger in "
        f"magnitude than the bound on feature values, 2**480 (about "
        f"{_MAX_ABS_X:.3g}): beyond it the learners' arithmetic (squared norms, "
        "scores, updates) can overflow. Scale the features, e.g. with "
        "sklearn.preprocessing.MaxAbsScaler or StandardScaler."
    )


def _check_finite(est, X) -> None:
    """Refuse NaN and infinite values with scikit-learn's own error (the
    message ``validate_data(..., ensure_all_finite=True)`` gives)."""
    check_array(
        X,
        accept_sparse=True,
        accept_large_sparse=True,
        dtype=None,
        ensure_all_finite=True,
        ensure_2d=False,
        ensure_min_samples=0,
        ensure_min_features=0,
        estimator=est,
        input_name="X",
    )


# The (unused) index arrays handed to the kernels with dense rows.
_NO_INDICES = np.empty(0, dtype=np.int32)
_NO_INDPTR = np.zeros(1, dtype=np.int32)
_NO_INDICES.flags.writeable = False
_NO_INDPTR.flags.writeable = False


def _kernel_arrays(X):
    """``(data, indices, indptr, dense)`` as the kernels read them: dense rows
    flattened, or CSR with int32 indices (only the index arrays are copied when
    they are int64; the values are never copied)."""
    if not sp.issparse(X):
        return X.reshape(-1), _NO_INDICES, _NO_INDPTR, True
    if X.nnz >= 2**31 or X.shape[1] >= 2**31:
        raise ValueError(
            f"Sparse input with {X.nnz} stored values and {X.shape[1]} columns is "
            "too large: skbandit kernels use 32-bit indices."
        )
    indices = X.indices.astype(np.int32, copy=False)
    indptr = X.indptr.astype(np.int32, copy=False)
    return X.data, indices, indptr, False
