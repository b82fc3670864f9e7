"""Rounds per second of the one-vs-all learners beside the Banditron.

``ConservativeOneVsAll`` (PA-I), the linear ``SeparableOneVsAll`` and the
``OffsetTree`` baseline (PA-I nodes, exploration 0.1; O(nnz(x) log k) per round)
on the same seeded SynSep-like stream (d = 400, k = 9; CSR and dense) and peers as
``bench_core.py`` (scikit-learn's ``Perceptron.partial_fit``, a per-row NumPy
Banditron loop, Vowpal Wabbit's ``--cbify`` when installed); see ``_harness.py``.
The rational-kernel ``SeparableOneVsAll`` costs O(n_support * nnz(x)) per round:
``bench_ova_kernel.py`` times it against the number of support vectors.

    python benchmarks/bench_ova.py --inputs csr    # CSR only, under a minute
    python benchmarks/bench_ova.py --full          # 1,000,000 rounds
"""

import sys

from _harness import GAMMA, main

from skbandit import Banditron, ConservativeOneVsAll, OffsetTree, SeparableOneVsAll
from skbandit.exploration import EpsilonGreedy

LEARNERS = [
    (
        "Banditron",
        lambda seed: Banditron(exploration=EpsilonGreedy(GAMMA), random_state=seed),
    ),
    (
        "ConservativeOneVsAll-pa1",
        lambda seed: ConservativeOneVsAll(update="pa1", random_state=seed),
    ),
    ("SeparableOneVsAll", lambda seed: SeparableOneVsAll(random_state=seed)),
    ("OffsetTree-pa1", lambda seed: OffsetTree(update="pa1", random_state=seed)),
]

if __name__ == "__main__":
    sys.exit(main(LEARNERS, description=__doc__))
