"""The compiled kernels against the pure-NumPy references of ``_reference.py``.

The uniforms are replayed as the estimators document them: ``partial_fit`` on n rows
uses ``rng.random((n, 2))`` of ``rng = default_rng(random_state)`` (created at the
first call, never re-seeded); ``fit`` re-creates the generator and, per epoch, draws
``rng.permutation(n)`` (if ``shuffle``) and then ``rng.random((n, 2))``.
Played actions, greedy actions, rewards and the logged propensities (marginal
probabilities of the played action, ties included, summed in class order then
divided by m) must agree exactly; the weights to within ``RTOL``/``ATOL``.
"""

from __future__ import annotations

import copy

import _reference as ref
import numpy as np
import pytest
import scipy.sparse as sp
from _data import label_values, make_stream
from _registry import ENTRIES
from numpy.testing import assert_allclose, assert_array_equal

from skbandit import BanditFeedback
from skbandit.exploration import EpsilonGreedy

REF_ENTRIES = [e for e in ENTRIES if e.name in ref.REFERENCES]

# (entry, extra parameters): the registry's parameters plus Banditron's extremes
CASES = (
    [pytest.param(e, {}, id=e.name) for e in REF_ENTRIES]
    + [
        pytest.param(e, {"exploration": EpsilonGreedy(g)}, id=f"{e.id}-epsilon={g}")
        for e in REF_ENTRIES
        if e.id == "Banditron"
        for g in (0.01, 0.5, 1.0)
    ]
    + [
        # a schedule (the twin's rate of each global round, across calls and passes)
        pytest.param(
            e,
            {"exploration": EpsilonGreedy(0.5, decay=0.5, min_epsilon=0.05)},
            id=f"{e.id}-decay",
        )
        for e in REF_ENTRIES
        if e.id == "Banditron"
    ]
)


def _with_grid(ks, firsts, seconds) -> list:
    """``pytest.param(entry, extra, k, a, b)`` for ``parametrize("entry, extra,
    k, a, b")``: each registry entry (the first ``len(REF_ENTRIES)`` cases)
    meets the full product ks x firsts x seconds; each of Banditron's extra
    exploration settings (the rule is shared code, the same whatever the rows)
    meets every k once, with the (a, b) pairs taken in turn (shifted by the
    case's position), so that it still meets every value of each list."""
    pairs = [(a, b) for a in firsts for b in seconds]
    out = []
    for i, case in enumerate(CASES):
        entry, extra = case.values
        if i < len(REF_ENTRIES):
            combos = [(k, a, b) for k in ks for a, b in pairs]
        else:
            combos = [(k, *pairs[(i + j) % len(pairs)]) for j, k in enumerate(ks)]
        out += [
            pytest.param(entry, extra, k, a, b, id=f"{case.id}-{k}-{a}-{b}")
            for k, a, b in combos
        ]
    return out


RTOL = 1e-9
ATOL = 1e-12


def assert_same_declared_state(est, trace):
    """Every attribute of the learner's state declaration equals the reference's,
    bit for bit (first-order learners: same float operations in the same order)."""
    assert set(type(est)._state_attrs) == set(trace.state)
    for name, value in trace.state.items():
        assert_array_equal(getattr(est, name), value, err_msg=name)


# logged propensities: the marginal (p_{g_1}(a) + ... + p_{g_m}(a)) / m, summed in
# class order then divided by m, is computed with the same float operations as
# the kernel: bit-identical.


def assert_same_propensities(actual, expected):
    assert_array_equal(actual, expected, err_msg="propensities")


def _params(entry, extra):
    return {**entry.params, **extra}


def _as(X, container):
    return sp.csr_matrix(X) if container == "csr" else X


def _check_against_trace(est, fb, trace, labels, y_codes, rows=None):
    n = len(trace.played)
    rows = np.arange(n) if rows is None else rows
    assert_array_equal(fb.rows_, rows)
    assert_array_equal(fb.actions_, labels[trace.played])
    assert_array_equal(fb.rewards_, trace.rewards)
    assert_same_propensities(fb.propensities_, trace.propensities)
    assert est.t_ == n
    assert est.n_mistakes_ == int(np.sum(trace.played != y_codes[rows]))
    assert est.n_greedy_mistakes_ == int(np.sum(trace.greedy != y_codes[rows]))
    assert_same_declared_state(est, trace)


@pytest.mark.parametrize(
    "entry, extra, k, kind, container",
    _with_grid((2, 3, 7), ("gaussian", "binary"), ("dense", "csr")),
)
def test_partial_fit_matches_reference(entry, extra, k, kind, container):
    seed = 11 * k + len(kind)
    X, y = make_stream(n=300, d=15, k=k, kind=kind, seed=seed)
    labels = label_values(k, seed)
    params = _params(entry, extra)
    est = entry.make(random_state=seed, **extra)
    fb = BanditFeedback(labels[y])
    assert est.partial_fit(_as(X, container), fb, classes=labels) is est

    trace = ref.run_partial_fit(
        entry.name, _as(X, container), y, k, np.random.default_rng(seed), **params
    )
    _check_against_trace(est, fb, trace, labels, y)
    assert_array_equal(est.classes_, labels)
    assert est.coef_.shape == (k, X.shape[1])
    assert est.coef_.dtype == np.float64


@pytest.mark.parametrize("container", ["dense", "csr"])
@pytest.mark.parametrize("entry, extra", CASES)
def test_successive_partial_fit_calls_continue_the_generator(entry, extra, container):
    """Three calls == the reference continuing W and one generator (no re-seeding)."""
    k, seed = 4, 5
    X, y = make_stream(n=240, d=10, k=k, seed=seed)
    params = _params(entry, extra)
    est = entry.make(random_state=seed, **extra)
    rng = np.random.default_rng(seed)
    W = A = None
    for start, stop in [(0, 17), (17, 130), (130, 240)]:
        fb = BanditFeedback(y[start:stop])
        est.partial_fit(_as(X[start:stop], container), fb, classes=np.arange(k))
        # the rounds played before (a schedule's global round index)
        trace = ref.run_partial_fit(
            entry.name, _as(X[start:stop], container), y[start:stop], k, rng,
            W0=W, A0=A, t0=start, **params,
        )  # fmt: skip
        W, A = trace.W, trace.A
        assert_array_equal(fb.actions_, trace.played)
        assert_same_propensities(fb.propensities_, trace.propensities)
        assert_allclose(est.coef_, W, rtol=RTOL, atol=ATOL)
    assert est.t_ == 240


def _probe_greedy(est, x_row, classes):
    """The greedy label of the next round, read off ``n_greedy_mistakes_``.

    For each candidate label c, a copy of the learner (with its generator) plays the
    round with true label c; the greedy action is the unique c with no greedy mistake.
    """
    found = []
    for c in classes:
        probe = copy.deepcopy(est)
        before = getattr(probe, "n_greedy_mistakes_", 0)
        probe.partial_fit(x_row, np.array([c]), classes=classes)
        if probe.n_greedy_mistakes_ == before:
            found.append(c)
    assert len(found) == 1, f"greedy label not unique: {found}"
    return found[0]


@pytest.mark.parametrize("container", ["dense", "csr"])
@pytest.mark.parametrize("k", [3, 7])
@pytest.mark.parametrize("entry, extra", CASES[: len(REF_ENTRIES)])
def test_greedy_actions_match_reference(entry, extra, k, container):
    seed = 3 + k
    n = 60
    X, y = make_stream(n=n, d=8, k=k, kind="binary", n_empty=8, seed=seed)
    Xc = _as(X, container)
    classes = np.arange(k)
    est = entry.make(random_state=seed, **extra)
    greedy = []
    for t in range(n):
        greedy.append(_probe_greedy(est, Xc[t : t + 1], classes))
        est.partial_fit(Xc[t : t + 1], y[t : t + 1], classes=classes)
    trace = ref.run_partial_fit(
        entry.name, Xc, y, k, np.random.default_rng(seed), **_params(entry, extra)
    )
    assert_array_equal(greedy, trace.greedy)
    assert_same_declared_state(est, trace)


@pytest.mark.parametrize(
    "entry, extra, k, shuffle, container",
    _with_grid((2, 3, 7), (True, False), ("dense", "csr")),
)
def test_fit_matches_reference(entry, extra, k, shuffle, container):
    seed = 100 + k
    X, y = make_stream(n=200, d=9, k=k, seed=seed)
    labels = label_values(k, seed)
    est = entry.make(random_state=seed, max_iter=2, shuffle=shuffle, **extra)
    fb = BanditFeedback(labels[y])
    assert est.fit(_as(X, container), fb) is est
    trace = ref.run_fit(
        entry.name, _as(X, container), y, k, seed, max_iter=2, shuffle=shuffle,
        **_params(entry, extra),
    )  # fmt: skip
    if shuffle:
        # each epoch is a permutation of the rows, and the epochs differ
        assert sorted(trace.rows[:200]) == list(range(200))
        assert not np.array_equal(trace.rows[:200], trace.rows[200:])
    assert_array_equal(fb.rows_, trace.rows)
    assert fb.rows_.dtype == np.int64
    assert_array_equal(fb.actions_, labels[trace.played])
    assert_array_equal(fb.rewards_, trace.rewards)
    assert_same_propensities(fb.propensities_, trace.propensities)
    assert est.t_ == 400
    assert est.n_mistakes_ == int(np.sum(trace.played != y[trace.rows]))
    assert est.n_greedy_mistakes_ == int(np.sum(trace.greedy != y[trace.rows]))
    assert_same_declared_state(est, trace)

    # plain labels give the same learner as the BanditFeedback wrapper
    est2 = entry.make(random_state=seed, max_iter=2, shuffle=shuffle, **extra)
    est2.fit(_as(X, container), labels[y])
    assert_array_equal(est2.coef_, est.coef_)
    assert est2.n_mistakes_ == est.n_mistakes_


@pytest.mark.parametrize("entry, extra", CASES[: len(REF_ENTRIES)])
def test_random_state_instance_seeds_default_rng(entry, extra):
    """A RandomState r gives default_rng(r.randint(2**31 - 1))."""
    k = 5
    X, y = make_stream(n=150, d=7, k=k, seed=9)
    est = entry.make(random_state=np.random.RandomState(42), **extra)
    fb = BanditFeedback(y)
    est.partial_fit(X, fb, classes=np.arange(k))
    seed = np.random.RandomState(42).randint(2**31 - 1)
    trace = ref.run_partial_fit(
        entry.name, X, y, k, np.random.default_rng(seed), **_params(entry, extra)
    )
    _check_against_trace(est, fb, trace, np.arange(k), y)


USPS_ROUNDS = 2000


@pytest.mark.parametrize("container", ["dense", "csr"])
@pytest.mark.parametrize("entry, extra", CASES)
def test_usps_stream_matches_reference(entry, extra, container, usps_stream):
    """Bit-for-bit actions over the USPS stream (10 classes): the whole stream
    (9,298 rounds) for the first case on dense rows, the first ``USPS_ROUNDS``
    rounds for the others (the NumPy reference's per-round loop is most of the
    time; every case's updates, ties and schedule start well within them)."""
    X, y = usps_stream
    if (entry, extra, container) != (CASES[0].values[0], CASES[0].values[1], "dense"):
        X, y = X[:USPS_ROUNDS], y[:USPS_ROUNDS]
    seed = 2009
    est = entry.make(random_state=seed, **extra)
    fb = BanditFeedback(y)
    est.partial_fit(_as(X, container), fb, classes=np.arange(10))
    trace = ref.run_partial_fit(
        entry.name, _as(X, container), y, 10, np.random.default_rng(seed),
        **_params(entry, extra),
    )  # fmt: skip
    _check_against_trace(est, fb, trace, np.arange(10), y)


# --------------------------------------------------------------------------------------
# sparse rows with repeated columns, empty rows, an all-zero matrix


def _csr_with_duplicates(X: np.ndarray, seed: int) -> sp.csr_matrix:
    """A CSR matrix equal to ``X`` whose rows store some columns several times.

    Each non-zero ``v`` is stored either once or as two halves ``v/2, v/2`` (exact
    in floating point); some zero columns are stored as ``c, -c``; entries of a row
    are stored in a random order. Built from ``(data, indices, indptr)`` so SciPy
    keeps the duplicates (``X.toarray()`` sums them).
    """
    rng = np.random.default_rng(seed)
    data, indices, indptr = [], [], [0]
    for row in X:
        entries = []
        for j in np.flatnonzero(row):
            if rng.random() < 0.5:
                entries += [(j, row[j] / 2), (j, row[j] / 2)]
            else:
                entries.append((j, row[j]))
        zeros = np.flatnonzero(row == 0)
        if len(zeros) and rng.random() < 0.3:
            j, c = rng.choice(zeros), float(rng.integers(1, 4))
            entries += [(j, c), (j, -c)]
        for e in rng.permutation(len(entries)):
            indices.append(entries[e][0])
            data.append(entries[e][1])
        indptr.append(len(indices))
    Xs = sp.csr_matrix(
        (np.array(data, dtype=np.float64), np.array(indices, dtype=np.int32),
         np.array(indptr, dtype=np.int32)),
        shape=X.shape,
    )  # fmt: skip
    assert not Xs.has_canonical_format
    return Xs


def _has_repeated_columns(Xs: sp.csr_matrix) -> bool:
    return any(
        len(np.unique(Xs.indices[a:b])) < b - a
        for a, b in zip(Xs.indptr[:-1], Xs.indptr[1:], strict=True)
    )


@pytest.mark.parametrize("kind", ["gaussian", "binary"])
@pytest.mark.parametrize("entry, extra", CASES)
def test_csr_rows_with_repeated_columns(entry, extra, kind):
    """A column stored twice in a CSR row counts as the sum of its values, as in the
    dense matrix: the kernel matches the reference on the same CSR arrays, and the
    reference on the CSR matrix agrees with the reference on its dense twin."""
    k, seed = 4, 21
    X, y = make_stream(n=250, d=10, k=k, kind=kind, n_empty=15, seed=seed)
    Xs = _csr_with_duplicates(X, seed)
    assert _has_repeated_columns(Xs)
    assert_array_equal(Xs.toarray(), X)
    params = _params(entry, extra)

    est = entry.make(random_state=seed, **extra)
    fb = BanditFeedback(y)
    est.partial_fit(Xs, fb, classes=np.arange(k))
    trace = ref.run_partial_fit(
        entry.name, Xs, y, k, np.random.default_rng(seed), **params
    )
    _check_against_trace(est, fb, trace, np.arange(k), y)

    # The repeated entries are summed, not dropped: the same learning as dense
    # rows, up to the rounding of summing the parts in another order. With binary
    # features the Banditron's weights are not dyadic and that rounding can make or
    # break an exact tie, so the comparison is made where it is exact: Gaussian
    # values (exact ties only on empty rows) or integer weights (the Perceptron).
    if kind == "binary" and entry.bandit:
        return
    dense = ref.run_partial_fit(
        entry.name, X, y, k, np.random.default_rng(seed), **params
    )
    assert_array_equal(trace.played, dense.played)
    assert_allclose(trace.W, dense.W, rtol=RTOL, atol=ATOL)
    assert_allclose(est.coef_, dense.W, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("container", ["dense", "csr"])
@pytest.mark.parametrize("entry, extra", CASES)
def test_empty_rows_match_reference(entry, extra, container):
    """Empty rows first, last, in runs and isolated (all scores tie at 0 on them)."""
    k, seed = 5, 8
    X, y = make_stream(n=120, d=7, k=k, kind="binary", n_empty=0, seed=seed)
    X[[0, 1, 2, 40, 41, 77, 119]] = 0.0
    est = entry.make(random_state=seed, **extra)
    fb = BanditFeedback(y)
    est.partial_fit(_as(X, container), fb, classes=np.arange(k))
    trace = ref.run_partial_fit(
        entry.name, _as(X, container), y, k, np.random.default_rng(seed),
        **_params(entry, extra),
    )  # fmt: skip
    _check_against_trace(est, fb, trace, np.arange(k), y)


@pytest.mark.parametrize("container", ["dense", "csr"])
@pytest.mark.parametrize("k", [2, 3, 7])
@pytest.mark.parametrize("entry, extra", CASES)
def test_all_zero_matrix(entry, extra, k, container):
    """On x = 0 every update is zero, W stays 0 and all k classes tie every round:
    the greedy label is uniform (drawn with u2), and the marginal probability of
    the played action is 1/k for every learner: (1/k) sum_g p_g(a) with
    sum_g p_g(a) = 1 for the Banditron (gamma + (1 - gamma)) and the Perceptron."""
    n, seed = 400, 31 + k
    X = np.zeros((n, 5))
    y = np.random.default_rng(seed).integers(0, k, size=n)
    Xc = sp.csr_matrix(X) if container == "csr" else X
    if container == "csr":
        assert Xc.nnz == 0
    est = entry.make(random_state=seed, **extra)
    fb = BanditFeedback(y)
    est.partial_fit(Xc, fb, classes=np.arange(k))
    trace = ref.run_partial_fit(
        entry.name, Xc, y, k, np.random.default_rng(seed), **_params(entry, extra)
    )
    _check_against_trace(est, fb, trace, np.arange(k), y)
    assert_array_equal(est.coef_, np.zeros((k, 5)))
    # the formula in floating point: a few roundings away from 1/k
    assert_allclose(fb.propensities_, 1.0 / k, rtol=1e-14)
    # the greedy label is uniform over the classes
    counts = np.bincount(trace.greedy, minlength=k)
    assert counts.min() > 0.6 * n / k, counts


def test_reference_sampler():
    """Inverse CDF over classes 0..k-1 in order; when rounding leaves the last
    cumulative sum below u1, the last class with positive probability."""
    p = np.array([0.2, 0.0, 0.5, 0.3])
    assert [ref.sample(p, u) for u in (0.0, 0.1999, 0.2, 0.6999, 0.7, 0.9999)] == [
        0, 0, 2, 2, 3, 3,
    ]  # fmt: skip
    p = np.array([0.1] * 10 + [0.0])
    assert np.cumsum(p)[-1] < 1.0  # 0.9999999999999999
    assert ref.sample(p, np.nextafter(1.0, 0.0)) == 9
    assert ref.sample(np.array([0.0, 1.0, 0.0]), 0.5) == 1


def test_reference_marginal_propensity():
    """(1/m) sum_{g in G} p_g(a): at a tie between m greedy candidates."""
    k, gamma = 4, 0.2
    s = np.array([1.0, 3.0, 3.0, 0.5])
    G = ref.maximisers(s)
    assert_array_equal(G, [1, 2])

    def dist(g):
        return ref.epsilon_greedy(k, g, gamma)

    assert_allclose(ref.marginal_propensity(dist, G, 1), gamma / k + (1 - gamma) / 2)
    assert_allclose(ref.marginal_propensity(dist, G, 0), gamma / k)
    assert ref.marginal_propensity(dist, np.array([3]), 3) == dist(3)[3]
