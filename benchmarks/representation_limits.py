"""How far the full-information limit moves with a richer representation.

Issue 32 asks the recommended default for a median error ratio of at most 0.60
to Vowpal Wabbit tuned in hindsight on the dense validation streams. A bandit
learner approaches, and does not beat, the full-information online error of
its representation. ``eval_nonlinear.py --full-info --row-beside`` measures
that limit for the representations the default could use (the standardised
row; 1,000 random Fourier features, alone and beside the row): the smallest
of four full-information learners, at a median of 0.76 of VW tuned over the
13 validation streams (``docs/results/nonlinear/validation.txt``). This
script asks whether a richer representation moves the limit towards 0.60.
It is a report, not a choice: nothing here sets a default, and both
representations below cost far more per round than the default.

On every dense stream of ``--suite`` and every seed, on the rows standardised
with the running mean and variance of the rows before them (``u``), the
full-information online error (predict, then learn the label; one pass) of

* ``full-info RFF4000x1.0+row0.1``: ``u`` times 0.1 beside 4,000 random
  Fourier features (``RBFSampler(gamma=1/d)``), four times the default's, by
  the same four learners as ``eval_nonlinear.full_info_error`` (multiclass
  Perceptron; ``SGDClassifier(loss="log_loss")`` in blocks of 20 rows;
  SquareCB's capped AdaGrad least squares on the one-hot label, and the
  same without the cap), the smallest of the four;
* ``full-info MLP``: a network with one hidden layer of ``H`` rectified
  units, learnt online (one AdaGrad step a round on the squared error of the
  one-hot label: ``h = max(W1 u + b1, 0)``, ``s = W2 h + b2``, the loss
  ``||s - e_y||^2 / 2``; ``W1`` drawn ``N(0, 2/d)``, the rest zero); the
  smallest over ``H`` in ``MLP_WIDTHS`` and the rate in ``MLP_RATES``, chosen
  in hindsight per stream and seed (an optimistic limit; Vowpal Wabbit's
  ``--nn`` is in its grid too).

The report sets each next to the limit already measured (the smallest
``full-info`` error in ``--store``, the file ``eval_nonlinear.py`` wrote for
the suite) and to VW tuned (``vw-tuned`` there), as ratios of means over the
seeds::

    python benchmarks/representation_limits.py --suite validation --seeds 0 1 2 \\
        --store docs/results/nonlinear/validation.json \\
        --out docs/results/nonlinear/limits-validation.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np
import scipy.sparse as sp
from eval_nonlinear import ROW_WEIGHT, full_info_error, rff, running_standardise
from streams import SUITES, load_stream

#: the hidden widths and AdaGrad rates of the online network (the smallest
#: error over the grid is the reported limit)
MLP_WIDTHS = (128, 256)
MLP_RATES = (0.003, 0.01, 0.02, 0.05)

#: random features of the richer random-feature representation
RICH_COMPONENTS = 4000


def mlp_full_info(U, codes, k: int, width: int, rate: float, seed: int) -> float:
    """Online error of the one-hidden-layer network above (predict the argmax
    of ``s``, then one AdaGrad step on ``||s - e_y||^2 / 2``)."""
    rng = np.random.default_rng(seed)
    n, d = U.shape
    W1 = rng.normal(0.0, np.sqrt(2.0 / d), (width, d))
    b1 = np.zeros(width)
    W2 = np.zeros((k, width))
    b2 = np.zeros(k)
    # AdaGrad's accumulated squared gradients (a tiny start: no division by 0)
    G1, g1 = np.full_like(W1, 1e-8), np.full(width, 1e-8)
    G2, g2 = np.full_like(W2, 1e-8), np.full(k, 1e-8)
    mistakes = 0
    target = np.zeros(k)
    for t in range(n):
        u = U[t]
        z = W1 @ u + b1
        h = np.maximum(z, 0.0)
        s = W2 @ h + b2
        mistakes += int(np.argmax(s) != codes[t])
        target[:] = 0.0
        target[codes[t]] = 1.0
        gs = s - target  # d loss / d s
        gz = (W2.T @ gs) * (z > 0.0)  # back through the rectifier
        dW2, dW1 = np.outer(gs, h), np.outer(gz, u)
        G2 += dW2 * dW2
        g2 += gs * gs
        G1 += dW1 * dW1
        g1 += gz * gz
        W2 -= rate * dW2 / np.sqrt(G2)
        b2 -= rate * gs / np.sqrt(g2)
        W1 -= rate * dW1 / np.sqrt(G1)
        b1 -= rate * gz / np.sqrt(g1)
    return mistakes / n


def run(args) -> dict:
    store: dict = {}
    if os.path.exists(args.out):
        with open(args.out) as f:
            store = json.load(f)
    for stream in SUITES[args.suite]:
        if args.streams and stream.name not in args.streams:
            continue
        for seed in args.seeds:
            X, y = load_stream(stream.name, seed, suite=args.suite)
            if sp.issparse(X):
                continue
            row = store.setdefault(f"{stream.name}/{seed}", {})
            U = running_standardise(X)
            classes, codes = np.unique(y, return_inverse=True)
            key = f"full-info RFF{RICH_COMPONENTS}x1.0+row{ROW_WEIGHT}"
            if key not in row:
                Z = rff(X, RICH_COMPONENTS, 1.0, seed, U)
                row[key] = full_info_error(np.hstack([ROW_WEIGHT * U, Z]), y, seed)
            for width in MLP_WIDTHS:
                for rate in MLP_RATES:
                    mkey = f"full-info MLP({width},{rate})"
                    if mkey not in row:
                        row[mkey] = mlp_full_info(
                            U, codes, len(classes), width, rate, seed
                        )
            print(stream.name, seed, {k: round(v, 4) for k, v in row.items()})
            os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
            with open(args.out, "w") as f:
                json.dump(store, f, indent=1, sort_keys=True)
    return store


def report(store: dict, measured: dict, seeds) -> str:
    """Per stream, mean over the seeds: VW tuned, the default's error, the
    limit already measured, the two richer limits, and their ratios to VW."""
    names = sorted({k.rsplit("/", 1)[0] for k in store})
    rich = f"full-info RFF{RICH_COMPONENTS}x1.0+row{ROW_WEIGHT}"
    head = (
        f"{'stream':18s} {'VW tuned':>8s} {'default':>8s} {'limit':>8s} "
        f"{'RFF4000':>8s} {'MLP':>8s} {'best':>8s}   ratios to VW: "
        f"{'default':>7s} {'limit':>6s} {'best':>6s}"
    )
    lines = [head]
    ratios: dict[str, list] = {"default": [], "limit": [], "best": []}
    for n in names:
        keys = [f"{n}/{s}" for s in seeds if f"{n}/{s}" in store]
        old = [measured[k] for k in keys]
        vw = np.mean([r["vw-tuned"] for r in old])
        dflt = np.mean([r["OnlineSelector()"] for r in old])
        lim = [min(v for c, v in r.items() if c.startswith("full-info")) for r in old]
        rff_ = [store[k][rich] for k in keys]
        mlp = [
            min(v for c, v in store[k].items() if c.startswith("full-info MLP"))
            for k in keys
        ]
        best = np.mean([min(a, b, c) for a, b, c in zip(lim, rff_, mlp, strict=True)])
        row = (dflt / vw, np.mean(lim) / vw, best / vw)
        for name, r in zip(ratios, row, strict=True):
            ratios[name].append(r)
        lines.append(
            f"{n:18s} {vw:8.4f} {dflt:8.4f} {np.mean(lim):8.4f} {np.mean(rff_):8.4f} "
            f"{np.mean(mlp):8.4f} {best:8.4f}   {'':14s}"
            f"{row[0]:7.2f} {row[1]:6.2f} {row[2]:6.2f}"
        )
    lines.append(
        "median ratio to VW tuned over the "
        f"{len(names)} dense streams: the default "
        f"{np.median(ratios['default']):.2f}, the limit measured before "
        f"{np.median(ratios['limit']):.2f}, the smallest limit with the two "
        f"richer representations {np.median(ratios['best']):.2f} "
        f"({int(np.sum(np.array(ratios['best']) <= 0.60))} of {len(names)} "
        "streams at or below 0.60)"
    )
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--suite", default="validation", choices=sorted(SUITES))
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--streams", nargs="*", help="only these streams")
    p.add_argument("--store", required=True, help="eval_nonlinear.py's JSON")
    p.add_argument("--out", required=True, help="JSON of the richer limits")
    p.add_argument("--report-only", action="store_true")
    args = p.parse_args(argv)
    if args.report_only:
        with open(args.out) as f:
            store = json.load(f)
    else:
        store = run(args)
    with open(args.store) as f:
        measured = json.load(f)
    text = report(store, measured, args.seeds)
    print(text)
    with open(os.path.splitext(args.out)[0] + ".txt", "w") as f:
        f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
