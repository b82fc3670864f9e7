"""Rounds per second of Gaptron (each loss, bandit feedback) beside the Banditron.

Played on the seeded SynSep-like stream of ``_harness.py`` (d = 400, k = 9; CSR and
dense), next to scikit-learn's ``Perceptron.partial_fit``, a per-row NumPy Banditron
loop and Vowpal Wabbit's ``--cbify`` (when installed). Gaptron runs with the
Banditron's exploration ``gamma`` and the AdaGrad-norm step (the theory's step,
``step_size="constant"``, costs the same per round). The hinge losses update two
weight rows per learning round; the logistic loss needs a softmax (k exponentials)
per round for its gap map and, on learning rounds, all k rows.

    python benchmarks/bench_gaptron.py            # default run, about a minute
    python benchmarks/bench_gaptron.py --inputs csr --n-rounds 1000000
"""

import sys
import warnings

from _harness import GAMMA, main

from skbandit import Banditron, Gaptron
from skbandit.exploration import EpsilonGreedy, GapMap

# SynSep rows have ||x|| of about 6.6; the bound only scales the theory's step.
X_NORM_BOUND = 8.0


def _gaptron(loss):
    def factory(seed):
        return Gaptron(
            loss=loss,
            exploration=GapMap(GAMMA),
            step_size="adagrad",
            x_norm_bound=X_NORM_BOUND,
            random_state=seed,
        )

    return factory


LEARNERS = [
    (
        "Banditron",
        lambda seed: Banditron(exploration=EpsilonGreedy(GAMMA), random_state=seed),
    ),
    ("Gaptron logistic", _gaptron("logistic")),
    ("Gaptron hinge", _gaptron("hinge")),
    ("Gaptron smooth_hinge", _gaptron("smooth_hinge")),
]

if __name__ == "__main__":
    warnings.filterwarnings("ignore", message="Gaptron: .* x_norm_bound")
    sys.exit(main(LEARNERS, description=__doc__))
