"""Score twins of ``OnlineSelector``: candidates of one model score once.

Two candidates of one class with the same parameters but ``exploration``, the
same state bit for bit and both learning every round with the selector's
propensity (``candidate_learning="all"``) compute the same scores on every row
and learn the same update, so the selector computes their scores once
(``_score_twins``, ``SelectorKernel.set_twins``). The default candidates'
two ``SquareCB`` are such twins.

- A selector with twins plays, logs and ends in the same state, bit for bit, as
  one whose candidates all compute their own scores (dense and CSR rows, the
  simulator and logged feedback, many classes).
- No twins where the scores could differ: other parameters, other state (a
  candidate trained apart between two calls), a learning mode other than
  ``"all"``, a learner whose scores are not declared pure; none in blocks too
  short to check the states, none left on the kernel after a call; and the
  kernel refuses twin indices that are not earlier candidates computing their
  own scores.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from _data import make_stream
from numpy.testing import assert_array_equal

import skbandit.multiclass._selector as selector_module
from skbandit import (
    Banditron,
    ConservativeOneVsAll,
    LoggedFeedback,
    OffsetTree,
    OnlineSelector,
    SquareCB,
)
from skbandit.exploration import EpsilonGreedy, InverseGap
from skbandit.multiclass._candidates import _score_twins
from skbandit.optim import AdaGrad

ALL = 0  # the kernel's LEARN_ALL


def _no_twins(candidates, modes, all_mode):
    return np.full(len(candidates), -1, dtype=np.int32)


def _play(X, y, k, twins, monkeypatch, **params):
    """A selector's online pass (two calls) and one logged call, with the
    score twins as ``_score_twins`` finds them or none; the twins each block
    was given (blocks of at least ``_TWIN_MIN_ROWS`` rounds)."""
    found = []

    def recorded(candidates, modes, all_mode):
        out = (_score_twins if twins else _no_twins)(candidates, modes, all_mode)
        found.append(out.copy())
        return out

    with monkeypatch.context() as m:
        m.setattr(selector_module, "_score_twins", recorded)
        sel = OnlineSelector(random_state=5, **params)
        sel.partial_fit(X[:40], y[:40], classes=np.arange(k))
        sel.partial_fit(X[40:200], y[40:200])
        actions, probs = sel.sample_actions(X[200:260])
        rewards = (actions == y[200:260]).astype(float)
        sel.partial_fit(X[200:260], LoggedFeedback(actions, rewards, probs))
        # one-row calls use none (their blocks are too short to check)
        sel.partial_fit(X[260:261], y[260:261])
        # and none is left on the kept kernel after a call
        assert_array_equal(sel._kernel()[0].py_twins(), -1)
    return sel, found


@pytest.mark.parametrize("k", [4, 150])
@pytest.mark.parametrize("sparse", [False, True])
def test_twins_play_as_if_every_candidate_scored(k, sparse, monkeypatch):
    X, y = make_stream(n=261, d=12, k=k, seed=k)
    if sparse:
        X = sp.csr_matrix(np.where(np.abs(X) > 0.6, X, 0.0))
    with_twins, found = _play(X, y, k, True, monkeypatch)
    without, none = _play(X, y, k, False, monkeypatch)
    names = [type(c).__name__ for c in with_twins.candidates_]
    first = names.index("SquareCB")
    expected = np.full(len(names), -1)
    expected[first + 1] = first  # the second SquareCB copies the first
    assert len(found) >= 3  # each block of the three calls of >= 32 rows
    for twins in found:
        assert_array_equal(twins, expected)
    assert_array_equal(none, -1)
    assert with_twins.n_mistakes_ == without.n_mistakes_
    assert pickle.dumps(with_twins._get_state()) == pickle.dumps(without._get_state())
    # the twins' own states stayed equal (each learnt every round)
    a, b = with_twins.candidates_[first], with_twins.candidates_[first + 1]
    for name in SquareCB._state_attrs:
        assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


def _candidates():
    return [
        SquareCB(random_state=0),
        SquareCB(exploration=InverseGap(300.0, exponent=0.5), random_state=0),
        ConservativeOneVsAll(),
    ]


def _fitted(candidates, k=3):
    for c in candidates:
        c.partial_fit(np.zeros((1, 4)), [0], classes=np.arange(k))
    return candidates


def test_twins_need_the_same_parameters_but_exploration():
    cands = _fitted(_candidates())
    assert _score_twins(cands, [ALL] * 3, ALL).tolist() == [-1, 0, -1]
    other = _fitted(_candidates())
    other[1].set_params(step_size=AdaGrad(0.5))
    other[1]._set_state(cands[1]._get_state())  # the same state, other step
    assert _score_twins(other, [ALL] * 3, ALL).tolist() == [-1, -1, -1]
    seeded = _fitted(_candidates())
    seeded[1].set_params(random_state=1)
    assert _score_twins(seeded, [ALL] * 3, ALL).tolist() == [-1, -1, -1]


def test_twins_need_the_same_state_bit_for_bit():
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((30, 4)), rng.integers(0, 3, 30)
    cands = _fitted(_candidates())
    cands[1].partial_fit(X, y)  # fitted apart: its model differs
    assert _score_twins(cands, [ALL] * 3, ALL).tolist() == [-1, -1, -1]
    cands = _fitted(_candidates())
    cands[1].coef_[0, 0] = -0.0  # equal as numbers, not as bits
    assert _score_twins(cands, [ALL] * 3, ALL).tolist() == [-1, -1, -1]


def test_twins_need_learning_mode_all_and_pure_scores():
    cands = _fitted(_candidates())
    assert _score_twins(cands, [ALL, 1, ALL], ALL).tolist() == [-1, -1, -1]
    assert _score_twins(cands, [2, ALL, ALL], ALL).tolist() == [-1, -1, -1]
    # learners that do not declare pure scores are never twins
    trees = _fitted([OffsetTree(), OffsetTree(exploration=EpsilonGreedy(0.2))])
    assert _score_twins(trees, [ALL, ALL], ALL).tolist() == [-1, -1]
    # Banditron declares them; another exploration rate keeps it a twin
    rons = _fitted([Banditron(), Banditron(exploration=EpsilonGreedy(0.3))])
    assert _score_twins(rons, [ALL, ALL], ALL).tolist() == [-1, 0]
    # a selector learning its candidates "own"-wise finds none
    X, y = make_stream(n=60, d=5, k=3, seed=1)
    sel = OnlineSelector(candidate_learning="own", random_state=0)
    sel.partial_fit(X, y, classes=np.arange(3))
    assert_array_equal(sel._kernel()[0].py_twins(), -1)


def test_a_candidate_trained_apart_between_calls_is_no_twin(monkeypatch):
    """A twin trained directly between two calls of the selector: the next
    block checks the states again and finds no twin."""
    X, y = make_stream(n=300, d=5, k=3, seed=3)
    found = []

    def recorded(candidates, modes, all_mode):
        found.append(_score_twins(candidates, modes, all_mode))
        return found[-1]

    monkeypatch.setattr(selector_module, "_score_twins", recorded)
    sel = OnlineSelector(candidates=_candidates(), random_state=0)
    sel.partial_fit(X[:100], y[:100], classes=np.arange(3))
    assert found[-1].tolist() == [-1, 0, -1]
    sel.candidates_[1].partial_fit(X[100:150], y[100:150])
    sel.partial_fit(X[150:], y[150:])
    assert found[-1].tolist() == [-1, -1, -1]


def test_kernel_refuses_twins_that_cannot_be():
    X, y = make_stream(n=20, d=5, k=3, seed=2)
    sel = OnlineSelector(candidates=_candidates(), random_state=0)
    sel.partial_fit(X, y, classes=np.arange(3))
    kernel = sel._kernel()[0]
    kernel.set_twins(np.array([-1, 0, -1], dtype=np.int32))
    assert kernel.py_twins().tolist() == [-1, 0, -1]
    for bad, match in [
        ([-1, 0], "length"),
        ([-1, 1, -1], "earlier"),  # itself
        ([-1, 2, -1], "earlier"),  # a later candidate
        ([1, -1, -1], "earlier"),
        ([-1, 0, 1], "earlier"),  # a twin of a twin
        ([-1, -1, 0], "not twins"),  # another kernel type
    ]:
        with pytest.raises(ValueError, match=match):
            kernel.set_twins(np.array(bad, dtype=np.int32))
    assert kernel.py_twins().tolist() == [-1, 0, -1]
    kernel.clear_twins()
    assert kernel.py_twins().tolist() == [-1, -1, -1]
