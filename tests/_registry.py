"""Registry of every skbandit estimator covered by the protocol tests.

Protocol, validation and scikit-learn compatibility tests are written once and
parametrised over ``ENTRIES``. A new learner is covered by adding one ``Entry``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np
import pytest

from skbandit import (
    SOBA,
    Banditron,
    ConservativeOneVsAll,
    Gaptron,
    MulticlassPerceptron,
    OffsetTree,
    OnlineSelector,
    PNewtron,
    SeparableOneVsAll,
    SquareCB,
)


@dataclass(frozen=True)
class Entry:
    cls: type
    # parameters used by the protocol tests (a fixed seed is always passed separately)
    params: dict[str, Any] = field(default_factory=dict)
    # parameter settings that must be rejected (ValueError naming the parameter)
    invalid_params: tuple[tuple[dict[str, Any], str], ...] = ()
    # boundary settings that must be accepted
    valid_edge_params: tuple[dict[str, Any], ...] = ()
    # the learner plays (1 - gamma) e_greedy + gamma / k with gamma = est.gamma
    epsilon_greedy: bool = False
    # the parameter that holds that gamma
    gamma_param: str = "gamma"
    # a learner registered more than once: its variant (test ids, sklearn checks)
    variant: str = ""
    # parameters of an instance given to scikit-learn's checks IN ADDITION to
    # the default-constructed one (every public estimator is checked at its
    # defaults, see estimators_for_sklearn_checks); empty: defaults only
    check_params: dict[str, Any] = field(default_factory=dict)
    # a full-information learner whose policy is randomised (it does not always
    # play its greedy label)
    randomised_full_information: bool = False
    # the scores include a fitted intercept (``intercept_``): an all-zero row
    # does not make every class tie
    intercept: bool = False

    @property
    def name(self) -> str:
        return self.cls.__name__

    @property
    def id(self) -> str:
        return f"{self.name}-{self.variant}" if self.variant else self.name

    def make(self, **kwargs: Any):
        return self.cls(**{**self.params, **kwargs})

    @property
    def bandit(self) -> bool:
        """True if the learner learns only from the bit 1[action == label].

        Read from its kernel's ``full_information`` flag, the one switch that
        decides what the pass driver hands to the kernel."""
        return _is_bandit(self.cls, tuple(sorted(self.params.items())))


@cache
def _is_bandit(cls: type, params: tuple) -> bool:
    est = cls(**dict(params), random_state=0)
    est.partial_fit(np.ones((1, 1)), [0], classes=[0, 1])
    return not est._make_kernel().full_information


ENTRIES: list[Entry] = [
    Entry(
        Banditron,
        params={"gamma": 0.2},
        invalid_params=(
            ({"gamma": 0}, "gamma"),
            ({"gamma": 0.0}, "gamma"),
            ({"gamma": -1}, "gamma"),
            ({"gamma": 1.5}, "gamma"),
        ),
        valid_edge_params=({"gamma": 1}, {"gamma": 1.0}, {"gamma": 1e-6}),
        epsilon_greedy=True,
        # the last iterate too (predict with coef_), at a small gamma
        check_params={"average": False, "gamma": 0.05},
    ),
    Entry(MulticlassPerceptron, params={}),
    Entry(
        SOBA,
        params={"gamma": 0.2},
        invalid_params=(
            ({"gamma": 0}, "gamma"),
            ({"gamma": 1.5}, "gamma"),
            ({"gamma": "auto"}, "gamma"),
            ({"a": 0.0}, "'a' parameter"),
            ({"a": -1}, "'a' parameter"),
            ({"covariance": "lowrank"}, "covariance"),
            ({"max_memory": 0}, "max_memory"),
        ),
        valid_edge_params=({"gamma": 1.0}, {"gamma": 1e-6}, {"gamma": "adaptive"}),
        epsilon_greedy=True,
        variant="diag",
    ),
    Entry(
        SOBA,
        params={"gamma": 0.2, "covariance": "full"},
        valid_edge_params=({"gamma": "adaptive"}, {"a": 1e-3}),
        epsilon_greedy=True,
        variant="full",
        check_params={"covariance": "full"},
    ),
    Entry(
        PNewtron,
        params={"gamma": 0.1},
        invalid_params=(
            ({"gamma": -0.1}, "gamma"),
            ({"gamma": 1.5}, "gamma"),
            ({"alpha": -1.0}, "alpha"),
            ({"beta": -1.0}, "beta"),
            ({"D": 0.0}, "'D' parameter"),
        ),
        valid_edge_params=({"gamma": 0.0}, {"gamma": 1.0}, {"alpha": 0.0}),
    ),
]

# Gaptron: each loss x feedback combination (the parameters chosen so that the
# learner learns the digits in the ecosystem tests; each step-size mode is covered)
_GAPTRON = {
    ("logistic", "bandit"): {"gamma": 0.2},
    ("hinge", "bandit"): {"gamma": 0.2, "x_norm_bound": 5.0},
    ("smooth_hinge", "bandit"): {"gamma": 0.2, "learning_rate": "adagrad"},
    ("logistic", "full"): {},
    ("hinge", "full"): {"learning_rate": 0.05},
    ("smooth_hinge", "full"): {"learning_rate": "adagrad"},
}
ENTRIES += [
    Entry(
        Gaptron,
        params={"loss": loss, "feedback": feedback, **extra},
        invalid_params=(
            ({"loss": "squared"}, "loss"),
            ({"feedback": "partial"}, "feedback"),
            ({"gamma": -0.1}, "gamma"),
            ({"gamma": 1.5}, "gamma"),
            ({"gamma": "adaptive"}, "gamma"),
            ({"learning_rate": 0.0}, "learning_rate"),
            ({"learning_rate": -1.0}, "learning_rate"),
            ({"learning_rate": "fast"}, "learning_rate"),
            ({"x_norm_bound": 0.0}, "x_norm_bound"),
            ({"n_rounds": 0}, "n_rounds"),
        )
        + ((({"gamma": 0.0}, "'gamma' parameter"),) if feedback == "bandit" else ()),
        valid_edge_params=(
            {"gamma": 1.0},
            {"gamma": 1e-6},
            {"gamma": "auto", "n_rounds": 1, "x_norm_bound": 100.0},
            {"learning_rate": "adagrad"},
            {"learning_rate": 1e-8},
            {"x_norm_bound": 1e-3},
        )
        + (({"gamma": 0.0},) if feedback == "full" else ()),
        variant=f"{loss}-{feedback}",
        check_params={"loss": loss, "feedback": feedback},
        randomised_full_information=feedback == "full",
    )
    for (loss, feedback), extra in _GAPTRON.items()
]

# One-vs-all learners (Chen et al. 2009; Beygelzimer et al. 2019)
ENTRIES += [
    Entry(
        ConservativeOneVsAll,
        params={"update": "pa1"},
        invalid_params=(
            ({"update": "pa3"}, "update"),
            ({"C": 0}, "'C' parameter"),
            ({"C": -1.0}, "'C' parameter"),
        ),
        valid_edge_params=({"update": "pa"}, {"update": "pa2", "C": 1e-6}),
    ),
    Entry(
        SeparableOneVsAll,
        params={},
        invalid_params=(
            ({"kernel": "rbf"}, "kernel"),
            ({"update": "both"}, "update"),
            ({"budget": 0}, "budget"),
        ),
        valid_edge_params=({"update": "full"}, {"budget": 1}),
    ),
    # the rational-kernel learner (no coef_: its state is the support set); the
    # shared streams have rows outside the unit ball, which it projects
    Entry(
        SeparableOneVsAll,
        params={"kernel": "rational", "large_norm": "project"},
        invalid_params=(
            ({"large_norm": "clip"}, "large_norm"),
            ({"budget": 0}, "budget"),
        ),
        valid_edge_params=({"update": "full"}, {"budget": 1}),
        variant="rational",
        check_params={"kernel": "rational", "large_norm": "project"},
    ),
]

# The Realizable Offset Tree baseline (Chen et al. 2009), epsilon-greedy. C = 0.1:
# the PA-I cap C * omega then binds on exploration rounds (the importance weight
# matters), and the learner learns the digits (at C = 1 it stays near 0.35-0.45)
ENTRIES += [
    Entry(
        OffsetTree,
        params={"update": "pa1", "C": 0.1, "exploration": 0.2},
        invalid_params=(
            ({"update": "pa3"}, "update"),
            ({"C": 0}, "'C' parameter"),
            ({"exploration": -0.1}, "exploration"),
            ({"exploration": 1.5}, "exploration"),
        ),
        valid_edge_params=(
            {"exploration": 0.0},
            {"exploration": 1.0},
            {"update": "pa"},
            {"update": "pa2", "C": 1e-6},
        ),
        epsilon_greedy=True,
        gamma_param="exploration",
    ),
]

# SquareCB: inverse gap weighting with a round-dependent gamma_t; each oracle
ENTRIES += [
    Entry(
        SquareCB,
        params={"regressor": regressor, **extra},
        invalid_params=(
            ({"gamma_scale": 0.0}, "gamma_scale"),
            ({"gamma_scale": -1.0}, "gamma_scale"),
            ({"gamma_exponent": -0.5}, "gamma_exponent"),
            ({"learning_rate": 0.0}, "learning_rate"),
            ({"regressor": "ftrl"}, "regressor"),
            ({"fit_intercept": "yes"}, "fit_intercept"),
            ({"importance_weighted": 1.5}, "importance_weighted"),
            ({"step_cap": 0.0}, "step_cap"),
            ({"step_cap": 2.0}, "step_cap"),
            ({"initial_reward": 1.5}, "initial_reward"),
            ({"shared_scale": "yes"}, "shared_scale"),
        ),
        valid_edge_params=(
            {"gamma_exponent": 0.0},
            {"gamma_scale": 1e-8},
            {"fit_intercept": False},
            {"importance_weighted": True},
            {"step_cap": 1e-3},
            {"initial_reward": 0.0},
            {"shared_scale": False},
        ),
        variant=variant,
        intercept=extra.get("fit_intercept", True),
        # scikit-learn's checks use features near 100: the "sgd" oracle needs a
        # small constant step, which learns slowly, so this variant keeps the
        # anytime sqrt(t) schedule (more exploration than the default 300 t^0.75)
        check_params={"regressor": regressor, **extra}
        | (
            {"learning_rate": 1e-5, "gamma_exponent": 0.5} if regressor == "sgd" else {}
        ),
    )
    for variant, regressor, extra in (
        ("", "normalized", {}),
        ("no-intercept", "normalized", {"fit_intercept": False}),
        ("adagrad", "adagrad", {"learning_rate": 0.1}),
        ("sgd", "sgd", {"learning_rate": 0.01}),
    )
]

# Online selection among learners: the default candidates, and two Banditrons
# with a fixed mixing weight 1 and no elimination (every round plays the
# candidates' average)
ENTRIES += [
    Entry(
        OnlineSelector,
        params={},
        # the leader SquareCB() fits an intercept
        intercept=True,
        invalid_params=(
            ({"exploration": 0.0}, "exploration"),
            ({"exploration": 1.5}, "exploration"),
            ({"window": 0}, "window"),
            ({"confidence": 1.0}, "confidence"),
            ({"confidence": 0.5}, "confidence"),
            ({"eliminated_share": 0.0}, "eliminated_share"),
            ({"eliminated_share": 1.5}, "eliminated_share"),
            ({"exploration_decay": -0.1}, "exploration_decay"),
            ({"exploration_decay": 1.5}, "exploration_decay"),
            ({"min_exploration": -0.1}, "min_exploration"),
            ({"candidates": []}, "candidates"),
            ({"candidates": [Banditron(gamma=0.0)]}, "gamma"),
        ),
        valid_edge_params=(
            {"exploration": 1.0},
            {"window": None},
            {"window": 1},
            {"confidence": 0.999},
            {"eliminated_share": 1.0},
            {"eliminated_share": 1e-6},
            {"exploration_decay": 0.0},
            {"exploration_decay": 1.0},
            {"min_exploration": 0.0},
            {"exploration": 0.3, "min_exploration": 0.3},
            {"exploration": 0.01},
        ),
    ),
    Entry(
        OnlineSelector,
        params={
            "candidates": (Banditron(gamma=0.2), Banditron(gamma=0.6)),
            "exploration": 1.0,
            "exploration_decay": 0.0,
            "eliminated_share": 1.0,
        },
        invalid_params=(({"exploration": 0.0}, "exploration"),),
        variant="banditrons",
        check_params={"candidates": (Banditron(gamma=0.05), SquareCB())},
    ),
]

BANDIT_ENTRIES = [e for e in ENTRIES if e.bandit]


def entry_params(entries: list[Entry] | None = None) -> list[Any]:
    """``pytest.param`` objects (id = class name) for ``parametrize``."""
    chosen = ENTRIES if entries is None else entries
    return [pytest.param(e, id=e.id) for e in chosen]


def public_estimator_classes() -> list[type]:
    """Every estimator class exported in ``skbandit.__all__``."""
    from sklearn.base import BaseEstimator

    import skbandit

    return [
        obj
        for obj in (getattr(skbandit, name) for name in skbandit.__all__)
        if isinstance(obj, type) and issubclass(obj, BaseEstimator)
    ]


def estimators_for_sklearn_checks() -> list[Any]:
    """Instances for scikit-learn's checks: every public estimator exactly at
    its default parameters (``cls()``, as ``check_estimator(cls())`` is called;
    the checks seed it themselves where they need to), then the registry's
    additional settings (``check_params``, with a fixed seed)."""
    defaults = [cls() for cls in public_estimator_classes()]
    extra = [e.cls(random_state=0, **e.check_params) for e in ENTRIES if e.check_params]
    return defaults + extra
