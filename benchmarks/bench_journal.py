"""What the undo journal costs a batch ``partial_fit``: every learner with and
without it, side by side in one run.

The failure guarantee of a call is kept by an undo journal
(``skbandit/_base/_transaction.py``, module docstring): each kernel records the
old value of every state entry before it writes it, the pass checks the entries
each row wrote, and a failed block is replayed backwards. Here each learner
plays one ``partial_fit`` call over the seeded SynSep-like stream of
``_harness.py`` (d = 400, k = 9; CSR and dense) three times per pass, in turn:

* ``default``: the library as it is (a batch call on a model this small rolls
  its blocks back by a copy of the state, at most 1/16 of the block's input);
* ``journal``: every block rolled back by the undo journal (``_COPY_RATIO``
  set to infinity), as a call on a large model or a one-row call is;
* ``none``: the same call with the kernels given no journal and no copy made
  (nothing recorded or checked: no rollback; for measurement only).

All play the same rounds (the final states are checked equal). Columns: the
best wall time of ``--repeat`` passes of each, and the ratios of the default
and journal times to ``none`` (the price of the failure guarantee).
``SOBA(covariance="full")`` runs on the first ``--full-rounds`` rows (its round
is O((kd)^2)).

    python benchmarks/bench_journal.py              # ~1 min
    python benchmarks/bench_journal.py --rounds 200000 --repeat 5
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from _harness import GAMMA, N_CLASSES, machine_info, make_stream

import skbandit._base._transaction as transaction
import skbandit.base
from skbandit import (
    SOBA,
    Banditron,
    ConservativeOneVsAll,
    Gaptron,
    MulticlassPerceptron,
    OffsetTree,
    OnlineSelector,
    PNewtron,
    SeparableOneVsAll,
    SquareCB,
)
from skbandit.exploration import EpsilonGreedy

LEARNERS = {
    "Banditron": lambda s: Banditron(exploration=EpsilonGreedy(GAMMA), random_state=s),
    "MulticlassPerceptron": lambda s: MulticlassPerceptron(random_state=s),
    "SOBA diag": lambda s: SOBA(random_state=s),
    "SOBA full": lambda s: SOBA(covariance="full", random_state=s),
    "PNewtron": lambda s: PNewtron(random_state=s),
    "Gaptron": lambda s: Gaptron(random_state=s),
    "ConservativeOneVsAll": lambda s: ConservativeOneVsAll(random_state=s),
    "SeparableOneVsAll": lambda s: SeparableOneVsAll(random_state=s),
    "OffsetTree": lambda s: OffsetTree(random_state=s),
    "SquareCB": lambda s: SquareCB(random_state=s),
    "OnlineSelector": lambda s: OnlineSelector(random_state=s),
}


# True while a "none" pass runs (see _play_blocks below)
DETACHED = False
_PLAY_BLOCKS = skbandit.base.BaseBanditClassifier._play_blocks


class _Detached:
    """The pass ``play`` (``_LabelPass``, ``_LoggedPass``) whose kernel gets
    no journal: ``set_journal(None)`` just before each block is run."""

    def __init__(self, play):
        self.play = play

    def __getattr__(self, name):
        return getattr(self.play, name)

    def run(self, kernel, block, uniforms):
        kernel.set_journal(None)
        return self.play.run(kernel, block, uniforms)


def _play_blocks(self, X, rows, play, *args, **kwargs):
    """``_play_blocks`` whose kernels get no journal while ``DETACHED`` (the
    block loop itself is the library's)."""
    play = _Detached(play) if DETACHED else play
    return _PLAY_BLOCKS(self, X, rows, play, *args, **kwargs)


MODES = ("default", "journal", "none")


def _play(make, X, y, seed, mode: str) -> tuple[float, object]:
    global DETACHED
    est = make(seed)
    ratio = transaction._COPY_RATIO
    DETACHED = mode == "none"
    if mode != "default":
        transaction._COPY_RATIO = float("inf")
    try:
        t0 = time.perf_counter()
        est.partial_fit(X, y, classes=np.arange(N_CLASSES))
        return time.perf_counter() - t0, est
    finally:
        DETACHED = False
        transaction._COPY_RATIO = ratio


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=50_000)
    p.add_argument("--full-rounds", type=int, default=2_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    base = skbandit.base.BaseBanditClassifier
    base._play_blocks = _play_blocks  # (inherited: deleted again below)
    try:
        _table(args)
    finally:  # (the tests run this script in their own interpreter)
        del base._play_blocks
    return 0


def _table(args) -> None:
    info = machine_info()
    print(f"CPU: {info['cpu']} (cpu_count={info['cpu_count']})")
    print("  ".join(f"{k} {v or '-'}" for k, v in info["versions"].items()))
    print(
        f"SynSep-like stream, one partial_fit call of {args.rounds} rounds "
        f"(SOBA full: {args.full_rounds}), best of {args.repeat} passes each\n"
    )
    head = ("default s", "journal s", "none s", "default/none", "journal/none")
    for kind in ("csr", "dense"):
        X, y = make_stream(args.rounds, args.seed, dense=kind == "dense")
        print(f"{kind:22}  " + "  ".join(f"{h:>12}" for h in head))
        for name, make in LEARNERS.items():
            n = args.full_rounds if name == "SOBA full" else args.rounds
            Xn, yn = X[:n], y[:n]
            best = dict.fromkeys(MODES, float("inf"))
            ests = {}
            for _ in range(args.repeat):
                for mode in MODES:
                    seconds, ests[mode] = _play(make, Xn, yn, args.seed, mode)
                    best[mode] = min(best[mode], seconds)
            same = all(
                all(
                    np.array_equal(a, b)
                    for a, b in zip(
                        _arrays(ests[m]), _arrays(ests["none"]), strict=True
                    )
                )
                for m in ("default", "journal")
            )
            cells = (
                f"{best['default']:.3f}",
                f"{best['journal']:.3f}",
                f"{best['none']:.3f}",
                f"{best['default'] / best['none']:.2f}",
                f"{best['journal'] / best['none']:.2f}"
                + ("" if same else " DIFFERENT"),
            )
            print(f"{name:22}  " + "  ".join(f"{c:>12}" for c in cells), flush=True)
        print()


def _arrays(est):
    for learner in (est, *getattr(est, "candidates_", ())):
        for name in learner._state_attrs:
            value = getattr(learner, name)
            if isinstance(value, np.ndarray):
                yield value


if __name__ == "__main__":
    sys.exit(main())
