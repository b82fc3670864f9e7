"""skbandit learners inside scikit-learn tools: pipelines, clone, model selection."""

from __future__ import annotations

import csv
import gzip

import numpy as np
import pytest
from _registry import entry_params
from conftest import shared_data_file
from sklearn.base import clone
from sklearn.datasets import load_digits
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler

from skbandit import Banditron

ALL = entry_params()


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X, y


@pytest.mark.parametrize("entry", ALL)
def test_pipeline_and_cross_validation(entry, digits):
    X, y = digits
    pipe = make_pipeline(MinMaxScaler(), entry.make(random_state=0))
    scores = cross_val_score(pipe, X, y, cv=3)
    # Five shuffled passes over 1,198 digits: far above the 0.1 of guessing.
    assert scores.shape == (3,)
    assert np.all(scores > 0.5)


@pytest.mark.parametrize("entry", ALL)
def test_clone_is_unfitted_with_same_params(entry, digits):
    X, y = digits
    est = entry.make(random_state=3).fit(X / 16, y)
    twin = clone(est)
    assert twin.get_params() == est.get_params()
    assert not hasattr(twin, "coef_")
    np.testing.assert_array_equal(twin.fit(X / 16, y).coef_, est.coef_)


def test_grid_search_over_gamma(digits):
    X, y = digits
    grid = GridSearchCV(
        Banditron(random_state=0), {"gamma": [0.01, 0.1, 0.5]}, cv=3, n_jobs=1
    )
    grid.fit(X / 16, y)
    assert grid.best_params_["gamma"] in (0.01, 0.1, 0.5)
    assert grid.best_score_ > 0.5
    assert grid.best_estimator_.t_ == grid.best_estimator_.max_iter * len(y)


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
        Banditron(gamma=0.3, max_iter=10, random_state=0),
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
