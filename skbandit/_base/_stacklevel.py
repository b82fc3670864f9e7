"""Where a warning points: the first frame outside skbandit and scikit-learn."""

from __future__ import annotations

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
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(
        _LIBRARY_DIRS
    ):
        frame, level = frame.f_back, level + 1
    return level
