"""Experiments as data: the papers' figures and tables from one command.

A registry of named :class:`Experiment` specs (``soba2017-fig2``,
``chen2009-table1``, ``beygelzimer2019``, ``vw-cbify``, ``compare``) names data
sets and learners; learners are looked up by name in ``skbandit`` when the
experiment runs, and one that does not exist yet is skipped with a message.
:func:`run_experiment` runs the (learner, parameters, seed) tasks in parallel
with joblib and returns an :class:`ExperimentResult` that writes CSV, JSON
(the exact configuration, library versions and seeds) and PNG plots
(matplotlib). The ``skbandit`` console script wraps it.

Plotting, progress bars and parallel backends are the ``experiments`` extra
(``pip install "skbandit[experiments]"``); ``import skbandit`` never needs them.
"""

from skbandit.experiments._data import DATASETS, load_dataset
from skbandit.experiments._replay import rerun
from skbandit.experiments._result import ExperimentResult
from skbandit.experiments._runner import run_config, run_experiment
from skbandit.experiments._specs import (
    EXPERIMENTS,
    Experiment,
    LearnerSpec,
    get_experiment,
    list_experiments,
)

__all__ = [
    "DATASETS",
    "EXPERIMENTS",
    "Experiment",
    "ExperimentResult",
    "LearnerSpec",
    "get_experiment",
    "list_experiments",
    "load_dataset",
    "rerun",
    "run_config",
    "run_experiment",
]
