# The round bodies shared by the compiled drivers (``run_pass``, ``run_act``,
# ``run_logged`` in _drivers.pyx) and the live session's round (_live.pyx): one
# implementation of a labelled, an acting and a logged round, inlined in both.

from skbandit._core._kernel cimport (
    STATUS_INVALID_DISTRIBUTION,
    STATUS_JOURNAL_ERROR,
    STATUS_NONFINITE,
    STATUS_OK,
    BaseKernel,
    JournalData,
    Row,
    is_finite,
    jreserve_row,
    valid_distribution,
)


cdef inline bint journal_finite_since(JournalData* j, Py_ssize_t mark) noexcept nogil:
    """True when every entry recorded from ``mark`` on is finite now (the
    values the row wrote; ``v - v`` is NaN for inf and NaN)."""
    cdef Py_ssize_t e
    cdef double v
    cdef bint ok = True
    # independent tests (no chain of floating-point additions to wait on)
    for e in range(mark, j.n):
        v = j.addr[e][0]
        ok = ok & is_finite(v)
    return ok


cdef inline bint played_ok(BaseKernel kernel, double marginal) noexcept nogil:
    """Check the round ``act`` just played: its distribution (``kernel.proba``,
    where every ``act`` writes it) is a probability vector and the logged
    propensity of the played action is in (0, 1]. Otherwise set
    ``STATUS_INVALID_DISTRIBUTION`` and return False. O(k) per round: the
    drivers call it on every round, so no learner can log or sample from a
    NaN, negative or unnormalised distribution. The generic ``act`` checks
    its distribution in the sweep that draws from it (``sample_checked``) and
    says so (``proba_checked``): only the marginal is left to check then."""
    if ((kernel.proba_checked
            or valid_distribution(&kernel.proba[0], kernel.n_classes))
            and marginal > 0.0 and marginal <= 1.0):
        return True
    kernel.status = STATUS_INVALID_DISTRIBUTION
    return False


cdef inline bint row_reserved(BaseKernel kernel, JournalData* j, Row x,
                              Py_ssize_t m_ll, Py_ssize_t* mark,
                              Py_ssize_t* lmark) noexcept nogil:
    """Before a row: reserve the journal entries its round may record
    (``journal_bound``; ``m_ll`` is ``journal_bound_ll``, read once per pass)
    and note where its records start. False, with ``STATUS_JOURNAL_ERROR``,
    when the journal cannot grow: the row is then not played, so every write
    of the block is recorded and can be undone."""
    cdef Py_ssize_t m = kernel.journal_bound(x)
    mark[0] = j.n
    lmark[0] = j.ln
    if not jreserve_row(j, m, m_ll):
        kernel.status = STATUS_JOURNAL_ERROR
        return False
    # what the row may still record without growing (checked after it)
    mark[1] = m
    lmark[1] = m_ll
    return True


cdef inline void row_committable(BaseKernel kernel, JournalData* j,
                                 const Py_ssize_t* mark,
                                 const Py_ssize_t* lmark) noexcept nogil:
    """After a row's ``learn``: the state entries it wrote (journal records
    from ``mark[0]`` on) must be finite, and the journal must hold them all;
    otherwise set the status that stops the pass (the estimator then undoes
    the block). A row that recorded more than its reserved bound sets
    ``overrun``. O(entries the row wrote)."""
    if j.n - mark[0] > mark[1] or j.ln - lmark[0] > lmark[1]:
        j.overrun = True
    if j.failed:
        kernel.status = STATUS_JOURNAL_ERROR
    elif not journal_finite_since(j, mark[0]):
        kernel.status = STATUS_NONFINITE


cdef inline bint round_act(BaseKernel kernel, JournalData* j, Row x,
                           long long t, double u1, double u2,
                           Py_ssize_t bound_ll, Py_ssize_t* mark,
                           Py_ssize_t* lmark, int* action, int* greedy,
                           double* prob, double* marginal) noexcept nogil:
    """The first half of a learning round (``label_round``, ``logged_round``):
    the journal's reservation for the row (``j`` NULL: none; ``row_reserved``
    notes where its records start in ``mark``, ``lmark``), then ``act`` at
    round ``t`` and the check of what it played (``played_ok``). False, with
    ``kernel.status`` set, when the round cannot be played."""
    if j != NULL and not row_reserved(kernel, j, x, bound_ll, mark, lmark):
        return False
    action[0] = kernel.act(x, t, u1, u2, greedy, prob, marginal)
    return kernel.status == STATUS_OK and played_ok(kernel, marginal[0])


cdef inline void round_check(BaseKernel kernel, JournalData* j,
                             const Py_ssize_t* mark,
                             const Py_ssize_t* lmark) noexcept nogil:
    """The last step of a learning round, after ``learn``: the entries it
    wrote are checked (``row_committable``) unless the status is already set
    or there is no journal."""
    if kernel.status == STATUS_OK and j != NULL:
        row_committable(kernel, j, mark, lmark)


cdef inline bint label_round(BaseKernel kernel, JournalData* j, Row x,
                             long long t, double u1, double u2, int y,
                             Py_ssize_t bound_ll, int* action, int* greedy,
                             double* reward, double* propensity) noexcept nogil:
    """One round of ``run_pass`` on a row
    with true label ``y``: the journal's reservation (``j`` NULL: none),
    ``act``, the reward ``1[action == y]``, ``learn`` (``learn_full`` with the
    label for a full-information kernel) and the written entries' check; the
    played action, greedy label, reward and logged propensity (the marginal)
    to the outputs. False, with ``kernel.status`` set, when the round was not
    played (the journal could not grow, or ``act`` was refused); True when it
    was (``learn`` or the check may then have set the status: the caller
    stops after it). The bandit boundary: the one read of the true label."""
    cdef int a, g
    cdef double p, marginal, r
    cdef Py_ssize_t mark[2]
    cdef Py_ssize_t lmark[2]
    if not round_act(kernel, j, x, t, u1, u2, bound_ll, mark, lmark, &a, &g,
                     &p, &marginal):
        return False
    r = 1.0 if a == y else 0.0
    if kernel.full_information:
        kernel.learn_full(x, t, a, g, y)
    else:
        kernel.learn(x, t, a, g, p, r)
    action[0] = a
    greedy[0] = g
    reward[0] = r
    propensity[0] = marginal
    round_check(kernel, j, mark, lmark)
    return True


cdef struct Acted:
    # What ``act`` returned on a row: the drawn action, the greedy label, the
    # probability of the draw and the logged propensity (the marginal).
    int action
    int greedy
    double prob
    double marginal


cdef inline bint act_round(BaseKernel kernel, Row x, long long t, double u1,
                           double u2, Acted* out) noexcept nogil:
    """One round of ``run_act`` (and of the live session's ``act``): ``act`` on ``x`` at
    round ``t``, what it returned to ``out`` (the logged propensity is
    ``out.marginal``). False, with ``kernel.status`` set, when the scores were
    not finite or the distribution was not valid (``played_ok``)."""
    out.action = kernel.act(x, t, u1, u2, &out.greedy, &out.prob, &out.marginal)
    return kernel.status == STATUS_OK and played_ok(kernel, out.marginal)


cdef inline bint logged_round(BaseKernel kernel, JournalData* j, Row x,
                              long long t, double u1, double u2, int action,
                              double reward, double logged_propensity,
                              Py_ssize_t bound_ll, const Acted* acted,
                              int* greedy, signed char* own) noexcept nogil:
    """One round of ``run_logged`` (and of the live session's ``learn``), described
    there: the journal's reservation (``j`` NULL: none), ``act``, the own or
    off-policy probability, ``learn`` and the written entries' check. False,
    with ``kernel.status`` set, when the round was not played (the journal
    could not grow, or ``act`` was refused); True when it was (``learn`` or
    the check may then have set the status: the caller stops after it).
    ``acted``, when not NULL, is what ``act`` returned on this row at round
    ``t`` with the pair ``(u1, u2)`` as the kernel's last call, on the same
    state: ``act`` is then not called again (it is deterministic in those,
    and what it left for ``learn`` in the kernel is still there; the live
    session's ``learn`` of the row it just served)."""
    cdef int b, g
    cdef double p, marginal, prob
    cdef Py_ssize_t mark[2]
    cdef Py_ssize_t lmark[2]
    if acted == NULL:
        if not round_act(kernel, j, x, t, u1, u2, bound_ll, mark, lmark, &b, &g,
                         &p, &marginal):
            return False
    else:
        if j != NULL and not row_reserved(kernel, j, x, bound_ll, mark, lmark):
            return False
        b, g, p, marginal = acted.action, acted.greedy, acted.prob, acted.marginal
    if action == b and logged_propensity == marginal:
        prob = p
        own[0] = 1
    else:
        prob = logged_propensity
        own[0] = 0
    kernel.learn(x, t, action, g, prob, reward)
    greedy[0] = g
    round_check(kernel, j, mark, lmark)
    return True
