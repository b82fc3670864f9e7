"""The ``Entry`` of the shared test registry (``_registry.py``).

Each learner's NumPy reference module (``tests/_reference*.py``) declares its
learner's entries in a module-level ``ENTRIES`` list; ``_registry.py``
discovers them. The class lives in its own module so that the reference modules
can import it without importing the registry (which imports them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np

__all__ = ["Entry"]


@dataclass(frozen=True)
class Entry:
    cls: type
    # parameters used by the protocol tests (a fixed seed is always passed separately)
    params: dict[str, Any] = field(default_factory=dict)
    # parameter settings that must be rejected (ValueError naming the parameter)
    invalid_params: tuple[tuple[dict[str, Any], str], ...] = ()
    # boundary settings that must be accepted
    valid_edge_params: tuple[dict[str, Any], ...] = ()
    # the learner plays (1 - gamma) e_greedy + gamma / k with gamma the
    # epsilon of its resolved rule (est.exploration_.epsilon)
    epsilon_greedy: bool = False
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
    # a meta-estimator whose rounds run in Python around arbitrary models (no
    # compiled kernel, journal or one-row calls): the tests of the compiled
    # machinery (``KERNEL_ENTRIES`` in ``_registry.py``) do not apply to it
    python_loop: bool = False

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
    if not hasattr(est, "_make_kernel"):  # a Python-loop learner (python_loop)
        return True
    return not est._make_kernel().full_information
