"""skbandit: online multiclass learning from bandit feedback, scikit-learn style.

A bandit learner plays one class per row and is told only whether it was
right. ``BanditFeedback`` simulates that environment from true labels; the
estimators learn through ``partial_fit`` chunk after chunk.
"""

from skbandit import exploration as exploration
from skbandit import linear_model as linear_model
from skbandit import multiclass as multiclass
from skbandit import pipeline as pipeline
from skbandit import preprocessing as preprocessing
from skbandit.feedback import BanditFeedback, LoggedFeedback, OffPolicyWarning
from skbandit.linear_model import (
    SOBA,
    BanditPassiveAggressive,
    Banditron,
    Gaptron,
    MulticlassPerceptron,
    PNewtron,
    SquareCB,
)
from skbandit.live import LiveSession
from skbandit.multiclass import (
    ConservativeOneVsAll,
    OffsetTree,
    OnlineSelector,
    RegressionReduction,
    SeparableOneVsAll,
)
from skbandit.pipeline import BanditPipeline

__version__ = "0.1.0.dev0"

# The estimators of the learner sub-packages, the pipeline of feature maps and
# a learner (``make_bandit_pipeline`` and ``OnlineStandardScaler`` stay in
# ``skbandit.pipeline`` and ``skbandit.preprocessing``, as scikit-learn's), the
# feedback classes, the live session and the version; sorted.
__all__ = [
    "BanditFeedback",
    "BanditPassiveAggressive",
    "BanditPipeline",
    "Banditron",
    "ConservativeOneVsAll",
    "Gaptron",
    "LiveSession",
    "LoggedFeedback",
    "MulticlassPerceptron",
    "OffPolicyWarning",
    "OffsetTree",
    "OnlineSelector",
    "PNewtron",
    "RegressionReduction",
    "SOBA",
    "SeparableOneVsAll",
    "SquareCB",
    "__version__",
]
