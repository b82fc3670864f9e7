"""PNG figures of an experiment (matplotlib, optional extra)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from skbandit.evaluation._plot import require_matplotlib

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


def plot_experiment(result, out) -> list[Path]:
    """Write the experiment's figures into ``out``; return their paths.

    - ``gamma``: final online error vs gamma (log axis) per learner with a
      gamma grid, mean and standard deviation over seeds; learners without
      a gamma grid (the Perceptron, scikit-learn baselines) as horizontal
      lines. One PNG per data set.
    - ``curve``: online error vs rounds on log-log axes, each learner at its
      best parameters (mean over seeds).
    - ``mistakes``: cumulative mistakes vs rounds at the best parameters.
    """
    require_matplotlib(pyplot=False)
    from matplotlib.figure import Figure

    out = Path(out)
    files = []
    summary = result.summary()
    best = result.best()
    datasets = list(dict.fromkeys(r["dataset"] for r in summary))
    kinds = result.config.get("plots", [])
    for dataset in datasets:
        rows = [r for r in summary if r["dataset"] == dataset]
        if "gamma" in kinds:
            fig = Figure(figsize=(6.4, 4.4))
            ax = fig.subplots()
            labels = list(dict.fromkeys(r["learner"] for r in rows))
            styles = iter(["--", ":", "-.", (0, (5, 1)), (0, (1, 3))] * 4)
            for label in labels:
                points = [
                    r
                    for r in rows
                    if r["learner"] == label and "gamma" in r["grid_params"]
                ]
                if points:
                    points.sort(key=lambda r: r["grid_params"]["gamma"])
                    gammas = [r["grid_params"]["gamma"] for r in points]
                    ax.errorbar(
                        gammas,
                        [r["error"] for r in points],
                        yerr=[r["error_std"] for r in points],
                        marker="o",
                        markersize=3,
                        capsize=2,
                        label=label,
                    )
                else:
                    b = min(
                        (r for r in rows if r["learner"] == label),
                        key=lambda r: r["error"],
                    )
                    ax.axhline(
                        b["error"],
                        color="black" if "Perceptron" == label else None,
                        linestyle=next(styles),
                        linewidth=1,
                        label=label,
                    )
            ax.set_xscale("log", base=2)
            ax.set_xlabel("gamma (exploration)")
            ax.set_ylabel("online error (played action)")
            ax.set_title(f"{result.config['experiment']}: {dataset}")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize="small")
            path = out / f"gamma_{_safe(dataset)}.png"
            fig.tight_layout()
            fig.savefig(path, dpi=110)
            files.append(path)
        for kind in ("curve", "mistakes"):
            if kind not in kinds:
                continue
            fig = Figure(figsize=(6.4, 4.4))
            ax = fig.subplots()
            for b in (r for r in best if r["dataset"] == dataset):
                rounds, mistakes = _mean_curve(
                    result, dataset, b["learner"], _key(b["all_params"])
                )
                label = b["learner"] + (f" ({b['params']})" if b["params"] else "")
                if kind == "curve":
                    error = mistakes / rounds
                    keep = error > 0
                    ax.loglog(rounds[keep], error[keep], label=label)
                    ax.set_ylabel("online error (played action)")
                else:
                    ax.plot(rounds, mistakes, label=label)
                    ax.set_xscale("log")
                    ax.set_ylabel("cumulative mistakes")
            ax.set_xlabel("rounds")
            what = "best parameters" if kind == "curve" else "cumulative mistakes"
            ax.set_title(f"{result.config['experiment']}: {dataset} ({what})")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize="small")
            stem = "error_vs_rounds" if kind == "curve" else "mistakes"
            path = out / f"{stem}_{_safe(dataset)}.png"
            fig.tight_layout()
            fig.savefig(path, dpi=110)
            files.append(path)
    return files
