"""Where a warning points: the first frame outside skbandit and scikit-learn."""

from __future__ import annotations

import inspect
import os
import sys

# Frames in these folders are library code, not the caller's (scikit-learn's
# too: ``_fit_context`` wraps ``fit`` and ``partial_fit``).
_LIBRARY_DIRS = tuple(
    os.path.dirname(os.path.abspath(m.__file__)) + os.sep  # type: ignore[type-var, operator]  # packages on disk: __file__ is a str
    for m in (sys.modules[__name__.split(".")[0]], sys.modules["sklearn"])
)


def _caller_stacklevel() -> int:
    """The ``stacklevel`` at which a warning raised by the calling function
    points at the first frame outside skbandit and scikit-learn: the user's
    line, however deep inside the library the warning is raised."""
    here = inspect.currentframe()
    frame = here.f_back if here is not None else None
    if frame is None:  # (an interpreter without frame support)
        return 2
    level = 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(
        _LIBRARY_DIRS
    ):
        frame, level = frame.f_back, level + 1
    return level
