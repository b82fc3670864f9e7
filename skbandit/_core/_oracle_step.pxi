# ``py_oracle_step_loops``, the Python-callable loops of the regression
# oracle's step (``_oracle_step.h``), included by _oracle.pyx and by the
# baseline build _simd_baseline.pyx (each module cimports them as
# ``oracle_denominators`` and ``oracle_moves`` and imports NumPy as ``np``).


def py_oracle_step_loops(const double[::1] val, double e, G, scale,
                         double rate):
    """The step's loops on the entries ``val`` (``_oracle_step.h``): with
    ``G`` (an array of one sum per entry, updated in place; None: the
    constant rule) and NAG's ``scale`` (per entry, or None), returns ``(Q,
    q, moves)``: Q, the denominators (0 for an entry not moved) and the
    moves ``rate (e val_j) / q_j`` of the moved entries (0 for the others)."""
    cdef Py_ssize_t n = val.shape[0], j
    cdef double[::1] g, s
    q = np.zeros(n, dtype=np.float64)
    t = np.zeros(n, dtype=np.float64)
    cdef double[::1] qv = q, tv = t
    cdef double Q
    if n == 0:
        return 0.0, q, t
    if G is not None:
        g = G
        if g.shape[0] != n:
            raise ValueError("G needs one sum per entry")
    if scale is not None:
        s = scale
        if s.shape[0] != n:
            raise ValueError("scale needs one value per entry")
    Q = oracle_denominators(&val[0], <int>n, e,
                            &g[0] if G is not None else NULL,
                            &s[0] if scale is not None else NULL,
                            &qv[0], &tv[0])
    oracle_moves(&val[0], <int>n, rate, e, &qv[0], &tv[0])
    for j in range(n):
        if not qv[j] > 0.0:
            tv[j] = 0.0
    return Q, q, t
