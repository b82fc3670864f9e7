"""The logged-feedback NumPy reference at the estimators' default parameters.

``tests/_reference_logged.py`` fills in the parameters a test leaves out; the
registry's entries all pass explicit ones, so this runs the delayed-feedback
comparison of ``tests/test_logged.py`` with ``OffsetTree()`` at its defaults
(``base``, ``C``, ``exploration``): the reference must fill in the same values.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from _registry import BANDIT_ENTRIES
from test_logged import test_delayed_feedback_matches_every_reference as check

(OFFSET_TREE,) = [e for e in BANDIT_ENTRIES if e.name == "OffsetTree"]


@pytest.mark.parametrize("batch,lag", [(1, 0), (4, 2)])
@pytest.mark.parametrize("kind", ["gaussian", "binary"])
def test_offset_tree_reference_at_the_estimators_defaults(batch, lag, kind):
    assert OFFSET_TREE.params, "the registry entry sets parameters explicitly"
    check(replace(OFFSET_TREE, params={}), batch, lag, kind)
