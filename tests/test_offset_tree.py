"""OffsetTree: the Realizable Offset Tree with PA node classifiers (the baseline
of Chen et al. 2009; Beygelzimer & Langford 2009).

- The NumPy reference fed the same uniforms: identical actions, propensities and
  node weights, dense and CSR, PA / PA-I / PA-II, fit and partial_fit.
- The tree shape for any k; one update worked by hand on a 4-class tree; the
  walk up stops at the first node the played class loses; the importance weight
  1 / (2 p) in the PA-I / PA-II steps; k = 2 is one binary PA learner.
- predict is the walk; the scores, ties and the exploration distribution.
- USPS: the offset tree far behind conservative one-vs-all (Chen et al. Table I).
"""

from __future__ import annotations

import _reference_offset_tree as ref_ot
import numpy as np
import pytest
import scipy.sparse as sp
from _data import label_values, make_stream
from numpy.testing import assert_allclose, assert_array_equal

from skbandit import BanditFeedback, ConservativeOneVsAll, OffsetTree
from skbandit.exploration import EpsilonGreedy
from skbandit.multiclass._offset_tree import offset_tree_structure

UPDATES = [("pa", 1.0), ("pa1", 0.3), ("pa2", 0.5)]


def _as(X, container):
    return sp.csr_matrix(X) if container == "csr" else X


# --------------------------------------------------------------------------------------
# against the reference


class _AllMarginsOffsetTree(OffsetTree):
    """Its kernel computes every node's margin in ``act`` (``eager``, what a
    model beyond the caches does) instead of the walk's nodes only."""

    def _make_kernel(self):
        kernel = super()._make_kernel()
        assert not kernel.eager  # a small model walks
        kernel.eager = True
        return kernel


@pytest.mark.parametrize("margins", ["walk", "all"])
@pytest.mark.parametrize("container", ["dense", "csr"])
@pytest.mark.parametrize("kind", ["gaussian", "binary"])
@pytest.mark.parametrize("k", [2, 3, 5, 8])
@pytest.mark.parametrize("update, C", UPDATES)
@pytest.mark.parametrize("gamma", [0.2, 0.0])
def test_offset_tree_matches_reference(gamma, update, C, k, kind, container, margins):
    """Both ways of computing the margins (the walk's nodes one by one; all at
    once, the path of a model beyond the caches) give the reference's rounds
    bit for bit; the binary rows tie nodes at zero margin."""
    seed = 11 * k + len(kind) + len(update)
    X, y = make_stream(n=300, d=15, k=k, kind=kind, seed=seed)
    labels = label_values(k, seed)
    cls = OffsetTree if margins == "walk" else _AllMarginsOffsetTree
    est = cls(update=update, C=C, exploration=EpsilonGreedy(gamma), random_state=seed)
    rng = np.random.default_rng(seed)
    W = None
    for part in (slice(0, 170), slice(170, 300)):
        fb = BanditFeedback(labels[y[part]])
        before = (getattr(est, "n_mistakes_", 0), getattr(est, "n_greedy_mistakes_", 0))
        est.partial_fit(_as(X[part], container), fb, classes=labels)
        U = rng.random((part.stop - part.start, 2))
        trace = ref_ot.offset_tree(
            _as(X[part], container),
            y[part],
            U,
            k,
            update=update,
            C=C,
            gamma=gamma,
            W0=W,
        )
        W = trace.state["node_coef_"]
        assert_array_equal(fb.actions_, labels[trace.played])
        assert_array_equal(fb.rewards_, trace.rewards)
        assert_array_equal(fb.propensities_, trace.propensities)
        assert est.n_mistakes_ - before[0] == int(np.sum(trace.played != y[part]))
        assert est.n_greedy_mistakes_ - before[1] == int(
            np.sum(trace.greedy != y[part])
        )
        assert_array_equal(est.node_coef_, W)
        assert est._state_attrs == ("node_coef_",)
    # prediction scores: the same compiled sums, path margins of the reference
    S = est.decision_function(_as(X, container))
    nodes = ref_ot.tree(k)
    for i in range(0, 300, 23):
        cols, vals = ref_ot._row(_as(X, container), i)
        s = ref_ot.path_margins(nodes, ref_ot.scores(W, cols, vals), k)
        if k == 2:
            assert S[i] == s[1] - s[0]
        else:
            assert_array_equal(S[i], s)


@pytest.mark.parametrize("update", ["pa", "pa1", "pa2"])
def test_offset_tree_fit_matches_reference(update):
    k, seed = 6, 3
    X, y = make_stream(n=120, d=10, k=k, seed=seed)
    est = OffsetTree(
        update=update,
        C=0.2,
        exploration=EpsilonGreedy(0.1),
        random_state=seed,
        max_iter=3,
    )
    est.fit(sp.csr_matrix(X), y)
    rng = np.random.default_rng(seed)
    W = None
    for _ in range(3):
        rows = rng.permutation(len(y))
        U = rng.random((len(y), 2))
        W = ref_ot.offset_tree(
            X[rows], y[rows], U, k, update=update, C=0.2, gamma=0.1, W0=W
        ).state["node_coef_"]
    assert_array_equal(est.node_coef_, W)


# --------------------------------------------------------------------------------------
# the tree


def test_tree_shape_by_hand():
    """A node of m classes gives ceil(m / 2) to the left; preorder numbering."""
    assert offset_tree_structure(2).tolist() == [[0, 1, 2]]
    assert offset_tree_structure(3).tolist() == [[0, 2, 3], [0, 1, 2]]
    assert offset_tree_structure(4).tolist() == [[0, 2, 4], [0, 1, 2], [2, 3, 4]]
    assert offset_tree_structure(5).tolist() == [
        [0, 3, 5], [0, 2, 3], [0, 1, 2], [3, 4, 5],
    ]  # fmt: skip


@pytest.mark.parametrize("k", [2, 3, 5, 7, 10, 16, 17, 33])
def test_tree_shape_any_k(k):
    """k - 1 nodes; every class is one leaf at depth floor or ceil of log2 k;
    every node splits its range into two non-empty halves."""
    tree = offset_tree_structure(k)
    assert tree.shape == (k - 1, 3)
    assert tree[0].tolist() == [0, (k + 1) // 2, k]
    assert np.all((tree[:, 0] < tree[:, 1]) & (tree[:, 1] < tree[:, 2]))
    depth = [int(np.sum((tree[:, 0] <= c) & (c < tree[:, 2]))) for c in range(k)]
    assert set(depth) <= {int(np.floor(np.log2(k))), int(np.ceil(np.log2(k)))}
    # leaves: a class is a leaf child of exactly one node
    leaf_of = [
        int(np.sum((tree[:, 0] == c) & (tree[:, 1] == c + 1)))
        + int(np.sum((tree[:, 1] == c) & (tree[:, 2] == c + 1)))
        for c in range(k)
    ]
    assert leaf_of == [1] * k
    est = OffsetTree(random_state=0).partial_fit(
        np.zeros((1, 2)), [0], classes=range(k)
    )
    assert_array_equal(est.tree_, tree)
    assert est.node_coef_.shape == (k - 1, 2)


# --------------------------------------------------------------------------------------
# one update by hand (k = 4: root (0, 1 | 2, 3), node 1 (0 | 1), node 2 (2 | 3))

X4 = np.array([1.0, 1.0])  # ||x||^2 = 2
W4 = np.array([[0.5, 0.0], [-1.0, 0.0], [0.25, 0.25]])  # f = (0.5, -1, 0.5)


def _tree4(update="pa1", C=1.0, gamma=0.2, W=W4):
    est = OffsetTree(
        update=update, C=C, exploration=EpsilonGreedy(gamma), random_state=0
    )
    est.partial_fit(np.zeros((1, 2)), [0], classes=[0, 1, 2, 3])  # x = 0: no step
    assert_array_equal(est.node_coef_, 0.0)
    est.node_coef_[:] = W
    kernel = est._make_kernel()
    # the walk: f_0 > 0 right, f_2 > 0 right -> class 3, with p = 1 - 0.2 + 0.05
    a, g, p, marginal = kernel.py_act(X4, 2, 0.5, 0.0)
    assert (a, g) == (3, 3)
    assert p == marginal == 0.2 / 4 + (1 - 0.2)  # 0.85 up to rounding
    return est, kernel


def test_hand_worked_wrong_greedy_round_walks_to_the_root():
    """Played 3 (greedy), wrong. Node 2: 3 is on its right, label "other side"
    z = -1, loss 1 + 0.5 = 1.5, omega = 0.5 / 0.85; PA-I tau = min(C omega,
    1.5 / 2) = omega. 3 wins node 2 (f_2 > 0): the root gets the same step
    (3 on its right, f_0 = 0.5). Node 1 is not on the path."""
    est, kernel = _tree4()
    kernel.py_learn(X4, 2, 3, 3, 0.85, 0.0)
    omega = 0.5 / 0.85
    expected = W4.copy()
    expected[2] -= omega * X4
    expected[0] -= omega * X4
    assert_allclose(est.node_coef_, expected, rtol=1e-15)


def test_hand_worked_right_explored_round_stops_where_it_loses():
    """Played 1 (explored, p = 0.05), right. Node 1: 1 is on its right, label
    z = +1, loss 1 - (-1) = 2, omega = 0.5 / 0.05 = 10, PA-I tau = min(10, 2 / 2)
    = 1: w_1 = (-1, 0) + (1, 1). 1 lost node 1 (f_1 = -1 < 0 before the step):
    the walk stops, although after the step f_1 = 1 > 0."""
    est, kernel = _tree4()
    kernel.py_learn(X4, 2, 1, 3, 0.05, 1.0)
    expected = W4.copy()
    expected[1] = [0.0, 1.0]
    assert_array_equal(est.node_coef_, expected)


def test_hand_worked_right_greedy_round_and_a_node_without_loss():
    """Played 3, right: z = +1 at node 2 and the root, loss 1 - 0.5 = 0.5 at
    both, tau = min(omega, 0.25) = 0.25. With w_2 = (1, 1) (f_2 = 2, no loss),
    node 2 is not changed but 3 wins it, so the root still takes its step."""
    est, kernel = _tree4()
    kernel.py_learn(X4, 2, 3, 3, 0.85, 1.0)
    expected = W4.copy()
    expected[2] += 0.25 * X4
    expected[0] += 0.25 * X4
    assert_array_equal(est.node_coef_, expected)
    W = W4.copy()
    W[2] = [1.0, 1.0]
    est, kernel = _tree4(W=W)
    kernel.py_learn(X4, 2, 3, 3, 0.85, 1.0)
    expected = W.copy()
    expected[0] += 0.25 * X4
    assert_array_equal(est.node_coef_, expected)


def test_hand_worked_wrong_explored_round():
    """Played 2 (explored), wrong. Node 2: 2 is on its left (sigma = -1), label
    "other side" z = +1, loss 1 - 0.5 = 0.5, PA tau = 0.5 / 2; 2 lost node 2
    (sigma f_2 = -0.5): stop. The root and node 1 are unchanged."""
    est, kernel = _tree4(update="pa")
    kernel.py_learn(X4, 2, 2, 3, 0.05, 0.0)
    expected = W4.copy()
    expected[2] += 0.25 * X4
    assert_array_equal(est.node_coef_, expected)


@pytest.mark.parametrize("p", [0.85, 0.3, 0.05])
@pytest.mark.parametrize("update", ["pa", "pa1", "pa2"])
def test_importance_weight_enters_as_c_times_omega(update, p):
    """omega = |r - 1/2| / p multiplies the slack penalty C: PA-I caps tau at
    C omega, PA-II uses 1 / (2 C omega); the hard PA step ignores omega. Played
    1 (right) at node 1: loss 2, ||x||^2 = 2."""
    C = 0.1
    est, kernel = _tree4(update=update, C=C)
    kernel.py_learn(X4, 2, 1, 3, p, 1.0)
    omega = 0.5 / p
    tau = {
        "pa": 2.0 / 2.0,
        "pa1": min(C * omega, 2.0 / 2.0),
        "pa2": 2.0 / (2.0 + 1.0 / (2.0 * C * omega)),
    }[update]
    assert_allclose(est.node_coef_[1], W4[1] + tau * X4, rtol=1e-14)
    assert_array_equal(est.node_coef_[[0, 2]], W4[[0, 2]])


# --------------------------------------------------------------------------------------
# the walk up on a stream


def _path(tree, a):
    """Nodes from a's leaf up to the root, with a's side (+1 right, -1 left)."""
    nodes = [n for n in range(len(tree)) if tree[n, 0] <= a < tree[n, 2]]
    nodes.sort(key=lambda n: tree[n, 2] - tree[n, 0])
    return [(n, 1.0 if a >= tree[n, 1] else -1.0) for n in nodes]


@pytest.mark.parametrize("k", [5, 8])
def test_walk_up_stops_where_the_played_class_loses(k):
    """Round by round: the nodes that change are on the played class's path, from
    its leaf up to the first node it loses (sigma f_n < 0), included; every node
    of that stretch with a positive hinge loss changes, in the label's direction."""
    X, y = make_stream(n=400, d=8, k=k, n_empty=0, seed=k)
    est = OffsetTree(
        update="pa1", C=0.5, exploration=EpsilonGreedy(0.3), random_state=1
    )
    est.partial_fit(X[:50], y[:50], classes=np.arange(k))
    stopped_early = 0
    for t in range(50, 400):
        W = est.node_coef_.copy()
        f = W @ X[t]
        fb = BanditFeedback(y[t : t + 1])
        est.partial_fit(X[t : t + 1], fb)
        a, r = int(fb.actions_[0]), float(fb.rewards_[0])
        changed = set(np.flatnonzero(np.any(est.node_coef_ != W, axis=1)))
        if not X[t].any():  # x = 0: no PA step anywhere
            assert not changed
            continue
        reached = []
        for n, sig in _path(est.tree_, a):
            reached.append(n)
            z = sig if r > 0.5 else -sig
            if 1.0 - z * f[n] > 0.0:
                assert n in changed
                assert z * (est.node_coef_[n] @ X[t]) > z * f[n]
            if sig * f[n] < 0.0:
                break
        assert changed <= set(reached)
        stopped_early += len(reached) < len(_path(est.tree_, a))
    assert stopped_early > 20


# --------------------------------------------------------------------------------------
# k = 2: a single binary PA learner


def _binary_pa(X, z, update, C):
    """Binary PA (Crammer et al. 2006) on labels z = +-1, margins summed
    sequentially."""
    w = np.zeros(X.shape[1])
    for x, zt in zip(X, z, strict=True):
        f = np.cumsum(w * x)[-1]
        loss = 1.0 - zt * f
        sq = np.cumsum(x * x)[-1]
        if loss > 0.0 and sq > 0.0:
            tau = {
                "pa": loss / sq,
                "pa1": min(C, loss / sq),
                "pa2": loss / (sq + 1.0 / (2.0 * C)),
            }[update]
            w += (tau * zt) * x
    return w


@pytest.mark.parametrize(
    "update, gamma", [("pa", 0.3), ("pa", 0.0), ("pa1", 0.0), ("pa2", 0.0)]
)
def test_two_classes_is_one_pa_learner(update, gamma):
    """With k = 2 the reward reveals the label, the root is a's parent and the
    walk ends there: every round is a PA step on z = +1 iff y is the second
    class. PA ignores omega; without exploration p = 1, omega = 1/2, so PA-I and
    PA-II run with C / 2."""
    X, y = make_stream(n=300, d=7, k=2, seed=4)
    C = 0.8
    est = OffsetTree(
        update=update, C=C, exploration=EpsilonGreedy(gamma), random_state=0
    )
    est.partial_fit(X, y, classes=[0, 1])
    w = _binary_pa(X, np.where(y == 1, 1.0, -1.0), update, C * 0.5)
    assert_array_equal(est.node_coef_[0], w)
    f = X @ w
    assert_allclose(est.decision_function(X), 2 * f, rtol=1e-12, atol=1e-12)
    assert_array_equal(est.predict(X), (f > 0).astype(int))


# --------------------------------------------------------------------------------------
# prediction, scores, ties, exploration


def _walk(tree, f, zero):
    """Tied leaves of the walk: right if f > 0, left if f < 0, both ways if 0
    (``zero="both"``) or left (``zero="left"``)."""
    kids = {}
    for n, (lo, _, hi) in enumerate(tree):
        kids[(lo, hi)] = n
    out = []

    def go(lo, hi):
        if hi - lo == 1:
            out.append(lo)
            return
        n = kids[(lo, hi)]
        mid = tree[n, 1]
        if f[n] > 0:
            go(mid, hi)
        elif f[n] < 0 or zero == "left":
            go(lo, mid)
        else:
            go(lo, mid)
            go(mid, hi)

    go(0, len(tree) + 1)
    return out


@pytest.fixture
def random_tree():
    rng = np.random.default_rng(5)
    k, d = 7, 4
    est = OffsetTree(exploration=EpsilonGreedy(0.3), random_state=0).partial_fit(
        np.zeros((1, d)), [0], classes=np.arange(k)
    )
    est.node_coef_[:] = rng.standard_normal((k - 1, d))
    est.node_coef_[2] = 0.0  # a node with zero margins: ties below it
    X = rng.standard_normal((200, d))
    X[:5] = 0.0  # every margin zero: every class tied
    X[5:10, :2] = 0.0
    est.node_coef_[4, 2:] = 0.0  # node 4's margin is zero on rows 5-9
    return est, X


def test_predict_is_the_walk(random_tree):
    est, X = random_tree
    F = X @ est.node_coef_.T
    walk = [_walk(est.tree_, F[i], "left")[0] for i in range(len(X))]
    assert_array_equal(est.predict(X), walk)
    assert_array_equal(est.predict(sp.csr_matrix(X)), walk)
    S = est.decision_function(X)
    for i in range(len(X)):
        tied = _walk(est.tree_, F[i], "both")
        assert_array_equal(np.flatnonzero(S[i] == S[i].max()), tied)
        if len(tied) == 1:  # the walk's leaf is the only positive path margin
            assert_array_equal(np.flatnonzero(S[i] > 0), tied)
    assert 0 < sum(len(_walk(est.tree_, F[i], "both")) > 1 for i in range(len(X)))


def test_exploration_distribution_and_tie_rule(random_tree):
    """p = (1 - gamma) / m on each of the m tied walk leaves + gamma / k; the
    training walk picks the min(int(u2 m), m - 1)-th tied leaf (the core's rule)."""
    est, X = random_tree
    k, gamma = 7, 0.3
    F = X @ est.node_coef_.T
    P = est.exploration_distribution(X)
    kernel = est._make_kernel()
    for i in range(len(X)):
        tied = _walk(est.tree_, F[i], "both")
        expected = np.full(k, gamma / k)
        expected[tied] += (1 - gamma) / len(tied)
        assert_allclose(P[i], expected, rtol=1e-14)
        for u2 in (0.0, 0.37, 0.99999):
            _, g, _, marginal = kernel.py_act(X[i], est.t_ + 1, 0.999, u2)
            m = len(tied)
            assert g == tied[min(int(u2 * m), m - 1)]
            assert_array_equal(kernel.py_ties(), tied)
    assert_allclose(P[:5], 1 / k, rtol=1e-14)


# --------------------------------------------------------------------------------------
# USPS (Chen et al. 2009, Table I: offset tree with PA-I 59.50%, conservative
# one-vs-all with PA-I 17.70%)


def test_usps_offset_tree_far_behind_conservative_ova(usps_stream):
    X, y = usps_stream
    classes = np.unique(y)
    err_ot, err_ova = [], []
    for seed in range(5):
        ot = OffsetTree(
            update="pa1", C=1.0, exploration=EpsilonGreedy(0.1), random_state=seed
        )
        ot.partial_fit(X, y, classes=classes)
        err_ot.append(ot.n_mistakes_ / ot.t_)
        ova = ConservativeOneVsAll(update="pa1", random_state=seed)
        ova.partial_fit(X, y, classes=classes)
        err_ova.append(ova.n_mistakes_ / ova.t_)
    assert np.mean(err_ot) > np.mean(err_ova) + 0.2
    assert abs(np.mean(err_ot) - 0.595) < 0.05


@pytest.mark.parametrize("reward", [0.0, 1.0])
def test_learn_does_not_depend_on_the_draw(reward):
    """act evaluates the walk's nodes only; learn evaluates the other nodes of the
    learnt class's path on demand. Learning from a class b (any class, not the
    drawn one) gives the same state whatever the draw, equal to the step computed
    from all the margins before the round."""
    rng = np.random.default_rng(3)
    k, d = 9, 5
    for _ in range(30):
        W = rng.standard_normal((k - 1, d))
        x = rng.standard_normal(d)
        b = int(rng.integers(k))
        states = []
        for u1 in (0.001, 0.999):  # two draws: the first and the last class
            est = OffsetTree(
                update="pa1", C=0.1, exploration=EpsilonGreedy(0.9), random_state=0
            )
            est.partial_fit(np.zeros((1, d)), [0], classes=np.arange(k))
            est.node_coef_[:] = W
            kernel = est._make_kernel()
            a, g, _, _ = kernel.py_act(x, 2, u1, 0.5)
            kernel.py_learn(x, 2, b, g, 0.1 / k, reward)
            states.append(est.node_coef_.copy())
        assert_array_equal(states[0], states[1])
        # and equal to the reference's step from the same margins
        nodes = ref_ot.tree(k)
        f = ref_ot.scores(W, None, x)
        expected = W.copy()
        for n, sig in reversed(ref_ot.path(nodes, b)):
            z = sig if reward > 0.5 else -sig
            loss = 1.0 - z * f[n]
            if loss > 0.0:
                tau = ref_ot.pa_tau(
                    "pa1", 0.1 * (0.5 / (0.1 / k)), loss, np.cumsum(x * x)[-1]
                )
                expected[n] += (tau * z) * x
            if sig * f[n] < 0.0:
                break
        assert_array_equal(states[0], expected)
