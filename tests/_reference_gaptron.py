"""Pure-Python/NumPy reference of Gaptron (van der Hoeven 2020), per docs/algorithms.md.

Written line by line from the specification, independently of the compiled
kernel, with the same uniforms (``_reference.py`` rules 1, 2, 4 and 6: scores
summed sequentially, greedy label ``min(int(u2 * m), m - 1)``-th exact maximiser,
inverse-CDF sampling on ``u1``, logged propensity = the marginal over tied greedy
labels). Per round, with scores ``s``, greedy label ``g`` and ``k`` classes:

1. Gap map [rec]: top margin ``m* = s_g - max_{r != g} s_r``; logistic
   ``min(1, log2 Z)`` with ``Z = sum_r exp(s_r - max s)`` (``= -log2`` of the top
   softmax probability); hinge ``max(0, 1 - 2 k m*)``; smooth hinge
   ``max(0, 1 - m*)^2`` (0 when ``m* >= 1``).
2. Policy: ``u = gamma + (1 - gamma) a``; ``p = full(k, u / k)``, ``p[g] += 1 - u``
   (the same as ``(1 - gamma) p' + gamma / k`` with ``p' = (1 - a) e_g + a / k``).
3. Gradient wrt the scores for label ``y``, ``c`` = first ``argmax_{r != y} s_r``,
   ``m = s_y - s_c``: logistic ``softmax(s)_r / ln 2`` and ``(softmax(s)_y - 1) /
   ln 2`` at ``y``; hinge ``e_c - e_y`` when ``m < 1``, except zero when ``g = y``
   and ``a = 0``; smooth hinge ``coef (e_y - e_c)`` with ``coef = -2`` (m <= 0) or
   ``-2 (1 - m)`` (0 < m < 1), zero when ``m >= 1``.
4. Full information: ``y`` is the true label, weight ``w = 1``. Bandit: only when the
   played action ``a`` is right, with ``y = a`` and ``w = 1 / p_g(a)``.
5. ``G += (||grad||^2 * ||x||^2) * (w * w)``; step ``eta_t = eta`` or, AdaGrad-norm,
   ``eta / sqrt(2 (1e-8 + G))``; ``W[r] += -(eta_t * w * grad_r) * x`` for every
   ``r`` with ``grad_r != 0`` (each stored entry in turn, ``np.add.at``).
6. ``||x||^2``: sum of squares of the row as a vector, summed in stored order over
   the first occurrences of the columns (a repeated CSR column counts once, with
   the sum of its values).

Exponentials and logarithms are Python's ``math.exp``/``math.log``/``math.log2``
(the C library's, as the kernel calls), in scalar loops in class order, so the
logistic loss is reproduced bit for bit too (on one platform and C library).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from _entry import Entry
from _reference import (
    Trace,
    _row,
    explore_round,
    logged_round,
    scores,
)
from sklearn.base import clone

from skbandit import Gaptron
from skbandit.exploration import RULES, EpsilonGreedy, GapMap, Greedy
from skbandit.optim import AdaGrad, Constant, Normalized

LN2 = math.log(2.0)
LOSSES = ("logistic", "hinge", "smooth_hinge")


def log_partition(s: np.ndarray) -> tuple[float, float]:
    """(Z = sum_r exp(s_r - max s) in class order, max s)."""
    mx = float(s[0])
    for v in s[1:]:
        if v > mx:
            mx = float(v)
    z = 0.0
    for v in s:
        z = z + math.exp(float(v) - mx)
    return z, mx


def max_other(s: np.ndarray, c: int) -> float:
    return float(max(s[r] for r in range(len(s)) if r != c))


def argmax_other(s: np.ndarray, c: int) -> int:
    best = None
    for r in range(len(s)):
        if r != c and (best is None or s[r] > s[best]):
            best = r
    return best


def gap_map(loss: str, s: np.ndarray, g: int) -> float:
    k = len(s)
    if loss == "logistic":
        z, _ = log_partition(s)
        return min(1.0, math.log2(z))
    m = float(s[g]) - max_other(s, g)
    if loss == "hinge":
        return max(0.0, 1.0 - (2.0 * k) * m)
    if m >= 1.0:
        return 0.0
    return (1.0 - m) * (1.0 - m)


def distribution(loss: str, s: np.ndarray, g: int, gamma: float) -> np.ndarray:
    k = len(s)
    u = gamma + (1.0 - gamma) * gap_map(loss, s, g)
    p = np.full(k, u / k)
    p[g] += 1 - u
    return p


def gradient(loss: str, s: np.ndarray, g: int, y: int) -> np.ndarray:
    """Gradient of the surrogate loss wrt the scores (zeros: no update)."""
    k = len(s)
    grad = np.zeros(k)
    if loss == "logistic":
        z, mx = log_partition(s)
        for r in range(k):
            grad[r] = (math.exp(float(s[r]) - mx) / z) / LN2
        grad[y] = (math.exp(float(s[y]) - mx) / z - 1.0) / LN2
        return grad
    c = argmax_other(s, y)
    m = float(s[y]) - float(s[c])
    if m >= 1.0:
        return grad
    if loss == "hinge":
        if g == y and gap_map(loss, s, g) == 0.0:
            return grad
        coef = -1.0
    elif m <= 0.0:
        coef = -2.0
    else:
        coef = -2.0 * (1.0 - m)
    grad[y] = coef
    grad[c] = -coef
    return grad


def loss_value(loss: str, s: np.ndarray, g: int, y: int) -> float:
    """The surrogate loss (used by the property tests)."""
    if loss == "logistic":
        z, mx = log_partition(s)
        return (math.log(z) - (float(s[y]) - mx)) / LN2
    m = float(s[y]) - max_other(s, y)
    if m >= 1.0:
        return 0.0
    if loss == "hinge":
        if g == y and gap_map(loss, s, g) == 0.0:
            return 0.0
        return 1.0 - m
    if m <= 0.0:
        return 1.0 - 2.0 * m
    return (1.0 - m) * (1.0 - m)


def sq_norm(cols: np.ndarray | None, vals: np.ndarray, d: int) -> float:
    """||x||^2 summed in order over the row's entries (``_row`` hands CSR rows
    over canonical: each column once)."""
    acc = 0.0
    for v in vals:
        acc = acc + float(v) * float(v)
    return acc


def full_information_step(loss: str, k: int, X: float) -> float:
    xx = X * X
    return {
        "logistic": 2.0 * math.log(2.0) / (k * xx),
        "hinge": 1.0 / (2.0 * k * xx),
        "smooth_hinge": 1.0 / (4.0 * k * xx),
    }[loss]


class GaptronTrace(NamedTuple):
    W: np.ndarray
    played: np.ndarray
    greedy: np.ndarray
    rewards: np.ndarray
    propensities: np.ndarray
    grad_sq_sum: float
    n_large: int
    # the accumulator of the averaged iterate: sum over rounds of (t - 1) * update
    A: np.ndarray | None = None


def gaptron(
    X,
    y,
    U: np.ndarray,
    k: int,
    *,
    loss: str,
    feedback: str,
    exploration,
    eta: float,
    adagrad: bool = False,
    x_norm_bound: float = 1.0,
    W0: np.ndarray | None = None,
    G0: float = 0.0,
    A0: np.ndarray | None = None,
    t0: int = 0,
    logged=None,
) -> GaptronTrace:
    """Gaptron with the resolved exploration rule and ``eta`` (AdaGrad-norm
    scale if ``adagrad``); the rule's distribution comes from its NumPy twin
    (Gaptron's own: ``GapMap(gamma, loss=loss)``, whose gap map ``gap_map``
    above checks independently); ``logged`` (actions, rewards, propensities)
    learns logged rounds (bandit feedback, ``logged_round``). ``A`` gets each
    update times ``s - 1`` for the global round ``s`` (``t0`` rounds before
    the call)."""
    n, d = X.shape
    assert U.shape == (n, 2) and len(y) == n
    W = np.zeros((k, d)) if W0 is None else np.array(W0, dtype=np.float64)
    G = float(G0)
    A = np.zeros((k, d)) if A0 is None else np.array(A0, dtype=np.float64)
    bound_sq = x_norm_bound**2 * (1.0 + 1e-9)  # counted beyond rounding
    played = np.empty(n, dtype=np.int64)
    greedy = np.empty(n, dtype=np.int64)
    rewards = np.empty(n, dtype=np.int8)
    props = np.empty(n, dtype=np.float64)
    n_large = 0
    for t in range(n):
        cols, vals = _row(X, t)
        s = scores(W, cols, vals)
        a, g, p, props[t] = explore_round(exploration, s, t0 + t + 1, *U[t])
        if logged is None:
            reward, prob = a == y[t], p[a]  # bandit: the only use of the label
        else:
            a, reward, prob = logged_round(logged, t, a, p[a], props[t])
        xsq = sq_norm(cols, vals, d)
        n_large += xsq > bound_sq
        if feedback == "full":
            label, w = int(y[t]), 1.0
        elif reward:
            label, w = a, 1.0 / prob
        else:
            label = None
        if label is not None:
            grad = gradient(loss, s, g, label)
            if grad.any():
                gn = 0.0
                for v in grad:
                    gn = gn + v * v
                G = G + (gn * xsq) * (w * w)
                eta_t = eta / math.sqrt(2.0 * (1e-8 + G)) if adagrad else eta
                scale = eta_t * w
                before = float(t0 + t)  # (global round index) - 1
                for r in range(k):
                    if grad[r] != 0.0:
                        coef = -(scale * grad[r])
                        if cols is None:
                            W[r] += coef * vals
                            A[r] += (before * coef) * vals
                        else:
                            np.add.at(W[r], cols, coef * vals)
                            np.add.at(A[r], cols, (before * coef) * vals)
        played[t], greedy[t], rewards[t] = a, g, reward
    return GaptronTrace(W, played, greedy, rewards, props, G, n_large, A)


def resolve(loss, feedback, k, *, exploration=None, step_size="adagrad",
            x_norm_bound=1.0, n_rounds=None):  # fmt: skip
    """(rule, eta, adagrad) from the estimator's parameters, as documented: the
    exploration rule (``GapMap`` by default) with the "auto" gamma as its
    ``None`` epsilon and ``loss`` as its ``None`` loss; the step from
    ``step_size`` ("adagrad": AdaGrad-norm of scale 1024; "constant": the
    theory's step; an object: its learning_rate, AdaGrad-norm for AdaGrad)."""
    X = float(x_norm_bound)
    if exploration is None or isinstance(exploration, str):
        rule = RULES[exploration or "gap_map"]()
    else:
        rule = clone(exploration)
    params = rule.get_params()
    gamma = params.get("epsilon", "auto")
    if gamma is None or gamma == "auto":
        if feedback == "full":
            gamma = 0.0
        elif n_rounds is None:
            gamma = 0.125  # the documented default without n_rounds
        else:
            c = {"logistic": 1 / (4 * math.log(2.0)), "hinge": 1.0, "smooth_hinge": 2.0}
            gamma = min(1.0, k * X * math.sqrt(c[loss] / n_rounds))
    gamma = float(gamma)
    if "epsilon" in params:
        rule.set_params(epsilon=gamma)
    if "loss" in params and params["loss"] is None:
        rule.set_params(loss=loss)
    rule = rule._resolved({})  # the rule's own fallbacks for the others
    if step_size == "adagrad":
        return rule, 1024.0, True
    if step_size == "constant":
        eta = full_information_step(loss, k, X)
        if feedback == "bandit":
            eta = gamma * eta / k
        return rule, float(eta), False
    adagrad = type(step_size).__name__ == "AdaGrad"
    return rule, float(step_size.get_params()["learning_rate"]), adagrad


def run_partial_fit(
    X, y, k, rng, *, W0=None, G0=0.0, A0=None, t0=0, **params
) -> GaptronTrace:
    """Replay one ``partial_fit(X, y)`` of ``Gaptron(**params)``."""
    rule, eta, adagrad = resolve(
        params["loss"], params["feedback"], k,
        **{p: params[p] for p in ("exploration", "step_size", "x_norm_bound",
                                  "n_rounds")
           if p in params},
    )  # fmt: skip
    U = rng.random((X.shape[0], 2))
    return gaptron(
        X, y, U, k, loss=params["loss"], feedback=params["feedback"],
        exploration=rule,
        eta=eta, adagrad=adagrad, x_norm_bound=float(params.get("x_norm_bound", 1.0)),
        W0=W0, G0=G0, A0=A0, t0=t0,
    )  # fmt: skip


def as_trace(tr: GaptronTrace) -> Trace:
    return Trace(tr.W, tr.played, tr.greedy, tr.rewards, tr.propensities)


def csr(X) -> sp.csr_matrix:
    return sp.csr_matrix(X)


# --------------------------------------------------------------------------------------
# The shared test suite's declaration of this module's learners (discovered by
# ``_registry.py``; see docs/adding_a_learner.md): the registry entries and the
# logged-feedback adapters of ``_reference_logged.delayed_schedule``.

# Gaptron: each loss x feedback combination (the parameters chosen so that the
# learner learns the digits in the ecosystem tests; each step-size mode is covered)
_GAPTRON = {
    ("logistic", "bandit"): {"exploration": GapMap(0.2)},
    ("hinge", "bandit"): {"exploration": GapMap(0.2), "x_norm_bound": 5.0},
    ("smooth_hinge", "bandit"): {
        "exploration": GapMap(0.2),
        "step_size": AdaGrad(1024.0, per_coordinate=False),
    },
    ("logistic", "full"): {},
    ("hinge", "full"): {"step_size": Constant(0.05)},
    ("smooth_hinge", "full"): {"step_size": "adagrad"},
}
ENTRIES: list[Entry] = [
    Entry(
        Gaptron,
        params={"loss": loss, "feedback": feedback, **extra},
        invalid_params=(
            ({"loss": "squared"}, "loss"),
            ({"feedback": "partial"}, "feedback"),
            ({"exploration": GapMap(-0.1)}, "epsilon"),
            ({"exploration": GapMap(1.5)}, "epsilon"),
            ({"exploration": GapMap(0.2, loss="squared")}, "loss"),
            ({"exploration": EpsilonGreedy("adaptive")}, "SOBA"),
            ({"step_size": Constant(0.0)}, "learning_rate"),
            ({"step_size": Constant(-1.0)}, "learning_rate"),
            ({"step_size": "fast"}, "step_size"),
            ({"step_size": AdaGrad(1.0)}, "per_coordinate=False"),
            ({"step_size": Normalized()}, "step_size"),
            ({"x_norm_bound": 0.0}, "x_norm_bound"),
            ({"n_rounds": 0}, "n_rounds"),
        )
        + (
            (
                ({"exploration": GapMap(0.0)}, "epsilon > 0"),
                ({"exploration": "greedy"}, "positive probability"),
                ({"exploration": Greedy(), "step_size": "constant"}, "exploration"),
            )
            if feedback == "bandit"
            else ()
        ),
        valid_edge_params=(
            {"exploration": GapMap(1.0)},
            {"exploration": GapMap(1e-6)},
            {"exploration": None, "n_rounds": 1, "x_norm_bound": 100.0},
            {"exploration": GapMap(0.1, loss="hinge")},
            {"step_size": "constant", "x_norm_bound": 10.0},
            {"step_size": Constant(1e-8)},
            {"x_norm_bound": 1e-3},
        )
        + (({"exploration": GapMap(0.0)},) if feedback == "full" else ()),
        variant=f"{loss}-{feedback}",
        check_params={"loss": loss, "feedback": feedback},
        randomised_full_information=feedback == "full",
    )
    for (loss, feedback), extra in _GAPTRON.items()
]


def _logged_gaptron(params: dict, k: int):
    """The logged-feedback adapter of Gaptron (see ``_reference_logged``)."""

    g_rule, eta, adagrad = resolve(
        params["loss"], params["feedback"], k,
        **{p: params[p] for p in ("exploration", "step_size", "x_norm_bound",
                                  "n_rounds")
           if p in params},
    )  # fmt: skip

    def run(X, U, t0, state, logged):
        W0, G0 = (None, 0.0) if state is None else state
        tr = gaptron(
            X, np.zeros(X.shape[0], int), U, k, loss=params["loss"],
            feedback=params["feedback"], exploration=g_rule, eta=eta,
            adagrad=adagrad, x_norm_bound=float(params.get("x_norm_bound", 1.0)),
            W0=W0, G0=G0, t0=t0, logged=logged,
        )  # fmt: skip
        return tr.played, tr.propensities, (tr.W, tr.grad_sq_sum)

    return run, lambda s: {"coef_": s[0], "grad_sq_sum_": s[1]}


LOGGED_ADAPTERS = {
    "Gaptron": _logged_gaptron,
}
