"""The generic ``act`` draws from its distribution and checks it in one sweep
(``sample_checked`` in ``skbandit/_core/_kernel.pxd``): the same action as the
inverse-CDF sampler on every valid distribution, and the same verdict as the
drivers' check (entries finite and >= 0, sum within ``DISTRIBUTION_TOL`` of 1),
so an invalid distribution stops the pass before anything is played."""

from __future__ import annotations

import numpy as np
import pytest

from skbandit._core._drivers import run_pass
from skbandit._core._explore import EpsilonGreedyExplorer, SoftmaxExplorer
from skbandit._core._kernel import DISTRIBUTION_TOL, KernelStatus
from skbandit._core._scans import py_sample_checked, py_sample_inverse_cdf
from skbandit.linear_model._perceptron_fast import PerceptronKernel


def _valid(p):
    return bool(np.all(p >= 0) and abs(np.sum(p) - 1.0) <= DISTRIBUTION_TOL)


def test_the_draw_is_the_inverse_cdf_and_the_verdict_the_check():
    rng = np.random.default_rng(0)
    for k in (1, 2, 3, 9, 20):
        for _ in range(200):
            p = rng.dirichlet(np.ones(k))
            p[rng.random(k) < 0.3] = 0.0
            if p.sum() == 0.0:
                p[0] = 1.0
            p = p / p.sum()
            cum = np.cumsum(p)
            # the boundaries of the cumulative sums and just below them
            for u1 in (*rng.random(5), 0.0, *cum, *np.nextafter(cum, 0.0), 1.0):
                a, ok = py_sample_checked(p, float(u1))
                assert a == py_sample_inverse_cdf(p, float(u1)), (p, u1)
                assert ok
    cases = [
        np.array([0.5, 0.5]),
        np.array([0.5, 0.5 + 2 * DISTRIBUTION_TOL]),  # unnormalised
        np.array([0.5, 0.5 - 2 * DISTRIBUTION_TOL]),
        np.array([1.25, -0.25]),  # negative, sums to 1
        np.array([np.nan, 1.0]),
        np.array([np.inf, 0.0]),
        np.array([-0.0, 1.0]),
    ]
    for p in cases:
        a, ok = py_sample_checked(p, 0.3)
        assert ok == _valid(p), p
        assert 0 <= a < len(p)


@pytest.mark.parametrize(
    "explorer",
    [
        EpsilonGreedyExplorer(2.0),
        EpsilonGreedyExplorer(np.nan),
        SoftmaxExplorer(-1.0, 1.0),
    ],
    ids=["negative", "nan", "softmax-negative"],
)
def test_an_invalid_distribution_stops_the_pass(explorer):
    k, d, n = 4, 3, 5
    W = np.arange(k * d, dtype=float).reshape(k, d) / 10
    state = np.ascontiguousarray(W.T)  # the kernel's feature-major (d, k)
    kernel = PerceptronKernel(state)
    kernel.set_explorer(explorer)
    X = np.ones((n, d))
    out = [np.zeros(n, np.int32), np.zeros(n, np.int32), np.zeros(n), np.zeros(n)]
    done, _, _ = run_pass(
        kernel, X.ravel(), np.empty(0, np.int32), np.empty(0, np.int32), True,
        np.arange(n, dtype=np.int32), np.zeros(n, np.int32), np.full((n, 2), 0.5),
        0, *out,
    )  # fmt: skip
    assert done == 0
    assert kernel.status == int(KernelStatus.STATUS_INVALID_DISTRIBUTION)
    assert not _valid(kernel.py_proba())
    np.testing.assert_array_equal(state.T, W)  # nothing was learned
    with pytest.raises(FloatingPointError, match="not a probability vector"):
        kernel.status = 0
        kernel.py_act(X[0], 1, 0.5, 0.5)
