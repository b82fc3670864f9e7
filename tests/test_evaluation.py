"""Progressive validation: equal to the learner's own counters and log."""

from __future__ import annotations

import copy
import json
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_digits
from sklearn.linear_model import Perceptron, SGDClassifier

from skbandit import BanditFeedback, Banditron, MulticlassPerceptron
from skbandit.evaluation import (
    ComparisonResult,
    compare,
    iter_progressive_validation,
    log_checkpoints,
    progressive_validation,
)
from skbandit.exploration import EpsilonGreedy


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X[:600] / 16.0, y[:600]


def test_log_checkpoints_end_at_n_and_are_increasing():
    for n in (1, 2, 7, 1000, 123_457):
        points = log_checkpoints(n, 30)
        assert points[0] == 1 and points[-1] == n
        assert np.all(np.diff(points) > 0)


@pytest.mark.parametrize("chunk_size", [1, 7, 100, 10_000])
@pytest.mark.parametrize("sparse", [False, True])
def test_equals_learner_counters_and_feedback_log(digits, chunk_size, sparse):
    X, y = digits
    if sparse:
        X = sp.csr_matrix(X)
    clf = Banditron(exploration=EpsilonGreedy(0.2), random_state=3)
    result = progressive_validation(
        clf, X, y, chunk_size=chunk_size, checkpoints=20, log=True
    )
    # The learner's own counters.
    assert result.n_rounds == clf.t_ == len(y)
    assert result.n_mistakes == clf.n_mistakes_
    assert result.n_greedy_mistakes == clf.n_greedy_mistakes_
    # The log: global row indices across chunks, and the same play as one call.
    log = result.log
    np.testing.assert_array_equal(log["rows"], np.arange(len(y)))
    assert int(np.sum(log["rewards"] == 0)) == result.n_mistakes
    wrong = np.cumsum(log["rewards"] == 0)
    np.testing.assert_array_equal(result.mistakes, wrong[result.rounds - 1])
    feedback = BanditFeedback(y)
    ref = Banditron(exploration=EpsilonGreedy(0.2), random_state=3).partial_fit(
        X, feedback, classes=np.unique(y)
    )
    np.testing.assert_array_equal(log["actions"], feedback.actions_)
    np.testing.assert_array_equal(log["rewards"], feedback.rewards_)
    np.testing.assert_array_equal(log["propensities"], feedback.propensities_)
    np.testing.assert_array_equal(clf.coef_, ref.coef_)


def test_empty_stream_has_an_empty_feedback_log():
    result = progressive_validation(
        Banditron(random_state=0),
        np.empty((0, 3)),
        np.empty(0, dtype=int),
        classes=[0, 1],
        log=True,
    )
    assert result.n_rounds == 0
    assert list(result.log) == ["rows", "actions", "rewards", "propensities"]
    assert all(values.shape == (0,) for values in result.log.values())


def test_greedy_mistakes_at_checkpoints_match_counters(digits):
    X, y = digits
    points = [5, 50, 333]
    clf = Banditron(exploration=EpsilonGreedy(0.1), random_state=0)
    result = progressive_validation(clf, X, y, chunk_size=64, checkpoints=points)
    assert result.rounds.tolist() == [5, 50, 333, len(y)]
    for t, greedy in zip(result.rounds, result.greedy_mistakes, strict=True):
        ref = Banditron(exploration=EpsilonGreedy(0.1), random_state=0)
        ref.partial_fit(X[:t], y[:t], classes=np.unique(y))
        assert greedy == ref.n_greedy_mistakes_


def test_greedy_error_counts_the_greedy_action_not_the_played_one(digits):
    """A Banditron trained on 300 labelled rows, then validated on 300 more
    with EpsilonGreedy(0.9): it plays a uniform action 90% of the time (played
    error near 0.8) while its greedy action errs far less often, so the two
    counts differ by construction. The reported greedy mistakes (every checkpoint),
    ``greedy_error``, ``summary``, ``to_dict`` and ``to_frame`` equal an
    independent count: a copy of the learner stepped row by row, its
    ``predict`` (the argmax of the current weights; no ties on a trained
    model) taken before each round, then the round played."""
    X, y = digits
    classes = np.unique(y)
    # (average=False: ``predict`` is the last iterate's argmax, the round's greedy)
    clf = Banditron(exploration=EpsilonGreedy(0.9), average=False, random_state=5)
    clf.fit(X[:300], y[:300])
    ref = copy.deepcopy(clf)
    result = progressive_validation(
        clf, X[300:], y[300:], chunk_size=40, checkpoints=[7, 100, 250]
    )
    greedy_wrong = []
    for i in range(300, len(y)):
        greedy_wrong.append(ref.predict(X[i : i + 1])[0] != y[i])
        ref.partial_fit(X[i : i + 1], y[i : i + 1], classes=classes)
    cumulative = np.cumsum(greedy_wrong)
    n = len(greedy_wrong)
    assert ref.t_ == clf.t_  # the copy played the same rounds
    # not vacuous: played and greedy mistakes far apart
    assert result.n_mistakes > cumulative[-1] + 50
    np.testing.assert_array_equal(result.greedy_mistakes, cumulative[result.rounds - 1])
    assert result.greedy_error == cumulative[-1] / n
    assert result.summary()["greedy_error"] == cumulative[-1] / n
    assert result.to_dict()["summary"]["greedy_error"] == cumulative[-1] / n
    try:
        import pandas  # noqa: F401
    except ImportError:
        return
    frame = result.to_frame()
    np.testing.assert_array_equal(
        frame["greedy_error"], cumulative[result.rounds - 1] / result.rounds
    )


def test_warm_learner_counts_only_new_rounds(digits):
    X, y = digits
    clf = Banditron(exploration=EpsilonGreedy(0.1), random_state=0).partial_fit(
        X[:100], y[:100], classes=np.unique(y)
    )
    before = clf.n_mistakes_
    result = progressive_validation(clf, X[100:], y[100:], chunk_size=50)
    assert result.n_rounds == len(y) - 100
    assert result.n_mistakes == clf.n_mistakes_ - before


def test_full_information_minibatch_matches_hand_loop(digits):
    X, y = digits
    classes = np.unique(y)
    result = progressive_validation(
        Perceptron(random_state=0), X, y, chunk_size=50, checkpoints=[10, 75]
    )
    assert result.feedback == "full"
    assert "mini-batch of 50 rows" in result.protocol
    model, wrong = Perceptron(random_state=0), []
    for lo in range(0, len(y), 50):
        Xc, yc = X[lo : lo + 50], y[lo : lo + 50]
        pred = model.predict(Xc) if lo else np.full(len(yc), classes[0])
        wrong.append(pred != yc)
        model.partial_fit(Xc, yc, classes=classes)
    cumulative = np.cumsum(np.concatenate(wrong))
    np.testing.assert_array_equal(result.mistakes, cumulative[result.rounds - 1])
    np.testing.assert_array_equal(result.greedy_mistakes, result.mistakes)
    assert np.all(np.diff(result.seconds) >= 0)


def test_skbandit_full_information_learner_is_labelled_full(digits):
    X, y = digits
    result = progressive_validation(MulticlassPerceptron(random_state=0), X, y)
    assert result.feedback == "full" and "one round per row" in result.protocol


def test_results_are_data(digits):
    X, y = digits
    results = compare(
        {
            "Banditron": Banditron(exploration=EpsilonGreedy(0.1), random_state=0),
            "Perceptron": Perceptron(random_state=0),
            "SGD": SGDClassifier(loss="hinge", random_state=0),
        },
        X,
        y,
        chunk_size=100,
        checkpoints=10,
    )
    assert isinstance(results, ComparisonResult) and len(results) == 3
    assert results["SGD"] is results[2]
    data = json.loads(json.dumps(results.to_dict()))
    assert [r["name"] for r in data["results"]] == ["Banditron", "Perceptron", "SGD"]
    assert data["results"][0]["summary"]["mistakes"] == results[0].n_mistakes
    text = str(results)
    assert "Banditron" in text and "bandit" in text and "full" in text
    pd = pytest.importorskip("pandas")
    frame = results.to_frame()
    assert isinstance(frame, pd.DataFrame) and list(frame["learner"]) == [
        "Banditron",
        "Perceptron",
        "SGD",
    ]
    curves = results.to_frame(curves=True)
    assert len(curves) == sum(len(r.rounds) for r in results)
    assert np.allclose(results[0].to_frame()["error"].iloc[-1], results[0].error)


def test_to_frame_without_pandas_says_what_to_install(digits, monkeypatch):
    X, y = digits
    result = progressive_validation(Banditron(random_state=0), X, y)
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="pip install pandas"):
        result.to_frame()
    assert result.to_dict()["summary"]["rounds"] == len(y)


def test_progress_bar_only_on_a_terminal(digits, capsys):
    X, y = digits
    progressive_validation(Banditron(random_state=0), X, y, progress=True)
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""


def test_generator_yields_checkpoints_in_order(digits):
    X, y = digits
    steps = list(
        iter_progressive_validation(
            Banditron(random_state=0), X, y, checkpoints=[1, 2, 3]
        )
    )
    assert [s["round"] for s in steps] == [1, 2, 3, len(y)]
    assert all(s["mistakes"] <= s["round"] for s in steps)


def test_errors():
    X, y = np.eye(3), np.arange(3)
    with pytest.raises(TypeError, match="partial_fit"):
        progressive_validation(object(), X, y)
    with pytest.raises(ValueError, match="checkpoints"):
        progressive_validation(Banditron(), X, y, checkpoints=[0, 2])
    with pytest.raises(ValueError, match="chunk_size"):
        progressive_validation(Banditron(), X, y, chunk_size=0)
    with pytest.raises(ValueError, match="rows"):
        progressive_validation(Banditron(), X, y[:2])


def test_no_progress_bar_unless_asked(capsys):
    """Progressive validation is silent by default (``progress=False``): a
    bar on stderr only when asked for."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(200, 5)), rng.integers(0, 3, 200)
    list(iter_progressive_validation(Banditron(random_state=0), X, y, chunk_size=50))
    progressive_validation(Banditron(random_state=0), X, y, chunk_size=50)
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""
