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

from skbandit import Banditron, MulticlassPerceptron


@dataclass(frozen=True)
class Entry:
    cls: type
    # parameters used by the protocol tests (a fixed seed is always passed separately)
    params: dict[str, Any] = field(default_factory=dict)
    # parameter settings that must be rejected (ValueError naming the parameter)
    invalid_params: tuple[tuple[dict[str, Any], str], ...] = ()
    # boundary settings that must be accepted
    valid_edge_params: tuple[dict[str, Any], ...] = ()

    @property
    def name(self) -> str:
        return self.cls.__name__

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
    ),
    Entry(MulticlassPerceptron, params={}),
]

BANDIT_ENTRIES = [e for e in ENTRIES if e.bandit]


def entry_params(entries: list[Entry] | None = None) -> list[Any]:
    """``pytest.param`` objects (id = class name) for ``parametrize``."""
    chosen = ENTRIES if entries is None else entries
    return [pytest.param(e, id=e.name) for e in chosen]


def estimators_for_sklearn_checks() -> list[Any]:
    """Default-constructed instances (with a fixed seed) for scikit-learn's checks."""
    return [e.cls(random_state=0) for e in ENTRIES]
