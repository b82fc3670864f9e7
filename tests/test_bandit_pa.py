"""BanditPassiveAggressive against the Passive-Aggressive problem it solves.

The shared suite checks the kernel against its NumPy reference bit for bit;
this file checks both against the *definition* (docs/algorithms.md): each round
is the PA step for the constraint ``<W, U> >= 1`` along the Banditron's
estimate ``U = x (r/q e_a - e_g)^T``, computed here independently as matrices.
A bug shared by the kernel and the reference (the norm of ``U`` when
``a == g``, a sign, the split of the step between the two rows) fails here.
"""

from __future__ import annotations

import numpy as np
import pytest
from _data import make_stream
from numpy.testing import assert_allclose

from skbandit import BanditFeedback, BanditPassiveAggressive
from skbandit.exploration import EpsilonGreedy


def _rounds(update, C, gamma=0.3, n=400, k=4, seed=3):
    """``(W before, W after, x, a, g, r, q)`` of every round without a tie of
    the greedy argmax (then the logged propensity is ``p_g(a)``)."""
    X, y = make_stream(n=n, d=6, k=k, n_empty=0, seed=seed)
    est = BanditPassiveAggressive(
        exploration=EpsilonGreedy(gamma), update=update, C=C, random_state=0
    )
    out = []
    for i in range(n):
        before = None if i == 0 else est.coef_.copy()
        fb = BanditFeedback(y[i : i + 1])
        est.partial_fit(X[i : i + 1], fb, classes=range(k))
        if before is None:
            continue
        s = before @ X[i]
        if len(set(s.tolist())) < k:
            continue
        g = int(np.argmax(s))
        a, r, q = int(fb.actions_[0]), float(fb.rewards_[0]), float(fb.propensities_[0])
        out.append((before, est.coef_.copy(), X[i], a, g, r, q))
    return out


def _estimate(x, a, g, r, q, k):
    coef = np.zeros(k)
    coef[a] += r / q
    coef[g] -= 1.0
    return np.outer(coef, x)


@pytest.mark.parametrize("update, C", [("pa", 1.0), ("pa1", 0.05), ("pa2", 0.5)])
def test_each_round_is_the_pa_step_along_the_banditron_estimate(update, C):
    rounds = _rounds(update, C)
    kinds = set()
    for W, W_next, x, a, g, r, q in rounds:
        U = _estimate(x, a, g, r, q, W.shape[0])
        loss = 1.0 - np.sum(W * U)
        sq = np.sum(U * U)
        if not loss > 0.0:
            assert_allclose(W_next, W, rtol=0, atol=0)
            continue
        tau = {
            "pa": loss / sq,
            "pa1": min(C, loss / sq),
            "pa2": loss / (sq + 1.0 / (2.0 * C)),
        }[update]
        assert_allclose(W_next, W + tau * U, rtol=1e-9, atol=1e-12)
        if update == "pa":  # the smallest change that meets the constraint
            assert np.sum(W_next * U) == pytest.approx(1.0, rel=1e-9)
        kinds.add((a == g, r))
    # greedy rounds right and wrong, exploration rounds right and wrong
    assert kinds == {(True, 1.0), (True, 0.0), (False, 1.0), (False, 0.0)}


def test_the_pa1_cap_binds_and_limits_the_step():
    capped = 0
    for W, W_next, x, a, g, r, q in _rounds("pa1", 0.05):
        U = _estimate(x, a, g, r, q, W.shape[0])
        loss = 1.0 - np.sum(W * U)
        if loss > 0.0 and loss / np.sum(U * U) > 0.05:
            capped += 1
            assert_allclose(W_next - W, 0.05 * U, rtol=1e-9, atol=1e-12)
    assert capped > 10
