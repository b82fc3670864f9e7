"""Quadratic features in front of a bandit learner, on the small dense streams.

Issue 18 observed that inside coba's harness on digits, Vowpal Wabbit's SquareCB
on quadratic interaction features beats ``SquareCB()`` on the raw pixels. This
script measures the same idea on the stream suites of ``streams.py``: on each
dense stream with at most ``--max-features`` columns (so that the degree-2
expansion stays small: ``d (d + 3) / 2`` columns) and each seed, one pass (one
``partial_fit`` call, ``classes`` given, ``random_state=seed``) of each learner
on

* ``raw``: the stream's rows as they are;
* ``quadratic``: ``PolynomialFeatures(degree=2, include_bias=False)`` of the rows
  (the columns, their squares and their pairwise products). The map is fixed:
  fitting it reads only the number of columns, so it is applied row by row
  online without looking at later rows.

The online error is mistakes / rounds; the table gives the mean over seeds, the
ratio quadratic / raw, and both ratios to Vowpal Wabbit's best of the five
linear ``--cbify`` configurations (``streams.vw_best``, read from ``--vw-cache``).

Rule (TUNING only): quadratic features are recommended for small dense tables
if they lower the mean-over-seeds error of the learner on most of the TUNING
streams measured and raise none of them by more than 10%; the VALIDATION table
is printed for the report, never used to choose.

    python benchmarks/features_study.py --suite tuning --seeds 0 1 2 \
        --vw-cache docs/results/robust-defaults/vw_best.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np
import scipy.sparse as sp
from sklearn.preprocessing import PolynomialFeatures
from streams import SUITES, load_stream, vw_best

from skbandit import OnlineSelector, SquareCB

LEARNERS = {"SquareCB()": SquareCB, "OnlineSelector()": OnlineSelector}


def _error(make, X, y, seed) -> float:
    est = make().set_params(random_state=seed)
    est.partial_fit(X, y, classes=np.unique(y))
    return est.n_mistakes_ / len(y)


def run(suite, seeds, max_features, vw_cache, out, names=None) -> dict:
    store = {}
    if out and os.path.exists(out):
        with open(out) as f:
            store = json.load(f)
    for stream in SUITES[suite]:
        if names and stream.name not in names:
            continue
        for seed in seeds:
            key = f"{stream.name}/{seed}"
            if key in store:
                continue
            X, y = load_stream(stream.name, seed, suite=suite)
            if sp.issparse(X) or X.shape[1] > max_features:
                break
            X = np.ascontiguousarray(X, dtype=np.float64)
            Xq = PolynomialFeatures(degree=2, include_bias=False).fit_transform(X)
            row = {"d": X.shape[1], "d_quadratic": Xq.shape[1]}
            for name, make in LEARNERS.items():
                row[f"{name} raw"] = _error(make, X, y, seed)
                row[f"{name} quadratic"] = _error(make, Xq, y, seed)
            if vw_cache:
                try:
                    row["VW best"] = vw_best(stream.name, suite, seed, X, y, vw_cache)
                except ImportError:
                    pass
            store[key] = row
            print(key, {k: round(v, 4) for k, v in row.items()}, flush=True)
            if out:
                with open(out, "w") as f:
                    json.dump(store, f, indent=1, sort_keys=True)
    return store


def table(store: dict) -> str:
    streams = list(dict.fromkeys(key.split("/")[0] for key in store))
    lines = [
        "| stream | d -> quadratic | learner | raw | quadratic | quadratic / raw "
        "| raw / VW | quadratic / VW (max seed) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name in streams:
        rows = [v for k, v in store.items() if k.split("/")[0] == name]
        for learner in LEARNERS:
            raw = np.mean([r[f"{learner} raw"] for r in rows])
            quad = np.mean([r[f"{learner} quadratic"] for r in rows])
            vw = [r.get("VW best") for r in rows]
            if all(v is not None for v in vw):
                vw_mean = np.mean(vw)
                worst = max(r[f"{learner} quadratic"] / r["VW best"] for r in rows)
                vw_cols = f"{raw / vw_mean:.3f} | {quad / vw_mean:.3f} ({worst:.3f})"
            else:
                vw_cols = "- | -"
            lines.append(
                f"| {name} | {rows[0]['d']} -> {rows[0]['d_quadratic']} | {learner} "
                f"| {raw:.4f} | {quad:.4f} | {quad / raw:.3f} | {vw_cols} |"
            )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", default="tuning", choices=["tuning", "validation"])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--max-features", type=int, default=100)
    parser.add_argument("--vw-cache", default=None)
    parser.add_argument("--out", default=None, help="JSON file (a run resumes from it)")
    parser.add_argument("--streams", nargs="*", default=None, help="only these streams")
    args = parser.parse_args(argv)
    store = run(
        args.suite, args.seeds, args.max_features, args.vw_cache, args.out, args.streams
    )
    print(table(store))
    return 0


if __name__ == "__main__":
    sys.exit(main())
