"""Rounds per second of SOBAdiag and PNewtron beside the Banditron.

The same seeded SynSep-like stream (d = 400, k = 9; CSR and dense) and peers as
``bench_core.py`` (scikit-learn's ``Perceptron.partial_fit``, a per-row NumPy
Banditron loop, Vowpal Wabbit's ``--cbify`` when installed); see ``_harness.py``.
Full SOBA (O((kd)^2) per update) is timed separately by ``bench_soba_full.py``.

    python benchmarks/bench_soba.py --inputs csr    # CSR only, under a minute
    python benchmarks/bench_soba.py --full          # 1,000,000 rounds
"""

import sys

from _harness import GAMMA, main

from skbandit import SOBA, Banditron, PNewtron
from skbandit.exploration import EpsilonGreedy, Softmax

LEARNERS = [
    (
        "Banditron",
        lambda seed: Banditron(exploration=EpsilonGreedy(GAMMA), random_state=seed),
    ),
    (
        "SOBA-diag",
        lambda seed: SOBA(exploration=EpsilonGreedy(GAMMA), random_state=seed),
    ),
    ("PNewtron", lambda seed: PNewtron(exploration=Softmax(GAMMA), random_state=seed)),
]

if __name__ == "__main__":
    sys.exit(main(LEARNERS, description=__doc__))
