"""skbandit learners inside scikit-learn tools: pipelines, clone, model selection."""

from __future__ import annotations

import csv
import gzip

import numpy as np
import pytest
from _registry import entry_params
from conftest import shared_data_file
from numpy.testing import assert_array_equal
from sklearn.base import clone
from sklearn.datasets import load_digits
from sklearn.exceptions import NotFittedError
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler

from skbandit import Banditron
from skbandit.exploration import EpsilonGreedy

ALL = entry_params()


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X, y


# A Python-loop meta-estimator (``Entry.python_loop``: a scikit-learn model per
# class, updated from Python) meets the first 600 digits: the checks below are
# about cloning and fitting, which a third of the rows exercises as well.
PYTHON_LOOP_ROWS = 600
# The clone test asserts no accuracy, only that a clone is unfitted and learns
# the same, bit for bit, as the original without touching it: a Python-loop
# learner's 200 first digits (every class, 5 passes of 200 rounds) exercise
# all of it, at a third of the cost.
PYTHON_LOOP_CLONE_ROWS = 200


def _digits_for(entry, digits, python_loop_rows=PYTHON_LOOP_ROWS):
    X, y = digits
    if entry.python_loop:
        return X[:python_loop_rows], y[:python_loop_rows]
    return X, y


@pytest.mark.parametrize("entry", ALL)
def test_pipeline_and_cross_validation(entry, digits):
    X, y = _digits_for(entry, digits)
    pipe = make_pipeline(MinMaxScaler(), entry.make(random_state=0))
    cv = KFold(n_splits=2, shuffle=True, random_state=0)
    scores = cross_val_score(pipe, X, y, cv=cv)
    # Each fold fits a fresh clone of the pipeline: the second fold's score is
    # that of a clone fitted by hand (a learner whose state or generator
    # leaked from the first fold's clone into the second's, or whose fit was
    # not deterministic under random_state, would differ).
    train, test = list(cv.split(X))[-1]
    by_hand = clone(pipe).fit(X[train], y[train]).score(X[test], y[test])
    assert scores[-1] == by_hand
    # Five shuffled passes over half the digits, about 900 (300 for a
    # Python-loop learner): far above the 0.1 of guessing.
    assert np.all(scores > 0.5), scores


@pytest.mark.parametrize("entry", ALL)
def test_clone_is_unfitted_with_same_params(entry, digits):
    """A clone has no fitted attribute, refuses to predict, and learns the
    original's state bit for bit from the same data and seed; learning more
    with the clone leaves the original as it was (caught: fitted state or a
    shared array copied by ``clone``, a generator shared between the two)."""
    X, y = _digits_for(entry, digits, PYTHON_LOOP_CLONE_ROWS)
    est = entry.make(random_state=3).fit(X / 16, y)
    state = {n: np.copy(getattr(est, n)) for n in est._state_attrs}
    twin = clone(est)
    for attr in ("coef_", "classes_", "t_", "n_mistakes_", "n_features_in_"):
        assert not hasattr(twin, attr), attr
    with pytest.raises(NotFittedError):
        twin.predict(X)
    # the clone learns the same from the same data and seed, without touching
    # the original
    twin.fit(X / 16, y)
    for name, value in state.items():
        assert_array_equal(getattr(twin, name), value, err_msg=name)
    twin.partial_fit(X / 16, y)
    for name, value in state.items():
        assert_array_equal(getattr(est, name), value, err_msg=name)


def test_grid_search_over_epsilon(digits):
    X, y = digits
    X = X / 16
    gammas = [0.01, 0.1, 0.5]
    cv = KFold(n_splits=3, shuffle=True, random_state=1)
    # the default rule's epsilon (exploration=None: set_params makes it the
    # rule's object)
    grid = GridSearchCV(
        Banditron(random_state=0), {"exploration__epsilon": gammas}, cv=cv
    )
    grid.fit(X, y)
    means = grid.cv_results_["mean_test_score"]
    # gamma reaches the learner: each value gives different held-out scores,
    # equal to cross-validating that setting by hand
    assert len(set(means)) == len(gammas), means
    for gamma, mean in zip(gammas, means, strict=True):
        by_hand = cross_val_score(
            Banditron(exploration=EpsilonGreedy(gamma), random_state=0), X, y, cv=cv
        )
        assert mean == pytest.approx(by_hand.mean(), rel=1e-12), gamma
    assert grid.best_score_ > 0.5
    # the refit learner made max_iter passes over all rows with the chosen gamma
    best = grid.best_estimator_
    assert best.t_ == best.max_iter * len(y)
    assert_array_equal(
        best.coef_,
        Banditron(random_state=0).set_params(**grid.best_params_).fit(X, y).coef_,
    )


def _mini_newsgroups():
    path = shared_data_file("mini_newsgroups.tsv.gz")
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        rows = list(csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    header, rows = rows[0], rows[1:]
    assert header == ["label", "text"]
    labels = np.array([r[0] for r in rows])
    texts = [r[1] for r in rows]
    return texts, labels


def test_text_pipeline_on_sparse_tfidf():
    """String labels and sparse tf-idf rows straight from a vectorizer."""
    texts, labels = _mini_newsgroups()
    assert len(np.unique(labels)) == 20
    rng = np.random.default_rng(0)
    order = rng.permutation(len(texts))
    train, test = order[:1500], order[1500:]
    pipe = make_pipeline(
        TfidfVectorizer(sublinear_tf=True, min_df=2),
        Banditron(exploration=EpsilonGreedy(0.3), max_iter=10, random_state=0),
    )
    pipe.fit([texts[i] for i in train], labels[train])
    clf = pipe[-1]
    assert set(clf.classes_) == set(labels)
    accuracy = pipe.score([texts[i] for i in test], labels[test])
    # 20 classes: guessing scores 0.05. Ten bandit passes over 1,500 posts must
    # learn far beyond that; full-information linear models (sklearn Perceptron,
    # SGDClassifier, MulticlassPerceptron) score about 0.9 on this split, as the
    # posts keep their headers. Six times chance is the bar.
    assert accuracy > 0.3
