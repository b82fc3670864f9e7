"""Rounds per second of the rational-kernel SeparableOneVsAll against the number of
support vectors.

A round scores the row against every support vector (O(n_support * nnz(x))).
For each size ``n`` the learner starts from a support set of ``n`` random rows of
the unit ball (random signs, one owner each) and plays ``--n-rounds`` rows of the
2019 paper's weakly separable stream (``make_separable_stream``, d = 3, k = 3) with
``budget=n``, so the set keeps its size (first in, first out). Best of
``--repeat`` timed passes, each from a fresh copy; printed as a table.

    python benchmarks/bench_ova_kernel.py
    python benchmarks/bench_ova_kernel.py --sizes 10 100 1000 --n-rounds 5000
"""

from __future__ import annotations

import argparse
import copy
import sys
import time

import numpy as np
import scipy.sparse as sp

from skbandit import SeparableOneVsAll
from skbandit.datasets import make_separable_stream


def start(n_support: int, seed: int) -> SeparableOneVsAll:
    X, y = make_separable_stream(1, strong=False, random_state=seed)
    est = SeparableOneVsAll(kernel="rational", budget=n_support, random_state=seed)
    est.partial_fit(X, y, classes=[0, 1, 2])  # then replace the support set
    rng = np.random.default_rng(seed)
    V = rng.standard_normal((n_support, X.shape[1]))
    V /= np.linalg.norm(V, axis=1, keepdims=True)
    A = np.zeros((n_support, 3))
    A[np.arange(n_support), rng.integers(0, 3, n_support)] = rng.choice(
        [-1.0, 1.0], n_support
    )
    # the learner's state: the support set's entries in CSR form
    S = sp.csr_matrix(V)
    est._sv_data = S.data
    est._sv_indices = S.indices.astype(np.int32)
    est._sv_indptr = S.indptr.astype(np.int64)
    est.dual_coef_ = A
    return est


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000, 10000])
    parser.add_argument("--n-rounds", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    X, y = make_separable_stream(args.n_rounds, strong=False, random_state=args.seed)
    print(
        f"rational-kernel SeparableOneVsAll, d={X.shape[1]}, k=3, "
        f"{args.n_rounds} rounds, best of {args.repeat}"
    )
    print(
        f"{'n_support':>10}  {'seconds':>8}  {'rounds/s':>11}  {'support evals/s':>15}"
    )
    for n in args.sizes:
        base = start(n, args.seed)
        best = float("inf")
        for _ in range(args.repeat):
            est = copy.deepcopy(base)
            t0 = time.perf_counter()
            est.partial_fit(X, y)
            best = min(best, time.perf_counter() - t0)
        rate = args.n_rounds / best
        print(f"{n:>10}  {best:>8.3f}  {rate:>11,.0f}  {rate * n:>15,.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
