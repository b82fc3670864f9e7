"""Registry of every skbandit estimator covered by the protocol tests.

Protocol, validation and scikit-learn compatibility tests are written once and
parametrised over ``ENTRIES``. Each learner's NumPy reference module
(``tests/_reference*.py``) declares its entries in a module-level ``ENTRIES``
list (``_entry.Entry``) and, for a bandit learner, its logged-feedback adapter
in ``LOGGED_ADAPTERS`` (``{class name: make(params, k)}``, see
``_reference_logged.delayed_schedule``); the module is registered here by one
line of ``REFERENCE_MODULES`` (docs/adding_a_learner.md).
``tests/test_registry.py`` fails when a public estimator has no entry, a bandit
learner no adapter, or a reference module declaring entries is not registered.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import _reference
import _reference_bandit_pa
import _reference_gaptron
import _reference_offset_tree
import _reference_ova
import _reference_pipeline
import _reference_regression
import _reference_selector
import _reference_soba
import _reference_squarecb
import pytest
from _entry import Entry

__all__ = [
    "BANDIT_ENTRIES",
    "ENTRIES",
    "KERNEL_ENTRIES",
    "LOGGED_ADAPTERS",
    "REFERENCE_MODULES",
    "Entry",
    "FULL_PRODUCT",
    "collect",
    "entry_params",
    "paired",
    "estimators_for_sklearn_checks",
    "public_estimator_classes",
    "spread",
]

# The reference modules that declare ``ENTRIES`` (and ``LOGGED_ADAPTERS``), one
# line per learner; the entries keep this order (the file names' order).
REFERENCE_MODULES: tuple[ModuleType, ...] = (
    _reference,
    _reference_bandit_pa,
    _reference_gaptron,
    _reference_offset_tree,
    _reference_ova,
    _reference_pipeline,
    _reference_regression,
    _reference_selector,
    _reference_soba,
    _reference_squarecb,
)


def collect(
    modules: tuple[ModuleType, ...],
) -> tuple[list[Entry], dict[str, Callable[..., Any]]]:
    """The ``ENTRIES`` and ``LOGGED_ADAPTERS`` that ``modules`` declare,
    checked: only ``Entry`` items, at most one adapter per learner."""
    entries: list[Entry] = []
    adapters: dict[str, Callable[..., Any]] = {}
    for module in modules:
        declared = getattr(module, "ENTRIES", [])
        bad = [e for e in declared if not isinstance(e, Entry)]
        if bad:
            raise TypeError(f"{module.__name__}.ENTRIES holds non-Entry items: {bad!r}")
        entries += declared
        for name, make in getattr(module, "LOGGED_ADAPTERS", {}).items():
            if name in adapters:
                raise ValueError(
                    f"two logged-feedback adapters for {name!r} "
                    f"(the second in {module.__name__})"
                )
            adapters[name] = make
    return entries, adapters


ENTRIES, LOGGED_ADAPTERS = collect(REFERENCE_MODULES)

BANDIT_ENTRIES = [e for e in ENTRIES if e.bandit]

# The learners whose rounds run in the compiled drivers (``skbandit._core``):
# the tests of that machinery (undo journal, one-row calls, lean rows, kernel
# cache, live sessions) run over these; a Python-loop meta-estimator
# (``Entry.python_loop``) has none of it and is left out of them.
KERNEL_ENTRIES = [e for e in ENTRIES if not e.python_loop]


# The entry that meets every value of a parametrisation whose values exercise
# code all learners share (input containers, label types, bad inputs): the
# other entries meet a few of them, in turn (``spread``).
FULL_PRODUCT = "Banditron"


def spread(
    values: list[Any],
    *,
    always: tuple[Any, ...] = (),
    per_entry: int = 1,
    entries: list[Entry] | None = None,
    ids: Callable[[Any], str] = str,
) -> list[Any]:
    """``pytest.param(entry, value)`` objects for ``parametrize("entry, x")``.

    The entry ``FULL_PRODUCT`` meets every value; every other entry meets the
    values of ``always`` and ``per_entry`` of the others, taken in turn along
    the entries, so that each value still meets several learners (when there
    are at least as many entries as values) while the product is not run."""
    chosen = ENTRIES if entries is None else entries
    rest = [v for v in values if v not in always]
    params = []
    for i, e in enumerate(chosen):
        if e.id == FULL_PRODUCT or not rest:
            picked = list(values)
        else:
            turn = {(i * per_entry + j) % len(rest) for j in range(per_entry)}
            picked = [v for v in values if v in always]
            picked += [rest[j] for j in sorted(turn)]
        params += [pytest.param(e, v, id=f"{e.id}-{ids(v)}") for v in picked]
    return params


def paired(
    first: list[Any], second: list[Any], entries: list[Entry] | None = None
) -> list[Any]:
    """``pytest.param(entry, a, b)`` objects for ``parametrize("entry, a, b")``.

    ``FULL_PRODUCT`` meets every pair of ``first`` x ``second``; every other
    entry meets each value of ``first`` once, paired with the values of
    ``second`` shifted by the entry's position (a Latin square): each entry
    still meets every value of both lists when they have the same length."""
    chosen = ENTRIES if entries is None else entries
    params = []
    for i, e in enumerate(chosen):
        if e.id == FULL_PRODUCT:
            pairs = [(a, b) for a in first for b in second]
        else:
            pairs = [(a, second[(j + i) % len(second)]) for j, a in enumerate(first)]
        params += [pytest.param(e, a, b, id=f"{e.id}-{a}-{b}") for a, b in pairs]
    return params


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
    additional settings (``check_params``, with a fixed seed) that differ
    from the defaults."""
    defaults = [cls() for cls in public_estimator_classes()]
    extra = []
    for e in ENTRIES:
        if not e.check_params:
            continue
        est = e.cls(random_state=0, **e.check_params)
        # the defaults again (a registry setting that names default values)
        # would repeat the default instance's checks
        if est.get_params() != e.cls(random_state=0).get_params():
            extra.append(est)
    return defaults + extra
