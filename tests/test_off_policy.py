"""Off-policy evaluation (Dudik, Langford & Li 2011): IPS, SNIPS, DR.

The formulas are checked on a hand-computable log; the estimators' intervals
are checked for coverage of a fixed policy's true accuracy (computed from the
labels) on logs of a uniform logging policy; DR with a good reward model must
have a smaller variance than IPS; the scorer works in ``GridSearchCV``.
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.dummy import DummyRegressor
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV, KFold

from skbandit import Banditron, LoggedFeedback
from skbandit.evaluation import (
    OffPolicyResult,
    evaluate_policy,
    make_off_policy_scorer,
    off_policy_evaluation,
)


def _population(n=20000, d=8, k=4, seed=0):
    """A labelled pool (labels: argmax of a linear model, 10% noise) and a fixed
    deterministic target policy (a perturbed linear model)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    W = rng.standard_normal((k, d))
    y = np.argmax(X @ W.T, axis=1)
    noisy = rng.random(n) < 0.1
    y[noisy] = rng.integers(0, k, size=int(noisy.sum()))
    W_pi = W + 0.8 * rng.standard_normal((k, d))
    return X, y, W_pi


def _greedy_proba(X, W_pi):
    k = W_pi.shape[0]
    return np.eye(k)[np.argmax(X @ W_pi.T, axis=1)]


def test_formulas_on_a_small_log():
    # 3 classes, 4 rounds; target probabilities given
    pi = np.array([[1.0, 0.0, 0.0], [0.2, 0.5, 0.3], [0.0, 0.0, 1.0], [0.5, 0.5, 0.0]])
    actions = np.array([0, 1, 0, 1])
    rewards = np.array([1.0, 0.0, 1.0, 1.0])
    props = np.array([0.5, 0.25, 0.5, 0.8])
    X = np.arange(8.0).reshape(4, 2)
    logged = LoggedFeedback(actions, rewards, props)
    w = np.array([1.0 / 0.5, 0.5 / 0.25, 0.0 / 0.5, 0.5 / 0.8])
    c = 0.3
    res = evaluate_policy(
        pi,
        logged,
        [0, 1, 2],
        X=X,
        reward_model=DummyRegressor(strategy="constant", constant=c),
        confidence=0.9,
    )
    assert isinstance(res, OffPolicyResult)
    ips_terms = w * rewards
    assert_allclose(res["ips"].value, ips_terms.mean())
    assert_allclose(res["ips"].std_error, ips_terms.std(ddof=1) / 2.0)
    snips = (w * rewards).sum() / w.sum()
    assert_allclose(res["snips"].value, snips)
    # DR with h = c wherever the model was fitted (the rows of action 0 have a
    # constant reward of 1 in each training fold: h is that mean there)
    assert 0.0 <= res["dr"].value <= 2.0
    z = 1.6448536269514722  # the 95% quantile: a 90% two-sided interval
    e = res["ips"]
    assert_allclose(
        [e.ci_low, e.ci_high], [e.value - z * e.std_error, e.value + z * e.std_error]
    )
    assert res.effective_sample_size == pytest.approx(w.sum() ** 2 / (w**2).sum())
    assert set(res.to_dict()["estimates"]) == {"ips", "snips", "dr"}
    assert "snips" in str(res)


def test_doubly_robust_with_a_known_reward_model():
    """DR = mean(sum_a pi(a|x) h(x, a) + w (r - h(x, a_i))) for a model that
    predicts the constant c everywhere (rewards vary within every action)."""
    rng = np.random.default_rng(1)
    n, k, c = 400, 3, 0.25
    X = rng.standard_normal((n, 2))
    actions = rng.integers(0, k, size=n)
    rewards = (rng.random(n) < 0.4).astype(float)
    props = np.full(n, 1 / k)
    pi = rng.dirichlet(np.ones(k), size=n)
    res = evaluate_policy(
        pi,
        LoggedFeedback(actions, rewards, props),
        np.arange(k),
        X=X,
        methods=["dr"],
        reward_model=DummyRegressor(strategy="constant", constant=c),
    )
    w = pi[np.arange(n), actions] / props
    terms = c + w * (rewards - c)
    assert_allclose(res["dr"].value, terms.mean())
    assert_allclose(res["dr"].std_error, terms.std(ddof=1) / np.sqrt(n))


def _coverage_run(n_reps, n_rounds, seed=0):
    X_pool, y_pool, W_pi = _population(seed=seed)
    k = W_pi.shape[0]
    pi_pool = _greedy_proba(X_pool, W_pi)
    true_value = float(np.mean(pi_pool[np.arange(len(y_pool)), y_pool]))
    rng = np.random.default_rng(seed + 1)
    covered = {m: 0 for m in ("ips", "snips", "dr")}
    values = {m: [] for m in covered}
    for rep in range(n_reps):
        rows = rng.integers(0, len(y_pool), size=n_rounds)
        X, y = X_pool[rows], y_pool[rows]
        actions = rng.integers(0, k, size=n_rounds)  # the uniform logging policy
        logged = LoggedFeedback(
            actions, (actions == y).astype(float), np.full(n_rounds, 1 / k)
        )
        res = evaluate_policy(
            pi_pool[rows],
            logged,
            np.arange(k),
            X=X,
            reward_model=Ridge(1.0),
            random_state=rep,
        )
        for m in covered:
            covered[m] += res[m].covers(true_value)
            values[m].append(res[m].value)
    return true_value, {m: covered[m] / n_reps for m in covered}, values


@pytest.mark.parametrize(
    "n_reps",
    [pytest.param(40, id="short"), pytest.param(200, id="200", marks=pytest.mark.slow)],
)
def test_intervals_cover_the_true_accuracy(n_reps):
    """At the 95% level the IPS, SNIPS and DR intervals cover the fixed policy's
    true accuracy in >= 90% of seeded repetitions; DR, with a reward model
    fitted by cross-fitting, has a smaller variance than IPS."""
    true_value, coverage, values = _coverage_run(n_reps, n_rounds=600)
    for m, rate in coverage.items():
        assert rate >= 0.9, (m, rate, true_value)
    assert np.var(values["dr"]) < np.var(values["ips"])
    # the estimates are centred on the true value (unbiased up to noise)
    for m in values:
        assert abs(np.mean(values[m]) - true_value) < 4 * np.std(values[m]) / np.sqrt(
            n_reps
        )


def test_off_policy_evaluation_of_a_learner():
    X_pool, y_pool, _ = _population(n=6000, seed=3)
    k = 4
    rng = np.random.default_rng(0)
    actions = rng.integers(0, k, size=3000)
    logged = LoggedFeedback(
        actions, (actions == y_pool[:3000]).astype(float), np.full(3000, 0.25)
    )
    clf = Banditron(gamma=0.1, random_state=0).fit(X_pool[:3000], logged)
    greedy = off_policy_evaluation(clf, X_pool[:3000], logged, random_state=0)
    explo = off_policy_evaluation(
        clf, X_pool[:3000], logged, policy="exploration", random_state=0
    )
    assert greedy.policy == "greedy" and explo.policy == "exploration"
    # a learner evaluated on the rows it learned from: a sanity check of the
    # plumbing, not of generalisation
    true_greedy = np.mean(clf.predict(X_pool[:3000]) == y_pool[:3000])
    assert (
        greedy["snips"].covers(true_greedy)
        or abs(greedy["snips"].value - true_greedy) < 0.05
    )
    proba = clf.exploration_distribution(X_pool[:3000])
    true_explo = np.mean(proba[np.arange(3000), y_pool[:3000]])
    assert abs(explo["dr"].value - true_explo) < 0.05
    with pytest.raises(ValueError, match="policy"):
        off_policy_evaluation(clf, X_pool[:10], logged[:10], policy="softmax")
    with pytest.raises(ValueError, match="method"):
        off_policy_evaluation(clf, X_pool[:10], logged[:10], methods=["direct"])


def test_scorer_in_grid_search():
    X_pool, y_pool, _ = _population(n=3000, seed=4)
    k = 4
    rng = np.random.default_rng(2)
    actions = rng.integers(0, k, size=3000)
    logged = LoggedFeedback(
        actions, (actions == y_pool).astype(float), np.full(3000, 0.25)
    )
    scorer = make_off_policy_scorer("ips")
    cv = KFold(3)
    grid = GridSearchCV(
        Banditron(random_state=0, max_iter=1),
        {"gamma": [0.05, 0.5]},
        scoring=scorer,
        cv=cv,
    ).fit(X_pool, logged)
    # by hand for gamma = 0.5: learn on the training folds' logs, score on the test fold
    by_hand = []
    for train, test in cv.split(X_pool):
        clf = Banditron(gamma=0.5, random_state=0, max_iter=1).fit(
            X_pool[train], logged[train]
        )
        res = off_policy_evaluation(clf, X_pool[test], logged[test], methods=["ips"])
        by_hand.append(res["ips"].value)
    assert_allclose(grid.cv_results_["mean_test_score"][1], np.mean(by_hand))
    with pytest.raises(TypeError, match="LoggedFeedback"):
        scorer(grid.best_estimator_, X_pool[:5], y_pool[:5])


def test_bad_input():
    logged = LoggedFeedback([0, 1], [1.0, 0.0], [0.5, 0.5])
    with pytest.raises(ValueError, match="target_proba has 3 rows"):
        evaluate_policy(np.ones((3, 2)) / 2, logged, [0, 1])
    with pytest.raises(ValueError, match="needs X"):
        evaluate_policy(np.ones((2, 2)) / 2, logged, [0, 1], methods=["dr"])
    with pytest.raises(ValueError, match="not among"):
        evaluate_policy(
            np.ones((2, 2)) / 2, LoggedFeedback([0, 5], [1, 0], [1, 1]), [0, 1]
        )
    with pytest.raises(ValueError, match="confidence"):
        evaluate_policy(np.ones((2, 2)) / 2, logged, [0, 1], confidence=1.5)


def _small_learner_log(n=300, seed=5):
    X_pool, y_pool, _ = _population(n=n, d=6, k=3, seed=seed)
    rng = np.random.default_rng(seed)
    actions = rng.integers(0, 3, size=n)
    logged = LoggedFeedback(
        actions, (actions == y_pool).astype(float), np.full(n, 1 / 3)
    )
    clf = Banditron(gamma=0.1, random_state=0).fit(X_pool, logged)
    return clf, X_pool, logged


def test_every_input_form_the_learners_accept():
    """Issue 17, item 4: DR indexed ``X[rows]``, which selects the columns of a
    DataFrame (KeyError). A DataFrame, a CSR matrix and the ndarray give the
    same estimates, for both target policies and every method."""
    pd = pytest.importorskip("pandas")
    sp = pytest.importorskip("scipy.sparse")
    clf, X, logged = _small_learner_log()
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    # a non-default index: positional selection must not use its labels
    frame.index = np.arange(X.shape[0])[::-1] + 1000
    # the same learner fitted on the frame (it then expects feature names)
    clf_frame = Banditron(gamma=0.1, random_state=0).fit(frame, logged)
    assert_allclose(clf_frame.coef_, clf.coef_)
    for policy in ("greedy", "exploration"):
        ref = off_policy_evaluation(clf, X, logged, policy=policy, random_state=0)
        for model, form in ((clf_frame, frame), (clf, sp.csr_matrix(X))):
            res = off_policy_evaluation(
                model, form, logged, policy=policy, random_state=0
            )
            for m in ("ips", "snips", "dr"):
                # Ridge solves sparse input iteratively (sparse_cg, tol 1e-4)
                rtol = 1e-5 if m == "dr" else 1e-12
                assert_allclose(res[m].value, ref[m].value, rtol=rtol, err_msg=m)
                assert_allclose(
                    res[m].std_error, ref[m].std_error, rtol=rtol, err_msg=m
                )
    # the scorer takes the same forms
    scorer = make_off_policy_scorer("dr", random_state=0)
    assert_allclose(
        scorer(clf_frame, frame, logged), scorer(clf, X, logged), rtol=1e-12
    )


def test_errors_name_the_users_arguments():
    clf, X, logged = _small_learner_log(n=40)
    # X and the log disagree: say which argument has how many rows
    with pytest.raises(ValueError, match=r"X has 38 rows but logged has 40 rounds"):
        off_policy_evaluation(clf, X[:38], logged)
    pi = np.full((40, 3), 1 / 3)
    with pytest.raises(ValueError, match=r"X has 38 rows but logged has 40 rounds"):
        evaluate_policy(pi, logged, [0, 1, 2], X=X[:38], methods=["dr"])
    with pytest.raises(
        ValueError, match=r"target_proba has 39 rows but logged has 40 rounds"
    ):
        evaluate_policy(pi[:39], logged, [0, 1, 2])
    with pytest.raises(
        ValueError, match=r"target_proba has 2 columns but classes has 3 actions"
    ):
        evaluate_policy(pi[:, :2] * 1.5, logged, [0, 1, 2])
    with pytest.raises(ValueError, match=r"target_proba must be 2-D"):
        evaluate_policy(pi[:, 0], logged, [0, 1, 2])
    with pytest.raises(TypeError, match="logged must be a LoggedFeedback"):
        off_policy_evaluation(clf, X, np.zeros(40))


@pytest.mark.parametrize(
    "corrupt, message",
    [
        (lambda pi: pi.__setitem__((3, 0), np.nan), r"non-finite .* rows \[3\]"),
        (lambda pi: pi.__setitem__((4, 1), np.inf), r"non-finite .* rows \[4\]"),
        # a row that still sums to one but has a negative entry
        (
            lambda pi: pi.__setitem__((5, slice(None)), [-0.5, 1.0, 0.5]),
            r"negative probabilities in rows \[5\]",
        ),
        (lambda pi: pi.__setitem__((6, 2), 0.9), r"sum to one .* rows \[6\]"),
        (lambda pi: pi.__imul__(2.0), r"sum to one .* rows \[0, 1, 2"),
    ],
    ids=["nan", "inf", "negative", "row-sum", "all-doubled"],
)
def test_target_proba_must_be_a_distribution(corrupt, message):
    """A target policy is a probability vector per round: finite, non-negative,
    summing to one. Before, such rows were used as weights without a word."""
    _, X, logged = _small_learner_log(n=40)
    pi = np.full((40, 3), 1 / 3)
    corrupt(pi)
    with pytest.raises(ValueError, match=message):
        evaluate_policy(pi, logged, [0, 1, 2], X=X)
