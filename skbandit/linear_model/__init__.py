"""Linear bandit learners and full-information baselines."""

from skbandit.linear_model._banditron import Banditron
from skbandit.linear_model._perceptron import MulticlassPerceptron

__all__ = ["Banditron", "MulticlassPerceptron"]
