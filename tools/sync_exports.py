"""Rewrite the generated import blocks of the package's ``__init__`` files.

The estimators are exported by discovery at run time (``skbandit._discovery``);
the blocks repeat them as explicit imports under ``TYPE_CHECKING`` for static
analysis (mypy, IDEs). Run from the repository root after adding or renaming a
learner::

    python tools/sync_exports.py

``tests/test_discovery.py`` fails while a block is out of date.
"""

from __future__ import annotations

from skbandit._discovery import write_blocks

if __name__ == "__main__":
    written = write_blocks()
    for path in written:
        print(f"rewrote {path}")
    if not written:
        print("the generated import blocks are up to date")
