"""The table of Gaptron's step-size defaults, from ``results.csv``.

Usage: python report.py  (prints the table; writes report.txt beside this script)

Online error (%) of one pass, mean of seeds 0-4 (worst seed in brackets), for
the previous default (``learning_rate="auto"``, the theory's step), the new default
chosen by ``select.py`` on the tuning streams (``learning_rate="adagrad"``,
``adagrad_scale=1024``), both at ``gamma=0.125``, and uniform play,
``(k - 1) / k``. Held-out streams were not used for choosing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

HERE = Path(__file__).parent
SETTINGS = {
    "previous (learning_rate=auto)": {"gamma": 0.125, "learning_rate": "auto"},
    "chosen (learning_rate=adagrad, B=1024)": {
        "gamma": 0.125,
        "learning_rate": "adagrad",
        "adagrad_scale": 1024.0,
    },
}


def main():
    rows = pd.read_csv(HERE / "results.csv")
    rows["key"] = rows["params"].map(
        lambda p: json.dumps(json.loads(p), sort_keys=True)
    )
    streams = rows.drop_duplicates("dataset").set_index("dataset")
    table = pd.DataFrame(
        {
            "split": streams["split"],
            "rounds": streams["rounds"],
            "uniform": (100 * streams["uniform_error"]).map("{:.1f}".format),
        }
    )
    for label, params in SETTINGS.items():
        chosen = rows[rows["key"] == json.dumps(params, sort_keys=True)]
        err = 100 * chosen.groupby("dataset")["error"].agg(["mean", "max"])
        mean, worst = err.loc[table.index, "mean"], err.loc[table.index, "max"]
        table[label] = [f"{m:.1f} ({w:.1f})" for m, w in zip(mean, worst, strict=True)]
    text = table.to_string()
    (HERE / "report.txt").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
