"""Run an experiment: (learner, parameters, seed) tasks in parallel with joblib."""

from __future__ import annotations

import contextlib
import csv
import json
import math
import os
import platform
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from skbandit.base import BaseBanditClassifier
from skbandit.evaluation import log_checkpoints, progressive_validation
from skbandit.evaluation._format import format_table
from skbandit.experiments._data import (
    DatasetUnavailable,
    check_dataset_names,
    load_dataset,
    missing_data_advice,
    preprocess,
)
from skbandit.experiments._learners import (
    LearnerUnavailable,
    VWLearner,
    bandit_learner_names,
    has_numeric_epsilon,
    make_learner,
)
from skbandit.experiments._specs import (
    ALL_BANDIT,
    Experiment,
    get_experiment,
    param_points,
    upgrade_config,
    upgrade_params,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "ExperimentResult",
    "rerun",
    "run_config",
    "run_experiment",
    "verify_rows",
]


def _quiet(message: str) -> None:
    pass


def _versions() -> dict[str, str]:
    versions = {"python": platform.python_version(), "platform": platform.platform()}
    for dist in (
        "skbandit",
        "numpy",
        "scipy",
        "scikit-learn",
        "joblib",
        "matplotlib",
        "pandas",
        "vowpalwabbit",
    ):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = "not installed"
    return versions


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


def expand_learners(learners: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Replace ``all-bandit`` by every skbandit bandit learner (default + grid)."""
    out = []
    for learner in learners:
        if learner["name"] != ALL_BANDIT:
            out.append(learner)
            continue
        for name in bandit_learner_names():
            out.append(
                {
                    "name": name,
                    "label": f"{name} (default)",
                    "params": {},
                    "grid": {},
                    "per_dataset": {},
                }
            )
            if learner.get("grid") and has_numeric_epsilon(name):
                out.append(
                    {
                        "name": name,
                        "label": name,
                        "params": {},
                        "grid": dict(learner["grid"]),
                        "per_dataset": {},
                    }
                )
    return out


def _run_task(X, y, classes, task: dict[str, Any]) -> dict[str, Any]:
    """One (data set, learner, parameters, seed): progressive validation."""
    checkpoints = np.asarray(task["checkpoints"], dtype=np.int64)
    estimator = make_learner(task["name"], task["params"], task["seed"])
    if isinstance(estimator, VWLearner):
        curve = estimator.run(X, y, classes, checkpoints)
        mistakes = np.asarray(curve["mistakes"], dtype=np.int64)
        greedy = np.full(mistakes.shape, -1, dtype=np.int64)
        seconds = np.asarray(curve["seconds"], dtype=np.float64)
        feedback = "bandit"
    else:
        result = progressive_validation(
            estimator,
            X,
            y,
            classes=classes,
            chunk_size=task["chunk_size"]
            if isinstance(estimator, BaseBanditClassifier)
            else task["minibatch_size"],
            checkpoints=checkpoints,
        )
        mistakes, greedy = result.mistakes, result.greedy_mistakes
        seconds, feedback = result.seconds, result.feedback
    n = int(checkpoints[-1])
    total = float(seconds[-1]) if seconds.size else 0.0
    return {
        "dataset": task["dataset"],
        "learner": task["label"],
        "name": task["name"],
        "params": task["params"],
        "grid_params": task["grid_params"],
        "seed": task["seed"],
        "feedback": feedback,
        "rounds": n,
        "mistakes": int(mistakes[-1]),
        "greedy_mistakes": int(greedy[-1]) if greedy[-1] >= 0 else None,
        "error": int(mistakes[-1]) / n,
        "greedy_error": int(greedy[-1]) / n if greedy[-1] >= 0 else None,
        "seconds": total,
        "rounds_per_s": n / total if total > 0 else None,
        "curve_rounds": checkpoints.tolist(),
        "curve_mistakes": mistakes.tolist(),
        "curve_greedy_mistakes": greedy.tolist(),
    }


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


def _progress(enabled: bool, total: int):
    if not enabled:
        return None
    import sys

    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    if not sys.stderr.isatty():
        return None
    return tqdm(total=total, unit="runs", leave=False)


@contextlib.contextmanager
def _parallel_context(backend: str | None, scheduler: str | None, n_jobs: int):
    """joblib's backend for the run; for Dask, a client to use or to start.

    ``scheduler`` (an address such as ``"tcp://10.0.0.5:8786"``) connects to a
    running Dask cluster; ``backend="dask"`` without one reuses the current
    ``distributed.Client`` if there is one, else starts a local cluster of
    ``n_jobs`` single-threaded worker processes on 127.0.0.1 for the run and
    closes it afterwards (also when the run fails).
    """
    from joblib import effective_n_jobs, parallel_config

    if scheduler is not None and backend not in (None, "dask"):
        raise ValueError(
            f"scheduler={scheduler!r} is a Dask scheduler address: it needs "
            f"backend='dask' (or None), got backend={backend!r}"
        )
    if scheduler is None and backend != "dask":
        with parallel_config(backend=backend) if backend else contextlib.nullcontext():
            yield
        return
    try:
        import distributed
    except ImportError:
        raise ImportError(
            "the dask backend needs distributed, which is not installed: "
            'pip install "skbandit[dask]"'
        ) from None
    with contextlib.ExitStack() as stack:
        if scheduler is not None:
            client = stack.enter_context(distributed.Client(scheduler))
        else:
            try:
                client = distributed.default_client()
            except ValueError:  # no client yet: a local cluster for this run
                cluster = stack.enter_context(
                    distributed.LocalCluster(
                        n_workers=effective_n_jobs(n_jobs),
                        threads_per_worker=1,
                        processes=True,
                        host="127.0.0.1",
                        # its HTTP server (no dashboard without bokeh) on
                        # loopback too, on a free port
                        dashboard_address="127.0.0.1:0",
                    )
                )
                client = stack.enter_context(distributed.Client(cluster))
        stack.enter_context(parallel_config(backend="dask", client=client))
        yield


def run_config(
    config: dict[str, Any],
    *,
    n_jobs: int = 1,
    backend: str | None = None,
    scheduler: str | None = None,
    data_dir: str | os.PathLike | None = None,
    download: bool = True,
    progress: bool = False,
    echo: Callable[[str], None] | None = None,
    skip_unavailable: bool = False,
) -> ExperimentResult:
    """Run an exact configuration (as written in ``results.json``).

    Parameters
    ----------
    config : dict
        From :meth:`Experiment.config` or a ``results.json``'s ``"config"``.
        Its ``"preprocessing"`` maps data sets to ``"stored"`` (the default for
        a data set it does not name), ``"unit-range"`` or ``"unit-norm"``,
        applied to the rows after loading. Parameters must have today's
        names (:func:`rerun` and :func:`replay_config` translate recorded
        ones). Two optional keys serve replays of a prefix
        (:func:`rerun`): ``"prefix"`` (an int: load ``n_samples`` rows, then
        keep the first ``prefix``) and ``"checkpoints"`` (data set -> rounds
        of the learning curve, instead of the log-spaced ones).
    n_jobs : int, default=1
        joblib workers (``-1``: all cores).
    backend : str, default=None
        joblib backend (``"loky"``, ``"threading"``, ``"dask"``, ``"ray"``, ...),
        passed through to ``joblib.parallel_config``. ``"dask"`` runs the tasks
        on a Dask cluster (``pip install "skbandit[dask]"``): the one at
        ``scheduler``; else the current ``distributed.Client`` if one exists;
        else a local cluster of ``n_jobs`` single-threaded worker processes on
        127.0.0.1, started for the run and closed when it ends (also on error).
    scheduler : str, default=None
        Address of a running Dask scheduler (``"tcp://host:8786"``); implies
        ``backend="dask"``. The client is closed after the run; the cluster is
        left running.
    data_dir : path-like, default=None
        Folder with local copies of the real data sets (default: the loaders'
        cache).
    download : bool, default=True
        Without ``data_dir``, allow the loaders to download.
    progress : bool, default=False
        A progress bar over tasks (tqdm installed and a terminal only).
    echo : callable, default=None
        Receives one-line messages (skipped data sets and learners).
    skip_unavailable : bool, default=False
        What to do with a learner setting that cannot run (an unknown name,
        Vowpal Wabbit not installed, a parameter the learner refuses): by
        default the run stops before any task starts with
        ``LearnerUnavailable``, whose message names every such setting
        (learner, data set, parameters, reason); with True those settings are
        left out, each with a message in ``result.skipped``.

    Returns
    -------
    result : ExperimentResult

    Raises
    ------
    LearnerUnavailable
        When a learner setting cannot run and ``skip_unavailable`` is False.
    DatasetUnavailable
        When none of the configured data sets could be loaded (nothing to
        run); its ``datasets`` lists them. Data sets that fail while others
        load are skipped with a message instead.
    """
    from joblib import Parallel, delayed

    echo = echo or _quiet
    start = time.perf_counter()
    config = dict(config)
    config["learners"] = expand_learners(config["learners"])
    check_dataset_names(config["datasets"])
    skipped: list[str] = []

    def skip(message: str) -> None:
        if message not in skipped:
            skipped.append(message)
            echo(message)

    unavailable_points = _unavailable(config)
    if unavailable_points and not skip_unavailable:
        reasons = list(dict.fromkeys(unavailable_points.values()))
        raise LearnerUnavailable(
            f"experiment {config.get('experiment')!r} cannot run "
            f"{len(unavailable_points)} learner setting(s): "
            + "; ".join(reasons)
            + ". Fix the configuration, or pass skip_unavailable=True "
            "(skbandit ... --skip-unavailable) to run without them"
        )

    data, tasks, unavailable = {}, [], []
    for dataset in config["datasets"]:
        try:
            X, y = load_dataset(
                dataset, config["n_samples"], data_dir=data_dir, download=download
            )
        except DatasetUnavailable as exc:
            unavailable.append(str(exc))
            skip(f"{exc}: skipped")
            continue
        if config.get("prefix") is not None:
            X, y = X[: config["prefix"]], y[: config["prefix"]]
        X = preprocess(X, config.get("preprocessing", {}).get(dataset, "stored"))
        classes = np.unique(y)
        data[dataset] = (X, y, classes)
        checkpoints = _checkpoints(config, dataset, len(y))
        for learner in config["learners"]:
            grid_keys = list(learner.get("grid", {}))
            for params in param_points(learner, dataset):
                reason = unavailable_points.get(_point_key(dataset, learner, params))
                if reason is not None:
                    skip(f"{reason}: skipped")
                    continue
                grid_params = {k: params[k] for k in grid_keys if k in params}
                for key, value in (
                    learner.get("per_dataset", {}).get(dataset, {}).items()
                ):
                    grid_params[key] = value
                for seed in config["seeds"]:
                    tasks.append(
                        {
                            "dataset": dataset,
                            "name": learner["name"],
                            "label": learner["label"],
                            "params": params,
                            "grid_params": grid_params,
                            "seed": seed,
                            "chunk_size": config["chunk_size"],
                            "minibatch_size": config.get("minibatch_size", 100),
                            "checkpoints": checkpoints,
                        }
                    )
    if not data and config["datasets"]:
        names = tuple(config["datasets"])
        raise DatasetUnavailable(
            "no data set could be loaded ("
            + "; ".join(unavailable)
            + "): "
            + missing_data_advice(
                names,
                data_dir=data_dir,
                download=download,
                data_dir_option="data_dir=DIR",
                download_option="download=True",
            ),
            names,
        )
    echo(
        f"{len(tasks)} runs on {len(data)} data set(s), n_jobs={n_jobs}"
        + (f", backend={backend}" if backend else "")
        + (f", scheduler={scheduler}" if scheduler else "")
        + "".join(
            f", {name}: {how}"
            for name, how in config.get("preprocessing", {}).items()
            if name in data and how != "stored"
        )
    )
    bar = _progress(progress, len(tasks))
    rows = []
    with _parallel_context(backend, scheduler, n_jobs):
        results = Parallel(n_jobs=n_jobs, return_as="generator")(
            delayed(_run_task)(*data[t["dataset"]], t) for t in tasks
        )
        for row in results:
            rows.append(row)
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    return ExperimentResult(
        config={**config, "data_dir": None if data_dir is None else str(data_dir)},
        versions=_versions(),
        rows=rows,
        skipped=skipped,
        seconds=time.perf_counter() - start,
    )


def _point_key(dataset: str, learner: dict[str, Any], params: dict[str, Any]):
    return (
        dataset,
        learner["label"],
        json.dumps(params, sort_keys=True, default=_json_default),
    )


def _unavailable(config: dict[str, Any]) -> dict[tuple, str]:
    """Every (data set, learner, parameters) of ``config`` that cannot run,
    with the reason (learner label, data set, the learner's own message)."""
    out = {}
    for dataset in config["datasets"]:
        for learner in config["learners"]:
            for params in param_points(learner, dataset):
                try:
                    make_learner(learner["name"], params, seed=0)
                except LearnerUnavailable as exc:
                    out[_point_key(dataset, learner, params)] = (
                        f"{learner['label']!r} on {dataset}: {exc}"
                    )
    return out


def _checkpoints(config: dict[str, Any], dataset: str, n: int) -> list[int]:
    """The learning curve's rounds: the configured ones up to ``n`` (and
    ``n``), else ``n_checkpoints`` log-spaced ones."""
    given = config.get("checkpoints", {}).get(dataset)
    if given is None:
        return log_checkpoints(n, config["n_checkpoints"]).tolist()
    rounds = sorted({int(r) for r in given if 1 <= int(r) <= n} | {n})
    return rounds


def run_experiment(
    experiment: str | Experiment,
    *,
    quick: bool = False,
    n_seeds: int | None = None,
    n_samples: int | None = None,
    datasets: Sequence[str] | None = None,
    preprocessing: str | dict[str, str] | None = None,
    n_jobs: int = 1,
    backend: str | None = None,
    scheduler: str | None = None,
    data_dir: str | os.PathLike | None = None,
    download: bool = True,
    out: str | os.PathLike | None = None,
    plots: bool = True,
    progress: bool = False,
    echo: Callable[[str], None] | None = None,
    skip_unavailable: bool = False,
) -> ExperimentResult:
    """Run a registered (or given) experiment; optionally write its files.

    Parameters
    ----------
    experiment : str or Experiment
        A name from :func:`list_experiments`, or a spec.
    quick : bool, default=False
        The reduced version (under two minutes on two cores).
    n_seeds, n_samples, datasets : optional
        Override the spec's repetitions, rows per data set, data sets.
    preprocessing : str or dict, optional
        Override the spec's preprocessing: ``"stored"``, ``"unit-range"`` or
        ``"unit-norm"`` for every data set, or a dict per data set.
    n_jobs, backend, scheduler, data_dir, download, progress, echo, skip_unavailable :
        As in :func:`run_config` (``backend="dask"``: a Dask cluster, the one
        at ``scheduler`` or a local one started for the run; a learner that
        cannot run stops the run unless ``skip_unavailable=True``).
    out : path-like, default=None
        Folder for CSV, JSON and PNG files; nothing is written when None or
        when no run was possible.
    plots : bool, default=True
        Write the PNG figures (needs matplotlib).

    Returns
    -------
    result : ExperimentResult

    Examples
    --------
    >>> from skbandit.experiments import run_experiment
    >>> result = run_experiment("compare", quick=True, n_samples=2000, n_seeds=1)
    >>> labels = {row["learner"] for row in result.rows}
    >>> "Banditron" in labels and "sklearn:Perceptron" in labels
    True
    >>> result.config["seeds"]
    [0]
    """
    spec = get_experiment(experiment) if isinstance(experiment, str) else experiment
    config = spec.config(
        quick=quick,
        n_seeds=n_seeds,
        n_samples=n_samples,
        datasets=datasets,
        preprocessing=preprocessing,
    )
    result = run_config(
        config,
        n_jobs=n_jobs,
        backend=backend,
        scheduler=scheduler,
        data_dir=data_dir,
        download=download,
        progress=progress,
        echo=echo,
        skip_unavailable=skip_unavailable,
    )
    if out is not None and result.rows:
        result.write(out, plots=plots)
    return result


def replay_config(
    stored: dict[str, Any],
    *,
    prefix: int | None = None,
    n_seeds: int | None = None,
    datasets: Sequence[str] | None = None,
    echo: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """The configuration of a ``results.json`` (its parsed ``stored`` dict)
    in today's parameter names, optionally narrowed to a cheaper replay whose
    rows are comparable.

    Parameters recorded under names since renamed are translated by
    :func:`upgrade_config` (each translation goes to ``echo``).
    ``prefix`` keeps the first rows of each data set (loaded at the recorded
    length, so a generated stream is the same stream) and reads the learning
    curve at the recorded rounds up to it; ``n_seeds`` keeps the first seeds;
    ``datasets`` a subset of the recorded data sets.
    """
    config, notes = upgrade_config(stored["config"])
    for note in notes:
        (echo or _quiet)(note)
    if datasets is not None:
        unknown = [d for d in datasets if d not in config["datasets"]]
        if unknown:
            raise ValueError(
                f"data set(s) {unknown} are not in the recorded run; choose "
                "from: " + ", ".join(config["datasets"])
            )
        config["datasets"] = [d for d in config["datasets"] if d in datasets]
    if n_seeds is not None:
        if not 1 <= n_seeds <= len(config["seeds"]):
            raise ValueError(
                f"n_seeds must be in [1, {len(config['seeds'])}] (the recorded "
                f"seeds {config['seeds']}); got {n_seeds}"
            )
        config["seeds"] = config["seeds"][:n_seeds]
    if prefix is not None:
        if prefix < 1:
            raise ValueError(f"prefix must be a positive number of rows; got {prefix}")
        rounds: dict[str, list[int]] = {}
        for row in stored.get("rows", []):
            rounds.setdefault(row["dataset"], row["curve_rounds"])
        config["prefix"] = int(prefix)
        config["checkpoints"] = {
            d: [r for r in rounds.get(d, []) if r <= prefix] for d in rounds
        }
    return config


def _row_key(row: dict[str, Any]) -> tuple:
    params = upgrade_params(row["name"], row["params"])
    return (
        row["dataset"],
        row["learner"],
        json.dumps(params, sort_keys=True, default=_json_default),
        row["seed"],
    )


def verify_rows(
    stored_rows: Sequence[dict[str, Any]], rows: Sequence[dict[str, Any]]
) -> list[str]:
    """Where the rows of a replay differ from the recorded ones (empty: none).

    Rows are matched by data set, learner label, parameters (recorded names
    translated by :func:`upgrade_params`) and seed; a match must have the
    same played and greedy mistakes at every learning-curve round the two
    have in common (every round, with the final mistakes, for a full
    replay). Each replayed row must find its recorded row and share at least
    one round with it.
    """
    recorded = {_row_key(r): r for r in stored_rows}
    problems = []
    for row in rows:
        key = _row_key(row)
        old = recorded.get(key)
        what = (
            f"{row['learner']} on {row['dataset']} "
            f"({row['params']}, seed {row['seed']})"
        )
        if old is None:
            problems.append(f"{what}: not in the recorded rows")
            continue
        then = dict(
            zip(
                old["curve_rounds"],
                zip(old["curve_mistakes"], old["curve_greedy_mistakes"], strict=True),
                strict=True,
            )
        )
        common = 0
        for t, now in zip(
            row["curve_rounds"],
            zip(row["curve_mistakes"], row["curve_greedy_mistakes"], strict=True),
            strict=True,
        ):
            if t not in then:
                continue
            common += 1
            if tuple(then[t]) != tuple(now):
                problems.append(
                    f"{what}: at round {t} (played, greedy) mistakes "
                    f"{tuple(now)}, recorded {tuple(then[t])}"
                )
                break
        if common == 0:
            problems.append(f"{what}: no learning-curve round in common")
    return problems


def rerun(
    path: str | os.PathLike,
    *,
    prefix: int | None = None,
    n_seeds: int | None = None,
    datasets: Sequence[str] | None = None,
    verify: bool = False,
    **kwargs: Any,
) -> ExperimentResult:
    """Re-run the configuration stored in a ``results.json``.

    Parameters recorded under names since renamed are translated
    (:func:`skbandit.experiments._specs.upgrade_config`). ``prefix``,
    ``n_seeds`` and ``datasets`` narrow the replay (:func:`replay_config`).
    With ``verify=True`` the replayed rows are compared with the recorded
    ones (:func:`verify_rows`) and a difference raises ``AssertionError``
    naming the rows. Other keyword arguments are passed to
    :func:`run_config`; ``data_dir`` defaults to the one recorded in the
    file.
    """
    stored = json.loads(Path(path).read_text())
    config = replay_config(
        stored,
        prefix=prefix,
        n_seeds=n_seeds,
        datasets=datasets,
        echo=kwargs.get("echo"),
    )
    kwargs.setdefault("data_dir", config.get("data_dir"))
    result = run_config(config, **kwargs)
    if verify:
        problems = verify_rows(stored["rows"], result.rows)
        if problems:
            raise AssertionError(
                f"{len(problems)} of {len(result.rows)} replayed rows differ from "
                f"{path}: " + "; ".join(problems[:10])
            )
    return result
