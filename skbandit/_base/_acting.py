"""Live acting and logged learning (``ActingMixin``).

``sample_actions`` serves rows with the learner's exploration policy without
learning (reading the generator ahead, the serving cursor ``n_pending_``);
``partial_fit``/``fit`` with a ``LoggedFeedback`` learn the logged rounds back
(``_play_logged``, the block loop of ``skbandit._base._transaction`` with the
compiled driver ``run_logged``), re-deriving the learner's own draw so that a
serve-then-learn loop reproduces the simulator (docs/logged.md).
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np
from sklearn.utils.validation import check_is_fitted

from skbandit._base._rows import _kernel_arrays, _rows_in_order
from skbandit._base._stacklevel import _caller_stacklevel
from skbandit._base._state import _rng_restore, _rng_snapshot
from skbandit._base._transaction import TransactionMixin
from skbandit._base._validation import PARTIAL_FIT_NEEDS_CLASSES, _check_classes
from skbandit._core._drivers import run_act, run_logged
from skbandit.feedback import OffPolicyWarning


class ActingMixin(TransactionMixin):
    """Acting without learning, and learning from logged rounds."""

    if TYPE_CHECKING:  # a class attribute of the skeleton (skbandit.base)
        _off_policy_ok: bool

    # ---------------------------------------------------------------- acting
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
            Rows (contexts) to act on. For the lowest latency of a live loop,
            one row at a time, see ``skbandit.LiveSession``.
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
        self._check_unlocked("sample_actions")
        return self._transaction(self._sample_actions, X, classes)

    @property
    def n_pending_(self) -> int:
        """Rows served by ``sample_actions`` whose feedback was not learned yet."""
        check_is_fitted(self)
        return self.__dict__.get("_n_pending", 0)

    def _sample_actions(self, X, classes):
        first_call = "classes_" not in self.__dict__
        self._validate_params_cached()
        new_classes = self._classes_of_call(
            classes,
            first_call,
            missing=(
                "classes must be passed on the first call to sample_actions "
                "of an unfitted learner (it must know every possible action)."
            ),
            where="the first call",
        )
        X = self._validate_X(X, reset=first_call)
        if first_call:
            self._reset(new_classes, X.shape[1])
        return self._act(X)

    def _act(self, X):
        """Act on the validated rows X (``run_act``), reading the uniforms
        ahead (``_peek_uniforms``)."""
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
            self.__dict__.pop("_kernel_cache", None)  # (it keeps its status)
            self._raise_kernel_status(kernel, X, row=done)
        self._n_pending = pending + n
        return self.classes_.take(played), propensities

    def _peek_uniforms(self, skip: int, n: int) -> np.ndarray:
        """The uniform pairs of the rounds ``skip + 1 .. skip + n`` ahead, read
        without advancing the learner's generator (its state is saved and
        restored exactly: ``_rng_snapshot``)."""
        rng = self._rng
        saved = _rng_snapshot(rng)
        try:
            if skip:
                if type(rng.bit_generator) is np.random.PCG64:
                    # PCG64 makes one 64-bit draw per double: jump in O(log skip).
                    rng.bit_generator.advance(2 * skip)
                else:
                    rng.random(2 * skip)
            return rng.random((n, 2))
        finally:
            _rng_restore(rng, saved)

    # -------------------------------------------------------- logged rounds
    def _partial_fit_logged(self, X, logged, classes):
        first_call = "classes_" not in self.__dict__
        if first_call:
            self._validate_params()
        else:
            self._validate_params_cached()
        new_classes = self._classes_of_call(
            classes,
            first_call,
            missing=PARTIAL_FIT_NEEDS_CLASSES,
            where="the first call to partial_fit",
        )
        X = self._validate_X(X, reset=first_call)
        if X.shape[0] != len(logged):
            raise ValueError(
                f"X has {X.shape[0]} rows but the LoggedFeedback has "
                f"{len(logged)} rounds."
            )
        codes = self._check_logged(logged, new_classes)
        if first_call:
            self._reset(new_classes, X.shape[1])
        self.n_iter_ = 0
        rows = _rows_in_order(X.shape[0])
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
        play = _LoggedPass(self, X, codes, logged)
        self._play_blocks(X, rows, play, logged=True)
        return play.n_off


class _LoggedPass:
    """The pass of ``_play_logged`` (``TransactionMixin._play_blocks``):
    logged rounds (``run_logged``), their counters, the off-policy count
    ``n_off`` and the serving cursor ``_n_pending``, which a failed block
    sets back."""

    __slots__ = (
        "est", "arrays", "codes", "rewards", "propensities", "binary",
        "pending", "n_off",
    )  # fmt: skip

    def __init__(self, est, X, codes, logged) -> None:
        self.est = est
        self.arrays = _kernel_arrays(X)  # (data, indices, indptr, dense)
        self.codes = codes
        self.rewards = logged.rewards
        self.propensities = logged.propensities
        self.binary = est._logged_rewards == "binary"
        self.pending = 0
        self.n_off = 0

    def begin(self) -> None:
        self.pending = self.est.__dict__.get("_n_pending", 0)

    def run(self, kernel, block, uniforms):
        data, indices, indptr, dense = self.arrays
        done, *counts = run_logged(
            kernel, data, indices, indptr, dense, block, self.codes, self.rewards,
            self.propensities, uniforms, self.est.t_, self.binary,
        )  # fmt: skip
        return done, counts

    def commit(self, block, counts) -> None:
        # (the driver counts, over the rounds played: rewards other than 1,
        # the greedy mistakes the feedback reveals, off-policy rounds)
        mistakes, greedy_mistakes, n_off = counts
        n = block.shape[0]
        est = self.est
        est.t_ += n
        est.n_mistakes_ += mistakes
        est.n_greedy_mistakes_ += greedy_mistakes
        est._n_pending = max(0, self.pending - n)
        self.n_off += n_off

    def rollback(self) -> None:
        self.est._n_pending = self.pending
