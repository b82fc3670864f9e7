"""The results of progressive validation, as data (``to_dict``, ``to_frame``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from skbandit.evaluation._format import _format_value, _require_pandas, format_table

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ComparisonResult", "ProgressiveValidationResult"]


@dataclass
class ProgressiveValidationResult:
    """Progressive validation of one learner on one stream.

    Attributes
    ----------
    name : str
        Learner's name.
    feedback : {"bandit", "full"}
        What the learner learned from: the reward bit of its played action,
        or the true label.
    protocol : str
        How the stream was played (one round per row, or mini-batches).
    chunk_size : int
        Rows per ``partial_fit`` call.
    rounds : ndarray of int64
        Checkpoints: 1-based round indices, global over the stream.
    mistakes : ndarray of int64
        Cumulative mistakes of the played action at each checkpoint.
    greedy_mistakes : ndarray of int64
        Cumulative mistakes of the greedy (argmax) action at each checkpoint;
        equal to ``mistakes`` for full-information models.
    seconds : ndarray of float64
        Cumulative time in prediction and learning at each checkpoint.
    params : dict
        The estimator's parameters (``get_params(deep=False)``), as strings
        where they are not plain numbers.
    log : dict of ndarray or None
        For skbandit learners run with ``log=True``: the feedback log over the
        whole stream, ``rows`` (global row indices), ``actions``, ``rewards``
        and ``propensities``.
    """

    name: str
    feedback: str
    protocol: str
    chunk_size: int
    rounds: np.ndarray
    mistakes: np.ndarray
    greedy_mistakes: np.ndarray
    seconds: np.ndarray
    params: dict = field(default_factory=dict)
    log: dict | None = None

    @property
    def n_rounds(self) -> int:
        """Rounds played."""
        return int(self.rounds[-1]) if self.rounds.size else 0

    @property
    def n_mistakes(self) -> int:
        """Mistakes of the played action over the stream."""
        return int(self.mistakes[-1]) if self.mistakes.size else 0

    @property
    def n_greedy_mistakes(self) -> int:
        """Mistakes of the greedy action over the stream."""
        return int(self.greedy_mistakes[-1]) if self.greedy_mistakes.size else 0

    @property
    def error(self) -> float:
        """Online error of the played action: mistakes / rounds."""
        return self.n_mistakes / self.n_rounds if self.n_rounds else float("nan")

    @property
    def greedy_error(self) -> float:
        """Online error of the greedy action."""
        if not self.n_rounds:
            return float("nan")
        return self.n_greedy_mistakes / self.n_rounds

    @property
    def total_seconds(self) -> float:
        """Time in prediction and learning."""
        return float(self.seconds[-1]) if self.seconds.size else 0.0

    @property
    def rounds_per_second(self) -> float:
        """Throughput over the whole stream."""
        seconds = self.total_seconds
        return self.n_rounds / seconds if seconds > 0 else float("nan")

    def summary(self) -> dict[str, Any]:
        """The final numbers as a flat dict."""
        return {
            "learner": self.name,
            "feedback": self.feedback,
            "rounds": self.n_rounds,
            "mistakes": self.n_mistakes,
            "error": self.error,
            "greedy_error": self.greedy_error,
            "seconds": self.total_seconds,
            "rounds_per_s": self.rounds_per_second,
        }

    def to_dict(self) -> dict[str, Any]:
        """Everything as JSON-serialisable Python objects (no log)."""
        return {
            "name": self.name,
            "feedback": self.feedback,
            "protocol": self.protocol,
            "chunk_size": self.chunk_size,
            "params": dict(self.params),
            "rounds": self.rounds.tolist(),
            "mistakes": self.mistakes.tolist(),
            "greedy_mistakes": self.greedy_mistakes.tolist(),
            "seconds": self.seconds.tolist(),
            "summary": self.summary(),
        }

    def to_frame(self) -> pd.DataFrame:
        """One row per checkpoint (needs pandas).

        Returns
        -------
        frame : pandas.DataFrame
            Columns ``round``, ``mistakes``, ``greedy_mistakes``, ``error``,
            ``greedy_error``, ``seconds``.
        """
        pd = _require_pandas("ProgressiveValidationResult.to_frame()")
        rounds = self.rounds.astype(np.float64)
        return pd.DataFrame(
            {
                "round": self.rounds,
                "mistakes": self.mistakes,
                "greedy_mistakes": self.greedy_mistakes,
                "error": self.mistakes / rounds,
                "greedy_error": self.greedy_mistakes / rounds,
                "seconds": self.seconds,
            }
        )

    def __str__(self) -> str:
        s = self.summary()
        return (
            f"{self.name} [{self.feedback} feedback]: {s['rounds']:,} rounds, "
            f"error {s['error']:.4f} (greedy {s['greedy_error']:.4f}), "
            f"{_format_value(s['rounds_per_s'])} rounds/s"
        )


class ComparisonResult(Sequence):
    """Progressive validation of several learners on one stream.

    A sequence of :class:`ProgressiveValidationResult` (also indexable by
    learner name); ``str()`` is a text table of the final numbers.
    """

    def __init__(self, results: Sequence[ProgressiveValidationResult]) -> None:
        self.results = list(results)

    def __len__(self) -> int:
        return len(self.results)

    def __getitem__(self, key):
        if isinstance(key, str):
            for result in self.results:
                if result.name == key:
                    return result
            raise KeyError(key)
        return self.results[key]

    def summary(self) -> list[dict[str, Any]]:
        """One flat dict of final numbers per learner."""
        return [r.summary() for r in self.results]

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable: ``{"results": [...]}``, one entry per learner."""
        return {"results": [r.to_dict() for r in self.results]}

    def to_frame(self, curves: bool = False) -> pd.DataFrame:
        """The final numbers, one row per learner (needs pandas).

        Parameters
        ----------
        curves : bool, default=False
            If True, one row per learner and checkpoint instead, with a
            ``learner`` column.
        """
        pd = _require_pandas("ComparisonResult.to_frame()")
        if not curves:
            return pd.DataFrame(self.summary())
        frames = []
        for r in self.results:
            frame = r.to_frame()
            frame.insert(0, "learner", r.name)
            frames.append(frame)
        return pd.concat(frames, ignore_index=True)

    def __str__(self) -> str:
        columns = ["learner", "feedback", "rounds", "error", "greedy_error"]
        columns.append("rounds_per_s")
        return format_table(self.summary(), columns)

    def __repr__(self) -> str:
        names = ", ".join(r.name for r in self.results)
        return f"ComparisonResult([{names}])"
