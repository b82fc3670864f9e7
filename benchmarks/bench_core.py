"""Rounds per second and peak memory of skbandit's Banditron and MulticlassPerceptron.

Played on a seeded SynSep-like stream (d = 400, k = 9; CSR and dense) beside
scikit-learn's ``Perceptron.partial_fit``, a per-row NumPy Banditron loop and Vowpal
Wabbit's ``--cbify`` (when installed). What is measured and how: ``_harness.py``.

    python benchmarks/bench_core.py            # default run, under a minute
    python benchmarks/bench_core.py --full     # 1,000,000 rounds, several minutes
"""

import sys

from _harness import GAMMA, main

from skbandit import Banditron, MulticlassPerceptron

try:
    from skbandit.exploration import EpsilonGreedy
except ImportError:  # a version before the exploration rules (``compare_release.py``)
    EpsilonGreedy = None


def _banditron(seed):
    if EpsilonGreedy is None:  # e.g. the previous release 9f6141f: the same learner
        return Banditron(gamma=GAMMA, random_state=seed)
    return Banditron(exploration=EpsilonGreedy(GAMMA), random_state=seed)


# (name, factory(seed) -> fresh estimator): a new learner is one more entry.
LEARNERS = [
    ("Banditron", _banditron),
    ("MulticlassPerceptron", lambda seed: MulticlassPerceptron(random_state=seed)),
]

if __name__ == "__main__":
    sys.exit(main(LEARNERS, description=__doc__))
