"""Latency of one live round: act on a row, then learn its revealed reward.

A deployed learner serves one request at a time: it picks an action for the
context, the system later observes the reward and the learner learns it. This
script times that loop one row at a time on the seeded SynSep-like stream of
``_harness.py`` (d = 400, k = 9), for:

* skbandit ``Banditron``: ``sample_actions(row)`` then
  ``partial_fit(row, LoggedFeedback(action, reward, propensity))``, on a dense
  float64 row (the fast single-row path) and on a CSR row (full validation);
  and, for reference, the simulator's one-row ``partial_fit(row, [label])``
  (scikit-learn's full validation on every call);
* river (per-row learning on dict features, when installed):
  ``SoftmaxRegression.predict_one`` then ``learn_one`` with the true label
  (full information, river has no bandit classifier), dicts built beforehand;
* Vowpal Wabbit's Python API (when installed): ``--cb_explore 9 --epsilon``
  ``predict`` on the row's line (the exploration pmf), an action drawn in
  Python, then ``learn`` on ``action:cost:probability | features``; the
  features part of each line is built beforehand, the label prefix is not.

The live loop and the simulator play the same actions (the on-policy
equivalence), so their online errors agree. Columns: us/round is the best
(minimum) over ``--repeat`` passes of the mean time per round of a pass of
``--rounds`` rounds (a fresh learner for each pass); p50 and p99 are
percentiles of the per-round times of the last pass (each round timed with
``perf_counter_ns``). Online err: played-action mistakes / rounds of the last
pass (river: its greedy mistakes). Timings on a shared machine are noisy: the
median (p50) is the most stable figure.

    python benchmarks/bench_live.py               # ~20 s
    python benchmarks/bench_live.py --rounds 20000 --repeat 5
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import scipy.sparse as sp
from _harness import GAMMA, N_CLASSES, N_FEATURES, machine_info, make_stream

from skbandit import Banditron, LoggedFeedback

CLASSES = np.arange(N_CLASSES)


def skbandit_logged(X, y, seed):
    """The live loop: sample_actions, reward, partial_fit(LoggedFeedback)."""
    clf = Banditron(gamma=GAMMA, random_state=seed)
    rows = [X[i : i + 1] for i in range(X.shape[0])]
    labels = y.tolist()

    def one(i):
        row = rows[i]
        action, propensity = clf.sample_actions(
            row, classes=CLASSES if i == 0 else None
        )
        reward = 1.0 if action[0] == labels[i] else 0.0
        clf.partial_fit(row, LoggedFeedback(action, [reward], propensity))
        return reward == 0.0

    return one


def skbandit_simulator(X, y, seed):
    clf = Banditron(gamma=GAMMA, random_state=seed)
    rows = [X[i : i + 1] for i in range(X.shape[0])]
    labels = [y[i : i + 1] for i in range(len(y))]

    def one(i):
        before = clf.n_mistakes_ if i else 0
        clf.partial_fit(rows[i], labels[i], classes=CLASSES if i == 0 else None)
        return clf.n_mistakes_ > before

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


def vw_case(X, y, seed):
    from vowpalwabbit import Workspace

    vw = Workspace(
        f"--cb_explore {N_CLASSES} --epsilon {GAMMA} --quiet --random_seed {seed}"
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


def time_case(make, X, y, seed, rounds, repeat):
    best, per_round, mistakes = float("inf"), None, 0
    for _ in range(repeat):
        one = make(X, y, seed)
        times = np.empty(rounds, dtype=np.int64)
        mistakes = 0
        clock = time.perf_counter_ns
        t0 = time.perf_counter()
        for i in range(rounds):
            s = clock()
            mistakes += one(i)
            times[i] = clock() - s
        best = min(best, (time.perf_counter() - t0) / rounds)
        per_round = times
    return {
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
    args = p.parse_args(argv)
    info = machine_info()
    print(f"CPU: {info['cpu']} (cpu_count={info['cpu_count']})")
    print(
        "  ".join(f"{k} {v or '(not installed)'}" for k, v in info["versions"].items())
    )
    Xs, y = make_stream(args.rounds, args.seed)
    Xd = Xs.toarray()
    cases = [
        ("skbandit Banditron live loop, dense row (fast path)", skbandit_logged, Xd),
        ("skbandit Banditron live loop, CSR row", skbandit_logged, Xs),
        (
            "skbandit Banditron partial_fit(row, [label]) (simulator)",
            skbandit_simulator,
            Xd,
        ),
    ]
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
    head = ("us/round", "p50 us", "p99 us", "online err")
    print(f"{'':{width}}  {head[0]:>9}  {head[1]:>8}  {head[2]:>8}  {head[3]:>10}")
    for name, make, X in cases:
        r = time_case(make, X, y, args.seed, args.rounds, args.repeat)
        print(
            f"{name:{width}}  {r['us_per_round']:9.1f}  {r['p50_us']:8.1f}  "
            f"{r['p99_us']:8.1f}  {r['online_error']:10.3f}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
