"""Before/after table of ``OnlineSelector()`` at its defaults: the previous
rule's errors (the JSON files of ``docs/results/online-selection/``, and
``before/switching.json`` for the switching streams) against this folder's
(the challenger on trial), mean over seeds, with the best candidate alone and
Vowpal Wabbit's best of the five ``vw-cbify`` configurations where stored.

    cd docs/results/online-selection/switching && python compare.py > compare.txt
"""

from __future__ import annotations

import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CANDIDATES = [
    "SquareCB()",
    "SquareCB(exploration=InverseGap(300, exponent=0.5))",
    "ConservativeOneVsAll()",
    "OffsetTree()",
]
# the defaults' label in the tuning grid of the previous run
GRID_DEFAULT = (
    "OnlineSelector(exploration=0.5, exploration_decay=0.3333333333333333, "
    "min_exploration=0.02, window=1000, confidence=0.95, eliminated_share=0.05)"
)
SUITES = {
    "tuning": ("../tuning.json", range(6)),
    "validation": ("../validation.json", range(3)),
    "vw-cbify": ("../vw-cbify.json", range(3)),
    "switching": ("before/switching.json", range(3)),
}


def _selector(row: dict) -> float:
    return row["OnlineSelector()"] if "OnlineSelector()" in row else row[GRID_DEFAULT]


def main() -> None:
    for suite, (before_path, seeds) in SUITES.items():
        with open(os.path.join(HERE, before_path)) as f:
            before = json.load(f)
        with open(os.path.join(HERE, f"{suite}.json")) as f:
            after = json.load(f)
        streams = list(dict.fromkeys(k.split("/")[0] for k in after))
        print(f"### {suite} streams (seeds {seeds.start}-{seeds.stop - 1})\n")
        print(
            "| stream | best candidate alone | its error | before | ratio "
            "| after | ratio | VW best | before / VW | after / VW |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|")
        ratios = {"before": [], "after": [], "before_vw": [], "after_vw": []}
        for s in streams:
            old = [before[f"{s}/{i}"] for i in seeds]
            new = [after[f"{s}/{i}"] for i in seeds]
            means = {c: np.mean([r[c] for r in new]) for c in CANDIDATES}
            best = min(means, key=means.get)
            b = np.mean([_selector(r) for r in old])
            a = np.mean([r["OnlineSelector()"] for r in new])
            cells = [f"{b / means[best]:.3f}", f"{a / means[best]:.3f}"]
            ratios["before"].append(b / means[best])
            ratios["after"].append(a / means[best])
            vw = [r.get("VW best") for r in new]
            if all(v is not None for v in vw):
                v = np.mean(vw)
                vw_cells = [f"{v:.4f}", f"{b / v:.3f}", f"{a / v:.3f}"]
                ratios["before_vw"].append(b / v)
                ratios["after_vw"].append(a / v)
            else:
                vw_cells = ["-", "-", "-"]
            print(
                f"| {s} | {best} | {means[best]:.4f} | {b:.4f} | {cells[0]} "
                f"| {a:.4f} | {cells[1]} | " + " | ".join(vw_cells) + " |"
            )
        print()
        for key, vals in ratios.items():
            if vals:
                print(
                    f"- {key.replace('_vw', ' / VW')}: worst {max(vals):.3f}, "
                    f"median {np.median(vals):.3f}, mean {np.mean(vals):.3f}"
                )
        print()


if __name__ == "__main__":
    main()
