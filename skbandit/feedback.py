"""The simulated bandit environment: the only object that holds true labels."""

from __future__ import annotations

import numpy as np
from sklearn.utils import assert_all_finite
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import column_or_1d

__all__ = ["BanditFeedback"]


class BanditFeedback:
    """Bandit-feedback simulator wrapping the true labels of a stream.

    A learner that receives a ``BanditFeedback`` plays one action per row and
    is told only whether that action equals the row's label: the reward
    ``1[action == label]``. The labels themselves stay inside this object; the
    learners' compiled kernels receive them only at the single comparison
    that produces the reward.

    After every pass of a learner over the stream the object appends what was
    revealed to its log, the standard logged bandit data ``(x, a, r, p)``:
    the row played, the action, the reward and the probability with which the
    learner drew that action. The log can be used for off-policy evaluation.

    Estimators' ``fit`` and ``partial_fit`` accept plain labels too and wrap
    them in a ``BanditFeedback`` internally, so tools that pass plain ``y``
    (pipelines, cross-validation) keep the bandit protocol.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        True class labels of the stream, of any type scikit-learn accepts for
        classification (integers, strings, ...).

    Attributes
    ----------
    rows_ : ndarray of shape (n_rounds,), dtype int64
        Index into ``y`` of each round played, in play order.
    actions_ : ndarray of shape (n_rounds,)
        Played actions, as class labels.
    rewards_ : ndarray of shape (n_rounds,), dtype int8
        1 where the played action was the true label, else 0.
    propensities_ : ndarray of shape (n_rounds,), dtype float64
        Probability with which the learner's policy played each action: the
        marginal probability of that action, exact ties of the greedy label
        included (so it equals ``exploration_distribution`` of the row at the
        played action, just before the round). This is the propensity that
        off-policy estimators need.
    n_rounds_ : int
        Number of rounds logged.

    Examples
    --------
    >>> import numpy as np
    >>> from skbandit import Banditron, BanditFeedback
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.1], [0.1, 1.0]])
    >>> feedback = BanditFeedback(["a", "b", "a", "b"])
    >>> clf = Banditron(gamma=0.5, random_state=0)
    >>> clf = clf.partial_fit(X, feedback, classes=["a", "b"])
    >>> feedback.n_rounds_
    4
    >>> feedback.rewards_.dtype, feedback.propensities_.dtype
    (dtype('int8'), dtype('float64'))
    >>> bool(np.all(np.isin(feedback.actions_, ["a", "b"])))
    True
    """

    def __init__(self, y) -> None:
        if y is None:
            raise ValueError(
                "requires y to be passed, but the target y is None: "
                "BanditFeedback needs the true labels of the stream."
            )
        if isinstance(y, BanditFeedback):
            y = y._y
        y = column_or_1d(y, warn=True, input_name="y")
        if y.dtype.kind == "f":
            assert_all_finite(y, input_name="y")
        # type_of_target is costly on every chunk of a stream: skip it where its
        # answer is known (integer, boolean or string labels; whole floats).
        discrete = y.dtype.kind in "biuUS" or (
            y.dtype.kind == "f" and np.array_equal(y, np.floor(y))
        )
        if not discrete:
            check_classification_targets(y)
        self._y = y
        self._clear_log()

    # ------------------------------------------------------------------ sizing
    def __len__(self) -> int:
        return self._y.shape[0]

    @property
    def shape(self) -> tuple[int]:
        """``(n_samples,)``: lets scikit-learn's length checks and indexing work."""
        return self._y.shape

    def __getitem__(self, index) -> BanditFeedback:
        """A new ``BanditFeedback`` over the selected rows, with an empty log."""
        sub = self._y[index]
        if np.ndim(sub) == 0:
            sub = np.asarray([sub])
        return BanditFeedback(sub)

    def __repr__(self) -> str:
        return f"BanditFeedback(n_samples={len(self)}, n_rounds={self.n_rounds_})"

    # --------------------------------------------------------------- the log
    # One entry (rows, actions, rewards, propensities) per block of play. The
    # public arrays concatenate the entries once and keep the result as the
    # single entry, so reading them repeatedly costs nothing more.
    def _clear_log(self) -> None:
        self._log: list[tuple[np.ndarray, ...]] = []

    def _logged(self, field: int, dtype) -> np.ndarray:
        if not self._log:
            return np.empty(0, dtype=dtype)
        if len(self._log) > 1:
            self._log = [
                tuple(np.concatenate([e[f] for e in self._log]) for f in range(4))
            ]
        return self._log[0][field]

    @property
    def rows_(self) -> np.ndarray:
        return self._logged(0, np.int64)

    @property
    def actions_(self) -> np.ndarray:
        return self._logged(1, self._y.dtype)

    @property
    def rewards_(self) -> np.ndarray:
        return self._logged(2, np.int8)

    @property
    def propensities_(self) -> np.ndarray:
        return self._logged(3, np.float64)

    @property
    def n_rounds_(self) -> int:
        return sum(entry[0].shape[0] for entry in self._log)

    def clear_log(self) -> BanditFeedback:
        """Forget the logged rounds (the labels are kept). Returns ``self``."""
        self._clear_log()
        return self

    # ------------------------------------------------- used by the estimators
    def _labels_for_classes(self) -> np.ndarray:
        # The set of labels, for ``fit`` (which infers ``classes_`` from y as
        # every scikit-learn classifier does). Not per-row information.
        return np.unique(self._y)

    def _encode(self, classes: np.ndarray) -> np.ndarray:
        """Label codes ``0..k-1`` in ``classes`` order (sorted); int32.

        Raises ``ValueError`` naming the labels that are not in ``classes``.
        """
        k = classes.shape[0]
        try:
            codes = np.searchsorted(classes, self._y)
            codes = np.minimum(codes, k - 1)
            known = classes[codes] == self._y
        except TypeError as exc:
            raise ValueError(
                f"y has labels of type {self._y.dtype} that cannot be compared "
                f"with classes of type {classes.dtype}: {exc}"
            ) from None
        if not np.all(known):
            unknown = np.unique(self._y[~known])
            raise ValueError(
                f"y contains labels not in classes: {unknown.tolist()[:10]} "
                f"(classes are {classes.tolist()[:20]}). The set of classes is "
                "fixed by the first call to partial_fit."
            )
        return codes.astype(np.int32)

    def _record(self, rows, played, rewards, propensities, classes) -> None:
        """Append one block of play. ``rewards`` are the revealed 0/1 bits."""
        self._log.append(
            (
                np.asarray(rows, dtype=np.int64),
                classes[played],
                np.asarray(rewards, dtype=np.int8),
                np.asarray(propensities, dtype=np.float64),
            )
        )

    def _log_mark(self) -> int:
        """Rounds logged so far: a mark to roll the log back to."""
        return self.n_rounds_

    def _truncate_log(self, n_rounds: int) -> None:
        """Forget the rounds logged after the first ``n_rounds``."""
        if self.n_rounds_ == n_rounds:
            return
        logged = (self.rows_, self.actions_, self.rewards_, self.propensities_)
        self._log = [tuple(a[:n_rounds] for a in logged)] if n_rounds > 0 else []
