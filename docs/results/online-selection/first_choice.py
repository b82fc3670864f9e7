"""Which learner the docs recommend first: ``OnlineSelector()`` or ``SquareCB()``.

The rule (the one that chose both learners' defaults, applied to the choice
between them): on the TUNING streams, the learner with the smallest worst-stream
mean ratio of its online error to Vowpal Wabbit's best ``--cbify`` configuration
on the same stream and seed, ties broken by the mean over streams. The
validation and ``vw-cbify`` rows are printed for the report only.

A last table is the noise floor of a single seed: on each validation and
``vw-cbify`` stream, Vowpal Wabbit's configuration with the best mean error
over the seeds (``../robust-defaults/vw_best.json``, written by
``benchmarks/robust_defaults.py``: each configuration's error per
``suite/stream/seed``), and the largest ratio of one of its seeds' error to
that mean. A learner whose errors were distributed exactly as that
configuration's would show single seeds this far above VW's mean from the
order of the rows alone. (1.000: the configuration made the same number of
mistakes on every seed.)

Reads the JSON files written by ``benchmarks/eval_selector.py`` in this folder
(per ``stream/seed``: each learner's online error and ``"VW best"``)::

    cd docs/results/online-selection && python first_choice.py > first_choice.txt
"""

from __future__ import annotations

import json
import os
from collections import defaultdict

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
VW_RUNS = os.path.join(HERE, os.pardir, "robust-defaults", "vw_best.json")
LEARNERS = {
    # the tuning grid names the selector by its parameters (the defaults)
    "OnlineSelector()": (
        "OnlineSelector(exploration=0.5, exploration_decay=0.3333333333333333, "
        "min_exploration=0.02, window=1000, confidence=0.95, eliminated_share=0.05)"
    ),
    "SquareCB()": "SquareCB()",
}


def ratios(suite: str) -> dict[str, dict[str, list[float]]]:
    """``{stream: {learner: [ratio per seed]}}`` for one suite."""
    with open(os.path.join(HERE, f"{suite}.json")) as f:
        runs = json.load(f)
    out: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for key, errors in runs.items():
        stream = key.rsplit("/", 1)[0]
        for name, stored in LEARNERS.items():
            error = errors.get(stored, errors.get(name))
            if error is not None and "VW best" in errors:
                out[stream][name].append(error / errors["VW best"])
    return out


def main() -> None:
    for suite in ("tuning", "validation", "vw-cbify"):
        table = ratios(suite)
        print(f"== {suite}: ratio of online error to VW's best (mean [max] over seeds)")
        print(f"{'stream':>22}  " + "  ".join(f"{n:>22}" for n in LEARNERS))
        for stream, row in table.items():
            cells = [
                f"{np.mean(row[n]):.3f} [{max(row[n]):.3f}] n={len(row[n])}"
                for n in LEARNERS
            ]
            print(f"{stream:>22}  " + "  ".join(f"{c:>22}" for c in cells))
        worst = {n: max(np.mean(r[n]) for r in table.values()) for n in LEARNERS}
        mean = {n: np.mean([np.mean(r[n]) for r in table.values()]) for n in LEARNERS}
        print(
            f"{'worst / mean':>22}  "
            + "  ".join(f"{f'{worst[n]:.3f} / {mean[n]:.3f}':>22}" for n in LEARNERS)
        )
        if suite == "tuning":
            pick = min(LEARNERS, key=lambda n: (worst[n], mean[n]))
            print(f"rule (smallest worst, then mean, on TUNING): {pick}")
        print()


def vw_seed_spread() -> None:
    """Print, per validation and ``vw-cbify`` stream, VW's best configuration
    by mean error and its largest seed over that mean (module docstring)."""
    with open(VW_RUNS) as f:
        runs = json.load(f)
    per_stream: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for key, errors in sorted(runs.items()):
        suite, stream, _seed = key.rsplit("/", 2)
        if suite in ("validation", "vw-cbify"):
            for config, error in errors.items():
                per_stream[(suite, stream)][config].append(error)
    print("== VW's own seed spread: its best configuration per stream (by mean")
    print("   error over the seeds), max over seeds of (seed's error / mean)")
    print(f"{'suite':>10}  {'stream':>20}  {'max seed / mean':>15}  configuration")
    for (suite, stream), configs in per_stream.items():
        best = min(configs, key=lambda c: np.mean(configs[c]))
        errors = configs[best]
        spread = max(errors) / np.mean(errors)
        print(
            f"{suite:>10}  {stream:>20}  {spread:>11.3f} n={len(errors)}  "
            f"{best.format(k='k')}"
        )


if __name__ == "__main__":
    main()
    vw_seed_spread()
