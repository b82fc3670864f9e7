"""The learner packages' files, for meson: found by pattern, not listed.

``list DIR`` prints the names of the files of ``DIR`` that match ``PATTERNS``
(kernels, modules, Cython declarations), sorted, one per line (meson reads them
when it configures). ``check STAMP DIR CONFIGURED [DIR CONFIGURED ...]`` exits
with the fix when a directory's list is no longer ``CONFIGURED``
(comma-separated), i.e. a file was added or removed since meson configured the
build, and otherwise writes ``STAMP``; meson runs it on every build (every
import of an editable install, one short process), so a new kernel or module is
never silently left out. See docs/adding_a_learner.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

# The kernels (``<name>_fast.pyx``), Python modules and Cython declarations.
PATTERNS = ("*_fast.pyx", "*.py", "*.pxd")


def matching(directory: str) -> list[str]:
    d = Path(directory)
    return sorted({p.name for pattern in PATTERNS for p in d.glob(pattern)})


def main(argv: list[str]) -> int:
    if argv[0] == "list":
        print("\n".join(matching(argv[1])))
        return 0
    stamp, pairs = argv[1], argv[2:]
    for directory, configured in zip(pairs[::2], pairs[1::2], strict=True):
        if ",".join(matching(directory)) != configured:
            print(
                f"files added to or removed from {directory} since meson "
                "configured the build: re-run the install command (python -m pip "
                "install --no-build-isolation -e .), which reconfigures it",
                file=sys.stderr,
            )
            return 1
    Path(stamp).write_text(" ".join(pairs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
