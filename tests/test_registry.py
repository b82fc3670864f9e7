"""The shared registry is complete.

``_registry.py`` collects the entries and logged-feedback adapters that the
reference modules it lists (``REFERENCE_MODULES``) declare
(docs/adding_a_learner.md). These tests fail when a public estimator has no
entry (it would escape the shared suite), a bandit learner has no adapter (it
would escape the logged-feedback comparison with its NumPy reference), or a
``tests/_reference*.py`` that declares entries is not registered.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from _registry import (
    ENTRIES,
    LOGGED_ADAPTERS,
    REFERENCE_MODULES,
    collect,
    public_estimator_classes,
)

TESTS = Path(__file__).resolve().parent


def missing_entries(entries) -> list[str]:
    covered = {e.cls for e in entries}
    return sorted(c.__name__ for c in public_estimator_classes() if c not in covered)


def test_every_public_estimator_has_a_registry_entry():
    missing = missing_entries(ENTRIES)
    assert not missing, (
        f"no registry entry for {missing}: declare one in the learner's NumPy "
        "reference module (a module-level ENTRIES list in tests/_reference_*.py)"
    )


def test_the_check_sees_a_missing_entry():
    (banditron,) = [c for c in public_estimator_classes() if c.__name__ == "Banditron"]
    assert missing_entries([e for e in ENTRIES if e.cls is not banditron]) == [
        "Banditron"
    ]


def test_every_bandit_learner_has_a_logged_feedback_adapter():
    missing = sorted({e.name for e in ENTRIES if e.bandit} - set(LOGGED_ADAPTERS))
    assert not missing, (
        f"no logged-feedback adapter for {missing}: declare one in the learner's "
        "reference module (LOGGED_ADAPTERS)"
    )


def unregistered(modules) -> list[str]:
    """The ``tests/_reference*.py`` that declare ``ENTRIES`` or
    ``LOGGED_ADAPTERS`` but are not among ``modules``."""
    listed = {m.__name__ for m in modules}
    declaring = [
        path.stem
        for path in sorted(TESTS.glob("_reference*.py"))
        if hasattr(importlib.import_module(path.stem), "ENTRIES")
        or hasattr(importlib.import_module(path.stem), "LOGGED_ADAPTERS")
    ]
    return [name for name in declaring if name not in listed]


def test_every_reference_module_with_entries_is_registered():
    missing = unregistered(REFERENCE_MODULES)
    assert not missing, (
        f"{missing} declare ENTRIES or LOGGED_ADAPTERS but are not registered: "
        "add each to REFERENCE_MODULES in tests/_registry.py"
    )


def test_the_check_sees_an_unregistered_reference_module():
    kept = tuple(m for m in REFERENCE_MODULES if m.__name__ != "_reference_soba")
    assert unregistered(kept) == ["_reference_soba"]


def test_entries_and_adapters_come_from_the_registered_modules():
    """Every entry and adapter is declared in one registered reference module
    (no second list elsewhere), and each adapter names a registered learner."""
    declared = [e for m in REFERENCE_MODULES for e in getattr(m, "ENTRIES", [])]
    assert [id(e) for e in declared] == [id(e) for e in ENTRIES]
    assert set(LOGGED_ADAPTERS) <= {e.name for e in ENTRIES}
    entries, adapters = collect(REFERENCE_MODULES)
    assert entries == ENTRIES and adapters == LOGGED_ADAPTERS
