"""Choose one default per learner from `skbandit compare` results.

Usage: python select.py [--streams A,B,...] [--out CSV] RESULTS_DIR [RESULTS_DIR ...]

``--streams``: apply the rule to these data sets only (a tuning set; the
others are held out for reporting); ``--out``: where to write the table
(default ``selection.csv`` beside this script).

Reads each folder's ``results.csv`` (one row per data set, learner, parameter
setting and seed; the ``(default)`` rows are left out) and applies the rule of
docs/experiments.md, "Defaults from evidence":

- ``best[s]``: the learner's lowest seed-averaged online error on stream ``s``
  over all its settings;
- ``excess[setting, s]``: the setting's *worst seed* online error on ``s``
  minus ``best[s]``, in percentage points;
- the default minimises the worst excess over the streams; settings within
  ``TIE`` points of the minimum are tied, and the tie goes to the smallest
  mean excess;
- the recommended range: the exploration values (the other parameters at
  their chosen values) whose worst excess is at most ``RANGE`` points above
  the default's.

Prints one table per learner and writes ``selection.csv`` beside this script.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pandas as pd

LEARNERS = {
    "Banditron": "gamma",
    "SOBA": "gamma",
    "PNewtron": "gamma",
    "Gaptron": "gamma",
    "OffsetTree": "exploration",
}
TIE = 1.0
RANGE = 5.0


def load(folders, streams=None):
    rows = pd.concat([pd.read_csv(Path(f) / "results.csv") for f in folders])
    rows = rows[
        rows["name"].isin(LEARNERS) & ~rows["learner"].str.endswith("(default)")
    ]
    if streams is not None:
        rows = rows[rows["dataset"].isin(streams)]
    rows = rows.assign(
        setting=rows["params"].map(lambda p: json.dumps(json.loads(p), sort_keys=True))
    )
    return rows


def select(rows):
    tables, chosen = [], {}
    for name, block in rows.groupby("name"):
        by = block.groupby(["setting", "dataset"])["error"]
        mean, worst = by.mean().unstack(), by.max().unstack()
        excess = 100 * (worst - mean.min(axis=0))
        table = pd.DataFrame([json.loads(s) for s in excess.index], index=excess.index)
        table.insert(0, "learner", name)
        for d in excess.columns:
            table[f"excess_{d}"] = excess[d]
        table["worst_excess"] = excess.max(axis=1)
        table["mean_excess"] = excess.mean(axis=1)
        tied = table[table["worst_excess"] <= table["worst_excess"].min() + TIE]
        pick = tied.sort_values("mean_excess").iloc[0]
        key = LEARNERS[name]
        others = [c for c in json.loads(pick.name) if c != key]
        same = (table[others] == pick[others]).all(axis=1) if others else True
        ok = table[same & (table["worst_excess"] <= pick["worst_excess"] + RANGE)]
        chosen[name] = {
            "default": json.loads(pick.name),
            "worst_excess": round(float(pick["worst_excess"]), 1),
            "mean_excess": round(float(pick["mean_excess"]), 1),
            "range": [
                label(v) for v in sorted(v for v in ok[key] if isinstance(v, float))
            ],
        }
        tables.append(table.sort_values(["worst_excess", "mean_excess"]))
    return pd.concat(tables, ignore_index=True), chosen


def label(value):
    """0.0625 -> '2^-4'; other values as they are."""
    if isinstance(value, float) and 0 < value < 1:
        exponent = math.log2(value)
        if exponent == round(exponent):
            return f"2^{int(exponent)}"
    return str(value)


def main(folders, streams=None, out=None):
    table, chosen = select(load(folders, streams))
    out = Path(__file__).with_name("selection.csv") if out is None else Path(out)
    table.to_csv(out, index=False, float_format="%.4g")
    pd.set_option("display.width", 250)
    pd.set_option("display.max_columns", 30)
    for name, block in table.groupby("learner", sort=False):
        block = block.dropna(axis=1, how="all").drop(columns=["learner"])
        block.columns = [c.replace("excess_", "") for c in block.columns]
        for c in ("gamma", "exploration", "C", "learning_rate", "adagrad_scale"):
            if c in block:
                block[c] = block[c].map(label)
        print(
            f"== {name}: online error excess over the best setting, percentage points"
        )
        print(block.head(8).to_string(index=False, float_format=lambda v: f"{v:.1f}"))
        print("chosen:", chosen[name])
        print()


if __name__ == "__main__":
    args, streams, out = sys.argv[1:], None, None
    while args and args[0] in ("--streams", "--out"):
        flag, value, args = args[0], args[1], args[2:]
        if flag == "--streams":
            streams = value.split(",")
        else:
            out = value
    main(args, streams, out)
