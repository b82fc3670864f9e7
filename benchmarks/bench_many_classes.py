"""Per-round time with many classes: every learner at k = 1,000, 4,000 and 10,000.

The documented cost of a round is O(k nnz(x) + k): the scores, then one
distribution over the k classes. A fresh learner's scores tie (every untouched
class scores 0), so the policy's marginal propensity averages the distributions
of the m tied greedy labels; computed one distribution per tied label that was
O(m k) = O(k^2) per round (issue 31, item 2). This script measures it.

What is measured
----------------
Rows of ``--features`` (64) dense standard-normal features, labels uniform over
the k classes, seeded. For each k and each learner at its defaults
(``random_state`` aside; every public estimator of ``skbandit.__all__`` that
has ``partial_fit``):

* ``fresh``: a new learner primed by ``partial_fit`` on one row (which allocates
  its model: not timed), then ``partial_fit`` on ``--rounds`` more rows, timed
  (CPU time, ``time.process_time``, as the machine may be shared; best of
  ``--repeat`` passes, each from a new learner).
  Most classes are untouched, so the scores tie on most rounds: the ``tied``
  column is the share of the timed rows whose top score is tied, from the
  learner's scores before the timed call.
* ``warm``: a learner that first learnt a log of k rows in which row i played
  class i with propensity 1/k and reward i mod 2 (``LoggedFeedback``;
  full-information learners learn the labels i instead), so every class's
  model was updated and the scores no longer tie (the ``tied`` column says
  so); then timed as above.

At the largest k the warm state is measured only for the learners of
``--warm-at-largest`` (``SquareCB`` and ``Banditron``: the rounds/s target);
the others' warm-up of k rounds takes minutes each there ("-" in the table).

``SOBA(covariance="full")`` is not run: its inverse has (k d)^2 entries, 3.3 TB
at k = 10,000, d = 64 (``max_memory`` refuses it); ``SOBA`` runs at its default
``covariance="diag"``.

Vowpal Wabbit ``--cbify k --epsilon 0.05`` (its Python API, ``vowpalwabbit``),
when installed, learns the same rows as text lines ``label | f<j>:<x_j> ...``
built beforehand (VW's parsing is counted; building the lines is not): fresh,
timed over the ``--rounds`` rows after one priming line.

Columns: ms/round (the best pass's seconds / rounds, in milliseconds),
rounds/s, and for k > the smallest k the ratio of the per-round time to the
smallest k's (the target of issue 31: k = 4,000 at most 4.5x k = 1,000).
``--markdown`` prints the table as Markdown (docs/performance.md);
``--json`` writes the rows and the machine.

Instructions, not only time
---------------------------
A round reads the whole model (k scores of d features each), so once the model
outgrows the caches a round is also waiting on memory: with d = 64, k = 1,000
classes of float64 weights are 0.5 MiB (one core's L2 cache on the machine of
``docs/results/many-classes``), k = 4,000 are 2 MiB, and a learner with several
such arrays (``OnlineSelector``'s four candidates, ``BanditPipeline``'s 1,000
random features) leaves the last-level cache. The time ratio then exceeds
the ratio of the work. ``--instructions`` separates the two: each learner's
timed call (the fresh state) runs again in a child process under Valgrind's
callgrind, counting only the instructions of that call (the client-request
helper of ``count_instructions.py``), and the table gains the instruction
ratio (``Ir x``: O(k) work gives 4 at k = 4,000, an O(k^2) round 16) and the
model's size (``_model_bytes``). Instruction counts do not depend on the
machine's load or caches; each child takes seconds to a few minutes.

    python benchmarks/bench_many_classes.py --markdown \
        --json docs/results/many-classes/results.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from collections.abc import Sequence

import numpy as np

import skbandit
from skbandit import LoggedFeedback

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _harness import machine_info  # noqa: E402


def learners() -> list[tuple[str, type]]:
    """Every public estimator with ``partial_fit``, as ``bench_memory`` lists them."""
    out = []
    for name in skbandit.__all__:
        obj = getattr(skbandit, name)
        if isinstance(obj, type) and hasattr(obj, "partial_fit"):
            out.append((name, obj))
    return out


def make_rows(n: int, d: int, k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d)), rng.integers(0, k, size=n)


def _tied_share(est, X: np.ndarray) -> float:
    s = est.decision_function(X)
    if s.ndim == 1:  # two classes
        return float(np.mean(s == 0.0))
    return float(np.mean((s == s.max(axis=1, keepdims=True)).sum(axis=1) > 1))


def _prepared(cls, k: int, d: int, warm: bool, seed: int):
    """A learner fitted on one row (fresh) or on the log of k rows (warm)."""
    est = cls(random_state=seed)
    classes = np.arange(k)
    X0, _ = make_rows(k if warm else 1, d, k, seed + 1)
    if not warm:
        est.partial_fit(X0, np.zeros(1, dtype=int), classes=classes)
        return est
    # every class played once, every other one rewarded (a reward-1-only log
    # leaves some learners' scores tied: a regression on constant targets, a
    # PA step on a margin already met)
    actions = classes
    log = LoggedFeedback(actions, (actions % 2).astype(float), np.full(k, 1.0 / k))
    try:
        est.partial_fit(X0, log, classes=classes)
    except TypeError:  # a full-information learner: the labels instead
        est = cls(random_state=seed).partial_fit(X0, actions, classes=classes)
    return est


def time_learner(cls, k: int, d: int, n: int, warm: bool, repeat: int, seed: int):
    X, y = make_rows(n, d, k, seed)
    best, tied = np.inf, 0.0
    for _ in range(repeat):
        est = _prepared(cls, k, d, warm, seed)
        tied = _tied_share(est, X)
        t0 = time.process_time()
        est.partial_fit(X, y)
        best = min(best, time.process_time() - t0)
    return best, tied


def time_vw(k: int, d: int, n: int, repeat: int, seed: int):
    try:
        from vowpalwabbit import Workspace
    except ImportError:
        return None
    X, y = make_rows(n + 1, d, k, seed)
    lines = [
        f"{label + 1} | " + " ".join(f"f{j}:{v!r}" for j, v in enumerate(row))
        for row, label in zip(X.tolist(), y.tolist(), strict=True)
    ]
    best = np.inf
    for _ in range(repeat):
        vw = Workspace(f"--cbify {k} --epsilon 0.05 --quiet --random_seed {seed}")
        vw.learn(lines[0])
        t0 = time.process_time()
        for line in lines[1:]:
            vw.learn(line)
        best = min(best, time.process_time() - t0)
        vw.finish()
    return best


def count_child(args: argparse.Namespace) -> int:
    """Under callgrind: the fresh learner's timed call, in one measured region."""
    import ctypes
    import os

    cg = ctypes.CDLL(os.environ["SKBANDIT_CG_HELPER"])
    cg.cg_end.argtypes = [ctypes.c_char_p]
    if not cg.cg_running():
        sys.exit("bench_many_classes.py --count-child: not running under valgrind")
    cls = dict(learners())[args.learners[0]]
    k = args.classes[0]
    X, y = make_rows(args.rounds, args.features, k, args.seed)
    est = _prepared(cls, k, args.features, False, args.seed)
    cg.cg_begin()
    cg.cg_end(b"noop")
    cg.cg_begin()
    est.partial_fit(X, y)
    cg.cg_end(b"n rows")
    print(json.dumps({"model_bytes": int(est._model_bytes())}))
    return 0


def count_instructions(name: str, k: int, args: argparse.Namespace, helper) -> dict:
    """Instructions of the fresh learner's timed call (``count_child``)."""
    import os
    import subprocess
    import tempfile
    from pathlib import Path

    from count_instructions import read_dumps

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cg"
        env = dict(os.environ, SKBANDIT_CG_HELPER=str(helper), PYTHONHASHSEED="0",
                   OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")  # fmt: skip
        cmd = [
            "valgrind", "--tool=callgrind", "--instr-atstart=no",
            "--collect-atstart=no", f"--callgrind-out-file={out}", sys.executable,
            str(Path(__file__).resolve()), "--count-child", "--learners", name,
            "--classes", str(k), "--features", str(args.features),
            "--rounds", str(args.rounds), "--seed", str(args.seed),
        ]  # fmt: skip
        done = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"bench_many_classes.py: the callgrind child of {name} at "
                     f"k={k} failed:\n{done.stderr[-3000:]}")  # fmt: skip
        info = json.loads(done.stdout.strip().splitlines()[-1])
        dumps = read_dumps(out)
    ir = dumps["n rows"][0] - dumps["noop"][0]
    return {"ir_per_round": ir / args.rounds, "model_bytes": info["model_bytes"]}


def run(args: argparse.Namespace) -> list[dict]:
    rows = []
    names = dict(learners())
    chosen = args.learners or list(names)
    helper = None
    if args.instructions:
        import tempfile
        from pathlib import Path

        from count_instructions import build_helper

        helper = build_helper(Path(tempfile.mkdtemp(prefix="skbandit-cg-")))
    for k in args.classes:
        for name in chosen:
            warm = k < max(args.classes) or name in args.warm_at_largest
            for state in ("fresh", "warm") if warm else ("fresh",):
                seconds, tied = time_learner(
                    names[name], k, args.features, args.rounds, state == "warm",
                    args.repeat, args.seed,
                )  # fmt: skip
                rows.append(
                    {"learner": name, "state": state, "k": k, "seconds": seconds,
                     "rounds": args.rounds, "tied": tied}
                )  # fmt: skip
                if helper is not None and state == "fresh":
                    rows[-1].update(count_instructions(name, k, args, helper))
                print(_fmt(rows[-1]), flush=True)
                _save(args, rows)
        if not args.no_vw:
            seconds = time_vw(k, args.features, args.rounds, args.repeat, args.seed)
            rows.append(
                {"learner": f"VW --cbify {k} --epsilon 0.05", "state": "fresh",
                 "k": k, "seconds": seconds, "rounds": args.rounds, "tied": None}
            )  # fmt: skip
            print(_fmt(rows[-1]), flush=True)
            _save(args, rows)
    return rows


def _save(args: argparse.Namespace, rows: list[dict]) -> None:
    """Write the rows so far (a long run interrupted keeps what it measured)."""
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {"machine": machine_info(), "args": vars(args), "rows": rows},
                f,
                indent=1,
            )


def _fmt(r: dict) -> str:
    if r["seconds"] is None:
        return f"{r['learner']:<34} {r['state']:<6} k={r['k']:<6} not installed"
    ms = 1e3 * r["seconds"] / r["rounds"]
    tied = "" if r["tied"] is None else f" tied {100 * r['tied']:5.1f}%"
    ir = ""
    if "ir_per_round" in r:
        ir = (f" {r['ir_per_round']:12,.0f} Ir/round"
              f" model {r['model_bytes'] / 2**20:8.2f} MiB")  # fmt: skip
    return (
        f"{r['learner']:<34} {r['state']:<6} k={r['k']:<6} {ms:9.3f} ms/round "
        f"{r['rounds'] / r['seconds']:10.0f} rounds/s{tied}{ir}"
    )


def table(rows: list[dict], classes: Sequence[int]) -> str:
    """Markdown: one line per learner and state, ms/round per k, the ratios."""
    k0 = classes[0]
    head = ["learner", "scores"] + [f"k = {k:,} ms/round" for k in classes]
    head += [f"x k = {k0:,} at {k:,}" for k in classes[1:]]
    head += [f"rounds/s at k = {classes[-1]:,}"]
    lines = [
        "| " + " | ".join(head) + " |",
        "|" + "---|" * 2 + "---:|" * (len(head) - 2),
    ]
    counted = any("ir_per_round" in r for r in rows)
    if counted:
        head += [f"Ir x at {k:,}" for k in classes[1:]]
        head += [f"model MiB at {k:,}" for k in classes]
        lines[0] = "| " + " | ".join(head) + " |"
        lines[1] = "|" + "---|" * 2 + "---:|" * (len(head) - 2)
    keys = dict.fromkeys((r["learner"].split(" --cbify")[0], r["state"]) for r in rows)
    for learner, state in keys:
        ms, ir, mib = {}, {}, {}
        for r in rows:
            if r["learner"].split(" --cbify")[0] == learner and r["state"] == state:
                ms[r["k"]] = (
                    None if r["seconds"] is None else 1e3 * r["seconds"] / r["rounds"]
                )
                if "ir_per_round" in r:
                    ir[r["k"]] = r["ir_per_round"]
                    mib[r["k"]] = r["model_bytes"] / 2**20
        label = "VW --cbify k --epsilon 0.05" if learner == "VW" else f"`{learner}`"
        what = "-" if learner == "VW" else ("tied" if state == "fresh" else "untied")

        def cell(v: float | None, fmt: str) -> str:
            return "-" if v is None else format(v, fmt)

        def ratio(k: int, ms: dict = ms) -> float | None:
            a, b = ms.get(k), ms.get(k0)
            return None if a is None or b is None else a / b

        last = ms.get(classes[-1])
        cells = [label, what] + [cell(ms.get(k), ".3f") for k in classes]
        cells += [cell(ratio(k), ".2f") for k in classes[1:]]
        cells += [cell(None if last is None else 1e3 / last, ",.0f")]
        if counted:
            cells += [cell(ratio(k, ir), ".2f") for k in classes[1:]]
            cells += [cell(mib.get(k), ".2f") for k in classes]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--classes", type=int, nargs="+", default=[1000, 4000, 10000])
    p.add_argument("--features", type=int, default=64)
    p.add_argument(
        "--rounds", type=int, default=200, help="timed rounds (default: 200)"
    )
    p.add_argument("--repeat", type=int, default=1, help="passes, best kept")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--learners", nargs="+", help="learner names (default: all)")
    p.add_argument(
        "--warm-at-largest",
        nargs="*",
        default=["SquareCB", "Banditron"],
        help="the learners whose warm state is measured at the largest k too "
        "(the others' warm-up of k rounds takes minutes there; default: "
        "SquareCB Banditron)",
    )
    p.add_argument("--no-vw", action="store_true", help="skip Vowpal Wabbit")
    p.add_argument("--markdown", action="store_true", help="print a Markdown table")
    p.add_argument("--json", help="write the rows and the machine here")
    p.add_argument(
        "--instructions",
        action="store_true",
        help="also count each fresh learner's instructions per round under "
        "callgrind, and report the model's size (needs valgrind and a C compiler)",
    )
    p.add_argument("--count-child", action="store_true", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    warnings.simplefilter("ignore")  # e.g. OffPolicyWarning of the warm-up log
    if args.count_child:
        return count_child(args)
    rows = run(args)
    print()
    print(table(rows, args.classes) if args.markdown else "")
    return 0


if __name__ == "__main__":
    sys.exit(main())
