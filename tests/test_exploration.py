"""The exploration rules (``skbandit.exploration``) and the ``exploration``
parameter of the learners.

- Each compiled explorer (``skbandit._core._explore``) against its NumPy twin
  (``distribution``): bit for bit on random scores, exact ties, all-equal
  scores, huge gaps and every greedy label; the twins against the formulas of
  ``docs/algorithms.md`` written here independently.
- The rules as scikit-learn parameter objects: ``get_params``/``set_params``,
  ``clone``, ``GridSearchCV`` over ``exploration`` and
  ``exploration__<param>``, validation errors naming the rule and the parameter.
- The learners' ``exploration``: the declared default is the rule played
  (``exploration_``), strings and objects resolve to the learner's values,
  refused rules say why, a rule changed in place reaches the kernel.

The references of each learner (``tests/_reference*.py``) take the rule
through its twin, so the learner/rule combinations of the registry are checked
against them in ``test_reference.py``, ``test_logged.py`` and the learners' own
test files.
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from _data import make_stream
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.utils._param_validation import InvalidParameterError

import skbandit
from skbandit import (
    SOBA,
    BanditFeedback,
    Banditron,
    ConservativeOneVsAll,
    Gaptron,
    MulticlassPerceptron,
    OffsetTree,
    PNewtron,
    SeparableOneVsAll,
    SquareCB,
)
from skbandit._core import _explore
from skbandit.exploration import (
    RULES,
    Conservative,
    EpsilonGreedy,
    GapMap,
    Greedy,
    InverseGap,
    Softmax,
)

LEARNERS = [
    Banditron,
    SOBA,
    PNewtron,
    Gaptron,
    SquareCB,
    ConservativeOneVsAll,
    SeparableOneVsAll,
    OffsetTree,
    MulticlassPerceptron,
]

# Every rule with all its parameters set, some several times (a rule's
# compiled explorer is built by ``_compile`` for k classes).
RULE_CASES = [
    Greedy(),
    EpsilonGreedy(0.0),
    EpsilonGreedy(0.3),
    EpsilonGreedy(1.0),
    EpsilonGreedy(0.5, decay=0.5, min_epsilon=0.05),
    EpsilonGreedy(0.5, decay=2.0, min_epsilon=0.0),
    Softmax(0.0, scale=1.0),
    Softmax(0.1, scale=10.0),
    Softmax(1.0, scale=0.0),
    InverseGap(3.0, exponent=0.5, clip=False),
    InverseGap(300.0, exponent=0.75, clip=True),
    InverseGap(1e300, exponent=2.0, clip=True),  # gamma_t overflows to inf
    GapMap(0.0, loss="logistic"),
    GapMap(0.2, loss="hinge"),
    GapMap(0.05, loss="smooth_hinge"),
    Conservative(),
    Conservative(threshold=0.4),
]


def _score_vectors(k: int, seed: int):
    """Random, tied, all-equal, huge-gap, in-[0, 1] and negative score vectors."""
    rng = np.random.default_rng(seed)
    yield rng.standard_normal(k)
    yield rng.random(k)
    yield -np.abs(rng.standard_normal(k))
    s = rng.standard_normal(k)
    s[rng.permutation(k)[: max(2, k // 2)]] = s.max() + 1.0  # exact ties at the top
    yield s
    yield np.full(k, 0.25)  # all equal
    yield np.zeros(k)
    s = rng.standard_normal(k)
    s[0] = 1e6  # a huge gap
    yield s
    yield np.where(rng.random(k) < 0.5, 1e300, -1e300)
    yield np.round(rng.random(k) * 4) / 4  # ties everywhere


def _ids(rules):
    return [repr(r) for r in rules]


@pytest.mark.parametrize("rule", RULE_CASES, ids=_ids(RULE_CASES))
@pytest.mark.parametrize("k", [2, 3, 7])
def test_compiled_rule_is_bit_identical_to_its_twin(rule, k):
    counts = np.array([(3 * a) % 5 for a in range(k)], dtype=np.int64)
    stat = np.array([0.0, 2.5])
    context = {"counts": counts, "statistic": (stat, 1)}
    explorer = rule._compile(k, **context)
    for seed in range(4):
        for s in _score_vectors(k, seed):
            s = np.ascontiguousarray(s, dtype=np.float64)
            for t in (1, 2, 17, 10**6):
                # every greedy label: the kernels pass an exact maximiser, the
                # rules are defined for any label
                for g in range(k):
                    with np.errstate(over="ignore"):
                        twin = rule.distribution(s, t, g, counts=counts)
                    compiled = explorer.py_distribution(s, t, g)
                    assert_array_equal(compiled, twin, err_msg=f"{s}, t={t}, g={g}")


@pytest.mark.parametrize("rule", RULE_CASES, ids=_ids(RULE_CASES))
def test_rules_give_probability_vectors_at_a_maximiser(rule):
    k = 6
    explorer = rule._compile(k, counts=np.zeros(k, dtype=np.int64))
    for seed in range(3):
        for s in _score_vectors(k, seed):
            g = int(np.argmax(s))
            with np.errstate(over="ignore"):
                p = explorer.py_distribution(np.ascontiguousarray(s), 5, g)
            assert (p >= 0).all()
            assert math.isclose(float(np.cumsum(p)[-1]), 1.0, rel_tol=0, abs_tol=1e-12)


def test_inverse_gap_follows_the_learners_update_counts():
    """The per-class floor is cached per class and refreshed by
    ``class_updated(a)`` after the learner increments ``n_a`` (SquareCB's
    learn): the compiled rule then equals its twin at the new counts."""
    k = 4
    counts = np.zeros(k, dtype=np.int64)
    rule = InverseGap(5.0, exponent=0.75, clip=True)
    explorer = rule._compile(k, counts=counts)
    s = np.array([0.9, 0.3, 0.6, 0.1])
    rng = np.random.default_rng(0)
    for _ in range(50):
        a = int(rng.integers(k))
        counts[a] += 1
        explorer.py_class_updated(a)
        t = int(counts.sum()) + 1
        assert_array_equal(
            explorer.py_distribution(s, t, 0),
            rule.distribution(s, t, 0, counts=counts),
        )
    assert counts.min() > 0


def test_adaptive_epsilon_reads_the_learners_statistic_in_place():
    """SOBA's rate min(1, sqrt(k (1 + E) / t)) reads E from the array it was
    built on, at each call (the learner updates it in place)."""
    k, stat = 4, np.array([0.0, 3.0])
    rule = EpsilonGreedy("adaptive")
    explorer = rule._compile(k, statistic=(stat, 1))
    s = np.array([0.1, 0.4, 0.2, 0.3])
    for E, t in ((3.0, 100), (40.0, 100), (0.0, 2)):
        stat[1] = E
        want = min(1.0, math.sqrt(k * (1.0 + E) / t))
        assert explorer.py_rate(k, t) == want
        assert rule.rate(t, k, E) == want
        p = explorer.py_distribution(s, t, 1)
        assert_array_equal(p, rule.distribution(s, t, 1, statistic=E))
        assert_allclose(p, (1 - want) * np.eye(k)[1] + want / k, rtol=1e-15)


# ---------------------------------------------------------------------------
# the twins against the formulas, written independently
# ---------------------------------------------------------------------------
def test_epsilon_greedy_formula_and_schedule():
    s = np.array([0.3, 0.9, 0.1])
    assert_allclose(EpsilonGreedy(0.3).distribution(s, 1, 1), [0.1, 0.8, 0.1])
    rule = EpsilonGreedy(0.6, decay=0.5, min_epsilon=0.1)
    assert rule.rate(1) == 0.6  # t^-decay starts at round 2
    assert rule.rate(4) == pytest.approx(0.3)
    assert rule.rate(100) == 0.1  # the floor
    assert EpsilonGreedy(0.6).rate(10**9) == 0.6  # no decay: fixed


def test_softmax_formula():
    s = np.array([0.2, -1.0, 0.7, 0.0])
    e = np.exp(3.0 * s)
    for g in range(4):  # the greedy label plays no part
        assert_allclose(
            Softmax(0.2, scale=3.0).distribution(s, 1, g),
            0.8 * e / e.sum() + 0.05,
            rtol=1e-14,
        )


def test_inverse_gap_formula_clip_and_per_class_floor():
    """p_a = 1 / (k + gamma_a (c_g - c_a)), p_g the rest; gamma_a =
    min(f(t), f(k (n_a + 1))), f(tau) = scale tau^exponent."""
    s = np.array([1.4, 0.5, -2.0, 0.5])
    rule = InverseGap(2.0, exponent=0.5, clip=True)
    counts = np.array([10, 0, 3, 1000])
    t = 50
    f = lambda tau: 2.0 * tau**0.5  # noqa: E731
    gamma = [min(f(t), f(4 * (n + 1))) for n in counts]
    c = np.clip(s, 0, 1)
    want = np.array([1.0 / (4 + gamma[a] * (c[0] - c[a])) for a in range(4)])
    want[0] = 1.0 - want[1:].sum()
    assert_allclose(rule.distribution(s, t, 0, counts=counts), want, rtol=1e-14)
    # without the learner's counts: gamma_a = f(t); without the clip: raw gaps
    plain = InverseGap(2.0, exponent=0.5, clip=False).distribution(s, t, 0)
    want = np.array([1.0 / (4 + f(t) * (s[0] - s[a])) for a in range(4)])
    want[0] = 1.0 - want[1:].sum()
    assert_allclose(plain, want, rtol=1e-14)


def test_gap_map_twin_matches_the_gaptron_reference():
    """The rule's gap map against Gaptron's reference (written from the
    specification in tests/_reference_gaptron.py)."""
    import _reference_gaptron as ref

    rng = np.random.default_rng(3)
    for loss in ("logistic", "hinge", "smooth_hinge"):
        for _ in range(200):
            k = int(rng.integers(2, 9))
            s = rng.standard_normal(k) * rng.choice([0.01, 1.0, 30.0])
            g = int(np.argmax(s))
            rule = GapMap(0.1, loss=loss)
            assert rule.gap(s, g) == ref.gap_map(loss, s, g)
            assert_array_equal(
                rule.distribution(s, 1, g), ref.distribution(loss, s, g, 0.1)
            )


def test_conservative_formula():
    rule = Conservative()
    assert_array_equal(rule.distribution([-0.1, 0.0, -2.0], 1, 1), [0, 1, 0])
    assert_array_equal(rule.distribution([-0.1, -0.3], 1, 0), [0.5, 0.5])
    assert_array_equal(Conservative(0.5).distribution([0.4, 0.1], 1, 0), [0.5, 0.5])


# ---------------------------------------------------------------------------
# the compiled rules and their twins against hand-computed values: a mistake
# made in both (which the bit-for-bit comparison above cannot see) fails here
# ---------------------------------------------------------------------------
def _both(rule, s, t, g, **context):
    """The twin's and the compiled explorer's distribution (``context``: the
    learner's per-class counts or statistic, as each expects it)."""
    s = np.asarray(s, dtype=np.float64)
    twin_ctx = {
        key: (v[0][v[1]] if key == "statistic" else v) for key, v in context.items()
    }
    twin = rule.distribution(s, t, g, **twin_ctx)
    compiled = rule._compile(len(s), **context).py_distribution(s, t, g)
    return twin, compiled


def _check(rule, s, t, g, want, **context):
    for got in _both(rule, s, t, g, **context):
        assert_allclose(got, want, rtol=1e-13, atol=1e-15)


def test_greedy_plays_the_greedy_label():
    _check(Greedy(), [0.2, 0.9, 0.9], 7, 2, [0.0, 0.0, 1.0])


def test_epsilon_greedy_by_hand():
    """1 - e + e/k to the greedy label, e/k to the others."""
    _check(EpsilonGreedy(0.3), [0.3, 0.9, 0.1], 5, 1, [0.1, 0.8, 0.1])
    _check(EpsilonGreedy(0.2), [0.0] * 4, 5, 0, [0.85, 0.05, 0.05, 0.05])
    _check(EpsilonGreedy(1.0), [3.0, 1.0], 5, 0, [0.5, 0.5])
    _check(EpsilonGreedy(0.0), [3.0, 1.0, 2.0], 5, 2, [0.0, 0.0, 1.0])


def test_epsilon_greedy_decay_schedule_by_hand():
    """e_t = max(min_e, e t^-decay): 0.8, 0.8 / 2 at t = 4, 0.8 / 4 at t = 16,
    the floor 0.1 at t = 100 (0.08 below it); max(min_e, e) at t = 1."""
    rule = EpsilonGreedy(0.8, decay=0.5, min_epsilon=0.1)
    compiled = rule._compile(4)
    for t, e in [(1, 0.8), (4, 0.4), (16, 0.2), (100, 0.1)]:
        assert rule.rate(t) == pytest.approx(e, rel=1e-15)
        assert compiled.py_rate(t) == pytest.approx(e, rel=1e-15)
        _check(rule, [0.0, 1.0, 3.0, 2.0], t, 2, [e / 4, e / 4, 1 - e + e / 4, e / 4])
    low = EpsilonGreedy(0.05, decay=1.0, min_epsilon=0.2)
    assert low.rate(1) == low._compile(2).py_rate(1) == 0.2
    assert EpsilonGreedy(0.3, decay=0.0).rate(10**6) == 0.3


def test_adaptive_rate_by_hand():
    """SOBA: e_t = min(1, sqrt(k (1 + S) / t)) with S the learner's statistic:
    k = 4, S = 0.5, t = 600 gives sqrt(6 / 600) = 0.1; t = 3 gives 1; the
    statistic is read in place (S = 3 at t = 1600: sqrt(16 / 1600) = 0.1)."""
    rule = EpsilonGreedy("adaptive")
    stat = np.array([7.0, 0.5])
    compiled = rule._compile(4, statistic=(stat, 1))
    assert compiled.py_rate(4, 600) == pytest.approx(0.1, rel=1e-15)
    assert rule.rate(600, 4, 0.5) == pytest.approx(0.1, rel=1e-15)
    assert compiled.py_rate(4, 3) == rule.rate(3, 4, 0.5) == 1.0
    want = [0.925, 0.025, 0.025, 0.025]
    _check(rule, [1.0, 0.0, 0.0, 0.0], 600, 0, want, statistic=(stat, 1))
    stat[1] = 3.0
    assert compiled.py_rate(4, 1600) == pytest.approx(0.1, rel=1e-15)


def test_softmax_by_hand():
    """(1 - e) softmax(scale s) + e / k: with scale = ln 2 and s = (0, 1, 2),
    softmax = (1, 2, 4) / 7, whatever the greedy label."""
    want = 0.8 * np.array([1.0, 2.0, 4.0]) / 7 + 0.2 / 3
    for g in range(3):
        _check(Softmax(0.2, scale=math.log(2.0)), [0.0, 1.0, 2.0], 9, g, want)
    _check(Softmax(0.0, scale=0.0), [5.0, -1.0], 9, 0, [0.5, 0.5])


def test_inverse_gap_by_hand():
    """p_a = 1 / (k + gamma (s_g - s_a)), the greedy the rest (Foster and
    Rakhlin 2020), gamma_t = scale t^exponent: scale 2, exponent 1/2, t = 4
    gives gamma = 4; with gaps 0.5 and 1 at k = 3, p = (1 - 1/5 - 1/7, 1/5,
    1/7) = (23/35, 1/5, 1/7)."""
    rule = InverseGap(2.0, exponent=0.5, clip=False)
    assert rule.schedule(4) == pytest.approx(4.0, rel=1e-15)
    _check(rule, [1.0, 0.5, 0.0], 4, 0, [23 / 35, 1 / 5, 1 / 7])
    # the clip maps the scores to [0, 1] first: (2, 0.5, -1) -> (1, 0.5, 0)
    clip = InverseGap(2.0, exponent=0.5, clip=True)
    _check(clip, [2.0, 0.5, -1.0], 4, 0, [23 / 35, 1 / 5, 1 / 7])
    # a label tied with the greedy one gets 1/k: (1 - 1/3 - 1/7, 1/3, 1/7)
    _check(rule, [1.0, 1.0, 0.0], 4, 0, [11 / 21, 1 / 3, 1 / 7])
    # gamma infinite: the untied labels 0, a tied one still 1/k (no inf * 0)
    huge = InverseGap(1e300, exponent=2.0, clip=False)
    _check(huge, [1.0, 1.0, 0.0], 10, 1, [1 / 3, 2 / 3, 0.0])


def test_inverse_gap_per_class_clocks_by_hand():
    """gamma_a = min(gamma_t, scale (k (n_a + 1))^exponent): at t = 100, k = 3,
    scale 2, exponent 1/2, gamma_t = 20; class 1 with n = 5 updates has
    2 sqrt(18) = 6 sqrt(2), class 2 with none 2 sqrt(3), and after one update
    (``class_updated``) 2 sqrt(6)."""
    rule = InverseGap(2.0, exponent=0.5, clip=False)
    counts = np.array([40, 5, 0], dtype=np.int64)
    s = [1.0, 0.5, 0.0]
    p1 = 1 / (3 + 6 * math.sqrt(2) * 0.5)
    p2 = 1 / (3 + 2 * math.sqrt(3) * 1.0)
    _check(rule, s, 100, 0, [1 - p1 - p2, p1, p2], counts=counts)
    compiled = rule._compile(3, counts=counts)
    counts[2] += 1
    compiled.py_class_updated(2)
    p2 = 1 / (3 + 2 * math.sqrt(6))
    assert_allclose(
        compiled.py_distribution(np.array(s), 100, 0), [1 - p1 - p2, p1, p2],
        rtol=1e-13,
    )  # fmt: skip
    # a class past the clock of round t plays gamma_t: 2 sqrt(3 * 41) > 20
    _check(rule, [0.0, 1.0, 0.5], 100, 1, [1 / 23, 1 - 1 / 23 - 1 / 13, 1 / 13],
           counts=np.array([40, 5, 40], dtype=np.int64))  # fmt: skip


def test_gap_map_by_hand():
    """Gaptron: p = (1 - u) e_g + u / k, u = e + (1 - e) a(s) with m* = s_g -
    max_{r != g} s_r: hinge a = max(0, 1 - 2 k m*), smooth hinge
    a = max(0, 1 - m*)^2, logistic a = min(1, -log2 max softmax(s))."""
    # hinge, k = 4: m* = 0.05, a = 1 - 8 * 0.05 = 0.6, e = 0.5: u = 0.8
    s = [0.1, 0.0, 0.05, -1.0]
    _check(GapMap(0.5, loss="hinge"), s, 3, 0, [0.4, 0.2, 0.2, 0.2])
    # hinge, m* >= 1 / (2k): a = 0, u = e
    _check(GapMap(0.2, loss="hinge"), [1.0, 0.0], 3, 0, [0.9, 0.1])
    # smooth hinge, k = 3: m* = 0.5, a = 0.25, e = 0: u = 0.25
    u = 0.25
    want = [1 - u + u / 3, u / 3, u / 3]
    _check(GapMap(0.0, loss="smooth_hinge"), [0.5, 0.0, -0.5], 3, 0, want)
    _check(GapMap(0.0, loss="smooth_hinge"), [2.0, 0.5, 1.0], 3, 0, [1, 0, 0])
    # logistic, k = 2: softmax (3/4, 1/4), a = log2(4/3)
    u = math.log2(4 / 3)
    want = [1 - u / 2, u / 2]
    _check(GapMap(0.0, loss="logistic"), [math.log(3.0), 0.0], 3, 0, want)
    # logistic at a tie: max softmax 1/2, a = 1: uniform
    _check(GapMap(0.0, loss="logistic"), [0.3, 0.3], 3, 1, [0.5, 0.5])


def test_conservative_by_hand():
    """The greedy label when its score is >= threshold, else uniform."""
    _check(Conservative(), [-0.1, 0.0, -2.0], 1, 1, [0.0, 1.0, 0.0])
    _check(Conservative(), [-0.1, -0.3], 1, 0, [0.5, 0.5])
    _check(Conservative(threshold=0.4), [0.4, 0.1], 1, 0, [1.0, 0.0])
    _check(Conservative(threshold=0.5), [0.4, 0.1], 1, 0, [0.5, 0.5])


# ---------------------------------------------------------------------------
# parameter objects
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("cls", list(RULES.values()), ids=list(RULES))
def test_rules_are_scikit_learn_parameter_objects(cls):
    rule = cls()
    params = rule.get_params()
    copy = clone(rule)
    assert copy is not rule and copy.get_params() == params
    assert repr(rule).startswith(cls.__name__ + "(")
    assert pickle.loads(pickle.dumps(rule)).get_params() == params
    assert RULES[cls.name] is cls


@pytest.mark.parametrize(
    "rule, name",
    [
        (EpsilonGreedy(1.5), "'epsilon' parameter of EpsilonGreedy"),
        (EpsilonGreedy("auto"), "'epsilon' parameter of EpsilonGreedy"),
        (EpsilonGreedy(0.1, decay=-1.0), "'decay' parameter of EpsilonGreedy"),
        (EpsilonGreedy(0.1, min_epsilon=2.0), "'min_epsilon' parameter of Eps"),
        (EpsilonGreedy("adaptive", decay=1.0), "takes no decay"),
        (Softmax(-0.1), "'epsilon' parameter of Softmax"),
        (Softmax(0.1, scale=-2.0), "'scale' parameter of Softmax"),
        (InverseGap(0.0), "'scale' parameter of InverseGap"),
        (InverseGap(exponent=-1.0), "'exponent' parameter of InverseGap"),
        (InverseGap(clip="no"), "'clip' parameter of InverseGap"),
        (GapMap(loss="squared"), "'loss' parameter of GapMap"),
        (GapMap(2.0), "'epsilon' parameter of GapMap"),
        (Conservative(threshold="high"), "'threshold' parameter of Conservative"),
    ],
)
def test_bad_rule_parameters_name_the_rule_and_the_parameter(rule, name):
    with pytest.raises(InvalidParameterError, match=name):
        rule._validate_params()
    # through a learner: refused before any state exists
    X, y = make_stream(n=10, d=3, k=3, seed=0)
    est = Banditron(exploration=rule, random_state=0)
    with pytest.raises(ValueError, match="'exploration' parameter of Banditron"):
        est.partial_fit(X, y, classes=range(3))
    assert not hasattr(est, "classes_") and not hasattr(est, "exploration_")


def test_unresolved_twin_says_which_parameters_are_missing():
    with pytest.raises(ValueError, match=r"\['epsilon'\] are None"):
        EpsilonGreedy().distribution([0.0, 1.0], 1, 1)


def test_twin_checks_its_arguments():
    rule = EpsilonGreedy(0.1)
    with pytest.raises(ValueError, match="greedy=2 out of range"):
        rule.distribution([0.0, 1.0], 1, 2)
    with pytest.raises(ValueError, match="t=0"):
        rule.distribution([0.0, 1.0], 0, 1)
    with pytest.raises(ValueError, match="greedy=5 out of range"):
        rule._compile(2).py_distribution(np.zeros(2), 1, 5)


# ---------------------------------------------------------------------------
# the learners' exploration parameter
# ---------------------------------------------------------------------------
DEFAULTS = {
    Banditron: EpsilonGreedy(0.125),
    SOBA: EpsilonGreedy(0.125),
    PNewtron: Softmax(0.0625, scale=10.0),
    Gaptron: GapMap(0.125, loss="logistic"),
    SquareCB: InverseGap(300.0, exponent=0.75, clip=True),
    ConservativeOneVsAll: Greedy(),
    SeparableOneVsAll: Conservative(0.0),
    OffsetTree: EpsilonGreedy(2.0**-12),
    MulticlassPerceptron: Greedy(),
}


@pytest.mark.parametrize("cls", LEARNERS, ids=lambda c: c.__name__)
def test_default_rule_is_declared_and_played(cls):
    """exploration=None is the learner's declared default (its docstring's
    rule and values), resolved in exploration_; the string of that rule and
    the rule's object with None parameters give the same rule."""
    X, y = make_stream(n=40, d=4, k=3, seed=1)
    est = cls(random_state=0).partial_fit(X, y, classes=range(3))
    assert type(est.exploration_) is type(DEFAULTS[cls])
    assert est.exploration_.get_params() == DEFAULTS[cls].get_params()
    assert est.exploration is None  # the parameter is never modified
    for spec in (cls._default_exploration, RULES[cls._default_exploration]()):
        other = cls(exploration=spec, random_state=0).partial_fit(
            X, y, classes=range(3)
        )
        assert other.exploration_.get_params() == DEFAULTS[cls].get_params()
        assert other.n_mistakes_ == est.n_mistakes_
    assert cls._default_exploration in cls._exploration_values


def test_learner_values_fill_only_the_none_parameters():
    X, y = make_stream(n=30, d=4, k=3, seed=2)
    est = PNewtron(scale=3.0, exploration=Softmax(0.2), random_state=0)
    est.partial_fit(X, y, classes=range(3))
    assert est.exploration_.get_params() == {"epsilon": 0.2, "scale": 3.0}
    est = SquareCB(exploration=InverseGap(exponent=0.5), random_state=0)
    est.partial_fit(X, y, classes=range(3))
    assert est.exploration_.get_params() == {
        "scale": 300.0,
        "exponent": 0.5,
        "clip": True,
    }
    est = Banditron(exploration="inverse_gap", random_state=0)
    est.partial_fit(X, y, classes=range(3))  # the rule's own fallbacks
    assert est.exploration_.get_params() == {
        "scale": 10.0,
        "exponent": 0.5,
        "clip": False,
    }


@pytest.mark.parametrize(
    "est, match",
    [
        (OffsetTree(exploration="softmax"), "do not read the scores"),
        (OffsetTree(exploration=InverseGap()), "do not read the scores"),
        (MulticlassPerceptron(exploration="epsilon_greedy"), "full-information"),
        (Gaptron(exploration="greedy"), "positive probability"),
        (Banditron(exploration=EpsilonGreedy("adaptive")), "SOBA's statistic"),
        (Banditron(exploration="boltzmann"), "'exploration' parameter"),
        (Banditron(exploration=0.1), "'exploration' parameter"),
    ],
)
def test_refused_rules_say_why(est, match):
    X, y = make_stream(n=10, d=3, k=3, seed=0)
    with pytest.raises(ValueError, match=match):
        est.partial_fit(X, y, classes=range(3))


def test_nested_parameter_on_a_default_learner_makes_the_rule_object():
    est = Banditron()
    assert est.set_params(exploration__epsilon=0.3) is est
    assert isinstance(est.exploration, EpsilonGreedy)
    assert est.exploration.epsilon == 0.3
    est = SquareCB(exploration="inverse_gap").set_params(exploration__scale=5.0)
    assert est.exploration.get_params() == {
        "scale": 5.0,
        "exponent": None,
        "clip": None,
    }
    with pytest.raises(ValueError, match="Invalid parameter 'epsilon'"):
        SquareCB().set_params(exploration__epsilon=0.1)  # IGW has no epsilon
    assert "exploration__epsilon" in Banditron(
        exploration=EpsilonGreedy(0.1)
    ).get_params(deep=True)


def test_clone_deep_copies_the_rule():
    rule = EpsilonGreedy(0.2)
    est = Banditron(exploration=rule)
    copy = clone(est)
    assert copy.exploration is not rule
    assert copy.exploration.get_params() == rule.get_params()
    copy.set_params(exploration__epsilon=0.9)
    assert rule.epsilon == 0.2


def test_grid_search_over_rules_and_their_parameters():
    """GridSearchCV over whole rules (objects and names) and over a rule's
    parameter; each setting scored as fitting it by hand."""
    X, y = make_stream(n=300, d=6, k=3, seed=4)
    cv = KFold(3)
    grid = GridSearchCV(
        Banditron(random_state=0, max_iter=2),
        [
            {"exploration": [EpsilonGreedy(0.05), "softmax", GapMap(0.1)]},
            {"exploration__epsilon": [0.2, 0.5]},
        ],
        cv=cv,
    ).fit(X, y)
    scores = grid.cv_results_["mean_test_score"]
    assert len(set(scores)) == len(scores), scores
    for params, score in zip(grid.cv_results_["params"], scores, strict=True):
        by_hand = []
        for train, test in cv.split(X):
            params = {k: clone(v, safe=False) for k, v in params.items()}
            est = Banditron(random_state=0, max_iter=2).set_params(**params)
            by_hand.append(est.fit(X[train], y[train]).score(X[test], y[test]))
        assert score == pytest.approx(np.mean(by_hand), rel=1e-12), params


def test_rule_changed_in_place_is_played_from_the_next_call():
    """set_params(exploration__epsilon=...) changes the rule object in place:
    the next call plays the new rate (the cached kernel is rebuilt), and a
    mid-stream change of the rule is validated."""
    X, y = make_stream(n=200, d=5, k=3, seed=5)
    est = Banditron(exploration=EpsilonGreedy(0.1), random_state=0)
    est.partial_fit(X[:100], y[:100], classes=range(3))
    est.set_params(exploration__epsilon=1.0)
    fb = BanditFeedback(y[100:])
    est.partial_fit(X[100:], fb)  # the cached kernel of epsilon 0.1 is stale
    assert_allclose(fb.propensities_, 1 / 3, rtol=1e-15)  # uniform play
    assert est.exploration_.epsilon == 1.0
    assert_allclose(est.exploration_distribution(X[:10]), 1 / 3, rtol=1e-15)
    est.set_params(exploration__epsilon=7.0)
    with pytest.raises(ValueError, match="epsilon"):
        est.partial_fit(X[:5], y[:5])


def test_predicting_leaves_the_fitted_rule_unchanged():
    """exploration_ is set when a kernel is built for play; predict and
    exploration_distribution (which build their own) keep the same object."""
    X, y = make_stream(n=50, d=4, k=3, seed=6)
    for cls in (OffsetTree, Banditron, SquareCB):
        est = cls(random_state=0).partial_fit(X, y, classes=range(3))
        rule = est.exploration_
        est.predict(X)
        est.exploration_distribution(X)
        assert est.exploration_ is rule


def test_public_module():
    assert skbandit.exploration.EpsilonGreedy is EpsilonGreedy
    assert set(skbandit.exploration.__all__) == {c.__name__ for c in RULES.values()}
    assert _explore.GapLoss.GAP_HINGE == 1
