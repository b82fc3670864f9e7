"""Gaptron kernel (van der Hoeven 2020): one kernel, the loss as an integer code.

Each round, with scores ``s = W x`` and the tie-broken greedy label ``g``:

* policy: the kernel's explorer (``set_explorer``); Gaptron's is the gap map's,
  ``p = (1 - u) e_g + (u / k) 1`` with ``u = gamma + (1 - gamma) a(s)``, i.e.
  ``p' = (1 - a) e_g + (a / k) 1`` mixed with ``gamma`` of uniform
  exploration; ``a(s)`` is the loss's *gap map* (``gap_map`` of
  skbandit._core._explore);
* tie marginal: with the gap map's policy, exact ties of the greedy label cost
  one distribution instead of one per tied label (``ties_share_rate`` of
  skbandit._core._explore, used by ``BaseKernel.marginal_over``);
* update: ``W -= eta_t * w * grad(s, g, y) (x)`` where ``grad`` is the gradient
  of the surrogate loss with respect to the scores (``surrogate_gradient``) and
  ``w`` the importance weight: ``1 / p(y)`` when the played action was right
  (bandit feedback; no update otherwise), ``1`` with full information.

The gap maps and the step sizes are reconstructions (docs/algorithms.md, Gaptron)
(the paper's formulas were lost); they are plain functions of the loss code, so a
different map is one more code. ``py_gap_map``, ``py_surrogate_gradient`` and
``py_surrogate_loss`` call the very same compiled functions, for the tests.
"""

from libc.math cimport exp, log

from skbandit._core._explore cimport (
    GAP_HINGE,
    GAP_LOGISTIC,
    GAP_SMOOTH_HINGE,
    argmax_other,
    gap_map,
    log_partition,
    max_other,
)
from skbandit._core._kernel cimport (
    LinearKernel,
    Row,
    jsave,
    jsave_row,
    row_axpy,
    row_sq_norm,
)
from skbandit._core._step cimport (
    STEP_NORMALIZED,
    StepRule,
    scalar_rate,
    step_rule,
)

import numpy as np


# the codes of the shared gap maps (skbandit._core._explore.gap_map)
cpdef enum GaptronLoss:
    LOSS_LOGISTIC = GAP_LOGISTIC
    LOSS_HINGE = GAP_HINGE
    LOSS_SMOOTH_HINGE = GAP_SMOOTH_HINGE


# ln 2, as Python's math.log(2.0) (the references use the same libm call)
cdef double LN2 = log(2.0)


# ---------------------------------------------------------------- compiled maps
# (the gap map ``gap_map``, ``argmax_other``, ``max_other`` and
# ``log_partition`` are the exploration rules', cimported from
# skbandit._core._explore)


cdef bint surrogate_gradient(int loss, const double* s, int k, int g, int y,
                             double* grad) noexcept nogil:
    """Gradient of the surrogate loss with respect to the scores, for label ``y``
    at greedy label ``g``, written to ``grad`` (k entries). Returns False (and
    leaves ``grad`` unspecified) when the gradient is zero.

    With ``c = argmax_{r != y} s_r`` (first such class) and ``m = s_y - s_c``:
    logistic ``(softmax(s) - e_y) / ln 2``; hinge ``e_c - e_y`` if ``m < 1``,
    except zero when ``g = y`` and ``a(s) = 0``; smooth hinge ``-2 (e_y - e_c)``
    if ``m <= 0``, ``-2 (1 - m) (e_y - e_c)`` if ``0 < m < 1``, zero otherwise.
    """
    cdef int r, c
    cdef double mx, z, m, coef, ey
    if loss == LOSS_LOGISTIC:
        # the values of log_partition, with each exponential computed once
        mx = s[0]
        for r in range(1, k):
            if s[r] > mx:
                mx = s[r]
        z = 0.0
        for r in range(k):
            grad[r] = exp(s[r] - mx)
            z = z + grad[r]
        ey = grad[y]
        for r in range(k):
            grad[r] = (grad[r] / z) / LN2
        grad[y] = (ey / z - 1.0) / LN2
        return True
    c = argmax_other(s, k, y)
    m = s[y] - s[c]
    if m >= 1.0:
        return False
    if loss == LOSS_HINGE:
        if g == y and gap_map(loss, s, k, g) == 0.0:
            return False
        coef = -1.0
    elif m <= 0.0:
        coef = -2.0
    else:
        coef = -2.0 * (1.0 - m)
    for r in range(k):
        grad[r] = 0.0
    grad[y] = coef
    grad[c] = -coef
    return True


cdef double surrogate_loss(int loss, const double* s, int k, int g,
                           int y) noexcept nogil:
    """The surrogate loss whose gradient ``surrogate_gradient`` returns.

    logistic ``-log2 softmax(s)_y = (ln Z - (s_y - max s)) / ln 2``; hinge
    ``max(0, 1 - m)``, except 0 when ``g = y`` and ``a(s) = 0``; smooth hinge
    ``1 - 2m`` (m <= 0), ``(1 - m)^2`` (0 < m < 1), 0 (m >= 1).
    """
    cdef double mx, z, m
    if loss == LOSS_LOGISTIC:
        z = log_partition(s, k, &mx)
        return (log(z) - (s[y] - mx)) / LN2
    m = s[y] - max_other(s, k, y)
    if m >= 1.0:
        return 0.0
    if loss == LOSS_HINGE:
        if g == y and gap_map(loss, s, k, g) == 0.0:
            return 0.0
        return 1.0 - m
    if m <= 0.0:
        return 1.0 - 2.0 * m
    return (1.0 - m) * (1.0 - m)


# ---------------------------------------------------------------------- kernel
cdef class GaptronKernel(LinearKernel):
    """Gaptron over ``W x`` for one loss code; bandit (``learn``: the bit, weight
    ``1 / p(y)``) or full information (``learn_full``: the label, weight 1).

    ``grad_sq_sum`` (one entry, updated in place) accumulates the squared norms
    ``||g_hat||^2 = ||grad||^2 ||x||^2 w^2`` of the gradients used; the step
    ``eta_t`` is the compiled rule's ``scalar_rate`` of it (``_core/_step.pxd``:
    AdaGrad-norm ``eta / sqrt(2 (1e-8 + grad_sq_sum))``, the current gradient
    included, or a constant ``eta``). Rows with
    ``||x||^2 > x_bound_sq`` are counted in ``n_large`` (largest in
    ``max_sq_norm``) for the estimator's warning. Each update of round ``t``
    is also added to ``A`` with the weight ``t - 1`` (the averaged iterate,
    ``W - A / T``; ``skbandit.linear_model._averaging``).
    """

    cdef readonly int loss
    cdef StepRule rule
    cdef readonly double x_bound_sq
    cdef public long long n_large
    cdef public double max_sq_norm
    cdef double[::1] grad_sq_sum
    cdef double[:, ::1] A
    cdef double[::1] grad

    def __init__(self, double[:, ::1] W, int loss, tuple step_size,
                 double x_bound_sq, bint full_information,
                 double[::1] grad_sq_sum, double[:, ::1] A):
        LinearKernel.__init__(self, W, full_information)
        if loss not in (LOSS_LOGISTIC, LOSS_HINGE, LOSS_SMOOTH_HINGE):
            raise ValueError(f"unknown loss code {loss}")
        if W.shape[1] < 2:
            raise ValueError("Gaptron needs at least 2 classes")
        if grad_sq_sum.shape[0] != 1:
            raise ValueError("grad_sq_sum must have one entry")
        if A.shape[0] != W.shape[0] or A.shape[1] != W.shape[1]:
            raise ValueError("A must have the shape of W")
        self.loss = loss
        # (kind, learning rate, per coordinate): skbandit.optim's _compile()
        self.rule = step_rule(step_size)
        if self.rule.per_coordinate or self.rule.kind == STEP_NORMALIZED:
            raise ValueError("Gaptron's kernel takes a constant or an "
                             "AdaGrad-norm step (one accumulator)")
        self.x_bound_sq = x_bound_sq
        self.n_large = 0
        self.max_sq_norm = 0.0
        self.grad_sq_sum = grad_sq_sum
        self.A = A
        self.grad = np.zeros(W.shape[1], dtype=np.float64)

    cdef inline double check_norm(self, Row x) noexcept nogil:
        # rows are canonical (the shared validation sums duplicate columns)
        cdef double xsq = row_sq_norm(x)
        if xsq > self.x_bound_sq:
            self.n_large += 1
            if xsq > self.max_sq_norm:
                self.max_sq_norm = xsq
        return xsq

    cdef void step(self, Row x, double xsq, long long t, int greedy, int y,
                   double iw) noexcept nogil:
        """``W -= eta_t * iw * grad (x) x`` for the gradient at label ``y``;
        ``A`` gets the same update times ``t - 1``."""
        cdef int r, k = self.n_classes
        cdef double* g = &self.grad[0]
        cdef double gn = 0.0, eta_t, scale, a
        cdef double before = <double>(t - 1)
        if not surrogate_gradient(self.loss, &self.scores[0], k, greedy, y, g):
            return
        for r in range(k):
            gn = gn + g[r] * g[r]
        jsave(self.jd, &self.grad_sq_sum[0])
        self.grad_sq_sum[0] = self.grad_sq_sum[0] + (gn * xsq) * (iw * iw)
        eta_t = scalar_rate(&self.rule, self.grad_sq_sum[0])
        scale = eta_t * iw
        for r in range(k):
            if g[r] != 0.0:
                a = -(scale * g[r])
                self.add_row(r, a, x)
                jsave_row(self.jd, &self.A[0, r], self.n_classes, x)
                row_axpy(before * a, x, &self.A[0, r], self.n_classes)

    cdef Py_ssize_t journal_bound(self, Row x) noexcept nogil:
        # one step: grad_sq_sum, then rows r of W and of A for each class
        return 1 + 2 * <Py_ssize_t>self.n_classes * x.nnz

    cdef void learn(self, Row x, long long t, int played, int greedy,
                    double prob, double reward) noexcept nogil:
        # Bandit feedback: the gradient is known only when the played action
        # was right (then y = played); importance weight 1 / p(y).
        cdef double xsq = self.check_norm(x)
        if reward != 0.0:
            self.step(x, xsq, t, greedy, played, 1.0 / prob)

    cdef void learn_full(self, Row x, long long t, int played, int greedy,
                         int label) noexcept nogil:
        cdef double xsq = self.check_norm(x)
        self.step(x, xsq, t, greedy, label, 1.0)


# ------------------------------------------------------------ Python twins
def _scores_arg(const double[::1] scores, int greedy, int label):
    cdef int k = <int>scores.shape[0]
    if k < 2:
        raise ValueError("scores must have at least 2 entries")
    if not (0 <= greedy < k and 0 <= label < k):
        raise ValueError("greedy or label out of range")
    return k


def _loss_arg(int loss):
    if loss not in (LOSS_LOGISTIC, LOSS_HINGE, LOSS_SMOOTH_HINGE):
        raise ValueError(f"unknown loss code {loss}")


def py_gap_map(int loss, const double[::1] scores, int greedy):
    """The compiled gap map ``a(s)`` at greedy label ``greedy``."""
    _loss_arg(loss)
    cdef int k = _scores_arg(scores, greedy, 0)
    return gap_map(loss, &scores[0], k, greedy)


def py_surrogate_gradient(int loss, const double[::1] scores, int greedy, int label):
    """The compiled gradient of the surrogate loss wrt the scores (zeros when
    the kernel makes no update)."""
    _loss_arg(loss)
    cdef int k = _scores_arg(scores, greedy, label)
    out = np.zeros(k, dtype=np.float64)
    cdef double[::1] o = out
    if not surrogate_gradient(loss, &scores[0], k, greedy, label, &o[0]):
        out[:] = 0.0
    return out


def py_surrogate_loss(int loss, const double[::1] scores, int greedy, int label):
    """The compiled surrogate loss whose gradient the kernel uses."""
    _loss_arg(loss)
    cdef int k = _scores_arg(scores, greedy, label)
    return surrogate_loss(loss, &scores[0], k, greedy, label)
