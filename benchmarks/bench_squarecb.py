"""Rounds per second of SquareCB (each regressor) beside the Banditron.

Played on the seeded SynSep-like stream of ``_harness.py`` (d = 400, k = 9; CSR and
dense), next to scikit-learn's ``Perceptron.partial_fit``, a per-row NumPy Banditron
loop and Vowpal Wabbit's ``--cbify`` (when installed). SquareCB runs with its default
parameters (inverse gap weighting, the normalized NAG oracle with intercept and
shared scales), with per-class NAG scales (``shared_scale=False``, the previous
default) and with the AdaGrad and SGD oracles. A round scores k rows of ``W x``
and updates one row (the played class's regressor): ``O(k nnz + nnz)``, with a
square root and a division per non-zero for the adaptive oracles.

    python benchmarks/bench_squarecb.py            # default run, about a minute
    python benchmarks/bench_squarecb.py --inputs csr --n-rounds 1000000
"""

import sys

from _harness import GAMMA, main

from skbandit import Banditron, SquareCB
from skbandit.exploration import EpsilonGreedy
from skbandit.optim import AdaGrad, Constant

LEARNERS = [
    (
        "Banditron",
        lambda seed: Banditron(exploration=EpsilonGreedy(GAMMA), random_state=seed),
    ),
    ("SquareCB", lambda seed: SquareCB(random_state=seed)),
    (
        "SquareCB per-class scales",
        lambda seed: SquareCB(shared_scale=False, random_state=seed),
    ),
    (
        "SquareCB adagrad",
        lambda seed: SquareCB(step_size=AdaGrad(0.1), random_state=seed),
    ),
    (
        "SquareCB sgd",
        lambda seed: SquareCB(step_size=Constant(0.01), random_state=seed),
    ),
]

if __name__ == "__main__":
    sys.exit(main(LEARNERS, description=__doc__))
