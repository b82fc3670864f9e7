"""Acting on live traffic and learning from logged feedback, over the registry.

``sample_actions`` changes nothing but the serving cursor; a row-by-row loop
``sample_actions`` -> reward from the labels -> ``partial_fit(LoggedFeedback)``
reproduces the simulator bit for bit; the delayed-feedback schedule matches a
NumPy reference; bad ``LoggedFeedback`` input is refused without a state change;
chunk invariance and pickle-resume hold for logged data.
"""

from __future__ import annotations

import copy
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _data import make_stream
from _helpers import assert_same_learner, assert_same_state, snapshot
from _reference_logged import banditron_delayed, delayed_schedule
from _registry import BANDIT_ENTRIES, ENTRIES, entry_params, paired, spread
from numpy.testing import assert_allclose, assert_array_equal

from skbandit import BanditFeedback, Banditron, LoggedFeedback, OffPolicyWarning
from skbandit.exploration import EpsilonGreedy

BANDIT = entry_params(BANDIT_ENTRIES)
FULL_INFO = entry_params([e for e in ENTRIES if not e.bandit])


def _state_without_greedy(est) -> dict:
    snap = snapshot(est)
    snap.pop("n_greedy_mistakes_")
    return snap


def _assert_same_but_greedy(a, b) -> None:
    """Same state; ``n_greedy_mistakes_`` needs the labels, so a learner fed
    logged feedback counts only the greedy mistakes the rewards reveal."""
    sa, sb = _state_without_greedy(a), _state_without_greedy(b)
    tmp = copy.deepcopy(a)
    for name in ("n_greedy_mistakes_",):
        setattr(tmp, name, getattr(b, name))
    assert_same_learner(tmp, b)
    assert sa.keys() == sb.keys()


def _distribution_at_round(est, X, t):
    """The compiled policy's distribution of the rows of X at round ``t``."""
    from skbandit._core._drivers import run_distribution
    from skbandit.base import _kernel_arrays

    if not hasattr(est, "_make_kernel"):  # a Python-loop learner (python_loop)
        return est._distribution(est._scores(X), t)
    out = np.empty((X.shape[0], len(est.classes_)))
    assert run_distribution(est._make_kernel(), *_kernel_arrays(X), t, out) == len(X)
    return out


def _uniform_log(y, k, seed):
    rng = np.random.default_rng(seed)
    actions = rng.integers(0, k, size=y.shape[0])
    return LoggedFeedback(actions, (actions == y).astype(float), np.full(len(y), 1 / k))


# --------------------------------------------------------------------------------------
# sample_actions


@pytest.mark.parametrize("entry", entry_params())
def test_sample_actions_changes_nothing_but_the_cursor(entry):
    X, y = make_stream(n=80, k=4, seed=3)
    est = entry.make(random_state=1).partial_fit(X[:40], y[:40], classes=range(4))
    before = snapshot(est)
    actions, props = est.sample_actions(X[40:])
    assert_same_state(est, before)
    assert est.n_pending_ == 40
    assert set(actions) <= set(est.classes_)
    # the propensity is the exploration distribution at the drawn action, row j
    # served at round t_ + 1 + j (a learner whose policy depends on the round,
    # such as SquareCB's gamma_t, reads each row's own round)
    proba = np.vstack(
        [_distribution_at_round(est, X[40 + j : 41 + j], est.t_ + 1 + j)
         for j in range(40)]
    )  # fmt: skip
    # (on a tied row the propensity is the tie marginal's sequential sum and
    # the distribution its O(k) closed form: equal up to the sum's rounding)
    assert_allclose(
        props, proba[np.arange(40), np.searchsorted(est.classes_, actions)],
        rtol=1e-15, atol=0.0,
    )  # fmt: skip
    # a policy that does not depend on the round (its distribution of these rows
    # is the same at round 10**6; a meta-estimator's, such as OnlineSelector's,
    # is not a function of one score vector): the public method agrees
    if np.array_equal(
        _distribution_at_round(est, X[40:], est.t_ + 1),
        _distribution_at_round(est, X[40:], 10**6),
    ):
        proba = est.exploration_distribution(X[40:])
        assert_allclose(
            props, proba[np.arange(40), np.searchsorted(est.classes_, actions)],
            rtol=1e-15, atol=0.0,
        )  # fmt: skip
    # predict stays the greedy action
    assert_array_equal(
        est.predict(X[40:]), est.classes_[np.argmax(est._scores(X[40:]), 1)]
    )


@pytest.mark.parametrize("entry", entry_params())
def test_sample_actions_reads_ahead_like_one_call(entry):
    """Rows served in two calls get the uniform pairs one call would use (the
    serving cursor), and those are the simulator's next pairs."""
    X, y = make_stream(n=60, k=3, seed=4)
    a = entry.make(random_state=5).partial_fit(X[:20], y[:20], classes=range(3))
    b = copy.deepcopy(a)
    acts_a = np.concatenate(
        [a.sample_actions(X[20:27])[0], a.sample_actions(X[27:])[0]]
    )
    acts_b = b.sample_actions(X[20:])[0]
    assert_array_equal(acts_a, acts_b)
    # the first served row is the simulator's next round
    c = copy.deepcopy(b)
    fb = BanditFeedback(y[20:21])
    c.partial_fit(X[20:21], fb)
    assert fb.actions_[0] == acts_b[0]


def test_sample_actions_other_bit_generator():
    """The read-ahead also works for a generator without ``advance``."""
    X, y = make_stream(n=30, k=3, seed=4)
    a = Banditron(exploration=EpsilonGreedy(0.3), random_state=3).partial_fit(
        X[:5], y[:5], classes=range(3)
    )
    a._rng = np.random.Generator(np.random.MT19937(3))
    b = copy.deepcopy(a)
    first = a.sample_actions(X[5:12])[0]
    second = a.sample_actions(X[12:])[0]
    assert_array_equal(np.concatenate([first, second]), b.sample_actions(X[5:])[0])


@pytest.mark.parametrize("entry", entry_params())
def test_sample_actions_first_call(entry):
    X, _ = make_stream(n=10, k=3, seed=0)
    est = entry.make(random_state=0)
    with pytest.raises(ValueError, match="classes must be passed"):
        est.sample_actions(X)
    assert not hasattr(est, "classes_")
    with pytest.raises(ValueError, match="NaN"):
        est.sample_actions(np.full((2, X.shape[1]), np.nan), classes=[0, 1, 2])
    assert not hasattr(est, "classes_")
    actions, props = est.sample_actions(X, classes=[0, 1, 2])
    assert est.t_ == 0 and est.n_pending_ == 10
    assert np.all((props > 0) & (props <= 1))


# --------------------------------------------------------------------------------------
# on-policy equivalence


# each learner meets both streams and both containers, in two items (``paired``)
@pytest.mark.parametrize(
    "entry, kind, container",
    paired(["gaussian", "binary"], ["dense", "csr"], BANDIT_ENTRIES),
)
def test_live_loop_reproduces_the_simulator(entry, kind, container):
    """sample_actions -> reward from the labels -> partial_fit(LoggedFeedback),
    row by row, gives the simulator's actions, propensities and state."""
    k, n = 4, 120
    X, y = make_stream(n=n, k=k, kind=kind, seed=7)
    Xc = sp.csr_matrix(X) if container == "csr" else X
    sim = entry.make(random_state=11)
    fb = BanditFeedback(y)
    sim.partial_fit(Xc, fb, classes=range(k))

    live = entry.make(random_state=11)
    actions, props = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("error", OffPolicyWarning)
        for i in range(n):
            row = Xc[i : i + 1]
            a, p = live.sample_actions(row, classes=range(k) if i == 0 else None)
            reward = (a == y[i : i + 1]).astype(float)
            live.partial_fit(row, LoggedFeedback(a, reward, p))
            actions.append(a[0])
            props.append(p[0])
    assert_array_equal(actions, fb.actions_)
    assert_array_equal(props, fb.propensities_)
    _assert_same_but_greedy(live, sim)
    assert live.n_greedy_mistakes_ <= sim.n_greedy_mistakes_
    assert live.n_pending_ == 0


@pytest.mark.parametrize("entry", BANDIT)
def test_serve_batch_then_learn_it_reproduces_the_simulator_without_ties(entry):
    """Serving a batch from a fixed state and learning it is not the simulator
    (the state moves within the batch); but a batch of one row is, and a whole
    served log learned back gives the same state as learning it in chunks."""
    k = 3
    X, y = make_stream(n=90, k=k, seed=8)
    est = entry.make(random_state=2).partial_fit(X[:30], y[:30], classes=range(k))
    a, p = est.sample_actions(X[30:])
    logged = LoggedFeedback(a, (a == y[30:]).astype(float), p)
    one = copy.deepcopy(est)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OffPolicyWarning)
        one.partial_fit(X[30:], logged)
        chunks = copy.deepcopy(est)
        for lo, hi in [(0, 1), (1, 17), (17, 60)]:
            chunks.partial_fit(X[30 + lo : 30 + hi], logged[lo:hi])
    assert_same_learner(one, chunks)
    assert one.t_ == 90 and one.n_pending_ == 0


# --------------------------------------------------------------------------------------
# delayed feedback against the NumPy reference


@pytest.mark.parametrize("batch,lag", [(1, 0), (7, 0), (10, 1), (4, 3)])
@pytest.mark.parametrize("kind", ["gaussian", "binary"])
def test_delayed_feedback_matches_reference(batch, lag, kind):
    k, n, gamma, seed = 4, 100, 0.3, 13
    X, y = make_stream(n=n, k=k, kind=kind, seed=9)
    W, ref_actions, ref_props = banditron_delayed(
        X, y, k, gamma=gamma, seed=seed, batch=batch, lag=lag
    )
    est = Banditron(exploration=EpsilonGreedy(gamma), random_state=seed)
    starts = list(range(0, n, batch))
    actions = np.empty(n, dtype=np.int64)
    props = np.empty(n)
    for j in range(len(starts) + lag):
        if j < len(starts):
            lo = starts[j]
            hi = min(lo + batch, n)
            actions[lo:hi], props[lo:hi] = est.sample_actions(
                X[lo:hi], classes=range(k) if j == 0 else None
            )
        if j >= lag:
            lo = starts[j - lag]
            hi = min(lo + batch, n)
            rewards = (actions[lo:hi] == y[lo:hi]).astype(float)
            est.partial_fit(
                X[lo:hi], LoggedFeedback(actions[lo:hi], rewards, props[lo:hi])
            )
    assert_array_equal(actions, ref_actions)
    assert_array_equal(props, ref_props)
    assert_array_equal(est.coef_, W)
    assert est.t_ == n and est.n_pending_ == 0


def _serve_and_learn(est, X, y, k, batch, lag):
    """The schedule of ``delayed_schedule`` with the estimator's public methods."""
    n = X.shape[0]
    starts = list(range(0, n, batch))
    actions = np.empty(n, dtype=np.int64)
    props = np.empty(n)
    for j in range(len(starts) + lag):
        if j < len(starts):
            lo = starts[j]
            hi = min(lo + batch, n)
            classes = range(k) if j == 0 else None
            actions[lo:hi], props[lo:hi] = est.sample_actions(X[lo:hi], classes=classes)
        if j >= lag:
            lo = starts[j - lag]
            hi = min(lo + batch, n)
            rewards = (actions[lo:hi] == y[lo:hi]).astype(float)
            logged = LoggedFeedback(actions[lo:hi], rewards, props[lo:hi])
            est.partial_fit(X[lo:hi], logged)
    return actions, props


# each learner meets both schedules and both streams, in two items (``paired``);
# the signature stays (entry, batch, lag, kind): test_reference_defaults calls it
DELAYED = [
    pytest.param(entry, batch, lag, kind, id=f"{entry.id}-{batch}-{lag}-{kind}")
    for param in paired([(5, 0), (4, 2)], ["gaussian", "binary"], BANDIT_ENTRIES)
    for entry, (batch, lag), kind in [param.values]
]


@pytest.mark.parametrize("entry, batch, lag, kind", DELAYED)
def test_delayed_feedback_matches_every_reference(entry, batch, lag, kind):
    """Every bandit learner against its NumPy reference driven through the same
    serve/learn schedule (``_reference_logged.delayed_schedule``), with and
    without a lag."""
    k, n, seed = 3, 48, 17
    if entry.params.get("covariance") == "full" and kind == "binary":
        pytest.skip(
            "SOBA-full matches its direct-solve reference to rounding, not at ties"
        )
    X, y = make_stream(n=n, d=8, k=k, kind=kind, seed=10)
    if entry.params.get("kernel") == "rational":
        X = X / 4.0  # a few rows still outside the unit ball: projected
    state, ref_actions, ref_props = delayed_schedule(
        entry.name, entry.params, X, y, k, seed=seed, batch=batch, lag=lag
    )
    est = entry.make(random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        actions, props = _serve_and_learn(est, X, y, k, batch, lag)
    assert_array_equal(actions, ref_actions)
    assert_array_equal(props, ref_props)
    for name, value in state.items():
        if entry.params.get("covariance") == "full":
            assert_allclose(getattr(est, name), value, rtol=1e-9, atol=1e-12)
        else:
            assert_array_equal(getattr(est, name), value, err_msg=name)
    assert est.t_ == n and est.n_pending_ == 0


# --------------------------------------------------------------------------------------
# off-policy data


def test_off_policy_warning_only_for_on_policy_learners():
    X, y = make_stream(n=200, k=3, seed=1)
    logged = _uniform_log(y, 3, seed=0)
    for entry in BANDIT_ENTRIES:
        est = entry.make(random_state=0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est.partial_fit(X, logged, classes=range(3))
        off = [w for w in caught if issubclass(w.category, OffPolicyWarning)]
        assert bool(off) == (not est._off_policy_ok), entry.id
        # attributed to the caller's line, not to library code
        assert all(w.filename == __file__ for w in off), entry.id


def test_banditron_learns_from_a_uniform_logging_policy():
    """Importance weights with the logged propensity: the Banditron's expected
    update is the Perceptron's, so it learns from another policy's log."""
    X, y = make_stream(n=3000, d=10, k=3, seed=2)
    logged = _uniform_log(y[:2000], 3, seed=1)
    est = Banditron(exploration=EpsilonGreedy(0.1), random_state=0).fit(
        X[:2000], logged
    )
    assert np.mean(est.predict(X[2000:]) == y[2000:]) > 0.6


def test_fit_with_logged_feedback_infers_classes_from_actions():
    X, y = make_stream(n=100, k=3, seed=2)
    logged = _uniform_log(y, 3, seed=1)
    est = Banditron(exploration=EpsilonGreedy(0.2), random_state=0, max_iter=3).fit(
        X, logged
    )
    assert_array_equal(est.classes_, [0, 1, 2])
    assert est.t_ == 300 and est.n_iter_ == 3


# --------------------------------------------------------------------------------------
# bad input


BAD_LOGS = [
    (lambda n: (np.zeros(n - 1, int), np.zeros(n - 1), np.ones(n - 1)), "rows"),
    (lambda n: (np.zeros(n, int), np.zeros(n), np.zeros(n)), "propensities"),
    (lambda n: (np.zeros(n, int), np.zeros(n), np.full(n, 1.5)), "propensities"),
    (lambda n: (np.zeros(n, int), np.zeros(n), np.full(n, np.nan)), "propensities"),
    (lambda n: (np.full(n, 7), np.zeros(n), np.ones(n)), "not in classes_"),
    (lambda n: (np.zeros(n, int), np.full(n, 0.5), np.ones(n)), "0 or 1"),
    (lambda n: (np.zeros(n, int), np.full(n, 2.0), np.ones(n)), "0 or 1"),
    (lambda n: (np.zeros(n, int), np.full(n, np.nan), np.ones(n)), "finite"),
    # one action, reward and propensity per round: both lengths named
    (
        lambda n: (np.zeros(n, int), np.zeros(n), np.ones(n - 1)),
        "10 actions, 10 rewards and 9 propensities",
    ),
    (
        lambda n: (np.zeros(n, int), np.zeros(n), np.ones(n + 1)),
        "10 actions, 10 rewards and 11 propensities",
    ),
    (
        lambda n: (np.zeros(n, int), np.zeros(n - 1), np.ones(n)),
        "10 actions, 9 rewards and 10 propensities",
    ),
    # values that cannot be actions, rewards or propensities
    (lambda n: (np.full(n, np.nan), np.zeros(n), np.ones(n)), "actions must be"),
    (lambda n: (np.full(n, 1j), np.zeros(n), np.ones(n)), "actions must be real"),
    (lambda n: (np.zeros(n, int), np.full(n, 1 + 1j), np.ones(n)), "complex"),
    (lambda n: (np.zeros(n, int), np.zeros(n), np.full(n, 0.5 + 0.5j)), "complex"),
    # below the propensity floor (2**-32 by default): the importance weight named
    (lambda n: (np.zeros(n, int), np.zeros(n), np.full(n, 1e-300)), "importance"),
]


# The checks are shared (``LoggedFeedback`` and the base's validation): every
# learner meets the reward checks that depend on its reward kind, and two of the
# others in turn (``spread``); Banditron meets them all.
@pytest.mark.parametrize(
    "entry, case",
    spread(
        BAD_LOGS,
        always=tuple(case for case in BAD_LOGS if case[1] == "0 or 1"),
        per_entry=2,
        entries=BANDIT_ENTRIES,
        ids=lambda case: f"bad{BAD_LOGS.index(case)}",
    ),
)
def test_bad_logged_feedback_is_refused_without_state_change(entry, case):
    bad, match = case
    # (an instance's: a meta-estimator's is its learners')
    if match == "0 or 1" and entry.make()._logged_rewards == "unit":
        if np.all(bad(1)[1] == 0.5):
            pytest.skip("0.5 is a valid reward for a learner of rewards in [0, 1]")
        match = r"in \[0, 1\]"
    X, y = make_stream(n=40, k=3, seed=5)
    est = entry.make(random_state=0).partial_fit(X[:20], y[:20], classes=range(3))
    est.sample_actions(X[20:23])
    before = snapshot(est)
    pending = est.n_pending_
    with pytest.raises(ValueError, match=match):
        est.partial_fit(X[20:30], LoggedFeedback(*bad(10)))
    assert_same_state(est, before)
    assert est.n_pending_ == pending
    # an unfitted learner stays unfitted
    fresh = entry.make(random_state=0)
    with pytest.raises(ValueError, match=match):
        fresh.partial_fit(X[20:30], LoggedFeedback(*bad(10)), classes=range(3))
    assert not hasattr(fresh, "classes_")


@pytest.mark.parametrize("entry", BANDIT)
def test_bad_rows_on_the_fast_path(entry):
    X, y = make_stream(n=40, k=3, seed=5)
    est = entry.make(random_state=0).partial_fit(X[:20], y[:20], classes=range(3))
    before = snapshot(est)
    ok = LoggedFeedback([0], [1.0], [0.5])
    bad_rows = [
        (np.full((1, X.shape[1]), np.nan), "NaN"),
        (np.full((1, X.shape[1]), np.inf), "infinity"),
        (np.ones((1, X.shape[1] + 1)), "features"),
        (np.ones(X.shape[1]), "2D array"),
    ]
    for row, match in bad_rows:
        with pytest.raises(ValueError, match=match):
            est.sample_actions(row)
        with pytest.raises(ValueError, match=match):
            est.partial_fit(row, ok)
        assert_same_state(est, before)
        assert est.n_pending_ == 0
    # a parameter changed mid-stream is still checked on the fast path
    params = est.get_params()
    # a setting the learner must refuse
    (bad, name), *_ = entry.invalid_params or [
        ({"exploration": EpsilonGreedy(2.0)}, "epsilon")
    ]
    ((key, value),) = bad.items()
    setattr(est, key, value)
    with pytest.raises(ValueError, match=name):
        est.sample_actions(X[:1])
    with pytest.raises(ValueError, match=name):
        est.partial_fit(X[:1], ok)
    setattr(est, key, params[key])
    assert_same_state(est, before)


@pytest.mark.parametrize("entry", FULL_INFO)
def test_full_information_learners_refuse_logged_feedback(entry):
    X, y = make_stream(n=20, k=3, seed=5)
    est = entry.make(random_state=0).partial_fit(X[:10], y[:10], classes=range(3))
    before = snapshot(est)
    with pytest.raises(TypeError, match="full-information"):
        est.partial_fit(X[:2], LoggedFeedback([0, 1], [1.0, 0.0], [1.0, 1.0]))
    assert_same_state(est, before)
    fresh = entry.make(random_state=0)
    with pytest.raises(TypeError, match="full-information"):
        fresh.partial_fit(
            X[:2], LoggedFeedback([0, 1], [1.0, 0.0], [1.0, 1.0]), classes=[0, 1, 2]
        )
    assert not hasattr(fresh, "classes_")


@pytest.mark.parametrize("n", [1, 3])
def test_logged_feedback_checks_every_length(n):
    """One action, reward and propensity per round, the single-round fast path
    included: a propensity array of another length is refused naming every
    length (not read out of bounds or broadcast)."""
    actions, rewards = np.zeros(n, dtype=np.int64), np.zeros(n)
    for m in (n - 1, n + 1, 2 * n + 1):
        with pytest.raises(ValueError, match=f"{n} actions, {n} rewards and {m} prop"):
            LoggedFeedback(actions, rewards, np.full(m, 0.5))
        with pytest.raises(ValueError, match=f"{n} actions, {m} rewards and {n} prop"):
            LoggedFeedback(actions, np.zeros(m), np.full(n, 0.5))


@pytest.mark.parametrize("n", [1, 3])
def test_complex_and_non_finite_values_are_refused(n):
    """Complex rewards or propensities are refused (not truncated to their real
    part with NumPy's warning); an action that cannot be a class (NaN,
    infinite, complex, None) is refused, the live loop's one-round arrays
    included."""
    a, r, p = np.zeros(n, dtype=np.int64), np.ones(n), np.full(n, 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (no ComplexWarning either)
        for rewards in (r + 0j, r.astype(complex), [1 + 1e-3j] * n):
            with pytest.raises(ValueError, match="rewards must be real numbers"):
                LoggedFeedback(a, rewards, p)
        for props in (p + 0j, np.array([0.5 + 1j] * n, dtype=object)):
            with pytest.raises(ValueError, match="propensities must be real"):
                LoggedFeedback(a, r, props)
        for actions in (np.full(n, np.nan), np.full(n, -np.inf), np.full(n, 1j)):
            with pytest.raises(ValueError, match="actions must be"):
                LoggedFeedback(actions, r, p)
        with pytest.raises(ValueError, match="actions must be"):
            LoggedFeedback(np.array([None] * n, dtype=object), r, p)
    with pytest.raises(ValueError, match=r"actions must be .* got \[nan\]"):
        LoggedFeedback(np.array([0.0, np.nan, 1.0]), np.ones(3), np.full(3, 0.5))


def test_propensity_floor_is_two_to_the_minus_32_by_default():
    """The documented floor (LoggedFeedback docstring, docs/logged.md): a
    propensity of 2**-32 is accepted, the next float below it is refused, on
    the single-round path and the array path alike; ``min_propensity`` moves
    it; it must be a real number in (0, 1]; a subset keeps it."""
    floor = 2.0**-32
    below = np.nextafter(floor, 0.0)
    for n in (1, 4):
        a, r = np.zeros(n, dtype=np.int64), np.ones(n)
        assert LoggedFeedback(a, r, np.full(n, floor)).propensities.min() == floor
        with pytest.raises(ValueError, match="below min_propensity=2.33e-10"):
            LoggedFeedback(a, r, np.full(n, below))
        low = LoggedFeedback(a, r, np.full(n, 1e-300), min_propensity=1e-300)
        assert low.min_propensity == 1e-300
        assert low[:1].min_propensity == 1e-300
        with pytest.raises(ValueError, match="below min_propensity=0.01"):
            LoggedFeedback(a, r, np.full(n, 0.005), min_propensity=0.01)
    for bad in (0.0, -1e-3, 1.5, np.nan, "0.1", True, None):
        with pytest.raises(ValueError, match="min_propensity must be"):
            LoggedFeedback([0], [1.0], [0.5], min_propensity=bad)


@pytest.mark.filterwarnings("ignore::skbandit.OffPolicyWarning")
@pytest.mark.parametrize("n", [1, 10])
@pytest.mark.parametrize("entry", BANDIT)
def test_overflow_from_a_lowered_floor_names_the_importance_weight(entry, n):
    """Propensities of 1e-300, accepted only with a lowered floor: a learner
    either learns them with a finite state or raises a ``FloatingPointError``
    that names the importance weights 1/p (the features are within bounds:
    scaling them is not the cure), with the state as before the call; on the
    one-row path (n=1) and the array path."""
    X, y = make_stream(n=40, k=3, seed=5)
    X /= np.abs(X).max()
    est = entry.make(random_state=0).partial_fit(X[:20], y[:20], classes=range(3))
    before = snapshot(est)
    logged = LoggedFeedback(
        y[20 : 20 + n], np.ones(n), np.full(n, 1e-300), min_propensity=1e-300
    )
    try:
        est.partial_fit(X[20 : 20 + n], logged)
    except FloatingPointError as exc:
        assert "importance weights 1/p up to 1e+300" in str(exc)
        assert "Scale the features" not in str(exc)
        assert_same_state(est, before)
    else:
        for name, value in est._get_state().items():
            if isinstance(value, np.ndarray) and value.dtype.kind == "f":
                assert np.isfinite(value).all(), name


def test_logged_feedback_shapes():
    with pytest.raises(ValueError, match="1-D"):
        LoggedFeedback(np.zeros((2, 2)), np.zeros(2), np.ones(2))
    logged = LoggedFeedback(["a", "b", "c"], [1, 0, 1], [0.5, 0.5, 1.0])
    assert len(logged) == 3 and logged.shape == (3,)
    sub = logged[[0, 2]]
    assert_array_equal(sub.actions, ["a", "c"])
    assert_array_equal(sub.propensities, [0.5, 1.0])
    assert len(logged[1]) == 1


# --------------------------------------------------------------------------------------
# shared-suite additions: chunk invariance and pickle-resume with LoggedFeedback

CHUNKS = [1, 2, 30, 100, 1, 66]  # sums to 200


@pytest.mark.parametrize(
    "entry, container", spread(["dense", "csr"], entries=BANDIT_ENTRIES)
)
def test_logged_chunk_invariance(entry, container):
    k = 4
    X, y = make_stream(n=sum(CHUNKS), k=k, seed=6)
    Xc = sp.csr_matrix(X) if container == "csr" else X
    logged = _uniform_log(y, k, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OffPolicyWarning)
        whole = entry.make(random_state=4).partial_fit(Xc, logged, classes=range(k))
        chunked = entry.make(random_state=4)
        lo = 0
        for size in CHUNKS:
            chunked.partial_fit(
                Xc[lo : lo + size], logged[lo : lo + size], classes=range(k)
            )
            lo += size
    assert_same_learner(chunked, whole)


@pytest.mark.parametrize("entry", BANDIT)
def test_logged_pickle_resume(entry):
    k = 3
    X, y = make_stream(n=150, k=k, seed=12)
    logged = _uniform_log(y, k, seed=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OffPolicyWarning)
        whole = entry.make(random_state=9).partial_fit(
            X[:100], logged[:100], classes=range(k)
        )
        whole.sample_actions(X[100:110])  # a pending batch survives the pickle
        resumed = pickle.loads(pickle.dumps(whole))
        assert resumed.n_pending_ == 10
        for est in (whole, resumed):
            a, p = est.sample_actions(X[110:])
            est.partial_fit(X[100:], logged[100:])
            est.last_actions = a
    assert_array_equal(whole.last_actions, resumed.last_actions)
    assert_same_learner(resumed, whole)


def test_reward_kind_is_declared_per_learner():
    """``_logged_rewards = "unit"`` accepts any reward in [0, 1] (a learner that
    can use real rewards declares it); "binary" refuses them."""

    class UnitBanditron(Banditron):
        _logged_rewards = "unit"

    X, y = make_stream(n=20, k=3, seed=5)
    logged = LoggedFeedback([0, 1, 2], [0.25, 1.0, 0.0], [0.5, 0.5, 0.5])
    unit = UnitBanditron(random_state=0).partial_fit(X[:3], logged, classes=range(3))
    assert unit.t_ == 3
    before = snapshot(unit)
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        unit.partial_fit(X[:1], LoggedFeedback([0], [1.5], [0.5]))
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        unit.partial_fit(X[:2], LoggedFeedback([0, 1], [-0.5, 1.0], [0.5, 0.5]))
    assert_same_state(unit, before)
    for entry in ENTRIES:
        # read from an instance: a meta-estimator's (OnlineSelector's) follows
        # its candidates
        assert entry.make()._logged_rewards in ("binary", "unit"), entry.id
    with pytest.raises(ValueError, match="0 or 1"):
        Banditron(random_state=0).partial_fit(X[:3], logged, classes=range(3))


@pytest.mark.parametrize("container", ["dense", "csr"])
def test_squarecb_learns_real_valued_rewards_like_its_reference(container):
    """SquareCB's oracle regresses on any reward in [0, 1]: logged rounds with
    fractional rewards (from its own served actions and from a foreign policy)
    give the state of the NumPy reference fed the same rounds, bit for bit."""
    import _reference_squarecb as ref_sq

    from skbandit import SquareCB

    k, n, seed = 3, 60, 4
    X, _ = make_stream(n=n, k=k, seed=seed)
    Xc = sp.csr_matrix(X) if container == "csr" else X
    rng = np.random.default_rng(9)
    est = SquareCB(importance_weighted=True, random_state=seed)
    actions, props = est.sample_actions(Xc, classes=range(k))
    foreign = rng.random(n) < 0.5  # half the rounds logged by another policy
    actions[foreign] = rng.integers(0, k, foreign.sum())
    props[foreign] = 1.0 / k
    rewards = rng.choice([0.0, 0.25, 0.5, 1.0], n)
    est.partial_fit(Xc, LoggedFeedback(actions, rewards, props))
    U = np.random.default_rng(seed).random((n, 2))
    trace = ref_sq.squarecb(
        Xc, np.zeros(n, int), U, k, importance_weighted=True,
        logged=(actions, rewards, props),
    )  # fmt: skip
    for name, value in trace.state.items():
        assert_array_equal(getattr(est, name), value, err_msg=name)
    assert np.any(est.intercept_ != 0.0)
