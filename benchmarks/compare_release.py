"""Throughput of this checkout against a previous version, side by side in one run.

Speed on a shared machine drifts by tens of percent from one minute to the next,
so two versions are only compared in one run, alternating: previous, this,
previous, this (``--pairs`` pairs), each in its own environment. The previous
version is a git ref (``--ref``; default: the latest tag, and without a tag the
ref must be given), cloned from this repository into a work directory and
installed there into its own virtual environment (``python -m venv
--system-site-packages``, then ``pip install --no-build-isolation --no-deps -e``:
the build requirements and the runtime dependencies are taken from the system
site). This checkout runs in the current interpreter's environment
(``--this-python``), which must import skbandit from this checkout.

Both sides run the same benchmark script, this checkout's
``benchmarks/<--script>`` (default ``bench_core.py``; any script that writes
``--json`` the rows of ``_harness.Result``, as those built on ``_harness.main``
and ``bench_feature_maps.py`` do), so only the library differs;
``--own-scripts`` runs each side's own copy instead. Arguments after ``--`` go to
the script (default: its default run). The scikit-learn, NumPy and Vowpal
Wabbit rows run the same code on both sides: their ratio is the machine's noise.

Printed per row (learner and input): the best rounds/s of each side over the
passes, ``ratio`` = this / previous of those bests, the ratio of each pair
(previous run, then this run) and whether the online errors agree (the same
plays: ``same``; a change of behaviour: ``differ``). The wall time of every run
is printed as it finishes (the default ``bench_core.py`` run must stay under a
minute).

    python benchmarks/compare_release.py --ref 9f6141f
    python benchmarks/compare_release.py --ref main -- --inputs csr
    python benchmarks/compare_release.py --ref main --script bench_squarecb.py \\
        -- --inputs csr --n-rounds 200000
    python benchmarks/compare_release.py --ref v0.1.0 --workdir /tmp/prev

Without ``--workdir`` all of it happens in a temporary directory, removed at the
end. ``--workdir DIR`` keeps the clone, its environment and each run's output
(``DIR/runs``) there, and reuses the environment on the next call with the same
commit.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCHMARKS = Path(__file__).resolve().parent
ROOT = BENCHMARKS.parent


def git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


def resolve_ref(ref: str | None) -> tuple[str, str]:
    """``(name, commit)`` of the previous version: ``ref``, or the latest tag."""
    if ref is None:
        tags = git("tag", "--sort=-creatordate").split()
        if not tags:
            sys.exit(
                "compare_release.py: this repository has no tag; pass the previous "
                "version with --ref (a commit, branch or tag)"
            )
        ref = tags[0]
    try:
        commit = git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except subprocess.CalledProcessError:
        sys.exit(
            f"compare_release.py: --ref {ref!r} is not a commit of this repository"
        )
    return ref, commit


def skbandit_location(python: str) -> str:
    """Where ``python`` imports skbandit from (run outside any checkout)."""
    out = subprocess.run(
        [python, "-c", "import skbandit; print(skbandit.__file__)"],
        cwd=tempfile.gettempdir(), check=True, capture_output=True, text=True,
    )  # fmt: skip
    return out.stdout.strip().splitlines()[-1]


def prepare_previous(commit: str, workdir: Path) -> str:
    """Clone ``commit`` into ``workdir/src``, install it into ``workdir/venv``
    (reused when it already holds that commit); returns its python."""
    src, venv = workdir / "src", workdir / "venv"
    python = str(venv / "bin" / "python")
    stamp = workdir / "installed-commit"
    if stamp.is_file() and stamp.read_text().strip() == commit:
        print(f"reusing {venv} (commit {commit[:10]})", flush=True)
        return python
    if stamp.is_file():  # ours, for another commit: start again
        for path in (src, venv):
            shutil.rmtree(path, ignore_errors=True)
    elif src.exists() or venv.exists():
        sys.exit(f"compare_release.py: {workdir} holds a src or venv not made here")
    t0 = time.perf_counter()
    print(f"cloning {commit[:10]} into {src}", flush=True)
    git("clone", "--quiet", "--no-checkout", str(ROOT), str(src), cwd=workdir)
    git("checkout", "--quiet", "--detach", commit, cwd=src)
    print(f"installing it into {venv} (a few minutes: the kernels compile)", flush=True)
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True
    )
    log = workdir / "install.log"
    with open(log, "w") as f:
        done = subprocess.run(
            [python, "-m", "pip", "install", "--no-build-isolation", "--no-deps",
             "-e", str(src)],
            stdout=f, stderr=subprocess.STDOUT,
        )  # fmt: skip
    if done.returncode != 0:
        sys.exit(f"compare_release.py: installing {commit[:10]} failed, see {log}")
    where = skbandit_location(python)  # also builds the editable install now
    if not Path(where).resolve().is_relative_to(src.resolve()):
        sys.exit(f"compare_release.py: {python} imports skbandit from {where}")
    stamp.write_text(commit + "\n")
    print(f"ready in {time.perf_counter() - t0:.0f} s", flush=True)
    return python


def run_side(
    python: str, script: Path, bench_args: list[str], out_json: Path, log: Path
) -> tuple[dict[str, Any] | None, float]:
    """One benchmark run; its JSON report (None if it wrote none) and wall time."""
    t0 = time.perf_counter()
    with open(log, "w") as f:
        done = subprocess.run(
            [python, str(script), "--json", str(out_json), *bench_args],
            cwd=tempfile.gettempdir(), stdout=f, stderr=subprocess.STDOUT,
        )  # fmt: skip
    seconds = time.perf_counter() - t0
    if not out_json.is_file():
        return None, seconds
    report = json.loads(out_json.read_text())
    report["returncode"] = done.returncode
    return report, seconds


def _key(row: dict[str, Any]) -> tuple[str, str]:
    return row["learner"], row["input"]


def compare(passes: list[dict[str, dict]]) -> list[dict[str, Any]]:
    """Rows of the comparison: ``passes`` is one ``{"previous": report,
    "this": report}`` per pair."""
    keys: list[tuple[str, str]] = []
    for pair in passes:
        for report in pair.values():
            for row in report["results"]:
                if _key(row) not in keys:
                    keys.append(_key(row))
    out = []
    for key in keys:
        speed: dict[str, list[float | None]] = {"previous": [], "this": []}
        errors: dict[str, set] = {"previous": set(), "this": set()}
        for pair in passes:
            for side, report in pair.items():
                row = next((r for r in report["results"] if _key(r) == key), None)
                ok = row is not None and row["status"] == "ok"
                speed[side].append(row["rounds_per_s"] if ok else None)
                if ok:
                    errors[side].add(row["online_error"])
        best = {
            side: max((v for v in values if v), default=None)
            for side, values in speed.items()
        }
        pair_ratios = [
            b / a if a and b else None
            for a, b in zip(speed["previous"], speed["this"], strict=True)
        ]
        same = None
        if errors["previous"] and errors["this"]:
            same = errors["previous"] == errors["this"]
        out.append(
            {
                "learner": key[0],
                "input": key[1],
                "previous": best["previous"],
                "this": best["this"],
                "ratio": (
                    best["this"] / best["previous"]
                    if best["this"] and best["previous"]
                    else None
                ),
                "pair_ratios": pair_ratios,
                "same_error": same,
            }
        )
    return out


def format_table(rows: list[dict[str, Any]]) -> str:
    width = max(len(r["learner"]) for r in rows)
    head = ("input", "previous", "this", "ratio", "pair ratios", "online err")
    lines = [
        f"{'learner':{width}}  {head[0]:<5}  {head[1]:>11}  {head[2]:>11}  "
        f"{head[3]:>6}  {head[4]:<17}  {head[5]}"
    ]
    lines.append("  ".join("-" * w for w in (width, 5, 11, 11, 6, 17, 10)))

    def num(v: float | None, spec: str) -> str:
        return "-" if v is None else format(v, spec)

    for r in rows:
        pairs = " ".join(num(v, ".2f") for v in r["pair_ratios"])
        err = {None: "-", True: "same", False: "differ"}[r["same_error"]]
        lines.append(
            f"{r['learner']:{width}}  {r['input']:<5}  {num(r['previous'], ',.0f'):>11}"
            f"  {num(r['this'], ',.0f'):>11}  {num(r['ratio'], '.2f'):>6}  "
            f"{pairs:<17}  {err}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    bench_args: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, bench_args = argv[:cut], argv[cut + 1 :]
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Arguments after -- are passed to the benchmark script.",
    )
    p.add_argument("--ref", help="the previous version (default: the latest tag)")
    p.add_argument("--pairs", type=int, default=2, help="(previous, this) pairs")
    p.add_argument(
        "--script", default="bench_core.py", help="benchmark script in benchmarks/"
    )
    p.add_argument(
        "--own-scripts", action="store_true",
        help="run each side's own copy of the script (default: this checkout's)",
    )  # fmt: skip
    p.add_argument(
        "--this-python", default=sys.executable,
        help="interpreter of this checkout's environment (default: this one)",
    )  # fmt: skip
    p.add_argument(
        "--workdir", type=Path,
        help="where to clone and install the previous version and keep the "
        "runs' output, reused later for the same commit (default: a temporary "
        "directory, removed at the end)",
    )  # fmt: skip
    p.add_argument("--json", metavar="PATH", help="also write the comparison")
    args = p.parse_args(argv)
    if args.pairs < 1:
        p.error("--pairs must be positive")
    name, commit = resolve_ref(args.ref)
    here = git("rev-parse", "--short", "HEAD")
    dirty = " (with uncommitted changes)" if git("status", "--porcelain") else ""
    where = skbandit_location(args.this_python)
    if not Path(where).resolve().is_relative_to(ROOT.resolve()):
        sys.exit(
            f"compare_release.py: {args.this_python} imports skbandit from {where}, "
            f"not from this checkout ({ROOT}); activate its environment"
        )
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="skbandit-previous-"))
    workdir.mkdir(parents=True, exist_ok=True)
    workdir = workdir.resolve()
    try:
        previous = prepare_previous(commit, workdir)
        sides = {
            "previous": (previous, workdir / "src"),
            "this": (args.this_python, ROOT),
        }
        runs = workdir / "runs"
        runs.mkdir(exist_ok=True)
        print(
            f"previous: {name} = {commit[:10]}; this: {here}{dirty} at {ROOT}\n"
            f"{args.script} {' '.join(bench_args) or '(its default run)'}, "
            f"{args.pairs} pairs, alternating",
            flush=True,
        )
        passes, failed = [], False
        for i in range(1, args.pairs + 1):
            pair = {}
            for side, (python, checkout) in sides.items():
                root = checkout if args.own_scripts else ROOT
                script = root / "benchmarks" / args.script
                stem = f"{i}-{side}"
                report, seconds = run_side(
                    python, script, bench_args,
                    runs / f"{stem}.json", runs / f"{stem}.log",
                )  # fmt: skip
                status = "ok"
                if report is None or report["returncode"] != 0:
                    failed = True
                    status = f"FAILED (see {runs / (stem + '.log')})"
                print(f"pass {i} {side:<8} {seconds:6.1f} s  {status}", flush=True)
                if report is None:
                    return 1
                pair[side] = report
            passes.append(pair)
        rows = compare(passes)
        print()
        print(format_table(rows))
        print(
            "\nprevious, this: best rounds/s over the passes; ratio: this / previous "
            "of those; pair ratios: per pass;\nonline err: the same on both sides "
            "(the same plays) or not. Rows without skbandit run the same code on "
            "both sides."
        )
        if args.json:
            with open(args.json, "w") as f:
                json.dump(
                    {"previous": [name, commit], "this": here + dirty,
                     "script": args.script, "args": bench_args, "rows": rows},
                    f, indent=2,
                )  # fmt: skip
            print(f"wrote {args.json}")
        return int(failed)
    finally:
        if args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
