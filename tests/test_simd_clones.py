"""The loops compiled twice, for SSE2 and AVX2 (``SKB_CLONES`` in
``skbandit/_core/_scores.h``): the shared class scores ``skb_linear_scores``
the random Fourier features of a row ``skb_rff_row`` (``_rff.h``) and the
loops of the regression oracle's step (``_oracle_step.h``). The
processor picks a clone when a module loads; ``_core/_simd_baseline`` is the
same source built for the baseline only. Both builds must be the NumPy
references bit for bit (the scores summed sequentially in stored order, the
features' product summed in ``c`` order and the kernel's cosine), on every
block width of the scores (1 to 12 classes a block, more classes in several
blocks), every tail of the features' blocks of 16, sparse and dense rows,
empty rows, signed zeros and non-finite values.

The bug these catch: a clone that differs from the other (a fused
multiply-add, another summation order or a vector tail written differently
in one build), which the reference tests of the learners could not see on a
machine whose processor always picks the same clone."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _reference import scores as reference_scores
from _reference_pipeline import rff as reference_rff

from skbandit._core import _feature_map, _oracle, _scans, _simd_baseline


def _same_bits(a, b) -> bool:
    """Equal to the last bit, signed zeros and NaN payloads included."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and np.array_equal(a.view(np.uint64), b.view(np.uint64))


def _both_builds_are(reference, clone, baseline) -> bool:
    """The two builds agree bit for bit, and with the NumPy reference as the
    learners' reference tests compare (NaN equal to NaN; the reference's
    cumulative sums may keep a -0.0 where the kernels' sums from +0.0 give
    +0.0)."""
    return _same_bits(clone, baseline) and np.array_equal(
        clone, reference, equal_nan=True
    )


def _row(rng, d, sparse):
    vals = rng.normal(size=d) * rng.choice([1e-3, 1.0, 1e3], size=d)
    vals[rng.random(d) < 0.2] = 0.0
    if not sparse:
        return vals, None
    nnz = int(rng.integers(0, d + 1))
    cols = np.sort(rng.choice(d, size=nnz, replace=False)).astype(np.int32)
    return vals[:nnz].copy(), cols


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("k", [1, 2, 3, 5, 8, 11, 12, 13, 24, 25, 31])
def test_class_scores_are_the_reference_in_both_builds(k, sparse):
    rng = np.random.default_rng(k)
    for d in (1, 7, 40):
        Wt = rng.normal(size=(d, k))  # feature-major, as the kernels store W
        for _ in range(5):
            vals, cols = _row(rng, d, sparse)
            ref = reference_scores(Wt.T, cols, vals)
            clone = _scans.py_linear_scores(Wt, vals, cols)
            baseline = _simd_baseline.py_linear_scores(Wt, vals, cols)
            assert _both_builds_are(ref, clone, baseline), (d, k)


def test_class_scores_of_an_empty_row_and_of_signed_zeros():
    Wt = np.array([[-0.0, 1.0, -2.0], [3.0, -0.0, np.inf]])
    for build in (_scans.py_linear_scores, _simd_baseline.py_linear_scores):
        assert _same_bits(build(Wt, np.array([]), np.array([], np.int32)), [0.0] * 3)
        # -0.0 * 0.0 + 3.0 * -1.0, 1.0 * 0.0 + -0.0 * -1.0, -2.0 * 0.0 + inf * -1.0
        assert _same_bits(build(Wt, np.array([0.0, -1.0])), [-3.0, 0.0, -np.inf])


@pytest.mark.parametrize("D", [1, 15, 16, 17, 33, 100, 256])
@pytest.mark.parametrize("d", [1, 3, 64])
def test_random_features_are_the_reference_in_both_builds(d, D):
    rng = np.random.default_rng(100 * d + D)
    omega = rng.normal(size=(d, D)) * np.sqrt(2.0 / d)
    offset = rng.uniform(0.0, 2 * np.pi, size=D)
    U = rng.normal(size=(6, d))
    U[1] = 0.0  # every argument is the offset
    U[2, 0] = 1e7  # arguments past the cosine's bound: the C library's cos
    U[3, -1] = np.nan  # non-finite: NaN features
    U[4] *= -0.0
    refs = np.array([reference_rff(u, omega, offset) for u in U])
    clone, baseline = np.empty((U.shape[0], D)), np.empty((U.shape[0], D))
    _feature_map.rff_rows(U, omega, offset, clone)
    _simd_baseline.rff_rows(U, omega, offset, baseline)
    assert _both_builds_are(refs, clone, baseline)
    assert np.isnan(clone[3]).all() and not np.isnan(clone[[0, 1, 2, 4, 5]]).any()


def _reference_step_loops(val, e, G, scale, rate):
    """The regression oracle's step entry by entry (``RegressionOracle.step``
    as ``tests/_reference_oracle.py`` states it): ``G_j += (e v_j)^2`` where
    ``v_j != 0``, ``q_j = s_j sqrt(G_j)`` (NAG), ``sqrt(G_j)`` (AdaGrad) or 1,
    an entry moved when ``v_j != 0`` and ``G_j > 0``; ``Q`` summed in order
    from +0.0 over the moved entries, their moves ``rate (e v_j) / q_j``."""
    n = len(val)
    G = None if G is None else G.copy()
    q, moves, Q = np.zeros(n), np.zeros(n), 0.0
    for j in range(n):
        v = float(val[j])
        if v == 0.0:
            continue
        qj = 1.0
        if G is not None:
            g = e * v
            G[j] = G[j] + g * g
            if not G[j] > 0.0:
                continue
            qj = math.sqrt(G[j])
            if scale is not None:
                qj = float(scale[j]) * qj
        q[j] = qj
        Q = Q + (v * v) / qj
        moves[j] = (rate * (e * v)) / qj
    return Q, q, moves, G


@pytest.mark.parametrize("rule", ["constant", "adagrad", "normalized"])
def test_oracle_step_loops_are_the_reference_in_both_builds(rule):
    """The step's loops (``_oracle_step.h``) of both builds, on rows of every
    length up to past two AVX2 blocks (the vector tails), with zero entries,
    signed zeros, sums still zero and values of very different scales."""
    rng = np.random.default_rng(11)
    for n in [*range(0, 10), 17, 33]:
        for _ in range(4):
            val = rng.normal(size=n) * rng.choice([1e-3, 1.0, 1e3], size=n)
            val[rng.random(n) < 0.25] = 0.0
            val[rng.random(n) < 0.1] = -0.0
            e = float(rng.normal())
            G = None
            if rule != "constant":
                G = rng.random(n) * rng.choice([0.0, 1.0, 1e-6], size=n)
            scale = rng.uniform(0.5, 2.0, size=n) if rule == "normalized" else None
            Q_ref, q_ref, m_ref, G_ref = _reference_step_loops(val, e, G, scale, 0.3)
            outs = []
            for build in (_oracle, _simd_baseline):
                Gb = None if G is None else G.copy()
                Q, q, m = build.py_oracle_step_loops(val, e, Gb, scale, 0.3)
                outs.append((Q, q, m, Gb))
            (Qc, qc, mc, Gc), (Qb, qb, mb, Gbb) = outs
            assert _both_builds_are([Q_ref], [Qc], [Qb])
            assert _both_builds_are(q_ref, qc, qb)
            assert _both_builds_are(m_ref, mc, mb)
            if G is not None:
                assert _both_builds_are(G_ref, Gc, Gbb)
