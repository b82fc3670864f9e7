"""Plotting layer over progressive-validation results (matplotlib, optional)."""

from __future__ import annotations

from collections.abc import Iterable
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_learning_curves", "require_matplotlib", "series_styles"]

EXTRA_HINT = 'pip install "skbandit[experiments]"'

#: matplotlib's ten default colours ("tab10"), by name so no import is needed.
_COLORS = tuple(f"C{i}" for i in range(10))
_LINESTYLES = ("-", "--", ":", "-.")
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def series_styles(n: int) -> list[dict[str, str]]:
    """``n`` pairwise distinct line styles: colour × line style (× marker).

    Series ``i`` gets colour ``i mod 10``, line style ``(i // 10) mod 4`` and
    marker ``i mod 8``, so the first 40 differ in (colour, line style) and
    every series also carries a marker; beyond 40 the marker sequence is
    shifted by ``i // 40`` so (colour, line style, marker) stays distinct for
    up to 320 series. Pass each as keyword arguments to ``plot``/``errorbar``.
    """
    styles = []
    for i in range(n):
        shift = i // (len(_COLORS) * len(_LINESTYLES))
        styles.append(
            {
                "color": _COLORS[i % len(_COLORS)],
                "linestyle": _LINESTYLES[(i // len(_COLORS)) % len(_LINESTYLES)],
                "marker": _MARKERS[(i + shift) % len(_MARKERS)],
            }
        )
    return styles


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

    Every line has its own (colour, line style, marker): see
    :func:`series_styles`.

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
    results = list(results)
    for r, style in zip(results, series_styles(len(results)), strict=True):
        rounds = np.asarray(r.rounds, dtype=np.float64)
        values = np.asarray(r.mistakes, dtype=np.float64)
        if kind == "error":
            values = values / rounds
            positive = values > 0
            ax.loglog(rounds[positive], values[positive], label=r.name, ms=3, **style)
        else:
            ax.semilogx(rounds, values, label=r.name, ms=3, **style)
    ax.set_xlabel("rounds")
    ax.set_ylabel("online error" if kind == "error" else "cumulative mistakes")
    ax.legend(fontsize="small")
    ax.grid(True, which="both", alpha=0.3)
    return ax
