"""Sort the pairs a ``duplicates`` report lists by what their lines are.

The library tool ``duplicates`` (outside this repository) lists pairs of
places in ``skbandit/`` that share runs of identical or same-shape lines,
one line per pair: ``D12 path:a-b ~ path:c-d ...``. This script reads such a
report and puts each pair in one class, by the lines of its two first runs:

* ``signature``: a signature's parameter list (a learner's ``__init__``
  with its ``super().__init__(max_iter=..., shuffle=..., random_state=...)``
  and its stored parameters, a loader's keyword-only parameters, a compiled
  driver's typed arguments), which scikit-learn's ``get_params`` and the
  numpydoc pages read as they are written;
* ``docstring``: numpydoc sections (``Parameters``, ``Returns``, tables) and
  doctests;
* ``import``: import and cimport lists;
* ``declaration``: a compiled class's field declarations and comments;
* ``data``: literal tables, registrations and keyword-argument calls;
* ``code``: the rest (statements).

A pair whose two places fall in different classes is named by both. Run
from the repository root, after ``cd skbandit && duplicates --most 100 >
REPORT``::

    python tools/classify_duplicates.py REPORT
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

# One pattern per kind of line; a place takes the kind most of its lines have
# (ties: the first kind in this order).
_KINDS = (
    (
        "signature",
        re.compile(
            r"^\s*(def |cpdef |class |\)\s*->|\*,$|self,$"
            r"|\w+\s*:\s*[\w.\[\], |]+(\s*=\s*.+)?,$"  # name: type = default,
            r"|(const )?\w+(\[::1\]|\[:, ::1\])? \w+(=None)?,$"  # typed C argument
            r"|super\(\)\.__init__\("
            r"|self\.\w+ = \w+$)"  # an __init__ storing its parameters
        ),
    ),
    (
        "docstring",
        re.compile(
            r'^\s*("""|>>>|\.\.\. |Parameters|Returns|-+$|=+|\w+ : |[A-Z]\w+ {2,})'
        ),
    ),
    ("import", re.compile(r"^\s*(from \S+ c?import|import |\w+,$|\)$)")),
    ("declaration", re.compile(r"^\s*(cdef |#)")),
    ("data", re.compile(r'^\s*(\(?"[^"]*"|\w+=|\w+\(|\)|\},?$|\),?$)')),
)


def _region(root: Path, spec: str) -> str:
    path, span = spec.rsplit(":", 1)
    start, stop = (int(v) for v in span.split("-"))
    lines = (root / path).read_text().splitlines()
    return "\n".join(lines[start - 1 : stop])


def classify(text: str) -> str:
    """The kind most of the place's non-blank lines have (``_KINDS``), or
    ``code`` when most have none."""
    counts = {name: 0 for name, _ in _KINDS}
    lines = [line for line in text.splitlines() if line.strip()]
    other = 0
    for line in lines:
        for name, pattern in _KINDS:
            if pattern.match(line):
                counts[name] += 1
                break
        else:
            other += 1
    best = max(counts, key=lambda name: counts[name])
    return best if counts[best] > other else "code"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("--root", type=Path, default=Path("skbandit"))
    args = parser.parse_args()
    classes: dict[str, list[str]] = {}
    for line in args.report.read_text().splitlines():
        m = re.match(r"(D\d+) (\S+) ~ (\S+)", line)
        if not m:
            continue
        a = classify(_region(args.root, m.group(2)))
        b = classify(_region(args.root, m.group(3)))
        classes.setdefault(a if a == b else f"{a} / {b}", []).append(m.group(1))
    total = sum(len(v) for v in classes.values())
    print(f"{total} pairs")
    for name, ids in sorted(classes.items(), key=lambda kv: -len(kv[1])):
        print(f"{len(ids):4d}  {name}: {' '.join(ids)}")


if __name__ == "__main__":
    main()
