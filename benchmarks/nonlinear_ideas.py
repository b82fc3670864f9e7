"""More ways to close the gap to Vowpal Wabbit tuned in hindsight (issue
32), measured on the tuning streams only.

Part ``features`` (the 14 dense tuning streams of
``docs/results/nonlinear/README.txt``, three seeds): the nonlinear
candidate's learner, SquareCB with ``AdaGrad(0.1)`` (the library's compiled
learner), on other representations of the running-standardised rows ``u``
(``eval_nonlinear.running_standardise``), each against the candidate's own
``RFF``: ``D = 1000`` random Fourier features ``sqrt(2/D) cos(W^T u + b)``,
``W = sqrt(2 gamma) G`` with ``G`` Gaussian, ``gamma = 1/d``:

* ``ORF``: orthogonal random features (Yu et al., "Orthogonal random
  features", NeurIPS 2016): ``G`` is made of ``ceil(D/d)`` blocks, each a
  random orthogonal ``d x d`` matrix (QR of a Gaussian one, signs fixed by
  ``R``'s diagonal) whose columns are scaled by independent chi(d) norms, so
  that every column has the Gaussian column's length distribution. A lower
  variance approximation of the same kernel at the same ``D``.
* ``linear+RFF xc``: the columns ``c u`` beside the random features (a model
  linear in ``u`` plus a kernel part), ``c`` in {0.03, 0.1, 0.3, 1}: the
  features' scale sets their share of AdaGrad's capped step.

and three changes of the learner itself, played by a pure-NumPy SquareCB
(``squarecb_reference``: the library's IGW with the per-class clock,
``AdaGrad(0.1)`` and the step cap; ``--check`` verifies that its oracle
equals the library's on logged feedback), ranked against that same
reference on the same features (``sim RFF``):

* ``sim hit update``: on a rewarded round the label is known, so every
  other class's regressor also takes a step towards reward 0 (the round
  becomes a full-information round);
* ``sim log-loss oracle``: one multinomial logistic model ``p = softmax(W x)``
  whose ``p_a`` is the predicted reward of class ``a`` (IGW on ``p``); it
  learns by the log-likelihood of the revealed reward, ``-log p_a`` on a hit,
  ``-log(1 - p_a)`` on a miss (which raises every other class in proportion
  to ``p_c``), AdaGrad with rate 0.3 (0.1 and 1 were worse on clusters-k5
  and digits, the two streams it was tried on first);
* ``sim averaged play H=...``: the rounds played on averaged regressors,
  ``A_a <- A_a + beta (w_a - A_a)`` after each update of class ``a``,
  ``beta = max(1 / n_a, 1 / H)`` (a uniform average over the first ``H``
  updates, then an exponential one of horizon ``H``), the oracle's step on
  ``w_a`` as before.

Part ``selector`` (every tuning stream, dense and sparse, three seeds):
``OnlineSelector()`` at its defaults against its memory ``window`` (3,000 and
10,000 instead of 1,000) and its exploration share (``EpsilonGreedy(mu_1,
decay, min_epsilon)`` over mu_1 in {0.5, 0.3, 0.2, 0.1}, decay in {1/3,
1/2}, min_epsilon in {0.02, 0.01}): the defaults were chosen before the
nonlinear candidate was first among the candidates.

Parts ``default``, ``optimism``, ``retune``, ``explore``, ``linear-start``,
``bandwidth``, ``candidates`` and ``oracle`` (the 14 dense tuning streams;
``ALL_STREAMS`` on every one): the default selector's candidates with one
change each, as ``variants(part)`` lists them (README.txt items 7, 10-15
and 17); the parts in
``WITH_MARGIN`` are adopted only with the margins ``MARGIN_WORST`` and
``MARGIN_MEAN``. Each builds its candidates explicitly, so that its rows do
not change with the default. Rule (as in README.txt): smallest worst-stream
ratio of mean error to the baseline, then the mean ratio.

    python benchmarks/nonlinear_ideas.py --part PART --seeds 0 1 2 \\
        --out docs/results/nonlinear        # PART: one of PARTS
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np
from eval_nonlinear import rff, running_standardise
from streams import SUITES, load_stream

#: the dense tuning streams of README.txt
DENSE_TUNING = (
    "digits breast_cancer usps covtype imbalanced-k5 noisy-k8 raw-k3 raw-k4 "
    "raw-k2 clusters-k5 quantiles-k4 xor-k2-d6 kernel-k6-d16 moving-clusters-k4"
).split()

N_COMPONENTS = 1000


def orf(U: np.ndarray, n_components: int, seed: int) -> np.ndarray:
    """Orthogonal random features of the rows ``U`` (gamma = 1/d)."""
    d = U.shape[1]
    rng = np.random.RandomState(seed)
    blocks = []
    for _ in range(-(-n_components // d)):
        Q, R = np.linalg.qr(rng.normal(size=(d, d)))
        Q = Q * np.sign(np.diag(R))
        blocks.append(Q * np.sqrt(rng.chisquare(d, size=d)))
    W = np.sqrt(2.0 / d) * np.hstack(blocks)[:, :n_components]
    b = rng.uniform(0.0, 2.0 * np.pi, size=n_components)
    return np.sqrt(2.0 / n_components) * np.cos(U @ W + b)


def squarecb_error(Z, y, seed: int) -> float:
    from skbandit import SquareCB
    from skbandit.optim import AdaGrad

    est = SquareCB(step_size=AdaGrad(0.1), random_state=seed)
    est.partial_fit(Z, y, classes=np.unique(y))
    return est.n_mistakes_ / est.t_


def _igw(c, g, t, n_upd, k):
    """SquareCB's IGW distribution on the clipped predictions ``c``."""
    gam = np.minimum(300.0 * t**0.75, 300.0 * (k * (n_upd + 1.0)) ** 0.75)
    p = np.where(c < c[g], 1.0 / (k + gam * (c[g] - c)), 1.0 / k)
    p[g] = 0.0
    p[g] = 1.0 - p.sum()
    return p


def _greedy(s, rng):
    ties = np.flatnonzero(s == s.max())
    return ties[rng.integers(len(ties))] if len(ties) > 1 else ties[0]


def _adagrad_step(W, G, a, x, r, lr=0.1):
    """One capped AdaGrad step of regressor ``a`` towards ``r`` (the
    library's RegressionOracle.step with h = 1, step_cap = 1)."""
    e = W[a] @ x - r
    if e == 0.0:
        return
    g = e * x
    G[a] += g * g
    m = G[a] > 0.0
    q = np.sqrt(G[a][m])
    Q = np.sum(x[m] ** 2 / q)
    W[a, m] -= min(lr, 1.0 / Q) * g[m] / q


def _reference_state(Z, y, seed: int):
    """The generator, the class codes, the rows with a constant feature, and
    zero weights, squared-gradient sums and update counts."""
    codes = np.unique(y, return_inverse=True)[1]
    k = int(codes.max()) + 1
    X = np.hstack([Z, np.ones((Z.shape[0], 1))])
    zeros = np.zeros((k, X.shape[1]))
    return np.random.default_rng(seed), codes, X, zeros, zeros.copy(), np.zeros(k)


def squarecb_reference(
    Z, y, seed: int, *, hit_update: bool = False, horizon: int = 0
) -> float:
    """Pure-NumPy SquareCB(step_size=AdaGrad(0.1)) with intercept, optimistic
    start 1; with ``hit_update`` a rewarded round also steps every other
    class's regressor towards 0; with ``horizon`` H > 0 the rounds are played
    on averaged regressors, ``A_a <- A_a + beta (w_a - A_a)`` after each
    update of ``a``, ``beta = max(1 / n_a, 1 / H)`` (the oracle's own step
    still uses ``w_a``)."""
    rng, codes, X, W, G, n_upd = _reference_state(Z, y, seed)
    W[:, -1] = 1.0
    A = W.copy()
    n, k = X.shape[0], W.shape[0]
    mistakes = 0
    for t in range(n):
        s = (A if horizon else W) @ X[t]
        p = _igw(np.clip(s, 0.0, 1.0), _greedy(s, rng), t + 1.0, n_upd, k)
        a = rng.choice(k, p=p)
        r = float(a == codes[t])
        mistakes += r == 0.0
        n_upd[a] += 1
        _adagrad_step(W, G, a, X[t], r)
        if horizon:
            A[a] += max(1.0 / n_upd[a], 1.0 / horizon) * (W[a] - A[a])
        if hit_update and r == 1.0:
            for b in range(k):
                if b != a:
                    _adagrad_step(W, G, b, X[t], 0.0)
    return mistakes / n


def logloss_reference(Z, y, seed: int, lr: float = 0.3) -> float:
    """IGW on a multinomial logistic model learnt from the revealed reward."""
    rng, codes, X, W, G, n_upd = _reference_state(Z, y, seed)
    n, k = X.shape[0], W.shape[0]
    mistakes = 0
    for t in range(n):
        z = W @ X[t]
        pm = np.exp(z - z.max())
        pm /= pm.sum()
        p = _igw(pm, _greedy(pm, rng), t + 1.0, n_upd, k)
        a = rng.choice(k, p=p)
        r = float(a == codes[t])
        mistakes += r == 0.0
        n_upd[a] += 1
        if r == 1.0:
            dz = pm.copy()
            dz[a] -= 1.0
        else:
            dz = -pm[a] * pm / max(1.0 - pm[a], 1e-12)
            dz[a] = pm[a]
        g = np.outer(dz, X[t])
        G += g * g
        m = G > 0.0
        W[m] -= lr * g[m] / np.sqrt(G[m])
    return mistakes / n


def check_reference(seed: int = 0, n: int = 300) -> float:
    """Largest difference between the reference's oracle and the library's
    on the same logged rounds (uniform actions) of the digits stream."""
    from skbandit import SquareCB
    from skbandit.feedback import LoggedFeedback
    from skbandit.optim import AdaGrad

    X, y = load_stream("digits", seed, suite="tuning")
    Z, y = rff(X, N_COMPONENTS, 1.0, seed)[:n], y[:n]
    classes, codes = np.unique(y, return_inverse=True)
    k = len(classes)
    acts = np.random.default_rng(seed).integers(k, size=n)
    r = (acts == codes).astype(float)
    est = SquareCB(step_size=AdaGrad(0.1), random_state=seed)
    est.partial_fit(
        Z, LoggedFeedback(classes[acts], r, np.full(n, 1.0 / k)), classes=classes
    )
    Xb = np.hstack([Z, np.ones((n, 1))])
    W = np.zeros((k, Xb.shape[1]))
    W[:, -1] = 1.0
    G = np.zeros_like(W)
    for t in range(n):
        _adagrad_step(W, G, acts[t], Xb[t], r[t])
    return float(
        max(
            np.abs(est.coef_ - W[:, :-1]).max(), np.abs(est.intercept_ - W[:, -1]).max()
        )
    )


def rank(store: dict, seeds, base: str, keys) -> str:
    """README.txt's rule: each key's ratio of mean error (over ``seeds``) to
    ``base``'s on every stream, ranked by the worst stream, then the mean."""
    names = sorted({k.rsplit("/", 1)[0] for k in store})
    ranked = []
    for key in keys:
        ratios = {}
        for n in names:
            rows = [store[f"{n}/{s}"] for s in seeds]
            ratios[n] = np.mean([r[key] for r in rows]) / np.mean(
                [r[base] for r in rows]
            )
        ranked.append(
            (max(ratios.values()), float(np.mean(list(ratios.values()))), key, ratios)
        )
    ranked.sort(key=lambda r: r[:2])
    lines = [f"ratio of mean error to {base} (mean over seeds {list(seeds)})"]
    lines += [f"  worst {w:.3f}  mean {m:.3f}  {c}" for w, m, c, _ in ranked]
    lines.append("per stream: " + ", ".join(c for _, _, c, _ in ranked))
    for n in names:
        lines.append(f"  {n:22s}" + "".join(f"{r[n]:8.3f}" for *_, r in ranked))
    return "\n".join(lines)


#: the library's SquareCB on four representations, then the NumPy learners
FEATURE_KEYS = (
    "RFF",
    "ORF",
    "linear+RFF x0.03",
    "linear+RFF x0.1",
    "linear+RFF x0.3",
    "linear+RFF x1",
    "sim RFF",
    "sim hit update",
    "sim log-loss oracle",
    "sim averaged play H=30",
    "sim averaged play H=100",
    "sim averaged play H=300",
)


def _feature_job(key: str, U, Z, y, seed: int) -> float:
    """The online error of configuration ``key`` (FEATURE_KEYS)."""
    if key == "RFF":
        return squarecb_error(Z, y, seed)
    if key == "ORF":
        return squarecb_error(orf(U, N_COMPONENTS, seed), y, seed)
    if key.startswith("linear+RFF x"):
        c = float(key.rsplit("x", 1)[1])
        return squarecb_error(np.hstack([c * U, Z]), y, seed)
    if key == "sim log-loss oracle":
        return logloss_reference(Z, y, seed)
    if key.startswith("sim averaged play H="):
        return squarecb_reference(Z, y, seed, horizon=int(key.rsplit("=", 1)[1]))
    return squarecb_reference(Z, y, seed, hit_update=key == "sim hit update")


def features_part(store: dict, seeds, streams) -> None:
    from skbandit import OnlineSelector
    from skbandit.multiclass._selector import default_candidates

    for name in streams:
        for seed in seeds:
            row = store.setdefault(f"{name}/{seed}", {})
            X, y = load_stream(name, seed, suite="tuning")
            if "OnlineSelector(linear)" not in row:
                est = OnlineSelector(candidates=default_candidates(), random_state=seed)
                est.partial_fit(X, y, classes=np.unique(y))
                row["OnlineSelector(linear)"] = est.n_mistakes_ / est.t_
            U = running_standardise(X)
            Z = rff(X, N_COMPONENTS, 1.0, seed)
            for key in FEATURE_KEYS:
                if key not in row:
                    row[key] = _feature_job(key, U, Z, y, seed)
            print(name, seed, {k: round(v, 4) for k, v in row.items()}, flush=True)


def previous_nonlinear_candidate():
    """The nonlinear candidate before the row was put beside its features:
    running standardisation, ``RBFSampler(gamma="scale", n_components=1000)``,
    ``SquareCB(step_size=AdaGrad(0.1))``, seed 0 (as the default seeds it)."""
    from sklearn.kernel_approximation import RBFSampler

    from skbandit import BanditPipeline, SquareCB
    from skbandit.optim import AdaGrad
    from skbandit.preprocessing import OnlineStandardScaler

    return BanditPipeline(
        [
            ("onlinestandardscaler", OnlineStandardScaler()),
            ("rbfsampler", RBFSampler(gamma="scale", n_components=1000)),
            ("squarecb", SquareCB(step_size=AdaGrad(0.1))),
        ],
        random_state=0,
    )


#: the nonlinear candidate's initial_reward values of the part "optimism"
OPTIMISM = (1.0, 0.5, 0.3, 0.2, 0.1)

#: item 10's candidate (row weight 0.1 by default, AdaGrad(0.1), start 0.2)
ITEM10 = {"squarecb__initial_reward": 0.2, "squarecb__step_size__learning_rate": 0.1}

#: the nonlinear candidate's settings of the part "retune", each item 10's
#: with one change
RETUNE = {
    "R item 10": {},
    "R AdaGrad(0.02)": {"squarecb__step_size__learning_rate": 0.02},
    "R AdaGrad(0.03)": {"squarecb__step_size__learning_rate": 0.03},
    "R AdaGrad(0.05)": {"squarecb__step_size__learning_rate": 0.05},
    "R AdaGrad(0.2)": {"squarecb__step_size__learning_rate": 0.2},
    "R AdaGrad(0.4)": {"squarecb__step_size__learning_rate": 0.4},
    "R row x0.05": {"featureunion__transformer_weights": {"standardised": 0.05}},
    "R row x0.2": {"featureunion__transformer_weights": {"standardised": 0.2}},
}

#: the nonlinear candidate's exploration schedules of the part "explore",
#: InverseGap(scale, exponent) (the default: 300, 0.75), item 10's candidate
EXPLORE = tuple((scale, exp) for scale in (100.0, 300.0, 1000.0) for exp in (0.5, 0.75))

#: the part "explore" adopts a schedule only when it lowers the rule's worst
#: ratio by at least MARGIN_WORST and its mean ratio by at least MARGIN_MEAN
#: against the default's (declared before the part was run: README.txt
#: item 11's lesson)
MARGIN_WORST, MARGIN_MEAN = 0.02, 0.01


#: the start of the selector's two linear SquareCB candidates, part
#: "linear-start" (every tuning stream; adopted only with the margins above,
#: declared before the run)
LINEAR_START = (1.0, 0.5, 0.2)


#: the nonlinear candidate's oracle, part "oracle" (item 10's candidate; the
#: margins above, declared before the run): its updates weighted by 1 / p
#: (Vowpal Wabbit's mtr; off by default, chosen when the only candidates
#: were linear), and a step capped at half or a quarter of the error
ORACLE = {
    "W item 10": {},
    "W importance_weighted": {"squarecb__importance_weighted": True},
    "W step_cap=0.5": {"squarecb__step_cap": 0.5},
    "W step_cap=0.25": {"squarecb__step_cap": 0.25},
}


#: the kernel width of the candidate's random features, gamma = scale / d,
#: part "bandwidth" (item 10's candidate; the margins above, declared before
#: the run)
BANDWIDTH = (1.0, 0.5, 2.0)


#: the linear candidates left out in the part "candidates" (every tuning
#: stream; the margins above, declared before the run): fewer candidates
#: mix less, but each was chosen for streams where it leads
DROPS = ((), ("OffsetTree",), ("OffsetTree", "ConservativeOneVsAll"))


def _first(params: dict):
    """The setting that gives the nonlinear candidate (first) ``params``."""

    def edit(cands, d):
        cands[0].set_params(**params)
        return cands

    return edit


def _bandwidth(scale: float):
    def edit(cands, d):  # gamma = scale / d, d the row's width
        return _first({**ITEM10, "featureunion__rbfsampler__gamma": scale / d})(
            cands, d
        )

    return edit


def _linear_start(value: float):
    def edit(cands, d):
        for c in cands:
            if type(c).__name__ == "SquareCB":
                c.set_params(initial_reward=value)
        return cands

    return edit


def _without(names: tuple):
    return lambda cands, d: [c for c in cands if type(c).__name__ not in names]


def _previous(cands, d):
    return [previous_nonlinear_candidate(), *cands[1:]]


def variants(part: str) -> dict:
    """Each setting of a part of ``VARIANT_PARTS``: a function of the default
    selector's candidates (seeded as the default seeds them) and the row's
    width that returns the candidates to run."""
    from skbandit.exploration import InverseGap

    if part == "default":  # item 7, as it was adopted (start 1)
        return {
            "row beside the features": _first({"squarecb__initial_reward": 1.0}),
            "previous default": _previous,
        }
    if part == "optimism":
        return {
            f"O initial_reward={v}": _first(
                {
                    "squarecb__initial_reward": v,
                    "squarecb__step_size__learning_rate": 0.1,
                }
            )
            for v in OPTIMISM
        }
    if part == "retune":
        return {key: _first({**ITEM10, **ps}) for key, ps in RETUNE.items()}
    if part == "oracle":
        return {key: _first({**ITEM10, **ps}) for key, ps in ORACLE.items()}
    if part == "linear-start":
        return {f"L initial_reward={v}": _linear_start(v) for v in LINEAR_START}
    if part == "candidates":  # the default's candidates without some
        return {f"C without {', '.join(ns) or 'none'}": _without(ns) for ns in DROPS}
    if part == "bandwidth":
        return {f"B gamma={sc:g}/d": _bandwidth(sc) for sc in BANDWIDTH}
    return {
        f"E InverseGap({sc:g}, {ex:g})": _first(
            {**ITEM10, "squarecb__exploration": InverseGap(sc, exponent=ex)}
        )
        for sc, ex in EXPLORE
    }


def variants_part(store: dict, seeds, streams, settings: dict) -> None:
    """Each setting's candidates (``variants``) and the linear selector, on
    each stream and seed."""
    from skbandit import OnlineSelector
    from skbandit.multiclass._selector import default_candidates

    for name in streams:
        for seed in seeds:
            row = store.setdefault(f"{name}/{seed}", {})
            X, y = load_stream(name, seed, suite="tuning")
            for key, edit in settings.items():
                if key in row:
                    continue
                cands = default_candidates(X.shape[1], len(np.unique(y)))
                for c in cands:
                    c.set_params(random_state=0)
                cands = edit(cands, X.shape[1])
                est = OnlineSelector(candidates=cands, random_state=seed)
                est.partial_fit(X, y, classes=np.unique(y))
                row[key] = est.n_mistakes_ / est.t_
            if "OnlineSelector(linear)" not in row:
                est = OnlineSelector(candidates=default_candidates(), random_state=seed)
                est.partial_fit(X, y, classes=np.unique(y))
                row["OnlineSelector(linear)"] = est.n_mistakes_ / est.t_
            print(name, seed, row, flush=True)


def selector_part(store: dict, seeds) -> dict:
    from skbandit import OnlineSelector
    from skbandit.exploration import EpsilonGreedy

    configs: dict = {"OnlineSelector()": {}}
    for window in (3000, 10000):
        configs[f"S window={window}"] = {"window": window}
    for mu in (0.5, 0.3, 0.2, 0.1):
        for decay in (1 / 3, 1 / 2):
            for floor in (0.02, 0.01):
                rule = EpsilonGreedy(mu, decay=decay, min_epsilon=floor)
                configs[f"S EG({mu}, {decay:.2f}, {floor})"] = {"exploration": rule}
    for stream in SUITES["tuning"]:
        for seed in seeds:
            row = store.setdefault(f"{stream.name}/{seed}", {})
            X, y = load_stream(stream.name, seed, suite="tuning")
            for key, params in configs.items():
                if key not in row:
                    est = OnlineSelector(random_state=seed, **params)
                    est.partial_fit(X, y, classes=np.unique(y))
                    row[key] = est.n_mistakes_ / est.t_
            print(stream.name, seed, flush=True)
    return store


#: the parts that change the default's candidates (``variants``), those run
#: on every tuning stream, and those adopted only with the margins
VARIANT_PARTS = ("default", "optimism", "retune", "explore", "linear-start")
VARIANT_PARTS += ("bandwidth", "candidates", "oracle")
ALL_STREAMS = ("linear-start", "candidates")
WITH_MARGIN = ("explore", "linear-start", "bandwidth", "candidates", "oracle")
PARTS = ("features", "selector", *VARIANT_PARTS)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=PARTS, required=True)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--streams", nargs="*", default=list(DENSE_TUNING))
    ap.add_argument("--out", default=None)
    ap.add_argument(
        "--check",
        action="store_true",
        help="compare the NumPy reference's oracle with the library's",
    )
    args = ap.parse_args(argv)
    if args.check:
        print(f"reference vs library, largest difference: {check_reference():.3g}")
    path = args.out and os.path.join(args.out, f"ideas-{args.part}.json")
    store: dict = {}
    if path and os.path.exists(path):
        with open(path) as f:
            store = json.load(f)
    if args.part == "features":
        features_part(store, args.seeds, args.streams)
        lib, sims = FEATURE_KEYS[:6], FEATURE_KEYS[6:]
        texts = [
            rank(store, args.seeds, "OnlineSelector(linear)", lib),
            rank(store, args.seeds, "RFF", lib[1:]),
            rank(store, args.seeds, "sim RFF", sims[1:]),
        ]
    elif args.part in VARIANT_PARTS:
        settings = variants(args.part)
        streams = args.streams
        if args.part in ALL_STREAMS:  # the sparse tuning streams too
            streams = [st.name for st in SUITES["tuning"]]
        variants_part(store, args.seeds, streams, settings)
        keys = list(settings)
        base = {"explore": "E InverseGap(300, 0.75)", "default": keys[1]}.get(
            args.part, keys[0]
        )
        texts = [
            rank(store, args.seeds, "OnlineSelector(linear)", keys),
            rank(store, args.seeds, base, [k for k in keys if k != base]),
        ]
        if args.part in WITH_MARGIN:
            texts.append(
                f"adopted only with a margin of {MARGIN_WORST} on the worst ratio "
                f"and {MARGIN_MEAN} on the mean against {base}"
            )
    else:
        selector_part(store, args.seeds)
        keys = sorted({k for r in store.values() for k in r if k.startswith("S ")})
        texts = [rank(store, args.seeds, "OnlineSelector()", keys)]
    text = "\n\n".join(texts)
    print(text)
    if path:
        os.makedirs(args.out, exist_ok=True)
        with open(path, "w") as f:
            json.dump(store, f, indent=1, sort_keys=True)
        with open(path[:-5] + ".txt", "w") as f:
            f.write(
                " ".join(["python", "benchmarks/nonlinear_ideas.py"] + sys.argv[1:])
                + "\n\n"
                + text
                + "\n"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
