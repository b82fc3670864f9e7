"""Reductions of bandit multiclass prediction to binary learners (one-vs-all,
offset tree), and online selection among learners."""

from skbandit.multiclass._conservative_ova import ConservativeOneVsAll
from skbandit.multiclass._offset_tree import OffsetTree
from skbandit.multiclass._regression import RegressionReduction
from skbandit.multiclass._selector import OnlineSelector
from skbandit.multiclass._separable_ova import SeparableOneVsAll

__all__ = [
    "ConservativeOneVsAll",
    "OffsetTree",
    "OnlineSelector",
    "RegressionReduction",
    "SeparableOneVsAll",
]
