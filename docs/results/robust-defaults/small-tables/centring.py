"""Issue 18, small low-dimensional tables: is it the step size or the offset?

On the dense TUNING streams, ``SquareCB()`` at its defaults on the raw columns
and on columns centred online without look-ahead: row ``t`` minus the mean of
rows ``1..t-1`` (row 1 minus itself), or minus the mean of the first 10 rows
(a warm-up of contexts, available before any feedback). Also the greedy error
(the greedy label of the learner before it sees the row is wrong) beside the
online error, to separate exploration from model error. Score: mean over seeds
0..2 of the online error over Vowpal Wabbit's best (``vw_best.json``)::

    python docs/results/robust-defaults/small-tables/centring.py > centring.txt

``--suite probe2`` (any suite) runs the same on that suite's dense streams.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import scipy.sparse as sp

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "benchmarks"))
from streams import SUITES, load_stream, vw_best  # noqa: E402

from skbandit import SquareCB  # noqa: E402

CACHE = os.path.join(HERE, "..", "vw_best.json")


def running_centred(X):
    """Row t minus the mean of rows 1..t-1 (row 1 minus itself)."""
    prev = np.cumsum(X, axis=0) - X
    counts = np.arange(X.shape[0], dtype=np.float64)[:, None]
    mean = np.divide(prev, counts, out=X[:1].repeat(X.shape[0], 0), where=counts > 0)
    return X - mean


def greedy_error(X, y, seed):
    """Fraction of rounds whose greedy label (before the row is learned) is wrong,
    and the online error."""
    est = SquareCB(random_state=seed)
    classes = np.unique(y)
    wrong = 0
    for i in range(len(y)):
        if i and est.predict(X[i : i + 1])[0] != y[i]:
            wrong += 1
        est.partial_fit(X[i : i + 1], y[i : i + 1], classes=classes)
    return wrong / len(y), est.n_mistakes_ / est.t_


def main(suite="tuning"):
    print(f"dense {suite} streams, SquareCB() defaults, seeds 0..2: ratio to VW's best")
    head = f"{'stream':>14}  {'raw':>6} {'running':>8} {'first10':>8}"
    print(head + "   greedy/online error (raw)")
    for stream in SUITES[suite]:
        X0, _ = load_stream(stream.name, 0, suite=suite)
        if sp.issparse(X0):
            continue
        r = {"raw": [], "running": [], "first10": []}
        split = []
        for seed in range(3):
            X, y = load_stream(stream.name, seed, suite=suite)
            vw = vw_best(stream.name, suite, seed, X, y, cache=CACHE)
            for how, Z in (
                ("raw", X),
                ("running", running_centred(X)),
                ("first10", X - X[:10].mean(axis=0)),
            ):
                est = SquareCB(random_state=seed)
                est.partial_fit(Z, y, classes=np.unique(y))
                r[how].append(est.n_mistakes_ / est.t_ / vw)
            if len(y) <= 2_000:
                split.append(greedy_error(X, y, seed))
        s = " ".join(f"{g:.3f}/{o:.3f}" for g, o in split) if split else "(long stream)"
        print(
            f"{stream.name:>14}  {np.mean(r['raw']):6.3f} {np.mean(r['running']):8.3f} "
            f"{np.mean(r['first10']):8.3f}   {s}",
            flush=True,
        )


if __name__ == "__main__":
    main(sys.argv[sys.argv.index("--suite") + 1] if "--suite" in sys.argv else "tuning")
