"""OnlineSelector against the best of its candidates chosen in hindsight.

On each stream of a suite of ``streams.py`` and each seed, one pass (one
``partial_fit`` call, ``classes`` given, learner ``random_state=seed``) of

* each linear default candidate alone (``default_candidates()``, the same
  parameters);
* ``OnlineSelector(candidates=default_candidates())`` (the four linear
  candidates; the nonlinear candidate that ``OnlineSelector()`` adds on narrow
  rows is evaluated by ``eval_nonlinear.py``) at each setting of ``--grid``
  (``exploration`` x ``exploration_decay`` x ``min_exploration`` x ``window``
  x ``confidence`` x ``eliminated_share``; with ``exploration_decay=0`` the floor
  ``min_exploration`` plays no part) or at its defaults. The first three are
  the selector's ``exploration=EpsilonGreedy(exploration,
  decay=exploration_decay, min_epsilon=min_exploration)``; the settings keep
  these names, those of the recorded results (``_selector``).

The online error is mistakes / rounds. The best candidate in hindsight is the
candidate with the smallest mean-over-seeds error on that stream; the selector's
ratio is its mean-over-seeds error over that one's (and per seed, over the best
candidate of that seed). With ``--vw-cache``, VW's best of the five cbify
configurations (``streams.vw_best``; read from the cache, computed when
``vowpalwabbit`` is installed) gives the ratio to VW.

``--learning MODE ...`` plays each selector setting with every
``candidate_learning`` given (``all``, ``own``, ``capped``, or one per default
candidate joined by commas, e.g. ``all,all,own,capped``); the settings are then
named with it.

Rule that chose the defaults (``--suite tuning --grid``): the setting with the
smallest worst-stream ratio to the best candidate in hindsight (mean over seeds),
ties broken by the mean ratio over streams (six seeds for tuning).

    python benchmarks/eval_selector.py --suite tuning --grid --seeds 0 1 2 3 4 5 --out D
    python benchmarks/eval_selector.py --suite validation --out DIR --vw-cache F
    python benchmarks/eval_selector.py --drift --out DIR
    python benchmarks/eval_selector.py --suite tuning --seeds 0 1 2 3 4 5 --switches \\
        --out DIR
    python benchmarks/eval_selector.py --suite tuning --seeds 0 1 2 3 4 5 \\
        --learning all own capped all,all,own,all --out DIR
    python benchmarks/eval_selector.py --suite switching --out DIR

``--suite switching`` (``SWITCHING`` below, report-only): streams where a
candidate other than the first is at least twice as good alone, so the
selector must leave its first candidate.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time

import numpy as np
from streams import SUITES, Stream, _tfidf_topics, _topics, load_stream, vw_best

from skbandit import OnlineSelector
from skbandit.exploration import EpsilonGreedy
from skbandit.multiclass._selector import default_candidates

# Report-only streams where a candidate other than the first is at least twice
# as good alone (the selector must leave its first candidate): short tf-idf
# documents (issue 32's stream, and at the size of the test), and the probe's
# binary topics-k6 at five times its length. Drawn with seed 500 + seed.


def _short_tfidf(n: int):
    """Issue 32's short tf-idf documents: 6 Dirichlet(0.05) topics, a Zipfian
    background (40% of the words), vocabulary 3,000, 12 words on average."""
    return _tfidf_topics(
        n, k=6, vocabulary=3_000, mean_words=12, background=0.4, concentration=0.05
    )


SWITCHING: tuple[Stream, ...] = (
    Stream(
        "tfidf-topics-k6",
        "switching",
        "short tf-idf documents, 6 Dirichlet(0.05) topics plus a Zipfian "
        "background (40% of the words), vocabulary 3,000, 12 words on average "
        "(30,000 docs)",
        _short_tfidf(30_000),
        False,
    ),
    Stream(
        "tfidf-topics-k6-8k",
        "switching",
        "the same generator, 8,000 docs",
        _short_tfidf(8_000),
        False,
    ),
    Stream(
        "topics-k6-20k",
        "switching",
        "short binary bag-of-words documents from 6 Dirichlet topics, vocabulary "
        "2,000, 15 words, unit rows (20,000 docs)",
        _topics(20_000, k=6, vocabulary=2_000, words=15, concentration=0.1),
        False,
    ),
)
ALL_SUITES = {**SUITES, "switching": SWITCHING}


def _load(name: str, seed: int, suite: str):
    """``(X, y)`` of a stream of ``ALL_SUITES`` (``streams.load_stream`` for
    the suites of ``streams.py``)."""
    if suite != "switching":
        return load_stream(name, seed, suite=suite)
    stream = next(s for s in SWITCHING if s.name == name)
    return stream.build(500 + seed, None)


CANDIDATE_NAMES = [
    "SquareCB()",
    "SquareCB(exploration=InverseGap(300, exponent=0.5))",
    "ConservativeOneVsAll()",
    "OffsetTree()",
]
GRID = {
    "exploration": [0.2, 0.5, 1.0],
    "exploration_decay": [0.0, 1 / 3],
    "min_exploration": [0.02, 0.05],
    "window": [1_000, 3_000],
    "confidence": [0.95, 0.99],
    "eliminated_share": [0.05, 0.1],
}


def _settings(grid: bool, learning=None) -> list[dict]:
    """The selector settings: the grid's (or the defaults), each with every
    ``candidate_learning`` of ``learning`` (a mode, or modes joined by commas,
    one per candidate) when given."""
    if not grid:
        base = [{}]
    else:
        keys = list(GRID)
        base = [
            dict(zip(keys, v, strict=True)) for v in itertools.product(*GRID.values())
        ]
    if not learning:
        return base
    return [{**s, "candidate_learning": m} for s in base for m in learning]


def _label(setting: dict) -> str:
    if not setting:
        return "OnlineSelector()"
    inner = ", ".join(f"{k}={v}" for k, v in setting.items())
    return f"OnlineSelector({inner})"


def _selector(setting: dict) -> OnlineSelector:
    """The selector of a grid setting (named as in the recorded results)."""
    s = dict(setting)
    if "," in s.get("candidate_learning", ""):
        s["candidate_learning"] = s["candidate_learning"].split(",")
    rate = {
        "epsilon": s.pop("exploration", 0.5),
        "decay": s.pop("exploration_decay", 1 / 3),
        "min_epsilon": s.pop("min_exploration", 0.02),
    }
    # the linear candidates (the nonlinear one of the defaults is evaluated by
    # eval_nonlinear.py): the selector against these four run alone
    return OnlineSelector(
        candidates=default_candidates(), exploration=EpsilonGreedy(**rate), **s
    )


def _error(est, X, y) -> float:
    est.partial_fit(X, y, classes=np.unique(y))
    return est.n_mistakes_ / len(y)


def run(args) -> dict:
    path = os.path.join(args.out, f"{args.suite}.json")
    store = {}
    if os.path.exists(path):
        with open(path) as f:
            store = json.load(f)
    settings = _settings(args.grid, args.learning)
    streams = [
        s for s in ALL_SUITES[args.suite] if not args.streams or s.name in args.streams
    ]
    for stream in streams:
        for seed in args.seeds:
            X, y = _load(stream.name, seed, args.suite)
            row = store.setdefault(f"{stream.name}/{seed}", {})
            jobs = [
                (name, lambda i=i: default_candidates()[i])
                for i, name in enumerate(CANDIDATE_NAMES)
            ] + [
                (_label(s), lambda s=s: _selector(s)) for s in settings
            ]  # fmt: skip
            for name, make in jobs:
                if name in row:
                    continue
                start = time.perf_counter()
                err = _error(make().set_params(random_state=seed), X, y)
                row[name] = err
                print(
                    f"{stream.name:>20} seed {seed}  {name:<60} "
                    f"{err:.4f}  ({time.perf_counter() - start:.1f} s)",
                    flush=True,
                )
                with open(path, "w") as f:
                    json.dump(store, f, indent=1, sort_keys=True)
            if args.vw_cache and "VW best" not in row:
                try:
                    row["VW best"] = vw_best(
                        stream.name, args.suite, seed, X, y, cache=args.vw_cache
                    )
                except ImportError:
                    pass
    with open(path, "w") as f:
        json.dump(store, f, indent=1, sort_keys=True)
    return store


def table(store: dict, suite: str, seeds, grid: bool, learning=None) -> str:
    """Markdown: per stream (in the suite's order), mean errors, ratios,
    per-seed ratios."""
    stored = list(dict.fromkeys(key.split("/")[0] for key in store))
    order = [s.name for s in ALL_SUITES.get(suite, ())]
    streams = [s for s in order if s in stored] + [s for s in stored if s not in order]
    settings = [_label(s) for s in _settings(grid, learning)]
    lines = []
    summary = {s: [] for s in settings}
    for name in settings:
        lines += [
            f"### {name} on the {suite} streams",
            "",
            "| stream | best candidate in hindsight | its error | selector error "
            "| ratio | per-seed ratios (to that seed's best) | VW best | ratio to VW |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for stream in streams:
            rows = [store[f"{stream}/{s}"] for s in seeds if f"{stream}/{s}" in store]
            if not rows or any(name not in r for r in rows):
                continue
            means = {c: np.mean([r[c] for r in rows]) for c in CANDIDATE_NAMES}
            best = min(means, key=means.get)
            sel = np.mean([r[name] for r in rows])
            ratio = sel / means[best] if means[best] > 0 else float("inf")
            if means[best] == 0 and sel == 0:
                ratio = 1.0
            summary[name].append(ratio)
            per_seed = [
                r[name] / min(r[c] for c in CANDIDATE_NAMES)
                if min(r[c] for c in CANDIDATE_NAMES) > 0
                else float("nan")
                for r in rows
            ]
            vw = [r["VW best"] for r in rows if "VW best" in r]
            vw_cells = (
                (f"{np.mean(vw):.4f}", f"{sel / np.mean(vw):.3f}")
                if len(vw) == len(rows)
                else ("-", "-")
            )
            lines.append(
                f"| {stream} | {best} | {means[best]:.4f} | {sel:.4f} | {ratio:.3f} "
                f"| {', '.join(f'{p:.3f}' for p in per_seed)} | {vw_cells[0]} "
                f"| {vw_cells[1]} |"
            )
        lines.append("")
    lines += [
        f"### Summary on the {suite} streams (ratio to the best candidate in "
        "hindsight, mean over seeds)",
        "",
        "| setting | worst stream ratio | mean ratio |",
        "|---|---|---|",
    ]
    for name, ratios in summary.items():
        if ratios:
            lines.append(f"| {name} | {max(ratios):.3f} | {np.mean(ratios):.3f} |")
    lines.append("")
    # per-candidate mean errors, for reference
    lines += [
        f"### Candidates alone on the {suite} streams (mean error over seeds)",
        "",
        "| stream | " + " | ".join(CANDIDATE_NAMES) + " |",
        "|---|" + "---|" * len(CANDIDATE_NAMES),
    ]
    for stream in streams:
        rows = [store[f"{stream}/{s}"] for s in seeds if f"{stream}/{s}" in store]
        if rows and all(c in r for r in rows for c in CANDIDATE_NAMES):
            cells = [f"{np.mean([r[c] for r in rows]):.4f}" for c in CANDIDATE_NAMES]
            lines.append(f"| {stream} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def switches(args) -> str:
    """Markdown: for each selector setting, stream and seed, the number of
    leader changes and the final leader (index into ``CANDIDATE_NAMES``) after
    the same one pass as ``run`` (nothing cached)."""
    settings = _settings(args.grid, args.learning)
    streams = [
        s for s in ALL_SUITES[args.suite] if not args.streams or s.name in args.streams
    ]
    lines = [
        f"### Leader changes of the selector on the {args.suite} streams "
        "(one pass; per seed: switches/final leader, the leader an index into "
        "the candidates: "
        + ", ".join(f"{i} {n}" for i, n in enumerate(CANDIDATE_NAMES))
        + ")",
        "",
        "| setting | stream | " + " | ".join(f"seed {s}" for s in args.seeds) + " |",
        "|---|---|" + "---|" * len(args.seeds),
    ]
    for setting in settings:
        for stream in streams:
            cells = []
            for seed in args.seeds:
                X, y = _load(stream.name, seed, args.suite)
                est = _selector(setting).set_params(random_state=seed)
                est.partial_fit(X, y, classes=np.unique(y))
                cells.append(f"{est.n_switches_}/{est.leader_}")
            lines.append(
                f"| {_label(setting)} | {stream.name} | " + " | ".join(cells) + " |"
            )
            print(lines[-1], flush=True)
    return "\n".join(lines) + "\n"


def drift(args) -> str:
    """Per-segment online error on the drift stream (SynNonSep, prototypes
    redrawn every ``--drift-every`` rounds, ``--drift-rounds`` rounds, seed 0)."""
    from streams import drifting_synnonsep_chunks

    learners = [(n, default_candidates()[i]) for i, n in enumerate(CANDIDATE_NAMES)]
    learners.insert(0, ("OnlineSelector()", OnlineSelector()))
    rows = {name: [] for name, _ in learners}
    chunks = drifting_synnonsep_chunks(
        args.drift_rounds, args.drift_every, random_state=0
    )
    for j, (X, y) in enumerate(chunks):
        for name, est in learners:
            before = est.n_mistakes_ if j else 0
            est.set_params(random_state=0) if not j else None
            est.partial_fit(X, y, classes=np.arange(9))
            rows[name].append((est.n_mistakes_ - before) / len(y))
            print(f"segment {j} {name:<50} {rows[name][-1]:.4f}", flush=True)
    with open(os.path.join(args.out, "drift.json"), "w") as f:
        json.dump(rows, f, indent=1)
    n_seg = len(next(iter(rows.values())))
    lines = [
        f"### Drift: SynNonSep, prototypes redrawn every {args.drift_every:,} rounds "
        f"({args.drift_rounds:,} rounds, seed 0): online error per segment",
        "",
        "| learner | "
        + " | ".join(f"segment {j + 1}" for j in range(n_seg))
        + " | worst later / first |",
        "|---|" + "---|" * (n_seg + 1),
    ]
    for name, errs in rows.items():
        worst = max(errs[1:]) / errs[0] if n_seg > 1 and errs[0] > 0 else float("nan")
        cells = " | ".join(f"{e:.4f}" for e in errs)
        lines.append(f"| {name} | {cells} | {worst:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--suite", choices=list(ALL_SUITES), default="validation")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--streams", nargs="*", help="only these streams of the suite")
    p.add_argument("--grid", action="store_true", help="the selector's grid")
    p.add_argument(
        "--learning",
        nargs="+",
        help="candidate_learning values to play (a mode, or one per candidate "
        "joined by commas)",
    )
    p.add_argument("--out", required=True, help="folder of the JSON and table")
    p.add_argument("--vw-cache", help="JSON cache of VW's best (streams.vw_best)")
    p.add_argument("--drift", action="store_true", help="the drift stream instead")
    p.add_argument(
        "--switches",
        action="store_true",
        help="the selector's leader changes and final leader per stream and seed "
        "(written to SUITE-switches.txt) instead",
    )
    p.add_argument("--drift-rounds", type=int, default=5_000_000)
    p.add_argument("--drift-every", type=int, default=1_000_000)
    args = p.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    if args.drift:
        md = drift(args)
        with open(os.path.join(args.out, "drift.txt"), "w") as f:
            f.write(md)
        print(md)
        return 0
    if args.switches:
        md = switches(args)
        with open(os.path.join(args.out, f"{args.suite}-switches.txt"), "w") as f:
            f.write(md)
        return 0
    store = run(args)
    md = table(store, args.suite, args.seeds, args.grid, args.learning)
    with open(os.path.join(args.out, f"{args.suite}.txt"), "w") as f:
        f.write(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
