"""No label leak: a bandit learner depends on the true label only through the reward.

In the bandit protocol the learner plays an action and is told only whether it
was right (Kakade, Shalev-Shwartz & Tewari 2008). On a round whose played action
was wrong it knows only that the label is not that action; so replacing the
label by any other wrong label on such rounds must change nothing the learner
does: the played actions, the rewards, the logged propensities and its whole
state (weights, generator, counters) stay the same.

The one exception is ``n_greedy_mistakes_``, the simulator's evaluation of the
greedy label against the true label: it legitimately changes when the true label
changes, and no learning depends on it (every other part of the state is
compared), so it is set aside before the comparison.

A leak may act only where the learner has a free choice, such as breaking exact
ties of the greedy argmax, and a single relabelling may miss it. So each stream
is relabelled 20 times with different seeds, on streams where exact ties are
frequent: sparse binary-valued rows, which often touch only features whose weights
are still equal across classes, and empty rows (all scores equal).

A Python-loop meta-estimator (``Entry.python_loop``: ``RegressionReduction``)
is relabelled fewer times (``N_RELABELINGS_PYTHON_LOOP``): each of its rounds
costs tens of times a kernel's, and its one free choice, the greedy label among
exact ties, is the compiled ``argmax`` with ties by ``u2`` that every kernel
uses (``py_argmax_ties``), relabelled 20 times on the kernels' entries. What is
its own (the targets each regressor learns, its buffer) sees every changed
label on every relabelling, so two relabellings (each changing every label it
may) suffice for it: a leak through its own code changes the learner on the
first, and the second, with another seed, changes the labels again.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from _data import make_stream
from _helpers import assert_same_learner, assert_same_log
from _registry import BANDIT_ENTRIES, entry_params, paired

from skbandit import BanditFeedback

BANDIT = entry_params(BANDIT_ENTRIES)
N_RELABELINGS = 20
N_RELABELINGS_PYTHON_LOOP = 2
STRING_LABELS = np.array(["ant", "bee", "cat", "dog", "eel", "fox", "gnu"])


def _as(X, container):
    return sp.csr_matrix(X) if container == "csr" else X


def _tie_stream(n, k, seed):
    """Binary features, about 3 of 100 per row: most rows touch features whose
    weights are still equal across classes, so exact ties are frequent (a fifth
    to a third of the Banditron's rounds), also on non-empty rows."""
    X, y = make_stream(
        n=n, d=100, k=k, kind="binary", density=0.03, n_empty=0, seed=seed
    )
    # empty rows: first, in a run, isolated, last
    X[[0, 1, 5, 6, 7, n // 2, n - 1]] = 0.0
    return X, y


def _relabel(rng, y, labels, exclude_per_item):
    """A copy of ``y`` where item ``i`` of ``exclude_per_item`` (a dict item ->
    set of labels it may not take) gets a random label outside that set."""
    y2 = y.copy()
    for i, exclude in exclude_per_item.items():
        allowed = [c for c in labels if c not in exclude]
        if allowed:
            y2[i] = allowed[rng.integers(len(allowed))]
    return y2


def _n_relabelings(entry) -> int:
    return N_RELABELINGS_PYTHON_LOOP if entry.python_loop else N_RELABELINGS


def _assert_same_learner_but_greedy_count(est2, est1):
    # n_greedy_mistakes_ scores the greedy label against the (changed) true label
    est2.n_greedy_mistakes_ = est1.n_greedy_mistakes_
    assert_same_learner(est2, est1)


def _partial_fit_in_two_calls(entry, seed, Xc, y, labels, split):
    """partial_fit on rows [:split] then [split:] (the second call continues the
    state and the generator of the first); the two feedback logs."""
    est = entry.make(random_state=seed)
    logs = [BanditFeedback(y[:split]), BanditFeedback(y[split:])]
    est.partial_fit(Xc[:split], logs[0], classes=labels)
    est.partial_fit(Xc[split:], logs[1])
    return est, logs


# every learner on both containers and both numbers of classes (paired in
# turn, the full product on one learner)
@pytest.mark.parametrize(
    "entry, container, k", paired(["dense", "csr"], [3, 5], BANDIT_ENTRIES)
)
def test_label_leak_partial_fit(entry, container, k):
    """Every round whose played action was wrong gets another wrong label."""
    n, seed, split = 300, 40 + k, 113
    X, y = _tie_stream(n, k, seed)
    Xc = _as(X, container)
    labels = np.arange(k)
    est1, logs1 = _partial_fit_in_two_calls(entry, seed, Xc, y, labels, split)
    played = np.concatenate([fb.actions_ for fb in logs1])
    wrong = np.flatnonzero(played != y)
    # the test is only meaningful if many labels change
    assert len(wrong) > n // 4

    for r in range(_n_relabelings(entry)):
        rng = np.random.default_rng(1000 * r + k)
        y2 = _relabel(rng, y, labels, {t: {y[t], played[t]} for t in wrong})
        assert np.count_nonzero(y2 != y) == len(wrong)
        est2, logs2 = _partial_fit_in_two_calls(entry, seed, Xc, y2, labels, split)
        for fb2, fb1 in zip(logs2, logs1, strict=True):
            assert_same_log(fb2, fb1)
        _assert_same_learner_but_greedy_count(est2, est1)


@pytest.mark.parametrize(
    "entry, container, shuffle", paired(["dense", "csr"], [True, False], BANDIT_ENTRIES)
)
def test_label_leak_fit_several_epochs_string_labels(entry, container, shuffle):
    """``fit(max_iter=3)`` with string labels: every row whose plays were all wrong
    gets a label that is neither its true label nor any action played on it."""
    k, n, seed = 6, 200, 3
    X, y = _tie_stream(n, k, seed)
    Xc = _as(X, container)
    labels = STRING_LABELS[:k]
    est1 = entry.make(random_state=seed, max_iter=3, shuffle=shuffle)
    fb1 = BanditFeedback(labels[y])
    est1.fit(Xc, fb1)
    assert fb1.n_rounds_ == 3 * n
    ever_right = np.zeros(n, dtype=bool)
    ever_right[fb1.rows_[fb1.rewards_ == 1]] = True
    never_right = np.flatnonzero(~ever_right)
    exclude = {
        i: {labels[y[i]], *fb1.actions_[fb1.rows_ == i].tolist()} for i in never_right
    }
    changeable = [i for i, ex in exclude.items() if len(ex) < k]
    # the test is only meaningful if many labels change
    assert len(changeable) > n // 5, len(changeable)

    for r in range(_n_relabelings(entry)):
        rng = np.random.default_rng(7 + r)
        y2 = _relabel(rng, labels[y], labels, exclude)
        assert np.count_nonzero(y2 != labels[y]) == len(changeable)
        est2 = entry.make(random_state=seed, max_iter=3, shuffle=shuffle)
        fb2 = BanditFeedback(y2)
        est2.fit(Xc, fb2)
        assert_same_log(fb2, fb1)
        _assert_same_learner_but_greedy_count(est2, est1)


@pytest.mark.parametrize("entry", BANDIT)
def test_streams_have_many_ties(entry):
    """The streams above exercise tie breaking: before many rounds, also on
    non-empty rows, several classes share the top score of the current model."""
    if entry.intercept:
        pytest.skip("fitted intercepts break the ties (its no-intercept variant runs)")
    k, n, seed = 5, 300, 45
    X, y = _tie_stream(n, k, seed)
    est = entry.make(random_state=seed)
    est.partial_fit(X[:1], y[:1], classes=np.arange(k))
    n_ties = 0
    for t in range(1, n):
        scores = est.decision_function(X[t : t + 1])[0]
        n_ties += X[t].any() and np.count_nonzero(scores == scores.max()) > 1
        est.partial_fit(X[t : t + 1], y[t : t + 1])
    assert n_ties > n // 10, n_ties
