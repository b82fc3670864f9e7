"""One-vs-all reductions of bandit multiclass prediction to binary learners."""

from skbandit.multiclass._conservative_ova import ConservativeOneVsAll
from skbandit.multiclass._separable_ova import SeparableOneVsAll

__all__ = ["ConservativeOneVsAll", "SeparableOneVsAll"]
