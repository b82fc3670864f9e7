"""PNG figures of an experiment (matplotlib, optional extra)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from skbandit.evaluation._plot import require_matplotlib, series_styles
from skbandit.experiments._specs import EPSILON

__all__ = ["plot_experiment"]


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)


def _mean_curve(result, dataset: str, learner: str, params_key: str):
    rows = [
        r
        for r in result.rows
        if r["dataset"] == dataset
        and r["learner"] == learner
        and _key(r["params"]) == params_key
    ]
    rounds = np.asarray(rows[0]["curve_rounds"], dtype=np.float64)
    mistakes = np.mean([r["curve_mistakes"] for r in rows], axis=0)
    return rounds, mistakes


def _key(params) -> str:
    import json

    return json.dumps(params, sort_keys=True)


def _title(result, dataset: str, what: str, rows) -> str:
    """Experiment, data set, what is drawn and at which settings."""
    seeds = len(result.config.get("seeds", [])) or 1
    tuned = any(r["params"] for r in rows)
    fixed = any(not r["params"] for r in rows)
    if tuned and fixed:
        which = "learners with a grid: lowest-error setting; others: fixed settings"
    elif tuned:
        which = "each learner at its lowest-error setting (legend)"
    else:
        which = "each learner at its fixed settings"
    mean = f"mean of {seeds} seeds" if seeds > 1 else "1 seed"
    return f"{result.config['experiment']}: {dataset}, {what}\n{which}; {mean}"


def _figures(result):
    """Yield ``(file name, Figure)`` for each of the experiment's plots."""
    require_matplotlib(pyplot=False)
    from matplotlib.figure import Figure

    summary = result.summary()
    best = result.best()
    datasets = list(dict.fromkeys(r["dataset"] for r in summary))
    kinds = result.config.get("plots", [])
    for dataset in datasets:
        rows = [r for r in summary if r["dataset"] == dataset]
        if "epsilon" in kinds:
            fig = Figure(figsize=(6.4, 4.6))
            ax = fig.subplots()
            labels = list(dict.fromkeys(r["learner"] for r in rows))
            for label, style in zip(labels, series_styles(len(labels)), strict=True):
                points = [
                    r
                    for r in rows
                    if r["learner"] == label and EPSILON in r["grid_params"]
                ]
                if points:
                    points.sort(key=lambda r: r["grid_params"][EPSILON])
                    rates = [r["grid_params"][EPSILON] for r in points]
                    ax.errorbar(
                        rates,
                        [r["error"] for r in points],
                        yerr=[r["error_std"] for r in points],
                        markersize=3,
                        capsize=2,
                        label=label,
                        **style,
                    )
                else:
                    b = min(
                        (r for r in rows if r["learner"] == label),
                        key=lambda r: r["error"],
                    )
                    ax.axhline(
                        b["error"], linewidth=1, label=label, markersize=0, **style
                    )
            ax.set_xscale("log", base=2)
            ax.set_xlabel("epsilon (exploration rate)")
            ax.set_ylabel("online error (played action)")
            seeds = len(result.config.get("seeds", [])) or 1
            ax.set_title(
                f"{result.config['experiment']}: {dataset}, final online error vs "
                f"epsilon\nmean ± std of {seeds} seeds; learners without an epsilon "
                "grid: lines",
                fontsize="medium",
            )
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize="small")
            yield f"epsilon_{_safe(dataset)}.png", fig
        for kind in ("curve", "mistakes"):
            if kind not in kinds:
                continue
            fig = Figure(figsize=(6.4, 4.6))
            ax = fig.subplots()
            drawn = [r for r in best if r["dataset"] == dataset]
            for b, style in zip(drawn, series_styles(len(drawn)), strict=True):
                rounds, mistakes = _mean_curve(
                    result, dataset, b["learner"], _key(b["all_params"])
                )
                label = b["learner"] + (f" ({b['params']})" if b["params"] else "")
                if kind == "curve":
                    error = mistakes / rounds
                    keep = error > 0
                    ax.loglog(
                        rounds[keep], error[keep], label=label, markersize=3, **style
                    )
                    ax.set_ylabel("online error (played action)")
                else:
                    ax.plot(rounds, mistakes, label=label, markersize=3, **style)
                    ax.set_xscale("log")
                    ax.set_ylabel("cumulative mistakes")
            ax.set_xlabel("rounds")
            what = (
                "online error vs rounds"
                if kind == "curve"
                else "cumulative mistakes vs rounds"
            )
            ax.set_title(_title(result, dataset, what, drawn), fontsize="medium")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize="small" if len(drawn) <= 8 else "x-small")
            stem = "error_vs_rounds" if kind == "curve" else "mistakes"
            yield f"{stem}_{_safe(dataset)}.png", fig


def plot_experiment(result, out) -> list[Path]:
    """Write the experiment's figures into ``out``; return their paths.

    - ``epsilon``: final online error vs the exploration rate
      ``exploration__epsilon`` (log axis) per learner with a grid over it,
      mean and standard deviation over seeds; learners without that grid
      (the Perceptron, scikit-learn baselines) as horizontal lines. One PNG
      per data set.
    - ``curve``: online error vs rounds on log-log axes, each learner with a
      grid at its lowest-error setting (named in the legend), the others at
      their fixed settings (mean over seeds).
    - ``mistakes``: cumulative mistakes vs rounds, the same series.

    Every series of a figure has its own (colour, line style, marker), see
    :func:`skbandit.evaluation._plot.series_styles`; titles say what is drawn.
    """
    out = Path(out)
    files = []
    for name, fig in _figures(result):
        path = out / name
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        files.append(path)
    return files
