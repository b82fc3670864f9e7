"""Tables of recorded runs in the docs, rendered from their ``results.json``.

A Markdown page marks a table with an HTML comment naming a results file
(relative to the repository root) right before a fenced block::

    <!-- table: docs/results/quick/compare/results.json -->
    ```
    ... (rewritten) ...
    ```

``python -m skbandit.experiments._doctables docs/experiments.md`` rewrites
every marked block with the table the command line prints for that run
(:meth:`ExperimentResult.table`, loaded by :meth:`ExperimentResult.load`);
``--check`` only reports the blocks that differ (exit code 1), which the test
suite runs, so no table is typed by hand or left behind by a re-run.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["render_tables"]

_MARKED = re.compile(
    r"(<!-- table: (?P<path>\S+) -->\n```[a-z]*\n)(?P<body>.*?)(\n```)", re.S
)


def render_tables(text: str, root: str | Path) -> str:
    """``text`` with every marked block replaced by its run's table."""
    from skbandit.experiments._result import ExperimentResult

    def table(match: re.Match) -> str:
        result = ExperimentResult.load(Path(root) / match["path"])
        return match.group(1) + result.table() + match.group(4)

    return _MARKED.sub(table, text)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="+", type=Path, help="Markdown pages")
    parser.add_argument("--root", type=Path, default=Path("."), help="repository root")
    parser.add_argument(
        "--check", action="store_true", help="report stale tables, write nothing"
    )
    args = parser.parse_args(argv)
    stale = []
    for page in args.pages:
        text = page.read_text()
        new = render_tables(text, args.root)
        if new != text:
            stale.append(str(page))
            if not args.check:
                page.write_text(new)
    if stale:
        print(("stale tables in " if args.check else "rewrote ") + ", ".join(stale))
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
