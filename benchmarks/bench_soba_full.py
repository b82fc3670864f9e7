"""Seconds per 1,000 updates of full SOBA (``covariance="full"``), and its scaling.

Each update of full SOBA costs O((kd)^2): the rank-one Sherman-Morrison update of
the ``kd x kd`` inverse (plus O(kd * nnz(x)) for ``v = A^-1 z``). For each size
``k x d`` the script builds a fitted learner, then plays dense Gaussian rows one at
a time through its compiled kernel (``py_act``/``py_learn``), learning from an
explored action that was right and is not the greedy one: ``ỹ = y != ŷ``, a round
on which SOBA always updates (its margin is non-negative). Reported: seconds per
1,000 updates (best of ``--repeat``), and the ratio of each size's cost to the
first size's beside the ratio of ``(kd)^2``.

    python benchmarks/bench_soba_full.py                      # kd = 640 and 2,560
    python benchmarks/bench_soba_full.py --sizes 10x64 10x128 10x256 --updates 500
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from skbandit import SOBA
from skbandit.exploration import EpsilonGreedy


def seconds_per_update(k: int, d: int, n_updates: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_updates, d)) / np.sqrt(d)
    est = SOBA(exploration=EpsilonGreedy(0.1), covariance="full", random_state=seed)
    est.partial_fit(X[:1], [0], classes=np.arange(k))
    kernel = est._make_kernel()
    before = kernel.n_updates
    U = rng.random((n_updates, 2))
    t0 = time.perf_counter()
    for i in range(n_updates):
        t = i + 2
        _, g, _, _ = kernel.py_act(X[i], t, U[i, 0], U[i, 1])
        played = (g + 1) % k  # explored, and right: always an update
        p = kernel.py_distribution(kernel.py_scores(), t, g)[played]
        kernel.py_learn(X[i], t, played, g, p, 1.0)
    seconds = time.perf_counter() - t0
    done = kernel.n_updates - before
    if done != n_updates:
        raise RuntimeError(f"{done} updates instead of {n_updates}")
    return seconds / n_updates


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--sizes", nargs="+", default=["10x64", "10x256"], help="k x d")
    p.add_argument("--updates", type=int, default=1000, help="updates per size")
    p.add_argument("--repeat", type=int, default=3, help="timed runs, best kept")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    rows = []
    for size in args.sizes:
        k, d = (int(v) for v in size.lower().split("x"))
        best = min(
            seconds_per_update(k, d, args.updates, args.seed)
            for _ in range(args.repeat)
        )
        rows.append((k, d, k * d, best))
    k0, d0, kd0, s0 = rows[0]
    print(f"full SOBA, {args.updates:,} updates per size, best of {args.repeat}")
    print(
        f"{'k x d':>10}  {'kd':>6}  {'seconds per 1,000 updates':>26}  "
        f"{'cost ratio':>10}  {'(kd)^2 ratio':>12}"
    )
    for k, d, kd, s in rows:
        print(
            f"{f'{k} x {d}':>10}  {kd:>6,}  {1000 * s:>26.4f}  {s / s0:>10.2f}  "
            f"{(kd / kd0) ** 2:>12.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
