"""Linear bandit learners and full-information baselines."""

from skbandit.linear_model._bandit_pa import BanditPassiveAggressive
from skbandit.linear_model._banditron import Banditron
from skbandit.linear_model._gaptron import Gaptron
from skbandit.linear_model._perceptron import MulticlassPerceptron
from skbandit.linear_model._pnewtron import PNewtron
from skbandit.linear_model._soba import SOBA
from skbandit.linear_model._squarecb import SquareCB

__all__ = [
    "SOBA",
    "BanditPassiveAggressive",
    "Banditron",
    "Gaptron",
    "MulticlassPerceptron",
    "PNewtron",
    "SquareCB",
]
