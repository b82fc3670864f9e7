"""Median time of a one-row ``partial_fit(row, [label])`` on a fitted learner.

The per-row streaming loop users write around ``partial_fit``: each learner
is fitted on the first 500 rows of the benchmark harness' seeded SynSep-like
stream (``_harness.make_stream``: d = 400, k = 9, about 43 non-zeros a row),
then learns rows 500 to 3,499 one call at a time; printed is the median
(p50) of those calls' wall times in microseconds, for dense rows (a C-ordered
1-row array) and CSR rows (a 1-row ``csr_matrix``), one line per interpreter
run. To compare two versions side by side, run it alternately with each
version's interpreter (``--label`` names the line)::

    /path/to/previous/venv/bin/python benchmarks/bench_one_row.py --label previous
    python benchmarks/bench_one_row.py --label this
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import make_stream  # noqa: E402

from skbandit import Banditron, OnlineSelector, SquareCB  # noqa: E402

LEARNERS = (("Banditron", Banditron), ("SquareCB", SquareCB),
            ("OnlineSelector", OnlineSelector))  # fmt: skip


def one_row_p50(cls, X, y, warm: int = 500, n: int = 3000) -> float:
    """p50 in microseconds of ``partial_fit`` on rows ``warm .. warm+n-1``."""
    est = cls(random_state=0)
    est.partial_fit(X[:warm], y[:warm], classes=np.unique(y))
    rows = [X[i : i + 1] for i in range(warm, warm + n)]
    labels = [y[i : i + 1] for i in range(warm, warm + n)]
    times = np.empty(n)
    clock = time.perf_counter
    for j, (row, label) in enumerate(zip(rows, labels, strict=True)):
        start = clock()
        est.partial_fit(row, label)
        times[j] = clock() - start
    return float(np.median(times) * 1e6)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", default="this", help="name of the line")
    args = parser.parse_args(argv)
    X, y = make_stream(4000, seed=0)
    forms = {"dense": X.toarray() if sp.issparse(X) else X, "csr": sp.csr_matrix(X)}
    cells = [
        f"{name}-{form}={one_row_p50(cls, Xf, y):.1f}"
        for name, cls in LEARNERS
        for form, Xf in forms.items()
    ]
    print(f"{args.label:10s} p50 us: " + " ".join(cells), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
