"""The result of an experiment run: rows, summary table, CSV, JSON and plots."""

from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from skbandit.evaluation._format import format_table
from skbandit.experiments._specs import upgrade_config, upgrade_params

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ExperimentResult"]


def _params_str(params: dict[str, Any], keys: Sequence[str] | None = None) -> str:
    keys = list(params) if keys is None else [k for k in keys if k in params]
    parts = []
    for k in keys:
        v = params[k]
        if isinstance(v, float):
            exponent = math.log2(v) if v > 0 else 0.5
            v = (
                f"2^{int(exponent)}"
                if exponent == int(exponent) and v < 1
                else f"{v:g}"
            )
        parts.append(f"{k}={v}")
    return ", ".join(parts)


@dataclass(repr=False)
class ExperimentResult:
    """Results of a run: one row per (data set, learner, parameters, seed).

    ``print(result)`` shows the table of :meth:`table`; ``repr(result)`` is one
    line (experiment, number of runs, data sets, learners, skipped, seconds).

    Attributes
    ----------
    config : dict
        The exact configuration (re-run it with :func:`rerun` or
        :func:`run_config`).
    versions : dict
        Python, platform and library versions.
    rows : list of dict
        One per task: final mistakes and errors, timing and the learning
        curve at the checkpoints.
    skipped : list of str
        Why data sets or learners were skipped.
    seconds : float
        Wall-clock time of the run.
    files : list of Path
        Files written by :meth:`write`.
    """

    config: dict[str, Any]
    versions: dict[str, str]
    rows: list[dict[str, Any]]
    skipped: list[str] = field(default_factory=list)
    seconds: float = 0.0
    files: list[Path] = field(default_factory=list)

    def __repr__(self) -> str:
        # Short: rows carry whole learning curves (the table is str()/table()).
        datasets = list(dict.fromkeys(r["dataset"] for r in self.rows))
        learners = list(dict.fromkeys(r["learner"] for r in self.rows))
        quick = ", quick=True" if self.config.get("quick") else ""
        return (
            f"ExperimentResult(experiment={self.config.get('experiment')!r}{quick}, "
            f"runs={len(self.rows)}, datasets={datasets}, learners={learners}, "
            f"skipped={len(self.skipped)}, seconds={self.seconds:.1f})"
        )

    def __str__(self) -> str:
        head = (
            f"{self.config.get('experiment')}"
            + (" (quick)" if self.config.get("quick") else "")
            + f": {len(self.rows)} runs in {self.seconds:.1f} s"
        )
        return head + ("\n" + self.table() if self.rows else "\nno runs")

    def summary(self) -> list[dict[str, Any]]:
        """Mean and standard deviation over seeds per (data set, learner, params)."""
        groups: dict[tuple, list[dict[str, Any]]] = {}
        for row in self.rows:
            key = (
                row["dataset"],
                row["learner"],
                json.dumps(row["params"], sort_keys=True),
            )
            groups.setdefault(key, []).append(row)
        out = []
        for (dataset, learner, _), rows in groups.items():
            errors = np.array([r["error"] for r in rows])
            greedy = [r["greedy_error"] for r in rows if r["greedy_error"] is not None]
            speed = [r["rounds_per_s"] for r in rows if r["rounds_per_s"]]
            first = rows[0]
            out.append(
                {
                    "dataset": dataset,
                    "learner": learner,
                    "name": first["name"],
                    "params": _params_str(first["grid_params"]),
                    "grid_params": first["grid_params"],
                    "all_params": first["params"],
                    "feedback": first["feedback"],
                    "seeds": len(rows),
                    "rounds": first["rounds"],
                    "error": float(errors.mean()),
                    "error_std": float(errors.std(ddof=1)) if len(rows) > 1 else 0.0,
                    "greedy_error": float(np.mean(greedy)) if greedy else float("nan"),
                    "rounds_per_s": float(np.mean(speed)) if speed else float("nan"),
                }
            )
        return out

    def best(self) -> list[dict[str, Any]]:
        """Per (data set, learner): the parameters with the lowest mean error."""
        best: dict[tuple, dict[str, Any]] = {}
        for row in self.summary():
            key = (row["dataset"], row["learner"])
            if key not in best or row["error"] < best[key]["error"]:
                best[key] = row
        return list(best.values())

    def table(self, which: str | None = None) -> str:
        """Text table of :meth:`best` (or, with ``which="all"``, of every
        setting in :meth:`summary`): what the command line prints."""
        which = which or self.config.get("table", "best")
        rows = []
        for r in self.best() if which == "best" else self.summary():
            rows.append(
                {
                    **r,
                    "best params": r["params"] or "-",
                    "error ± std": f"{r['error']:.4f} ± {r['error_std']:.4f}",
                }
            )
        columns = [
            "dataset",
            "learner",
            "best params",
            "seeds",
            "rounds",
            "error ± std",
            "greedy_error",
            "rounds_per_s",
        ]
        return format_table(rows, columns)

    @classmethod
    def load(cls, path: str | os.PathLike) -> ExperimentResult:
        """The result recorded in a ``results.json`` (written by :meth:`write`).

        Parameters recorded under names since renamed are translated, in the
        configuration and in every row (:func:`upgrade_config`,
        :func:`upgrade_params`), so tables show today's names.
        """
        stored = json.loads(Path(path).read_text())
        config, _ = upgrade_config(stored["config"])
        rows = []
        for row in stored["rows"]:
            row = dict(row)
            row["params"] = upgrade_params(row["name"], row["params"])
            row["grid_params"] = upgrade_params(row["name"], row["grid_params"])
            rows.append(row)
        return cls(
            config=config,
            versions=stored.get("versions", {}),
            rows=rows,
            skipped=list(stored.get("skipped", [])),
            seconds=float(stored.get("seconds", 0.0)),
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable: configuration, versions, skipped, rows, summary."""
        return {
            "config": self.config,
            "versions": self.versions,
            "skipped": list(self.skipped),
            "seconds": self.seconds,
            "rows": self.rows,
            "summary": [
                {k: v for k, v in r.items() if k != "all_params"}
                for r in self.summary()
            ],
        }

    def to_frame(self, summary: bool = False) -> pd.DataFrame:
        """One row per task (or per summary group) as a pandas DataFrame."""
        from skbandit.evaluation._format import _require_pandas

        pd = _require_pandas("ExperimentResult.to_frame()")
        if summary:
            return pd.DataFrame(self.summary())
        return pd.DataFrame(
            [
                {k: v for k, v in r.items() if not k.startswith("curve_")}
                for r in self.rows
            ]
        )

    def write(self, out: str | os.PathLike, *, plots: bool = True) -> list[Path]:
        """Write ``results.csv``, ``summary.csv``, ``curves.csv``,
        ``results.json`` and (with ``plots``) PNG figures into folder ``out``.

        A result without rows (nothing could run) raises ``ValueError`` and
        writes nothing."""
        if not self.rows:
            raise ValueError(
                "nothing to write: the run has no rows"
                + (f" ({'; '.join(self.skipped)})" if self.skipped else "")
            )
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        files = []
        task_cols = [
            "dataset",
            "learner",
            "name",
            "params",
            "seed",
            "feedback",
            "rounds",
            "mistakes",
            "greedy_mistakes",
            "error",
            "greedy_error",
            "seconds",
            "rounds_per_s",
        ]
        files.append(
            _write_csv(
                out / "results.csv",
                task_cols,
                [
                    {**r, "params": json.dumps(r["params"], sort_keys=True)}
                    for r in self.rows
                ],
            )
        )
        sum_cols = [
            "dataset",
            "learner",
            "name",
            "params",
            "feedback",
            "seeds",
            "rounds",
            "error",
            "error_std",
            "greedy_error",
            "rounds_per_s",
        ]
        files.append(_write_csv(out / "summary.csv", sum_cols, self.summary()))
        curves = [
            {
                "dataset": r["dataset"],
                "learner": r["learner"],
                "params": json.dumps(r["params"], sort_keys=True),
                "seed": r["seed"],
                "round": t,
                "mistakes": m,
                "greedy_mistakes": g,
            }
            for r in self.rows
            for t, m, g in zip(
                r["curve_rounds"],
                r["curve_mistakes"],
                r["curve_greedy_mistakes"],
                strict=True,
            )
        ]
        files.append(
            _write_csv(
                out / "curves.csv",
                [
                    "dataset",
                    "learner",
                    "params",
                    "seed",
                    "round",
                    "mistakes",
                    "greedy_mistakes",
                ],
                curves,
            )
        )
        path = out / "results.json"
        path.write_text(json.dumps(self.to_dict(), indent=1, default=_json_default))
        files.append(path)
        if plots:
            from skbandit.experiments._plot import plot_experiment

            files += plot_experiment(self, out)
        self.files = files
        return files


def _json_default(obj):
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def _write_csv(path: Path, columns: list[str], rows: list[dict[str, Any]]) -> Path:
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow(
                {c: "" if row.get(c) is None else row.get(c) for c in columns}
            )
    return path
