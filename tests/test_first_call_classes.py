"""The first-call rule of ``classes`` (``_classes_of_call``) on every path.

DESIGN.md's contract: the first ``partial_fit`` (labels or logged feedback)
or ``sample_actions`` of an unfitted learner must be given every action; a
later call may repeat ``classes`` only unchanged, and a refused call leaves
the learner as it was.
"""

from __future__ import annotations

import numpy as np
import pytest

from skbandit import Banditron, LoggedFeedback
from skbandit.multiclass import RegressionReduction

X = np.eye(3)
Y = np.array([0, 1, 2])


def _logged():
    return LoggedFeedback(Y, np.ones(3), np.full(3, 0.5))


@pytest.mark.parametrize("make", [Banditron, RegressionReduction])
def test_first_call_needs_classes(make):
    est = make(random_state=0)
    with pytest.raises(ValueError, match="first call to partial_fit"):
        est.partial_fit(X, Y)
    with pytest.raises(ValueError, match="first call to partial_fit"):
        est.partial_fit(X, _logged())
    with pytest.raises(ValueError, match="first call to sample_actions"):
        est.sample_actions(X)
    assert not hasattr(est, "classes_")


@pytest.mark.parametrize("make", [Banditron, RegressionReduction])
@pytest.mark.parametrize("call", ["labels", "logged", "act"])
def test_later_call_needs_the_same_classes(make, call):
    est = make(random_state=0).partial_fit(X, Y, classes=[0, 1, 2])
    t = est.t_
    with pytest.raises(ValueError, match=r"classes=\[0, 1, 5\] is not the same"):
        if call == "labels":
            est.partial_fit(X, Y, classes=[0, 1, 5])
        elif call == "logged":
            est.partial_fit(X, _logged(), classes=[0, 1, 5])
        else:
            est.sample_actions(X, classes=[0, 1, 5])
    assert est.t_ == t
    np.testing.assert_array_equal(est.classes_, [0, 1, 2])
    # the same classes again are accepted
    est.partial_fit(X, Y, classes=[2, 0, 1])
    assert est.t_ == t + 3
