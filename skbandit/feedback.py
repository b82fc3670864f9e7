"""The simulated bandit environment: the only object that holds true labels."""

from __future__ import annotations

import math
import numbers
from abc import ABC, abstractmethod

import numpy as np
from sklearn.utils import assert_all_finite
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import column_or_1d

__all__ = ["BanditFeedback", "LoggedFeedback", "OffPolicyWarning"]


class OffPolicyWarning(UserWarning):
    """A learner whose analysis needs on-policy data learned from logged rounds
    that its own policy did not draw (see ``docs/logged.md``)."""


# A look-up table of integer classes spans at most this many values more than
# the labels it encodes (so that building it costs at most that much more than
# encoding them).
_TABLE_SLACK = 1024
# Fewer labels are searched: the table's fixed cost (a few NumPy calls) is
# then above the search's (about equal at 1,000 labels of 9 classes).
_TABLE_MIN_LABELS = 1024


# The smallest propensity ``LoggedFeedback`` accepts by default: 2**-32 (about
# 2.3e-10), so that an importance weight 1/p is at most 2**32, the margin the
# rows' magnitude bound leaves for importance weights
# (``skbandit._base._rows._MAX_ABS_X``: squared row norms stay below 2**991).
MIN_PROPENSITY = 2.0**-32


def _check_label_values(values: np.ndarray, name: str) -> None:
    """Refuse values that cannot be class labels: complex numbers, NaN and
    infinities, None (``ValueError`` naming ``name`` and the first such
    values). Integer, boolean and string arrays are not scanned; float arrays
    by one ``np.isfinite``; object arrays element by element."""
    kind = values.dtype.kind
    if kind == "c":
        raise ValueError(
            f"{name} must be real class labels; got complex values "
            f"{values.ravel()[:5].tolist()}."
        )
    if kind == "f":
        bad = ~np.isfinite(values)
    elif kind == "O":
        bad = np.fromiter(map(_not_a_label, values.ravel()), bool, values.size)
    else:
        return
    if bad.any():
        raise ValueError(
            f"{name} must be class labels that are finite numbers or strings; "
            f"got {values.ravel()[bad.ravel()][:5].tolist()} (NaN, infinite, "
            "complex or None values cannot be classes)."
        )


def _not_a_label(value) -> bool:
    """One element of an object array that cannot be a class label."""
    if value is None or isinstance(value, complex | np.complexfloating):
        return True
    return isinstance(value, float | np.floating) and not math.isfinite(value)


def _search_codes(labels: np.ndarray, classes: np.ndarray):
    """``(codes, known)``: the index of each label in the sorted ``classes``
    by binary search (clipped to the last index) and whether the label is the
    class there. ``TypeError`` when labels and classes cannot be compared."""
    codes = np.minimum(np.searchsorted(classes, labels), classes.shape[0] - 1)
    return codes, classes[codes] == labels


def _table_codes(y: np.ndarray, classes: np.ndarray) -> np.ndarray | None:
    """The codes of integer labels ``y`` in the sorted, distinct integer
    ``classes`` by a look-up table over ``classes[0] .. classes[-1]`` (table
    entry ``c - classes[0]`` holds the index of class ``c``, -1 for a value
    that is not a class): one gather instead of a binary search per label,
    and the same codes (``np.searchsorted(classes, y)`` for labels in
    ``classes``). None when it does not apply (labels or classes not
    integers, a span of more than ``len(y) + _TABLE_SLACK`` values
    or beyond +-2**62, fewer than ``_TABLE_MIN_LABELS`` labels) or when a label
    is not a class: the caller's search then encodes them or names the unknown
    labels."""
    if (
        y.dtype.kind not in "iu"
        or classes.dtype.kind not in "iu"
        or y.shape[0] < _TABLE_MIN_LABELS
    ):
        return None
    lo, hi = int(classes[0]), int(classes[-1])
    if lo < -(2**62) or hi > 2**62 or hi - lo > y.shape[0] + _TABLE_SLACK:
        return None
    if int(y.min()) < lo or int(y.max()) > hi:
        return None
    table = np.full(hi - lo + 1, -1, dtype=np.int32)
    table[classes.astype(np.int64) - lo] = np.arange(classes.shape[0], dtype=np.int32)
    codes = table[y.astype(np.int64, copy=False) - lo]
    if codes.min() < 0:  # a label between two classes
        return None
    return codes


class _PerRowFeedback(ABC):
    """The sizing shared by the feedback objects: one entry per row of X, as
    the array ``_per_row()`` holds them (the labels, or the logged actions)."""

    @abstractmethod
    def _per_row(self) -> np.ndarray:
        """The array with one entry per row of X."""

    def __len__(self) -> int:
        return self._per_row().shape[0]

    @property
    def shape(self) -> tuple[int]:
        """``(n_samples,)``: lets scikit-learn's length checks and indexing work."""
        return self._per_row().shape


class BanditFeedback(_PerRowFeedback):
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
    >>> from skbandit.exploration import EpsilonGreedy
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.1], [0.1, 1.0]])
    >>> feedback = BanditFeedback(["a", "b", "a", "b"])
    >>> clf = Banditron(exploration=EpsilonGreedy(0.5), random_state=0)
    >>> clf = clf.partial_fit(X, feedback, classes=["a", "b"])
    >>> feedback.n_rounds_
    4
    >>> feedback.rewards_.dtype, feedback.propensities_.dtype
    (dtype('int8'), dtype('float64'))
    >>> bool(np.all(np.isin(feedback.actions_, ["a", "b"])))
    True
    """

    _y: np.ndarray

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
    def _per_row(self) -> np.ndarray:
        return self._y

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
        Integer labels of integer classes spanning few values are looked up
        in a table (``_table_codes``); other labels by a binary search.
        """
        codes = _table_codes(self._y, classes)
        if codes is not None:
            return codes
        try:
            codes, known = _search_codes(self._y, classes)
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


class LoggedFeedback(_PerRowFeedback):
    """Logged bandit feedback: the actions shown, their rewards and propensities.

    What a deployed system records, round after round: the action it showed
    for a context, the reward it then observed (a click or not) and the
    probability with which its policy chose that action. Passed as ``y`` to
    ``fit`` or ``partial_fit`` of a bandit learner, it makes the learner
    learn from the logged rounds instead of playing its own actions: for
    each row it computes its scores and greedy label as usual, then updates
    from the logged action, reward and propensity (see ``docs/logged.md`` for
    which probability the update uses, and each learner's docstring for what
    its update means on data it did not choose). The propensities are also
    what the off-policy estimators of :mod:`skbandit.evaluation` need.

    The arrays are checked here for what does not depend on the learner
    (matching lengths, actions that can be class labels, real and finite
    rewards, real propensities in ``[min_propensity, 1]``); the learner checks
    the actions against its ``classes_`` and the rewards against the range its
    algorithm assumes (0/1, or [0, 1]), before changing anything.

    **The propensity floor.** A round logged with propensity ``p`` is learned
    with the importance weight ``1 / p`` (the Banditron's ``x / p``, the
    Gaptron's ``1[a = y] / p``, ...; off-policy evaluation's ``pi(a|x) / p``).
    Propensities below ``min_propensity`` (default ``2**-32``, about
    ``2.3e-10``) are refused with a ``ValueError``, for every learner and the
    off-policy estimators alike: a weight above ``2**32`` exceeds the margin
    the rows' magnitude bound leaves for importance weights (``|x_ij| <=
    2**480``, so squared row norms stay below ``2**991``), and beyond it the
    learners' arithmetic can overflow or one round can swamp the model (the
    Banditron's weights reach ``x / p``). They are refused rather than
    clipped: clipping would change the data silently (a biased importance
    weight, and a logged propensity that no longer matches the learner's own
    for its own rounds), while a refusal lets the caller choose (clip, drop
    the round, or lower the floor knowingly). The learners' own exploration
    keeps their propensities far above the default floor (``docs/logged.md``,
    The propensity floor).

    Parameters
    ----------
    actions : array-like of shape (n_samples,)
        The action shown on each row, as a class label (not NaN, infinite,
        complex or None).
    rewards : array-like of shape (n_samples,)
        The reward observed for it: 0 or 1 (e.g. a click), or a real value in
        [0, 1] for the learners that accept one. Real numbers only: complex
        values are refused (not truncated to their real part).
    propensities : array-like of shape (n_samples,)
        The probability with which the logging policy chose the action, in
        ``[min_propensity, 1]``: for an skbandit learner, what
        ``sample_actions`` returned (its marginal probability of the action,
        exact ties of the greedy label included).
    min_propensity : float, default=2**-32
        The propensity floor, in (0, 1]: smaller propensities (importance
        weights ``1 / p`` above ``1 / min_propensity``) are refused. Lowering
        it below the default lets importance weights exceed ``2**32``; a
        learner whose state then overflows raises a ``FloatingPointError``
        naming the importance weight.

    Attributes
    ----------
    actions : ndarray of shape (n_samples,)
    rewards : ndarray of shape (n_samples,), dtype float64
    propensities : ndarray of shape (n_samples,), dtype float64
    min_propensity : float
        The propensity floor the arrays were checked against.

    Examples
    --------
    >>> import numpy as np
    >>> from skbandit import Banditron, LoggedFeedback
    >>> from skbandit.exploration import EpsilonGreedy
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> clf = Banditron(exploration=EpsilonGreedy(0.5), random_state=0)
    >>> actions, propensities = clf.sample_actions(X, classes=["a", "b"])
    >>> rewards = (actions == np.array(["a", "b"])).astype(float)
    >>> clf = clf.partial_fit(X, LoggedFeedback(actions, rewards, propensities))
    >>> clf.t_
    2
    """

    def __init__(
        self, actions, rewards, propensities, *, min_propensity=MIN_PROPENSITY
    ) -> None:
        if min_propensity is not MIN_PROPENSITY:
            min_propensity = _check_min_propensity(min_propensity)
        one = _one_round(actions, rewards, propensities, min_propensity)
        if one is None:
            one = _checked_rounds(actions, rewards, propensities, min_propensity)
        self.actions, self.rewards, self.propensities = one
        self.min_propensity = min_propensity

    def _per_row(self) -> np.ndarray:
        return self.actions

    def __getitem__(self, index) -> LoggedFeedback:
        """The logged rounds of the selected rows (for cross-validation splits)."""
        a, r, p = self.actions[index], self.rewards[index], self.propensities[index]
        if np.ndim(a) == 0:
            a, r, p = np.asarray([a]), np.asarray([r]), np.asarray([p])
        return LoggedFeedback(a, r, p, min_propensity=self.min_propensity)

    def __repr__(self) -> str:
        return f"LoggedFeedback(n_samples={len(self)})"


def _check_min_propensity(value) -> float:
    """``min_propensity`` as a float in (0, 1]; ``ValueError`` otherwise."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        value = float(value)
        if 0.0 < value <= 1.0:
            return value
    raise ValueError(
        f"LoggedFeedback: min_propensity must be a real number in (0, 1]; got "
        f"{value!r}."
    )


def _one_round(actions, rewards, propensities, min_propensity=MIN_PROPENSITY):
    """``(actions, rewards, propensities)`` of one valid round as the live loop
    passes it, checked on Python scalars: ``sample_actions``' arrays (a 1-D
    ``ndarray`` of one action of an integer, boolean, string or float dtype, a
    float one finite, and one float64 propensity in ``[min_propensity, 1]``)
    and one finite reward, a ``float`` in a list or a float64 array of one.
    None for anything else, which ``_checked_rounds`` converts, checks and
    refuses with its errors; on what this accepts both give the same arrays
    (``tests/test_live_round.py::test_one_round_fast_path``)."""
    if not (
        type(actions) is np.ndarray
        and type(propensities) is np.ndarray
        and actions.shape == (1,)
        and propensities.shape == (1,)
        and propensities.dtype == np.float64
        and actions.dtype.kind in "biuUSf"
    ):
        return None
    if actions.dtype.kind == "f":
        a = actions.item(0)
        if not a - a == 0.0:  # NaN or infinite: not a class
            return None
    if type(rewards) is list and len(rewards) == 1 and type(rewards[0]) is float:
        r = rewards[0]
        rewards = np.array(rewards)  # float64
    elif (
        type(rewards) is np.ndarray
        and rewards.shape == (1,)
        and rewards.dtype == np.float64
    ):
        r = rewards.item(0)
    else:
        return None
    p = propensities.item(0)
    if r - r == 0.0 and min_propensity <= p <= 1.0:  # finite; above the floor
        return actions, rewards, propensities
    return None


def _checked_rounds(actions, rewards, propensities, min_propensity=MIN_PROPENSITY):
    """``(actions, rewards, propensities)`` as 1-D arrays (rewards and
    propensities float64), checked: one of each per round, actions that can be
    class labels (``_check_label_values``), real and finite rewards, real
    propensities in ``[min_propensity, 1]``; ``ValueError`` naming the problem
    otherwise."""
    actions = _as_1d(actions, "actions")
    rewards = _as_1d(rewards, "rewards", np.float64)
    propensities = _as_1d(propensities, "propensities", np.float64)
    n = actions.shape[0]
    if rewards.shape[0] != n or propensities.shape[0] != n:
        raise ValueError(
            "LoggedFeedback needs one action, reward and propensity per "
            f"round; got {n} actions, {rewards.shape[0]} rewards and "
            f"{propensities.shape[0]} propensities."
        )
    _check_label_values(actions, "LoggedFeedback: actions")
    if n == 1:  # the single-row path: Python scalars
        r, p = float(rewards[0]), float(propensities[0])
        finite, valid = r - r == 0.0, 0.0 < p <= 1.0
        floored = p >= min_propensity
    else:
        finite = bool(np.all(np.isfinite(rewards)))
        valid = not n or (propensities.min() > 0.0 and propensities.max() <= 1.0)
        floored = not n or propensities.min() >= min_propensity
    if not finite:
        raise ValueError("LoggedFeedback: rewards must be finite (no NaN or inf).")
    if not valid:
        bad = propensities[~((propensities > 0.0) & (propensities <= 1.0))]
        raise ValueError(
            "LoggedFeedback: propensities must be probabilities in (0, 1]; "
            f"got {bad[:5].tolist()} (a logged action must have had a "
            "positive probability of being shown)."
        )
    if not floored:
        bad = propensities[propensities < min_propensity]
        raise ValueError(
            f"LoggedFeedback: {bad.shape[0]} "
            f"propensit{'y is' if bad.shape[0] == 1 else 'ies are'} below "
            f"min_propensity={min_propensity:.3g}, e.g. {bad[:5].tolist()}: "
            f"their importance weights 1/p (up to {1.0 / bad.min():.3g}) are "
            f"beyond what can be learned from or evaluated (the limit is "
            f"1/min_propensity = {1.0 / min_propensity:.3g}). Clip or drop "
            "those rounds, or pass a smaller min_propensity knowingly."
        )
    return actions, rewards, propensities


def _as_1d(values, name: str, dtype=None) -> np.ndarray:
    """``values`` as a 1-D array (a column vector flattened), of ``dtype`` when
    given (then real numbers only: complex values are refused, not truncated
    to their real part); ``ValueError`` naming ``name`` otherwise."""
    if type(values) is not np.ndarray or (dtype is not None and values.dtype != dtype):
        values = _read(np.asarray, values, name)
        if dtype is not None:
            if values.dtype.kind == "c" or (
                values.dtype.kind == "O"
                and any(
                    isinstance(v, complex | np.complexfloating) for v in values.flat
                )
            ):
                raise ValueError(
                    f"LoggedFeedback: {name} must be real numbers; got complex "
                    f"values {values.ravel()[:5].tolist()} (their imaginary part "
                    "would be lost)."
                )
            values = _read(values.astype, dtype, name)
    if values.ndim == 2 and values.shape[1] == 1:
        values = values[:, 0]
    if values.ndim != 1:
        raise ValueError(
            f"LoggedFeedback: {name} must be 1-D, got an array of shape {values.shape}."
        )
    if dtype is None and values.dtype.kind == "O":
        values = column_or_1d(values, input_name=name)
    return values


def _read(convert, value, name: str) -> np.ndarray:
    """``convert(value)``, its ``TypeError`` or ``ValueError`` as a
    ``ValueError`` naming ``name``."""
    try:
        return convert(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"LoggedFeedback: {name} could not be read: {exc}") from None
