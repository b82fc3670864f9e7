"""``skbandit.LiveSession``: its contract (docs/protocol.md, The live session).

* It plays exactly what ``sample_actions(x)`` and ``partial_fit(x,
  LoggedFeedback(...))`` play, for every bandit learner (the compiled round
  and the general path), dense and CSR rows, own and off-policy rounds, rows
  served ahead of their feedback: the same actions and propensities and the
  same learner, generator and serving cursor included, bit for bit.
* While open it locks the learner's parameters and training calls; predicting
  still works.
* A refused row or feedback changes nothing; a round whose update overflows
  is undone.
* ``learn`` right after ``act`` reuses what ``act`` returned only for the
  same entries, round and pair with nothing in between (a hook, a refused
  row), and a row the session converted stays alive while the round reads it.
* Rows in every form are accepted, played or refused as the public calls do.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import scipy.sparse as sp
from _helpers import (
    _assert_equal_values,
    assert_same_learner,
    assert_same_state,
    snapshot,
)
from _registry import BANDIT_ENTRIES, entry_params

from skbandit import Banditron, LiveSession, LoggedFeedback, RegressionReduction

K = 3
D = 6


def _stream(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, D)) / 4.0  # row norms below 1 (rational kernel)
    X[X < -0.1] = 0.0
    y = rng.integers(0, K, size=n)
    return X, y


def _reward(est, action, label, rng) -> float:
    if getattr(est, "_logged_rewards", "binary") == "binary":
        return float(action == label)
    return float(action == label) * 0.5 + 0.5 * rng.random()


def _assert_same_state_but_generator(est, snap):
    """``est`` in the state ``snap`` but its generator, which a session
    advances by the pairs it queued (``close`` sets it back)."""
    snap = {k: v for k, v in snap.items() if k != "_rng"}
    now = {k: v for k, v in snapshot(est).items() if k != "_rng"}
    # (a meta-learner's snapshot nests its held learners' as dictionaries)
    _assert_equal_values(now, snap, "state")


def _play_on_as_twins(sa, sb, X, y, rows) -> None:
    """Sessions ``sa`` and ``sb`` act on and learn ``rows`` alike (the same
    actions and propensities; the reward ``1[action == label]``)."""
    for j in rows:
        act, p = sa.act(X[j])
        assert (act, p) == sb.act(X[j])
        sa.learn(X[j], act, float(act == y[j]), p)
        sb.learn(X[j], act, float(act == y[j]), p)


def _row(X, i, form):
    row = X[i]
    return sp.csr_matrix(row[None, :]) if form == "csr" else row


# (rows served, then rows learned) per step: one by one, two served ahead
_SCHEDULE = [(1, 1)] * 6 + [(2, 2), (0, 1), (1, 1), (3, 1), (0, 2), (1, 1), (2, 1)]


@pytest.mark.filterwarnings("ignore::skbandit.OffPolicyWarning")
@pytest.mark.parametrize("form", ["dense", "csr"])
@pytest.mark.parametrize("entry", entry_params(BANDIT_ENTRIES))
def test_session_plays_as_the_public_calls(entry, form):
    """The session and the public calls, step by step, on twin learners:
    the same actions, propensities and whole learner (state, counters,
    generator, ``n_pending_``) after every step and after ``close``; some
    rounds are off-policy (another action, or another propensity)."""
    X, y = _stream()
    a = entry.make(random_state=3)
    a.partial_fit(X[:20], y[:20], classes=np.arange(K))
    b = copy.deepcopy(a)
    rng_a, rng_b = np.random.default_rng(5), np.random.default_rng(5)
    served_a: list = []
    served_b: list = []
    i = 20
    with LiveSession(a) as session:
        for n_serve, n_learn in _SCHEDULE:
            for _ in range(n_serve):
                act, p = session.act(_row(X, i + len(served_a), form))
                served_a.append((i + len(served_a), act, p))
                rows = X[i + len(served_b) : i + len(served_b) + 1]
                acts, ps = b.sample_actions(
                    sp.csr_matrix(rows) if form == "csr" else rows
                )
                served_b.append((i + len(served_b), acts[0], ps[0]))
            assert [s[1:] for s in served_a] == [s[1:] for s in served_b]
            for _ in range(n_learn):
                j, act, p = served_a.pop(0) if served_a else (i, 0, 1.0)
                served_b.pop(0) if served_b else None
                if j % 4 == 3:  # off-policy: another action
                    act = (act + 1) % K
                if j % 5 == 4:
                    p = 0.5  # off-policy: another propensity
                r = _reward(a, act, y[j], rng_a)
                assert r == _reward(b, act, y[j], rng_b)
                session.learn(_row(X, j, form), act, r, p)
                rows = X[j : j + 1]
                b.partial_fit(
                    sp.csr_matrix(rows) if form == "csr" else rows,
                    LoggedFeedback([act], [r], [p]),
                )
                i = max(i, j + 1)
            assert (a.t_, a.n_mistakes_, a.n_greedy_mistakes_) == (
                b.t_,
                b.n_mistakes_,
                b.n_greedy_mistakes_,
            )
    # rows served and not learned stay pending, the generator where the
    # public calls leave it
    assert a.n_pending_ == b.n_pending_ == len(served_b)
    assert_same_learner(a, b)
    assert (a.n_mistakes_, a.n_greedy_mistakes_, a.n_iter_) == (
        b.n_mistakes_,
        b.n_greedy_mistakes_,
        b.n_iter_,
    )
    # and they play on alike
    for _ in range(len(served_b)):
        b.partial_fit(X[:1], LoggedFeedback([0], [0.0], [0.5]))
        a.partial_fit(X[:1], LoggedFeedback([0], [0.0], [0.5]))
    acts_a, ps_a = a.sample_actions(X[40:50])
    acts_b, ps_b = b.sample_actions(X[40:50])
    np.testing.assert_array_equal(acts_a, acts_b)
    np.testing.assert_array_equal(ps_a, ps_b)


def test_session_opened_with_rows_served_before():
    """Rows served by ``sample_actions`` before the session keep their pairs:
    learning them in the session learns what ``partial_fit`` would."""
    X, y = _stream()
    a = Banditron(random_state=0).partial_fit(X[:20], y[:20], classes=np.arange(K))
    acts, ps = a.sample_actions(X[20:22])
    b = copy.deepcopy(a)
    with LiveSession(a) as session:
        act, p = session.act(X[22])
        for j, (act_j, p_j) in enumerate(zip(acts, ps, strict=True)):
            session.learn(X[20 + j], act_j, float(act_j == y[20 + j]), p_j)
    assert a.n_pending_ == 1
    acts_b, ps_b = b.sample_actions(X[22:23])
    assert (act, p) == (acts_b[0], ps_b[0])
    b.partial_fit(X[20:22], LoggedFeedback(acts, (acts == y[20:22]) * 1.0, ps))
    assert_same_learner(a, b)


def test_a_generator_without_jumps_is_set_back_too():
    """``close`` sets a generator that cannot jump back (MT19937) to where the
    public calls leave it."""
    X, y = _stream()
    a = Banditron(random_state=0).partial_fit(X[:20], y[:20], classes=np.arange(K))
    a._rng = np.random.Generator(np.random.MT19937(4))
    b = copy.deepcopy(a)
    with LiveSession(a) as session:
        for j in range(20, 24):
            act, p = session.act(X[j])
            session.learn(X[j], act, float(act == y[j]), p)
        session.act(X[24])
    for j in range(20, 24):
        acts, ps = b.sample_actions(X[j : j + 1])
        b.partial_fit(X[j : j + 1], LoggedFeedback(acts, (acts == y[j]) * 1.0, ps))
    b.sample_actions(X[24:25])
    assert_same_learner(a, b)
    assert a.n_pending_ == b.n_pending_ == 1


@pytest.mark.parametrize(
    "call",
    [
        lambda e, X, y: e.set_params(random_state=1),
        lambda e, X, y: e.fit(X, y),
        lambda e, X, y: e.partial_fit(X, y),
        lambda e, X, y: e.sample_actions(X),
        lambda e, X, y: LiveSession(e),
    ],
    ids=["set_params", "fit", "partial_fit", "sample_actions", "second session"],
)
@pytest.mark.parametrize("cls", [Banditron, RegressionReduction])
def test_an_open_session_locks_the_learner(cls, call):
    X, y = _stream()
    est = cls(random_state=0).partial_fit(X[:20], y[:20], classes=np.arange(K))
    session = LiveSession(est)
    snap = snapshot(est)
    with pytest.raises(RuntimeError, match="LiveSession"):
        call(est, X[:5], y[:5])
    assert_same_state(est, snap)
    est.predict(X[:3])  # reading works
    est.exploration_distribution(X[:3])
    session.close()
    call(est, X[:5], y[:5])  # unlocked


def _bad_calls():
    X, _ = _stream()
    good = X[25]
    return {
        "nan row": (np.where(np.arange(D) == 2, np.nan, good), 0, 1.0, 0.5),
        "wrong width": (good[:-1], 0, 1.0, 0.5),
        "two rows": (X[25:27], 0, 1.0, 0.5),
        "huge value": (good * 1e300, 0, 1.0, 0.5),
        "unknown action": (good, 7, 1.0, 0.5),
        "reward not a bit": (good, 0, 0.5, 0.5),
        "reward nan": (good, 0, np.nan, 0.5),
        "propensity 0": (good, 0, 1.0, 0.0),
        "propensity above 1": (good, 0, 1.0, 1.5),
        "propensity nan": (good, 0, 1.0, np.nan),
    }


@pytest.mark.parametrize("form", ["dense", "csr"])
@pytest.mark.parametrize("bad", list(_bad_calls()))
def test_a_refused_call_changes_nothing(bad, form):
    """Each bad row or feedback raises ``ValueError`` before any state
    changes: the learner, its generator and the session go on as a twin that
    never saw the call."""
    X, y = _stream()
    a = Banditron(random_state=0).partial_fit(X[:20], y[:20], classes=np.arange(K))
    b = copy.deepcopy(a)
    x, action, reward, propensity = _bad_calls()[bad]
    if form == "csr" and x.ndim == 1 and np.isfinite(x).all():
        x = sp.csr_matrix(x[None, :])
    with LiveSession(a) as sa, LiveSession(b) as sb:
        act, p = sa.act(X[20])
        assert (act, p) == sb.act(X[20])
        with pytest.raises(ValueError):
            sa.learn(x, action, reward, propensity)
        if bad in ("nan row", "wrong width", "two rows", "huge value"):
            with pytest.raises(ValueError):
                sa.act(x)
        sa.learn(X[20], act, float(act == y[20]), p)
        sb.learn(X[20], act, float(act == y[20]), p)
        assert sa.act(X[21]) == sb.act(X[21])
    assert_same_learner(a, b)


@pytest.mark.parametrize("form", ["dense", "csr"])
def test_an_overflowing_update_is_undone(form, monkeypatch):
    """A row that makes the update non-finite (its values beyond the bound,
    lifted for the test) raises ``FloatingPointError`` and leaves the learner
    as before the call; the session then goes on as a twin that never saw
    it."""
    monkeypatch.setattr("skbandit.live._MAX_ABS_X", np.inf)
    X, y = _stream()
    a = Banditron(random_state=0).partial_fit(X[:20], y[:20], classes=np.arange(K))
    b = copy.deepcopy(a)
    big = X[20] * 1e307 + 1e307
    with LiveSession(a) as sa, LiveSession(b) as sb:
        snap = snapshot(a)
        # a round of a row not served (its pair drawn by ``learn``), then one
        # of a served row (its pair queued by ``act``)
        with pytest.raises(FloatingPointError, match="non-finite"):
            sa.learn(_row(big[None, :], 0, form), 0, 0.0, 0.5)
        _assert_same_state_but_generator(a, snap)
        act, p = sa.act(X[21])
        assert (act, p) == sb.act(X[21])
        with pytest.raises(FloatingPointError, match="non-finite"):
            sa.learn(_row(big[None, :], 0, form), act, float(act != y[21]), p)
        _assert_same_state_but_generator(a, snap)
        sa.learn(X[21], act, float(act == y[21]), p)
        sb.learn(X[21], act, float(act == y[21]), p)
    assert_same_learner(a, b)


def test_closed_session_refuses_and_full_information_cannot_learn():
    from skbandit import MulticlassPerceptron

    X, y = _stream()
    est = MulticlassPerceptron().partial_fit(X[:20], y[:20], classes=np.arange(K))
    with LiveSession(est) as session:
        act, p = session.act(X[20])
        with pytest.raises(TypeError, match="full-information"):
            session.learn(X[20], act, 1.0, p)
    with pytest.raises(RuntimeError, match="closed"):
        session.act(X[20])
    with pytest.raises(Exception, match="not fitted"):
        LiveSession(Banditron())


@pytest.mark.parametrize("form", ["dense", "csr"])
def test_the_learners_row_rule_runs_in_the_session(form):
    """A row the compiled check accepts but the learner's own rule refuses
    (the rational ``SeparableOneVsAll``'s rows of norm at most 1) raises its
    ``ValueError`` in ``act`` and ``learn``, with nothing changed."""
    from skbandit import SeparableOneVsAll

    X, y = _stream()
    a = SeparableOneVsAll(kernel="rational", large_norm="raise", random_state=0)
    a.partial_fit(X[:20], y[:20], classes=np.arange(K))
    b = copy.deepcopy(a)
    long = np.zeros(D)
    long[0] = 1.5
    bad = _row(long[None, :], 0, form)
    with LiveSession(a) as sa, LiveSession(b) as sb:
        with pytest.raises(ValueError, match="norm at most 1"):
            sa.act(bad)
        with pytest.raises(ValueError, match="norm at most 1"):
            sa.learn(bad, 0, 1.0, 0.5)
        _play_on_as_twins(sa, sb, X, y, range(20, 24))
    assert_same_learner(a, b)


def _tree(est) -> list:
    """``est`` and the learners it holds, recursively (``_held_learners``)."""
    out = [est]
    for held in est._held_learners():
        out += _tree(held)
    return out


def _hooked_learners():
    """Learners whose live round runs block hooks, each in a state where a
    hook rebinds an attribute on the next round: a SquareCB switched to
    per-class scales after learning with a shared one (``_before_block``
    replaces ``scale_``), the default selector on narrow rows (its nonlinear
    pipeline candidate's hooks set its learner's counter) with one candidate
    so switched, and Gaptron."""
    from skbandit import Gaptron, OnlineSelector, SquareCB

    X, y = _stream()
    classes = np.arange(K)
    square = SquareCB(random_state=0).partial_fit(X[:20], y[:20], classes=classes)
    square.set_params(shared_scale=False)
    selector = OnlineSelector(random_state=0).partial_fit(
        X[:20], y[:20], classes=classes
    )
    selector.candidates_[1].set_params(shared_scale=False)
    gaptron = Gaptron(random_state=0).partial_fit(X[:20], y[:20], classes=classes)
    return {"SquareCB": square, "OnlineSelector": selector, "Gaptron": gaptron}


def _identities(est) -> dict:
    return {
        (id(obj), attr): id(value)
        for obj in _tree(est)
        for attr, value in vars(obj).items()
    }


@pytest.mark.parametrize("name", ["SquareCB", "OnlineSelector", "Gaptron"])
def test_a_hooked_rounds_point_covers_what_its_hooks_rebind(name):
    """A hooked live round records only the attributes its learners state
    (``_hook_rebinds``, the held learners' ``t_``; the session's plan): every
    attribute of a learner of the tree that a round rebinds is in the plan,
    so a failed round can undo it; but the learner's own counters, which
    the session writes after the round is committed."""
    est = _hooked_learners()[name]
    X, y = _stream()
    with LiveSession(est) as session:
        assert session._plan is not None  # the narrow point is in use
        planned = {(id(obj), attr) for obj, attr in zip(*session._plan, strict=True)}
        planned |= {(id(est), c) for c in ("t_", "n_mistakes_", "n_greedy_mistakes_")}
        for i in range(20, 30):
            before = _identities(est)
            act, p = session.act(X[i])
            session.learn(X[i], act, float(act == y[i]), p)
            after = _identities(est)
            changed = {
                key
                for key in before.keys() | after.keys()
                if before.get(key) != after.get(key)
            }
            assert changed <= planned, changed - planned


@pytest.mark.parametrize("form", ["dense", "csr"])
@pytest.mark.parametrize("name", ["SquareCB", "OnlineSelector", "Gaptron"])
def test_a_failed_hooked_round_is_undone(name, form, monkeypatch):
    """A hooked round whose update overflows, after its hooks rebound an
    attribute (``_hooked_learners``), leaves every learner of the tree as
    before the call (the hooks' writes undone by the round's point); the
    session then plays on as a twin that never saw the row."""
    monkeypatch.setattr("skbandit.live._MAX_ABS_X", np.inf)
    X, y = _stream()
    a = _hooked_learners()[name]
    b = copy.deepcopy(a)
    big = X[20] * 1e307 + 1e307
    with LiveSession(a) as sa, LiveSession(b) as sb:
        snap = snapshot(a)  # (held learners' states included)
        with pytest.raises(FloatingPointError, match="non-finite"):
            sa.learn(_row(big[None, :], 0, form), 0, 0.0, 0.5)
        _assert_same_state_but_generator(a, snap)
        _play_on_as_twins(sa, sb, X, y, range(21, 26))
    assert_same_learner(a, b)


@pytest.mark.parametrize("form", ["dense", "csr"])
@pytest.mark.parametrize("name", ["SquareCB", "OnlineSelector"])
def test_a_settling_hook_runs_on_the_first_round_only(name, form, monkeypatch):
    """A ``_before_block`` that settles (``_before_block_settles``: SquareCB's
    rebinds ``scale_`` after ``set_params(shared_scale=False)``, the
    selector's runs its candidates') runs on the session's first learned
    round only, and the session still plays as the public calls: the same
    actions and propensities and the same learner, though the first round's
    hook did work (``_hooked_learners``); a hook that does not settle runs
    around every round."""
    from skbandit import SquareCB

    calls = []
    hook = SquareCB._before_block

    def counted(self, kernel, n_rows):
        calls.append(self)
        return hook(self, kernel, n_rows)

    X, y = _stream()
    a = _hooked_learners()[name]
    b = copy.deepcopy(a)
    monkeypatch.setattr(SquareCB, "_before_block", counted)
    with LiveSession(a) as session:
        for j in range(20, 30):
            act, p = session.act(_row(X, j, form))
            rows = sp.csr_matrix(X[j : j + 1]) if form == "csr" else X[j : j + 1]
            assert (act, p) == tuple(x[0] for x in b.sample_actions(rows))
            r = float(act == y[j])
            session.learn(_row(X, j, form), act, r, p)
            b.partial_fit(rows, LoggedFeedback([act], [r], [p]))
    # the session's rounds called the hook of a's SquareCBs on the first
    # round only (b's partial_fit calls run it on every call)
    in_a = [c for c in calls if any(c is t for t in _tree(a))]
    n_square = sum(isinstance(t, SquareCB) for t in _tree(a))
    assert len(in_a) == n_square, len(in_a)
    assert_same_learner(a, b)
    monkeypatch.setattr(SquareCB, "_before_block_settles", False, raising=False)
    calls.clear()
    with LiveSession(a) as session:
        for j in range(30, 34):
            act, p = session.act(_row(X, j, form))
            session.learn(_row(X, j, form), act, float(act == y[j]), p)
    assert len(calls) == 4 * n_square


def test_a_parents_settling_statement_does_not_cover_a_new_hook():
    """A subclass that overrides ``_before_block`` without stating its own
    ``_before_block_settles`` has its hook run around every round (its
    parent's statement covers the parent's hook only); one that states it
    has it run on the first learned round only."""
    from skbandit import SquareCB

    calls = []

    class Unstated(SquareCB):
        def _before_block(self, kernel, n_rows):
            calls.append(n_rows)
            return super()._before_block(kernel, n_rows)

    class Stated(Unstated):
        _before_block_settles = True

    X, y = _stream()
    for cls, expected in [(Unstated, 5), (Stated, 1)]:
        est = cls(random_state=0).partial_fit(X[:20], y[:20], classes=np.arange(K))
        calls.clear()
        with LiveSession(est) as session:
            for j in range(20, 25):
                act, p = session.act(X[j])
                session.learn(X[j], act, float(act == y[j]), p)
        assert len(calls) == expected, cls.__name__


def test_a_hook_without_a_statement_records_the_whole_point():
    """The narrow point is used only where every learner of the tree states
    what its hooks rebind: a subclass that overrides a hook without stating
    its own ``_hook_rebinds`` (its parent's statement does not cover its
    hook), and a learner with its own rollback point (the rational
    ``SeparableOneVsAll``), record the whole rollback point; a subclass
    that states its own uses the narrow one."""
    from skbandit import SeparableOneVsAll, SquareCB

    class Unstated(SquareCB):
        def _after_block(self, kernel):
            self.extra_ = np.zeros(1)  # a rebind its parent did not state

    class Stated(Unstated):
        _hook_rebinds = ("scale_", "extra_")

    X, y = _stream()
    for cls, narrow in [(Unstated, False), (Stated, True), (SquareCB, True)]:
        est = cls(random_state=0).partial_fit(X[:20], y[:20], classes=np.arange(K))
        with LiveSession(est) as session:
            assert (session._plan is not None) is narrow, cls.__name__
    rational = SeparableOneVsAll(kernel="rational", random_state=0)
    rational.partial_fit(X[:20], y[:20], classes=np.arange(K))
    with LiveSession(rational) as session:
        assert session._plan is None


def test_actions_are_found_in_any_form_of_a_class():
    """``learn`` finds an action given as the class, its NumPy scalar or a
    one-element array of it (string and integer classes), and refuses an
    unhashable or unknown one with the ``ValueError`` that names it."""
    X, y = _stream()
    for classes in (np.array(["a", "b", "c"]), np.arange(K) * 10):
        labels = classes[y]
        a = Banditron(random_state=0).partial_fit(X[:20], labels[:20], classes=classes)
        b = copy.deepcopy(a)
        c = classes[1]
        forms = [c, c.item(), np.array([c]), np.array(c)]
        with LiveSession(a) as sa, LiveSession(b) as sb:
            for i, form in enumerate(forms):
                sa.learn(X[20 + i], form, 1.0, 0.5)
                sb.learn(X[20 + i], c.item(), 1.0, 0.5)
            for bad in ([c.item()], "z" if classes.dtype.kind == "U" else 7):
                with pytest.raises(ValueError, match="not one of the learner"):
                    sa.learn(X[30], bad, 1.0, 0.5)
        assert_same_learner(a, b)


# ------------------------------------------------ learn right after act
def _fitted_named(name):
    from skbandit import OnlineSelector, SquareCB

    cls = {"Banditron": Banditron, "SquareCB": SquareCB}.get(name, OnlineSelector)
    X, y = _stream()
    est = cls(random_state=0).partial_fit(X[:20], y[:20], classes=np.arange(K))
    return est, X, y


def _public_row(X, j, form):
    rows = X[j : j + 1]
    return sp.csr_matrix(rows) if form == "csr" else rows


@pytest.mark.parametrize("form", ["dense", "csr"])
@pytest.mark.parametrize("name", ["Banditron", "SquareCB", "OnlineSelector"])
def test_learn_reuses_act_only_on_the_row_act_read(name, form):
    """``learn`` right after ``act`` reuses what ``act`` returned (the live
    loop) only when the row it learns holds the entries ``act`` read: a row
    changed in place between the two is learnt as ``partial_fit`` learns the
    changed row. Catches the reuse without the comparison of the entries."""
    a, X, y = _fitted_named(name)
    b = copy.deepcopy(a)
    with LiveSession(a) as session:
        for j in range(20, 40):
            row = _row(X, j, form).copy()
            act, p = session.act(row)
            assert (act, p) == tuple(
                v[0] for v in b.sample_actions(_public_row(X, j, form))
            )
            if form == "csr":
                row.data *= -3.0  # (the same columns, other values)
                changed = row
            else:
                row *= -3.0
                changed = row[None, :]
            r = float(act == y[j])
            session.learn(row, act, r, p)
            b.partial_fit(changed, LoggedFeedback([act], [r], [p]))
    assert_same_learner(a, b)


@pytest.mark.parametrize("form", ["dense", "csr"])
@pytest.mark.parametrize("name", ["Banditron", "SquareCB", "OnlineSelector"])
def test_learn_reuses_act_only_at_its_round_and_pair(name, form):
    """One row served twice (two rounds, two pairs), then both learnt: the
    first is learnt at its own round with its own pair, as ``partial_fit``
    learns it, not with the second ``act``'s (the kernel's last call, on the
    same entries). Catches the reuse without the comparison of the round and
    the pair (the selector's candidates explore by the round)."""
    a, X, y = _fitted_named(name)
    b = copy.deepcopy(a)
    with LiveSession(a) as session:
        for j in range(20, 40):
            row = _row(X, j, form)
            served = [session.act(row) for _ in range(2)]
            two = np.vstack([X[j], X[j]])
            acts, ps = b.sample_actions(sp.csr_matrix(two) if form == "csr" else two)
            assert served == list(zip(acts, ps, strict=True))
            for act, p in served:
                r = float(act == y[j])
                session.learn(row, act, r, p)
                b.partial_fit(_public_row(X, j, form), LoggedFeedback([act], [r], [p]))
    assert_same_learner(a, b)


def test_a_hook_before_the_round_is_seen_by_its_act():
    """A ``_before_block`` that runs around every round (a subclass's, not
    stated to settle) and moves the weights runs between ``act`` and
    ``learn``: ``learn`` then plays ``act`` again on the moved weights, as
    ``partial_fit`` runs the hook before its round's ``act``. Catches
    ``learn`` reusing the ``act`` from before the hook (``LiveRound.forget``
    not called)."""

    class Moving(Banditron):
        def _before_block(self, kernel, n_rows):
            self.coef_[self.t_ % K] += 10.0  # (moves the greedy label)
            return kernel

    X, y = _stream()
    a = Moving(random_state=0).partial_fit(X[:20], y[:20], classes=np.arange(K))
    b = copy.deepcopy(a)
    with LiveSession(a) as session:
        for j in range(20, 40):
            act, p = session.act(X[j])
            assert (act, p) == tuple(v[0] for v in b.sample_actions(X[j : j + 1]))
            r = float(act == y[j])
            session.learn(X[j], act, r, p)
            b.partial_fit(X[j : j + 1], LoggedFeedback([act], [r], [p]))
    assert_same_learner(a, b)


def test_a_refused_row_between_act_and_learn_is_not_reused():
    """A dense row bound again with the values ``act`` read keeps that
    bind's check and compaction, but only while nothing rewrote them: a row
    bound in between and then refused by the learner's row rule (the
    rational kernel's ``||x|| < 1``, checked after the compiled bind), then
    ``learn`` of the served row, learns what ``partial_fit`` learns. Catches
    a ``bind`` that rewrites the compaction without dropping the record (the
    served row then reads the refused row's entries)."""
    from skbandit import SeparableOneVsAll

    X, y = _stream()
    X[:, ::2] = 0.0  # (at most half the entries non-zero: rows compacted)
    a = SeparableOneVsAll(kernel="rational", random_state=0)
    a.partial_fit(X[:20], y[:20], classes=np.arange(K))
    b = copy.deepcopy(a)
    with LiveSession(a) as session:
        for j in range(20, 30):
            act, p = session.act(X[j])
            assert (act, p) == tuple(v[0] for v in b.sample_actions(X[j : j + 1]))
            big = X[j + 1] * 50.0 + np.where(X[j + 1] != 0.0, 1.0, 0.0)
            with pytest.raises(ValueError):
                session.learn(big, act, 1.0, p)
            with pytest.raises(ValueError):
                b.partial_fit(big[None, :], LoggedFeedback([act], [1.0], [p]))
            r = float(act == y[j])
            session.learn(X[j], act, r, p)
            b.partial_fit(X[j : j + 1], LoggedFeedback([act], [r], [p]))
    assert_same_learner(a, b)


# ------------------------------------------------------ rows in any form
def _csr(data, indices, indptr, shape, cls=sp.csr_matrix):
    """A CSR matrix holding exactly these arrays (SciPy's constructor may
    convert or check them)."""
    X = cls(shape)
    X.data, X.indices, X.indptr = data, indices, indptr
    return X


class _Subclass(np.ndarray):
    pass


def _row_forms():
    x = np.array([[0.5, 0.0, -1.5, 2.0]])
    csr = sp.csr_matrix(x)
    i64 = csr.copy()
    i64.indices, i64.indptr = i64.indices.astype(np.int64), i64.indptr.astype(np.int64)
    nan, inf, big = x.copy(), x.copy(), x.copy()
    nan[0, 1], inf[0, 3], big[0, 0] = np.nan, -np.inf, -(2.0**481)
    two = np.vstack([x, 2 * x])
    d, i, p = csr.data, csr.indices, csr.indptr
    return {
        "dense": x,
        "dense two rows": two,
        "dense at the bound": np.array([[2.0**480, 0.0, 0.0, -(2.0**480)]]),
        "dense NaN": nan,
        "dense inf": inf,
        "dense above the bound": big,
        "dense big-endian": x.astype(">f8"),
        "dense float32": x.astype(np.float32),
        "dense Fortran two rows": np.asfortranarray(two),
        "dense strided": np.zeros((1, 8))[:, ::2],
        "dense 1-D": x[0],
        "dense 3 columns": x[:, :3].copy(),
        "dense no rows": np.empty((0, 4)),
        "dense subclass": x.view(_Subclass),
        "list": x.tolist(),
        "csr": csr,
        "csr_array": sp.csr_array(x),
        "csr two rows": sp.csr_matrix(two),
        "csr int64 indices": i64,
        "csr mixed index types": _csr(d, i.astype(np.int64), p, (1, 4)),
        "csr empty row": sp.csr_matrix((1, 4)),
        "csr unsorted": _csr(d[::-1].copy(), i[::-1].copy(), p, (1, 4)),
        "csr duplicate column": _csr(d, np.array([0, 0, 3], np.int32), p, (1, 4)),
        "csr column out of range": _csr(d, np.array([0, 2, 4], np.int32), p, (1, 4)),
        "csr negative column": _csr(d, np.array([-1, 2, 3], np.int32), p, (1, 4)),
        "csr indptr too short": _csr(d, i, p[:1], (1, 4)),
        "csr indptr past the data": _csr(d, i, np.array([0, 4], np.int32), (1, 4)),
        "csr indptr not from 0": _csr(d, i, np.array([1, 3], np.int32), (1, 4)),
        "csr float32 values": _csr(d.astype(np.float32), i, p, (1, 4)),
        "csr big-endian values": _csr(d.astype(">f8"), i, p, (1, 4)),
        "csr big-endian indices": _csr(d, i.astype(">i4"), p.astype(">i4"), (1, 4)),
        "csr strided values": _csr(np.repeat(d, 2)[::2], i, p, (1, 4)),
        "csr NaN": _csr(np.array([0.5, np.nan, 2.0]), i, p, (1, 4)),
        "csr above the bound": _csr(np.array([0.5, 2.0**481, 2.0]), i, p, (1, 4)),
        "csc": sp.csc_matrix(x),
        "coo": sp.coo_matrix(x),
    }


def _outcome(call):
    """``("ok", value)`` or ``("error", exception type)`` (a refused row, or
    a learner's overflow on a row at the magnitude bound)."""
    try:
        return "ok", call()
    except (ValueError, TypeError, FloatingPointError) as exc:
        return "error", type(exc)


@pytest.mark.parametrize("name", ["Banditron", "OnlineSelector"])
def test_a_row_in_any_form_is_played_as_the_public_calls_play_it(name):
    """Each form a row may come in (dense or sparse, other dtypes, byte
    orders, layouts, malformed CSR arrays, non-finite values, other shapes):
    the session's ``act`` and ``learn`` accept it when ``sample_actions`` and
    ``partial_fit`` accept it as one row, and then play and learn the same
    (the row the compiled bind takes as it is, or the general path's
    conversion), else refuse it and change nothing. Catches the compiled
    bind taking a row it should refuse (float32 values read as float64, an
    ``indptr`` that does not match the arrays)."""
    from skbandit import OnlineSelector

    cls = {"Banditron": Banditron}.get(name, OnlineSelector)
    X, y = _stream()
    X = X[:, :4]
    fitted = cls(random_state=0).partial_fit(X[:20], y[:20], classes=np.arange(K))
    for form_name, row in _row_forms().items():
        a, b = copy.deepcopy(fitted), copy.deepcopy(fitted)
        public = row.reshape(1, -1) if getattr(row, "ndim", 2) == 1 else row
        one_row = (
            np.shape(public)[0] == 1
            if not sp.issparse(public)
            else public.shape[0] == 1
        )
        with LiveSession(a) as session:
            got = _outcome(lambda: session.act(row))  # noqa: B023
            want = _outcome(lambda: tuple(v[0] for v in b.sample_actions(public)))  # noqa: B023
            if not one_row:
                assert got[0] == "error", form_name
                continue
            assert got == want, form_name
            if got[0] == "error":
                continue
            act, p = got[1]
            r = float(act == y[20])
            # both learn, or both fail alike and roll back (an overflow: the
            # selector's nonlinear candidate reads the standardised row)
            learnt = _outcome(lambda: session.learn(row, act, r, p))  # noqa: B023
            logged = LoggedFeedback([act], [r], [p])
            wanted = _outcome(lambda: b.partial_fit(public, logged))  # noqa: B023
            assert learnt[0] == wanted[0], form_name
            if learnt[0] == "error":
                assert learnt[1] is wanted[1], form_name
        assert_same_learner(a, b)


def test_an_off_policy_round_warns_once_where_the_analysis_needs_own_data():
    """A learner whose analysis assumes its own draws (SOBA) warns
    (``OffPolicyWarning``) on the session's first off-policy round, once; its
    own rounds do not warn, and a learner whose analysis holds off-policy
    (Banditron) never warns."""
    import warnings

    from skbandit import SOBA, OffPolicyWarning

    X, y = _stream()
    for cls, warns in [(SOBA, True), (Banditron, False)]:
        est = cls(random_state=0).partial_fit(X[:20], y[:20], classes=np.arange(K))
        with LiveSession(est) as session, warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            act, p = session.act(X[20])
            session.learn(X[20], act, float(act == y[20]), p)  # its own draw
            assert not [w for w in got if w.category is OffPolicyWarning]
            for j in (21, 22):
                act, p = session.act(X[j])
                other = (act + 1) % K
                session.learn(X[j], other, float(other == y[j]), 0.5)
        off = [w for w in got if w.category is OffPolicyWarning]
        assert len(off) == (1 if warns else 0), cls.__name__


class _PoisonedOnDeath:
    """Owns an array's values and writes NaN over them when it dies (under
    CPython's reference counting: as soon as the last array on it goes)."""

    def __init__(self, values):
        self.values = values
        self.__array_interface__ = values.__array_interface__

    def __del__(self):
        self.values[...] = np.nan


def test_a_converted_row_stays_alive_while_the_round_reads_it(monkeypatch):
    """A row the session converts (a list here: ``_bind_general``) is held
    only by the compiled round once bound; the round keeps it alive while it
    reads its values, in ``act`` and in ``learn``. The converted rows here
    write NaN over their values when they die, so a round that dropped its
    row first would read NaN (and refuse the round or learn otherwise than
    ``partial_fit``). Catches ``learn`` dropping the bound row before the
    round."""
    X, y = _stream()
    X = np.abs(X) + 0.05  # (every entry non-zero: the round reads the row itself)
    a = Banditron(random_state=0).partial_fit(X[:20], y[:20], classes=np.arange(K))
    b = copy.deepcopy(a)
    validate = a._validate_X

    def poisoned(rows, reset=False):
        out = np.array(validate(rows, reset=reset), dtype=np.float64, order="C")
        return np.asarray(_PoisonedOnDeath(out))

    monkeypatch.setattr(a, "_validate_X", poisoned)
    with LiveSession(a) as session:
        for j in range(20, 40):
            act, p = session.act(X[j].tolist())
            assert (act, p) == tuple(v[0] for v in b.sample_actions(X[j : j + 1]))
            r = float(act == y[j])
            session.learn(X[j].tolist(), act, r, p)
            b.partial_fit(X[j : j + 1], LoggedFeedback([act], [r], [p]))
    monkeypatch.undo()
    assert_same_learner(a, b)
