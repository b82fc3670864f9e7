"""Replays of a recorded run: its configuration narrowed, its rows compared."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from skbandit.experiments._result import ExperimentResult, _json_default
from skbandit.experiments._runner import _quiet, run_config
from skbandit.experiments._specs import upgrade_config, upgrade_params

__all__ = ["replay_config", "rerun", "verify_rows"]


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
