"""skbandit learners inside coba (``skbandit.integrations.coba``).

The adapter runs the live loop (``sample_actions``, coba's reward,
``partial_fit(LoggedFeedback)``), so by the on-policy equivalence of
docs/logged.md a coba experiment on digits must play exactly the actions of
skbandit's own simulator on the same rows in the same order. coba is
installed by the ``tests`` extra.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.datasets import load_digits

from skbandit import BanditFeedback, Banditron, MulticlassPerceptron
from skbandit.linear_model import SquareCB

coba = pytest.importorskip("coba")
from skbandit.integrations.coba import (  # noqa: E402
    CobaLearner,
    make_coba_environment,
)


def _digits(n=None):
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    return (X, y) if n is None else (X[:n], y[:n])


def _run(env, learners):
    result = coba.Experiment(env, learners, coba.SequentialCB()).run(
        quiet=True, processes=1
    )
    frame = result.interactions.to_pandas()
    return frame.sort_values(["learner_id", "index"])


def _played(frame):
    """The played actions as class positions (coba records a categorical action
    as its one-hot tuple)."""
    onehot = np.array(frame["action"].tolist())
    assert onehot.ndim == 2 and np.all(onehot.sum(axis=1) == 1)
    return onehot.argmax(axis=1)


def _simulate(make, X, y):
    feedback = BanditFeedback(y)
    make().partial_fit(X, feedback, classes=np.unique(y))
    return feedback


@pytest.mark.parametrize(
    "make",
    [lambda: Banditron(random_state=0), lambda: SquareCB(random_state=3)],
    ids=["Banditron", "SquareCB"],
)
def test_coba_experiment_plays_the_simulators_actions(make):
    X, y = _digits()
    order = np.random.default_rng(0).permutation(len(y))
    X, y = X[order], y[order]
    frame = _run(make_coba_environment(X, y, name="digits"), [CobaLearner(make())])
    assert len(frame) == len(y)  # every interaction recorded
    feedback = _simulate(make, X, y)
    assert_array_equal(_played(frame), feedback.actions_)
    assert_array_equal(frame["reward"].to_numpy(), feedback.rewards_)
    # coba stores the probabilities rounded to 5 decimals
    assert_allclose(frame["probability"].to_numpy(), feedback.propensities_, atol=6e-6)


def test_the_adapters_learner_ends_in_the_simulators_state():
    X, y = _digits(300)
    learner = CobaLearner(Banditron(random_state=0))
    env = make_coba_environment(X, y)
    for interaction in env[0].read():
        action, prob = learner.predict(interaction["context"], interaction["actions"])
        assert any(action is a for a in interaction["actions"])  # coba's own object
        reward = interaction["rewards"](action)
        learner.learn(interaction["context"], action, reward, prob)
    reference = Banditron(random_state=0).partial_fit(X, y, classes=np.arange(10))
    assert_array_equal(learner.learner_.coef_, reference.coef_)
    assert learner.learner_.t_ == reference.t_ == 300
    assert learner.learner_.n_mistakes_ == reference.n_mistakes_
    assert learner.n_interactions_ == 300


def test_sparse_contexts_through_the_hasher():
    """Dict contexts go through the FeatureHasher: the adapter plays what the
    simulator plays on the hashed matrix."""
    X, y = _digits(250)
    Xs = sp.csr_matrix(X)
    env = make_coba_environment(Xs, y)
    contexts = [i["context"] for i in env[0].read()]
    assert isinstance(contexts[0], dict)
    assert contexts[0] == {str(j): X[0, j] for j in np.flatnonzero(X[0])}
    frame = _run(env, [CobaLearner(Banditron(random_state=1))])
    hashed = CobaLearner(Banditron())._vectorizer.transform(contexts)
    feedback = _simulate(lambda: Banditron(random_state=1), hashed, y)
    assert_array_equal(_played(frame), feedback.actions_)


def test_environment_from_arrays_avoids_cobas_traps():
    X, y = _digits(50)
    env = make_coba_environment(X, y)
    first = list(env[0].read())
    second = list(env[0].read())
    # read twice: the same 50 interactions (from_supervised(X, Y) gives 0)
    assert len(first) == len(second) == 50
    # integer labels stay classes: ten categorical actions, which coba hands to
    # learners one-hot (VW's encoding), in the sorted labels' order; reward 1 at
    # the label
    actions = first[0]["actions"]
    assert actions == [tuple(row) for row in np.eye(10, dtype=int).tolist()]
    for i, interaction in enumerate(first):
        rewards = [interaction["rewards"](a) for a in actions]
        assert rewards == [float(c == y[i]) for c in range(10)]
        assert interaction["context"] == X[i].tolist()
    # numeric order, not string order: 10 comes after 9
    env = make_coba_environment(np.zeros((3, 1)), np.array([10, 9, 2]))
    interaction = next(iter(env[0].read()))
    assert interaction["rewards"](interaction["actions"][2]) == 1  # label 10
    # string labels and a DataFrame
    pd = pytest.importorskip("pandas")
    env = make_coba_environment(pd.DataFrame(X[:4]), np.array(["b", "a", "c", "a"]))
    interaction = next(iter(env[0].read()))
    assert interaction["context"] == X[0].tolist()
    assert interaction["rewards"](interaction["actions"][1]) == 1  # "b"
    with pytest.raises(ValueError, match="X has 50 rows but y has 49 labels"):
        make_coba_environment(X, y[:49])


def test_clear_errors():
    learner = CobaLearner(Banditron(random_state=0))
    with pytest.raises(ValueError, match="before any predict"):
        learner.learn([0.0, 1.0], "a", 1.0, 0.5)
    learner.predict([0.0, 1.0], ["a", "b", "c"])
    with pytest.raises(
        ValueError, match=r"action set changed at interaction 1.*3 actions"
    ):
        learner.predict([0.0, 1.0], ["a", "b"])
    with pytest.raises(ValueError, match="action set changed"):
        learner.predict([0.0, 1.0], ["a", "c", "b"])  # same actions, other order
    with pytest.raises(ValueError, match="contexts changed form"):
        learner.predict({"x": 1.0}, ["a", "b", "c"])
    with pytest.raises(ValueError, match="not in the action set"):
        learner.learn([0.0, 1.0], "z", 1.0, 0.5)
    with pytest.raises(ValueError, match="finite action set"):
        CobaLearner(Banditron()).predict([1.0], [])
    with pytest.raises(ValueError, match="numeric dense contexts"):
        CobaLearner(Banditron()).predict(["red", "blue"], ["a", "b"])
    with pytest.raises(TypeError, match="skbandit bandit learner"):
        CobaLearner(object())
    # a full-information learner cannot learn from logged rounds
    full = CobaLearner(MulticlassPerceptron())
    action, prob = full.predict([1.0, 0.0], ["a", "b"])
    with pytest.raises(TypeError, match="full-information"):
        full.learn([1.0, 0.0], action, 1.0, prob)
    assert learner.params["family"] == "skbandit.Banditron"
    assert learner.params["random_state"] == 0
