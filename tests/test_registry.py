"""The shared registry is complete: it follows from the learners' reference modules.

``_registry.py`` discovers the entries and logged-feedback adapters that each
``tests/_reference*.py`` declares (docs/adding_a_learner.md). These tests fail
when a public estimator has no entry (it would escape the shared suite) or a
bandit learner has no adapter (it would escape the logged-feedback comparison
with its NumPy reference).
"""

from __future__ import annotations

from _registry import (
    ENTRIES,
    LOGGED_ADAPTERS,
    public_estimator_classes,
    reference_modules,
)


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


def test_entries_come_from_the_reference_modules():
    """Every entry and adapter is found in exactly one reference module (no
    second list elsewhere), and each adapter names a registered learner."""
    declared = [e for m in reference_modules() for e in getattr(m, "ENTRIES", [])]
    assert [id(e) for e in declared] == [id(e) for e in ENTRIES]
    assert set(LOGGED_ADAPTERS) <= {e.name for e in ENTRIES}
