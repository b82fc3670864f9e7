"""Any scikit-learn regressor with ``partial_fit`` as a bandit learner's model."""

from __future__ import annotations

from numbers import Integral, Real
from typing import TYPE_CHECKING, Self

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils._param_validation import HasMethods, Interval
from sklearn.utils.validation import check_consistent_length, check_is_fitted

from skbandit._base._acting import ActingMixin
from skbandit._base._scoring import ScoringMixin
from skbandit._base._state import StateMixin
from skbandit._base._validation import InputValidationMixin, _check_classes
from skbandit._core._scans import py_argmax_ties, py_sample_checked
from skbandit._docstring import DISTRIBUTION_SECTIONS, fill_doc
from skbandit._learner_docs import learner_doc
from skbandit.exploration import ExplorationMixin, exploration_constraint
from skbandit.feedback import BanditFeedback, LoggedFeedback
from skbandit.linear_model._squarecb import SquareCB
from skbandit.multiclass._regression_models import _RegressorBank

if TYPE_CHECKING:
    from skbandit._typing import ArrayLike, MatrixLike

__all__ = ["RegressionReduction"]


@learner_doc
class RegressionReduction(
    _RegressorBank,
    ExplorationMixin,
    ClassifierMixin,
    ScoringMixin,
    StateMixin,
    InputValidationMixin,
    BaseEstimator,
):
    r"""Bandit multiclass learning with any online regressor as the reward model.

    The reduction of contextual bandits to online regression of SquareCB
    (Foster and Rakhlin [1]_; Vowpal Wabbit's ``--cb_explore_adf --squarecb``):
    a scikit-learn regressor with ``partial_fit`` (``estimator``) predicts the
    reward :math:`\hat y_a(x)` of playing each class :math:`a`, the learner
    plays from an exploration rule over these predictions (by default inverse
    gap weighting, exactly as :class:`~skbandit.SquareCB` plays), and the
    regressor learns the revealed reward of the played class only. So
    ``SGDRegressor``, ``MLPRegressor`` or a user's own estimator learns from
    bandit feedback: the reward model is as rich as the regressor.

    **One round** (the global round :math:`t`, 1-based, counted across calls
    and passes; :math:`u_1, u_2` the round's pair of uniforms from the
    learner's generator, as for every skbandit learner):

    1. Scores :math:`s_a = \hat y_a(x)`: the prediction of class :math:`a`'s
       regressor (``per_class=True``) or output :math:`a` of the one
       multi-output regressor (``per_class=False``); ``initial_reward`` for a
       class whose regressor has not learned yet (every class before the
       multi-output regressor's first update).
    2. The greedy class :math:`g = \arg\max_a s_a`, exact ties broken by
       :math:`u_2` (``py_argmax_ties``, the compiled kernels' argmax).
    3. The distribution :math:`p` of the exploration rule (``exploration_``,
       its compiled function, the one SquareCB's kernel calls). The default,
       ``InverseGap(scale=300, exponent=0.75, clip=True)``, is SquareCB's:
       with :math:`c_a = \min(\max(s_a, 0), 1)`,

       .. math::

           p_a = \frac{1}{k + \gamma_{t,a} (c_g - c_a)} \ (c_a < c_g),\quad
           p_a = \frac{1}{k} \ (c_a = c_g),\quad
           p_g = 1 - \sum_{a \neq g} p_a,\quad
           \gamma_{t,a} = \min\bigl(f(t), f(k (n_a + 1))\bigr),

       :math:`f(\tau) = 300\, \tau^{0.75}` and :math:`n_a` = ``n_updates_[a]``,
       the rounds of class :math:`a` its regressor has learned.
    4. The action is drawn by the inverse CDF of :math:`p` at :math:`u_1`; its
       logged propensity is its marginal probability over the exact ties of
       the greedy class (as ``exploration_distribution`` reports it).
    5. The round ``(x, a, r)`` joins a buffer. When the buffer holds
       ``batch_size`` rounds the regressor learns them with one
       ``partial_fit``: with ``per_class=True`` class :math:`a`'s regressor
       takes the rows where :math:`a` was played, target the reward :math:`r`;
       with ``per_class=False`` the multi-output regressor takes every row with
       target vector its own outputs at play time except the played class's
       target, so that the squared loss
       :math:`\frac12 \lVert \hat y(x) - y \rVert^2` has the gradient of the
       played class's loss :math:`\frac12 (\hat y_a(x) - r)^2` alone (the
       other outputs' residuals are zero), the update SquareCB's oracle makes.

    **Mini-batches** (``batch_size=B``): the regressor is updated every
    :math:`B` rounds, so the policy is frozen within a batch (its predictions
    for a batch are one ``predict`` call: the cost per round falls, see
    ``benchmarks/bench_regression_reduction.py``). SquareCB's regret bound
    :math:`O(\sqrt{K T\, \mathrm{Reg}_{sq}(T)})` [1]_ assumes an online oracle
    updated after every round; with batches the oracle sees each round's
    feedback up to :math:`B - 1` rounds late, which is the delayed-feedback
    setting. For online learning with a delay of at most :math:`\tau` rounds,
    running :math:`\tau + 1` copies of an online algorithm (or, for gradient
    methods, the delayed updates themselves) gives regret at most
    :math:`(\tau + 1)` times the undelayed regret on a :math:`T/(\tau+1)`
    horizon, and for bandits an additive :math:`O(\tau)` times the cost of a
    round of the first rounds (Joulani, György and Szepesvári [2]_). We do not
    claim a bound for this learner with batches: the statement above is about
    the oracle's regression regret, and it describes what is lost (the
    exploration is computed from a model up to :math:`B - 1` rounds stale);
    ``batch_size=1`` is the setting of [1]_. The buffer persists across calls
    (a batch may span calls; it is pickled with the learner), so the plays do
    not depend on how the stream is cut into ``partial_fit`` calls, for every
    ``batch_size``; ``fit`` learns what is left in the buffer at its end.

    **Logged feedback** (``partial_fit(X, LoggedFeedback(...))``,
    ``docs/logged.md``): the logged action's regression target is the logged
    reward, any real value in ``[0, 1]``, learned without importance weights
    (as SquareCB's default oracle). The regression of each action's reward on
    the rows where it was played is unbiased for :math:`E[r \mid x, a]` when
    the logging policy's choice of :math:`a` depends on :math:`x` only (no
    unobserved confounding) and the regressor's class contains that
    conditional mean; a misspecified regressor fits the logging policy's
    distribution of rows instead (importance weights would correct that, at
    the price of variance). Rounds are replayed as by every skbandit learner:
    a log made by this learner's ``sample_actions`` and learned back in order
    is learned exactly as the simulator would have learned it.

    Parameters
    ----------
    estimator : regressor with ``partial_fit`` or None, default=None
        The reward model, cloned (one clone per class with ``per_class=True``).
        It receives the rows as given, dense or CSR, so a dense input and its
        CSR twin play alike only when its sparse and dense paths round alike
        (scikit-learn's ``SGDRegressor``'s differ in the last bits).
        ``None``: ``SGDRegressor(learning_rate="constant", eta0=0.01,
        penalty=None)``, plain SGD with a constant step (the features should
        be of unit scale: put a scaler in front, or use
        :class:`~skbandit.SquareCB`, whose normalized oracle is scale-free, for
        a linear model). A clone whose ``random_state`` parameter is ``None``
        gets a seed derived from this learner's ``random_state``.
    exploration : str, exploration rule or None, default=None
        How the predicted rewards become the distribution played
        (:mod:`skbandit.exploration`); the rules and this learner's values for
        them are :class:`~skbandit.SquareCB`'s (``None``: inverse gap
        weighting, ``InverseGap(scale=300.0, exponent=0.75, clip=True)``, with
        the per-class floor read from ``n_updates_``). Every rule is accepted:
        the regressor learns the played class's reward whatever the rule.
    per_class : bool, default=True
        One regressor per class, learning from the rounds where its class was
        played (any single-output regressor). ``False``: one multi-output
        regressor predicting the ``k`` rewards (e.g. ``MLPRegressor``, whose
        hidden layer is then shared by the classes); the regressor must accept
        a 2-D target in ``partial_fit``.
    batch_size : int >= 1, default=1
        Rounds per update of the regressor (above).
    initial_reward : float in [0, 1], default=1.0
        The predicted reward of a class whose regressor has not learned yet (1
        is optimistic: an untried class is played greedily until it misses).
    max_iter : int, default=5
        Passes over the data in ``fit``. ``partial_fit`` always makes one.
    shuffle : bool, default=True
        Whether ``fit`` visits the rows in a new random order each pass.
    random_state : int, RandomState instance or None, default=None
        Seeds the learner's own ``numpy.random.Generator``, which draws two
        uniforms per round (action, tie-break) and the shuffles of ``fit``, and
        the regressors' seeds (above).

    Attributes
    ----------
    {classes}
    estimators_ : list of regressors
        The fitted clones of ``estimator``: ``n_classes`` of them
        (``per_class=True``), else one.
    n_updates_ : ndarray of shape (n_classes,), dtype int64
        Rounds of each class its regressor has learned (the buffer excluded).
    n_buffered_ : int
        Rounds played and waiting in the buffer for the next update.
    {features_in}
    {round_counts}
    n_iter_ : int
        Passes finished by the last call.
    {exploration_}

    See Also
    --------
    SquareCB : The same policy over a compiled, scale-free linear oracle.

    Notes
    -----
    The per-round loop runs in Python around the regressor's ``predict`` and
    ``partial_fit`` (no compiled kernel: the model is arbitrary): a ``predict``
    per class and round, a ``partial_fit`` per batch. An ``SGDRegressor`` (the
    default regressor, or one passed as ``estimator``; not a subclass) is not
    asked for ``predict``: its outputs ``X @ coef_ + intercept_`` are computed
    as its ``predict`` computes them (the same bits) without validating the
    rows again. A failed call (bad input, a regressor that raises or predicts
    a non-finite reward) leaves the learner as it was: the regressors are
    deep-copied before their first update.

    References
    ----------
    .. [1] D. J. Foster and A. Rakhlin, "Beyond UCB: Optimal and efficient
       contextual bandits with regression oracles", ICML 2020
       (arXiv:2002.04986).
    .. [2] P. Joulani, A. György and C. Szepesvári, "Online learning under
       delayed feedback", ICML 2013 (arXiv:1306.0686).

    Examples
    --------
    A stream whose classes are the XOR pattern of the signs of three
    coordinates: no linear score separates them.

    >>> import numpy as np
    >>> from sklearn.neural_network import MLPRegressor
    >>> from skbandit import RegressionReduction, SquareCB
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((4000, 6))
    >>> s = (X[:, :3] > 0).astype(int)
    >>> y = (s[:, 0] ^ s[:, 1]) + 2 * (s[:, 1] ^ s[:, 2])
    >>> mlp = MLPRegressor(hidden_layer_sizes=(32,), learning_rate_init=0.01)
    >>> clf = RegressionReduction(
    ...     estimator=mlp, per_class=False, batch_size=8, random_state=0
    ... )
    >>> clf = clf.partial_fit(X[:3000], y[:3000], classes=range(4))
    >>> print(f"online error {clf.n_mistakes_ / clf.t_:.2f}")  # one seed
    online error 0.46
    >>> X_new, y_new = X[3000:], y[3000:]
    >>> print(f"greedy accuracy {np.mean(clf.predict(X_new) == y_new):.2f}")
    greedy accuracy 0.75
    >>> linear = SquareCB(random_state=0)
    >>> linear = linear.partial_fit(X[:3000], y[:3000], classes=range(4))
    >>> print(f"linear SquareCB {np.mean(linear.predict(X_new) == y_new):.2f}")
    linear SquareCB 0.50
    >>> P = clf.exploration_distribution(X[:1])  # the policy of the next round
    >>> print(P.shape, f"{P.sum():.6f}")
    (1, 4) 1.000000
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["partial_fit", "predict"]), None],
        "exploration": exploration_constraint(),
        "per_class": ["boolean"],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "initial_reward": [Interval(Real, 0, 1, closed="both")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
    }

    # the regression learns any reward in [0, 1] (docs/logged.md); its
    # regression on the played action makes sense off-policy
    _logged_rewards = "unit"
    _off_policy_ok = True

    # SquareCB's rules and values: the same policy
    _default_exploration = SquareCB._default_exploration
    _exploration_values = SquareCB._exploration_values

    def __init__(
        self,
        *,
        estimator=None,
        exploration=None,
        per_class=True,
        batch_size=1,
        initial_reward=1.0,
        max_iter=5,
        shuffle=True,
        random_state=None,
    ):
        self.estimator = estimator
        self.exploration = exploration
        self.per_class = per_class
        self.batch_size = batch_size
        self.initial_reward = initial_reward
        self.max_iter = max_iter
        self.shuffle = shuffle
        self.random_state = random_state

    def __getstate__(self):
        # the validated-parameter slots are compiled (not picklable): a copy
        # or an unpickled learner validates its parameters anew
        state = dict(super().__getstate__())
        state.pop("_validated_params", None)
        return state

    # ---------------------------------------------------------- one round
    def _act_round(self, explorer, s, t, u1, u2):
        """``(action, greedy, marginal)`` of one round on scores ``s``: the
        compiled kernels' ``act`` (argmax with ties by ``u2``, the rule's
        distribution, the checked inverse-CDF draw on ``u1``)."""
        g, m = py_argmax_ties(s, u2)
        p = explorer.py_distribution(s, t, g)
        a, valid = py_sample_checked(p, u1)
        if not valid:
            raise ValueError(
                f"{type(self).__name__}: the exploration distribution of round "
                f"{t} is not a probability vector: {p.tolist()}."
            )
        return a, g, (p[a] if m == 1 else self._tie_marginal(explorer, s, t)[a])

    @staticmethod
    def _tie_marginal(explorer, s, t) -> np.ndarray:
        """The policy's distribution with the greedy class drawn uniformly among
        the exact maximisers of ``s`` (summed in class order, divided by their
        number), as the compiled kernels' ``marginal_distribution``."""
        best = s.max()
        tied = np.flatnonzero(s == best)
        out = np.zeros(s.shape[0])
        for r in tied:
            out = out + explorer.py_distribution(s, t, int(r))
        return out / tied.shape[0]

    def _explorer_now(self, rule=None):
        """The compiled explorer of the resolved rule (``exploration_``) over
        the current counts ``n_updates_`` (it reads them when built: a new one
        after each update). ``rule``: the call's resolved rule, if known."""
        if rule is None:
            return self._explorer(self.classes_.shape[0], counts=self.n_updates_)
        return rule._compile(self.classes_.shape[0], counts=self.n_updates_)

    def _play(self, X, rows, uniforms, codes=None, logged=None):
        """Play ``rows`` of X in order (uniform pair ``uniforms[j]`` for round
        ``j``): simulated with label codes ``codes``, or learning the logged
        rounds ``logged = (actions, rewards, propensities)``. Segments end
        where the buffer fills (the model is frozen within one). Returns
        ``(played, greedy, rewards, propensities)`` per round."""
        n = rows.shape[0]
        played = np.empty(n, dtype=np.int64)
        greedy = np.empty(n, dtype=np.int64)
        rewards = np.empty(n, dtype=np.float64)
        props = np.empty(n, dtype=np.float64)
        B = int(self.batch_size)
        pos = 0
        self._explorer_now()  # resolves exploration_ once for the call
        rule = self.exploration_
        while pos < n:
            if self._n_buffered() >= B:  # (batch_size lowered mid-stream)
                self._flush()
            m = min(n - pos, B - self._n_buffered())
            seg = rows[pos : pos + m]
            Xs = X[seg]
            D = self._predict_offsets(Xs)
            S = self._predict_rewards_from(D)
            explorer = self._explorer_now(rule)
            acts = np.empty(m, dtype=np.int64)
            for j in range(m):
                t = self.t_ + pos + j + 1
                u1, u2 = uniforms[pos + j]
                s = S[j]
                b, g, marginal = self._act_round(explorer, s, t, u1, u2)
                i = seg[j]
                greedy[pos + j] = g
                if logged is None:
                    acts[j] = b
                    rewards[pos + j] = 1.0 if b == codes[i] else 0.0
                    props[pos + j] = marginal
                else:
                    acts[j] = logged[0][i]
                    rewards[pos + j] = logged[1][i]
                    props[pos + j] = logged[2][i]
            played[pos : pos + m] = acts
            self._buffer.append((Xs, acts, rewards[pos : pos + m].copy(), D))
            pos += m
            if self._n_buffered() >= B:
                self._flush()
        return played, greedy, rewards, props

    def _labelled_pass(self, X, codes, rows, feedback, record) -> None:
        uniforms = self._rng.random((rows.shape[0], 2))
        played, greedy, rewards, props = self._play(X, rows, uniforms, codes=codes)
        n = rows.shape[0]
        self.t_ += n
        self.n_mistakes_ += int(n - np.count_nonzero(rewards))
        self.n_greedy_mistakes_ += int(np.count_nonzero(greedy != codes[rows]))
        if record:
            feedback._record(
                rows, played, rewards.astype(np.int8), props, self.classes_
            )

    def _logged_pass(self, X, codes, logged, rows) -> None:
        uniforms = self._rng.random((rows.shape[0], 2))
        pending = self.__dict__.get("_n_pending", 0)
        _, greedy, _, _ = self._play(
            X, rows, uniforms, logged=(codes, logged.rewards, logged.propensities)
        )
        # greedy mistakes the feedback reveals (as every skbandit learner
        # counts them): the greedy class played and not rewarded, or (0/1
        # rewards) another class rewarded
        right = logged.rewards[rows] == 1.0
        same = codes[rows] == greedy
        n = rows.shape[0]
        self.t_ += n
        self.n_mistakes_ += int(n - np.count_nonzero(right))
        self.n_greedy_mistakes_ += int(np.count_nonzero(same & ~right))
        self._n_pending = max(0, pending - n)

    # ------------------------------------------------------------ public
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: MatrixLike, y: ArrayLike | BanditFeedback) -> Self:
        """Learn from scratch: ``max_iter`` passes over (X, y) with bandit feedback.

        The classes are the distinct labels of ``y`` (or of the logged
        actions). Each pass visits the rows in a random order when
        ``shuffle=True``; the rounds left in the buffer at the end are learned.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training rows.
        y : array-like of shape (n_samples,), BanditFeedback or LoggedFeedback
            True labels, seen by the learner only through the reward bit; or
            logged feedback, learned instead of the learner's own plays.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        return self._transaction(self._fit, X, y)

    def _fit(self, X, y):
        logged = isinstance(y, LoggedFeedback)
        if logged:
            X = self._validate_X(X, reset=True)
            _check_logged_length(X, y)
            classes = _check_classes(np.unique(y.actions))
            codes = self._check_logged(y, classes)
        else:
            X, feedback, record = self._validate_fit_input(X, y, reset=True)
            classes = _check_classes(feedback._labels_for_classes())
            codes = feedback._encode(classes)
        self._reset(classes, X.shape[1])
        self.n_iter_ = 0
        n = X.shape[0]
        for _ in range(self.max_iter):
            if self.shuffle:
                rows = self._rng.permutation(n)
            else:
                rows = np.arange(n)
            if logged:
                self._logged_pass(X, codes, y, rows)
            else:
                self._labelled_pass(X, codes, rows, feedback, record)
            self.n_iter_ += 1
        self._flush()
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
            logged feedback (actions, rewards in [0, 1], propensities), from
            which the learner learns instead of playing its own actions.
        classes : array-like of shape (n_classes,), default=None
            All classes of the stream. Required on the first call, and must be
            the same (or omitted) on later calls.

        Returns
        -------
        self : object
            The updated estimator.
        """
        return self._transaction(self._partial_fit, X, y, classes)

    def _first_call_classes(self, classes, method: str):
        """``(first_call, classes)`` under the first-call rule."""
        self._validate_params_cached()
        first_call = "classes_" not in self.__dict__
        if not first_call:
            self._check_structure()
        missing = (
            f"classes must be passed on the first call to {method} "
            "(the learner must know every possible action up front)."
        )
        classes = self._classes_of_call(
            classes, first_call, missing=missing, where="the first call"
        )
        return first_call, classes

    def _partial_fit(self, X, y, classes):
        first_call, classes = self._first_call_classes(classes, "partial_fit")
        if isinstance(y, LoggedFeedback):
            X = self._validate_X(X, reset=first_call)
            _check_logged_length(X, y)
            codes = self._check_logged(y, classes)
        else:
            X, feedback, record = self._validate_fit_input(X, y, reset=first_call)
            codes = feedback._encode(classes)
        if first_call:
            self._reset(classes, X.shape[1])
        self.n_iter_ = 0
        rows = np.arange(X.shape[0])
        if isinstance(y, LoggedFeedback):
            self._logged_pass(X, codes, y, rows)
        else:
            self._labelled_pass(X, codes, rows, feedback, record)
        self.n_iter_ = 1
        return self

    def sample_actions(self, X: MatrixLike, classes: ArrayLike | None = None):
        """Draw an action for each row from the current exploration policy.

        Acting without learning, as every skbandit learner does (see
        :meth:`skbandit.SquareCB.sample_actions`): the rows get the uniform
        pairs of the next rounds, read ahead without advancing the learner's
        generator (after those of rows served earlier and not learned yet, the
        serving cursor ``n_pending_``); learning the rows back in order with
        ``partial_fit(X, LoggedFeedback(actions, rewards, propensities))``
        learns what the simulator would have.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows (contexts) to act on.
        classes : array-like of shape (n_classes,), default=None
            All actions. Required on the first call of an unfitted learner.

        Returns
        -------
        actions : ndarray of shape (n_samples,)
            The drawn actions, as class labels.
        propensities : ndarray of shape (n_samples,)
            The marginal probability of each drawn action under the policy.
        """
        return self._transaction(self._sample_actions, X, classes)

    def _sample_actions(self, X, classes):
        first_call, classes = self._first_call_classes(classes, "sample_actions")
        X = self._validate_X(X, reset=first_call)
        if first_call:
            self._reset(classes, X.shape[1])
        n = X.shape[0]
        pending = self._n_pending
        uniforms = ActingMixin._peek_uniforms(self, pending, n)
        S = self._predict_rewards(X)
        explorer = self._explorer_now()
        actions = np.empty(n, dtype=np.int64)
        props = np.empty(n, dtype=np.float64)
        for j in range(n):
            t = self.t_ + pending + j + 1
            a, _, marginal = self._act_round(explorer, S[j], t, *uniforms[j])
            actions[j], props[j] = a, marginal
        self._n_pending = pending + n
        return self.classes_.take(actions), props

    @property
    def n_pending_(self) -> int:
        """Rows served by ``sample_actions`` whose feedback was not learned yet."""
        check_is_fitted(self)
        return self.__dict__.get("_n_pending", 0)

    @fill_doc(distribution_sections=DISTRIBUTION_SECTIONS)
    def exploration_distribution(self, X: MatrixLike) -> np.ndarray:
        """Probability of playing each class on each row at the next round.

        The exploration policy under the current regressors, exact ties of the
        greedy class sharing the greedy mass (the propensity of a played action
        is this distribution at that action). Nothing changes.

        {distribution_sections}
        """
        # (ScoringMixin's: check_is_fitted, _validate_X, _score_rows)
        return self._distribution(self._scores(X), self.t_ + 1)

    def _distribution(self, S, t: int) -> np.ndarray:
        """The policy's distribution at round ``t`` for each row of scores
        ``S`` (exact ties of the greedy class sharing its mass)."""
        explorer = self._explorer_now()
        out = np.empty_like(S)
        for j in range(S.shape[0]):
            out[j] = self._tie_marginal(explorer, S[j], t)
        return out


def _check_logged_length(X, logged: LoggedFeedback) -> None:
    if X.shape[0] != len(logged):
        raise ValueError(
            f"X has {X.shape[0]} rows but the LoggedFeedback has {len(logged)} rounds."
        )
    check_consistent_length(X, logged.actions)
