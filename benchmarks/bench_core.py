"""Throughput and peak-memory benchmark of the core skbandit learners.

What is measured
----------------
One seeded SynSep-like stream (Kakade et al. 2008: ``d = 400`` features, ``k = 9``
classes, coordinates 0-119 "rare", 120-399 "common"; each class has a fixed binary
vector whose rare coordinates are on with probability 1/4; an example copies the
vector of a uniformly drawn class, switches off 5 of its active bits and switches on
20 random common coordinates, about 45 non-zeros per row) is generated once with
NumPy and played, in the same order, by every learner:

* ``skbandit.Banditron(gamma=0.05)`` and ``skbandit.MulticlassPerceptron`` through
  ``partial_fit``: one call over the whole stream (``classes`` given) and, separately,
  consecutive chunks of ``--chunk-size`` rows;
* scikit-learn's ``Perceptron.partial_fit`` on the same chunks (full information,
  the reference of the ``x sklearn`` column);
* a per-row pure-NumPy Banditron loop, on the first ``--numpy-rounds`` rows only;
* Vowpal Wabbit ``--cbify 9 --epsilon 0.05`` through its Python API (one text line
  ``label | idx:val ...`` per row, labels 1..9), on the first ``--vw-rounds`` rows,
  when the ``vowpalwabbit`` package is importable. The "build+learn" row counts the
  building of the text lines; the "learn only" row counts only ``Workspace.learn``
  on the prebuilt lines (which includes VW's own text parsing).

Each learner runs on two inputs: the stream stored as a dense C-contiguous float64
array (``dense``) and as a CSR float64 matrix (``csr``).

Columns
-------
``seconds``
    Best (minimum) ``time.perf_counter`` wall time over ``--repeat`` passes, each from
    a fresh learner. Data generation, chunk slicing and learner construction (VW:
    ``Workspace`` creation) are outside the timed region.
``rounds/s``
    ``rounds / seconds``.
``x sklearn``
    ``rounds/s`` divided by that of ``sklearn Perceptron.partial_fit`` on the same
    input.
``tracemalloc MiB``
    Peak of ``tracemalloc`` during one extra, untimed pass. It sees Python objects and
    NumPy/SciPy array buffers allocated during the pass (NumPy reports its buffers to
    tracemalloc), not raw ``malloc`` inside compiled code (e.g. VW's C++ state).
``dRSS MiB``
    Growth of the process' peak resident set size (``resource.getrusage``
    ``ru_maxrss``) during the timed passes, over the RSS just before them: the extra
    memory the learner needed on top of the already generated input (input copies
    show up here). Before timing, the C allocator's free memory is returned to the
    system (``malloc_trim``) and the kernel's peak-RSS counter is reset
    (``/proc/self/clear_refs``, Linux). Each learner runs in a forked child process
    (``--no-isolate``: all in this process). Where the counter cannot be reset and
    the run is not isolated, the value is only a lower bound (marked ``>=``).
``online err``
    Played-action mistakes / rounds: ``n_mistakes_ / t_`` for skbandit, the same count
    for the NumPy loop, VW's average cbify loss. For scikit-learn (``*``) it is the
    chunk-wise progressive error: each chunk is predicted before ``partial_fit`` on it
    (computed in the untimed pass).

How to run
----------
From the repository root, with skbandit installed (``pip install -e .``)::

    python benchmarks/bench_core.py                       # full run, ~minutes
    python benchmarks/bench_core.py --n-rounds 20000 --repeat 1   # smoke run
    python benchmarks/bench_core.py --json results.json   # also save the results

``pip install vowpalwabbit`` adds the VW rows; without it they print "not installed".
The dense stream of the default 1,000,000 rounds takes 3.2 GB (plus ~0.6 GB CSR).
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import multiprocessing
import os
import platform
import sys
import time
import traceback
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

try:
    import resource
except ImportError:  # pragma: no cover - Windows
    resource = None

N_FEATURES = 400
N_CLASSES = 9
N_RARE = 120
GAMMA = 0.05
SKLEARN_NAME = "sklearn Perceptron.partial_fit"

RunFn = Callable[[bool], dict[str, Any]]


# --------------------------------------------------------------------------- data
def _synsep_blocks(
    n_samples: int,
    rng: np.random.Generator,
    *,
    n_features: int = N_FEATURES,
    n_classes: int = N_CLASSES,
    n_rare: int = N_RARE,
    p_rare: float = 0.25,
    n_off: int = 5,
    n_on: int = 20,
    block_size: int = 1 << 16,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Yield ``(X_block, y_block)`` of a SynSep-like stream, dense float64 blocks."""
    n_common = n_features - n_rare
    prototypes = (rng.random((n_classes, n_rare)) < p_rare).astype(np.float64)
    for start in range(0, n_samples, block_size):
        b = min(block_size, n_samples - start)
        y = rng.integers(n_classes, size=b)
        X = np.zeros((b, n_features))
        rare = prototypes[y]
        rows = np.arange(b)[:, None]
        # switch off n_off random active bits (all of them if fewer are active):
        # the n_off smallest keys, inactive coordinates pushed behind every active one
        keys = rng.random((b, n_rare))
        keys[rare == 0.0] = 2.0
        off = np.argpartition(keys, n_off - 1, axis=1)[:, :n_off]
        rare[rows, off] = 0.0  # inactive picks are already 0
        X[:, :n_rare] = rare
        # switch on n_on distinct random common coordinates
        keys = rng.random((b, n_common))
        on = np.argpartition(keys, n_on - 1, axis=1)[:, :n_on]
        X[rows, n_rare + on] = 1.0
        yield X, y


def make_stream(
    n_samples: int, seed: int
) -> tuple[np.ndarray, sp.csr_matrix, np.ndarray]:
    """Return the same SynSep-like stream as dense ``X``, CSR ``X`` and labels ``y``."""
    rng = np.random.default_rng(seed)
    X = np.empty((n_samples, N_FEATURES))
    y = np.empty(n_samples, dtype=np.int64)
    csr_blocks = []
    start = 0
    for Xb, yb in _synsep_blocks(n_samples, rng):
        stop = start + len(yb)
        X[start:stop] = Xb
        y[start:stop] = yb
        csr_blocks.append(sp.csr_matrix(Xb))
        start = stop
    X_csr = sp.vstack(csr_blocks, format="csr")
    X_csr.sort_indices()
    return X, X_csr, y


def _chunks(X: Any, y: np.ndarray, chunk_size: int) -> list[tuple[Any, np.ndarray]]:
    return [
        (X[i : i + chunk_size], y[i : i + chunk_size])
        for i in range(0, y.shape[0], chunk_size)
    ]


# ----------------------------------------------------------------------- learners
def _skbandit_one_call(name: str, X: Any, y: np.ndarray, seed: int) -> RunFn:
    import skbandit

    cls = getattr(skbandit, name)
    kwargs = {"gamma": GAMMA} if name == "Banditron" else {}
    classes = np.arange(N_CLASSES)

    def run(diagnostics: bool) -> dict[str, Any]:
        est = cls(random_state=seed, **kwargs)
        est.partial_fit(X, y, classes=classes)
        return {"error": est.n_mistakes_ / est.t_, "t": int(est.t_)}

    return run


def _skbandit_chunked(name: str, chunks: list, seed: int) -> RunFn:
    import skbandit

    cls = getattr(skbandit, name)
    kwargs = {"gamma": GAMMA} if name == "Banditron" else {}
    classes = np.arange(N_CLASSES)

    def run(diagnostics: bool) -> dict[str, Any]:
        est = cls(random_state=seed, **kwargs)
        for Xc, yc in chunks:
            est.partial_fit(Xc, yc, classes=classes)
        return {"error": est.n_mistakes_ / est.t_, "t": int(est.t_)}

    return run


def _sklearn_chunked(chunks: list, seed: int) -> RunFn:
    from sklearn.linear_model import Perceptron

    classes = np.arange(N_CLASSES)

    def run(diagnostics: bool) -> dict[str, Any]:
        est = Perceptron(random_state=seed)
        if not diagnostics:
            for Xc, yc in chunks:
                est.partial_fit(Xc, yc, classes=classes)
            return {}
        # untimed pass: chunk-wise progressive validation error
        # (the first chunk, seen by an unfitted model, is not scored)
        mistakes = 0
        n = 0
        for i, (Xc, yc) in enumerate(chunks):
            if i > 0:
                mistakes += int(np.count_nonzero(est.predict(Xc) != yc))
                n += yc.shape[0]
            est.partial_fit(Xc, yc, classes=classes)
        return {"error": mistakes / n if n else None, "error_note": "*"}

    return run


def _numpy_banditron(X: Any, y: np.ndarray, seed: int) -> RunFn:
    """Per-row Banditron in pure NumPy, the way a user would write the loop."""
    k = N_CLASSES
    d = X.shape[1]
    sparse = sp.issparse(X)
    if sparse:
        indptr, indices, data = X.indptr, X.indices, X.data
    y_list = y.tolist()

    def run(diagnostics: bool) -> dict[str, Any]:
        rng = np.random.default_rng(seed)
        W = np.zeros((k, d))
        n = len(y_list)
        U = rng.random((n, 2)).tolist()
        mistakes = 0
        for t in range(n):
            u1, u2 = U[t]
            if sparse:
                cols = indices[indptr[t] : indptr[t + 1]]
                vals = data[indptr[t] : indptr[t + 1]]
                s = W[:, cols] @ vals
            else:
                x = X[t]
                s = W @ x
            maxima = np.flatnonzero(s == s.max())
            g = int(maxima[min(int(u2 * maxima.size), maxima.size - 1)])
            p = np.full(k, GAMMA / k)
            p[g] += 1.0 - GAMMA
            a = min(int(np.searchsorted(np.cumsum(p), u1, "right")), k - 1)
            hit = a == y_list[t]
            mistakes += not hit
            if sparse:
                W[g, cols] -= vals
                if hit:
                    W[a, cols] += vals / p[a]
            else:
                W[g] -= x
                if hit:
                    W[a] += x / p[a]
        return {"error": mistakes / n}

    return run


def _vw_lines(X: Any, y: np.ndarray, block_size: int = 4096) -> list[str]:
    """One VW text line ``label | idx:val ...`` per row (its non-zeros), labels 1..k.

    Plain per-row string joining; dense rows go through CSR, block by block.
    """
    fmt = "{}:{!r}".format
    lines: list[str] = []
    for lo in range(0, y.shape[0], block_size):
        Xb = sp.csr_matrix(X[lo : lo + block_size])
        indptr = Xb.indptr.tolist()
        indices = Xb.indices.tolist()
        data = Xb.data.tolist()
        for t, label in enumerate((y[lo : lo + block_size] + 1).tolist()):
            a, b = indptr[t], indptr[t + 1]
            feats = " ".join(map(fmt, indices[a:b], data[a:b]))
            lines.append(f"{label} | {feats}")
    return lines


def _vw_cbify(X: Any, y: np.ndarray, seed: int) -> RunFn:
    from vowpalwabbit import Workspace

    args = f"--cbify {N_CLASSES} --epsilon {GAMMA} --quiet --random_seed {seed}"

    def run(diagnostics: bool) -> dict[str, Any]:
        vw = Workspace(args)
        t0 = time.perf_counter()
        lines = _vw_lines(X, y)
        t1 = time.perf_counter()
        for line in lines:
            vw.learn(line)
        t2 = time.perf_counter()
        error = vw.get_sum_loss() / max(vw.get_weighted_examples(), 1.0)
        vw.finish()
        return {"seconds": t2 - t0, "learn_seconds": t2 - t1, "error": error}

    return run


# ---------------------------------------------------------------------- measuring
@dataclass
class Result:
    learner: str
    input: str
    rounds: int
    seconds: float | None = None
    rounds_per_s: float | None = None
    ratio_sklearn: float | None = None
    tracemalloc_peak_mib: float | None = None
    maxrss_delta_mib: float | None = None
    online_error: float | None = None
    error_note: str = ""
    status: str = "ok"
    extra: dict[str, Any] = field(default_factory=dict)


def _maxrss_mib() -> float | None:
    if resource is None:
        return None
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / 2**20 if sys.platform == "darwin" else rss / 2**10  # B vs KiB


def _reset_peak_rss() -> bool:
    """Make the next peak-RSS reading start from the current RSS (Linux only).

    Frees what the C allocator keeps cached (``malloc_trim``), so that new
    allocations show up as new resident pages, and resets the kernel's peak-RSS
    counter, which ``getrusage`` reports, via ``/proc/self/clear_refs``.
    """
    gc.collect()
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (AttributeError, OSError):
        pass
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return True


def _measure(prepare: Callable[[], RunFn], repeat: int) -> dict[str, Any]:
    """Best-of-``repeat`` timing, then one untimed tracemalloc pass."""
    run = prepare()
    peak_reset = _reset_peak_rss()
    rss0 = _maxrss_mib()
    best = best_learn = float("inf")
    info: dict[str, Any] = {}
    for _ in range(repeat):
        t0 = time.perf_counter()
        info = run(False)
        wall = time.perf_counter() - t0
        best = min(best, info.get("seconds", wall))
        best_learn = min(best_learn, info.get("learn_seconds", float("inf")))
    rss1 = _maxrss_mib()
    tracemalloc.start()
    diag = run(True)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    info.update(diag)
    return {
        "seconds": best,
        "learn_seconds": best_learn if best_learn < float("inf") else None,
        "rss_delta": None if rss0 is None else rss1 - rss0,
        "rss_peak_reset": peak_reset,
        "peak": peak / 2**20,
        "error": info.get("error"),
        "error_note": info.get("error_note", ""),
    }


def _child(conn: Any, prepare: Callable[[], RunFn], repeat: int) -> None:
    try:
        out: Any = _measure(prepare, repeat)
    except Exception as exc:  # report, do not crash the whole benchmark
        out = {"failed": f"{type(exc).__name__}: {exc}", "tb": traceback.format_exc()}
    conn.send(out)
    conn.close()


def _measure_isolated(
    prepare: Callable[[], RunFn], repeat: int, isolate: bool
) -> dict[str, Any]:
    if not isolate:
        try:
            return _measure(prepare, repeat)
        except Exception as exc:
            return {
                "failed": f"{type(exc).__name__}: {exc}",
                "tb": traceback.format_exc(),
            }
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, prepare, repeat))
    proc.start()
    send.close()
    try:
        out = recv.recv()
    except EOFError:
        out = None
    proc.join()
    if out is None:
        return {"failed": f"child process died (exit code {proc.exitcode})"}
    return out


# ------------------------------------------------------------------------ driver
def _cases(
    X: Any, y: np.ndarray, args: argparse.Namespace, have: dict[str, str | None]
) -> list[tuple[str, int, Callable[[], RunFn] | None, str]]:
    """(learner label, rounds, prepare or None, status when skipped)."""
    n, seed, cs = y.shape[0], args.seed, args.chunk_size
    n_np, n_vw = min(args.numpy_rounds, n), min(args.vw_rounds, n)
    cases: list[tuple[str, int, Callable[[], RunFn] | None, str]] = []
    skb = have["skbandit"]
    for name in ("Banditron", "MulticlassPerceptron"):
        label = f"skbandit {name}"
        cases.append(
            (
                f"{label} partial_fit (1 call)",
                n,
                None
                if skb
                else (lambda name=name: _skbandit_one_call(name, X, y, seed)),
                skb or "",
            )
        )
        cases.append(
            (
                f"{label} partial_fit ({cs}-row chunks)",
                n,
                None
                if skb
                else (
                    lambda name=name: _skbandit_chunked(name, _chunks(X, y, cs), seed)
                ),
                skb or "",
            )
        )
    cases.append(
        (
            f"{SKLEARN_NAME} ({cs}-row chunks, full info)",
            n,
            lambda: _sklearn_chunked(_chunks(X, y, cs), seed),
            "",
        )
    )
    cases.append(
        (
            f"NumPy per-row Banditron loop [first {n_np} rows only]",
            n_np,
            lambda: _numpy_banditron(X[:n_np], y[:n_np], seed),
            "",
        )
    )
    vw = have["vowpalwabbit"]
    cases.append(
        (
            f"VW --cbify {N_CLASSES} --epsilon {GAMMA} (build str + learn)",
            n_vw,
            None if vw else (lambda: _vw_cbify(X[:n_vw], y[:n_vw], seed)),
            vw or "",
        )
    )
    return cases


def _availability() -> dict[str, str | None]:
    """None when importable, else the reason it is skipped."""
    have: dict[str, str | None] = {}
    try:
        import skbandit  # noqa: F401
    except Exception as exc:
        have["skbandit"] = f"import failed: {type(exc).__name__}: {exc}"
    else:
        have["skbandit"] = None
    try:
        import vowpalwabbit  # noqa: F401
    except ImportError:
        have["vowpalwabbit"] = "not installed"
    else:
        have["vowpalwabbit"] = None
    return have


def machine_info() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    versions = {}
    for mod in ("numpy", "scipy", "sklearn", "skbandit", "vowpalwabbit"):
        try:
            m = __import__(mod)
            versions[mod] = getattr(m, "__version__", "?")
        except Exception:
            versions[mod] = None
    try:
        from importlib.metadata import version

        versions["vowpalwabbit"] = versions["vowpalwabbit"] and version("vowpalwabbit")
    except Exception:
        pass
    affinity = (
        len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    )
    return {
        "cpu": cpu,
        "cpu_count": os.cpu_count(),
        "usable_cpus": affinity,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "versions": versions,
    }


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def print_table(results: list[Result]) -> None:
    header = [
        "learner",
        "input",
        "rounds",
        "seconds",
        "rounds/s",
        "x sklearn",
        "tracemalloc MiB",
        "dRSS MiB",
        "online err",
    ]
    rows = []
    for r in results:
        if r.status != "ok":
            rows.append([r.learner, r.input, str(r.rounds), r.status])
            continue
        err = _fmt(r.online_error, ".4f") + r.error_note
        rows.append(
            [
                r.learner,
                r.input,
                str(r.rounds),
                _fmt(r.seconds, ".3f"),
                _fmt(r.rounds_per_s, ",.0f"),
                _fmt(r.ratio_sklearn, ".2f"),
                _fmt(r.tracemalloc_peak_mib, ".1f"),
                (">=" if r.extra.get("rss_lower_bound") else "")
                + _fmt(r.maxrss_delta_mib, ".1f"),
                err,
            ]
        )
    widths = [len(h) for h in header]
    for row in rows:
        if len(row) == len(header):
            widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]
        else:
            widths[:3] = [max(w, len(c)) for w, c in zip(widths[:3], row, strict=False)]

    def line(cells: list[str]) -> str:
        out = [cells[0].ljust(widths[0]), cells[1].ljust(widths[1])]
        out += [c.rjust(w) for c, w in zip(cells[2:], widths[2:], strict=False)]
        return "  ".join(out)

    print(line(header))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        if len(row) == len(header):
            print(line(row))
        else:  # skipped or failed
            print(line(row[:3]) + "  " + row[3])


def run_benchmark(args: argparse.Namespace) -> dict[str, Any]:
    info = machine_info()
    have = _availability()
    print(f"CPU: {info['cpu']}  (cpu_count={info['cpu_count']}, ", end="")
    print(f"usable={info['usable_cpus']})")
    print(
        f"Python {info['python']}  "
        + "  ".join(
            f"{k} {v if v is not None else '(not installed)'}"
            for k, v in info["versions"].items()
        )
    )
    print(
        f"Stream: SynSep-like d={N_FEATURES} k={N_CLASSES}, seed={args.seed}; "
        f"n_rounds={args.n_rounds}, best of {args.repeat}, chunk={args.chunk_size}, "
        f"isolate={args.isolate}"
    )
    t0 = time.perf_counter()
    X_dense, X_csr, y = make_stream(args.n_rounds, args.seed)
    print(
        f"generated in {time.perf_counter() - t0:.1f} s: dense "
        f"{X_dense.nbytes / 2**20:.0f} MiB, CSR nnz/row "
        f"{X_csr.nnz / y.shape[0]:.1f} "
        f"({(X_csr.data.nbytes + X_csr.indices.nbytes) / 2**20:.0f} MiB)\n",
        flush=True,
    )
    inputs = {"dense": X_dense, "csr": X_csr}
    results: list[Result] = []
    for input_name in args.inputs:
        X = inputs[input_name]
        for label, rounds, prepare, skipped in _cases(X, y, args, have):
            res = Result(label, input_name, rounds)
            results.append(res)
            if prepare is None:
                res.status = skipped
                continue
            if args.verbose:
                print(f"  running {label} [{input_name}] ...", flush=True)
            out = _measure_isolated(prepare, args.repeat, args.isolate)
            if "failed" in out:
                res.status = "FAILED " + out["failed"]
                if args.verbose and "tb" in out:
                    print(out["tb"], file=sys.stderr)
                continue
            res.seconds = out["seconds"]
            res.rounds_per_s = rounds / out["seconds"]
            res.tracemalloc_peak_mib = out["peak"]
            res.maxrss_delta_mib = out["rss_delta"]
            res.extra["rss_lower_bound"] = not (args.isolate or out["rss_peak_reset"])
            res.online_error = out["error"]
            res.error_note = out["error_note"]
            if out["learn_seconds"] is not None:
                results.append(
                    Result(
                        label.replace("build str + learn", "learn only"),
                        input_name,
                        rounds,
                        seconds=out["learn_seconds"],
                        rounds_per_s=rounds / out["learn_seconds"],
                        online_error=out["error"],
                    )
                )
        ref = next(
            (
                r
                for r in results
                if r.input == input_name
                and r.learner.startswith(SKLEARN_NAME)
                and r.rounds_per_s
            ),
            None,
        )
        for r in results:
            if r.input == input_name and ref is not None and r.rounds_per_s:
                r.ratio_sklearn = r.rounds_per_s / ref.rounds_per_s
    print_table(results)
    print(
        "\nseconds: best of --repeat (time.perf_counter); x sklearn: rounds/s over "
        f"{SKLEARN_NAME} on the same input.\n"
        "tracemalloc MiB: tracemalloc peak of Python/NumPy allocations in one untimed "
        "pass (not raw malloc in compiled code).\n"
        "dRSS MiB: growth of the peak RSS (getrusage ru_maxrss) during the timed "
        "passes over the RSS before them, on top of the input (allocator trimmed, "
        "peak counter reset"
        + (", each learner in a forked child)." if args.isolate else ").")
        + "\nonline err: played-action mistakes / rounds (VW: average cbify loss); "
        f"* = sklearn progressive error per {args.chunk_size}-row chunk.\n"
        "VW 'learn only' excludes building the text lines (it includes VW's parsing);"
        " memory columns are those of the build+learn row."
    )
    return {
        "machine": info,
        "args": vars(args),
        "results": [asdict(r) for r in results],
    }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument(
        "--n-rounds",
        type=int,
        default=1_000_000,
        help="rounds for skbandit and scikit-learn",
    )
    parser.add_argument(
        "--vw-rounds",
        type=int,
        default=None,
        help="rounds for Vowpal Wabbit, capped at --n-rounds "
        "(default: n_rounds // 5, i.e. 200,000 for 1,000,000)",
    )
    parser.add_argument(
        "--numpy-rounds",
        type=int,
        default=None,
        help="rounds for the per-row NumPy loop, capped at --n-rounds "
        "(default: n_rounds // 50, i.e. 20,000 for 1,000,000)",
    )
    parser.add_argument("--repeat", type=int, default=3, help="timed passes, best kept")
    parser.add_argument(
        "--chunk-size",
        type=int,
        default=1000,
        help="rows per partial_fit call in the chunked rows",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the stream and of every learner"
    )
    parser.add_argument(
        "--inputs",
        nargs="+",
        choices=("dense", "csr"),
        default=["dense", "csr"],
        help="input formats to run",
    )
    parser.add_argument(
        "--no-isolate",
        dest="isolate",
        action="store_false",
        help="run every learner in this process (no fork)",
    )
    parser.add_argument("--json", metavar="PATH", help="also write results as JSON")
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="print progress and tracebacks of failures",
    )
    args = parser.parse_args(argv)
    if args.vw_rounds is None:
        args.vw_rounds = max(1, args.n_rounds // 5)
    if args.numpy_rounds is None:
        args.numpy_rounds = max(1, args.n_rounds // 50)
    counts = (args.n_rounds, args.vw_rounds, args.numpy_rounds, args.repeat)
    if min(*counts, args.chunk_size) < 1:
        parser.error("counts must be positive")
    if "fork" not in multiprocessing.get_all_start_methods():
        args.isolate = False
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    report = run_benchmark(args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
