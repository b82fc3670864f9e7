"""Run an experiment: (learner, parameters, seed) tasks in parallel with joblib."""

from __future__ import annotations

import contextlib
import json
import os
import platform
import time
from collections.abc import Callable, Sequence
from importlib import metadata
from typing import TYPE_CHECKING, Any

import numpy as np

from skbandit.base import BaseBanditClassifier
from skbandit.evaluation import log_checkpoints, progressive_validation
from skbandit.evaluation._format import _progress_bar
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
from skbandit.experiments._result import ExperimentResult, _json_default
from skbandit.experiments._specs import (
    ALL_BANDIT,
    Experiment,
    get_experiment,
    param_points,
)

if TYPE_CHECKING:
    pass

__all__ = ["expand_learners", "run_config", "run_experiment"]


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
    bar = _progress_bar(progress, len(tasks), unit="runs")
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
