"""NumPy reference of ``BanditPipeline``'s compiled maps, and its registry
entries.

The maps, written again from the documented formulas (``BanditPipeline``,
``skbandit/_core/_feature_map.pyx``) with the kernel's operations in its
order: the running standardisation of row ``t`` with the statistics of rows
``1 .. t-1`` (Welford's recurrence after the row is learnt), then the random
Fourier features ``sqrt(2 / D) cos(sum_c u_c Omega[c] + b)``, the sum taken
feature after feature (elementwise NumPy: the same IEEE operations) and the
cosine ``rff_cos`` below, fdlibm's reduction and polynomials written again
from the kernel's docstring (elementwise NumPy, and the C library's
``math.cos`` beyond the bound): bit for bit the kernel's; for a
``FeatureUnion`` of ``"passthrough"`` and the sampler, the row times its
weight beside the features times theirs (``map_rows``'s ``union``). The learner
then plays the mapped rows through its own reference (its logged-feedback
adapter), so the pipeline's reference is the composition.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from _entry import Entry
from sklearn.base import clone
from sklearn.kernel_approximation import RBFSampler
from sklearn.pipeline import FeatureUnion
from sklearn.preprocessing import PolynomialFeatures

from skbandit import BanditPipeline, SquareCB
from skbandit.preprocessing import OnlineStandardScaler

EPS = np.finfo(np.float64).eps


class Scaler:
    """The running statistics (``n``, ``m``, ``M``)."""

    def __init__(self, d: int, with_mean: bool = True, with_std: bool = True):
        self.n = 0
        self.mean = np.zeros(d)
        self.m2 = np.zeros(d)
        self.with_mean, self.with_std = with_mean, with_std

    def scale(self, x: np.ndarray) -> np.ndarray:
        u = x.copy()
        if self.with_mean:
            u = u - self.mean
        if self.with_std:
            s = np.ones_like(u)
            if self.n > 0:
                s = np.sqrt(self.m2 / self.n)
                s[~(s >= 10.0 * EPS)] = 1.0
            u = u / s
        return u

    def update(self, x: np.ndarray) -> None:
        self.n += 1
        delta = x - self.mean
        self.mean = self.mean + delta / self.n
        self.m2 = self.m2 + delta * (x - self.mean)

    def copy(self) -> Scaler:
        new = Scaler(self.mean.shape[0], self.with_mean, self.with_std)
        new.n, new.mean, new.m2 = self.n, self.mean.copy(), self.m2.copy()
        return new


# fdlibm's reduction constants and polynomial coefficients (``__kernel_cos``,
# ``__kernel_sin``), as in the kernel's docstring
INVPIO2 = 6.36619772367581382433e-01
MAGIC = 1.5 * 2.0**52
PIO2_1, PIO2_2, PIO2_2T = (
    1.57079632673412561417e00,
    6.07710050630396597660e-11,
    2.02226624879595063154e-21,
)
COS_BOUND = 2.0**19 * math.pi
C = (
    4.16666666666666019037e-02,
    -1.38888888888741095749e-03,
    2.48015872894767294178e-05,
    -2.75573143513906633035e-07,
    2.08757232129817482790e-09,
    -1.13596475577881948265e-11,
)
S = (
    -1.66666666666666324348e-01,
    8.33333333332248946124e-03,
    -1.98412698298579493134e-04,
    2.75573137070700676789e-06,
    -2.50507602534068634195e-08,
    1.58969099521155010221e-10,
)


def _horner(z: np.ndarray, coefs) -> np.ndarray:
    """``c0 + z (c1 + z (c2 + ...))``."""
    acc = np.full_like(z, coefs[-1])
    for c in coefs[-2::-1]:
        acc = c + z * acc
    return acc


def rff_cos(x: np.ndarray) -> np.ndarray:
    """The kernel's cosine: ``n = round(x 2/pi)`` (ties to even, through
    ``1.5 2^52``), ``r = ((x - n P1) - n P2) - n P2t``, the polynomials
    ``C(r)``, ``S(r)`` and, with the quadrant ``q = n - 4 round(n / 4)``,
    ``C`` (``q = 0``), ``-S`` (1), ``-C`` (``+-2``), ``S`` (-1); the C
    library's ``cos`` where ``|x| > 2^19 pi``."""
    x = np.asarray(x, dtype=np.float64)
    n = (x * INVPIO2 + MAGIC) - MAGIC
    q = n - 4.0 * ((n * 0.25 + MAGIC) - MAGIC)  # the quadrant, in -2 .. 2
    r = ((x - n * PIO2_1) - n * PIO2_2) - n * PIO2_2T
    z = r * r
    c = 1.0 - (0.5 * z - z * (z * _horner(z, C)))
    s = r + (z * r) * _horner(z, S)
    q2 = q * q
    wo = q2 * (4.0 - q2) / 3.0  # 1 where q = +-1, else 0
    v = wo * (-q * s) + (1.0 - wo) * (c * (1.0 - 0.5 * q2))
    far = ~(np.abs(x) <= COS_BOUND)
    v[far] = [math.cos(a) for a in x[far]]
    return v


def rff(u: np.ndarray, omega: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """``sqrt(2 / D) cos(sum_c u_c Omega[c] + b)``, summed in ``c`` order."""
    a = np.zeros(omega.shape[1])
    for c in range(u.shape[0]):
        a = a + u[c] * omega[c]
    factor = math.sqrt(2.0 / omega.shape[1])
    return factor * rff_cos(a + offset)


def union_parts(union) -> tuple[RBFSampler, float, float]:
    """A ``FeatureUnion([(a, "passthrough"), (b, RBFSampler)])``'s sampler
    and its blocks' weights (``transformer_weights``, 1 when absent)."""
    (lin_name, _), (rff_name, sampler) = union.transformer_list
    weights = union.transformer_weights or {}
    return sampler, weights.get(lin_name, 1.0), weights.get(rff_name, 1.0)


def map_rows(
    X,
    scaler: Scaler | None,
    sampler,
    update: bool,
    union: bool = False,
    weights: tuple[float, float] = (1.0, 1.0),
) -> np.ndarray:
    """The compiled maps of the rows of X in order (``update``: each row
    then taken into the statistics); with ``union`` the row ``u`` times
    ``weights[0]`` beside its random features times ``weights[1]``, as
    scikit-learn's ``FeatureUnion`` of ``"passthrough"`` and the sampler."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    out = []
    for x in X:
        u = scaler.scale(x) if scaler is not None else x
        z = rff(u, sampler.random_weights_, sampler.random_offset_) if sampler else u
        if union:
            z = np.concatenate([u * weights[0], z * weights[1]])
        out.append(z)
        if update and scaler is not None:
            scaler.update(x)
    return np.array(out)


def _logged_pipeline(params: dict, k: int):
    """The logged-feedback adapter of BanditPipeline (``_reference_logged``):
    the maps above, then the final learner's own adapter on the mapped rows.
    The steps' ``random_state`` must be set (the reference does not know the
    pipeline's seed)."""
    from _registry import LOGGED_ADAPTERS

    steps = [(n, clone(e)) for n, e in params["steps"]]
    learner = steps[-1][1]
    # the learner's parameters as its own entries give them (those that
    # differ from its defaults; the pipeline's seed and passes are its own)
    defaults = type(learner)().get_params(deep=False)
    given = {
        key: value
        for key, value in learner.get_params(deep=False).items()
        if key not in ("max_iter", "shuffle", "random_state")
        and value is not defaults[key]
    }
    inner_run, _ = LOGGED_ADAPTERS[type(learner).__name__](given, k)
    transforms = [e for _, e in steps[:-1]]
    union = bool(transforms) and type(transforms[-1]) is FeatureUnion
    weights = [1.0, 1.0]
    if union:
        sampler, *weights = union_parts(transforms.pop())
    else:
        sampler = (
            transforms.pop()
            if transforms and type(transforms[-1]) is RBFSampler
            else None
        )
    oss = (
        transforms.pop()
        if transforms and isinstance(transforms[-1], OnlineStandardScaler)
        else None
    )

    def run(X, U, t0, state, logged):
        if state is None:
            Z0 = X
            for est in transforms:  # fitted on the first contexts
                Z0 = est.fit_transform(Z0)
            d = Z0.shape[1]
            if sampler is not None:
                if oss is not None and sampler.gamma == "scale":
                    sampler.set_params(gamma=1.0 / d)
                sampler.fit(np.zeros((1, d)))
            scaler = None if oss is None else Scaler(d, oss.with_mean, oss.with_std)
            state = {"scaler": scaler, "inner": None}
        Z = X
        for est in transforms:
            Z = est.transform(Z)
        scaler = state["scaler"]
        if logged is None:  # serving: the statistics are not updated
            z = map_rows(Z, scaler, sampler, False, union, tuple(weights))
            played, props, _ = inner_run(z, U, t0, state["inner"], None)
            return played, props, state
        scaler = None if scaler is None else scaler.copy()
        z = map_rows(Z, scaler, sampler, True, union, tuple(weights))
        _, _, inner = inner_run(z, U, t0, state["inner"], logged)
        return None, None, {"scaler": scaler, "inner": inner}

    def final(state):
        scaler = state["scaler"]
        if scaler is None:
            return {"scaler_count_": np.array([0])}
        return {
            "scaler_mean_": scaler.mean,
            "scaler_var_sum_": scaler.m2,
            "scaler_count_": np.array([scaler.n]),
        }

    return run, final


def _steps(*steps):
    return tuple((type(e).__name__.lower(), e) for e in steps)


ENTRIES: list[Entry] = [
    Entry(
        BanditPipeline,
        params={
            "steps": _steps(
                OnlineStandardScaler(),
                RBFSampler(n_components=24, gamma="scale", random_state=3),
                SquareCB(),
            )
        },
        intercept=True,
        invalid_params=(
            ({"steps": []}, "steps"),
            ({"steps": "squarecb"}, "steps"),
            ({"steps": _steps(RBFSampler(), PolynomialFeatures())}, "final step"),
            (
                {
                    "steps": _steps(
                        OnlineStandardScaler(), PolynomialFeatures(), SquareCB()
                    )
                },
                "OnlineStandardScaler",
            ),
            ({"steps": (("a__b", SquareCB()),)}, "without '__'"),
            ({"steps": (("a", RBFSampler()), ("a", SquareCB()))}, "unique"),
            ({"max_iter": 0}, "max_iter"),
        ),
        valid_edge_params=(
            {"steps": _steps(SquareCB())},
            {"steps": _steps(OnlineStandardScaler(with_mean=False), SquareCB())},
        ),
        check_params={
            "steps": _steps(
                RBFSampler(n_components=50, gamma=0.5, random_state=0), SquareCB()
            )
        },
    ),
]

ENTRIES.append(
    Entry(
        BanditPipeline,
        params={
            "steps": _steps(
                OnlineStandardScaler(),
                FeatureUnion(
                    [
                        ("row", "passthrough"),
                        (
                            "rff",
                            RBFSampler(n_components=24, gamma="scale", random_state=3),
                        ),
                    ],
                    transformer_weights={"row": 0.5},
                ),
                SquareCB(),
            )
        },
        intercept=True,
        variant="union",
        invalid_params=(
            (
                {
                    "steps": _steps(
                        OnlineStandardScaler(),
                        FeatureUnion(
                            [("row", "passthrough"), ("rff", RBFSampler())],
                            transformer_weights={"row": np.nan},
                        ),
                        SquareCB(),
                    )
                },
                "weight",
            ),
            (
                {
                    "steps": _steps(
                        OnlineStandardScaler(),
                        FeatureUnion([("rff", RBFSampler()), ("row", "passthrough")]),
                        SquareCB(),
                    )
                },
                "OnlineStandardScaler",
            ),
        ),
    )
)

LOGGED_ADAPTERS = {
    "BanditPipeline": _logged_pipeline,
}
