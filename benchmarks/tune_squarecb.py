"""How SquareCB's previous defaults were chosen: a grid on held-out streams and seeds.

Superseded by ``benchmarks/robust_defaults.py`` (tuning and validation streams
from disjoint sources, ``benchmarks/streams.py``), which chose the current
defaults. The command lines below reproduce the committed runs of
``docs/results/squarecb-tuning/`` only with the version that had caps above 1
(``step_cap`` is now in ``(0, 1]``); with the current SquareCB the grid accepts
``--step-cap`` values in ``(0, 1]``.

The held-out streams are *not* the ones the ``vw-cbify`` experiment reports: the
real data sets are played in other orders (permutations of the experiment's
order with the seeds of ``--order-seeds``, default 1), SynSep and SynNonSep are
generated with those seeds as ``random_state`` (the experiment uses 0, which is
refused here), and the learners' seeds are 10 and 11 by default (the experiment
uses 0, 1, 2). Every grid point is scored by its online error divided by the best
of Vowpal Wabbit's five ``--cbify`` configurations on the same stream and seed;
the table (columns: ``exploration__scale``, ``exploration__exponent`` (the
``InverseGap`` schedule; recorded tables before the rename say ``gamma_scale``,
``gamma_exponent``), ``learning_rate``,
``importance_weighted``, ``step_cap``, worst and mean ratio, ratio per
data set, averaged over its orders and seeds) is sorted by the worst ratio over
the data sets, then the mean. ``--n-jobs`` plays the grid points of a stream in
parallel (joblib); the results do not depend on it.

    python benchmarks/tune_squarecb.py --data-dir ../shared/data --n-synthetic 30000

The grid of the current defaults (NAG with the linear rescale, three seeds):

    python benchmarks/tune_squarecb.py --data-dir ../shared/data --n-synthetic 30000 \
        --seeds 10 11 12 --exploration-scale 30 100 300 1000 \
        --exploration-exponent 0.5 0.75 1 --learning-rate 0.25 \
        --importance-weighted 0 --step-cap 4 8 16 --n-jobs 2

and the check of its first rows on seven more orders of the three short real
data sets:

    python benchmarks/tune_squarecb.py --data-dir ../shared/data \
        --datasets 20newsgroups-tfidf usps mnist --order-seeds 1 2 3 4 5 6 7 \
        --exploration-scale 30 100 300 1000 --exploration-exponent 0.5 1 \
        --learning-rate 0.25 --importance-weighted 0 --step-cap 8 16 --n-jobs 2

(the JSON keeps every run's ratio under ``runs``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time

import numpy as np
from joblib import Parallel, delayed

from skbandit import SquareCB
from skbandit.datasets import make_synnonsep, make_synsep
from skbandit.experiments._data import load_dataset
from skbandit.experiments._learners import VWLearner, vw_available
from skbandit.experiments._specs import _VW_ARGS
from skbandit.exploration import InverseGap
from skbandit.optim import Normalized

REAL = ("usps", "mnist", "covtype", "20newsgroups-tfidf")
STREAMS = (*REAL, "synsep", "synnonsep")


def streams(data_dir, n_synthetic, order_seeds=(1,), datasets=STREAMS):
    """(name, order seed, X, y) of every held-out stream: each real data set in
    the experiment's order permuted with each seed of ``order_seeds``, SynSep and
    SynNonSep generated with those seeds as ``random_state``."""
    for name in datasets:
        for o in order_seeds:
            if name in REAL:
                X, y = load_dataset(name, data_dir=data_dir, download=False)
                order = np.random.default_rng(o).permutation(len(y))
                yield name, o, X[order], y[order]
            else:
                make = make_synsep if name == "synsep" else make_synnonsep
                yield name, o, *make(n_synthetic, sparse=True, random_state=o)


def _play(g, X, y, classes, seed):
    est = SquareCB(
        exploration=InverseGap(g[0], exponent=g[1]),
        step_size=Normalized(g[2]),
        importance_weighted=bool(g[3]),
        step_cap=g[4],
        random_state=seed,
    ).partial_fit(X, y, classes=classes)
    return est.n_mistakes_ / est.t_


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data-dir", default="../shared/data")
    p.add_argument("--n-synthetic", type=int, default=30_000)
    p.add_argument("--seeds", type=int, nargs="+", default=[10, 11])
    # the inverse-gap-weighting schedule (SquareCB's InverseGap(scale, exponent))
    p.add_argument(
        "--exploration-scale", type=float, nargs="+", default=[3, 10, 30, 100]
    )
    p.add_argument("--exploration-exponent", type=float, nargs="+", default=[0.5])
    p.add_argument(
        "--learning-rate", type=float, nargs="+", default=[0.1, 0.25, 0.5, 1]
    )
    p.add_argument("--importance-weighted", type=int, nargs="+", default=[0, 1])
    p.add_argument("--step-cap", type=float, nargs="+", default=[0.5, 1])
    p.add_argument(
        "--order-seeds",
        type=int,
        nargs="+",
        default=[1],
        help="held-out orders (never 0, the experiment's): the real data sets "
        "permuted with these seeds, the generated streams drawn with them",
    )
    p.add_argument("--datasets", nargs="+", default=list(STREAMS), choices=STREAMS)
    p.add_argument("--n-jobs", type=int, default=1)
    p.add_argument("--json", default=None)
    a = p.parse_args(argv)
    if 0 in a.order_seeds:
        p.error("order seed 0 is the reported vw-cbify stream, not a held-out one")
    if not vw_available():
        print("vowpalwabbit is not installed", file=sys.stderr)
        return 1
    grid = list(
        itertools.product(
            a.exploration_scale,
            a.exploration_exponent,
            a.learning_rate,
            a.importance_weighted,
            a.step_cap,
        )
    )
    ratios = {g: {} for g in grid}
    vw_best = {}
    for name, o, X, y in streams(a.data_dir, a.n_synthetic, a.order_seeds, a.datasets):
        classes = np.unique(y)
        n = len(y)
        for seed in a.seeds:
            start = time.perf_counter()
            vw = min(
                VWLearner(args, seed).run(X, y, classes, [n])["mistakes"][-1] / n
                for args in _VW_ARGS
            )
            vw_best[(name, o, seed)] = vw
            errors = Parallel(n_jobs=a.n_jobs)(
                delayed(_play)(g, X, y, classes, seed) for g in grid
            )
            for g, err in zip(grid, errors, strict=True):
                ratios[g][(name, o, seed)] = err / vw
            print(
                f"{name} order {o} seed {seed}: n={n} VW best {vw:.4f} "
                f"({time.perf_counter() - start:.0f} s)",
                file=sys.stderr,
            )
    rows = []
    for g, r in ratios.items():
        per_stream = {}
        for (name, _, _), v in r.items():
            per_stream.setdefault(name, []).append(v)
        means = {k: float(np.mean(v)) for k, v in per_stream.items()}
        rows.append(
            (max(means.values()), float(np.mean(list(means.values()))), g, means, r)
        )
    rows.sort(key=lambda row: (row[0], row[1]))
    names = list(rows[0][3])
    print(
        "      scale  exp    lr  iw  cap  worst   mean  "
        + "  ".join(f"{n[:9]:>9}" for n in names)
    )
    for worst, mean, g, means, _ in rows:
        print(
            f"{g[0]:>11g} {g[1]:>4g} {g[2]:>5g} {g[3]:>3d} {g[4]:>4g}  "
            f"{worst:.3f}  {mean:.3f}  " + "  ".join(f"{means[n]:>9.3f}" for n in names)
        )
    if a.json:
        with open(a.json, "w") as f:
            json.dump(
                {
                    "vw_best": {
                        f"{k[0]}/order{k[1]}/seed{k[2]}": v for k, v in vw_best.items()
                    },
                    "rows": [
                        {
                            "exploration__scale": g[0],
                            "exploration__exponent": g[1],
                            "learning_rate": g[2],
                            "importance_weighted": g[3],
                            "step_cap": g[4],
                            "worst": w,
                            "mean": m,
                            "ratios": means,
                            "runs": {
                                f"{k[0]}/order{k[1]}/seed{k[2]}": v
                                for k, v in runs.items()
                            },
                        }
                        for w, m, g, means, runs in rows
                    ],
                },
                f,
                indent=1,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
