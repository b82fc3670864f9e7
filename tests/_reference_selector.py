"""Reference of ``OnlineSelector``, one round at a time in Python.

Written from the selector's docstring (and docs/algorithms.md), round ``t``
with uniforms ``(u1, u2)``, candidates ``c = 0 .. C - 1``, leader ``l``:

- ``P_c``: candidate ``c``'s marginal distribution of the row (ties averaged);
- ``Q = (1 - mix_t) P_l + mix_t * (beta_0 P_0 + ... + beta_{C-1} P_{C-1})``
  (summed in order), the shares ``beta`` uniform at the start, the exploration
  share ``mix_t = max(mix_min, mix t^-decay)`` (``mix`` when ``decay = 0``);
- ``a``: inverse-CDF draw from ``Q`` on ``u1``; reward ``r = 1[a == y]``;
- each candidate learns ``(a, g_c, q, r)`` with ``g_c`` its greedy label,
  exact ties broken by ``u2``, and ``q`` by its ``candidate_learning`` mode, with
  ``prob = Q(a)`` (or the logged propensity):
  ``"all"``: ``q = prob``; ``"capped"``: ``q = max(prob, P_c(a))``; ``"own"``:
  only when ``v prob < P_c(a)``, with ``q = P_c(a)``, where ``v = (u1 - Q(0) -
  ... - Q(b - 1)) / Q(b)`` (summed in order) for the action ``b`` drawn by
  ``u1``;
- the challenger on trial ``j``: the largest positive lower bound (below) at
  ``L = 1/2`` against the leader, none while ``lam < 1`` and ``w1 (1 - lam) <
  1/2``; while there is one and ``mix_t < mix``, the share is ``mix`` and the
  average ``(mix_t * avg + (mix - mix_t) * P_j) / mix``;
- ``z_c = r P_c(a) / Q(a)``; ``S = lam S + z``, ``G = lam G + z z^T``,
  ``R = max(lam R, z)`` (elementwise: the discounted observed range of ``z_c``),
  ``w1 = lam w1 + 1``, ``w2 = lam^2 w2 + 1``;
- on a rewarded round: ``delta_c = (S_c - S_l) / w1``,
  ``var_c = max(0, (G_cc - 2 G_cl + G_ll) / w1 - delta_c^2)``,
  ``n = w1^2 / w2``, the empirical Bernstein width
  ``h_c = sqrt(2 var_c L / n) + (R_c + R_l) L / (3 n)`` with ``L = log(1 / (1 -
  confidence))``, ``lcb_c = delta_c - h_c``;
  the first candidate with the largest ``lcb_c > 0`` becomes the leader; then
  ``beta_c = 1`` for the leader and each ``c`` whose upper bound (``+``) against
  it is positive, ``floor`` for the others, divided by their sum.

Two kinds of candidates: ``BanditronRef`` is a pure-NumPy Banditron (the
helpers of ``_reference.py``: its logged update ``w_g -= x``, and
``w_a += x / prob`` on a reward); ``EstimatorRef`` drives a skbandit learner
itself through its public distribution and its kernel's one-round twins
(``py_act`` for the scores and the tie-broken greedy label, ``py_learn``).
"""

from __future__ import annotations

import numpy as np
from _entry import Entry
from _reference import (
    _add,
    _row,
    _sub,
    epsilon_greedy,
    greedy_label,
    marginal_propensity,
    maximisers,
    sample,
    scores,
)
from sklearn.base import clone

from skbandit import Banditron, OnlineSelector, SquareCB
from skbandit._core._drivers import run_scores
from skbandit.exploration import EpsilonGreedy


class BanditronRef:
    """The Banditron in NumPy: epsilon-greedy play, the logged update."""

    def __init__(self, gamma: float, k: int, d: int):
        self.gamma, self.k = gamma, k
        self.W = np.zeros((k, d))

    def distribution(self, X, i, t):
        s = scores(self.W, *_row(X, i))
        return np.array(
            [
                marginal_propensity(
                    lambda g: epsilon_greedy(self.k, g, self.gamma), maximisers(s), b
                )
                for b in range(self.k)
            ]
        )

    def greedy(self, X, i, t, u2):
        return greedy_label(scores(self.W, *_row(X, i)), u2)

    def learn(self, X, i, t, a, g, prob, r):
        cols, vals = _row(X, i)
        _sub(self.W, g, cols, vals)
        if r == 1.0:
            _add(self.W, a, cols, vals / prob)


class EstimatorRef:
    """A fitted-from-scratch clone of a skbandit learner, driven one round at a
    time (dense rows)."""

    def __init__(self, est, classes, d: int):
        self.est = clone(est)
        self.est.n_features_in_ = d
        self.est._reset(np.asarray(classes), d)

    def distribution(self, X, i, t):
        # the definition: the mean over the tied greedy labels g of p_g
        kernel = self.est._make_kernel()
        s = np.empty((1, kernel.n_classes))  # the kernel's own sums
        row = np.ascontiguousarray(X[i], dtype=np.float64)
        empty = np.zeros(1, dtype=np.int32)
        run_scores(kernel, row, empty, empty, True, t, s)
        s = s[0]

        def dist(g):
            return kernel.py_distribution(s, t, g)

        return np.array(
            [marginal_propensity(dist, maximisers(s), b) for b in range(len(s))]
        )

    def greedy(self, X, i, t, u2):
        self._kernel = self.est._make_kernel()
        return self._kernel.py_act(X[i], t, 0.5, u2)[1]

    def learn(self, X, i, t, a, g, prob, r):
        self._kernel.py_learn(X[i], t, a, g, prob, r)


class SelectorState:
    """The selector's state: candidates (references above), sums, leader."""

    def __init__(
        self, candidates, *, mix, lam, L, floor, decay=0.0, mix_min=0.0, modes=None
    ):
        C = len(candidates)
        self.candidates, self.mix, self.lam, self.L = candidates, mix, lam, L
        self.modes = ["all"] * C if modes is None else list(modes)
        self.decay, self.mix_min = decay, mix_min
        self.floor, self.beta = floor, np.full(C, 1.0 / C)
        self.S, self.G, self.w = np.zeros(C), np.zeros((C, C)), np.zeros(2)
        self.R = np.zeros(C)
        self.lead, self.switches = 0, 0
        self.learnt = np.zeros(C, dtype=np.int64)  # rounds each candidate learnt
        self.trials = 0  # rounds played with a challenger on trial
        self.z = []  # each round's IPS scores z_c = r P_c(a) / prob


def selector_round(st, X, i, t, u1, u2, *, y=None, logged=None, learn=True):
    """Round ``t`` on row ``i``: returns ``(action, propensity)``. The reward is
    ``1[a == y]`` (simulation) or the logged ``(a, r, q)`` is learned instead
    (the update then uses ``q``: the selector's own rounds have ``q == Q(a)``)."""
    C = len(st.candidates)
    P = np.array([c.distribution(X, i, t) for c in st.candidates])
    total = np.zeros(P.shape[1])
    for c in range(C):
        total = total + st.beta[c] * P[c]
    mix = max(st.mix_min, st.mix * t**-st.decay) if st.decay else st.mix
    j = _ahead(st)
    if st.mix > mix and j >= 0:  # the decayed share goes to the challenger ahead
        total = (mix * total + (st.mix - mix) * P[j]) / st.mix
        mix = st.mix
        st.trials += learn
    Q = (1.0 - mix) * P[st.lead] + mix * total
    a = sample(Q, u1)
    if not learn:
        return a, Q[a]
    # the acceptance uniform: u1's position inside the drawn action's interval
    lo = 0.0
    for b in range(a):
        lo = lo + Q[b]
    v = (u1 - lo) / Q[a]
    if logged is None:
        r, prob = (1.0 if a == y else 0.0), Q[a]
    else:
        a, r, prob = logged
        a = int(a)
    greedy = [c.greedy(X, i, t, u2) for c in st.candidates]
    for j, (c, g) in enumerate(zip(st.candidates, greedy, strict=True)):
        pc = P[j, a]
        if st.modes[j] == "own":  # kept w.p. min(1, P_c(a) / prob), at P_c(a)
            if not v * prob < pc:
                continue
            c.learn(X, i, t, a, g, pc, r)
        elif st.modes[j] == "capped":  # every round, at max(prob, P_c(a))
            c.learn(X, i, t, a, g, max(prob, pc), r)
        else:
            c.learn(X, i, t, a, g, prob, r)
        st.learnt[j] += 1
    lam = st.lam
    st.S, st.G, st.R = lam * st.S, lam * st.G, lam * st.R
    st.w = np.array([lam * st.w[0] + 1.0, (lam * lam) * st.w[1] + 1.0])
    st.z.append(r * P[:, a] / prob)
    if r != 0.0:
        z = r * P[:, a] / prob
        st.S = st.S + z
        st.G = st.G + np.outer(z, z)
        st.R = np.maximum(st.R, z)
        _challenge(st)
    return a, Q[a]


def _ahead(st):
    """The challenger on trial: the largest positive lower bound at ``L = 1/2``
    against the leader (the first on ties), -1 when none, or while the discount
    has not halved the first round's weight (``lam < 1`` and ``w1 (1 - lam) <
    1/2``)."""
    if st.w[1] <= 0.0 or (st.lam < 1.0 and st.w[0] * (1.0 - st.lam) < 0.5):
        return -1
    n_eff = st.w[0] * st.w[0] / st.w[1]
    best, j = 0.0, -1
    for c in range(len(st.S)):
        if c == st.lead:
            continue
        lcb = _bound(st, c, st.lead, n_eff, -1.0, 0.5)
        if lcb > best:
            best, j = lcb, c
    return j


def _bound(st, c, lead, n_eff, sign, L=None):
    S, G, w = st.S, st.G, st.w
    L = st.L if L is None else L
    delta = (S[c] - S[lead]) / w[0]
    var = max((G[c, c] - 2.0 * G[c, lead] + G[lead, lead]) / w[0] - delta**2, 0.0)
    h = np.sqrt(2.0 * var * L / n_eff) + (st.R[c] + st.R[lead]) * L / (3.0 * n_eff)
    return delta + sign * h


def _challenge(st):
    C = len(st.S)
    n_eff = st.w[0] * st.w[0] / st.w[1]
    best, best_lcb = st.lead, 0.0
    for c in range(C):
        if c == st.lead:
            continue
        lcb = _bound(st, c, st.lead, n_eff, -1.0)
        if lcb > best_lcb:
            best, best_lcb = c, lcb
    if best != st.lead:
        st.lead, st.switches = best, st.switches + 1
    raw = [
        1.0 if c == st.lead or _bound(st, c, st.lead, n_eff, 1.0) > 0.0 else st.floor
        for c in range(C)
    ]
    total = 0.0
    for v in raw:
        total = total + v
    st.beta = np.array([v / total for v in raw])


def selector(
    X, y, U, candidates, *, mix, lam, L, floor, decay=0.0, mix_min=0.0, modes=None
):
    """Play the stream; returns the log and the final estimates."""
    n = X.shape[0]
    st = SelectorState(
        candidates,
        mix=mix,
        lam=lam,
        L=L,
        floor=floor,
        decay=decay,
        mix_min=mix_min,
        modes=modes,
    )
    actions = np.empty(n, dtype=np.int64)
    props = np.empty(n)
    ruled_out = 0  # rounds that ended with a candidate ruled out
    for i in range(n):
        actions[i], props[i] = selector_round(st, X, i, i + 1, *U[i], y=y[i])
        ruled_out += bool(st.beta.min() < st.beta.max())
    return {
        "actions": actions,
        "propensities": props,
        "S": st.S,
        "G": st.G,
        "R": st.R,
        "w": st.w,
        "leader": st.lead,
        "switches": st.switches,
        "beta": st.beta,
        "ruled_out": ruled_out,
        "learnt": st.learnt,
        "trials": st.trials,
        "values": discounted_means(np.array(st.z), st.lam),
    }


def discounted_means(z, lam):
    """The value estimates from the log of IPS scores ``z`` (rounds x
    candidates), written directly: ``sum_s lam^(n-s) z_s / sum_s lam^(n-s)``,
    every round counted (a round without reward scores 0)."""
    weights = lam ** np.arange(z.shape[0] - 1, -1, -1.0)
    return weights @ z / weights.sum()


# --------------------------------------------------------------------------------------
# The shared test suite's declaration of this module's learners (discovered by
# ``_registry.py``; see docs/adding_a_learner.md): the registry entries and the
# logged-feedback adapters of ``_reference_logged.delayed_schedule``.


# Online selection among learners: the default candidates, and two Banditrons
# with a fixed mixing weight 1 and no elimination (every round plays the
# candidates' average)
def _banditrons(*epsilons):
    """Candidates of the registry's variants: one Banditron per rate."""
    return tuple(Banditron(exploration=EpsilonGreedy(e)) for e in epsilons)


ENTRIES: list[Entry] = [
    Entry(
        OnlineSelector,
        params={},
        # the leader SquareCB() fits an intercept
        intercept=True,
        invalid_params=(
            ({"exploration": EpsilonGreedy(0.0)}, "epsilon in \\(0, 1\\]"),
            ({"exploration": EpsilonGreedy(1.5)}, "epsilon"),
            ({"exploration": "softmax"}, "candidates' own policies"),
            ({"exploration": 0.5}, "exploration"),
            ({"window": 0}, "window"),
            ({"confidence": 1.0}, "confidence"),
            ({"confidence": 0.5}, "confidence"),
            ({"eliminated_share": 0.0}, "eliminated_share"),
            ({"eliminated_share": 1.5}, "eliminated_share"),
            ({"exploration": EpsilonGreedy(0.5, decay=-0.1)}, "decay"),
            ({"exploration": EpsilonGreedy(0.5, decay=1.5)}, "decay in \\[0, 1\\]"),
            ({"exploration": EpsilonGreedy(0.5, min_epsilon=-0.1)}, "min_epsilon"),
            ({"candidates": []}, "candidates"),
            ({"candidates": [Banditron(exploration=EpsilonGreedy(2.0))]}, "epsilon"),
            ({"candidate_learning": "thinned"}, "candidate_learning"),
            # the defaults on the tests' 5-feature rows: five candidates
            ({"candidate_learning": ["own"] * 3}, "one per candidate \\(5\\)"),
            ({"candidate_learning": 1}, "candidate_learning"),
        ),
        valid_edge_params=(
            {"exploration": EpsilonGreedy(1.0)},
            {"exploration": "epsilon_greedy"},
            {"window": None},
            {"window": 1},
            {"confidence": 0.999},
            {"eliminated_share": 1.0},
            {"eliminated_share": 1e-6},
            {"exploration": EpsilonGreedy(0.5, decay=0.0)},
            {"exploration": EpsilonGreedy(0.5, decay=1.0)},
            {"exploration": EpsilonGreedy(0.5, decay=1 / 3, min_epsilon=0.0)},
            {"exploration": EpsilonGreedy(0.3, decay=1 / 3, min_epsilon=0.3)},
            {"exploration": EpsilonGreedy(0.01, decay=1 / 3, min_epsilon=0.02)},
            {"candidate_learning": "own"},
            {"candidate_learning": "capped"},
            {"candidate_learning": ["all", "own", "all", "own", "capped"]},
        ),
    ),
    Entry(
        OnlineSelector,
        params={
            "candidates": _banditrons(0.2, 0.6),
            "exploration": EpsilonGreedy(1.0),
            "eliminated_share": 1.0,
        },
        invalid_params=(({"exploration": EpsilonGreedy(0.0)}, "epsilon"),),
        variant="banditrons",
        check_params={
            "candidates": (Banditron(exploration=EpsilonGreedy(0.05)), SquareCB())
        },
    ),
    # each candidate learning mode (thinned to its own policy, capped weight,
    # every round) through the shared suite (logged feedback, rollback, chunks)
    Entry(
        OnlineSelector,
        params={
            "candidates": _banditrons(0.2, 0.6, 0.05),
            "exploration": EpsilonGreedy(0.5),
            "candidate_learning": ("own", "capped", "all"),
        },
        invalid_params=(
            ({"candidate_learning": ("own", "all")}, "one per candidate \\(3\\)"),
        ),
        variant="learning-modes",
    ),
]


def _modes(spec, n: int) -> list[str]:
    """``candidate_learning``: one mode for all candidates, or one each."""
    return [spec] * n if isinstance(spec, str) else list(spec)


def _logged_selector(params: dict, k: int):
    """The logged-feedback adapter of OnlineSelector (see ``_reference_logged``)."""

    from skbandit import OnlineSelector
    from skbandit.multiclass._selector import default_candidates

    p = {**OnlineSelector().get_params(), **params}  # the estimator's defaults
    window = p["window"]
    # the mixing rule: EpsilonGreedy(0.5, decay=1/3, min_epsilon=0.02) by
    # default (the docstring's), its floor capped at epsilon
    mixer = p["exploration"]
    if mixer is None or mixer == "epsilon_greedy":
        mixer = EpsilonGreedy(0.5, decay=1 / 3, min_epsilon=0.02)
    elif mixer.epsilon is None:
        mixer = clone(mixer).set_params(epsilon=0.5)

    def run(X, U, t0, state, logged):
        if state is None:
            cands = p["candidates"] or default_candidates(X.shape[1])
            for c in cands:  # the default nonlinear candidate: features of seed 0
                if "steps" in c.get_params() and c.random_state is None:
                    c.set_params(random_state=0)
            state = SelectorState(
                [EstimatorRef(c, np.arange(k), X.shape[1]) for c in cands],
                mix=mixer.epsilon,
                lam=1.0 if window is None else 1.0 - 1.0 / window,
                L=float(-np.log1p(-p["confidence"])),
                floor=p["eliminated_share"],
                decay=mixer.decay,
                mix_min=min(mixer.min_epsilon, mixer.epsilon),
                modes=_modes(p["candidate_learning"], len(cands)),
            )
        if logged is None:  # serve the first row (learn=False changes nothing)
            a, q = selector_round(state, X, 0, t0 + 1, *U[0], learn=False)
            return np.array([a]), np.array([q]), state
        for i in range(X.shape[0]):
            selector_round(
                state, X, i, t0 + i + 1, *U[i],
                logged=(logged[0][i], logged[1][i], logged[2][i]),
            )  # fmt: skip
        return None, None, state

    return run, lambda st: {
        "ips_sums_": st.S,
        "ips_cross_": st.G,
        "ips_range_": st.R,
        "ips_weights_": st.w,
        "leader_state_": np.array([st.lead, st.switches]),
        "mix_shares_": st.beta,
    }


LOGGED_ADAPTERS = {
    "OnlineSelector": _logged_selector,
}
