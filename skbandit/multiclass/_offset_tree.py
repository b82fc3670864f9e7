"""The Realizable Offset Tree with Passive-Aggressive node classifiers."""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from skbandit._core._drivers import run_scores
from skbandit._learner_docs import learner_doc
from skbandit.base import BaseBanditClassifier, _kernel_arrays, feature_major_zeros
from skbandit.exploration import ExplorationMixin, exploration_constraint
from skbandit.multiclass._conservative_ova_fast import PA_UPDATES
from skbandit.multiclass._offset_tree_fast import OffsetTreeKernel

__all__ = ["OffsetTree"]


def offset_tree_structure(n_classes: int) -> np.ndarray:
    """The tree over ``n_classes`` leaves: one row ``(lo, mid, hi)`` per node.

    Node ``n`` covers the classes ``lo .. hi - 1`` and separates ``lo .. mid - 1``
    (its left side) from ``mid .. hi - 1`` (its right side), with
    ``mid = lo + ceil((hi - lo) / 2)``: a node of ``m`` classes gives the left
    child ``ceil(m / 2)`` of them. Nodes are numbered in preorder (root 0, then
    the left subtree, then the right one). Every leaf is at depth
    ``floor(log2 k)`` or ``ceil(log2 k)``.
    """
    rows: list[tuple[int, int, int]] = []

    def build(lo: int, hi: int) -> None:
        mid = lo + (hi - lo + 1) // 2
        rows.append((lo, mid, hi))
        if mid - lo > 1:
            build(lo, mid)
        if hi - mid > 1:
            build(mid, hi)

    build(0, n_classes)
    return np.array(rows, dtype=np.int64).reshape(-1, 3)


def _kernel_tree(tree: np.ndarray, n_classes: int):
    """``(mid, left, right, parent, leaf_parent)`` int32 arrays for the kernel;
    a child ``c < 0`` is the leaf ``-1 - c``."""
    n_nodes = tree.shape[0]
    mid = np.ascontiguousarray(tree[:, 1], dtype=np.int32)
    left = np.empty(n_nodes, dtype=np.int32)
    right = np.empty(n_nodes, dtype=np.int32)
    parent = np.full(n_nodes, -1, dtype=np.int32)
    leaf_parent = np.full(n_classes, -1, dtype=np.int32)
    node_of = {(int(lo), int(hi)): n for n, (lo, _, hi) in enumerate(tree)}
    for n, (lo, m, hi) in enumerate(tree):
        for side, (a, b) in ((left, (lo, m)), (right, (m, hi))):
            if b - a == 1:
                side[n] = -1 - a
                leaf_parent[a] = n
            else:
                side[n] = node_of[(int(a), int(b))]
                parent[side[n]] = n
    return mid, left, right, parent, leaf_parent


@learner_doc
class OffsetTree(ExplorationMixin, BaseBanditClassifier):
    r"""Realizable Offset Tree with Passive-Aggressive node classifiers.

    The bandit baseline of Chen et al. (2009): the offset tree of Beygelzimer &
    Langford (2009) in its realizable form, with online Passive-Aggressive
    (Crammer et al. 2006) binary classifiers at the nodes.

    **Tree.** A binary tree whose ``k`` leaves are the classes in ``classes_``
    order, left to right, and whose ``k - 1`` internal nodes each hold a linear
    classifier ``w_n`` (no bias, zero at the start) with margin
    ``f_n = w_n . x``. A node covering ``m`` classes gives the first
    ``ceil(m / 2)`` of them to its left subtree and the rest to its right one,
    so for ``k`` not a power of two the leaves are at depths
    ``floor(log2 k)`` and ``ceil(log2 k)`` (``tree_`` lists the nodes).

    **Prediction.** Walk from the root, going right if ``f_n > 0`` and left if
    ``f_n < 0``; the leaf reached is the greedy label ``ĝ``. A zero margin is a
    tie: every leaf reachable by going either way at zero margins is a greedy
    candidate, and training picks one of them uniformly at random (the rule
    every skbandit learner uses for tied scores); ``predict`` takes the first,
    i.e. goes left at a zero margin.

    **Scores.** ``decision_function`` returns, for each class ``l``, its path
    margin

    .. math:: s_l(x) = \min_{n \in \mathrm{path}(l)} \sigma_{n,l}\, f_n(x),

    with ``σ_{n,l} = +1`` if ``l`` is on the right side of node ``n`` and ``-1``
    otherwise: how strongly the weakest node on the path to ``l`` routes towards
    it. The walk's leaf is the only class with ``s_l > 0`` (every other class
    is routed away somewhere), and the maximisers of ``s`` are exactly the
    walk's tied candidates, so ``predict`` is the argmax of these scores.

    **Exploration** (the papers do not specify one): epsilon-greedy around the
    walk, ``p = (1 - γ) e_ĝ + γ / k`` with ``γ`` the ``epsilon`` of its
    exploration rule, so the probability ``p(a)`` of the played class is known
    exactly.

    **Update.** With the played class ``a``, reward ``r = 1[a = y]`` and
    ``p = p(a)``, walk up from leaf ``a``. At each node ``n`` on the way, with
    ``σ = σ_{n,a}`` (a's side):

    * binary label ``z = σ`` ("a's side") if ``r > 1/2``, else ``z = -σ``;
    * importance weight ``ω = |r - 1/2| / p`` (``1 / (2 p)`` for a 0/1 reward);
    * a PA step on ``(x, z)`` with hinge loss ``l = max(0, 1 - z f_n)`` and
      the weight multiplying the loss in the PA objective,
      ``min ½||w - w_n||² + C ω ξ`` (PA-I) or ``+ C ω ξ²`` (PA-II), i.e. the
      slack penalty ``C`` becomes ``C ω``: ``w_n += τ z x`` with

      - ``update="pa"``: ``τ = l / ||x||²`` (a hard constraint: ``ω`` has no
        effect);
      - ``update="pa1"``: ``τ = min(C ω, l / ||x||²)``;
      - ``update="pa2"``: ``τ = l / (||x||² + 1 / (2 C ω))``;

    * continue to the parent only while ``a`` wins the node, ``σ f_n >= 0``
      (``f_n`` before this round's step; a zero margin counts as a win, since
      ``a`` could have come out of it).

    The nodes the walk up does not reach are not changed. A round costs
    ``O(nnz(x) log k)`` (plus the nodes of a tie).

    Parameters
    ----------
    update : {"pa", "pa1", "pa2"}, default="pa1"
        The node classifiers' step: PA, PA-I or PA-II (Crammer et al. 2006).
    C : float, default=0.01
        Aggressiveness of PA-I and PA-II (> 0), scaled by the importance
        weight; unused by ``"pa"``. Chen et al. (2009) use ``C = 1``, which
        is far behind on every stream but 20 Newsgroups (Notes). The useful
        value depends on the scale of the rows (the cap ``C ω`` competes with
        ``l / ||x||²``): 0.01 suits rows in ``[0, 1]`` or ``[-1, 1]``; on
        scikit-learn's raw digits pixels (0 to 16) only ``C = 1e-4`` learns.
    exploration : str, exploration rule or None, default=None
        How a round becomes the distribution played
        (:mod:`skbandit.exploration`). ``None``: epsilon-greedy,
        ``EpsilonGreedy(epsilon=2**-12)``; ``"epsilon_greedy"`` or
        ``"greedy"``; or an ``EpsilonGreedy`` or ``Greedy`` object (a ``None``
        epsilon takes 2^-12). Only rules that do not read the scores are
        accepted: ``act`` walks the tree and evaluates only the nodes on the
        greedy path, not every class's score. The rate ``epsilon`` (``γ``), in
        ``[0, 1]``: the learner plays a uniformly random class with
        probability ``γ``. Recommended range (the rule in Notes): 2^-14 to
        2^-9 (about 0.00006 to 0.002); the tree learns from wrong answers as
        well, so it needs little exploration.
    {passes}
    random_state : int, RandomState instance or None, default=None
        Seeds the learner's generator: two uniforms per round (the
        epsilon-greedy draw and the tie-break of the walk).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels, sorted; leaf ``l`` is ``classes_[l]``.
    node_coef_ : ndarray of shape (n_classes - 1, n_features)
        The node classifiers' weights, one row per node (preorder).
    tree_ : ndarray of shape (n_classes - 1, 3)
        Row ``n`` is ``(lo, mid, hi)``: node ``n`` covers the classes
        ``lo .. hi - 1``; ``f_n > 0`` routes to ``mid .. hi - 1``.
    {label_rounds}

    See Also
    --------
    ConservativeOneVsAll : The one-vs-all reduction Chen et al. (2009) propose.
    Banditron : Linear bandit learner with epsilon-greedy exploration.

    Notes
    -----
    Chen et al. (2009, Table I) report this baseline far behind their
    conservative one-vs-all on MNIST, 20 Newsgroups and USPS and close to it on
    RCV1; they do not state its exploration policy. Beygelzimer & Langford
    train the tree from logged data, bottom up; here each node learns online
    from the rounds on which the played class reaches it.

    PA-I caps the step at ``C ω`` only when ``l / ||x||² > C ω``: on rows with a
    large ``||x||²`` (USPS: about 55) and ``C = 1`` the cap never binds, the
    importance weight has no effect and ``"pa1"`` equals ``"pa"``; normalised
    rows or a smaller ``C`` make the weight count (docs/algorithms.md reports the
    numbers).

    The defaults ``C = 0.01`` and ``EpsilonGreedy(2^-12)`` (with
    ``update="pa1"``) were chosen on tuning streams (one pass, 5 seeds,
    ``epsilon`` in 2^-14 ... 2^-1, ``C`` in {0.001, ..., 10}) by the rule of
    ``docs/experiments.md`` ("Defaults from evidence": the smallest worst excess
    of a seed's online error over the best seed-averaged error across the tuning
    streams); the script, tables and recommended range are in
    ``docs/results/defaults/``. Chen et al.'s offset tree row stays reproducible
    with ``C=1.0, exploration=EpsilonGreedy(0.1)``, as the ``chen2009-table1``
    experiment does.

    Logged feedback (``partial_fit(X, LoggedFeedback(...))``, see
    ``docs/logged.md``): the importance weight is ``ω = |r − ½| / p`` with
    ``p`` the logged propensity of the logged action (the learner's own
    ``p_g(a)`` on its own rounds), which is the offset tree's weighting for
    data logged by any policy (Beygelzimer & Langford 2009). Rewards must be 0
    or 1.

    References
    ----------
    .. [1] A. Beygelzimer and J. Langford, "The offset tree for learning with
       partial labels", KDD 2009 (arXiv:0812.4044).
    .. [2] G. Chen, G. Chen, J. Zhang, S. Chen and C. Zhang, "Beyond Banditron:
       A conservative and efficient reduction for online multiclass prediction
       with bandit setting model", ICDM 2009.
    .. [3] K. Crammer, O. Dekel, J. Keshet, S. Shalev-Shwartz and Y. Singer,
       "Online passive-aggressive algorithms", JMLR 7, 2006.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from skbandit import OffsetTree
    >>> X, y = load_digits(return_X_y=True)
    >>> clf = OffsetTree(random_state=0).partial_fit(X / 16, y, classes=range(10))
    >>> clf.node_coef_.shape
    (9, 64)
    >>> clf.tree_[0].tolist()  # the root separates classes 0-4 from 5-9
    [0, 5, 10]
    """

    _parameter_constraints: dict = {
        **BaseBanditClassifier._parameter_constraints,
        "update": [StrOptions(set(PA_UPDATES))],
        "C": [Interval(Real, 0, None, closed="neither")],
        "exploration": exploration_constraint(),
    }

    _state_attrs = ("node_coef_",)
    # the node weights stored feature-major (the kernel's W is their transpose)
    _feature_major = ("node_coef_",)

    _default_exploration = "epsilon_greedy"
    _exploration_values = {"epsilon_greedy": {"epsilon": 2**-12}, "greedy": {}}
    _exploration_refusal = (
        "The offset tree's act walks the tree without computing every class's "
        "score, so only rules that do not read the scores fit."
    )

    def __init__(
        self,
        *,
        update="pa1",
        C=0.01,
        exploration=None,
        max_iter=5,
        shuffle=True,
        random_state=None,
    ):
        super().__init__(max_iter=max_iter, shuffle=shuffle, random_state=random_state)
        self.update = update
        self.C = C
        self.exploration = exploration

    def _init_state(self, n_features, n_classes):
        self.tree_ = offset_tree_structure(n_classes)
        self.node_coef_ = feature_major_zeros(n_classes - 1, n_features)

    def _make_kernel(self):
        k = self.classes_.shape[0]
        kernel = OffsetTreeKernel(
            self.node_coef_.T,
            *_kernel_tree(self.tree_, k),
            int(PA_UPDATES[self.update]),
            float(self.C),
        )
        kernel.set_explorer(self._explorer(k))
        return kernel

    def _score_rows(self, X):
        self._own_state_arrays()
        kernel = self._make_kernel()
        out = np.empty((X.shape[0], self.classes_.shape[0]), dtype=np.float64)
        data, indices, indptr, dense = _kernel_arrays(X)
        run_scores(kernel, data, indices, indptr, dense, self.t_ + 1, out)
        return out
