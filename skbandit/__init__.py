"""skbandit: online multiclass learning from bandit feedback, scikit-learn style.

A bandit learner plays one class per row and is told only whether it was
right. ``BanditFeedback`` simulates that environment from true labels; the
estimators learn through ``partial_fit`` chunk after chunk.
"""

from skbandit import exploration as exploration
from skbandit.feedback import BanditFeedback, LoggedFeedback, OffPolicyWarning
from skbandit.linear_model import (
    SOBA,
    Banditron,
    Gaptron,
    MulticlassPerceptron,
    PNewtron,
    SquareCB,
)
from skbandit.multiclass import (
    ConservativeOneVsAll,
    OffsetTree,
    OnlineSelector,
    SeparableOneVsAll,
)

__version__ = "0.1.0.dev0"

__all__ = [
    "BanditFeedback",
    "Banditron",
    "ConservativeOneVsAll",
    "Gaptron",
    "LoggedFeedback",
    "MulticlassPerceptron",
    "OffPolicyWarning",
    "OffsetTree",
    "OnlineSelector",
    "PNewtron",
    "SOBA",
    "SeparableOneVsAll",
    "SquareCB",
    "__version__",
]
