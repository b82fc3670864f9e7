"""Peak memory of one ``partial_fit`` call, against the model and the input.

Issue 19's target: "peak memory of a ``partial_fit`` call <= 1.1x the model's
size plus the input, for every learner". This script measures it for every
public learner at its defaults (every estimator class in ``skbandit.__all__``),
plus ``SOBA(covariance="full")`` and ``SeparableOneVsAll(kernel="rational")``,
whose state differs from their defaults' (a full inverse; a support set).

Each learner is first fitted on ``--warmup`` rows (one call), then one more
``partial_fit`` call is measured, in each of these cases:

* ``row``: one CSR row with its label, ``partial_fit(row, [label])`` (the
  simulator's one-row call), at each d = 2**b of ``--row-bits`` (default 2**10
  and 2**20);
* ``logged row``: the same row, acted on first with ``sample_actions`` (not
  measured), then ``partial_fit(row, LoggedFeedback(action, reward,
  propensity))`` (the live loop's learning call);
* ``batch`` and ``logged batch``: ``--batch-rows`` (10,000) dense float64 rows
  at d = 2**``--batch-bits`` (2**10) in one call, with labels and with logged
  feedback.

The rows are ``bench_live.py``'s hashed sparse rows (``hashed_stream``: k = 20
classes, 20 non-zeros per row at distinct hashed columns, unit norm, labels of a
fixed random linear rule). ``SOBA(covariance="full")`` stores a (k d)^2 inverse
and plays every case at d = 2**``--soba-full-bits`` (2**8: 200 MiB) instead. A
full-information learner (``MulticlassPerceptron``) cannot learn logged
feedback: its logged cases are skipped.

Definitions (bytes, per learner and case)
-----------------------------------------
M0, M1
    The model before and after the call: ``nbytes`` of every NumPy array of the
    learner's state, the attributes named in ``_state_attrs`` (for
    ``OnlineSelector``, also those of its candidates ``candidates_``): what
    ``_get_state`` copies. M1 > M0 when the call grows the state (a support set).
I
    The input: ``nbytes`` of X (dense: the array; CSR: ``data``, ``indices``
    and ``indptr``) plus the arrays of y (the labels, or the actions, rewards
    and propensities of the ``LoggedFeedback``).
E (``extra``)
    What the call allocated on top of what existed before it, at its worst: the
    peak of ``tracemalloc``'s traced memory during the call minus the traced
    memory just before it (``tracemalloc`` is started before the learner is
    built and its peak reset just before the call). NumPy reports its data
    buffers to ``tracemalloc``, so every array the call creates (a state copy,
    a validated copy of X, per-row outputs) is counted, as are Python objects;
    memory compiled code takes with a plain ``malloc`` is not (skbandit's
    kernels take none of size; the ``dRSS`` column would show it).
peak
    M0 + I + E: the call's footprint, the model and the input it was given plus
    what it allocated.
ratio
    peak / (M1 + I). The target is ratio <= 1.1: beyond the growth of its own
    state, a call allocates at most a tenth of the model plus the input.
    Rows above it are flagged ``> 1.1``. A call that copies the whole state
    once (the rollback snapshot of ``base.py`` before the undo journal) has
    ratio ~ 1 + M / (M + I): about 2 when the input is small next to the model
    (one row), near 1 when the input dominates (a batch at small d).

Also printed: ``dRSS``, the growth of the process' peak resident set size
during the call over its RSS just before it (``VmHWM`` reset through
``/proc/self/clear_refs`` after trimming the allocator; Linux only, ``-``
elsewhere; page-granular and noisy below a MiB), and the call's wall time.

Each (learner, case) runs in a forked child process (``--no-isolate``: all in
this one), so one learner's allocations do not lower the next one's peak. The
default run takes about 40 s and 2.7 GiB peak RSS at most (``OnlineSelector`` at
d = 2**20: four candidates, a 1.3 GiB state, copied once per call).

    python benchmarks/bench_memory.py
    python benchmarks/bench_memory.py --row-bits 10 --batch-rows 1000   # seconds
    python benchmarks/bench_memory.py --learners Banditron SOBA --json mem.json
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
import traceback
import tracemalloc
import warnings
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from _harness import reset_rss_counter
from bench_live import HASHED_CLASSES, hashed_stream
from sklearn.base import BaseEstimator

import skbandit
from skbandit import (
    SOBA,
    BanditPipeline,
    LoggedFeedback,
    OffPolicyWarning,
    SeparableOneVsAll,
)

TARGET = 1.1


def learners() -> list[tuple[str, Callable[[int], Any]]]:
    """``(name, factory(seed))``: every public estimator class at its defaults,
    then the variants whose state differs from the defaults'."""
    out = []
    for name in skbandit.__all__:
        cls = getattr(skbandit, name)
        if isinstance(cls, type) and issubclass(cls, BaseEstimator):
            out.append((name, lambda seed, cls=cls: cls(random_state=seed)))
    out += [
        (
            "SOBA(covariance='full')",
            lambda seed: SOBA(covariance="full", random_state=seed),
        ),
        (
            "SeparableOneVsAll(kernel='rational')",
            lambda seed: SeparableOneVsAll(kernel="rational", random_state=seed),
        ),
    ]
    return out


@dataclass(frozen=True)
class Case:
    name: str
    bits: int
    rows: int
    dense: bool
    logged: bool


def cases(args: argparse.Namespace) -> list[Case]:
    out = []
    for bits in args.row_bits:
        out.append(Case(f"row d=2**{bits}", bits, 1, False, False))
        if args.logged:
            out.append(Case(f"logged row d=2**{bits}", bits, 1, False, True))
    if args.batch_rows > 0:
        n, b = args.batch_rows, args.batch_bits
        out.append(Case(f"batch {n:,} dense d=2**{b}", b, n, True, False))
        if args.logged:
            out.append(Case(f"logged batch {n:,} dense d=2**{b}", b, n, True, True))
    return out


# ------------------------------------------------------------------- sizes
def state_arrays(est: Any) -> Iterator[np.ndarray]:
    """The state's arrays, not copied: ``_state_attrs`` and, recursively, the
    candidates of an ``OnlineSelector`` and the learner of a ``BanditPipeline``
    (what ``_get_state`` copies)."""
    for name in est._state_attrs:
        value = getattr(est, name)
        if isinstance(value, np.ndarray):
            yield value
    for candidate in getattr(est, "candidates_", ()):
        yield from state_arrays(candidate)
    if isinstance(est, BanditPipeline):
        yield from state_arrays(est.learner_)


def model_nbytes(est: Any) -> int:
    """The state's bytes. Reading the rational ``SeparableOneVsAll``'s state
    attributes exports its support store (and its next call then builds a new
    store from them): its ``_model_bytes`` sizes the store without reading
    them, the same bytes."""
    if "_sv_live" in getattr(est, "__dict__", {}):
        return int(est._model_bytes())
    return sum(a.nbytes for a in state_arrays(est))


def input_nbytes(X: Any, y: Any) -> int:
    if sp.issparse(X):
        n = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    else:
        n = np.asarray(X).nbytes
    if isinstance(y, LoggedFeedback):
        parts = (y.actions, y.rewards, y.propensities)
    else:
        parts = (y,)
    return n + sum(np.asarray(p).nbytes for p in parts)


# ---------------------------------------------------------------- measuring
def _status_kib(field: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def _reset_rss() -> int | None:
    """Trim the allocator, reset the peak-RSS counter; the RSS in KiB, or None."""
    return _status_kib("VmRSS") if reset_rss_counter() else None


def measure_call(est: Any, call: Callable[[], Any]) -> dict[str, Any]:
    """Run ``call`` (one ``partial_fit`` of ``est``) and measure it.

    ``tracemalloc`` must be tracing already (since before ``est`` was built),
    so that memory the call frees is subtracted from the traced total.
    """
    m0 = model_nbytes(est)
    rss0 = _reset_rss()
    before = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    t0 = time.perf_counter()
    call()
    seconds = time.perf_counter() - t0
    peak_traced = tracemalloc.get_traced_memory()[1]
    hwm = _status_kib("VmHWM")
    return {
        "model0": m0,
        "model1": model_nbytes(est),
        "extra": peak_traced - before,
        "drss": None if rss0 is None or hwm is None else (hwm - rss0) * 1024,
        "seconds": seconds,
    }


@dataclass
class Result:
    learner: str
    case: str
    d: int
    status: str = "ok"
    model: int | None = None  # M1
    input: int | None = None  # I
    extra: int | None = None  # E
    peak: int | None = None  # M0 + I + E
    ratio: float | None = None  # peak / (M1 + I)
    drss: int | None = None
    seconds: float | None = None


def run_case(name: str, factory, case: Case, data, args) -> Result:
    """Build and warm up a learner, then measure one ``partial_fit`` call."""
    X, y = data
    w, n = args.warmup, case.rows
    r = Result(name, case.name, X.shape[1])
    tracemalloc.start()
    try:
        est = factory(args.seed)
        est.partial_fit(X[:w], y[:w], classes=HASHED_CLASSES)
        if case.logged and est._make_kernel().full_information:
            r.status = "- (full information)"
            return r
        Xm = X[w : w + n]
        Xm = Xm.toarray() if case.dense else Xm
        ym: Any = y[w : w + n]
        if case.logged:
            actions, propensities = est.sample_actions(Xm)
            rewards = (actions == ym).astype(np.float64)
            ym = LoggedFeedback(actions, rewards, propensities)
        out = measure_call(est, lambda: est.partial_fit(Xm, ym))
    except Exception as exc:  # report it, keep the other rows
        traceback.print_exc()
        r.status = f"FAILED {type(exc).__name__}: {exc}"
        return r
    finally:
        tracemalloc.stop()
    r.model, r.input, r.extra = out["model1"], input_nbytes(Xm, ym), out["extra"]
    r.peak = out["model0"] + r.input + r.extra
    r.ratio = r.peak / (r.model + r.input)
    r.drss, r.seconds = out["drss"], out["seconds"]
    return r


def run_isolated(fn: Callable[[], Result]) -> Result | None:
    """``fn()`` in a forked child process; None if the child died."""
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=lambda: send.send(fn()))
    proc.start()
    send.close()
    try:
        out = recv.recv()
    except EOFError:
        out = None
    proc.join()
    return out


# ---------------------------------------------------------------------- table
def _size(n: float | None) -> str:
    if n is None:
        return "-"
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(n) >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{n:.0f} B"


HEAD = ("model", "input", "extra", "peak", "ratio", "target", "dRSS", "ms")


def format_row(r: Result, width: int) -> str:
    if r.status != "ok":
        return f"{r.learner:{width}}  {r.status}"
    assert r.ratio is not None and r.seconds is not None
    cells = (
        _size(r.model),
        _size(r.input),
        _size(r.extra),
        _size(r.peak),
        f"{r.ratio:.3f}",
        f"> {TARGET}" if r.ratio > TARGET else "ok",
        _size(r.drss),
        f"{1e3 * r.seconds:.2f}",
    )
    return f"{r.learner:{width}}  " + "  ".join(f"{c:>10}" for c in cells)


def parse_args(argv) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument(
        "--row-bits", type=int, nargs="*", default=[10, 20],
        help="log2 d of the one-row cases (none: skip them)",
    )  # fmt: skip
    p.add_argument("--batch-bits", type=int, default=10, help="log2 d of the batch")
    p.add_argument(
        "--batch-rows", type=int, default=10_000,
        help="rows of the batch cases (0: skip them)",
    )  # fmt: skip
    p.add_argument(
        "--soba-full-bits", type=int, default=8,
        help="log2 d of every case of SOBA(covariance='full')",
    )  # fmt: skip
    p.add_argument("--warmup", type=int, default=100, help="rows fitted first")
    p.add_argument(
        "--no-logged", dest="logged", action="store_false",
        help="skip the LoggedFeedback cases",
    )  # fmt: skip
    p.add_argument(
        "--learners", nargs="+", metavar="NAME",
        help="only the learners whose name starts with one of these",
    )  # fmt: skip
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--no-isolate", dest="isolate", action="store_false",
        help="measure in this process instead of a forked child per row",
    )  # fmt: skip
    p.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    args = p.parse_args(argv)
    if args.warmup < 1 or args.batch_rows < 0:
        p.error("--warmup must be positive and --batch-rows non-negative")
    bits = [*args.row_bits, args.batch_bits, args.soba_full_bits]
    if min(bits) < 5:  # 20 distinct columns per row
        p.error("every log2 d must be at least 5 (rows of 20 non-zeros)")
    args.isolate = args.isolate and "fork" in multiprocessing.get_all_start_methods()
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    # A logged batch acted on before it is learned is partly off-policy (the
    # policy moves while it learns) and some learners warn: not measured here.
    warnings.simplefilter("ignore", OffPolicyWarning)
    chosen = [
        (name, factory)
        for name, factory in learners()
        if not args.learners or any(name.startswith(p) for p in args.learners)
    ]
    width = max([len("learner"), *(len(name) for name, _ in chosen)])
    streams: dict[tuple[int, int], tuple] = {}
    results = []
    print(
        f"skbandit {skbandit.__version__} ({skbandit.__file__}); "
        f"k={HASHED_CLASSES.size}, 20 non-zeros per row, warm-up {args.warmup} rows, "
        f"seed {args.seed}; ratio = peak / (model + input), target <= {TARGET}"
    )
    for case in cases(args):
        print(f"\n{case.name}: one partial_fit call on a fitted learner")
        print(f"{'learner':{width}}  " + "  ".join(f"{h:>10}" for h in HEAD))
        print("  ".join("-" * w for w in (width, *(10,) * len(HEAD))), flush=True)
        for name, factory in chosen:
            bits = args.soba_full_bits if "'full'" in name else case.bits
            key = (bits, args.warmup + case.rows)
            if key not in streams:  # the same first rows for any length
                streams[key] = hashed_stream(key[1], bits, args.seed)
            this = Case(case.name, bits, case.rows, case.dense, case.logged)

            def fn(name=name, factory=factory, this=this, key=key) -> Result:
                return run_case(name, factory, this, streams[key], args)

            r = run_isolated(fn) if args.isolate else fn()
            if r is None:
                r = Result(name, case.name, 1 << bits, "FAILED child process died")
            shown = name if bits == case.bits else f"{name} [d=2**{bits}]"
            print(format_row(Result(**{**asdict(r), "learner": shown}), width))
            sys.stdout.flush()
            results.append(r)
    measured = [r for r in results if r.ratio is not None]
    over = [r for r in measured if (r.ratio or 0.0) > TARGET]
    print(
        f"\n{len(over)} of {len(measured)} measured calls above {TARGET}x "
        "(model + input)."
        "\nmodel: state arrays after the call (M1); input: X and y; extra: "
        "tracemalloc peak during the call over the traced memory before it (E);"
        "\npeak = model before (M0) + input + extra; ratio = peak / (model + "
        "input); dRSS: peak-RSS growth during the call."
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump([asdict(r) for r in results], f, indent=2)
        print(f"wrote {args.json}")
    return int(any(r.status.startswith("FAILED") for r in results))


if __name__ == "__main__":
    sys.exit(main())
