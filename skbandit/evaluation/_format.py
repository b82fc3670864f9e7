"""Display helpers of the results: plain-text tables, the optional pandas and
tqdm imports."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["format_table"]


def _require_pandas(what: str):
    try:
        import pandas as pd
    except ImportError:
        raise ImportError(
            f"{what} needs pandas, which is not installed: pip install pandas "
            "(or use to_dict())"
        ) from None
    return pd


def _format_value(value) -> str:
    if isinstance(value, float | np.floating):
        value = float(value)
        if not np.isfinite(value):
            return "-"
        if abs(value) >= 10:
            return f"{value:,.0f}"
        if value != 0 and abs(value) < 1e-3:
            return f"{value:.3g}"
        return f"{value:.4f}"
    if isinstance(value, int | np.integer):
        return f"{value:,}"
    return str(value)


def format_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """Plain-text table of ``rows`` (mappings) over ``columns``."""
    cells = [[_format_value(row.get(c, "")) for c in columns] for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]

    def line(values):
        return "  ".join(
            v.ljust(w) if i == 0 else v.rjust(w)
            for i, (v, w) in enumerate(zip(values, widths, strict=True))
        )

    out = [line(columns), line(["-" * w for w in widths])]
    out += [line(r) for r in cells]
    return "\n".join(out)


def _progress_bar(
    progress: bool, total: int, desc: str | None = None, unit: str = "rounds"
):
    """A tqdm bar only if asked for, tqdm is installed and stderr is a terminal."""
    if not progress:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    if not (hasattr(sys.stderr, "isatty") and sys.stderr.isatty()):
        return None
    return tqdm(total=total, unit=unit, desc=desc, leave=False)
