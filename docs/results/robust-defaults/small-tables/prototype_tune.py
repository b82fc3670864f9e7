"""Issue 18, small low-dimensional tables: step-size mechanisms tried on TUNING.

Needs the kernel patched with ``prototype.patch`` (next to this file; a switch
``_proto_set_mode(mode, power)`` that the shipped kernel does not have)::

    D=docs/results/robust-defaults/small-tables  # from the repository root
    git apply $D/prototype.patch
    python $D/prototype_tune.py > $D/tuning-prototypes.txt
    git apply -R $D/prototype.patch

Modes (every other parameter at the ``SquareCB()`` defaults):

* ``0``: the shipped NAG rate ``eta sqrt(n_a / N_a)`` (Ross, Mineiro & Langford
  2013), capped so that a step moves the prediction by at most ``|pred - r|``;
* ``(1, p)``: the rate ``eta (n_a / N_a)^p``; ``p = 1`` divides by the mean
  normalised squared norm ``N_a / n_a`` of the rows, so that a step's move in
  prediction space (about ``rate * N_a / n_a`` times the error over its RMS)
  no longer grows as ``sqrt(N_a / n_a)``, i.e. with the number of active
  features: the *d-independent* step;
* ``2``: the importance-invariant step of Karampatziakis & Langford (2011) for
  the squared loss, the move ``(pred - r)(1 - exp(-rate h Q))`` in place of the
  hard cap ``min(rate h Q, 1)``.

Score per stream: mean over seeds 0..2 of the online error over Vowpal Wabbit's
best (``vw_best.json``), as in ``benchmarks/robust_defaults.py tune``.
"""

from __future__ import annotations

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "benchmarks"))
from streams import SUITES, load_stream, vw_best  # noqa: E402

from skbandit import SquareCB  # noqa: E402
from skbandit.linear_model import _squarecb_fast as F  # noqa: E402

CACHE = os.path.join(HERE, "..", "vw_best.json")
CONFIGS = [((0, 0.5), 0.5)]
CONFIGS += [((1, 0.75), lr) for lr in (0.75, 1.0, 1.5)]
CONFIGS += [((1, 1.0), lr) for lr in (1.0, 1.5, 2.0, 3.0, 4.0)]
CONFIGS += [((2, 0.5), lr) for lr in (0.5, 1.0, 2.0, 4.0)]


def main():
    data = {}
    names = [s.name for s in SUITES["tuning"]]
    for name in names:
        for seed in range(3):
            X, y = load_stream(name, seed, suite="tuning")
            data[name, seed] = (X, y, vw_best(name, "tuning", seed, X, y, cache=CACHE))
    print("TUNING streams, seeds 0..2: mean ratio to VW's best per stream")
    print(
        f"{'mode, power, learning_rate':<28} worst  mean  "
        + " ".join(f"{n[:9]:>9}" for n in names)
    )
    for (mode, power), lr in CONFIGS:
        F._proto_set_mode(mode, power)
        means = []
        for name in names:
            r = []
            for seed in range(3):
                X, y, vw = data[name, seed]
                est = SquareCB(random_state=seed, learning_rate=lr)
                est.partial_fit(X, y, classes=np.unique(y))
                r.append(est.n_mistakes_ / est.t_ / vw)
            means.append(np.mean(r))
        print(
            f"{mode}, {power:<4}, {lr:<18} {max(means):.3f}  {np.mean(means):.3f}  "
            + " ".join(f"{m:>9.3f}" for m in means),
            flush=True,
        )
    F._proto_set_mode(0, 0.5)


if __name__ == "__main__":
    main()
