"""Learning from Parquet logs out of core, resumably.

:func:`learn_from_parquet` streams logged rounds ``(x, a, r, p)`` stored as
Parquet (one file or a directory of files, e.g. one per day) through a
learner's ``partial_fit(X, LoggedFeedback(a, r, p))``, one row group at a time
in the logged order (files in sorted path order, row groups in file order).
Memory is bounded by about two row groups (the Arrow columns read and the
NumPy contexts built from them) plus the learner. A learner's ``partial_fit``
in chunks is one call on the concatenated rows (chunk invariance, a tested
contract of every learner), so the model is bit for bit the model of one
in-memory pass over the log.

With ``checkpoint=path``, the learner and its position (the next file and row
group) are written to ``path`` after every ``checkpoint_every`` row groups
(atomically: a temporary file renamed over the old one); a later call with the
same ``checkpoint`` resumes from there, e.g. after a crash or a time limit
(``max_row_groups``). Files appended to the directory after the checkpoint
are learned on resume; a file the checkpoint had read that changed is an
error.
"""

from __future__ import annotations

import os
import pickle
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from skbandit.evaluation._distributed import require_dask
from skbandit.feedback import LoggedFeedback

__all__ = ["LogCheckpoint", "learn_from_parquet", "parquet_files"]

_VERSION = 1


def parquet_files(source) -> list[Path]:
    """The Parquet files of ``source`` in logged order.

    ``source`` is a file, a directory (its ``*.parquet`` files, recursively,
    in sorted path order: name daily partitions so that this is the logged
    order, e.g. ``day=2024-01-31/part-0.parquet``) or a sequence of files
    (in the order given).
    """
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        if path.is_dir():
            files = sorted(path.rglob("*.parquet"))
            if not files:
                raise ValueError(f"no *.parquet file under {str(path)!r}")
            return files
        if not path.exists():
            raise FileNotFoundError(f"no such Parquet file or directory: {str(path)!r}")
        return [path]
    files = [Path(f) for f in source]
    if not files:
        raise ValueError("source is an empty sequence of Parquet files")
    return files


@dataclass
class LogCheckpoint:
    """A learner and its position in a Parquet log (what a checkpoint holds).

    Attributes
    ----------
    learner : estimator
        The learner after the rounds before ``position``.
    position : tuple of (int, int)
        ``(file, row_group)``: the next row group to learn, as indices into
        :func:`parquet_files` of the source and that file's row groups.
    n_rounds : int
        Logged rounds learned so far.
    files : list of (str, int, int)
        ``(path, rows, row groups)`` of the files read up to ``position``:
        a resumed run checks they are unchanged.
    """

    learner: Any
    position: tuple[int, int] = (0, 0)
    n_rounds: int = 0
    files: list[tuple[str, int, int]] = field(default_factory=list)

    def save(self, path) -> None:
        """Write to ``path`` atomically (a temporary file, then a rename)."""
        path = Path(path)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                pickle.dump({"version": _VERSION, "state": self}, f)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    @classmethod
    def load(cls, path) -> LogCheckpoint:
        """Read a checkpoint written by :meth:`save` (a pickle: only load
        checkpoints you wrote)."""
        with open(path, "rb") as f:
            data = pickle.load(f)
        if not (isinstance(data, dict) and data.get("version") == _VERSION):
            raise ValueError(f"{str(path)!r} is not a learn_from_parquet checkpoint")
        return data["state"]


def _resume(checkpoint, learner, files) -> LogCheckpoint:
    if checkpoint is None or not Path(checkpoint).exists():
        return LogCheckpoint(learner)
    state = LogCheckpoint.load(checkpoint)
    if type(state.learner) is not type(learner):
        raise ValueError(
            f"the checkpoint {str(checkpoint)!r} holds a "
            f"{type(state.learner).__name__}, not a {type(learner).__name__}: "
            "it belongs to another run (remove it to start afresh)"
        )
    for i, (name, rows, groups) in enumerate(state.files):
        if i >= len(files) or _fingerprint(files[i]) != (name, rows, groups):
            raise ValueError(
                f"the checkpoint {str(checkpoint)!r} was taken on a log whose file "
                f"{i} was {name!r} ({rows} rows, {groups} row groups); that file "
                "is missing or changed: the position no longer applies"
            )
    return state


def _check_count(value, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")


def _fingerprint(path: Path, parquet=None) -> tuple[str, int, int]:
    import pyarrow.parquet as pq

    meta = (parquet or pq.ParquetFile(path)).metadata
    return str(path), int(meta.num_rows), int(meta.num_row_groups)


def _row_groups(files: list[Path], state: LogCheckpoint):
    """``(file index, row group, ParquetFile)`` from ``state.position`` on, in
    order; records each file's fingerprint in ``state.files`` when opened."""
    import pyarrow.parquet as pq

    file_index, group = state.position
    while file_index < len(files):
        parquet = pq.ParquetFile(files[file_index])
        if len(state.files) <= file_index:
            state.files.append(_fingerprint(files[file_index], parquet))
        for g in range(group, parquet.metadata.num_row_groups):
            yield file_index, g, parquet
        file_index, group = file_index + 1, 0


def _read(item, columns):
    _, group, parquet = item
    return parquet.read_row_group(group, columns=columns)


def _row_group_arrays(table, features: Sequence[str], action, reward, propensity):
    """``(X, LoggedFeedback)`` of one row group read as an Arrow table: ``X``
    float64, C order, filled column by column (one copy of the contexts)."""
    X = np.empty((table.num_rows, len(features)), dtype=np.float64)
    for j, name in enumerate(features):
        X[:, j] = table.column(name).to_numpy()
    logged = LoggedFeedback(
        table.column(action).to_numpy(),
        table.column(reward).to_numpy().astype(np.float64, copy=False),
        table.column(propensity).to_numpy().astype(np.float64, copy=False),
    )
    return X, logged


def learn_from_parquet(
    learner,
    source,
    *,
    classes=None,
    feature_columns: Sequence[str] | None = None,
    action_column: str = "action",
    reward_column: str = "reward",
    propensity_column: str = "propensity",
    checkpoint=None,
    checkpoint_every: int = 1,
    max_row_groups: int | None = None,
    read_ahead: bool = True,
):
    """Learn from a Parquet log with ``partial_fit``, one row group at a time.

    Each row group of each file (see :func:`parquet_files` for the order) is
    read with ``pyarrow.parquet.ParquetFile.read_row_group`` (only the needed
    columns), turned into contexts ``X`` and a ``LoggedFeedback(actions,
    rewards, propensities)``, and learned with ``learner.partial_fit``. By
    the chunk invariance of ``partial_fit`` the result is the learner of one
    ``partial_fit`` over the whole log in memory, bit for bit, with memory
    bounded by about two row groups.

    Parameters
    ----------
    learner : skbandit bandit learner
        Learns in place (a fresh or an already fitted learner). On resume
        from a checkpoint, the checkpoint's learner replaces it (it must be
        of the same class).
    source : path or sequence of paths
        A Parquet file, a directory of them, or a list of files.
    classes : array-like, default=None
        All the actions: needed when ``learner`` has not been fitted yet
        (the first-call rule of ``partial_fit``).
    feature_columns : sequence of str, default=None
        The context columns, in the learner's feature order; by default
        every column of the first file but the three logged ones, in order.
    action_column, reward_column, propensity_column : str
        The logged columns.
    checkpoint : path, default=None
        Where to keep a :class:`LogCheckpoint`: resumed from when the file
        exists, written after every ``checkpoint_every`` row groups and at
        the end.
    checkpoint_every : int, default=1
        Row groups between checkpoints.
    max_row_groups : int, default=None
        Stop after learning this many row groups in this call (e.g. a time
        budget; resume later from the checkpoint).
    read_ahead : bool, default=True
        Read the next row group in a background thread while the current one
        is learned (pyarrow and the compiled learners release the GIL): faster
        on two or more cores, at the price of holding the next row group's
        Arrow table beside the current one's arrays. ``False`` reads it after
        the current one is learned and freed.

    Returns
    -------
    learner : the learner, fitted on the rounds learned so far
        (``LogCheckpoint.load(checkpoint).position`` tells where it stopped).

    Raises
    ------
    ImportError
        Without pyarrow (``pip install "skbandit[dask]"``).
    """
    require_dask("learn_from_parquet", ("pyarrow", "pyarrow.parquet"))
    import pyarrow.parquet as pq

    _check_count(checkpoint_every, "checkpoint_every")
    if max_row_groups is not None:
        _check_count(max_row_groups, "max_row_groups")
    files = parquet_files(source)
    state = _resume(checkpoint, learner, files)
    logged_columns = (action_column, reward_column, propensity_column)
    if feature_columns is None:
        names = pq.ParquetFile(files[0]).schema_arrow.names
        missing = [c for c in logged_columns if c not in names]
        if missing:
            raise ValueError(
                f"columns {missing} are not in {str(files[0])!r}, whose columns "
                f"are {names}"
            )
        feature_columns = [c for c in names if c not in logged_columns]
    columns = [*feature_columns, *logged_columns]
    groups = _row_groups(files, state)
    learned = 0
    with ThreadPoolExecutor(max_workers=1) as reader:
        # With read_ahead, the next row group is read (in pyarrow, without
        # the GIL) while the current one is learned (in the compiled kernel,
        # without the GIL); it is submitted once the current table is freed.
        item = next(groups, None)
        pending = None
        while item is not None:
            file_index, group, _ = item
            table = _read(item, columns) if pending is None else pending.result()
            X, logged = _row_group_arrays(table, feature_columns, *logged_columns)
            del table
            item = None
            if max_row_groups is None or learned + 1 < max_row_groups:
                item = next(groups, None)
            pending = None
            if read_ahead and item is not None:
                pending = reader.submit(_read, item, columns)
            first = not hasattr(state.learner, "classes_")
            state.learner.partial_fit(X, logged, classes=classes if first else None)
            learned += 1
            state.n_rounds += X.shape[0]
            state.position = (file_index, group + 1)
            del X, logged
            if checkpoint is not None and learned % checkpoint_every == 0:
                state.save(checkpoint)
    if next(groups, None) is None:  # the whole log learned
        state.position = (len(files), 0)
    if checkpoint is not None:
        state.save(checkpoint)
    return state.learner
