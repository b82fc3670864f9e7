"""Latency of one live round: act on a row, then learn its revealed reward.

A deployed learner serves one request at a time: it picks an action for the
context, the system later observes the reward and the learner learns it. This
script times that loop one row at a time on the seeded SynSep-like stream of
``_harness.py`` (d = 400, k = 9), for:

* skbandit ``Banditron`` in a ``LiveSession``: ``session.act(row)`` then
  ``session.learn(row, action, reward, propensity)`` on a dense (1-D) row and
  on a CSR row (the compiled round of ``skbandit/_core/_live.pyx``);
* the same loop through the public calls: ``sample_actions(row)`` then
  ``partial_fit(row, LoggedFeedback(action, reward, propensity))``, dense and
  CSR, and the simulator's one-row ``partial_fit(row, [label])``;
* the session and the live loop of ``SquareCB`` and ``OnlineSelector`` (at
  their defaults) on a dense and a CSR row;
* river (per-row learning on dict features, when installed):
  ``SoftmaxRegression.predict_one`` then ``learn_one`` with the true label
  (full information, river has no bandit classifier), dicts built beforehand;
* Vowpal Wabbit's Python API (when installed): ``--cb_explore 9 --epsilon``
  ``predict`` on the row's line (the exploration pmf), an action drawn in
  Python, then ``learn`` on ``action:cost:probability | features``; the
  features part of each line is built beforehand, the label prefix is not.

A second table times every learner (its defaults) on hashed sparse rows, as a
deployed learner sees them (``HashingVectorizer`` and Vowpal Wabbit's ``-b``
bits): k = 20 classes, rows of 20 non-zeros at distinct hashed columns (values
1 / sqrt(20), unit norm), labels from a fixed random linear rule, at
d = 2**10 and d = 2**20 columns. Per learner: the live loop on a CSR row
(``sample_actions`` + ``partial_fit(row, LoggedFeedback(...))``; ``-`` for a
full-information learner, which cannot learn logged feedback) and the
simulator's one-row ``partial_fit(row, [label])`` on a CSR row, with their
ratio and the live loop's ratio to Vowpal Wabbit (``--cb_explore 20 -b BITS``,
predict + learn on the same rows, timed in the same run). A last table puts
the two d side by side: a round's cost should not depend on d (the rollback
of a failed call is an undo journal of the entries a round writes, not a copy
of the model; ``d20/d10`` is the ratio of the per-round times, each the
mean of a pass of the same number of rounds at both d: ``--hashed-rounds`` and
``--hashed-rounds-large``, 2,000 each by default).
``SOBA(covariance="full")`` is left out (its (k d)^2 covariance does not fit at
either d); a last table times both SOBA variants on a small dense stream
(d = 20, k = 5: ``A^{-1}`` is 100 x 100), the live loop and the simulator, where
a round's cost is mostly the call's overhead (e.g. a kernel rebuilt on every
call).

The live loop and the simulator play the same actions (the on-policy
equivalence), so their online errors agree. Columns: us/round is the best
(minimum) over ``--repeat`` passes of the mean time per round of a pass of
``--rounds`` rounds (a fresh learner for each pass); p50 and p99 are
percentiles of the per-round times of the last pass (each round timed with
``perf_counter_ns``); ``x VW`` is us/round over Vowpal Wabbit's, ``p50 x VW``
the median round over Vowpal Wabbit's median (the steadier of the two on a
loaded machine); the first round of a pass (the call that creates the
learner's state) is played untimed. With ``--prefault`` the pages of the state
arrays are then touched: a fresh learner's zeroed arrays are mapped lazily, and
at d = 2**20 the page faults of first writes dominate its first thousands of
rounds, which a learner in service has long paid. Online err: played-action
mistakes / rounds of the last pass (river: its greedy mistakes). Timings on a
shared machine are noisy: the median (p50) is the most stable figure.

    python benchmarks/bench_live.py               # ~15 s, 1.2 GiB peak RSS
    python benchmarks/bench_live.py --rounds 20000 --repeat 5
    python benchmarks/bench_live.py --hashed-bits 10   # the hashed table at 2**10 only
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import scipy.sparse as sp
from _harness import GAMMA, N_CLASSES, N_FEATURES, machine_info, make_stream

from skbandit import (
    SOBA,
    Banditron,
    ConservativeOneVsAll,
    Gaptron,
    LiveSession,
    LoggedFeedback,
    MulticlassPerceptron,
    OffsetTree,
    OnlineSelector,
    PNewtron,
    SeparableOneVsAll,
    SquareCB,
)
from skbandit.exploration import EpsilonGreedy

CLASSES = np.arange(N_CLASSES)

# The hashed sparse stream: k classes, NNZ non-zeros per row.
HASHED_K = 20
HASHED_NNZ = 20
HASHED_CLASSES = np.arange(HASHED_K)
# Every learner at its defaults (SOBA's full covariance is left out: see above).
LEARNERS = {
    "Banditron": Banditron,
    "MulticlassPerceptron": MulticlassPerceptron,
    "SOBA": SOBA,
    "PNewtron": PNewtron,
    "Gaptron": Gaptron,
    "ConservativeOneVsAll": ConservativeOneVsAll,
    "SeparableOneVsAll": SeparableOneVsAll,
    "OffsetTree": OffsetTree,
    "SquareCB": SquareCB,
}


def _banditron(seed):
    return Banditron(exploration=EpsilonGreedy(GAMMA), random_state=seed)


# The learners of the first table's live loop, as ``(name, factory(seed))``
# (also what ``count_instructions.py --live --script bench_live.py`` counts).
LIVE_LEARNERS = [
    ("Banditron", _banditron),
    ("SquareCB", lambda seed: SquareCB(random_state=seed)),
    ("OnlineSelector", lambda seed: OnlineSelector(random_state=seed)),
]


def skbandit_logged(X, y, seed, make=_banditron, classes=CLASSES):
    """The live loop: sample_actions, reward, partial_fit(LoggedFeedback)."""
    clf = make(seed)
    rows = [X[i : i + 1] for i in range(X.shape[0])]
    labels = y.tolist()

    def one(i):
        row = rows[i]
        action, propensity = clf.sample_actions(
            row, classes=classes if i == 0 else None
        )
        reward = 1.0 if action[0] == labels[i] else 0.0
        clf.partial_fit(row, LoggedFeedback(action, [reward], propensity))
        return reward == 0.0

    one.clf = clf
    return one


def skbandit_session(X, y, seed, make=_banditron, classes=CLASSES):
    """The live session: ``LiveSession.act`` then ``learn``, on one dense row
    (1-D) or one CSR row; round 0 is the first ``partial_fit`` (the learner
    must be fitted), after which the session opens (untimed)."""
    clf = make(seed)
    sparse = sp.issparse(X)
    rows = [X[i : i + 1] if sparse else X[i] for i in range(X.shape[0])]
    labels = y.tolist()
    state = {}

    def one(i):
        if i == 0:
            clf.partial_fit(X[:1], y[:1], classes=classes)
            state["session"] = LiveSession(clf)
            return clf.n_mistakes_ > 0
        session = state["session"]
        row = rows[i]
        action, propensity = session.act(row)
        reward = 1.0 if action == labels[i] else 0.0
        session.learn(row, action, reward, propensity)
        return reward == 0.0

    one.clf = clf
    return one


def skbandit_simulator(X, y, seed, make=_banditron, classes=CLASSES):
    """The simulator: partial_fit(row, [label]), one row per call."""
    clf = make(seed)
    rows = [X[i : i + 1] for i in range(X.shape[0])]
    labels = [y[i : i + 1] for i in range(len(y))]

    def one(i):
        before = clf.n_mistakes_ if i else 0
        clf.partial_fit(rows[i], labels[i], classes=classes if i == 0 else None)
        return clf.n_mistakes_ > before

    one.clf = clf
    return one


def river_case(X, y, seed):
    from river import linear_model

    model = linear_model.SoftmaxRegression()
    Xd = sp.csr_matrix(X)
    dicts = [
        dict(zip(Xd.indices[a:b].tolist(), Xd.data[a:b].tolist(), strict=True))
        for a, b in zip(Xd.indptr[:-1], Xd.indptr[1:], strict=True)
    ]
    labels = y.tolist()

    def one(i):
        guess = model.predict_one(dicts[i])
        model.learn_one(dicts[i], labels[i])
        return guess != labels[i]

    return one


def vw_case(X, y, seed, n_classes=N_CLASSES, bits=18):
    from vowpalwabbit import Workspace

    vw = Workspace(
        f"--cb_explore {n_classes} --epsilon {GAMMA} -b {bits} --quiet "
        f"--random_seed {seed}"
    )
    Xd = sp.csr_matrix(X)
    feats = [
        "| "
        + " ".join(
            f"{j}:{v!r}"
            for j, v in zip(
                Xd.indices[a:b].tolist(), Xd.data[a:b].tolist(), strict=True
            )
        )
        for a, b in zip(Xd.indptr[:-1], Xd.indptr[1:], strict=True)
    ]
    labels = y.tolist()
    rng = np.random.default_rng(seed)
    uniforms = rng.random(len(labels)).tolist()

    def one(i):
        pmf = vw.predict(feats[i])
        u, c, action = uniforms[i], 0.0, len(pmf) - 1
        for a, p in enumerate(pmf):
            c += p
            if u < c:
                action = a
                break
        cost = 0.0 if action == labels[i] else 1.0
        vw.learn(f"{action + 1}:{cost}:{pmf[action]} {feats[i]}")
        return cost > 0

    return one


def hashed_stream(n, bits, seed):
    """n CSR rows of d = 2**bits columns, HASHED_NNZ distinct hashed columns
    each (values 1 / sqrt(nnz): unit norm), labels of a fixed random linear
    rule over 2**10 hash buckets (the same rule at every d)."""
    rng = np.random.default_rng(seed)
    d = 1 << bits
    cols = np.sort(
        np.stack([rng.choice(d, HASHED_NNZ, replace=False) for _ in range(n)]), axis=1
    )
    data = np.full(n * HASHED_NNZ, 1.0 / np.sqrt(HASHED_NNZ))
    indptr = np.arange(0, n * HASHED_NNZ + 1, HASHED_NNZ)
    X = sp.csr_matrix((data, cols.ravel(), indptr), shape=(n, d))
    W = np.random.default_rng(12345).normal(size=(HASHED_K, 1 << 10))
    y = W[:, cols % (1 << 10)].sum(axis=2).argmax(axis=0)
    return X, y


def hashed_table(bits_list, rounds_for, seed, repeat) -> None:
    try:
        import vowpalwabbit  # noqa: F401

        have_vw = True
    except ImportError:
        have_vw = False
    results: dict[int, dict[str, tuple]] = {}
    for bits in bits_list:
        rounds = rounds_for(bits)
        X, y = hashed_stream(rounds, bits, seed)
        print(
            f"\nHashed sparse rows d=2**{bits} k={HASHED_K} nnz={HASHED_NNZ}, "
            f"{rounds} rounds one CSR row at a time, best of {repeat} passes"
        )
        head = ("live us", "sim us", "sim/live", "live/VW", "err")
        print(f"{'':22}  " + "  ".join(f"{h:>11}" for h in head))
        vw_us = None
        if have_vw:
            r = time_case(
                lambda X, y, s, b=bits: vw_case(X, y, s, n_classes=HASHED_K, bits=b),
                X, y, seed, rounds, repeat,
            )  # fmt: skip
            vw_us = r["us_per_round"]
            cells = (f"{vw_us:.1f}", "-", "-", "1.00", f"{r['online_error']:.3f}")
            print(f"{'VW predict + learn':22}  " + "  ".join(f"{c:>11}" for c in cells))
        results[bits] = {}
        for name, cls in LEARNERS.items():

            def make(s, cls=cls):
                return cls(random_state=s)

            sim = time_case(
                lambda X, y, s, make=make: skbandit_simulator(
                    X, y, s, make, HASHED_CLASSES
                ),
                X, y, seed, rounds, repeat,
            )  # fmt: skip
            bandit = not sim["one"].clf._make_kernel().full_information
            sim.pop("one")
            live = None
            if bandit:
                live = time_case(
                    lambda X, y, s, make=make: skbandit_logged(
                        X, y, s, make, HASHED_CLASSES
                    ),
                    X, y, seed, rounds, repeat,
                )  # fmt: skip
            live_us = live["us_per_round"] if live else None
            results[bits][name] = (live_us, sim["us_per_round"])
            cells = (
                f"{live_us:.1f}" if live_us else "-",
                f"{sim['us_per_round']:.1f}",
                f"{sim['us_per_round'] / live_us:.2f}" if live_us else "-",
                f"{live_us / vw_us:.2f}" if live_us and vw_us else "-",
                f"{sim['online_error']:.3f}",
            )
            print(f"{name:22}  " + "  ".join(f"{c:>11}" for c in cells), flush=True)
    if len(results) >= 2:
        lo, hi = min(results), max(results)
        print(
            f"\nPer-round time at d=2**{hi} over d=2**{lo} (the same run; "
            "target <= 1.5)"
        )
        head = (f"live d{hi}/d{lo}", f"sim d{hi}/d{lo}")
        print(f"{'':22}  " + "  ".join(f"{h:>15}" for h in head))
        for name in LEARNERS:
            (live_lo, sim_lo), (live_hi, sim_hi) = results[lo][name], results[hi][name]
            cells = (
                f"{live_hi / live_lo:.2f}" if live_lo and live_hi else "-",
                f"{sim_hi / sim_lo:.2f}",
            )
            print(f"{name:22}  " + "  ".join(f"{c:>15}" for c in cells))


SOBA_D, SOBA_K = 20, 5


def soba_table(rounds, seed, repeat) -> None:
    """Both SOBA variants at their defaults on a small dense stream (labels of a
    fixed random linear rule), one row per call."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rounds, SOBA_D)) / np.sqrt(SOBA_D)
    y = (X @ rng.normal(size=(SOBA_D, SOBA_K))).argmax(axis=1)
    classes = np.arange(SOBA_K)
    print(
        f"\nSOBA on dense rows d={SOBA_D} k={SOBA_K}, {rounds} rounds one row at a "
        f"time, best of {repeat} passes"
    )
    head = ("live us", "live p50", "sim us", "sim p50", "err")
    print(f"{'':22}  " + "  ".join(f"{h:>9}" for h in head))
    for cov in ("diag", "full"):

        def make(s, cov=cov):
            return SOBA(covariance=cov, random_state=s)

        def timed(case, make=make):
            return time_case(
                lambda X, y, s: case(X, y, s, make, classes), X, y, seed, rounds, repeat
            )

        live, sim = timed(skbandit_logged), timed(skbandit_simulator)
        cells = (
            f"{live['us_per_round']:.1f}",
            f"{live['p50_us']:.1f}",
            f"{sim['us_per_round']:.1f}",
            f"{sim['p50_us']:.1f}",
            f"{sim['online_error']:.3f}",
        )
        name = f'SOBA covariance="{cov}"'
        print(f"{name:22}  " + "  ".join(f"{c:>9}" for c in cells), flush=True)


def prefault(clf) -> None:
    """Touch every page of a learner's state arrays (``a *= 1.0`` keeps every
    value): a learner that has served many rounds has them resident, a fresh
    one pays a page fault at the first write to each page of its zeroed
    arrays, which at d = 2**20 is most of a round's time."""
    for learner in (clf, *getattr(clf, "candidates_", ())):
        for name in learner._state_attrs:
            value = getattr(learner, name)
            if isinstance(value, np.ndarray) and value.dtype.kind == "f":
                value *= 1.0


PREFAULT = False


def time_case(make, X, y, seed, rounds, repeat):
    """Round 0 (the first call, which creates the state) is played untimed;
    with ``PREFAULT`` the state's pages are then touched (``prefault``)."""
    best, per_round, mistakes, one = float("inf"), None, 0, None
    for _ in range(repeat):
        one = make(X, y, seed)
        times = np.empty(rounds - 1, dtype=np.int64)
        mistakes = one(0)
        if PREFAULT and hasattr(one, "clf"):
            prefault(one.clf)
        clock = time.perf_counter_ns
        t0 = time.perf_counter()
        for i in range(1, rounds):
            s = clock()
            mistakes += one(i)
            times[i - 1] = clock() - s
        best = min(best, (time.perf_counter() - t0) / (rounds - 1))
        per_round = times
    return {
        "one": one,
        "us_per_round": best * 1e6,
        "p50_us": float(np.percentile(per_round, 50)) / 1e3,
        "p99_us": float(np.percentile(per_round, 99)) / 1e3,
        "online_error": mistakes / rounds,
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=5000, help="rounds per pass")
    p.add_argument("--repeat", type=int, default=3, help="passes; the best is kept")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--hashed-bits",
        type=int,
        nargs="*",
        default=[10, 20],
        help="log2 d of the hashed sparse tables (none: skip them)",
    )
    p.add_argument(
        "--hashed-rounds",
        type=int,
        default=2000,
        help="rounds per pass of the hashed table at d <= 2**16",
    )
    p.add_argument(
        "--hashed-rounds-large",
        type=int,
        default=2000,
        help="rounds per pass of the hashed table at d > 2**16 (default: as "
        "many as at d <= 2**16, so that the slower first rounds of a pass, "
        "after --prefault has swept the state through the caches, weigh the "
        "same in the means of both d; fewer inflate d20/d10)",
    )
    p.add_argument(
        "--soba-rounds",
        type=int,
        default=2000,
        help="rounds per pass of the small SOBA table (0: skip it)",
    )
    p.add_argument(
        "--prefault",
        action="store_true",
        help="touch the state's pages after the first round (steady state)",
    )
    args = p.parse_args(argv)
    global PREFAULT
    PREFAULT = args.prefault
    info = machine_info()
    print(f"CPU: {info['cpu']} (cpu_count={info['cpu_count']})")
    print(
        "  ".join(f"{k} {v or '(not installed)'}" for k, v in info["versions"].items())
    )
    Xs, y = make_stream(args.rounds, args.seed)
    Xd = Xs.toarray()
    cases = [
        ("LiveSession Banditron, dense row", skbandit_session, Xd),
        ("LiveSession Banditron, CSR row", skbandit_session, Xs),
        ("skbandit Banditron live loop, dense row", skbandit_logged, Xd),
        ("skbandit Banditron live loop, CSR row", skbandit_logged, Xs),
        (
            "skbandit Banditron partial_fit(row, [label]) (simulator)",
            skbandit_simulator,
            Xd,
        ),
    ]
    # the live loop of the learners whose kernels cost most to build (SquareCB's
    # per-class schedule, the selector's four candidates), at their defaults
    for name, factory in LIVE_LEARNERS[1:]:

        def live(X, y, seed, factory=factory):
            return skbandit_logged(X, y, seed, factory)

        def session(X, y, seed, factory=factory):
            return skbandit_session(X, y, seed, factory)

        for form, X in (("dense", Xd), ("CSR", Xs)):
            cases.append((f"LiveSession {name}, {form} row", session, X))
            cases.append((f"skbandit {name} live loop, {form} row", live, X))
    try:
        import river

        cases.append((f"river {river.__version__} SoftmaxRegression", river_case, Xd))
    except ImportError:
        print("river is not installed (pip install river): its row is skipped")
    try:
        import vowpalwabbit  # noqa: F401

        cases.append((f"VW --cb_explore {N_CLASSES} predict + learn", vw_case, Xs))
    except ImportError:
        print("vowpalwabbit is not installed: its row is skipped")
    print(
        f"SynSep-like stream d={N_FEATURES} k={N_CLASSES}, {args.rounds} rounds one "
        f"row at a time, best of {args.repeat} passes\n"
    )
    width = max(len(c[0]) for c in cases)
    head = ("us/round", "p50 us", "p99 us", "online err", "x VW", "p50 x VW")
    print(
        f"{'':{width}}  {head[0]:>9}  {head[1]:>8}  {head[2]:>8}  {head[3]:>10}  "
        f"{head[4]:>6}  {head[5]:>8}"
    )
    # every case is timed first, then printed with its ratio to Vowpal
    # Wabbit's round timed in the same run
    timed = [
        (name, time_case(make, X, y, args.seed, args.rounds, args.repeat))
        for name, make, X in cases
    ]
    vw = next((r for n, r in timed if n.startswith("VW")), None)
    for name, r in timed:
        ratio = f"{r['us_per_round'] / vw['us_per_round']:6.2f}" if vw else f"{'-':>6}"
        p50 = f"{r['p50_us'] / vw['p50_us']:8.2f}" if vw else f"{'-':>8}"
        print(
            f"{name:{width}}  {r['us_per_round']:9.1f}  {r['p50_us']:8.1f}  "
            f"{r['p99_us']:8.1f}  {r['online_error']:10.3f}  {ratio}  {p50}",
            flush=True,
        )
    hashed_table(
        args.hashed_bits,
        lambda b: args.hashed_rounds if b <= 16 else args.hashed_rounds_large,
        args.seed,
        args.repeat,
    )
    if args.soba_rounds:
        soba_table(args.soba_rounds, args.seed, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
