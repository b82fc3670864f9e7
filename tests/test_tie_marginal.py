"""The policy's probability of an action when the greedy label is tied
(``BaseKernel.marginal_over``, ``marginal_distribution``): the mean over the m
exact maximisers g of ``p_g(action)``, summed sequentially in class order then
divided by m, for every exploration rule. A rule that ignores the greedy label
(the softmax: ``ignores_greedy``) has its distribution computed once; the sum
of its m equal terms must still be the same sequential sum, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from skbandit._core._explore import EpsilonGreedyExplorer, SoftmaxExplorer
from skbandit.linear_model._perceptron_fast import PerceptronKernel


def _expected(kernel, scores, t, action):
    ties = np.flatnonzero(scores == scores.max())
    total = 0.0
    for g in ties:
        total = total + kernel.py_distribution(scores, t, int(g))[action]
    return total / len(ties)


@pytest.mark.parametrize("rule", ["softmax", "epsilon-greedy"])
@pytest.mark.parametrize("k", [2, 3, 5, 7, 9, 20])
def test_tie_marginal_is_the_sequential_mean(rule, k):
    explorer = (
        SoftmaxExplorer(0.05, 1.0) if rule == "softmax" else EpsilonGreedyExplorer(0.05)
    )
    assert explorer.ignores_greedy == (rule == "softmax")
    rng = np.random.default_rng(k)
    d = 4
    x = np.ones(d)
    for m in range(2, k + 1):
        # classes 0..m-1 tie at the top score, the others below
        W = np.zeros((k, d))
        W[m:] = -rng.random((k - m, d))
        kernel = PerceptronKernel(np.ascontiguousarray(W.T))  # feature-major
        kernel.set_explorer(explorer)
        for u1 in np.linspace(0.0, 0.999, 7):
            a, g, p, marginal = kernel.py_act(x, 3, float(u1), 0.5)
            scores = kernel.py_scores()
            assert marginal == _expected(kernel, scores, 3, a), (k, m, a)
        want = [_expected(kernel, scores, 3, b) for b in range(k)]
        got = kernel.py_marginal_distribution(scores, 3)
        np.testing.assert_array_equal(got, want)
