"""Nonlinear representations against Vowpal Wabbit tuned in hindsight.

On each stream of a suite of ``streams.py`` and each seed, one pass (one
``partial_fit`` call, ``classes`` given, learner ``random_state=seed``) of
``OnlineSelector()`` (the recommended default), the selector of the four
linear candidates (``OnlineSelector(linear)``, the default before the
nonlinear candidate) and ``SquareCB()``, with

* ``vw-tuned``: Vowpal Wabbit's smallest online error over the grid
  ``streams.VW_GRID`` on that stream and seed (chosen in hindsight, per stream
  and seed; interactions only where the row is small enough, see
  ``streams.vw_grid_for``), cached in ``--vw-cache``;
* ``full-info``: the full-information online error of the same
  representation (the smallest of a multiclass Perceptron, of scikit-learn's
  ``SGDClassifier(loss="log_loss")`` learning blocks of 20 rows, and of
  SquareCB's own oracle given every class's reward: its capped AdaGrad least
  squares on the one-hot label, and the same without the cap; predict, then
  learn): the limit bandit feedback approaches
  (``--row-beside``: also of the default's representation, the standardised
  row times ``ROW_WEIGHT`` beside the random features; the report's limit is
  the smallest over the representations).

The online error is mistakes / rounds (mean over seeds). Ratios are the mean
error over the mean of ``vw-tuned`` (the issue's measure). ``--rff`` rows are
played on a representation computed up front: each row standardised with the
running mean and variance of the rows before it (row 1 with mean 0 and
variance 1), then random Fourier features ``sqrt(2/D) cos(omega^T u + b)``,
``omega ~ N(0, 2 gamma I)``, ``b ~ U(0, 2 pi)`` (Rahimi and Recht 2007;
scikit-learn's ``RBFSampler`` with ``gamma = scale / d``).

    python benchmarks/eval_nonlinear.py --suite tuning --seeds 0 1 2 --out DIR \\
        --rff 500 1000 --rff-scale 1 2 --streams STREAM ...

``--candidate-components D`` adds the default selector with ``D`` random
features in its nonlinear candidate; ``--report ... --learner KEY`` reports
that key (or any stored learner) instead of ``OnlineSelector()``.

Rule that chose the representation of the default's nonlinear candidate (the
dense TUNING streams, three seeds): the configuration with the smallest
worst-stream ratio of mean error to ``OnlineSelector()`` (the linear default
then), ties broken by the mean ratio over streams (``rank``).
    python benchmarks/eval_nonlinear.py --suite validation --vw-cache F --out DIR
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np
import scipy.sparse as sp
from streams import SUITES, load_stream, vw_tuned


def running_standardise(X: np.ndarray) -> np.ndarray:
    """Row ``t`` scaled with the mean and (population) variance of rows
    ``< t``; a column of zero variance so far is only centred."""
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    csum = np.cumsum(X, axis=0)
    csq = np.cumsum(X * X, axis=0)
    cnt = np.arange(n, dtype=np.float64)[:, None]
    mean = np.zeros_like(X)
    var = np.ones_like(X)
    mean[1:] = csum[:-1] / cnt[1:]
    var[1:] = csq[:-1] / cnt[1:] - mean[1:] ** 2
    sd = np.sqrt(np.maximum(var, 0.0))
    sd[sd < 1e-12] = 1.0
    return (X - mean) / sd


def rff(X, n_components: int, scale: float, seed: int, U=None) -> np.ndarray:
    """Random Fourier features of the running-standardised rows (``U``: those
    rows, when the caller has them)."""
    from sklearn.kernel_approximation import RBFSampler

    if U is None:
        U = running_standardise(X.toarray() if sp.issparse(X) else X)
    sampler = RBFSampler(
        gamma=scale / U.shape[1], n_components=n_components, random_state=seed
    )
    return sampler.fit(U[:1]).transform(U)


#: the weight of the standardised row beside the random features in the
#: default's nonlinear candidate (``--row-beside``)
ROW_WEIGHT = 0.1

#: the regression oracles of SquareCB tried on the random features
RFF_OPTIMISERS = (("normalized", 0.5), ("adagrad", 0.1), ("adagrad", 0.03))


def _error(est, X, y) -> float:
    est.partial_fit(X, y, classes=np.unique(y))
    return est.n_mistakes_ / est.t_


def full_info_error(X, y, seed: int) -> float:
    """Smallest full-information online error of four online linear learners
    (the module docstring)."""
    from sklearn.linear_model import SGDClassifier

    from skbandit import MulticlassPerceptron

    classes = np.unique(y)
    perc = MulticlassPerceptron(random_state=seed).partial_fit(X, y, classes=classes)
    errs = [perc.n_mistakes_ / perc.t_]
    sgd = SGDClassifier(loss="log_loss", alpha=1e-5, random_state=seed)
    mistakes, block = 0, 20  # predict a block of 20 rows, then learn it
    sgd.partial_fit(X[:block], y[:block], classes=classes)
    mistakes = int(np.sum(y[:block] != classes[0]))
    for lo in range(block, len(y), block):
        Xb, yb = X[lo : lo + block], y[lo : lo + block]
        mistakes += int(np.sum(sgd.predict(Xb) != yb))
        sgd.partial_fit(Xb, yb)
    errs.append(mistakes / len(y))
    errs.append(full_info_oracle(X, y, classes)[0])
    errs.append(full_info_oracle(X, y, classes, capped=False)[0])
    return min(errs)


def full_info_oracle(
    X, y, classes, lr: float = 0.1, capped: bool = True
) -> tuple[float, np.ndarray]:
    """SquareCB's oracle given the full reward vector, its online error and
    its final weights (shape ``(k, d + 1)``, the intercept last): every
    class's regressor (with intercept, started at 0) takes the step of
    ``SquareCB(step_size=AdaGrad(lr))`` towards that class's reward
    ``1[a = y]`` on every row; the argmax is predicted first. The step
    (``RegressionOracle.step``, ``h = 1``, ``step_cap = 1``): with the error
    ``e = w_a . x - r``, the gradient ``g = e x`` and the squared-gradient
    sums ``G_a += g^2``, ``w_a -= min(lr, 1 / Q_a) g / sqrt(G_a)`` on the
    coordinates with ``G_a > 0``, ``Q_a = sum x^2 / sqrt(G_a)`` over them
    (AdaGrad's step capped where it would overshoot the target).
    ``tests/test_benchmarks.py`` checks it against SquareCB fed the same rows
    as logged feedback for every class. ``capped=False``: plain AdaGrad,
    ``w_a -= lr g / sqrt(G_a)`` with ``G_a`` started at ``1e-12`` (the fourth
    learner of ``full_info_error``; it overshoots on wide rows, but learns
    faster on some short streams)."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    k = len(classes)
    X = np.hstack([X, np.ones((n, 1))])
    W = np.zeros((k, X.shape[1]))
    G = np.zeros_like(W) if capped else np.full_like(W, 1e-12)
    codes = np.searchsorted(classes, y)
    mistakes = 0
    r = np.zeros(k)
    for i in range(n):
        x = X[i]
        s = W @ x
        mistakes += int(np.argmax(s) != codes[i])
        r[:] = 0.0
        r[codes[i]] = 1.0
        e = s - r
        g = e[:, None] * x
        G += g * g
        q = np.sqrt(G)
        pos = q > 0.0
        inv = np.divide(1.0, q, out=np.zeros_like(q), where=pos)
        Q = (x * x * inv).sum(axis=1)
        rate = np.full(k, lr)
        if capped:
            np.minimum(
                rate, np.divide(1.0, Q, out=np.full(k, np.inf), where=Q > 0), out=rate
            )
        W -= rate[:, None] * g * inv
    return mistakes / n, W


def _learners():
    from skbandit import OnlineSelector, SquareCB
    from skbandit.multiclass._selector import default_candidates

    return {
        "OnlineSelector()": lambda s: OnlineSelector(random_state=s),
        "OnlineSelector(linear)": lambda s: OnlineSelector(
            candidates=default_candidates(), random_state=s
        ),
        "SquareCB()": lambda s: SquareCB(random_state=s),
    }


#: the exploration schedules ``f(tau) = scale * tau**exponent`` of the
#: nonlinear candidate's SquareCB tried by ``--exploration-study`` (the default
#: candidate's is ``(300, 0.75)``, SquareCB's own default)
EXPLORATION_GRID = tuple(
    (scale, exponent)
    for scale in (100.0, 300.0, 1000.0, 3000.0)
    for exponent in (0.5, 0.75)
)


def _exploration_study(row: dict, X, y, seed: int) -> None:
    """``OnlineSelector`` over the default candidates with the nonlinear
    candidate's exploration replaced by each schedule of ``EXPLORATION_GRID``
    (keys ``OnlineSelector(nonlinear IG(scale,exponent))``)."""
    from skbandit import BanditPipeline, OnlineSelector
    from skbandit.exploration import InverseGap

    for scale, exponent in EXPLORATION_GRID:
        key = f"OnlineSelector(nonlinear IG({scale:g},{exponent:g}))"
        if key in row:
            continue
        cands = _seeded_default_candidates(X, y)
        if not isinstance(cands[0], BanditPipeline):  # no nonlinear candidate
            return
        cands[0].set_params(squarecb__exploration=InverseGap(scale, exponent=exponent))
        row[key] = _error(OnlineSelector(candidates=cands, random_state=seed), X, y)


#: the bandit learners ``--learner-study`` plays on the nonlinear candidate's
#: features, each at its defaults (SquareCB with AdaGrad 0.1, the candidate's
#: own learner, is the ``--rff 1000`` row ``RFF1000x1.0 SquareCB(adagrad,0.1)``)
LEARNER_STUDY = (
    "Gaptron",
    "SOBA",
    "ConservativeOneVsAll",
    "OffsetTree",
    "BanditPassiveAggressive",
    "Banditron",
    "PNewtron",
)


def _seeded_default_candidates(X, y) -> list:
    """``OnlineSelector()``'s candidates on ``X, y``, seeded as the default
    seeds them (``random_state=0``)."""
    from skbandit.multiclass._selector import default_candidates

    cands = default_candidates(X.shape[1], len(np.unique(y)))
    for c in cands:
        c.set_params(random_state=0)
    return cands


def _wide_candidate(row: dict, X, y, seed: int, D: int) -> None:
    """``OnlineSelector(nonlinear D=...)``: the default selector with ``D``
    random features in its nonlinear candidate (``--candidate-components``;
    where the default has no nonlinear candidate, the default itself)."""
    from skbandit import OnlineSelector
    from skbandit.multiclass._selector import default_candidates

    key = f"OnlineSelector(nonlinear D={D})"
    if key in row:
        return
    cands = _seeded_default_candidates(X, y)
    if len(cands) > len(default_candidates()):
        cands[0].set_params(featureunion__rbfsampler__n_components=D)
    row[key] = _error(OnlineSelector(candidates=cands, random_state=seed), X, y)


def _learner_study(row: dict, X, y, seed: int) -> None:
    """Each learner of ``LEARNER_STUDY`` at its defaults (``random_state=seed``)
    on the random features of the nonlinear candidate's representation,
    ``rff(X, 1000, 1.0, seed)`` (keys ``RFF1000x1.0 Name()``)."""
    import skbandit

    Z = None
    for name in LEARNER_STUDY:
        key = f"RFF1000x1.0 {name}()"
        if key not in row:
            Z = rff(X, 1000, 1.0, seed) if Z is None else Z
            row[key] = _error(getattr(skbandit, name)(random_state=seed), Z, y)


#: the widest rows ``--quadratic`` expands (``d (d + 3) / 2`` features)
QUADRATIC_MAX_FEATURES = 64


def quadratic(X) -> np.ndarray:
    """The running-standardised rows ``u`` and their degree-2 monomials
    ``u_i u_j`` (``i <= j``; scikit-learn's ``PolynomialFeatures(2,
    include_bias=False)``)."""
    from sklearn.preprocessing import PolynomialFeatures

    U = running_standardise(X.toarray() if sp.issparse(X) else X)
    return PolynomialFeatures(2, include_bias=False).fit_transform(U)


def _quadratic_study(
    row: dict, X, y, seed: int, full_info: bool, oracles=RFF_OPTIMISERS
) -> None:
    """SquareCB with each of the ``oracles`` on ``quadratic(X)``
    (keys ``QUAD SquareCB(oracle,rate)``) and, with ``full_info``, the
    full-information limit of those features (``full-info QUAD``)."""
    from skbandit import SquareCB

    Z = quadratic(X)
    for reg, lr in oracles:
        key = f"QUAD SquareCB({reg},{lr})"
        if key not in row:
            est = SquareCB(step_size=reg, random_state=seed)
            est.set_params(step_size__learning_rate=lr)
            row[key] = _error(est, Z, y)
    if full_info and "full-info QUAD" not in row:
        row["full-info QUAD"] = full_info_error(Z, y, seed)


def run(args) -> dict:
    store: dict = {}
    if args.out and os.path.exists(os.path.join(args.out, f"{args.suite}.json")):
        with open(os.path.join(args.out, f"{args.suite}.json")) as f:
            store = json.load(f)
    learners = _learners()
    for stream in SUITES[args.suite]:
        if args.streams and stream.name not in args.streams:
            continue
        for seed in args.seeds:
            X, y = load_stream(stream.name, seed, suite=args.suite)
            row = store.setdefault(f"{stream.name}/{seed}", {})
            dense = not sp.issparse(X)
            if args.order_study and "OnlineSelector(nonlinear last)" not in row:
                from skbandit import OnlineSelector

                cands = _seeded_default_candidates(X, y)
                row["OnlineSelector(nonlinear last)"] = _error(
                    OnlineSelector(candidates=cands[1:] + cands[:1], random_state=seed),
                    X,
                    y,
                )
            if args.exploration_study and dense:
                _exploration_study(row, X, y, seed)
            for D in args.candidate_components:
                _wide_candidate(row, X, y, seed, D)
            for name, make in learners.items():
                if name not in row:
                    t0 = time.perf_counter()
                    row[name] = _error(make(seed), X, y)
                    row[name + " s"] = time.perf_counter() - t0
            # the running-standardised rows, once (the random features'
            # input, the default's row block, the linear limit)
            U = None if not dense else running_standardise(X)
            if dense and args.rff:
                from skbandit import SquareCB

                for D in args.rff:
                    for scale in args.rff_scale:
                        Z = rff(X, D, scale, seed, U)
                        for reg, lr in args.oracles:
                            key = f"RFF{D}x{scale} SquareCB({reg},{lr})"
                            if key not in row:
                                est = SquareCB(
                                    step_size=reg,
                                    random_state=seed,
                                ).set_params(step_size__learning_rate=lr)
                                row[key] = _error(est, Z, y)
                        fkey = f"full-info RFF{D}x{scale}"
                        if args.full_info and fkey not in row:
                            row[fkey] = full_info_error(Z, y, seed)
                        # the default's representation: the row beside them
                        fkey = f"full-info RFF{D}x{scale}+row{ROW_WEIGHT}"
                        if args.full_info and args.row_beside and fkey not in row:
                            Zu = np.hstack([ROW_WEIGHT * U, Z])
                            row[fkey] = full_info_error(Zu, y, seed)
            if dense and args.learner_study:
                _learner_study(row, X, y, seed)
            if dense and args.quadratic and X.shape[1] <= QUADRATIC_MAX_FEATURES:
                _quadratic_study(row, X, y, seed, args.full_info, args.oracles)
            if args.full_info and "full-info linear" not in row:
                Xs = X if U is None else U
                row["full-info linear"] = full_info_error(Xs, y, seed)
            if args.vw_cache:
                row["vw-tuned"], row["vw-tuned args"] = vw_tuned(
                    stream.name, args.suite, seed, X, y, args.vw_cache
                )
            print(
                stream.name,
                seed,
                {k: round(v, 4) for k, v in row.items() if isinstance(v, float)},
                flush=True,
            )
            if args.out:
                os.makedirs(args.out, exist_ok=True)
                with open(os.path.join(args.out, f"{args.suite}.json"), "w") as f:
                    json.dump(store, f, indent=1, sort_keys=True)
    return store


def table(store: dict, seeds) -> str:
    names = sorted({k.rsplit("/", 1)[0] for k in store})
    cols = sorted(
        {
            c
            for r in store.values()
            for c, v in r.items()
            if isinstance(v, float) and not c.endswith(" s")
        }
    )
    # columns by number when a name does not fit, with a legend above
    legend = any(len(c) > 18 for c in cols)
    lines = [f"  [{i}] {c}" for i, c in enumerate(cols, 1)] if legend else []
    heads = [f"[{i}]" if legend else c for i, c in enumerate(cols, 1)]
    lines.append("stream".ljust(22) + "".join(h.rjust(20) for h in heads))
    for n in names:
        rows = [store[f"{n}/{s}"] for s in seeds if f"{n}/{s}" in store]
        means = {
            c: np.mean([r[c] for r in rows if c in r])
            for c in cols
            if all(c in r for r in rows)
        }
        vw = means.get("vw-tuned")
        cells = []
        for c in cols:
            if c not in means:
                cells.append("-".rjust(20))
            elif vw and c != "vw-tuned":
                cells.append(f"{means[c]:.4f} ({means[c] / vw:.2f})".rjust(20))
            else:
                cells.append(f"{means[c]:.4f}".rjust(20))
        lines.append(n.ljust(22) + "".join(cells))
    return "\n".join(lines)


def rank(
    store: dict, seeds, base: str = "OnlineSelector()", prefix: str = "RFF"
) -> str:
    """The representation rule: every configuration whose key starts with
    ``prefix``, its ratio of mean error to ``base``'s on each stream, ranked
    by the worst stream, then the mean over streams (smallest first)."""
    names = sorted({k.rsplit("/", 1)[0] for k in store})
    cfgs = sorted({c for r in store.values() for c in r if c.startswith(prefix)})
    ranked = []
    for c in cfgs:
        ratios = {}
        for n in names:
            rows = [store[f"{n}/{s}"] for s in seeds]
            if not all(c in r for r in rows):  # a sparse stream: no features
                continue
            ratios[n] = np.mean([r[c] for r in rows]) / np.mean([r[base] for r in rows])
        ranked.append((max(ratios.values()), np.mean(list(ratios.values())), c, ratios))
    ranked.sort(key=lambda r: r[:2])
    lines = [f"ratio of mean error to {base} (mean over seeds {list(seeds)})"]
    lines += [f"  worst {w:.3f}  mean {m:.3f}  {c}" for w, m, c, _ in ranked]
    w, m, c, ratios = ranked[0]
    lines.append(f"chosen: {c}")
    lines += [f"  {n:22s} {r:.3f}" for n, r in ratios.items()]
    return "\n".join(lines)


def report(
    store: dict, suite: str, seeds, vw_caches, learner: str, vw_label: str = "VW tuned"
) -> str:
    """``learner``'s mean error per stream against VW tuned in hindsight (the
    mean over the seeds whose VW grid has run; from ``vw_caches``; with the
    five configurations' cache of the vw-cbify streams, ``vw_label`` "VW best
    of 5") and the full-information limit (the smallest ``full-info`` error),
    with ratios."""
    vw: dict = {}
    for path in vw_caches:
        with open(path) as f:
            for key, row in json.load(f).items():
                ran = [e for e in row.values() if e is not None]
                if ran:
                    vw[key] = min(ran)
    names = sorted({k.rsplit("/", 1)[0] for k in store})
    head = f"{'stream':22s} {'error':>8s} {'linear':>8s} {'full-info':>9s}"
    lines = [head + f" {vw_label:>9s} {'/VW':>6s} {'/full':>6s} seeds(VW)"]
    vw_ratios, full_ratios, limit_ratios = {}, {}, {}
    for n in names:
        rows = [store[f"{n}/{s}"] for s in seeds if f"{n}/{s}" in store]
        err = np.mean([r[learner] for r in rows])
        lin = np.mean([r["OnlineSelector(linear)"] for r in rows])
        full = np.mean(
            [min(v for c, v in r.items() if c.startswith("full-info")) for r in rows]
        )
        with_vw = [s for s in seeds if f"{suite}/{n}/{s}" in vw]
        line = f"{n:22s} {err:8.4f} {lin:8.4f} {full:9.4f}"
        if with_vw:
            v = np.mean([vw[f"{suite}/{n}/{s}"] for s in with_vw])
            e = np.mean([store[f"{n}/{s}"][learner] for s in with_vw])
            vw_ratios[n] = e / v
            limit_ratios[n] = (
                np.mean(
                    [
                        min(
                            x
                            for c, x in store[f"{n}/{s}"].items()
                            if c.startswith("full-info")
                        )
                        for s in with_vw
                    ]
                )
                / v
            )
            line += f" {v:9.4f} {e / v:6.2f}"
        else:
            line += f" {'-':>9s} {'-':>6s}"
        full_ratios[n] = err / full
        lines.append(line + f" {err / full:6.2f} {len(with_vw)}")
    if vw_ratios:
        r = np.array(list(vw_ratios.values()))
        lines.append(
            f"ratio to {vw_label}: median {np.median(r):.2f}, worst {r.max():.2f} "
            f"({len(r)} streams)"
        )
        q = np.array(list(limit_ratios.values()))
        lines.append(
            f"the full-information limit itself against {vw_label} (what a learner "
            f"at that limit on every stream would score): median {np.median(q):.2f}, "
            f"{int(np.sum(q <= 0.60))} of {len(q)} streams at or below 0.60"
        )
    f = np.array(list(full_ratios.values()))
    lines.append(
        f"within 1.25x of the full-information limit: {int(np.sum(f <= 1.25))} "
        f"of {len(f)} streams"
    )
    # the dense streams (those with random-feature runs: ``--rff``), the
    # issue's measure
    dense = [n for n in names if any(c.startswith("RFF") for c in store[f"{n}/0"])]
    if dense:
        r = [vw_ratios[n] for n in dense if n in vw_ratios]
        f = np.array([full_ratios[n] for n in dense])
        lines.append(
            f"dense streams ({len(dense)}): ratio to {vw_label} median "
            f"{np.median(r):.2f}, worst {max(r):.2f} ({len(r)} with VW); within "
            f"1.25x of the full-information limit on {int(np.sum(f <= 1.25))}"
        )
    return "\n".join(lines)


def _oracle(text: str) -> tuple[str, float]:
    """``RULE:RATE`` (a SquareCB ``step_size`` name and its learning rate)."""
    rule, _, rate = text.partition(":")
    if rule not in ("adagrad", "normalized", "constant") or not rate:
        raise argparse.ArgumentTypeError(f"expected RULE:RATE, got {text!r}")
    return rule, float(rate)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--suite", default="tuning", choices=sorted(SUITES))
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--streams", nargs="*", default=None)
    p.add_argument("--rff", type=int, nargs="*", default=[])
    p.add_argument("--rff-scale", type=float, nargs="+", default=[1.0])
    p.add_argument(
        "--oracles",
        type=_oracle,
        nargs="+",
        default=list(RFF_OPTIMISERS),
        metavar="RULE:RATE",
        help="SquareCB's regression oracles on the features (default: "
        "RFF_OPTIMISERS), e.g. adagrad:0.3 normalized:0.5",
    )
    p.add_argument("--full-info", action="store_true")
    p.add_argument(
        "--row-beside",
        action="store_true",
        help="with --full-info, also the full-information error of the "
        "standardised row (times ROW_WEIGHT) beside the random features",
    )
    p.add_argument(
        "--order-study",
        action="store_true",
        help="also the defaults with the nonlinear candidate last",
    )
    p.add_argument(
        "--candidate-components",
        type=int,
        nargs="+",
        default=[],
        metavar="D",
        help="also the default selector with D random features in its "
        "nonlinear candidate (key 'OnlineSelector(nonlinear D=...)')",
    )
    p.add_argument(
        "--learner",
        default="OnlineSelector()",
        help="the learner --report reports (a key of the stored rows)",
    )
    p.add_argument(
        "--quadratic",
        action="store_true",
        help="also SquareCB on the degree-2 monomials of the standardised rows "
        "(rows of at most QUADRATIC_MAX_FEATURES columns)",
    )
    p.add_argument(
        "--exploration-study",
        action="store_true",
        help="also the defaults with the nonlinear candidate's exploration "
        "schedule from EXPLORATION_GRID",
    )
    p.add_argument(
        "--learner-study",
        action="store_true",
        help="also every learner of LEARNER_STUDY on the nonlinear candidate's "
        "features (D = 1000, gamma = 1/d)",
    )
    p.add_argument("--vw-cache", default=None)
    p.add_argument("--out", default=None)
    p.add_argument(
        "--vw-label",
        default="VW tuned",
        help="the VW column's name in --report (e.g. 'VW best of 5')",
    )
    p.add_argument(
        "--report",
        nargs="*",
        default=None,
        metavar="VW_CACHE",
        help="print the report of --out's results against these VW caches",
    )
    a = p.parse_args(argv)
    if a.report is not None:
        with open(os.path.join(a.out, f"{a.suite}.json")) as f:
            store = json.load(f)
        print(report(store, a.suite, a.seeds, a.report, a.learner, a.vw_label))
        return 0
    store = run(a)
    print(table(store, a.seeds))
    if a.rff:
        print(rank(store, a.seeds))
    if a.quadratic:
        print(rank(store, a.seeds, "OnlineSelector(linear)", "QUAD"))
    if a.learner_study:
        print(rank(store, a.seeds, "OnlineSelector(linear)", "RFF1000x1.0 "))
    if a.exploration_study:
        print(
            rank(
                store, a.seeds, "OnlineSelector(linear)", "OnlineSelector(nonlinear IG"
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
