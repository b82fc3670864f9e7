# Step-size rules, compiled: the counterpart of skbandit.optim's rule objects,
# shared by Gaptron's kernel (one scalar step per round) and the regression
# oracle (per-coordinate steps; _oracle.pyx). Declarations and inline functions
# only: nothing to import at run time. The Python-side codes are read from
# ``skbandit._core._oracle.STEP_KINDS`` (one source: this enum).

from libc.math cimport sqrt


cdef enum StepKind:
    # eta_t = eta
    STEP_CONSTANT = 0
    # AdaGrad (Duchi, Hazan & Singer 2011): per coordinate eta / sqrt(G_i);
    # with one accumulator (AdaGrad-norm) eta / sqrt(2 (1e-8 + G))
    STEP_ADAGRAD = 1
    # Ross, Mineiro & Langford (2013), Algorithm NAG
    STEP_NORMALIZED = 2


cdef struct StepRule:
    int kind
    double learning_rate
    bint per_coordinate  # AdaGrad: one accumulator per coordinate, or one


cdef inline StepRule step_rule(tuple spec) except *:
    """The compiled rule of ``skbandit.optim``'s ``_compile()``: the triple
    ``(kind, learning rate, per coordinate)``."""
    cdef StepRule rule
    cdef int kind
    cdef double learning_rate
    cdef bint per_coordinate
    kind, learning_rate, per_coordinate = spec
    if kind not in (STEP_CONSTANT, STEP_ADAGRAD, STEP_NORMALIZED):
        raise ValueError(f"unknown step-size rule code {kind}")
    if not learning_rate > 0.0:
        raise ValueError(f"the learning rate must be > 0, got {learning_rate}")
    rule.kind = kind
    rule.learning_rate = learning_rate
    rule.per_coordinate = per_coordinate and kind == STEP_ADAGRAD
    return rule


cdef inline double scalar_rate(const StepRule* rule,
                               double grad_sq_sum) noexcept nogil:
    """The step of a rule with one accumulator: ``eta`` (constant) or
    AdaGrad-norm's ``eta / sqrt(2 (1e-8 + grad_sq_sum))`` (the sum of the
    squared gradient norms so far, the current one included)."""
    if rule.kind == STEP_ADAGRAD:
        # 1e-8: the accumulator's floor (a first zero gradient divides by it)
        return rule.learning_rate / sqrt(2.0 * (1e-8 + grad_sq_sum))
    return rule.learning_rate
