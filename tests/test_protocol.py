"""Protocol properties every learner must have, written once over the registry.

Chunk invariance, dense == sparse, pickling mid-stream, idempotent ``fit``,
determinism, label/feature dtype handling, the BanditFeedback log and counters,
the exploration distribution and the logged propensities. Learners are compared
whole through the state protocol (weights, counters, generator) and by the
actions they play next. (The label-leak tests are in test_label_leak.py.)
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from _data import label_values, make_stream
from _helpers import (
    assert_same_learner,
    assert_same_log,
    assert_same_next_actions,
    assert_same_state,
    snapshot,
)
from _registry import BANDIT_ENTRIES, entry_params, spread
from numpy.testing import assert_allclose, assert_array_equal

from skbandit import BanditFeedback
from skbandit.exploration import EpsilonGreedy

ALL = entry_params()

# ``fit`` passes of a Python-loop meta-estimator (``Entry.python_loop``, whose
# rounds cost tens of times a kernel's) in the tests below whose property is an
# equality decided on every round (label encoding, dtype conversion,
# determinism under a seed): two passes still reshuffle and replay every row a
# second time from a learnt state, the rest of the default five only repeat it.
PYTHON_LOOP_MAX_ITER = 2


def _passes(entry) -> dict:
    """``max_iter`` for ``entry.make`` where ``fit`` is called at its default."""
    return {"max_iter": PYTHON_LOOP_MAX_ITER} if entry.python_loop else {}


# --------------------------------------------------------------------------------------
# chunk invariance, sparse inputs, pickling, fit semantics, determinism

CHUNKS = [1, 2, 30, 100, 1, 123]  # uneven, sums to 257


def _state_arrays(est) -> dict:
    """Copies of the learner's declared state arrays (``coef_`` for the linear
    learners; a kernel learner's support set)."""
    return {n: np.copy(getattr(est, n)) for n in est._state_attrs}


def _scores(est, X):
    """``X @ coef_.T`` for a linear learner; a learner without ``coef_`` (the
    rational-kernel one-vs-all) is scored by its own compiled function, which
    its own tests check against its NumPy reference."""
    if hasattr(est, "coef_"):
        return X @ est.coef_.T + getattr(est, "intercept_", 0.0)
    return est._score_rows(X)


@pytest.mark.parametrize("entry", ALL)
@pytest.mark.parametrize("container", ["dense", "csr"])
@pytest.mark.parametrize("classes_every_call", [False, True])
def test_chunk_invariance(entry, container, classes_every_call):
    k, seed = 5, 21
    n = sum(CHUNKS)
    X, y = make_stream(n=n, d=11, k=k, seed=seed)
    Xc = sp.csr_matrix(X) if container == "csr" else X
    labels = label_values(k)

    whole = entry.make(random_state=seed)
    fb = BanditFeedback(labels[y])
    whole.partial_fit(Xc, fb, classes=labels)

    chunked = entry.make(random_state=seed)
    fb_all = BanditFeedback(labels[y])
    logs = {"rows_": [], "actions_": [], "rewards_": [], "propensities_": []}
    start = 0
    for i, size in enumerate(CHUNKS):
        stop = start + size
        fb_chunk = fb_all[start:stop]
        kwargs = {"classes": labels} if (i == 0 or classes_every_call) else {}
        assert chunked.partial_fit(Xc[start:stop], fb_chunk, **kwargs) is chunked
        assert_array_equal(fb_chunk.rows_, np.arange(size))
        logs["rows_"].append(fb_chunk.rows_ + start)
        for name in ("actions_", "rewards_", "propensities_"):
            logs[name].append(getattr(fb_chunk, name))
        start = stop

    assert_same_learner(chunked, whole)
    X_next, y_next = make_stream(n=60, d=11, k=k, seed=seed + 1)
    assert_same_next_actions(chunked, whole, X_next, labels[y_next])
    for name, parts in logs.items():
        assert_array_equal(np.concatenate(parts), getattr(fb, name), err_msg=name)


SPARSE_FORMATS = [
    sp.csr_matrix,
    sp.csc_matrix,
    sp.coo_matrix,
    sp.lil_matrix,
    sp.dok_matrix,
    sp.bsr_matrix,
    sp.csr_array,
    sp.csc_array,
    sp.coo_array,
]


@pytest.mark.parametrize("entry", ALL)
@pytest.mark.parametrize("container", ["dense", "csr"])
def test_internal_blocking_is_invisible(entry, container, monkeypatch):
    """A long call is played in blocks of rows (bounded memory for the uniforms and
    outcomes); the block size must not change anything. Blocks of 7 rows here."""
    k, seed = 5, 31
    X, y = make_stream(n=150, d=8, k=k, seed=seed)
    Xc = sp.csr_matrix(X) if container == "csr" else X
    whole = entry.make(random_state=seed)
    fb_whole = BanditFeedback(y)
    whole.partial_fit(Xc, fb_whole, classes=np.arange(k))
    fit_whole = entry.make(random_state=seed, max_iter=2).fit(Xc, y)

    monkeypatch.setattr("skbandit._base._transaction._BLOCK_ROWS", 7)
    blocked = entry.make(random_state=seed)
    fb_blocked = BanditFeedback(y)
    blocked.partial_fit(Xc, fb_blocked, classes=np.arange(k))
    fit_blocked = entry.make(random_state=seed, max_iter=2).fit(Xc, y)

    assert_same_learner(blocked, whole)
    assert_same_log(fb_blocked, fb_whole)
    assert_same_learner(fit_blocked, fit_whole)


# every container on one learner, CSR and one other in turn on the others (the
# conversion to CSR is shared code)
@pytest.mark.parametrize(
    "entry, fmt",
    spread(SPARSE_FORMATS, always=(sp.csr_matrix,), ids=lambda f: f.__name__),
)
def test_dense_equals_sparse(entry, fmt):
    k, seed = 4, 8
    X, y = make_stream(n=220, d=13, k=k, seed=seed)
    Xs = fmt(X)

    dense = entry.make(random_state=seed)
    fb_d = BanditFeedback(y)
    dense.partial_fit(X, fb_d, classes=np.arange(k))
    sparse = entry.make(random_state=seed)
    fb_s = BanditFeedback(y)
    sparse.partial_fit(Xs, fb_s, classes=np.arange(k))
    assert_same_learner(sparse, dense)
    assert_same_log(fb_s, fb_d)
    X_next, y_next = make_stream(n=60, d=13, k=k, seed=seed + 1)
    assert_same_next_actions(sparse, dense, X_next, y_next)

    dense_fit = entry.make(random_state=seed, max_iter=2).fit(X, y)
    sparse_fit = entry.make(random_state=seed, max_iter=2).fit(fmt(X), y)
    assert_same_learner(sparse_fit, dense_fit)

    assert_allclose(
        sparse.decision_function(fmt(X)), dense.decision_function(X), rtol=1e-10
    )
    assert_array_equal(sparse.predict(fmt(X)), dense.predict(X))


@pytest.mark.parametrize("entry", ALL)
@pytest.mark.parametrize("container", ["dense", "csr"])
def test_pickle_mid_stream_then_resume(entry, container):
    k, seed = 6, 13
    X, y = make_stream(n=300, d=9, k=k, seed=seed)
    Xc = sp.csr_matrix(X) if container == "csr" else X

    straight = entry.make(random_state=seed)
    straight.partial_fit(Xc[:120], y[:120], classes=np.arange(k))
    straight.partial_fit(Xc[120:], y[120:])

    first = entry.make(random_state=seed)
    first.partial_fit(Xc[:120], y[:120], classes=np.arange(k))
    resumed = pickle.loads(pickle.dumps(first))
    assert_same_learner(resumed, first)
    fb = BanditFeedback(y[120:])
    resumed.partial_fit(Xc[120:], fb)
    assert_same_learner(resumed, straight)
    X_next, y_next = make_stream(n=60, d=9, k=k, seed=seed + 1)
    assert_same_next_actions(resumed, straight, X_next, y_next)

    # the original object is independent of its unpickled copy
    fb_first = BanditFeedback(y[120:])
    first.partial_fit(Xc[120:], fb_first)
    assert_same_learner(first, straight)
    assert_same_log(fb_first, fb)


@pytest.mark.parametrize("entry", ALL)
def test_fit_twice_equals_fit_once(entry):
    k, seed = 5, 4
    X, y = make_stream(n=180, d=10, k=k, seed=seed)
    once = entry.make(random_state=seed, max_iter=3).fit(X, y)

    twice = entry.make(random_state=seed, max_iter=3)
    twice.fit(X, y)
    twice.fit(X, y)
    assert_same_learner(twice, once)
    X_next, y_next = make_stream(n=60, d=10, k=k, seed=seed + 1)
    assert_same_next_actions(twice, once, X_next, y_next)
    assert once.t_ == 3 * len(y)

    # fit resets whatever partial_fit (or a fit on other data) did before
    other_X, other_y = make_stream(n=50, d=4, k=3, seed=99)
    reset = entry.make(random_state=seed, max_iter=3)
    reset.fit(other_X, other_y)
    reset.partial_fit(other_X, other_y)
    assert reset.n_features_in_ == 4
    reset.fit(X, y)
    assert_same_learner(reset, once)


@pytest.mark.parametrize("entry", ALL)
def test_fit_equals_partial_fit_epochs_without_shuffle(entry):
    """fit(shuffle=False, max_iter=m) == m partial_fit passes (same generator)."""
    k, seed = 4, 17
    X, y = make_stream(n=160, d=7, k=k, seed=seed)
    fitted = entry.make(random_state=seed, max_iter=3, shuffle=False).fit(X, y)
    passes = entry.make(random_state=seed, max_iter=3, shuffle=False)
    for _ in range(3):
        passes.partial_fit(X, y, classes=np.arange(k))
    assert_same_learner(passes, fitted)


@pytest.mark.parametrize("entry", ALL)
def test_random_state_determinism(entry):
    """The same seed gives the same learner and log; a bandit learner with
    another seed plays and learns otherwise (caught: a generator not seeded
    from ``random_state``, a global generator)."""
    k = 5
    X, y = make_stream(n=250, d=10, k=k, seed=2)
    passes = _passes(entry)
    a = entry.make(random_state=123, **passes).fit(X, y)
    b = entry.make(random_state=123, **passes).fit(X, y)
    assert_same_learner(a, b)

    fa, fb = BanditFeedback(y), BanditFeedback(y)
    entry.make(random_state=5).partial_fit(X, fa, classes=np.arange(k))
    entry.make(random_state=5).partial_fit(X, fb, classes=np.arange(k))
    assert_same_log(fa, fb)

    if entry.bandit:
        c = entry.make(random_state=124, **passes).fit(X, y)
        sa, sc = _state_arrays(a), _state_arrays(c)
        assert any(not np.array_equal(sa[n], sc[n]) for n in sa)
        fc = BanditFeedback(y)
        entry.make(random_state=6).partial_fit(X, fc, classes=np.arange(k))
        assert not np.array_equal(fa.actions_, fc.actions_)


@pytest.mark.parametrize("entry", ALL)
def test_predicting_does_not_advance_the_generator(entry):
    k, seed = 5, 31
    X, y = make_stream(n=200, d=8, k=k, seed=seed)
    straight = entry.make(random_state=seed)
    straight.partial_fit(X[:100], y[:100], classes=np.arange(k))
    straight.partial_fit(X[100:], y[100:])

    probed = entry.make(random_state=seed)
    probed.partial_fit(X[:100], y[:100], classes=np.arange(k))
    probed.predict(X)
    probed.decision_function(X)
    probed.score(X, y)
    if hasattr(probed, "exploration_distribution"):
        probed.exploration_distribution(X)
    probed.partial_fit(X[100:], y[100:])
    assert_same_learner(probed, straight)
    assert_same_next_actions(probed, straight, X[:50], y[:50])


# --------------------------------------------------------------------------------------
# label types and feature dtypes

LABEL_SETS = {
    "str": np.array(["ant", "bee", "cat", "dog"]),
    "object-str": np.array(["ant", "bee", "cat", "dog"], dtype=object),
    # integral floats (sklearn treats non-integral float targets as continuous)
    "float": np.array([-1.0, 0.0, 2.0, 7.0]),
    "negative-int": np.array([-40, -3, 0, 12]),
    "int8": np.array([-3, 1, 4, 9], dtype=np.int8),
    "uint16": np.array([5, 600, 601, 65000], dtype=np.uint16),
    "bool": np.array([False, True]),
    "two-str": np.array(["no", "yes"]),
}


# the label encoding is shared code: every label set on one learner; strings
# and two classes (k = 2) on every learner, and one other set in turn
@pytest.mark.parametrize(
    "entry, label_set", spread(list(LABEL_SETS), always=("str", "two-str"))
)
def test_label_types(entry, label_set):
    """Labels of any type (strings, ints, floats, ...) given in any order learn
    exactly what their codes 0..k-1 learn; ``classes_`` is sorted, actions and
    predictions are labels (caught: a label encoding that depends on the order
    of ``classes``, actions logged as codes)."""
    labels = LABEL_SETS[label_set]
    k, seed = len(labels), 14
    X, y = make_stream(n=160, d=8, k=k, seed=seed)

    ref = entry.make(random_state=seed)
    fb_ref = BanditFeedback(y)
    ref.partial_fit(X, fb_ref, classes=np.arange(k))

    # classes given in an unsorted order: classes_ is sorted
    est = entry.make(random_state=seed)
    fb = BanditFeedback(labels[y])
    est.partial_fit(X, fb, classes=labels[::-1])
    assert_array_equal(est.classes_, labels)
    for name, value in _state_arrays(ref).items():
        assert_array_equal(getattr(est, name), value, err_msg=name)
    assert_array_equal(fb.actions_, labels[fb_ref.actions_])
    assert fb.actions_.dtype == est.classes_.dtype
    assert_array_equal(fb.rewards_, fb_ref.rewards_)

    pred = est.predict(X)
    assert_array_equal(pred, labels[ref.predict(X)])
    assert np.isin(pred, labels).all()
    assert est.score(X, labels[y]) == pytest.approx(np.mean(pred == labels[y]))

    # fit on plain labels given as a Python list
    fitted = entry.make(random_state=seed, **_passes(entry)).fit(X, list(labels[y]))
    ref_fit = entry.make(random_state=seed, **_passes(entry)).fit(X, y)
    assert_array_equal(fitted.classes_, labels)
    for name, value in _state_arrays(ref_fit).items():
        assert_array_equal(getattr(fitted, name), value, err_msg=name)


@pytest.mark.parametrize(
    "entry, dtype",
    spread([np.int64, np.int32, np.uint8, np.float32, bool], ids=lambda d: d.__name__),
)
def test_feature_dtypes_are_converted_to_float64(entry, dtype):
    """Integer, float32 and boolean rows (dense, CSR, a list of lists) learn
    exactly what their float64 values learn (caught: a dtype reaching the
    learner unconverted, or converted with rounding)."""
    k, seed = 3, 6
    X, y = make_stream(n=150, d=8, k=k, kind="binary", seed=seed)
    X = X * np.random.default_rng(0).integers(1, 4, size=X.shape)  # small ints
    if dtype is bool:
        X = X != 0
    Xt = X.astype(dtype)
    as64 = Xt.astype(np.float64)
    passes = _passes(entry)
    for make_input in (lambda a: a, sp.csr_matrix):
        est = entry.make(random_state=seed, **passes).fit(make_input(Xt), y)
        ref = entry.make(random_state=seed, **passes).fit(as64, y)
        assert_same_learner(est, ref)
        assert_array_equal(est.predict(make_input(Xt)), ref.predict(as64))

    # a list of lists is an array-like too
    est = entry.make(random_state=seed, **passes).fit(as64.tolist(), y)
    assert_same_learner(est, entry.make(random_state=seed, **passes).fit(as64, y))


# --------------------------------------------------------------------------------------
# BanditFeedback


def test_bandit_feedback_before_any_pass():
    fb = BanditFeedback(np.array([3, 1, 2, 1]))
    assert len(fb) == 4
    assert fb.shape == (4,)
    assert fb.n_rounds_ == 0
    for name, dtype in [
        ("rows_", np.int64),
        ("rewards_", np.int8),
        ("propensities_", np.float64),
    ]:
        arr = getattr(fb, name)
        assert isinstance(arr, np.ndarray)
        assert arr.shape == (0,)
        assert arr.dtype == dtype, name
    assert len(fb.actions_) == 0


@pytest.mark.parametrize("entry", ALL)
def test_bandit_feedback_log_contents(entry):
    k, n, seed = 4, 200, 10
    X, y = make_stream(n=n, d=9, k=k, seed=seed)
    labels = np.array(["ant", "bee", "cat", "dog"])
    est = entry.make(random_state=seed)
    fb = BanditFeedback(labels[y])
    est.partial_fit(X, fb, classes=labels)

    assert fb.n_rounds_ == n == est.t_
    assert_array_equal(fb.rows_, np.arange(n))
    assert fb.actions_.dtype == est.classes_.dtype
    assert np.isin(fb.actions_, labels).all()
    assert_array_equal(fb.rewards_, (fb.actions_ == labels[y]).astype(np.int8))
    assert ((fb.propensities_ > 0) & (fb.propensities_ <= 1)).all()
    assert est.n_mistakes_ == int(np.sum(fb.rewards_ == 0))

    # a second pass over the same feedback object appends to its log
    est.partial_fit(X[:50], fb[:50])  # a new object: fb is untouched
    assert fb.n_rounds_ == n
    est.partial_fit(X, fb)
    assert fb.n_rounds_ == 2 * n
    assert_array_equal(fb.rows_, np.tile(np.arange(n), 2))
    assert len(fb.actions_) == len(fb.rewards_) == len(fb.propensities_) == 2 * n
    assert est.t_ == 2 * n + 50


@pytest.mark.parametrize("entry", ALL)
def test_bandit_feedback_log_of_fit(entry):
    k, n, seed = 3, 90, 12
    X, y = make_stream(n=n, d=6, k=k, seed=seed)
    for shuffle in (True, False):
        fb = BanditFeedback(y)
        est = entry.make(random_state=seed, max_iter=3, shuffle=shuffle).fit(X, fb)
        assert fb.n_rounds_ == 3 * n == est.t_
        for epoch in range(3):
            block = fb.rows_[epoch * n : (epoch + 1) * n]
            if shuffle:
                assert_array_equal(np.sort(block), np.arange(n))
            else:
                assert_array_equal(block, np.arange(n))
        if shuffle:
            assert not np.array_equal(fb.rows_[:n], np.arange(n))
        assert_array_equal(fb.rewards_, (fb.actions_ == y[fb.rows_]).astype(np.int8))
        assert est.n_mistakes_ == int(np.sum(fb.rewards_ == 0))


INDEXES = {
    "slice": slice(10, 70),
    "step-slice": slice(None, None, 3),
    "int-array-reversed": np.arange(99, -1, -2),
    "int-array-repeats": np.array([5, 5, 6, 0, 99]),
    "mask": np.arange(100) % 4 != 1,
}


# the indexing is BanditFeedback's: every index on one learner, one in turn on
# the others
@pytest.mark.parametrize("entry, index_name", spread(list(INDEXES)))
def test_bandit_feedback_indexing(entry, index_name):
    index = INDEXES[index_name]
    k, seed = 4, 15
    X, y = make_stream(n=100, d=7, k=k, seed=seed)
    fb = BanditFeedback(y)
    sub = fb[index]
    assert isinstance(sub, BanditFeedback)
    expected_n = len(y[index])
    assert len(sub) == expected_n
    assert sub.shape == (expected_n,)
    assert sub.n_rounds_ == 0

    # learning from fb[index] == learning from the labels y[index]
    a = entry.make(random_state=seed).partial_fit(X[index], sub, classes=np.arange(k))
    b = entry.make(random_state=seed).partial_fit(
        X[index], y[index], classes=[0, 1, 2, 3]
    )
    assert_same_learner(a, b)
    assert_array_equal(sub.rewards_, (sub.actions_ == y[index]).astype(np.int8))
    assert fb.n_rounds_ == 0  # the parent's log is not written by a pass over sub


# --------------------------------------------------------------------------------------
# counters, decision_function, predict, exploration_distribution


@pytest.mark.parametrize("entry", ALL)
def test_counters_consistent_with_log(entry):
    k, n, seed = 5, 300, 19
    X, y = make_stream(n=n, d=10, k=k, seed=seed)
    est = entry.make(random_state=seed)
    fb = BanditFeedback(y)
    est.partial_fit(X, fb, classes=np.arange(k))
    assert est.t_ == n
    assert est.n_mistakes_ == int(np.sum(fb.actions_ != y))
    assert 0 <= est.n_greedy_mistakes_ <= est.t_
    if not entry.bandit and not entry.randomised_full_information:
        # full information plays the greedy label
        assert est.n_greedy_mistakes_ == est.n_mistakes_
        return
    if not entry.epsilon_greedy:
        return  # the propensities below are those of the epsilon-greedy policy
    gamma = est.exploration_.epsilon
    # epsilon-greedy without ties: propensity gamma/k + (1 - gamma) iff the played
    # action is the greedy one, gamma/k otherwise; with m tied maximisers the
    # logged (marginal) propensity of a tied action is gamma/k + (1 - gamma)/m.
    p_greedy, p_other = gamma / k + (1 - gamma), gamma / k
    is_greedy = fb.propensities_ == p_greedy
    is_other = fb.propensities_ == p_other
    tied = ~(is_greedy | is_other)
    # SOBA updates only on rounds it got right: W = 0 (all tied) lasts longer
    assert tied.sum() < (n // 10 if entry.name == "Banditron" else n // 4)
    right = fb.rewards_ == 1
    # greedy mistakes: certainly wrong when (greedy played and wrong) or
    # (non-greedy played and right); unknown otherwise
    certain = int(np.sum(is_greedy & ~right) + np.sum(is_other & right))
    unknown = int(np.sum(is_other & ~right) + np.sum(tied))
    assert certain <= est.n_greedy_mistakes_ <= certain + unknown


def _prediction_scores(est, X):
    """The scores of ``predict`` and ``decision_function``: the averaged weights
    of a learner with ``average=True`` (its plays use ``coef_``)."""
    if getattr(est, "average", False):
        return X @ est.average_coef_.T
    return _scores(est, X)


@pytest.mark.parametrize("entry", ALL)
@pytest.mark.parametrize("k", [2, 3, 6])
def test_decision_function_predict_score(entry, k):
    seed = 23
    X, y = make_stream(n=150, d=9, k=k, seed=seed)
    labels = label_values(k)
    est = entry.make(random_state=seed).fit(X, labels[y])
    if hasattr(est, "coef_"):
        assert est.coef_.shape == (k, 9)
    assert est.n_features_in_ == 9
    S = _prediction_scores(est, X)
    dec = est.decision_function(X)
    if k == 2:
        assert dec.shape == (150,)
        assert_allclose(dec, S[:, 1] - S[:, 0], rtol=1e-10, atol=1e-10)
    else:
        assert dec.shape == (150, k)
        assert_allclose(dec, S, rtol=1e-10, atol=1e-10)
    pred = est.predict(X)
    assert_array_equal(pred, labels[np.argmax(S, axis=1)])
    assert est.score(X, labels[y]) == pytest.approx(np.mean(pred == labels[y]))
    # ties: an all-zero row scores 0 for every class -> the first class (a
    # kernel learner scores it k(sv, 0) = 1 per support vector: no tie)
    zeros = np.zeros((3, 9))
    first = labels[np.argmax(_scores(est, zeros), axis=1)]
    if hasattr(est, "coef_") and not entry.intercept:
        assert_array_equal(first, np.repeat(labels[0], 3))
    assert_array_equal(est.predict(zeros), first)
    assert_array_equal(est.predict(sp.csr_matrix(zeros)), first)


def _expected_exploration(S: np.ndarray, gamma: float) -> np.ndarray:
    """Banditron's policy from its definition: for the greedy label g,
    p_g = (1 - gamma) e_g + gamma / k; the tie-break picks each of the m exact
    maximisers g with probability 1/m, so the policy is the average of p_g."""
    n, k = S.shape
    P = np.zeros((n, k))
    for i in range(n):
        maximisers = [g for g in range(k) if S[i, g] == S[i].max()]
        for g in maximisers:
            p_g = np.full(k, gamma / k)
            p_g[g] += 1 - gamma
            P[i] += p_g / len(maximisers)
    return P


@pytest.mark.parametrize("entry", ALL)
@pytest.mark.parametrize("k", [2, 4])
def test_exploration_distribution(entry, k):
    seed = 29
    X, y = make_stream(n=200, d=9, k=k, seed=seed)
    est = entry.make(random_state=seed)
    est.partial_fit(X[:150], y[:150], classes=np.arange(k))
    Xq = np.vstack([X[150:], np.zeros((2, 9))])
    P = est.exploration_distribution(Xq)
    assert P.shape == (len(Xq), k)
    assert (P >= 0).all()
    assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
    assert_allclose(est.exploration_distribution(sp.csr_matrix(Xq)), P, rtol=1e-12)
    # all-zero rows: every class ties, the greedy mass is shared -> uniform
    if not entry.intercept:
        assert_allclose(P[-2:], np.full((2, k), 1 / k), rtol=1e-12)
    S = _scores(est, Xq)
    rule = getattr(est, "exploration_", None)
    if entry.name in ("Banditron", "OffsetTree") and entry.epsilon_greedy:
        # epsilon-greedy around the argmax of the scores (the offset tree's
        # path margins, whose argmax is its walk)
        expected = _expected_exploration(S, est.exploration_.epsilon)
        assert_allclose(P, expected, rtol=1e-12, atol=1e-15)
    elif not entry.bandit and not entry.randomised_full_information:
        # a full-information baseline plays its greedy label (ties shared),
        # the limit gamma = 0 of the epsilon-greedy policy
        assert_allclose(P, _expected_exploration(S, 0.0), rtol=1e-12, atol=1e-15)
    elif (
        rule is not None
        and getattr(rule, "epsilon", None) != "adaptive"
        and entry.name != "OnlineSelector"  # its rule sets a mixing share
    ):
        # any other rule: its NumPy twin at the next round, ties shared (the
        # per-class context of inverse gap weighting: the update counts)
        context = (
            {"counts": est.n_updates_}
            if entry.name in ("SquareCB", "RegressionReduction")
            else {}
        )
        t = est.t_ + 1
        for s, p in zip(S, P, strict=True):
            G = np.flatnonzero(s == s.max())
            want = sum(rule.distribution(s, t, int(g), **context) for g in G) / len(G)
            assert_allclose(p, want, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("entry", ALL)
def test_exploration_distribution_is_the_played_distribution(entry):
    """With one-row calls, every logged propensity equals the learner's
    exploration distribution of that row, just before the call, at the played
    action -- ties included (binary features and empty rows make them frequent):
    the log holds the marginal probability that off-policy estimators need."""
    k, n, seed = 4, 120, 33
    X, y = make_stream(n=n, d=6, k=k, kind="binary", n_empty=15, seed=seed)
    est = entry.make(random_state=seed)
    est.partial_fit(X[:1], y[:1], classes=np.arange(k))
    n_ties = 0
    for t in range(1, n):
        P = est.exploration_distribution(X[t : t + 1])[0]
        S = _scores(est, X[t : t + 1])[0]
        n_ties += int(np.sum(S == S.max()) > 1)
        fb = BanditFeedback(y[t : t + 1])
        est.partial_fit(X[t : t + 1], fb)
        # (a tied row's propensity is the tie marginal's sequential sum, the
        # distribution its O(k) closed form: equal up to the sum's rounding)
        assert fb.propensities_[0] == pytest.approx(P[int(fb.actions_[0])], rel=1e-15)
    if not entry.intercept:  # fitted intercepts break the ties
        assert n_ties >= 15  # the ties the test is about did happen


def test_logged_propensity_at_a_tie_is_the_marginal():
    """W = 0, k = 4, gamma = 0.2: every class ties, the tie-break is uniform, so
    each action is played with probability (1 - gamma)/4 + gamma/4 = 1/4 -- not
    the 0.85 / 0.05 of the probability conditional on the tie-break."""
    entry = next(e for e in BANDIT_ENTRIES if e.name == "Banditron")
    for seed in range(20):
        fb = BanditFeedback(np.array([0]))
        entry.make(random_state=seed, exploration=EpsilonGreedy(0.2)).partial_fit(
            np.ones((1, 3)), fb, classes=np.arange(4)
        )
        assert fb.propensities_[0] == pytest.approx(0.25, rel=1e-15)


def test_exploration_gamma_one_is_uniform():
    entry = next(e for e in BANDIT_ENTRIES if e.name == "Banditron")
    k = 5
    X, y = make_stream(n=120, d=6, k=k, seed=2)
    est = entry.make(random_state=0, exploration=EpsilonGreedy(1.0))
    fb = BanditFeedback(y)
    est.partial_fit(X, fb, classes=np.arange(k))
    assert_allclose(fb.propensities_, 1 / k, rtol=1e-12)
    assert_allclose(est.exploration_distribution(X), 1 / k, rtol=1e-12)


@pytest.mark.parametrize("entry", ALL)
def test_first_greedy_guess_is_uniform_over_classes(entry):
    """At W = 0 every class ties: over many seeds each class is played first
    (caught: ties broken towards the first or the last class, or among some of
    the classes only)."""
    k = 4
    X = np.ones((1, 3))
    firsts = []
    for seed in range(64):
        fb = BanditFeedback(np.array([0]))
        entry.make(random_state=seed).partial_fit(X, fb, classes=np.arange(k))
        firsts.append(int(fb.actions_[0]))
    counts = np.bincount(firsts, minlength=k)
    # 64 draws, expected 16 each (standard deviation 3.5); 4 is 3.5 standard
    # deviations below, and a class that is never played first shows as 0
    assert (counts > 4).all(), counts


@pytest.mark.parametrize("entry", ALL)
def test_deepcopy_and_clone_are_independent(entry):
    from sklearn.base import clone

    k, seed = 3, 41
    X, y = make_stream(n=100, d=5, k=k, seed=seed)
    est = entry.make(random_state=seed).fit(X, y)
    snap = snapshot(est)
    cp = copy.deepcopy(est)
    cp.partial_fit(X, y)
    assert cp.t_ == est.t_ + len(y)
    assert_same_state(est, snap)
    fresh = clone(est)
    assert not hasattr(fresh, "coef_")
    # (repr: a parameter holding estimators, such as OnlineSelector's
    # candidates, is cloned too)
    assert repr(fresh.get_params()) == repr(est.get_params())
