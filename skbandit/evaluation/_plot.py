"""Plotting layer over progressive-validation results (matplotlib, optional)."""

from __future__ import annotations

from collections.abc import Iterable
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_learning_curves", "require_matplotlib"]

EXTRA_HINT = 'pip install "skbandit[experiments]"'


def require_matplotlib(pyplot: bool = True) -> ModuleType:
    """Import matplotlib (``pyplot`` or the module), or fail in one line."""
    try:
        import matplotlib
    except ImportError:
        raise ImportError(
            f"plotting needs matplotlib, which is not installed: {EXTRA_HINT} "
            "(or pip install matplotlib)"
        ) from None
    if not pyplot:
        return matplotlib
    import matplotlib.pyplot as plt

    return plt


def plot_learning_curves(
    results: Iterable, *, kind: str = "error", ax: Axes | None = None
) -> Axes:
    """Online error (log-log) or cumulative mistakes vs rounds, one line each.

    Parameters
    ----------
    results : iterable of ProgressiveValidationResult
        For example a :class:`ComparisonResult`.
    kind : {"error", "mistakes"}, default="error"
        ``"error"``: cumulative mistakes / rounds on log-log axes;
        ``"mistakes"``: cumulative mistakes on a log round axis.
    ax : matplotlib Axes, default=None
        Where to draw; a new figure when None.

    Returns
    -------
    ax : matplotlib Axes
    """
    if kind not in ("error", "mistakes"):
        raise ValueError(f"kind must be 'error' or 'mistakes', got {kind!r}")
    plt = require_matplotlib()
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    for r in results:
        rounds = np.asarray(r.rounds, dtype=np.float64)
        values = np.asarray(r.mistakes, dtype=np.float64)
        if kind == "error":
            values = values / rounds
            positive = values > 0
            ax.loglog(rounds[positive], values[positive], label=r.name)
        else:
            ax.semilogx(rounds, values, label=r.name)
    ax.set_xlabel("rounds")
    ax.set_ylabel("online error" if kind == "error" else "cumulative mistakes")
    ax.legend(fontsize="small")
    ax.grid(True, which="both", alpha=0.3)
    return ax
