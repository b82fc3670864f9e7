"""Instructions per round of each skbandit learner's ``partial_fit``, CSR and dense.

Wall-clock speed on a loaded machine drifts by tens of percent; the number of
instructions a call executes does not (it varies by well under 1% between runs).
This script counts them with Valgrind's callgrind, only inside the measured calls:

* each learner of ``--script`` (default ``bench_core.py``: its ``LEARNERS``) plays
  the benchmark harness' seeded SynSep-like stream (``_harness.make_stream``, d =
  400, k = 9, ~43 non-zeros per row), as CSR and as a dense float64 array
  (``--inputs``; ``dense-full``: the dense array without zeros, as in
  ``bench_core.py``, whose rows the kernels read in their dense form);
* in a child process run under ``valgrind --tool=callgrind --instr-atstart=no
  --collect-atstart=no``, a fresh learner (``factory(0)``) is warmed up by
  ``partial_fit`` on the first ``--warmup`` rows (``classes`` given), then makes
  two measured calls: ``partial_fit`` on the next single row ("1 row") and on the
  next ``--rounds`` rows ("n rows"), plus an empty region ("noop", the
  measuring's own cost, subtracted from both);
* the measured regions are delimited by callgrind client requests from a small C
  helper compiled on the fly (``cc``, ``valgrind/callgrind.h``): start the
  instrumentation, zero the counters, collect, stop collecting, dump. Nothing
  outside the regions (imports, data generation, warm-up) is counted.

With ``--live`` the calls measured are rounds of the live loop instead, one row
per call: ``sample_actions(row)`` then ``partial_fit(row, LoggedFeedback(action,
reward, propensity))`` (the reward 1[action == label], computed in Python as a
deployed loop would), "1 row" one round and "n rows" ``--rounds`` rounds; the
learners are then the script's ``LIVE_LEARNERS`` when it has them (``--script
bench_live.py``: Banditron, SquareCB, OnlineSelector), else its ``LEARNERS``.
``Ir/round`` is then the instructions of one live round. ``--session`` counts
rounds of a ``LiveSession`` opened on the warmed-up learner instead:
``session.act(row)`` then ``session.learn(row, action, reward, propensity)``
(a dense row as a 1-D array, a CSR row as a one-row matrix). ``--vw`` adds the
row ``VW``: the script's ``vw_case`` (``bench_live.py``: Vowpal Wabbit's
``--cb_explore`` predict then learn, the yardstick of the live session),
warmed up and measured on the same rows.

Printed per learner and input: ``Ir/round`` = Ir(n rows) / n; ``marginal`` =
(Ir(n rows) - Ir(1 row)) / (n - 1), the cost of one more row in a call; ``per
call`` = Ir(1 row) - marginal, the fixed cost of a call. ``--annotate N`` adds,
per learner and input, the N functions with the most instructions of their own
(``callgrind_annotate``, exclusive cost) in the n-row call, per round.

The skbandit measured is the one ``--python`` imports (default: this
interpreter), while the stream and the learner list come from this checkout, so
another version (e.g. the environment ``compare_release.py --workdir DIR``
leaves in ``DIR/venv``) is measured on exactly the same input:

    python benchmarks/count_instructions.py
    python benchmarks/count_instructions.py --inputs csr --annotate 15
    python benchmarks/count_instructions.py --python /tmp/prev/venv/bin/python
    python benchmarks/count_instructions.py --script bench_ova.py --rounds 5000
    python benchmarks/count_instructions.py --live --script bench_live.py --rounds 2000
    python benchmarks/count_instructions.py --session --vw --script bench_live.py \
        --rounds 2000

Needs Linux, ``valgrind`` and a C compiler with Valgrind's headers. Each child
runs about 30-60x slower than natively (20,000 rounds: a minute or two per
learner and input).
"""

from __future__ import annotations

import argparse
import ctypes
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

BENCHMARKS = Path(__file__).resolve().parent

HELPER_C = r"""
#include <valgrind/callgrind.h>
int cg_running(void) { return RUNNING_ON_VALGRIND; }
void cg_begin(void) {
    CALLGRIND_START_INSTRUMENTATION;
    CALLGRIND_ZERO_STATS;
    CALLGRIND_TOGGLE_COLLECT;
}
void cg_end(const char *label) {
    CALLGRIND_TOGGLE_COLLECT;
    CALLGRIND_DUMP_STATS_AT(label);
}
"""
REGIONS = ("noop", "1 row", "n rows")
VW = "VW"  # the --vw row's name


def build_helper(workdir: Path) -> Path:
    """Compile the client-request helper into ``workdir``; returns the library."""
    src, lib = workdir / "cg_helper.c", workdir / "cg_helper.so"
    src.write_text(HELPER_C)
    cc = os.environ.get("CC", "cc")
    done = subprocess.run(
        [cc, "-O1", "-shared", "-fPIC", "-o", str(lib), str(src)],
        capture_output=True, text=True,
    )  # fmt: skip
    if done.returncode != 0:
        sys.exit(
            "count_instructions.py: compiling the callgrind helper failed "
            f"(needs {cc} and valgrind/callgrind.h):\n{done.stderr}"
        )
    return lib


def load_script(script: str):
    """A benchmark script of this directory, imported as a module."""
    sys.path.insert(0, str(BENCHMARKS))
    path = BENCHMARKS / script
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_learners(script: str, live: bool = False) -> list[tuple[str, Any]]:
    """The ``LEARNERS`` list of a benchmark script in this directory (its
    ``LIVE_LEARNERS`` for ``--live`` when it has them)."""
    module = load_script(script)
    if live and hasattr(module, "LIVE_LEARNERS"):
        return list(module.LIVE_LEARNERS)
    return list(module.LEARNERS)


# ------------------------------------------------------------ child (valgrind)
def child(args: argparse.Namespace) -> int:
    from _harness import CLASSES, make_input

    import skbandit

    cg = ctypes.CDLL(os.environ["SKBANDIT_CG_HELPER"])
    cg.cg_end.argtypes = [ctypes.c_char_p]
    if not cg.cg_running():
        sys.exit("count_instructions.py --child: not running under valgrind")
    w, n = args.warmup, args.rounds
    X, y = make_input(args.input, w + 1 + n, 0)
    if args.learner == VW:
        vw_child(cg, load_script(args.script).vw_case(X, y, 0), w, n)
        print(json.dumps({"skbandit": skbandit.__file__, "t_": w + 1 + n}))
        return 0
    factory = dict(load_learners(args.script, args.live))[args.learner]
    # slices made before measuring (a CSR slice is a copy)
    parts = [(X[:w], y[:w]), (X[w : w + 1], y[w : w + 1]), (X[w + 1 :], y[w + 1 :])]
    est = factory(0)
    est.partial_fit(*parts[0], classes=CLASSES)
    if args.live:
        live_child(cg, est, X[w:], y[w:], n, args.session)
    else:
        fit = est.partial_fit
        Xa, ya = parts[1]
        Xb, yb = parts[2]
        cg.cg_begin()
        cg.cg_end(b"noop")
        cg.cg_begin()
        fit(Xa, ya)
        cg.cg_end(b"1 row")
        cg.cg_begin()
        fit(Xb, yb)
        cg.cg_end(b"n rows")
    print(json.dumps({"skbandit": skbandit.__file__, "t_": int(est.t_)}))
    return 0


def live_child(cg, est, X, y, n: int, session: bool = False) -> None:
    """The ``--live`` regions: one round of the live loop (of a
    ``LiveSession`` with ``session``), then ``n`` rounds."""
    from scipy import sparse

    from skbandit import LiveSession, LoggedFeedback

    labels = y.tolist()
    if session:
        live = LiveSession(est)
        # made before measuring: a dense row 1-D, a CSR row a 1-row matrix
        rows = [X[i : i + 1] if sparse.issparse(X) else X[i] for i in range(n + 1)]

        def round_(i):
            row = rows[i]
            action, propensity = live.act(row)
            live.learn(row, action, 1.0 if action == labels[i] else 0.0, propensity)

    else:
        rows = [X[i : i + 1] for i in range(n + 1)]

        def round_(i):
            row = rows[i]
            action, propensity = est.sample_actions(row)
            reward = 1.0 if action[0] == labels[i] else 0.0
            est.partial_fit(row, LoggedFeedback(action, [reward], propensity))

    cg.cg_begin()
    cg.cg_end(b"noop")
    cg.cg_begin()
    round_(0)
    cg.cg_end(b"1 row")
    cg.cg_begin()
    for i in range(1, n + 1):
        round_(i)
    cg.cg_end(b"n rows")


def vw_child(cg, one, w: int, n: int) -> None:
    """The ``--vw`` regions: ``one(i)`` (a round of the script's ``vw_case``)
    on rows ``0 .. w-1`` unmeasured, then row ``w``, then ``n`` rows."""
    for i in range(w):
        one(i)
    cg.cg_begin()
    cg.cg_end(b"noop")
    cg.cg_begin()
    one(w)
    cg.cg_end(b"1 row")
    cg.cg_begin()
    for i in range(w + 1, w + 1 + n):
        one(i)
    cg.cg_end(b"n rows")


# ------------------------------------------------------------------ parent
def read_dumps(
    out: Path, regions: tuple[str, ...] | None = REGIONS
) -> dict[str, tuple[int, Path]]:
    """``{region: (Ir, dump file)}`` from callgrind's dumps ``out.<n>``, for
    the ``regions`` labels (None: every labelled dump)."""
    found: dict[str, tuple[int, Path]] = {}
    for path in sorted(out.parent.glob(out.name + ".*")):
        text = path.read_text()
        label = re.search(r"^desc: Trigger: Client Request: (.*)$", text, re.M)
        total = re.search(r"^(?:summary|totals): (\d+)", text, re.M)
        if label and total and (regions is None or label.group(1) in regions):
            found[label.group(1)] = (int(total.group(1)), path)
    return found


def top_functions(dump: Path, rounds: int, n: int) -> list[tuple[float, str]]:
    """The ``n`` functions with the most exclusive instructions, per round."""
    done = subprocess.run(
        ["callgrind_annotate", "--inclusive=no", "--threshold=100", str(dump)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    rows = []
    for line in done.stdout.splitlines():
        m = re.match(r"^\s*([\d,]+)\s+(?:\([\s\d.%]+\)\s+)?(\S.*)$", line)
        if m and ":" in m.group(2) and "PROGRAM TOTALS" not in line:
            rows.append((int(m.group(1).replace(",", "")) / rounds, m.group(2)))
    return rows[:n]


def measure(
    python: str, learner: str, kind: str, args: argparse.Namespace, tmp: Path
) -> dict[str, Any]:
    out = tmp / f"cg.{learner}.{kind}"
    env = dict(os.environ, PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1",
               OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")  # fmt: skip
    cmd = [
        "valgrind", "--tool=callgrind", "--instr-atstart=no", "--collect-atstart=no",
        f"--callgrind-out-file={out}", python, str(Path(__file__).resolve()),
        "--child", "--script", args.script, "--learner", learner, "--input", kind,
        "--rounds", str(args.rounds), "--warmup", str(args.warmup),
    ] + (["--live"] if args.live else []) + (
        ["--session"] if args.session else []
    )  # fmt: skip
    done = subprocess.run(
        cmd, env=env, cwd=tempfile.gettempdir(), capture_output=True, text=True
    )
    if done.returncode != 0:
        sys.exit(
            f"count_instructions.py: the child for {learner} ({kind}) failed:\n"
            + done.stdout[-2000:]
            + done.stderr[-4000:]
        )
    info = json.loads(done.stdout.strip().splitlines()[-1])
    dumps = read_dumps(out)
    missing = set(REGIONS) - set(dumps)
    if missing:
        sys.exit(f"count_instructions.py: no callgrind dump for {sorted(missing)}")
    noop = dumps["noop"][0]
    one, many = dumps["1 row"][0] - noop, dumps["n rows"][0] - noop
    n = args.rounds
    marginal = (many - one) / (n - 1)
    row = {
        "learner": learner, "input": kind, "rounds": n,
        "ir_n_rows": many, "ir_1_row": one, "ir_noop": noop,
        "ir_per_round": many / n, "marginal": marginal, "per_call": one - marginal,
        "skbandit": info["skbandit"],
    }  # fmt: skip
    if args.annotate:
        row["top"] = top_functions(dumps["n rows"][1], n, args.annotate)
    return row


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add = p.add_argument
    add("--script", default="bench_core.py", help="benchmark script with LEARNERS")
    add("--learners", nargs="+", help="only these learners (names in LEARNERS)")
    add("--inputs", nargs="+", choices=("csr", "dense", "dense-full"),
        default=["csr", "dense"])  # fmt: skip
    add("--rounds", type=int, default=20_000, help="rows of the measured call")
    add("--warmup", type=int, default=1_000, help="rows of the warm-up call")
    add("--python", default=sys.executable, help="interpreter whose skbandit to count")
    add("--annotate", type=int, default=0, metavar="N",
        help="also list the N most expensive functions (own instructions)")  # fmt: skip
    add("--live", action="store_true",
        help="count rounds of the live loop instead")  # fmt: skip
    add("--session", action="store_true",
        help="count rounds of a LiveSession (implies --live)")  # fmt: skip
    add("--vw", action="store_true",
        help="also the vw_case of --script (VW predict + learn)")  # fmt: skip
    add("--keep", type=Path, help="keep callgrind's dumps in this directory")
    add("--json", metavar="PATH", help="also write the results")
    add("--child", action="store_true", help=argparse.SUPPRESS)
    add("--learner", help=argparse.SUPPRESS)
    add("--input", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.rounds < 2 or args.warmup < 1:
        p.error("--rounds must be at least 2 and --warmup at least 1")
    args.live = args.live or args.session
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child:
        return child(args)
    if shutil.which("valgrind") is None:
        sys.exit("count_instructions.py: valgrind is not installed")
    names = [name for name, _ in load_learners(args.script, args.live)]
    for name in args.learners or []:
        if name not in names:
            sys.exit(
                f"count_instructions.py: {name!r} is not in {args.script}: {names}"
            )
    names = [n for n in names if not args.learners or n in args.learners]
    if args.vw:
        if not hasattr(load_script(args.script), "vw_case"):
            sys.exit(f"count_instructions.py: --vw: {args.script} has no vw_case")
        names.append(VW)
    tmp = Path(tempfile.mkdtemp(prefix="skbandit-cg-"))
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        tmp = args.keep.resolve()
    os.environ["SKBANDIT_CG_HELPER"] = str(build_helper(tmp))
    rows = []
    try:
        width = max(len(n) for n in names)
        what = (
            f"{args.rounds} rounds of a LiveSession (act + learn),"
            if args.session
            else f"{args.rounds} rounds of the live loop, one row per call,"
            if args.live
            else f"partial_fit of {args.rounds} rows"
        )
        print(
            f"{args.script}: {what} after a {args.warmup}-row warm-up, "
            f"python {args.python}"
        )
        print(
            f"{'learner':{width}}  input  {'Ir/round':>9}  {'marginal':>9}  "
            f"{'per call':>10}"
        )
        for name in names:
            for kind in args.inputs:
                r = measure(args.python, name, kind, args, tmp)
                rows.append(r)
                print(
                    f"{name:{width}}  {kind:<5}  {r['ir_per_round']:9,.0f}  "
                    f"{r['marginal']:9,.0f}  {r['per_call']:10,.0f}",
                    flush=True,
                )
                for ir, fn in r.get("top", []):
                    print(f"{'':{width}}    {ir:10,.1f}  {fn}")
        print(f"skbandit imported from {rows[0]['skbandit']}")
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"script": args.script, "python": args.python,
                           "live": args.live, "session": args.session,
                           "rows": rows}, f, indent=2)  # fmt: skip
            print(f"wrote {args.json}")
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
