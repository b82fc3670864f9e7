"""The compiled class scores (``skb_linear_scores`` in ``skbandit/_core/_scores.h``)
against a sequential sum, bit for bit, for every block width and split.

The scores are swept over blocks of up to ``SKB_BLOCK`` (12) classes with one
row pointer per class; ``k`` from 1 to 30 covers every block width (1 to 12)
and the splits into two and three blocks. Each score must be the plain
sequential sum ``acc = acc + W[r, c] * v`` over the row's stored entries in
stored order (no reassociation, no fused multiply-add)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from skbandit._core._drivers import run_scores
from skbandit.linear_model._perceptron_fast import PerceptronKernel


def _sequential_scores(W, cols, vals):
    out = np.empty(W.shape[0])
    for r in range(W.shape[0]):
        acc = 0.0
        for c, v in zip(cols, vals, strict=True):
            acc = acc + float(W[r, c]) * float(v)
        out[r] = acc
    return out


def _dense_scores(kernel, rows, k):
    """``run_scores`` of the dense rows ``rows`` (read in their dense form)."""
    out = np.empty((rows.shape[0], k))
    empty = np.empty(0, np.int32)
    run_scores(kernel, np.ascontiguousarray(rows).ravel(), empty, empty, True, 1, out)
    return out


@pytest.mark.parametrize("k", range(1, 31))
def test_scores_match_sequential_sum(k):
    rng = np.random.default_rng(k)
    d = 37
    W = rng.standard_normal((k, d)) * 10.0 ** rng.integers(-8, 8, size=(k, d))
    X = sp.random(6, d, density=0.3, random_state=k, format="csr")
    X.data = rng.standard_normal(X.nnz) * 1e3
    X.sort_indices()
    kernel = PerceptronKernel(np.ascontiguousarray(W.T))  # feature-major (d, k)
    out_csr = np.empty((X.shape[0], k))
    run_scores(kernel, X.data, X.indices, X.indptr, False, 1, out_csr)
    out_dense = _dense_scores(kernel, X.toarray(), k)
    full = rng.standard_normal((2, d))  # dense rows read in their dense form
    out_full = _dense_scores(kernel, full, k)
    for i in range(X.shape[0]):
        lo, hi = X.indptr[i], X.indptr[i + 1]
        want = _sequential_scores(W, X.indices[lo:hi], X.data[lo:hi])
        np.testing.assert_array_equal(out_csr[i], want)
        np.testing.assert_array_equal(out_dense[i], want)
    for i in range(2):
        want = _sequential_scores(W, range(d), full[i])
        np.testing.assert_array_equal(out_full[i], want)
