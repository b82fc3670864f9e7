"""skbandit learners inside coba, the contextual-bandit research harness.

`coba <https://github.com/vowpalwabbit/coba>`_ (8.x) runs learners on
environments (interactions of a context, an action set and rewards) and
records what they play. :class:`CobaLearner` makes any skbandit bandit learner
a coba learner, and :func:`make_coba_environment` builds a coba environment
from arrays ``(X, y)``, avoiding coba's traps with in-memory data:

- ``Environments.from_supervised(X, Y)`` wraps ``zip(X, Y)``, which can be read
  only once: coba reads a source twice (a peek, then the run), so the second
  read is empty and the experiment has 0 interactions without an error. The
  helper uses a ``ListSource`` of ``(context, label)`` pairs.
- integer labels are taken for a regression task unless ``label_type="c"``;
  and a plain number as an action is one numeric action feature for coba's
  Vowpal Wabbit learners (action 7 is "7 times action 0"), which cripples
  them. The helper makes the labels coba ``Categorical`` values with the
  sorted labels as levels, which coba hands to learners as one-hot tuples.
- coba recognises a returned action by identity (``is``) among the actions it
  offered: returning an equal but different object (skbandit's ``np.int64``
  label) records 0 interactions after "unable to determine the prediction
  format". The adapter returns coba's own action objects.
- contexts are plain Python lists (dense rows) or dicts (sparse rows): the
  helper converts NumPy rows, DataFrames and SciPy sparse rows.

The adapter's round is the live loop of ``docs/logged.md``: ``predict`` calls
the learner's ``sample_actions`` on the context (an action and its
propensity), coba computes the reward, and ``learn`` calls ``partial_fit``
with ``LoggedFeedback``. Served and learned in the same order, this loop
plays exactly the actions of skbandit's own simulator (the on-policy
equivalence), which the test suite checks inside a coba experiment.

What a skbandit learner cannot take is refused with a ``ValueError`` (or the
learner's own error) naming the interaction: an action set that changes
between interactions (coba's synthetic environments with action features,
``n_action_features > 0``), a reward outside the declared ``reward_range``,
contexts that change form. coba catches a learner's exceptions, prints them in
its log ("Unexpected exception", also under ``run(quiet=True)``) and goes on:
the experiment ends normally and the learner has no rows in its results. So
every refusal is also issued as a :class:`CobaLearnerWarning` with the same
message, a Python warning that can be recorded or filtered
(``warnings.catch_warnings``, ``pytest.warns``) and that shows on stderr also
when coba's log goes to a file.

Rewards: skbandit learners learn rewards in [0, 1]. coba's synthetic
environments ``from_linear_synthetic`` and ``from_kernel_synthetic`` make
continuous rewards a little outside it (observed: -0.27 to 1.30), so declare
their range, ``CobaLearner(SquareCB(), reward_range=(-1, 2))``: each reward
``r`` is learned as ``(r - low) / (high - low)``, an affine map that keeps
every action's order (the same best action). A learner of 0/1 rewards
(``Banditron``, ...) still refuses the fractions.

Needs the optional extra ``coba``: ``pip install "skbandit[coba]"``.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.feature_extraction import FeatureHasher
from sklearn.utils.validation import _num_samples, check_array, column_or_1d

from skbandit.feedback import LoggedFeedback

try:
    import coba
    from coba.pipes import ListSource
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise ImportError(
        "skbandit.integrations.coba needs coba: pip install 'skbandit[coba]' "
        "(or pip install 'coba>=8.1,<9')"
    ) from exc

__all__ = ["CobaLearner", "CobaLearnerWarning", "make_coba_environment"]

# the hashing space of dict (sparse) contexts when no vectorizer is given
DEFAULT_N_HASHED_FEATURES = 2**16


class CobaLearnerWarning(UserWarning):
    """A :class:`CobaLearner` refused an interaction (the message says why).

    Issued with the exception the adapter raises, because coba catches a
    learner's exceptions, only logs them and leaves the learner out of its
    results.
    """


def _refuse(exc: Exception) -> Exception:
    """Issue ``exc``'s message as a ``CobaLearnerWarning``; return ``exc``."""
    warnings.warn(
        f"CobaLearner: {exc} (coba leaves this learner out of its results)",
        CobaLearnerWarning,
        stacklevel=3,
    )
    return exc


def _check_reward_range(reward_range) -> tuple[float, float] | None:
    if reward_range is None:
        return None
    try:
        low, high = (float(v) for v in reward_range)
    except (TypeError, ValueError):
        raise ValueError(
            "reward_range must be None or a pair (low, high) of numbers; got "
            f"{reward_range!r}"
        ) from None
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise ValueError(
            "reward_range must be a pair (low, high) of finite numbers with "
            f"low < high; got {reward_range!r}"
        )
    return low, high


def _default_vectorizer() -> FeatureHasher:
    return FeatureHasher(
        n_features=DEFAULT_N_HASHED_FEATURES, input_type="dict", alternate_sign=False
    )


class CobaLearner(coba.Learner):
    """Any skbandit bandit learner as a coba learner.

    The wrapped learner's classes are the **positions** ``0 .. k-1`` in the
    action set of the first interaction (coba's actions can be any objects:
    numbers, strings, one-hot lists, dicts); ``predict`` returns the action
    object coba offered at the drawn position, with its propensity. Every
    later interaction must offer the same actions (equal, not necessarily the
    same objects) in the same order (a skbandit learner has a fixed set of
    classes): otherwise ``predict`` refuses the interaction, a ``ValueError``
    naming it, also issued as a :class:`CobaLearnerWarning` (coba catches
    learners' exceptions). coba's synthetic environments with action features
    (``n_action_features > 0``) draw new actions every interaction and are
    refused at the second one; with ``n_action_features=0`` their actions are
    fixed one-hot tuples.

    Each interaction runs the live loop: ``predict(context, actions)`` calls
    ``learner.sample_actions(row)`` (the first call with ``classes=range(k)``)
    and returns ``(action, propensity)``; coba computes the reward and calls
    ``learn(context, action, reward, probability)``, which calls
    ``learner.partial_fit(row, LoggedFeedback([position], [reward],
    [probability]))``. Served and learned in order, this reproduces the
    learner's simulator run exactly (``partial_fit(X, y)`` on the same rows).

    Parameters
    ----------
    learner : skbandit bandit learner
        Cloned (unfitted) at construction: the adapter owns its copy, the
        fitted learner is ``learner_``.
    vectorizer : transformer, default=None
        Turns dict (sparse) contexts into rows: any object whose
        ``transform(list_of_dicts)`` returns a 2-D matrix of a fixed width
        (e.g. a ``DictVectorizer`` fitted beforehand on the feature names).
        Default: ``FeatureHasher(n_features=2**16, alternate_sign=False)``,
        stateless, so features never seen before need no refit (keys are
        converted to strings). The learners keep dense ``(n_classes,
        n_features)`` weights, and every ``learn`` copies them once (the
        failure guarantee), so a vectorizer no wider than the data needs is
        faster. Dense contexts (a number or a sequence of numbers) are used
        as they are.
    reward_range : (float, float), default=None
        The range ``[low, high]`` of the environment's rewards: each reward
        ``r`` is learned as ``(r - low) / (high - low)`` (in [0, 1], the
        rewards skbandit learners learn). None: rewards are learned as they
        are and must lie in [0, 1]. A reward outside the range (or not
        finite) is refused at the interaction that brings it: ``learn``
        raises a ``ValueError`` naming the interaction, the reward and the
        range, also issued as a :class:`CobaLearnerWarning`. coba's
        ``from_linear_synthetic`` and ``from_kernel_synthetic`` rewards
        stray a little outside [0, 1] (-0.27 to 1.30 observed): declare,
        for example, ``reward_range=(-1, 2)``.

    Attributes
    ----------
    learner_ : estimator
        The wrapped learner, fitted from the first ``predict`` on.
    actions_ : list
        The action set of the first interaction: ``actions_[i]`` is class
        ``i`` of ``learner_``.
    n_interactions_ : int
        Interactions served by ``predict``.

    Examples
    --------
    >>> import numpy as np
    >>> from skbandit import Banditron
    >>> from skbandit.integrations.coba import CobaLearner
    >>> learner = CobaLearner(Banditron(random_state=0))
    >>> actions = ["cat", "dog"]
    >>> action, prob = learner.predict([1.0, 0.0], actions)
    >>> action is actions[0] or action is actions[1], prob
    (True, 0.5)
    >>> learner.learn([1.0, 0.0], action, float(action == "cat"), prob)
    >>> learner.learner_.t_
    1
    """

    def __init__(self, learner, *, vectorizer=None, reward_range=None) -> None:
        if not hasattr(learner, "sample_actions"):
            raise TypeError(
                "CobaLearner wraps a skbandit bandit learner (with sample_actions "
                f"and LoggedFeedback); got {type(learner).__name__}"
            )
        self.learner = learner
        self.vectorizer = vectorizer
        self.reward_range = reward_range
        self._reward_range = _check_reward_range(reward_range)
        self.learner_ = clone(learner)
        self._vectorizer = _default_vectorizer() if vectorizer is None else vectorizer
        self.actions_: list | None = None
        self.n_interactions_ = 0
        self._sparse: bool | None = None

    @property
    def params(self) -> dict[str, Any]:
        """The learner's family and scalar parameters (coba's result columns)."""
        params: dict[str, Any] = {"family": f"skbandit.{type(self.learner).__name__}"}
        for key, value in self.learner.get_params(deep=False).items():
            if value is None or isinstance(value, str | bool | numbers.Number):
                params[key] = value
        if self.vectorizer is not None:
            params["vectorizer"] = type(self.vectorizer).__name__
        if self._reward_range is not None:
            params["reward_range"] = list(self._reward_range)
        return params

    def _row(self, context):
        """One context as a (1, d) row: dense float64, or CSR from a dict."""
        sparse = isinstance(context, Mapping)
        if self._sparse is None:
            self._sparse = sparse
        elif sparse != self._sparse:
            first, now = ("dict", "dense") if self._sparse else ("dense", "dict")
            raise _refuse(
                ValueError(
                    f"the contexts changed form: the first was {first}, interaction "
                    f"{self.n_interactions_} has a {now} one; a learner needs one "
                    "feature space"
                )
            )
        if sparse:
            row = self._vectorizer.transform([{str(k): v for k, v in context.items()}])
            return sp.csr_matrix(row, dtype=np.float64)
        if context is None:  # a multi-armed bandit: one constant feature
            context = [1.0]
        try:
            row = np.asarray(context, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                "CobaLearner needs numeric dense contexts (a number or a sequence "
                f"of numbers) or dict contexts; got {context!r:.80}: {exc}"
            ) from None
        return np.ascontiguousarray(row.reshape(1, -1))

    def _check_actions(self, actions) -> None:
        if actions is None or len(actions) == 0:
            raise ValueError(
                "CobaLearner needs a finite action set in every interaction "
                "(coba offered none: a regression or continuous-action task?)"
            )
        if self.actions_ is None:
            self.actions_ = list(actions)
            return
        same = len(actions) == len(self.actions_) and all(
            a is b or _equal(a, b) for a, b in zip(actions, self.actions_, strict=True)
        )
        if not same:
            raise _refuse(
                ValueError(
                    f"the action set changed at interaction {self.n_interactions_}: "
                    f"the first interaction offered {len(self.actions_)} actions "
                    f"{_preview(self.actions_)}, this one {len(actions)} actions "
                    f"{_preview(actions)}. A skbandit learner has a fixed set of "
                    "classes: every interaction must offer the same actions in "
                    "the same order (coba's synthetic environments do with "
                    "n_action_features=0)."
                )
            )

    def predict(self, context, actions):
        """Draw an action for ``context``: ``(action, propensity)``.

        The action is the object of ``actions`` at the drawn position (coba
        recognises actions by identity).
        """
        self._check_actions(actions)
        row = self._row(context)
        if self.n_interactions_ == 0 and not hasattr(self.learner_, "classes_"):
            drawn, prob = self.learner_.sample_actions(
                row, classes=np.arange(len(self.actions_))
            )
        else:
            drawn, prob = self.learner_.sample_actions(row)
        self.n_interactions_ += 1
        return actions[int(drawn[0])], float(prob[0])

    def learn(self, context, action, reward, probability, **kwargs) -> None:
        """Learn the logged round: ``partial_fit(row, LoggedFeedback(...))``."""
        if self.actions_ is None:
            raise ValueError(
                "CobaLearner.learn before any predict: the classes come from the "
                "action set of the first predicted interaction"
            )
        position = _position(action, self.actions_)
        row = self._row(context)
        learned = self._rescale(reward)
        try:
            self.learner_.partial_fit(
                row, LoggedFeedback([position], [learned], [float(probability)])
            )
        except (TypeError, ValueError) as exc:
            raise _refuse(exc) from None

    def _rescale(self, reward) -> float:
        """The learned reward: ``(reward - low) / (high - low)``, refused
        outside ``[low, high]`` (default ``[0, 1]``, unchanged)."""
        low, high = self._reward_range or (0.0, 1.0)
        try:
            value = float(reward)
        except (TypeError, ValueError):
            value = math.nan
        if not low <= value <= high:  # NaN too
            advice = (
                "declare the environment's range, CobaLearner(..., "
                "reward_range=(low, high)), to learn (r - low) / (high - low)"
                if self._reward_range is None
                else "widen reward_range to the environment's range"
            )
            why = "" if self._reward_range else " (skbandit learns rewards in [0, 1])"
            raise _refuse(
                ValueError(
                    f"interaction {self.n_interactions_ - 1} has the reward "
                    f"{reward!r:.40}, outside the reward range [{low:g}, {high:g}]"
                    f"{why}: {advice}"
                )
            )
        if self._reward_range is None:
            return value
        return (value - low) / (high - low)


def _equal(a, b) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def _preview(actions) -> str:
    items = [_short(repr(a)) for a in list(actions)[:5]]
    return "[" + ", ".join(items) + (", ...]" if len(actions) > 5 else "]")


def _short(text: str, width: int = 40) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _position(action, actions: Sequence) -> int:
    for i, a in enumerate(actions):
        if a is action:
            return i
    for i, a in enumerate(actions):
        if _equal(a, action):
            return i
    raise ValueError(
        f"learn got the action {action!r:.80}, which is not in the action set of "
        f"the first interaction {_preview(actions)}"
    )


def _contexts(X) -> list:
    """Rows of X as coba contexts: lists of floats, or dicts for sparse rows."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        X.sum_duplicates()
        return [
            {
                str(int(j)): float(v)
                for j, v in zip(
                    X.indices[X.indptr[i] : X.indptr[i + 1]],
                    X.data[X.indptr[i] : X.indptr[i + 1]],
                    strict=True,
                )
            }
            for i in range(X.shape[0])
        ]
    X = check_array(X, dtype=np.float64, ensure_all_finite=True)
    return X.tolist()


def make_coba_environment(X, y, *, name: str | None = None):
    """A coba environment (classification with bandit feedback) from ``(X, y)``.

    Interaction ``i`` has context row ``i`` of ``X``, one action per label of
    ``np.unique(y)`` (coba ``Categorical`` labels, which coba hands to
    learners as one-hot tuples: position ``j`` is the ``j``-th sorted label,
    and coba's Vowpal Wabbit learners see one indicator feature per action),
    and reward 1 for the action of ``y[i]``, 0 otherwise: the same rounds, in the
    same order and with the same class order, as skbandit's simulator on
    ``(X, y)``. Built from a ``ListSource`` with ``label_type="c"``, so the
    environment can be read any number of times and integer labels stay
    classes (see the module's docstring for coba's traps).

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Contexts: dense rows become lists of floats, sparse rows dicts
        ``{"column index": value}`` (stored entries only).
    y : array-like of shape (n_samples,)
        Class labels (numbers or strings, distinct as strings).
    name : str, default=None
        Recorded as the environment's ``source`` parameter in coba's results
        (``"[X,y]"`` by default).

    Returns
    -------
    environments : coba.Environments
        One environment.

    Examples
    --------
    >>> import numpy as np
    >>> from skbandit.integrations.coba import make_coba_environment
    >>> env = make_coba_environment(np.eye(3), np.array([2, 0, 1]))
    >>> next(iter(env[0].read()))["actions"]  # one-hot, in label order
    [(1, 0, 0), (0, 1, 0), (0, 0, 1)]
    >>> len(list(env[0].read())), len(list(env[0].read()))  # read twice
    (3, 3)
    """
    y = column_or_1d(y, warn=True)
    n = _num_samples(X)
    if y.shape[0] != n:
        raise ValueError(
            f"X has {n} rows but y has {y.shape[0]} labels: one label per row"
        )
    if n == 0:
        raise ValueError("X and y are empty: an environment needs interactions")
    classes = np.unique(y)
    levels = [str(c) for c in classes.tolist()]
    if len(set(levels)) != len(levels):
        raise ValueError(
            f"the labels {classes.tolist()[:10]} are not distinct as strings: coba's "
            "categorical actions are strings"
        )
    codes = np.searchsorted(classes, y)
    labels = [coba.Categorical(levels[c], levels) for c in codes.tolist()]
    pairs = list(zip(_contexts(X), labels, strict=True))
    env = coba.Environments.from_supervised(ListSource(pairs), label_type="c")
    if name is not None:
        env = env.params({"source": name})
    return env
