"""Offset Tree on USPS with Costing: the importance weight as an acceptance rate.

Chen et al. (2009) write that "Costing algorithm [4] is applied to the updating
rule according to the partial feedback" for their Realizable Offset Tree.
Costing (Zadrozny, Langford & Abe 2003) keeps an example of importance weight
w with probability w / Z (Z the largest weight) and trains on it unweighted.
``OffsetTree`` instead puts the weight ω = |r − ½| / p into the PA slack
penalty (C ω) on every round. This script plays the same ε-greedy policy
(ε = 0.1, the experiment's) around ``OffsetTree.predict`` and, per round,
either

- ``control``: learns the played round with its true propensity (the
  estimator's own weighting, C ω), or
- ``costing``: keeps the round with probability ω / Z, Z = k / (2 ε) (the
  weight of an exploration round), and learns a kept round with ω = 1 (the
  logged propensity set to ½ with a 0/1 reward), i.e. unweighted PA-I/PA-II
  with C = 1.

Usage (from the repository root, offline copies in ../shared/data)::

    python docs/results/chen2009-table1-costing/costing.py --seeds 5 \
        --data-dir ../shared/data > docs/results/chen2009-table1-costing/costing.txt
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

from skbandit import LoggedFeedback, OffsetTree
from skbandit.experiments import load_dataset
from skbandit.experiments._data import preprocess
from skbandit.exploration import EpsilonGreedy


def run(X, y, update, seed, costing, eps=0.1):
    classes = np.unique(y)
    k = len(classes)
    rng = np.random.default_rng(seed)
    est = OffsetTree(
        update=update, C=1.0, exploration=EpsilonGreedy(0.0), random_state=seed
    )
    z = k / (2.0 * eps)  # the largest weight |r - 1/2| / p: an exploration round
    fitted, mistakes, updates = False, 0, 0
    for t in range(X.shape[0]):
        x = X[t : t + 1]
        greedy = est.predict(x)[0] if fitted else classes[rng.integers(k)]
        p = np.full(k, eps / k)
        p[np.searchsorted(classes, greedy)] += 1.0 - eps
        a = classes[rng.choice(k, p=p)]
        r = float(a == y[t])
        mistakes += r == 0.0
        prob = p[np.searchsorted(classes, a)]
        if costing:
            if rng.random() >= (0.5 / prob) / z:
                continue
            prob = 0.5  # omega = |r - 1/2| / prob = 1: an unweighted step
        logged = LoggedFeedback([a], [r], [prob])
        est.partial_fit(x, logged, classes=None if fitted else classes)
        fitted, updates = True, updates + 1
    return mistakes / X.shape[0], updates / X.shape[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--data-dir", default="../shared/data")
    args = parser.parse_args()
    X0, y = load_dataset("usps", data_dir=args.data_dir)
    print("USPS, 9,298 rounds, epsilon-greedy 0.1, C = 1; online error in %,")
    print(f"mean ± std over seeds 0..{args.seeds - 1}; 'updated': rounds learned, %")
    print(f"{'rows':10s} {'weighting':9s} {'update':6s} {'error':>15s} {'updated':>8s}")
    warnings.simplefilter("ignore")
    for how in ("stored", "unit-norm"):
        X = np.asarray(preprocess(X0, how), dtype=np.float64)
        for costing in (False, True):
            for update in ("pa", "pa1", "pa2"):
                out = np.array(
                    [run(X, y, update, s, costing) for s in range(args.seeds)]
                )
                err, upd = 100 * out[:, 0], 100 * out[:, 1]
                print(
                    f"{how:10s} {'costing' if costing else 'C*omega':9s} {update:6s} "
                    f"{err.mean():7.2f} ± {err.std(ddof=1):5.2f} {upd.mean():8.1f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
