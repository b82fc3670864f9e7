"""Peak memory and time per round of the rational-kernel SeparableOneVsAll on a
very wide sparse stream.

The stream: ``--rows`` CSR rows of ``--d`` columns with one entry 1.0 each (at a
uniformly random column: norm 1, inside the kernel's unit ball) and uniformly
random labels of ``--k`` classes, so that most rounds are mistakes and add a
support vector. With the defaults (30,000 rows, d = 120,000) the former dense
store asked for (support + rows) x d doubles per block (26.8 GiB) and failed.
Two runs, one ``partial_fit`` call each: without a budget (every mistake adds a
support vector) and with ``--budget`` (the oldest vector is evicted for each
new one).

Columns: the support set's size and stored entries at the end, the declared
state's size, wall time and time per round, the process' peak resident set size
(``VmHWM``, reset before each run after trimming the allocator; Linux) and its
growth over the RSS just before the run.

    python benchmarks/bench_separable_memory.py
    python benchmarks/bench_separable_memory.py --rows 3000 --d 20000   # seconds
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import scipy.sparse as sp
from _harness import _peak_rss_mib, _reset_peak_rss

from skbandit import SeparableOneVsAll


def one_hot_stream(n: int, d: int, k: int, seed: int):
    rng = np.random.default_rng(seed)
    cols = rng.integers(0, d, n).astype(np.int32)
    X = sp.csr_matrix((np.ones(n), cols, np.arange(n + 1)), shape=(n, d))
    return X, rng.integers(0, k, n)


def run(X, y, k: int, budget: int | None, seed: int) -> dict:
    rss0 = _reset_peak_rss()
    t0 = time.perf_counter()
    est = SeparableOneVsAll(kernel="rational", budget=budget, random_state=seed)
    est.partial_fit(X, y, classes=np.arange(k))
    seconds = time.perf_counter() - t0
    peak = _peak_rss_mib()
    return {
        "n_support": est.dual_coef_.shape[0],
        "entries": est._sv_data.shape[0],
        "state_mib": sum(getattr(est, n).nbytes for n in est._state_attrs) / 2**20,
        "seconds": seconds,
        "us_per_round": 1e6 * seconds / X.shape[0],
        "peak_mib": peak,
        "growth_mib": None if rss0 is None else peak - rss0,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=30_000)
    parser.add_argument("--d", type=int, default=120_000)
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--budget", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    X, y = one_hot_stream(args.rows, args.d, args.k, args.seed)
    print(
        f"rational-kernel SeparableOneVsAll, {args.rows:,} CSR rows, d={args.d:,}, "
        f"one non-zero per row, k={args.k}, one partial_fit call"
    )
    # the former store: (support + rows of the block) x d doubles per block of
    # up to 65,536 rows; the first block starts with no support vector
    dense = min(args.rows, 1 << 16) * args.d * 8 / 2**30
    print(f"(the former dense store asked for {dense:,.1f} GiB for the first block)")
    head = ("run", "n_support", "entries", "state MiB", "seconds", "us/round",
            "peak RSS MiB", "growth MiB")  # fmt: skip
    print(f"{head[0]:<14}" + "".join(f"{h:>13}" for h in head[1:]))
    for name, budget in (("no budget", None), (f"budget={args.budget}", args.budget)):
        r = run(X, y, args.k, budget, args.seed)
        growth = "-" if r["growth_mib"] is None else f"{r['growth_mib']:.1f}"
        print(
            f"{name:<14}{r['n_support']:>13,}{r['entries']:>13,}"
            f"{r['state_mib']:>13.2f}{r['seconds']:>13.2f}{r['us_per_round']:>13.1f}"
            f"{r['peak_mib']:>13.1f}{growth:>13}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
