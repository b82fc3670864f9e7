"""The ``skbandit`` command: list, run, compare and re-run experiments."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["main"]

EXTRA = 'pip install "skbandit[experiments]"'


class _Fail(Exception):
    """A clear one-line error: printed, exit code ``code``."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


def _echo(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _check_extras(plots: bool, progress: bool, dask: bool = False) -> None:
    try:
        import joblib  # noqa: F401
    except ImportError:
        raise _Fail(f"skbandit experiments need joblib: {EXTRA}", 1) from None
    if dask:
        try:
            import distributed  # noqa: F401
        except ImportError:
            raise _Fail(
                "the dask backend needs distributed, which is not installed: "
                'pip install "skbandit[dask]"',
                1,
            ) from None
    if plots:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise _Fail(
                f"plots need matplotlib, which is not installed: {EXTRA} "
                "(or pass --no-plots)",
                1,
            ) from None


def _wants_dask(args) -> bool:
    return args.backend == "dask" or args.scheduler is not None


def _only_datasets(parser: argparse.ArgumentParser, help_text: str) -> None:
    """``--datasets NAME ...``: a subset of the command's data sets (``run``,
    ``rerun``; ``compare`` names its data sets with its own default)."""
    parser.add_argument(
        "--datasets", nargs="+", default=None, metavar="NAME", help=help_text
    )


def _check_datasets(names: Sequence[str]) -> None:
    """Raise :class:`_Fail` with the registry's message when a data set name
    in ``names`` is unknown."""
    from skbandit.experiments._data import check_dataset_names

    try:
        check_dataset_names(names)
    except KeyError as exc:
        raise _Fail(str(exc.args[0])) from None


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--quick",
        action="store_true",
        help="reduced version: under two minutes on two cores",
    )
    parser.add_argument(
        "--n-jobs",
        type=int,
        default=2,
        metavar="N",
        help="parallel workers, joblib's n_jobs (default 2; -1: all cores)",
    )
    parser.add_argument(
        "--backend",
        default=None,
        help="joblib backend, passed through (loky, threading, dask, ray, ...); "
        "dask without --scheduler starts a local Dask cluster of N worker "
        'processes for the run (needs pip install "skbandit[dask]")',
    )
    parser.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="address of a running Dask scheduler, e.g. tcp://10.0.0.5:8786: "
        "run the tasks on that cluster (implies --backend dask)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="output folder for CSV, JSON and PNG (default skbandit-results/NAME)",
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="folder with local copies of the real data sets (usps.npz, "
        "t10k-images-idx3-ubyte.gz, covtype_small.csv, mini_newsgroups.tsv.gz, "
        "...); default: the loaders' cache",
    )
    parser.add_argument(
        "--no-download",
        action="store_true",
        help="never download: skip real data sets that are not in the cache "
        "(without --data-dir)",
    )
    parser.add_argument(
        "--preprocessing",
        nargs="+",
        default=None,
        metavar="[DATASET=]HOW",
        help="rows as stored, mapped onto [0, 1] or divided by their norm: "
        "HOW is stored, unit-range or unit-norm, for every data set or, as "
        "DATASET=HOW, for one (default: the experiment's choice)",
    )
    parser.add_argument(
        "--seeds",
        type=int,
        default=None,
        metavar="N",
        help="repetitions (seeds 0..N-1)",
    )
    parser.add_argument(
        "--n-samples", type=int, default=None, metavar="N", help="rows per data set"
    )
    parser.add_argument(
        "--no-plots", action="store_true", help="write CSV and JSON only"
    )
    parser.add_argument(
        "--progress",
        action="store_true",
        help="progress bar (needs tqdm and a terminal)",
    )
    parser.add_argument(
        "--skip-unavailable",
        action="store_true",
        help="run without the learner settings that cannot run here (an "
        "unknown learner, vowpalwabbit not installed, a parameter a learner "
        "refuses), each named in a message; without this flag such a setting "
        "stops the run before it starts (exit code 1)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="skbandit",
        description="Reproduce the bandit multiclass papers' experiments: "
        "progressive validation of skbandit learners, CSV/JSON results, PNG plots.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    sub.add_parser(
        "list",
        help="list the experiments and data sets",
        description="List the registered experiments and data sets.",
    )

    run = sub.add_parser(
        "run",
        help="run a registered experiment",
        description="Run a registered experiment (see `skbandit list`), print "
        "the table of results and write CSV, JSON and PNG files.",
    )
    run.add_argument("name", help="experiment name, e.g. soba2017-fig2")
    _only_datasets(run, "only these data sets")
    _common(run)

    cmp_ = sub.add_parser(
        "compare",
        help="ad-hoc comparison: data sets x learners x grid x seeds",
        description="Compare learners on data sets: skbandit learners by name "
        "(Banditron, SOBA, ...), scikit-learn baselines (sklearn:Perceptron, "
        "sklearn:SGD-hinge, sklearn:SGD-log, sklearn:PA-I) and vw.",
    )
    cmp_.add_argument(
        "--datasets",
        "--data",
        nargs="+",
        default=["synsep"],
        metavar="NAME",
        help="data sets (default synsep)",
    )
    cmp_.add_argument(
        "--learners",
        nargs="+",
        default=["Banditron", "MulticlassPerceptron"],
        metavar="NAME",
        help="learners (default Banditron MulticlassPerceptron)",
    )
    cmp_.add_argument(
        "--grid",
        nargs="*",
        default=[],
        metavar="PARAM=V1,V2",
        help="parameter grid applied to the learners that accept it, e.g. "
        "exploration__epsilon=0.01,0.05",
    )
    cmp_.add_argument(
        "--no-baselines",
        action="store_true",
        help="leave out the scikit-learn full-information rows",
    )
    _common(cmp_)

    rerun = sub.add_parser(
        "rerun",
        help="re-run the configuration of a results.json",
        description="Re-run exactly the configuration stored in a results.json. "
        "Parameters recorded under names since renamed are translated (each "
        "translation is printed; docs/experiments.md lists them). --n-samples "
        "N replays the first N rows of each data set (read at the recorded "
        "rounds of the learning curves), --seeds N the first N recorded seeds, "
        "--datasets some of the recorded data sets; --verify compares the "
        "replayed rows with the recorded ones (exit code 1 if any differs).",
    )
    rerun.add_argument("json", type=Path, help="a results.json written by run")
    _only_datasets(rerun, "only these recorded data sets")
    rerun.add_argument(
        "--verify",
        action="store_true",
        help="compare the replayed rows with the recorded ones: the same "
        "mistakes at every learning-curve round they share",
    )
    _common(rerun)
    return parser


def _parse_value(text: str):
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return {"None": None, "True": True, "False": False}.get(text, text)


def _parse_grid(items: Sequence[str]) -> dict:
    grid = {}
    for item in items:
        if "=" not in item:
            raise _Fail(f"--grid expects PARAM=V1,V2,..., got {item!r}")
        key, values = item.split("=", 1)
        grid[key.strip()] = [_parse_value(v.strip()) for v in values.split(",") if v]
    return grid


def _parse_preprocessing(items: Sequence[str] | None):
    from skbandit.experiments._data import DATASETS, PREPROCESSING

    if not items:
        return None
    chosen: dict[str, str] = {}
    for item in items:
        name, _, how = item.rpartition("=")
        if how not in PREPROCESSING:
            raise _Fail(
                f"--preprocessing: {how!r} is not one of {', '.join(PREPROCESSING)}"
            )
        if not name:
            if len(items) > 1:
                raise _Fail("--preprocessing: give HOW alone or DATASET=HOW items")
            return how
        if name not in DATASETS:
            raise _Fail(
                f"--preprocessing: unknown data set {name!r}; choose from: "
                + ", ".join(DATASETS)
            )
        chosen[name] = how
    return chosen


def _cmd_list() -> int:
    from skbandit.experiments import DATASETS, EXPERIMENTS

    print("experiments:")
    for name in sorted(EXPERIMENTS):
        exp = EXPERIMENTS[name]
        print(f"  {name:18s} {exp.title}")
        print(f"  {'':18s} data: {', '.join(exp.datasets)}")
        learners = ", ".join(dict.fromkeys(lrn.display for lrn in exp.learners))
        print(f"  {'':18s} learners: {learners}")
    print("data sets:")
    for name, info in DATASETS.items():
        print(f"  {name:18s} {info.description}")
    return 0


def _finish(result, out: Path, plots: bool) -> int:
    if not result.rows:
        raise _Fail("no run was possible (see the messages above); nothing written", 1)
    result.write(out, plots=plots)
    print(
        f"\n{result.config['experiment']}"
        + (" (--quick)" if result.config.get("quick") else "")
        + f": {len(result.rows)} runs in {result.seconds:.1f} s"
    )
    print(result.table())
    print(f"\nwrote {len(result.files)} files to {out}/")
    for path in result.files:
        print(f"  {path.name}")
    return 0


def _run(args) -> int:
    from skbandit.experiments import get_experiment

    try:
        spec = get_experiment(args.name)
    except KeyError as exc:
        raise _Fail(str(exc.args[0])) from None
    if args.datasets:
        _check_datasets(args.datasets)
    _check_extras(not args.no_plots, args.progress, _wants_dask(args))
    config = spec.config(
        quick=args.quick,
        n_seeds=args.seeds,
        n_samples=args.n_samples,
        datasets=args.datasets,
        preprocessing=_parse_preprocessing(args.preprocessing),
    )
    return _execute(config, args, args.out or Path("skbandit-results") / spec.name)


def _execute(config, args, out: Path, stored: dict | None = None) -> int:
    from skbandit.experiments import run_config
    from skbandit.experiments._data import DatasetUnavailable, missing_data_advice
    from skbandit.experiments._learners import LearnerUnavailable

    if args.scheduler is not None and args.backend not in (None, "dask"):
        raise _Fail(
            f"--scheduler is a Dask scheduler's address: it needs --backend dask "
            f"(or no --backend), got --backend {args.backend}"
        )
    try:
        result = run_config(
            config,
            n_jobs=args.n_jobs,
            backend=args.backend,
            scheduler=args.scheduler,
            data_dir=args.data_dir,
            download=not args.no_download,
            progress=args.progress,
            echo=_echo,
            skip_unavailable=args.skip_unavailable,
        )
    except LearnerUnavailable as exc:
        raise _Fail(
            str(exc).replace(
                "skip_unavailable=True (skbandit ... --skip-unavailable)",
                "--skip-unavailable",
            )
            + "; nothing written",
            1,
        ) from None
    except DatasetUnavailable as exc:
        raise _Fail(
            "no data set could be loaded, nothing written: "
            + missing_data_advice(
                exc.datasets,
                data_dir=args.data_dir,
                download=not args.no_download,
                data_dir_option="--data-dir DIR",
                download_option="drop --no-download",
            ),
            1,
        ) from None
    if stored is not None:
        from skbandit.experiments._replay import verify_rows

        problems = verify_rows(stored["rows"], result.rows)
        for problem in problems:
            _echo(f"differs: {problem}")
        if problems:
            raise _Fail(
                f"{len(problems)} of {len(result.rows)} replayed rows differ from "
                f"{args.json}; nothing written",
                1,
            )
        print(
            f"verified: {len(result.rows)} replayed rows match {args.json} at "
            "every learning-curve round they share"
        )
    return _finish(result, out, not args.no_plots)


def _compare(args) -> int:
    from skbandit.experiments import get_experiment
    from skbandit.experiments._learners import has_numeric_epsilon
    from skbandit.experiments._specs import EPSILON, SKLEARN_BASELINES, LearnerSpec

    _check_datasets(args.datasets)
    grid = _parse_grid(args.grid)
    _check_extras(not args.no_plots, args.progress, _wants_dask(args))
    learners = []
    for name in args.learners:
        own = {
            k: v
            for k, v in grid.items()
            if not (k == EPSILON and not has_numeric_epsilon(name))
            and not name.startswith("sklearn:")
        }
        learners.append(LearnerSpec(name, grid=own))
    if not args.no_baselines:
        learners += [
            LearnerSpec(b) for b in SKLEARN_BASELINES if b not in args.learners
        ]
    base = get_experiment("compare")
    spec = base.with_(
        datasets=tuple(args.datasets),
        quick_datasets=None,
        learners=tuple(learners),
        plots=("epsilon", "curve") if EPSILON in grid else ("curve",),
    )
    config = spec.config(
        quick=args.quick,
        n_seeds=args.seeds,
        n_samples=args.n_samples,
        preprocessing=_parse_preprocessing(args.preprocessing),
    )
    return _execute(config, args, args.out or Path("skbandit-results") / "compare")


def _rerun(args) -> int:
    import json

    if not args.json.is_file():
        raise _Fail(f"no such file: {args.json}")
    from skbandit.experiments._replay import replay_config

    try:
        stored = json.loads(args.json.read_text())
        stored["config"]["datasets"]
    except (ValueError, KeyError, TypeError):
        raise _Fail(f"{args.json} is not a results.json written by skbandit") from None
    _check_extras(not args.no_plots, args.progress, _wants_dask(args))
    try:
        config = replay_config(
            stored,
            prefix=args.n_samples,
            n_seeds=args.seeds,
            datasets=args.datasets,
            echo=_echo,
        )
    except ValueError as exc:
        raise _Fail(str(exc)) from None
    if args.data_dir is None and config.get("data_dir"):
        args.data_dir = Path(config["data_dir"])
    how = _parse_preprocessing(args.preprocessing)
    if how is not None:
        if isinstance(how, str):
            how = dict.fromkeys(config["datasets"], how)
        config["preprocessing"] = {**config.get("preprocessing", {}), **how}
    out = args.out or args.json.parent / "rerun"
    return _execute(config, args, out, stored if args.verify else None)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``skbandit`` console script; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "list":
            return _cmd_list()
        if args.command == "run":
            return _run(args)
        if args.command == "compare":
            return _compare(args)
        return _rerun(args)
    except _Fail as exc:
        print(f"skbandit: error: {exc}", file=sys.stderr)
        return exc.code
