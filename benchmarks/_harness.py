"""Shared harness of the skbandit benchmarks: stream, peers, timing, table.

A benchmark script lists its learners as ``(name, factory)`` pairs, ``factory(seed)``
returning a fresh skbandit estimator, and hands them to ``main`` (see bench_core.py)::

    def banditron(seed):
        return Banditron(exploration=EpsilonGreedy(0.05), random_state=seed)

    LEARNERS = [("Banditron", banditron)]
    sys.exit(main(LEARNERS, description=__doc__))

What is measured
----------------
One seeded SynSep-like stream (Kakade et al. 2008): ``d = 400`` binary features,
``k = 9`` classes, coordinates 0-119 "rare" and 120-399 "common". Each class has a
fixed prototype whose rare coordinates are on with probability 1/4; an example copies
the prototype of a uniformly drawn class, switches off 5 of its active bits and
switches on 20 random common coordinates (~43 non-zeros per row). It is generated in
fixed-size blocks, so row ``t`` does not depend on the stream length, straight into
CSR, or into a dense C-contiguous float64 array. Each input (one at a time) is
played, in the same order, by:

* each listed learner through ``partial_fit``: one call over the whole stream
  (``classes`` given), and consecutive calls on ``--chunk-size`` rows;
* scikit-learn's ``Perceptron.partial_fit`` on the same chunks (full information;
  the reference of the ``x sklearn`` column);
* a per-row pure-NumPy Banditron loop, on the first ``--numpy-rounds`` rows;
* Vowpal Wabbit ``--cbify 9 --epsilon 0.05`` through its Python API, one text line
  ``label | f<idx>:val ...`` per row, on the first ``--vw-rounds`` rows, when
  ``vowpalwabbit`` is importable: once counting the building of the lines, once
  ("learn only") on lines built beforehand (VW's own parsing is still counted).

Columns
-------
seconds: best ``time.perf_counter`` wall time of ``--repeat`` passes, each from a
freshly constructed learner (construction included, ~10 ms for VW; data generation
and chunk slicing excluded). rounds/s: rounds / seconds. x sklearn: rounds/s over
the scikit-learn row's on the same input. peak MiB: growth of the process' peak
resident set size during the timed passes over the RSS just before them, i.e. what
the learner allocates on top of its input, compiled code included (Linux: the
allocator is trimmed and the kernel's peak counter reset via /proc/self/clear_refs;
"-" elsewhere; a few MiB are noise). online err: played-action mistakes / rounds
(VW: its average cbify loss; scikit-learn, marked ``*``: the error of each chunk
predicted before ``partial_fit`` on it, in an untimed pass). Each row runs in a
forked child process (``--no-isolate``: all in this one), so that a learner's memory
or crash does not leak into the next row.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import multiprocessing
import os
import platform
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from importlib import metadata
from typing import Any

import numpy as np
import scipy.sparse as sp

N_FEATURES, N_CLASSES, N_RARE = 400, 9, 120
GAMMA = 0.05
CLASSES = np.arange(N_CLASSES)
SKLEARN = "sklearn Perceptron.partial_fit"

Factory = Callable[[int], Any]  # seed -> fresh, unfitted skbandit estimator
Run = Callable[[], float | None]  # one timed pass -> online error


# ---------------------------------------------------------------------- stream
def make_stream(
    n: int, seed: int = 0, *, dense: bool = False, block: int = 1 << 13
) -> tuple[np.ndarray | sp.csr_matrix, np.ndarray]:
    """First ``n`` rounds ``(X, y)`` of the seeded SynSep-like stream.

    ``X`` is CSR with sorted indices, built block by block without a dense copy,
    or with ``dense=True`` a dense float64 array.
    """
    rng = np.random.default_rng(seed)
    prototypes = rng.random((N_CLASSES, N_RARE)) < 0.25
    rows = np.arange(block)[:, None]
    X = np.zeros((n, N_FEATURES)) if dense else None
    parts, ys = [], []
    for start in range(0, n, block):
        yb = rng.integers(N_CLASSES, size=block)
        rare = prototypes[yb]
        # switch off 5 random active bits: the 5 smallest keys, inactive ones last
        keys = rng.random((block, N_RARE))
        keys[~rare] = 2.0
        rare[rows, np.argpartition(keys, 4, axis=1)[:, :5]] = False
        # switch on 20 distinct random common coordinates
        keys = rng.random((block, N_FEATURES - N_RARE))
        on = N_RARE + np.sort(np.argpartition(keys, 19, axis=1)[:, :20], axis=1)
        m = min(block, n - start)
        cols = np.hstack([np.where(rare, np.arange(N_RARE), -1), on])[:m]
        keep = cols >= 0  # read row by row: columns ascending
        indptr = np.concatenate([[0], np.cumsum(keep.sum(axis=1))])
        Xb = sp.csr_matrix((np.ones(indptr[-1]), cols[keep], indptr), (m, N_FEATURES))
        if dense:
            X[start : start + m] = Xb.toarray()
        else:
            parts.append(Xb)
        ys.append(yb[:m])
    if not dense:
        X = sp.vstack(parts, format="csr")
    return X, np.concatenate(ys)


def _chunks(X: Any, y: np.ndarray, size: int | None) -> list[tuple[Any, np.ndarray]]:
    if size is None:
        return [(X, y)]
    return [(X[i : i + size], y[i : i + size]) for i in range(0, len(y), size)]


# ------------------------------------------------------------------- learners
@dataclass
class Case:
    """One table row; ``prepare()`` (untimed) returns the ``run`` to time."""

    name: str
    rounds: int
    prepare: Callable[[], Run] | None  # None: skipped, ``status`` says why
    status: str = "ok"


def skbandit_case(
    name: str, factory: Factory, X: Any, y: np.ndarray, seed: int, chunk: int | None
) -> Case:
    """A skbandit learner through ``partial_fit``: one call (chunk None) or chunks."""

    def prepare() -> Run:
        chunks = _chunks(X, y, chunk)

        def run() -> float:
            est = factory(seed)
            for Xc, yc in chunks:
                est.partial_fit(Xc, yc, classes=CLASSES)
            return est.n_mistakes_ / est.t_

        return run

    how = "1 call" if chunk is None else f"{chunk}-row chunks"
    return Case(f"skbandit {name} partial_fit ({how})", len(y), prepare)


def sklearn_case(X: Any, y: np.ndarray, seed: int, chunk: int) -> Case:
    def prepare() -> Run:
        from sklearn.linear_model import Perceptron

        chunks = _chunks(X, y, chunk)
        est = Perceptron(random_state=seed)
        mistakes = scored = 0  # progressive error; the first chunk is not scored
        for i, (Xc, yc) in enumerate(chunks):
            if i > 0:
                mistakes += int(np.count_nonzero(est.predict(Xc) != yc))
                scored += len(yc)
            est.partial_fit(Xc, yc, classes=CLASSES)

        def run() -> float | None:
            est = Perceptron(random_state=seed)
            for Xc, yc in chunks:
                est.partial_fit(Xc, yc, classes=CLASSES)
            return mistakes / scored if scored else None

        return run

    return Case(f"{SKLEARN} ({chunk}-row chunks, full info)", len(y), prepare)


def numpy_case(X: Any, y: np.ndarray, seed: int, n: int) -> Case:
    """A per-row Banditron in pure NumPy, the way a user would write the loop."""
    n = min(n, len(y))

    def prepare() -> Run:
        Xp, yp = X[:n], y[:n].tolist()
        sparse = sp.issparse(Xp)

        def run() -> float:
            W = np.zeros((N_CLASSES, N_FEATURES))
            U = np.random.default_rng(seed).random((n, 2)).tolist()
            mistakes = 0
            for t in range(n):
                if sparse:
                    cols = Xp.indices[Xp.indptr[t] : Xp.indptr[t + 1]]
                    vals = Xp.data[Xp.indptr[t] : Xp.indptr[t + 1]]
                    s = W[:, cols] @ vals
                else:
                    cols, vals = slice(None), Xp[t]
                    s = W @ vals
                ties = np.flatnonzero(s == s.max())
                g = int(ties[min(int(U[t][1] * ties.size), ties.size - 1)])
                p = np.full(N_CLASSES, GAMMA / N_CLASSES)
                p[g] += 1.0 - GAMMA
                a = int(np.searchsorted(np.cumsum(p), U[t][0], "right"))
                a = min(a, N_CLASSES - 1)
                mistakes += a != yp[t]
                W[g, cols] -= vals
                if a == yp[t]:
                    W[a, cols] += vals / p[a]
            return mistakes / n

        return run

    return Case(f"NumPy per-row Banditron loop [first {n} rows]", n, prepare)


def _vw_lines(X: Any, y: np.ndarray, block: int = 4096) -> list[str]:
    """One VW line ``label | f<idx>:val ...`` per row (its non-zeros), labels 1..k.

    Named features, hashed by VW: bare integer names are not hashed and collide
    across cbify's actions (see ``skbandit.experiments._learners._vw_line``).
    """
    fmt, lines = "f{}:{!r}".format, []
    for lo in range(0, len(y), block):
        Xb = sp.csr_matrix(X[lo : lo + block])
        ptr, idx, val = Xb.indptr.tolist(), Xb.indices.tolist(), Xb.data.tolist()
        for t, label in enumerate((y[lo : lo + block] + 1).tolist()):
            row = slice(ptr[t], ptr[t + 1])
            lines.append(f"{label} | " + " ".join(map(fmt, idx[row], val[row])))
    return lines


def vw_cases(X: Any, y: np.ndarray, seed: int, n: int) -> list[Case]:
    n = min(n, len(y))
    name = f"VW --cbify {N_CLASSES} --epsilon {GAMMA}"
    try:
        from vowpalwabbit import Workspace
    except ImportError:
        return [Case(name, n, None, "not installed")]
    args = f"--cbify {N_CLASSES} --epsilon {GAMMA} --quiet --random_seed {seed}"

    def learn(lines: list[str]) -> float:
        vw = Workspace(args)
        for line in lines:
            vw.learn(line)
        error = vw.get_sum_loss() / max(vw.get_weighted_examples(), 1.0)
        vw.finish()
        return error

    def build_and_learn() -> Run:
        Xp, yp = X[:n], y[:n]  # a CSR slice is a copy: made here, untimed
        return lambda: learn(_vw_lines(Xp, yp))

    def learn_only() -> Run:
        lines = _vw_lines(X[:n], y[:n])
        return lambda: learn(lines)

    return [
        Case(f"{name} (build lines + learn)", n, build_and_learn),
        Case(f"{name} (learn only)", n, learn_only),
    ]


def all_cases(
    learners: Sequence[tuple[str, Factory]], X: Any, y: np.ndarray, args: Any
) -> list[Case]:
    """The rows of one input: scikit-learn first (the reference), then the rest."""
    cases = [sklearn_case(X, y, args.seed, args.chunk_size)]
    for name, factory in learners:
        for chunk in (None, args.chunk_size):
            cases.append(skbandit_case(name, factory, X, y, args.seed, chunk))
    cases.append(numpy_case(X, y, args.seed, args.numpy_rounds))
    return cases + vw_cases(X, y, args.seed, args.vw_rounds)


# ------------------------------------------------------------------ measuring
def _peak_rss_mib() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def reset_rss_counter() -> bool:
    """Collect garbage, trim the allocator and reset the kernel's peak-RSS
    counter (Linux ``/proc/self/clear_refs``); False where that is not
    available."""
    gc.collect()
    try:
        ctypes.CDLL(None).malloc_trim(0)
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except (AttributeError, OSError):  # not Linux
        return False
    return True


def _reset_peak_rss() -> float | None:
    """Trim the allocator and reset the peak-RSS counter: the RSS in MiB, or None."""
    return _peak_rss_mib() if reset_rss_counter() else None


def measure(case: Case, repeat: int) -> dict[str, Any]:
    """Best-of-``repeat`` seconds, peak-RSS growth and online error of one row."""
    try:
        run = case.prepare()
        rss0 = _reset_peak_rss()
        seconds = float("inf")
        for _ in range(repeat):
            t0 = time.perf_counter()
            error = run()
            seconds = min(seconds, time.perf_counter() - t0)
        peak = None if rss0 is None else _peak_rss_mib() - rss0
        return {"seconds": seconds, "peak_mib": peak, "online_error": error}
    except Exception as exc:  # report it, keep the other rows
        traceback.print_exc()
        return {"failed": f"{type(exc).__name__}: {exc}"}


def measure_isolated(case: Case, repeat: int) -> dict[str, Any]:
    """``measure`` in a forked child process."""
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=lambda: send.send(measure(case, repeat)))
    proc.start()
    send.close()
    try:
        out = recv.recv()
    except EOFError:  # the child died (e.g. a segfault)
        out = None
    proc.join()
    return out or {"failed": f"child process died (exit code {proc.exitcode})"}


# ---------------------------------------------------------------------- table
@dataclass
class Result:
    learner: str
    input: str
    rounds: int
    status: str = "ok"
    seconds: float | None = None
    rounds_per_s: float | None = None
    x_sklearn: float | None = None
    peak_mib: float | None = None
    online_error: float | None = None


HEADER = "input|rounds|seconds|rounds/s|x sklearn|peak MiB|online err".split("|")
WIDTHS = (5, 9, 8, 10, 9, 8, 10)


def _line(name: str, width: int, cells: Sequence[str]) -> str:
    out = [name.ljust(width), cells[0].ljust(WIDTHS[0])]
    out += [c.rjust(w) for c, w in zip(cells[1:], WIDTHS[1:], strict=False)]
    return "  ".join(out)


def format_row(r: Result, width: int) -> str:
    if r.status != "ok":
        return _line(r.learner, width, [r.input, f"{r.rounds:,}", r.status])

    def f(v: float | None, spec: str) -> str:
        return "-" if v is None else format(v, spec)

    star = "*" if r.learner.startswith(SKLEARN) else ""
    cells = [r.input, f"{r.rounds:,}", f(r.seconds, ".3f"), f(r.rounds_per_s, ",.0f")]
    cells += [f(r.x_sklearn, ".2f"), f(r.peak_mib, ".1f")]
    return _line(r.learner, width, cells + [f(r.online_error, ".4f") + star])


def make_input(
    kind: str, n: int, seed: int = 0
) -> tuple[np.ndarray | sp.csr_matrix, np.ndarray]:
    """``make_stream`` as the input ``kind``: ``"csr"``, ``"dense"`` (the dense
    array) or ``"dense-full"`` (the dense array with its zeros replaced by small
    Gaussian values, so the compaction of dense rows cannot skip anything)."""
    X, y = make_stream(n, seed, dense=kind != "csr")
    if kind == "dense-full":
        zero = X == 0.0
        X[zero] = 0.01 * np.random.default_rng(seed + 1).standard_normal(
            np.count_nonzero(zero)
        )
    return X, y


def play_input(kind: str, learners: Sequence, args: argparse.Namespace) -> list:
    """Generate one input, measure every row on it, print each as it comes."""
    n = args.n_rounds if kind == "csr" else args.dense_rounds
    t0 = time.perf_counter()
    X, y = make_input(kind, n, args.seed)
    print(
        f"\n{kind} input, {n:,} rounds, generated in {time.perf_counter() - t0:.1f} s"
    )
    cases = all_cases(learners, X, y, args)
    width = max(len(c.name) for c in cases)
    print(_line("learner", width, HEADER))
    print("  ".join("-" * w for w in (width, *WIDTHS)), flush=True)
    results, ref = [], None
    for case in cases:
        r = Result(case.name, kind, case.rounds, case.status)
        if case.prepare is not None:
            out = (measure_isolated if args.isolate else measure)(case, args.repeat)
            if "failed" in out:
                r.status = "FAILED " + out["failed"]
            else:
                r.seconds, r.peak_mib = out["seconds"], out["peak_mib"]
                r.online_error = out["online_error"]
                r.rounds_per_s = case.rounds / max(r.seconds, 1e-9)
                if case.name.startswith(SKLEARN):
                    ref = r.rounds_per_s
                r.x_sklearn = ref and r.rounds_per_s / ref
        results.append(r)
        print(format_row(r, width), flush=True)
    return results


# ----------------------------------------------------------------------- main
class _Formatter(
    argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter
):
    """Description as written; "(default: ...)" only where it is a plain value."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None or isinstance(action.default, bool):
            return action.help
        return super()._get_help_string(action)


def parse_args(argv: Sequence[str] | None, description: str) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=description, formatter_class=_Formatter)
    add = p.add_argument
    add(
        "--full",
        action="store_true",
        help="the long run, 1,000,000 rounds (minutes, ~3.5 GiB)",
    )
    for option, text in [
        (
            "--n-rounds",
            "rounds of the CSR input (default: 200000, or 1000000 with --full)",
        ),
        (
            "--dense-rounds",
            "rounds of the dense input, the first rows of the same "
            "stream (default: N // 2, i.e. 100000; or N, i.e. 1000000, with --full)",
        ),
        (
            "--numpy-rounds",
            "rounds of the per-row NumPy loop, at most those of an "
            "input (default: N // 50, i.e. 4000, or 20000 with --full)",
        ),
        (
            "--vw-rounds",
            "rounds of Vowpal Wabbit, at most those of an input "
            "(default: N // 10, i.e. 20000, or 100000 with --full)",
        ),
    ]:
        add(option, type=int, metavar="N", help=text)
    add("--repeat", type=int, default=3, help="timed passes, the best is kept")
    add("--chunk-size", type=int, default=1000, help="rows per partial_fit call")
    add("--seed", type=int, default=0, help="seed of the stream and of each learner")
    add(
        "--inputs",
        nargs="+",
        choices=("dense", "dense-full", "csr"),
        default=["dense", "dense-full", "csr"],
        help="inputs to play, in this order: 'dense' is the stream as a dense "
        "array (about 12%% of its entries are non-zero), 'dense-full' the same "
        "rows with every zero entry replaced by N(0, 0.01^2) noise",
    )
    add(
        "--no-isolate",
        dest="isolate",
        action="store_false",
        help="run every row in this process instead of a forked child",
    )
    add("--json", metavar="PATH", help="also write the results there as JSON")
    a = p.parse_args(argv)
    if a.n_rounds is None:
        a.n_rounds = 1_000_000 if a.full else 200_000
    n = a.n_rounds
    for key, default in [
        ("dense_rounds", n if a.full else n // 2),
        ("numpy_rounds", n // 50),
        ("vw_rounds", n // 10),
    ]:
        if getattr(a, key) is None:
            setattr(a, key, max(1, default))
    sizes = (a.n_rounds, a.dense_rounds, a.numpy_rounds, a.vw_rounds, a.repeat)
    if min(*sizes, a.chunk_size) < 1:
        p.error("counts and sizes must be positive")
    a.isolate = a.isolate and "fork" in multiprocessing.get_all_start_methods()
    return a


def machine_info() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(ln for ln in f if ln.startswith("model name")).split(":")[1]
    except (OSError, StopIteration):
        pass
    versions = {}
    for dist in (
        "python",
        "numpy",
        "scipy",
        "scikit-learn",
        "skbandit",
        "vowpalwabbit",
    ):
        try:
            v = platform.python_version() if dist == "python" else None
            versions[dist] = v or metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = None
    return {"cpu": cpu.strip(), "cpu_count": os.cpu_count(), "versions": versions}


def main(
    learners: Sequence[tuple[str, Factory]],
    argv: Sequence[str] | None = None,
    description: str | None = None,
) -> int:
    """Benchmark ``learners`` (``(name, factory)`` pairs) beside the peers.

    Returns the exit code: 1 if a row failed, else 0.
    """
    args = parse_args(argv, description or __doc__)
    info = machine_info()
    print(f"CPU: {info['cpu']} (cpu_count={info['cpu_count']})")
    print(
        "  ".join(f"{k} {v or '(not installed)'}" for k, v in info["versions"].items())
    )
    print(
        f"SynSep-like stream d={N_FEATURES} k={N_CLASSES} seed={args.seed}; best of "
        f"{args.repeat}; chunks of {args.chunk_size}; isolate={args.isolate}",
        flush=True,
    )
    # Each row starts with a full collection (reset_rss_counter); what exists
    # now (modules, streams) is never garbage, so it is collected once and
    # frozen out of those collections, which then scan only what the rows
    # made (a scan of everything, the imports' objects too, was most of the
    # time of a short run)
    gc.collect()
    gc.freeze()
    try:
        results = [r for kind in args.inputs for r in play_input(kind, learners, args)]
    finally:
        gc.unfreeze()
    print(
        "\nseconds: best of --repeat; x sklearn: rounds/s over the sklearn row's; "
        "peak MiB: peak-RSS growth during the timed passes;\nonline err: mistakes / "
        "rounds (VW: average cbify loss; *: progressive error per chunk, untimed)."
    )
    if args.json:
        with open(args.json, "w") as f:
            report = {"machine": info, "args": vars(args), "results": results}
            json.dump(report, f, indent=2, default=asdict)
        print(f"wrote {args.json}")
    return int(any(r.status.startswith("FAILED") for r in results))
