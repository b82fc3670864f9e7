"""Realizable Offset Tree with Passive-Aggressive node classifiers (the baseline
of Chen et al. 2009; the offset tree of Beygelzimer & Langford 2009)."""

from libc.math cimport INFINITY, NAN, fabs

import numpy as np

from skbandit._core._kernel cimport (
    STATUS_NONFINITE,
    BaseKernel,
    Row,
    all_finite,
    is_finite,
    row_dot,
    sample_inverse_cdf,
    skb_linear_scores,
    tie_pick,
)
from skbandit._core._kernel import PREFETCH_MIN_BYTES
from skbandit._core._explore cimport Explorer
from skbandit.multiclass._pa cimport PA_DONE, PA_NONFINITE, pa_step


cdef int _tree_depth(const int[::1] parent, const int[::1] leaf_parent,
                     int k) except -1:
    """The most internal nodes on a leaf's path to the root (``k - 1`` at
    most; a walk longer than that is a cycle and raises)."""
    cdef int leaf, n, steps, depth = 0
    for leaf in range(k):
        n = leaf_parent[leaf]
        steps = 0
        while n >= 0:
            if n >= k - 1 or steps >= k - 1:
                raise ValueError("tree arrays do not form a tree")
            steps += 1
            n = parent[n]
        if steps > depth:
            depth = steps
    return depth


cdef class OffsetTreeKernel(BaseKernel):
    """A binary tree over the ``k`` classes with one linear PA classifier per
    internal node (``W[:, n]``, margin ``f_n = W[:, n] . x``; ``W`` is (d, k - 1),
    stored feature-major as every linear kernel's weights: a feature's node
    weights are adjacent, so the nodes of a walk read the same few lines). Node ``n`` covers the
    classes ``lo[n] .. hi[n] - 1``; classes ``>= mid[n]`` are on its right
    (positive) side. Children are coded ``c >= 0`` (node ``c``) or ``c < 0``
    (leaf ``-1 - c``).

    ``act`` walks from the root: right if ``f_n > 0``, left if ``f_n < 0`` and
    both ways if ``f_n == 0``; the leaves reached are exactly the maximisers of
    the path-margin scores of ``compute_scores`` (in increasing class order), so
    the greedy label and its tie-break by ``u2`` are those of the core's
    ``argmax_ties`` while only the visited nodes are evaluated (``O(nnz log k)``
    without ties). The policy is the kernel's explorer around it (the offset
    tree's: epsilon-greedy); ``act`` does not compute the scores, so the
    explorer must not read them (``set_explorer`` refuses one that does).

    ``learn`` walks up from the played leaf ``a`` (see ``OffsetTree``).
    """

    cdef double[:, ::1] W
    cdef const int[::1] mid
    cdef const int[::1] left
    cdef const int[::1] right
    cdef const int[::1] parent
    cdef const int[::1] leaf_parent
    cdef int update
    cdef double C
    # node margins of the current round, valid where stamp[n] == epoch
    cdef double[::1] margin
    cdef long long[::1] stamp
    cdef long long epoch
    # tied greedy leaves (increasing order) and the walk's stack
    cdef int[::1] ties
    cdef int n_ties
    cdef int[::1] stack
    # the most nodes on a leaf's path to the root (the PA steps of a round)
    cdef int depth
    # W beyond PREFETCH_MIN_BYTES: ``act`` computes every node's margin at
    # once (``all_margins``) instead of the walk's nodes one after the other
    # (set by the constructor; public for the tests, which compare both paths)
    cdef public bint eager

    def __init__(self, double[:, ::1] W, const int[::1] mid, const int[::1] left,
                 const int[::1] right, const int[::1] parent,
                 const int[::1] leaf_parent, int update, double C):
        cdef int k = <int>W.shape[1] + 1
        BaseKernel.__init__(self, k, <int>W.shape[0], False)
        if not (mid.shape[0] == left.shape[0] == right.shape[0] == parent.shape[0]
                == k - 1 and leaf_parent.shape[0] == k):
            raise ValueError("tree arrays do not match k - 1 nodes and k leaves")
        self.W = W
        self.mid = mid
        self.left = left
        self.right = right
        self.parent = parent
        self.leaf_parent = leaf_parent
        self.depth = _tree_depth(parent, leaf_parent, k)
        # (and at most 32 nodes, a feature's node weights on at most 4 lines:
        # with many classes the walk's O(log k) nodes are fewer lines)
        self.eager = (k - 1 <= 32
                      and 8 * <double>W.shape[0] * W.shape[1] > PREFETCH_MIN_BYTES)
        self.update = update
        self.C = C
        self.margin = np.zeros(k - 1, dtype=np.float64)
        self.stamp = np.zeros(k - 1, dtype=np.int64)
        self.epoch = 0
        self.ties = np.zeros(k, dtype=np.int32)
        self.n_ties = 0
        self.stack = np.zeros(k + 1, dtype=np.int32)

    cdef inline double node_margin(self, int n, Row x) noexcept nogil:
        """``W[:, n] . x`` (sequential sum), computed once per round."""
        if self.stamp[n] != self.epoch:
            self.margin[n] = row_dot(&self.W[0, n], self.n_classes - 1, x)
            self.stamp[n] = self.epoch
        return self.margin[n]

    cdef void all_margins(self, Row x) noexcept nogil:
        """Every node's margin ``W[:, n] . x`` at once, by the linear kernels'
        blocked scores (each the same sequential sum as ``node_margin``'s,
        bit for bit). For a ``W`` beyond the caches: the walk's nodes,
        evaluated one after the other, would each wait for their own cache
        misses, where here the row's lines of every node (a feature's
        ``k - 1`` weights are adjacent) are read in one sweep, their misses
        overlapping; and those lines are what the update then writes."""
        cdef int n
        skb_linear_scores(&self.W[0, 0], self.n_classes - 1, x.val, x.ind,
                          x.nnz, &self.margin[0])
        for n in range(self.n_classes - 1):
            self.stamp[n] = self.epoch

    cdef void compute_scores(self, Row x, long long t) noexcept nogil:
        # Path margins: s_l = min over the nodes n on the root-leaf path of l of
        # (f_n if l is on n's right side else -f_n), taken from the leaf upwards.
        # Only for prediction and exploration_distribution (all k - 1 nodes).
        cdef int k = self.n_classes
        cdef int n, leaf
        cdef double v, s
        self.epoch += 1
        self.all_margins(x)
        if not all_finite(&self.margin[0], k - 1):
            for leaf in range(k):
                self.scores[leaf] = NAN
            return
        for leaf in range(k):
            s = INFINITY
            n = self.leaf_parent[leaf]
            while n >= 0:
                v = self.margin[n] if leaf >= self.mid[n] else -self.margin[n]
                if v < s:
                    s = v
                n = self.parent[n]
            self.scores[leaf] = s

    def set_explorer(self, Explorer explorer not None):
        """Play ``explorer``: one that does not read the scores (``act`` walks
        the tree without computing them)."""
        if explorer.reads_scores:
            raise ValueError(
                "the offset tree plays only exploration rules that do not read "
                "the scores (its act evaluates the nodes on the greedy path, "
                f"not every class's score); got {type(explorer).__name__}")
        BaseKernel.set_explorer(self, explorer)

    cdef int act(self, Row x, long long t, double u1, double u2,
                 int* greedy, double* prob, double* marginal) noexcept nogil:
        cdef int k = self.n_classes
        cdef int c, a, m = 0, top = 0
        cdef double f
        cdef double* p = &self.proba[0]
        self.epoch += 1
        if self.eager:
            self.all_margins(x)
        # the walk; a zero margin continues both ways (left popped first, so the
        # leaves come out in increasing order)
        self.stack[0] = 0
        top = 1
        while top > 0:
            top -= 1
            c = self.stack[top]
            if c < 0:
                self.ties[m] = -1 - c
                m += 1
                continue
            f = self.node_margin(c, x)
            if not is_finite(f):
                self.status = STATUS_NONFINITE
                greedy[0] = 0
                prob[0] = 0.0
                marginal[0] = 0.0
                return 0
            if f > 0.0:
                self.stack[top] = self.right[c]
                top += 1
            elif f < 0.0:
                self.stack[top] = self.left[c]
                top += 1
            else:
                self.stack[top] = self.right[c]
                self.stack[top + 1] = self.left[c]
                top += 2
        self.n_ties = m
        # the core's tie rule (that of argmax_ties)
        greedy[0] = self.ties[0] if m == 1 else self.ties[tie_pick(u2, m)]
        self.distribution(&self.scores[0], t, greedy[0], p)
        a = sample_inverse_cdf(p, k, u1)
        prob[0] = p[a]
        if m == 1:
            marginal[0] = p[a]
        else:
            # the core's tie marginal over the tied leaves (increasing order)
            marginal[0] = self.marginal_over(t, a, &self.ties[0], m)
        return a

    cdef Py_ssize_t journal_bound(self, Row x) noexcept nogil:
        # at most one PA step per node on the played leaf's path
        return <Py_ssize_t>self.depth * x.nnz

    cdef void learn(self, Row x, long long t, int played, int greedy,
                    double prob, double reward) noexcept nogil:
        # Walk up from the played leaf. At node n, with a's side s = +1 (right)
        # or -1 (left): label z = s if reward > 1/2 else -s, importance weight
        # omega = |reward - 1/2| / prob, PA step on (x, z) with the slack
        # penalty C * omega; continue to the parent while a wins the node
        # (s f_n >= 0, the margin before this round's update).
        cdef int n = self.leaf_parent[played]
        cdef double omega = fabs(reward - 0.5) / prob
        cdef double c_eff = self.C * omega
        cdef double sq = -1.0
        cdef double f, side, z
        cdef int done
        while n >= 0:
            f = self.node_margin(n, x)
            side = 1.0 if played >= self.mid[n] else -1.0
            z = side if reward > 0.5 else -side
            # the shared PA step (ends the round on x = 0 or ||x||^2 = inf)
            done = pa_step(self.jd, &self.W[0, n], self.n_classes - 1, x, z,
                           1.0 - z * f,
                           self.update, c_eff, &sq)
            if done != PA_DONE:
                if done == PA_NONFINITE:
                    self.status = STATUS_NONFINITE
                return
            if side * f < 0.0:
                return
            n = self.parent[n]

    # ------------------------------------------------ Python-callable helpers
    def py_ties(self):
        """The tied greedy leaves of the last ``act`` (increasing order)."""
        return np.array(self.ties[:self.n_ties], copy=True)
