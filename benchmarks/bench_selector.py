"""Rounds per second of OnlineSelector beside each of its default candidates alone.

Played on the seeded SynSep-like stream of ``_harness.py`` (d = 400, k = 9; CSR and
dense). One selector round runs every candidate's compiled ``act`` half (scores and
distribution), draws from the mixture, runs every candidate's ``learn`` half and
updates the off-policy estimates (O(C^2) on a rewarded round): its cost is about the
sum of its candidates' costs (OffsetTree's scores are its k - 1 node margins, where
alone it walks one path). After the table, the selector's seconds are compared with
its most expensive candidate's and with the sum of the candidates'.

    python benchmarks/bench_selector.py                 # default run
    python benchmarks/bench_selector.py --inputs csr --n-rounds 200000 --repeat 3
"""

from __future__ import annotations

import json
import os
import sys
import tempfile

from _harness import main, parse_args

from skbandit import OnlineSelector
from skbandit.multiclass._selector import default_candidates


def _candidate(i):
    def make(seed):
        return default_candidates()[i].set_params(random_state=seed)

    return make


NAMES = [
    "SquareCB()",
    "SquareCB(sqrt schedule)",
    "ConservativeOneVsAll()",
    "OffsetTree()",
]
LEARNERS = [("OnlineSelector()", lambda seed: OnlineSelector(random_state=seed))] + [
    (name, _candidate(i)) for i, name in enumerate(NAMES)
]


def summary(path: str) -> None:
    """The selector's one-call seconds against its candidates' on each input."""
    with open(path) as f:
        results = json.load(f)["results"]
    one_call = {
        (r["learner"], r["input"]): r
        for r in results
        if r["learner"].startswith("skbandit")
        and "(1 call)" in r["learner"]
        and r["seconds"]
    }
    print("\nselector cost (one partial_fit call over the whole input):")
    for kind in dict.fromkeys(r["input"] for r in results):
        rows = {
            name: one_call.get((f"skbandit {name} partial_fit (1 call)", kind))
            for name, _ in LEARNERS
        }
        if any(v is None for v in rows.values()):
            continue
        sel = rows.pop("OnlineSelector()")
        costs = [r["seconds"] for r in rows.values()]
        print(
            f"  {kind:>10}: {sel['rounds_per_s']:,.0f} rounds/s; "
            f"{sel['seconds'] / max(costs):.2f}x the most expensive candidate, "
            f"{sel['seconds'] / sum(costs):.2f}x the sum of the candidates' seconds"
        )


if __name__ == "__main__":
    argv = sys.argv[1:]
    user_json = parse_args(argv, __doc__).json
    with tempfile.TemporaryDirectory() as tmp:
        path = user_json or os.path.join(tmp, "bench_selector.json")
        if not user_json:
            argv = [*argv, "--json", path]
        code = main(LEARNERS, argv, description=__doc__)
        summary(path)
    sys.exit(code)
