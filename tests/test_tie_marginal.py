"""The policy's probability of an action when the greedy label is tied.

With exact maximisers g_1 < ... < g_m of the scores, the greedy label is drawn
uniformly among them, so the policy plays ``a`` with probability
``P(a) = (p_{g_1}(a) + ... + p_{g_m}(a)) / m`` (the logged propensity).

- ``act`` (``BaseKernel.marginal_over``) returns that sum, taken sequentially
  in class order then divided by m, bit for bit, for every exploration rule:
  it reads the two values a term can take off at most two distributions
  instead of computing one distribution per tied label (O(k), not O(m k)).
- ``marginal_distribution`` (``exploration_distribution``, the selector's
  mixture) computes it by its closed form ``(hi + (m - 1) lo) / m`` for a tied
  class and ``p_{g_1}(a)`` for the others: equal up to the sum's rounding.
- Hand-computed values from the rules' formulas, and the learners' public
  ``exploration_distribution`` against the definition on dense and CSR rows.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose

from skbandit import Banditron, ConservativeOneVsAll, Gaptron, SquareCB
from skbandit._core._drivers import run_scores
from skbandit.exploration import (
    Conservative,
    EpsilonGreedy,
    GapMap,
    Greedy,
    InverseGap,
    Softmax,
)
from skbandit.linear_model._perceptron_fast import PerceptronKernel

K = 7
# one case of every rule (InverseGap with and without per-class clocks, and
# with gamma_t infinite)
RULES = [
    ("greedy", Greedy(), {}),
    ("epsilon-greedy", EpsilonGreedy(0.3), {}),
    ("epsilon-greedy-decay", EpsilonGreedy(0.6, decay=0.5, min_epsilon=0.05), {}),
    ("softmax", Softmax(0.05, scale=2.0), {}),
    ("inverse-gap", InverseGap(4.0, exponent=0.5, clip=False), {}),
    ("inverse-gap-clip", InverseGap(300.0, exponent=0.75, clip=True), {}),
    ("inverse-gap-inf", InverseGap(1e300, exponent=2.0, clip=False), {}),
    (
        "inverse-gap-counts",
        InverseGap(4.0, exponent=0.5, clip=False),
        {"counts": np.array([0, 3, 0, 7, 1, 0, 2], dtype=np.int64)},
    ),
    ("gap-map-logistic", GapMap(0.1, loss="logistic"), {}),
    ("gap-map-hinge", GapMap(0.2, loss="hinge"), {}),
    ("gap-map-smooth", GapMap(0.0, loss="smooth_hinge"), {}),
    ("conservative", Conservative(), {}),
    ("conservative-threshold", Conservative(threshold=0.3), {}),
]


def _kernel(scores: np.ndarray, rule, context: dict) -> PerceptronKernel:
    """A kernel whose scores on the row ``x = [1]`` are ``scores``."""
    W = np.ascontiguousarray(scores.reshape(1, -1))  # feature-major (d = 1, k)
    kernel = PerceptronKernel(W)
    kernel.set_explorer(rule._compile(len(scores), **context))
    return kernel


def _definition(kernel, scores, t, action):
    """(1/m) sum over the tied g (in class order) of p_g(action), summed in order."""
    ties = np.flatnonzero(scores == scores.max())
    total = 0.0
    for g in ties:
        total = total + kernel.py_distribution(scores, t, int(g))[action]
    return total / len(ties)


def _tied_scores(k: int, rng) -> list[np.ndarray]:
    """Score vectors with m = 2 .. k tied maximisers at varied positions (the
    untied classes below, some of them tied with each other)."""
    out = []
    for m in range(2, k + 1):
        s = np.round(rng.standard_normal(k) * 4) / 4 - 3.0
        top = rng.permutation(k)[:m]
        s[top] = rng.choice([0.0, 0.5, 0.25])
        out.append(s)
    out.append(np.zeros(k))  # a fresh learner: every class at 0
    return out


@pytest.mark.parametrize("name, rule, context", RULES, ids=[r[0] for r in RULES])
def test_tie_marginal_is_the_definition(name, rule, context):
    rng = np.random.default_rng(len(name))
    for s in _tied_scores(K, rng):
        kernel = _kernel(s, rule, context)
        x = np.ones(1)
        for t in (1, 3, 50):
            want = np.array([_definition(kernel, s, t, b) for b in range(K)])
            for u1 in np.linspace(0.0, 0.999, 9):
                a, _, _, marginal = kernel.py_act(x, t, float(u1), 0.37)
                assert (kernel.py_scores() == s).all()
                # the played action's propensity: the sequential sum, bit for bit
                assert marginal == want[a], (name, s, t, a)
            got = kernel.py_marginal_distribution(s, t)
            assert_allclose(got, want, rtol=K * 2.0**-52, atol=1e-300)
            assert got.sum() == pytest.approx(1.0, abs=1e-14)


def test_hand_computed_tie_marginals():
    """From the formulas, at k = 4 with labels 0 and 1 tied: epsilon-greedy
    (epsilon 0.4) gives each tied class (0.7 + 0.1) / 2 = 0.4 and the others
    0.1; greedy 1/2 and 0; inverse gap weighting (gamma 4, gaps 1 and 2) gives
    the untied classes 1/(4 + 4) and 1/(4 + 8), each tied one the mean of
    1/4 (tied, not greedy) and the greedy's rest 1 - 1/4 - 1/8 - 1/12."""
    s = np.array([1.0, 1.0, 0.0, -1.0])
    x = np.ones(1)
    cases = [
        (EpsilonGreedy(0.4), [0.4, 0.4, 0.1, 0.1]),
        (Greedy(), [0.5, 0.5, 0.0, 0.0]),
        (
            InverseGap(4.0, exponent=0.0, clip=False),
            [(0.25 + (1 - 0.25 - 1 / 8 - 1 / 12)) / 2] * 2 + [1 / 8, 1 / 12],
        ),
    ]
    for rule, want in cases:
        kernel = _kernel(s, rule, {})
        assert_allclose(kernel.py_marginal_distribution(s, 2), want, rtol=1e-15)
        for u1 in np.linspace(0.0, 0.999, 9):
            a, _, _, marginal = kernel.py_act(x, 2, float(u1), 0.9)
            assert marginal == pytest.approx(want[a], rel=1e-15)


@pytest.mark.parametrize("container", ["dense", "csr"])
@pytest.mark.parametrize(
    "est",
    [
        Banditron(exploration=EpsilonGreedy(0.2)),
        SquareCB(),
        Gaptron(),
        ConservativeOneVsAll(),
    ],
    ids=lambda e: type(e).__name__,
)
def test_learners_exploration_distribution_on_tied_rounds(est, container):
    """A learner with few updates has tied scores on most rows (its untouched
    classes score 0): its ``exploration_distribution`` is the mean over the
    tied greedy labels of its distribution, dense and CSR rows alike."""
    rng = np.random.default_rng(0)
    k, d = 9, 6
    X = rng.standard_normal((12, d)) * (rng.random((12, d)) < 0.5)
    X[3] = 0.0  # an empty row: every class ties
    Xc = sp.csr_matrix(X) if container == "csr" else X
    est.set_params(random_state=0)
    est.partial_fit(Xc[:2], [1, 4], classes=np.arange(k))
    P = est.exploration_distribution(Xc[2:])
    kernel = est._make_kernel()
    t = est.t_ + 1
    n_tied = 0
    S = np.empty((X.shape[0] - 2, k))  # the scores the kernel plays with
    empty = np.zeros(1, dtype=np.int32)
    run_scores(kernel, np.ascontiguousarray(X[2:]).ravel(), empty, empty, True, t, S)
    for i, s in enumerate(S):
        n_tied += int((s == s.max()).sum() > 1)
        want = [_definition(kernel, s, t, b) for b in range(k)]
        assert_allclose(P[i], want, rtol=k * 2.0**-52, atol=1e-300)
    assert n_tied >= 3  # the test must see ties
