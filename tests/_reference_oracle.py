"""Pure-Python/NumPy twin of the compiled regression oracle
(``skbandit._core._oracle.RegressionOracle``): ``k`` online linear regressors of
rewards with the NAG, AdaGrad and SGD rules (Ross, Mineiro & Langford 2013;
Duchi, Hazan & Singer 2011), written from docs/algorithms.md (SquareCB, the
oracle). Scalar Python floats (IEEE double, ``math.sqrt``, the C library's) in
the kernel's order of operations, so the state is reproduced bit for bit.

``update(a, row, score, target, weight)`` on the row's ``(column, value)``
pairs in stored order (``n_a += 1`` in every case), over its non-zero entries:

- normalized (NAG): for each entry with ``|x_i| > S_i``: if ``S_i > 0``,
  ``W_i *= S_i / |x_i|``; ``S_i = |x_i|``. With ``shared_scale`` the scale
  ``S_i`` is one per feature for all ``k`` regressors (every row of ``scale_``
  holds it) and a growth rescales ``W_i`` of every regressor,
  ``W[c, i] *= S[c, i] / |x_i|`` then ``S[c, i] = |x_i|`` for every ``c`` with
  ``|x_i| > S[c, i]`` (each row by its own scale; the rows are equal unless
  the option was switched on mid-stream); without, ``S`` and the rescale are
  regressor ``a``'s only. Then ``pred = sum W_i x_i (+ b)`` and
  ``nrm = sum (x_i / S_i)^2 (+ 1)`` accumulated in the same loop;
  ``N_a += nrm``; stop if ``N_a <= 0``; ``rate = learning_rate sqrt(n_a / N_a)``.
- adagrad, sgd: ``pred = score`` (the round's prediction), ``rate = learning_rate``.

Then ``e = h (pred - r)`` with ``h = weight``; stop if ``e == 0``. For each
entry, ``g_i = e x_i``; adaptive rules ``G_i += g_i^2`` and skip the coordinate
while ``G_i == 0``; ``q_i = S_i sqrt(G_i)`` (normalized), ``sqrt(G_i)``
(adagrad), 1 (sgd); ``Q += (x_i x_i) / q_i``. Intercept: ``Gb += e^2``
(adaptive), ``q_b = sqrt(Gb)`` or 1, ``Q += 1 / q_b``. With the step cap
``c > 0``: ``False`` (no write after) if ``Q`` is not finite, else
``rate = min(rate, c / (h Q))`` when ``Q > 0``. Finally
``W_i -= rate (e x_i) / q_i`` and ``b -= rate e / q_b``.
"""

from __future__ import annotations

import math

import numpy as np

REGRESSORS = ("normalized", "adagrad", "sgd")


def fresh_state(k: int, d: int, scale_rows: int | None = None) -> dict[str, np.ndarray]:
    """The oracle's state arrays, all zero (the estimator's attribute names);
    ``scale_`` has ``scale_rows`` rows (``k`` by default; 1: shared scales
    stored once, what ``SquareCB(shared_scale=True)`` starts with). The
    (k, d) weights and scales are Fortran-ordered, as the estimator stores
    them: their transposes are the compiled oracle's feature-major (d, k)
    arrays; ``grad_sq_`` is C-ordered, the oracle's class-major (k, d) G."""
    return {
        "coef_": np.zeros((k, d), order="F"),
        "intercept_": np.zeros(k),
        "scale_": np.zeros((k if scale_rows is None else scale_rows, d), order="F"),
        "grad_sq_": np.zeros((k, d)),
        "intercept_grad_sq_": np.zeros(k),
        "norm_sum_": np.zeros(k),
        "n_updates_": np.zeros(k, dtype=np.int64),
    }


class RegressionOracle:
    """The regressors over the arrays of ``state`` (updated in place)."""

    def __init__(
        self,
        state: dict[str, np.ndarray],
        *,
        regressor: str,
        learning_rate: float,
        fit_intercept: bool,
        step_cap: float,
        shared_scale: bool,
    ) -> None:
        if regressor not in REGRESSORS:
            raise ValueError(regressor)
        self.st = state
        self.regressor = regressor
        self.learning_rate = learning_rate
        self.fit_intercept = fit_intercept
        self.step_cap = step_cap
        self.shared_scale = shared_scale

    def predict(self, a: int, row) -> float:
        """``w_a . x (+ b_a)``, summed sequentially over the row's entries."""
        w = self.st["coef_"][a]
        s = 0.0
        for i, v in row:
            s = s + float(w[i]) * v
        return s + float(self.st["intercept_"][a]) if self.fit_intercept else s

    def _scales(self, a: int) -> np.ndarray:
        """The scales regressor ``a`` uses: the one stored row, or row ``a``."""
        S = self.st["scale_"]
        return S[0] if S.shape[0] == 1 else S[a]

    def _nag_rescale(self, a: int, nz) -> float:
        st = self.st
        W, S, b = st["coef_"][a], self._scales(a), st["intercept_"]
        pred, nrm = 0.0, 0.0
        for i, v in nz:
            av = abs(v)
            if av > S[i]:
                if st["scale_"].shape[0] == 1:
                    # one stored row of shared scales: every regressor's w_i
                    # by it (read and written only when the scale was positive)
                    if S[i] > 0.0:
                        Wc = st["coef_"]
                        for c in range(Wc.shape[0]):
                            Wc[c, i] = float(Wc[c, i]) * (float(S[i]) / av)
                    S[i] = av
                elif self.shared_scale:
                    # one scale per feature: every regressor's w_i and s_i
                    # (each by its own s_i, all equal when shared from the start)
                    Sc, Wc = st["scale_"], st["coef_"]
                    for c in range(Wc.shape[0]):
                        if av > Sc[c, i]:
                            if Sc[c, i] > 0.0:
                                Wc[c, i] = float(Wc[c, i]) * (float(Sc[c, i]) / av)
                            Sc[c, i] = av
                else:
                    if S[i] > 0.0:
                        W[i] = float(W[i]) * (float(S[i]) / av)
                    S[i] = av
            pred = pred + float(W[i]) * v
            q = v / float(S[i])
            nrm = nrm + q * q
        if self.fit_intercept:
            pred = pred + float(b[a])
            nrm = nrm + 1.0
        st["norm_sum_"][a] = float(st["norm_sum_"][a]) + nrm
        return pred

    def update(self, a: int, row, score: float, target: float, weight: float) -> bool:
        """One step of regressor ``a`` (see the module docstring); False when
        ``Q`` is not finite (the kernel then stops the pass)."""
        st = self.st
        nz = [(i, v) for i, v in row if v != 0.0]
        st["n_updates_"][a] += 1
        if self.regressor == "normalized":
            pred = self._nag_rescale(a, nz)
            N = float(st["norm_sum_"][a])
            if N <= 0.0:
                return True
            rate = self.learning_rate * math.sqrt(float(st["n_updates_"][a]) / N)
        else:
            pred, rate = score, self.learning_rate
        h = weight
        e = h * (pred - target)
        if e == 0.0:
            return True
        W, b = st["coef_"][a], st["intercept_"]
        S, G, Gb = self._scales(a), st["grad_sq_"][a], st["intercept_grad_sq_"]
        adaptive = self.regressor != "sgd"
        qs, Q = {}, 0.0
        for i, v in nz:
            q = 1.0
            if adaptive:
                g = e * v
                G[i] = float(G[i]) + g * g
                if not G[i] > 0.0:
                    continue
                q = math.sqrt(G[i])
                if self.regressor == "normalized":
                    q = float(S[i]) * q
            qs[i] = q
            Q = Q + (v * v) / q
        qb = 1.0
        if self.fit_intercept:
            if adaptive:
                Gb[a] = float(Gb[a]) + e * e
                qb = math.sqrt(Gb[a]) if Gb[a] > 0.0 else 0.0
            if qb > 0.0:
                Q = Q + 1.0 / qb
        if self.step_cap > 0.0:
            if not math.isfinite(Q):
                return False
            if Q > 0.0:
                rate = min(rate, self.step_cap / (h * Q))
        for i, v in nz:
            if i in qs:
                W[i] = float(W[i]) - rate * (e * v) / qs[i]
        if self.fit_intercept and qb > 0.0:
            b[a] = float(b[a]) - rate * e / qb
        return True
