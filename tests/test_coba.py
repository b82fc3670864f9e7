"""skbandit learners inside coba (``skbandit.integrations.coba``).

The adapter runs the live loop (``sample_actions``, coba's reward,
``partial_fit(LoggedFeedback)``), so by the on-policy equivalence of
docs/logged.md a coba experiment on digits must play exactly the actions of
skbandit's own simulator on the same rows in the same order. coba is
installed by the ``tests`` extra.
"""

from __future__ import annotations

import re
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.datasets import load_digits

from skbandit import BanditFeedback, Banditron, LoggedFeedback, MulticlassPerceptron
from skbandit.linear_model import SquareCB

coba = pytest.importorskip("coba")
from skbandit.integrations.coba import (  # noqa: E402
    CobaLearner,
    CobaLearnerWarning,
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
    refused = pytest.warns(CobaLearnerWarning)  # coba catches the exceptions
    with (
        refused,
        pytest.raises(
            ValueError, match=r"action set changed at interaction 1.*3 actions"
        ),
    ):
        learner.predict([0.0, 1.0], ["a", "b"])
    with refused, pytest.raises(ValueError, match="action set changed"):
        learner.predict([0.0, 1.0], ["a", "c", "b"])  # same actions, other order
    with refused, pytest.raises(ValueError, match="contexts changed form"):
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
    with refused, pytest.raises(TypeError, match="full-information"):
        full.learn([1.0, 0.0], action, 1.0, prob)
    assert learner.params["family"] == "skbandit.Banditron"
    assert learner.params["random_state"] == 0


# coba's own synthetic environments, as they come


def _synthetic(kind="linear", n=300, **kwargs):
    make = getattr(coba.Environments, f"from_{kind}_synthetic")
    return make(n, n_actions=3, n_context_features=2, seed=1, **kwargs)


def _rewards(env):
    """Every action's reward of every interaction of a coba environment."""
    return np.array([[i["rewards"](a) for a in i["actions"]] for i in env[0].read()])


def test_synthetic_rewards_outside_0_1_run_with_a_declared_range():
    """coba's linear synthetic rewards stray outside [0, 1]: with the declared
    range every interaction is recorded, and the learner learns
    (r - low) / (high - low), so it ends where the simulator ends on the
    rescaled rewards."""
    env = _synthetic(n_action_features=0)
    rewards = _rewards(env)
    assert rewards.min() < 0 or rewards.max() > 1  # the case of the issue
    low, high = -1.0, 2.0
    frame = _run(env, [CobaLearner(SquareCB(random_state=0), reward_range=(low, high))])
    assert len(frame) == len(rewards)
    # the recorded rewards are the environment's own
    played = _played(frame)
    assert_allclose(
        frame["reward"].to_numpy(), rewards[np.arange(len(played)), played], atol=1e-5
    )
    # the learner's state: the same rounds learned from the rescaled rewards
    adapter = CobaLearner(SquareCB(random_state=0), reward_range=(low, high))
    reference = SquareCB(random_state=0)
    for t, interaction in enumerate(env[0].read()):
        action, prob = adapter.predict(interaction["context"], interaction["actions"])
        reward = interaction["rewards"](action)
        adapter.learn(interaction["context"], action, reward, prob)
        row = np.array([interaction["context"]])
        kwargs = {"classes": np.arange(3)} if t == 0 else {}
        drawn, p = reference.sample_actions(row, **kwargs)
        assert int(drawn[0]) == interaction["actions"].index(action)
        scaled = (rewards[t, int(drawn[0])] - low) / (high - low)
        reference.partial_fit(row, LoggedFeedback(drawn, [scaled], p))
    assert_array_equal(adapter.learner_.coef_, reference.coef_)


@pytest.mark.parametrize("kind", ["neighbors", "mlp"])
def test_synthetic_environments_within_0_1_run_at_the_default(kind):
    env = _synthetic(kind, n=200, n_action_features=0)
    assert 0 <= _rewards(env).min() and _rewards(env).max() <= 1
    frame = _run(env, [CobaLearner(SquareCB(random_state=0))])
    assert len(frame) == 200


def test_reward_outside_the_range_is_refused_visibly():
    """Without a declared range a reward outside [0, 1] is refused at the
    interaction that brings it, with a message that names the reward and the
    remedy, as an exception and as a warning (coba catches the exception)."""
    env = _synthetic(n_action_features=0)
    with pytest.warns(
        CobaLearnerWarning, match=r"outside the reward range \[0, 1\].*reward_range"
    ):
        frame = _run(env, [CobaLearner(SquareCB(random_state=0))])
    assert len(frame) == 0  # coba leaves the learner out
    learner = CobaLearner(SquareCB(random_state=0))
    action, prob = learner.predict([0.0, 1.0], ["a", "b"])
    with (
        pytest.warns(CobaLearnerWarning),
        pytest.raises(ValueError, match=r"interaction 0 has the reward 1.108"),
    ):
        learner.learn([0.0, 1.0], action, 1.108, prob)
    assert not hasattr(learner.learner_, "t_") or learner.learner_.t_ == 0
    declared = CobaLearner(SquareCB(random_state=0), reward_range=(0, 2))
    action, prob = declared.predict([0.0, 1.0], ["a", "b"])
    with pytest.warns(CobaLearnerWarning), pytest.raises(ValueError, match=r"widen"):
        declared.learn([0.0, 1.0], action, 2.5, prob)
    for bad in [(1, 0), (0, np.inf), 1.0, ("low", 1), (0, 1, 2)]:
        with pytest.raises(ValueError, match="reward_range"):
            CobaLearner(SquareCB(), reward_range=bad)


def test_changing_action_sets_are_refused_visibly():
    """coba's synthetic environments with action features draw new actions
    each interaction: refused at the second one, and the refusal shows as a
    warning although coba catches the exception."""
    env = _synthetic(n=20)  # n_action_features=5 by default
    with pytest.warns(CobaLearnerWarning, match="action set changed at interaction 1"):
        frame = _run(env, [CobaLearner(SquareCB(random_state=0), reward_range=(-1, 2))])
    assert len(frame) == 0


def test_equal_action_sets_are_accepted_whatever_their_objects():
    """Actions are compared by equality: a new list of equal action objects
    each interaction (as coba builds them) is the same action set."""
    X, y = _digits(60)
    learner = CobaLearner(Banditron(random_state=0))
    for t in range(len(y)):
        actions = [[int(c == j) for c in range(10)] for j in range(10)]  # new lists
        action, prob = learner.predict(X[t].tolist(), actions)
        position = actions.index(action)
        learner.learn(X[t].tolist(), action, float(position == y[t]), prob)
    assert learner.n_interactions_ == len(y)
    # the live loop ends in the simulator's state (the on-policy equivalence)
    reference = Banditron(random_state=0).partial_fit(X, y, classes=np.arange(10))
    assert_array_equal(learner.learner_.coef_, reference.coef_)


def test_duplicate_sparse_entries_are_summed_in_the_contexts():
    """A CSR row with a column stored twice means the sum of its entries (as
    in SciPy): the environment's dict context has the summed value."""
    X = sp.csr_matrix(
        (np.array([1.0, 2.0, 0.5, 4.0]), np.array([3, 3, 1, 0]), np.array([0, 3, 4])),
        shape=(2, 5),
    )
    env = make_coba_environment(X, np.array([0, 1]))
    contexts = [i["context"] for i in env[0].read()]
    dense = X.toarray()
    assert contexts == [
        {str(j): dense[i, j] for j in np.flatnonzero(dense[i])} for i in range(2)
    ]
    assert contexts[0]["3"] == 3.0


def test_dict_context_keys_are_names_whatever_their_type():
    """Dict contexts with integer keys are the features named by those
    integers: the learner plays and learns exactly as with string keys."""
    X, y = _digits(80)
    rows = [{j: X[t, j] for j in np.flatnonzero(X[t])} for t in range(len(y))]
    learners = [CobaLearner(Banditron(random_state=2)) for _ in range(2)]
    for t, row in enumerate(rows):
        named = {str(k): v for k, v in row.items()}
        plays = []
        for learner, context in zip(learners, (row, named), strict=True):
            action, prob = learner.predict(context, list(range(10)))
            learner.learn(context, action, float(action == y[t]), prob)
            plays.append(action)
        assert plays[0] == plays[1]
    assert_array_equal(learners[0].learner_.coef_, learners[1].learner_.coef_)
    assert np.any(learners[0].learner_.coef_)


def test_the_gallery_example_declares_vowpalwabbit(monkeypatch):
    """examples/plot_coba.py runs coba's Vowpal Wabbit learners: without
    vowpalwabbit it stops with the install command (coba would drop the VW
    learners silently), and the extra that builds the gallery installs every
    package it imports."""
    import ast
    import runpy
    import tomllib
    from importlib.metadata import packages_distributions
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    example = root / "examples" / "plot_coba.py"
    monkeypatch.setitem(sys.modules, "vowpalwabbit", None)
    with pytest.raises(ImportError, match="pip install vowpalwabbit"):
        runpy.run_path(str(example))
    imported = set()
    for node in ast.walk(ast.parse(example.read_text())):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module.split(".")[0])
    assert "vowpalwabbit" in imported
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    declared = {
        re.split(r"[<>=!~\[ ;]", requirement, maxsplit=1)[0].lower()
        for requirement in project["dependencies"]
        + project["optional-dependencies"]["docs"]
    }
    dists = packages_distributions()
    needed = {
        dist.lower()
        for module in imported - {"skbandit"} - set(sys.stdlib_module_names)
        for dist in dists.get(module, [module])
    }
    assert needed <= declared, needed - declared


def test_params_are_the_learners_own_scalar_parameters():
    """coba's result columns: the family, the learner's top-level scalar
    parameters (no nested ``a__b`` keys, no objects), the vectorizer's class
    when there is one and the declared reward range."""
    from sklearn.feature_extraction import FeatureHasher

    from skbandit.exploration import EpsilonGreedy

    learner = Banditron(exploration=EpsilonGreedy(0.25), random_state=3)
    params = CobaLearner(learner).params
    assert params["family"] == "skbandit.Banditron"
    assert params["random_state"] == 3
    assert "exploration" not in params  # an object, not a scalar
    assert not any("__" in key for key in params)
    assert "vectorizer" not in params
    hashed = CobaLearner(learner, vectorizer=FeatureHasher(8), reward_range=(-1, 2))
    assert hashed.params["vectorizer"] == "FeatureHasher"
    assert hashed.params["reward_range"] == [-1, 2]


def test_action_previews_mark_only_truncated_sets():
    """An error naming an action set shows its first five actions and '...'
    only when there are more than five."""
    from skbandit.integrations.coba import _preview

    assert _preview(list(range(5))) == "[0, 1, 2, 3, 4]"
    assert _preview(list(range(6))) == "[0, 1, 2, 3, 4, ...]"
