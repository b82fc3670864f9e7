"""Learning from Parquet logs out of core, resumably.

:func:`learn_from_parquet` streams logged rounds ``(x, a, r, p)`` stored as
Parquet (one file or a directory of files, e.g. one per day) through a
learner's ``partial_fit(X, LoggedFeedback(a, r, p))`` in the logged order
(files in sorted path order, row groups in file order), each row group read in
record batches of at most 65,536 rounds (the learners' own block size). Memory
is bounded by about two batches (the one learned and the one read ahead), plus
the learner and pyarrow's buffers of the column chunks being read, whatever
the size of the row groups. A learner's ``partial_fit`` in chunks is one call on
the concatenated rows (chunk invariance, a tested contract of every learner),
so the model is bit for bit the model of one in-memory pass over the log.

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
# rounds per record batch read and learned: the learners' own block size
# (``partial_fit`` plays its rows in blocks of 65,536), so memory is bounded
# by a few batches whatever the size of the Parquet row groups
_BATCH_ROWS = 1 << 16


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


@dataclass(frozen=True)
class _LogColumns:
    features: tuple[str, ...]
    action: str
    reward: str
    propensity: str

    @property
    def all(self) -> list[str]:
        return [*self.features, self.action, self.reward, self.propensity]


@dataclass(frozen=True)
class _Batch:
    """At most ``_BATCH_ROWS`` consecutive rounds of row group ``group`` of
    file ``file_index`` (``X`` and ``logged`` None for an empty row group);
    ``last``: the row group's last batch. ``opened``: ``(index,
    fingerprint)`` of the files opened since the previous batch."""

    file_index: int
    group: int
    last: bool
    opened: tuple[tuple[int, tuple[str, int, int]], ...]
    X: np.ndarray | None
    logged: LoggedFeedback | None


def _batches(files: list[Path], position: tuple[int, int], columns: _LogColumns):
    """The log from ``position`` on as :class:`_Batch` es, in order: each row
    group read with ``ParquetFile.iter_batches`` (only ``columns``) in record
    batches of at most ``_BATCH_ROWS`` rows, each converted at once."""
    import pyarrow.parquet as pq

    file_index, group = position
    opened: list[tuple[int, tuple[str, int, int]]] = []
    while file_index < len(files):
        # pre_buffer=False: the column chunks are read as the batches need
        # them, not the whole row group ahead (measured: a third of a row
        # group less at the peak, the same CPU time)
        parquet = pq.ParquetFile(files[file_index], pre_buffer=False)
        opened.append((file_index, _fingerprint(files[file_index], parquet)))
        for g in range(group, parquet.metadata.num_row_groups):
            rows = parquet.metadata.row_group(g).num_rows
            if rows == 0:
                yield _Batch(file_index, g, True, tuple(opened), None, None)
                opened.clear()
                continue
            seen = 0
            for batch in parquet.iter_batches(
                batch_size=_BATCH_ROWS,
                row_groups=[g],
                columns=columns.all,
                # one decoding thread (read_ahead's, beside the learning
                # one), not pyarrow's pool: on a busy machine the pool's
                # threads cost CPU time without freeing the learning thread
                use_threads=False,
            ):
                seen += batch.num_rows
                X, logged = _batch_arrays(batch, columns)
                yield _Batch(file_index, g, seen >= rows, tuple(opened), X, logged)
                opened.clear()
        file_index, group = file_index + 1, 0


def _remaining(files: list[Path], position: tuple[int, int]) -> bool:
    """Whether a row group of ``files`` is at or after ``position`` (from the
    files' metadata only)."""
    import pyarrow.parquet as pq

    file_index, group = position
    for path in files[file_index:]:
        if pq.ParquetFile(path).metadata.num_row_groups > group:
            return True
        group = 0
    return False


def _batch_arrays(batch, columns: _LogColumns):
    """``(X, LoggedFeedback)`` of one record batch: ``X`` float64 in C order
    (the form the learners read in place, with no copy in their validation),
    filled column by column from the batch's columns (one copy of the
    contexts, within a batch small enough to stay in cache)."""
    X = np.empty((batch.num_rows, len(columns.features)), dtype=np.float64)
    for j, name in enumerate(columns.features):
        X[:, j] = batch.column(name).to_numpy(zero_copy_only=False)
    logged = LoggedFeedback(
        batch.column(columns.action).to_numpy(zero_copy_only=False),
        batch.column(columns.reward)
        .to_numpy(zero_copy_only=False)
        .astype(np.float64, copy=False),
        batch.column(columns.propensity)
        .to_numpy(zero_copy_only=False)
        .astype(np.float64, copy=False),
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
    """Learn from a Parquet log with ``partial_fit``, batch after batch.

    Each row group of each file (see :func:`parquet_files` for the order) is
    read with ``pyarrow.parquet.ParquetFile.iter_batches`` (only the needed
    columns) in record batches of at most 65,536 rounds; each batch is turned
    into contexts ``X`` (float64, C order: the form the learners read without
    a copy) and a ``LoggedFeedback(actions, rewards, propensities)``, and
    learned with ``learner.partial_fit``. By the chunk invariance of
    ``partial_fit`` the result is the learner of one ``partial_fit`` over the
    whole log in memory, bit for bit, with memory bounded by about two
    batches plus pyarrow's buffers of the column chunks being read. Checkpoints
    and ``max_row_groups`` count whole row groups.

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
        Read and convert the next batch in a background thread while the
        current one is learned (pyarrow, NumPy's copies and the compiled
        learners release the GIL), so that the learning thread only learns:
        faster where a second core is free, at the price of the next batch
        held beside the current one. ``False`` reads it after the current one
        is learned.

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
    columns = _LogColumns(tuple(feature_columns), *logged_columns)
    batches = _batches(files, state.position, columns)
    learned = 0
    with ThreadPoolExecutor(max_workers=1) as reader:
        # With read_ahead, the next batch is read and converted (in pyarrow
        # and NumPy copies, without the GIL) while the current one is learned
        # (in the compiled kernel, without the GIL).
        pending = reader.submit(next, batches, None) if read_ahead else None
        while True:
            batch = next(batches, None) if pending is None else pending.result()
            if batch is None:  # the whole log learned
                state.position = (len(files), 0)
                break
            if batch.last and max_row_groups is not None:
                stop = learned + 1 >= max_row_groups
            else:
                stop = False
            pending = None
            if read_ahead and not stop:
                pending = reader.submit(next, batches, None)
            for index, fingerprint in batch.opened:
                if len(state.files) <= index:
                    state.files.append(fingerprint)
            if batch.X is not None:
                first = not hasattr(state.learner, "classes_")
                state.learner.partial_fit(
                    batch.X, batch.logged, classes=classes if first else None
                )
                state.n_rounds += batch.X.shape[0]
            if not batch.last:
                continue
            learned += 1
            state.position = (batch.file_index, batch.group + 1)
            del batch
            if stop:
                if not _remaining(files, state.position):
                    state.position = (len(files), 0)
                break
            if checkpoint is not None and learned % checkpoint_every == 0:
                state.save(checkpoint)
    if checkpoint is not None:
        state.save(checkpoint)
    return state.learner
