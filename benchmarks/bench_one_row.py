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

Wall times on a shared machine drift by tens of percent from minute to
minute. ``--instructions`` prints instead the instructions per call, which do
not: the same fitted learners, 200 more one-row calls to settle, then 300
one-row calls counted by Valgrind's callgrind in one measured region per
learner and form (the client-request helper of ``count_instructions.py``;
nothing else is counted), divided by 300. ``--python`` names the interpreter
whose skbandit is counted (default: this one)::

    python benchmarks/bench_one_row.py --instructions --label this
    python benchmarks/bench_one_row.py --instructions --python /path/to/venv/bin/python
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
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


def _forms(X) -> dict:
    return {"dense": X.toarray() if sp.issparse(X) else X, "csr": sp.csr_matrix(X)}


def count_child() -> int:
    """Under callgrind: per learner and form, 300 one-row calls in a region."""
    import ctypes

    cg = ctypes.CDLL(os.environ["SKBANDIT_CG_HELPER"])
    cg.cg_end.argtypes = [ctypes.c_char_p]
    X, y = make_stream(1500, seed=0)
    for name, cls in LEARNERS:
        for form, Xf in _forms(X).items():
            est = cls(random_state=0)
            est.partial_fit(Xf[:500], y[:500], classes=np.unique(y))
            for i in range(500, 700):
                est.partial_fit(Xf[i : i + 1], y[i : i + 1])
            rows = [Xf[i : i + 1] for i in range(700, 1000)]
            labels = [y[i : i + 1] for i in range(700, 1000)]
            cg.cg_begin()
            for row, label in zip(rows, labels, strict=True):
                est.partial_fit(row, label)
            cg.cg_end(f"{name}-{form}".encode())
    return 0


def instructions(python: str) -> list[str]:
    """``name-form=Ir/call`` cells, from a callgrind child (``count_child``)."""
    from count_instructions import build_helper, read_dumps

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cg"
        env = dict(os.environ, PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1",
                   SKBANDIT_CG_HELPER=str(build_helper(Path(tmp))))  # fmt: skip
        cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
               "--collect-atstart=no", f"--callgrind-out-file={out}", python,
               str(Path(__file__).resolve()), "--count-child"]  # fmt: skip
        done = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(
                f"bench_one_row.py: the callgrind child failed:\n{done.stderr[-3000:]}"
            )
        dumps = read_dumps(out, None)
    return [
        f"{name}-{form}={dumps[f'{name}-{form}'][0] / 300:,.0f}"
        for name, _ in LEARNERS
        for form in ("dense", "csr")
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", default="this", help="name of the line")
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="instructions per call under callgrind instead of wall times",
    )
    parser.add_argument("--python", default=sys.executable, help="interpreter")
    parser.add_argument("--count-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.count_child:
        return count_child()
    if args.instructions:
        cells = instructions(args.python)
        print(f"{args.label:10s} Ir/call: " + " ".join(cells), flush=True)
        return 0
    X, y = make_stream(4000, seed=0)
    forms = _forms(X)
    cells = [
        f"{name}-{form}={one_row_p50(cls, Xf, y):.1f}"
        for name, cls in LEARNERS
        for form, Xf in forms.items()
    ]
    print(f"{args.label:10s} p50 us: " + " ".join(cells), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
