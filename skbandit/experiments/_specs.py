"""Experiments as data: named specs of the papers' figures and tables.

A spec names data sets and learners; learners are looked up by name at run
time (``getattr(skbandit, name)``), so a learner that lands later is picked up
without a change here. A learner that cannot run (unknown, not installed, a
parameter it refuses) stops the run before any task starts, unless the caller
asked to skip it (``skip_unavailable=True``, ``--skip-unavailable``).

Configurations recorded before a parameter was renamed (``results.json`` files
written by older versions) are translated on load by :func:`upgrade_config`
(the table ``RENAMED_PARAMETERS``, in ``_renames.py``).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from skbandit.experiments._renames import (
    EPSILON,
    RENAMED_PARAMETERS,
    upgrade_config,
    upgrade_params,
)

__all__ = [
    "EXPERIMENTS",
    "RENAMED_PARAMETERS",
    "Experiment",
    "LearnerSpec",
    "get_experiment",
    "list_experiments",
    "upgrade_config",
    "upgrade_params",
]

#: The SOBA paper's grid: 2^-16 ... 2^-1.
EPSILON_GRID = tuple(2.0**-i for i in range(16, 0, -1))
#: A short grid for --quick runs.
QUICK_EPSILON_GRID = tuple(2.0**-i for i in (11, 9, 7, 5, 3, 1))

#: The full-information scikit-learn baselines of ``compare``.
SKLEARN_BASELINES = (
    "sklearn:Perceptron",
    "sklearn:SGD-hinge",
    "sklearn:SGD-log",
    "sklearn:PA-I",
)

#: Pseudo-learner expanded at run time into every skbandit bandit learner.
ALL_BANDIT = "all-bandit"


@dataclass(frozen=True)
class LearnerSpec:
    """A learner of an experiment, looked up by name when the experiment runs.

    Parameters
    ----------
    name : str
        An estimator of ``skbandit`` (``"SOBA"``), a scikit-learn baseline
        (``"sklearn:Perceptron"``, ``"sklearn:SGD-hinge"``, ``"sklearn:SGD-log"``,
        ``"sklearn:PA-I"``), ``"vw"`` (Vowpal Wabbit, parameter ``args`` with
        ``{k}`` for the number of classes) or ``"all-bandit"`` (every skbandit
        bandit learner at its default and over its exploration-rate grid).
    label : str, default=None
        Name in tables and plots; defaults to ``name``.
    params : dict
        Fixed constructor parameters.
    grid : dict of str to sequence
        Parameter grid (Cartesian product), e.g.
        ``{"exploration__epsilon": [...]}`` (nested parameters are set with
        ``set_params``).
    quick_grid : dict of str to sequence, default=None
        The grid of ``--quick`` runs; defaults to ``grid``.
    per_dataset : dict of str to dict
        Parameters overriding ``params`` on a given data set.
    """

    name: str
    label: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    grid: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    quick_grid: Mapping[str, Sequence[Any]] | None = None
    per_dataset: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @property
    def display(self) -> str:
        return self.label or self.name

    def to_dict(self, quick: bool = False) -> dict[str, Any]:
        """Concrete JSON form (the grid of the chosen mode)."""
        grid = self.quick_grid if (quick and self.quick_grid is not None) else self.grid
        return {
            "name": self.name,
            "label": self.display,
            "params": dict(self.params),
            "grid": {k: list(v) for k, v in grid.items()},
            "per_dataset": {k: dict(v) for k, v in self.per_dataset.items()},
        }


def _preprocessing(spec, override, datasets) -> dict[str, str]:
    from skbandit.experiments._data import PREPROCESSING

    if isinstance(override, str):
        override = dict.fromkeys(datasets, override)
    chosen = {d: (override or {}).get(d, spec.get(d, "stored")) for d in datasets}
    for dataset, how in chosen.items():
        if how not in PREPROCESSING:
            raise ValueError(
                f"preprocessing of {dataset!r} must be one of "
                f"{', '.join(PREPROCESSING)}; got {how!r}"
            )
    return chosen


def param_points(learner: Mapping[str, Any], dataset: str) -> list[dict[str, Any]]:
    """Every parameter setting of a concrete learner dict on ``dataset``."""
    base = dict(learner.get("params", {}))
    base.update(learner.get("per_dataset", {}).get(dataset, {}))
    grid = learner.get("grid", {})
    keys = [k for k in grid if k not in learner.get("per_dataset", {}).get(dataset, {})]
    points = []
    for values in itertools.product(*(grid[k] for k in keys)):
        point = dict(base)
        point.update(zip(keys, values, strict=True))
        points.append(point)
    return points or [base]


@dataclass(frozen=True)
class Experiment:
    """A named experiment: data sets x learners x parameters x seeds.

    Parameters
    ----------
    name, title, reference : str
        Registry name, one-line description, the paper reproduced.
    datasets : tuple of str
        Data set names (see ``skbandit.experiments.DATASETS``).
    learners : tuple of LearnerSpec
    n_seeds : int
        Repetitions (seeds ``0 .. n_seeds - 1``).
    n_samples : int or None
        Rows of each data set (the first rows of its fixed order; None: all).
    plots : tuple of {"epsilon", "curve", "mistakes"}
        Figures: error vs the exploration rate (``exploration__epsilon``),
        error vs rounds at the best parameters,
        cumulative mistakes vs rounds.
    quick_datasets, quick_n_samples, quick_n_seeds :
        The reduced ``--quick`` version (under two minutes on two cores).
    chunk_size : int
        Rows per ``partial_fit`` call of skbandit learners (chunk invariant:
        it does not change their results).
    minibatch_size : int
        Rows per mini-batch of full-information scikit-learn models (each
        mini-batch is predicted, then learned: this size changes their
        results).
    n_checkpoints : int
        Log-spaced checkpoints of the learning curves.
    table : {"best", "all"}
        Print each learner at its best parameters, or every setting.
    claims : str
        What the paper reports, to compare with.
    preprocessing : dict of str to str
        Per data set, ``"stored"`` (the default), ``"unit-range"`` or
        ``"unit-norm"`` (see :func:`skbandit.experiments._data.preprocess`).
    """

    name: str
    title: str
    reference: str
    datasets: tuple[str, ...]
    learners: tuple[LearnerSpec, ...]
    n_seeds: int = 10
    n_samples: int | None = None
    plots: tuple[str, ...] = ("epsilon", "curve")
    quick_datasets: tuple[str, ...] | None = None
    quick_n_samples: int = 10_000
    quick_n_seeds: int = 2
    chunk_size: int = 10_000
    minibatch_size: int = 100
    n_checkpoints: int = 40
    table: str = "best"
    claims: str = ""
    preprocessing: Mapping[str, str] = field(default_factory=dict)

    def config(
        self,
        *,
        quick: bool = False,
        n_seeds: int | None = None,
        n_samples: int | None = None,
        datasets: Sequence[str] | None = None,
        preprocessing: str | Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """The exact, JSON-serialisable configuration of a run.

        ``preprocessing`` overrides the spec's: one choice for every data set,
        or a mapping from data set to choice (the others keep the spec's).
        """
        if datasets is None:
            datasets = (
                self.quick_datasets
                if quick and self.quick_datasets is not None
                else self.datasets
            )
        seeds = (
            n_seeds
            if n_seeds is not None
            else (self.quick_n_seeds if quick else self.n_seeds)
        )
        rows = (
            n_samples
            if n_samples is not None
            else (self.quick_n_samples if quick else self.n_samples)
        )
        return {
            "experiment": self.name,
            "title": self.title,
            "reference": self.reference,
            "claims": self.claims,
            "quick": bool(quick),
            "datasets": list(datasets),
            "n_samples": rows,
            "seeds": list(range(int(seeds))),
            "learners": [lrn.to_dict(quick) for lrn in self.learners],
            "plots": list(self.plots),
            "chunk_size": self.chunk_size,
            "minibatch_size": self.minibatch_size,
            "n_checkpoints": self.n_checkpoints,
            "table": self.table,
            "preprocessing": _preprocessing(
                self.preprocessing, preprocessing, datasets
            ),
        }

    def with_(self, **changes) -> Experiment:
        """A copy with fields replaced."""
        return replace(self, **changes)


_GRID = {EPSILON: EPSILON_GRID}
_QUICK = {EPSILON: QUICK_EPSILON_GRID}

EXPERIMENTS: dict[str, Experiment] = {}


def _register(exp: Experiment) -> None:
    EXPERIMENTS[exp.name] = exp


def _pa_updates(
    name: str, label: str, params: Mapping[str, Any] | None = None
) -> tuple[LearnerSpec, ...]:
    """The learner ``name`` with each of its PA updates (PA, PA-I, PA-II) at
    C = 1, plus ``params``: labelled ``"{label} PA"``, ``"{label} PA-I"``, ..."""
    return tuple(
        LearnerSpec(
            name,
            label=f"{label} {suffix}",
            params={"update": update, "C": 1.0, **(params or {})},
        )
        for update, suffix in (("pa", "PA"), ("pa1", "PA-I"), ("pa2", "PA-II"))
    )


_register(
    Experiment(
        name="soba2017-fig2",
        title="Online error vs gamma, then vs rounds at the best gamma (SOBA Fig. 2)",
        reference="Beygelzimer, Orabona & Zhang, ICML 2017, Figure 2",
        datasets=("synsep", "synnonsep", "reuters4", "covtype"),
        quick_datasets=("synsep", "synnonsep"),
        n_samples=1_000_000,
        quick_n_samples=50_000,
        n_seeds=10,
        quick_n_seeds=3,
        learners=(
            LearnerSpec("Banditron", grid=_GRID, quick_grid=_QUICK),
            LearnerSpec("PNewtron", grid=_GRID, quick_grid=_QUICK),
            LearnerSpec(
                "SOBA",
                label="SOBA-diag",
                params={"covariance": "diag"},
                grid=_GRID,
                quick_grid=_QUICK,
            ),
            LearnerSpec("MulticlassPerceptron", label="Perceptron"),
        ),
        plots=("epsilon", "curve"),
        claims=(
            "SOBA-diag best on 3 of 4 data sets; near the 5% noise floor on "
            "SynNonSep; the bandit error floor is about ((k-1)/k)*gamma."
        ),
    )
)

_register(
    Experiment(
        name="chen2009-table1",
        title="Final cumulative error, C = 1 (Chen et al. 2009, Table I)",
        reference="Chen, Chen, Zhang, Chen & Zhang, ICDM 2009, Table I",
        datasets=("reuters4", "mnist", "20newsgroups", "usps"),
        quick_datasets=("usps", "mnist", "20newsgroups"),
        n_samples=None,
        quick_n_samples=4_000,
        n_seeds=10,
        quick_n_seeds=2,
        learners=(
            LearnerSpec(
                "Banditron",
                per_dataset={
                    "reuters4": {EPSILON: 0.03},
                    "mnist": {EPSILON: 0.15},
                    "20newsgroups": {EPSILON: 0.3},
                    "usps": {EPSILON: 0.3},
                },
            ),
            *_pa_updates("ConservativeOneVsAll", "C-OVA"),
            # the paper's PA baselines at C = 1; its exploration policy is not
            # stated: epsilon-greedy 0.1 (OffsetTree's default before the
            # defaults from evidence), the rate of OffsetTree's default
            # EpsilonGreedy rule
            *_pa_updates("OffsetTree", "Offset Tree", {EPSILON: 0.1}),
            LearnerSpec("MulticlassPerceptron", label="Perceptron"),
        ),
        plots=("curve",),
        claims=(
            "Conservative OVA with PA beats the Banditron on every data set; "
            "the full-information Perceptron is the lower reference."
        ),
        # Chen et al. 2009, Section V-B: RCV1 "vectors of which are
        # cosine-normalized, log TF-IDF vectors"; MNIST "the gray value of pixels
        # and scaled to [0, 1]"; 20 Newsgroups "scaled to binary encoding" (the
        # stored binary word indicators). USPS: the paper is silent; the stored
        # pixels in [0, 1] match its Perceptron and Banditron cells best
        # (docs/experiments.md), unit-norm rows are one flag away.
        preprocessing={
            "reuters4": "unit-norm",
            "mnist": "unit-range",
            "20newsgroups": "stored",
            "usps": "stored",
        },
    )
)

_register(
    Experiment(
        name="beygelzimer2019",
        title="Cumulative mistakes on strongly / weakly separable streams",
        reference="Beygelzimer, Pal, Szorenyi, Thiruvenkatachari, Wei & Zhang, "
        "ICML 2019",
        datasets=("separable-strong", "separable-weak"),
        n_samples=5_000_000,
        quick_n_samples=20_000,
        n_seeds=20,
        quick_n_seeds=2,
        learners=(
            LearnerSpec("SeparableOneVsAll", label="linear OVA"),
            LearnerSpec(
                "SeparableOneVsAll",
                label="rational-kernel OVA",
                params={"kernel": "rational"},
            ),
            LearnerSpec(
                "Banditron",
                grid={EPSILON: (0.02, 0.01, 0.005, 0.002, 0.001, 0.0005)},
                quick_grid={EPSILON: (0.02, 0.002)},
            ),
        ),
        plots=("mistakes", "curve"),
        chunk_size=50_000,
        claims=(
            "Linear OVA makes a few hundred mistakes on strongly separable "
            "data; on weakly separable data the rational-kernel OVA levels "
            "off while linear OVA keeps growing."
        ),
    )
)

_VW_ARGS = (
    "--cbify {k} --epsilon 0.05",
    "--cbify {k} --epsilon 0.01",
    "--cbify {k} --epsilon 0.002",
    "--cbify {k} --cb_explore_adf --squarecb",
    "--cbify {k} --bag 5",
)

_register(
    Experiment(
        name="vw-cbify",
        title="Every skbandit bandit learner against Vowpal Wabbit --cbify",
        reference="Vowpal Wabbit cbify reduction (one pass, the same order)",
        datasets=(
            "usps",
            "mnist",
            "covtype",
            "20newsgroups-tfidf",
            "synsep",
            "synnonsep",
        ),
        quick_datasets=("synsep", "usps"),
        n_samples=None,
        quick_n_samples=5_000,
        n_seeds=3,
        quick_n_seeds=1,
        learners=(
            LearnerSpec(
                ALL_BANDIT,
                grid={EPSILON: (0.002, 0.01, 0.05, 0.2)},
                quick_grid={EPSILON: (0.01, 0.1)},
            ),
            LearnerSpec("vw", label="VW", grid={"args": _VW_ARGS}),
        ),
        plots=("curve",),
        table="all",
    )
)

_register(
    Experiment(
        name="compare",
        title="Ad-hoc comparison with scikit-learn's full-information baselines",
        reference="-",
        datasets=("synsep",),
        n_samples=100_000,
        quick_n_samples=20_000,
        n_seeds=3,
        quick_n_seeds=2,
        learners=(
            LearnerSpec("Banditron", grid={EPSILON: (0.01, 0.05)}),
            LearnerSpec("SOBA", label="SOBA-diag", params={"covariance": "diag"}),
            LearnerSpec("MulticlassPerceptron", label="Perceptron"),
            *(LearnerSpec(name) for name in SKLEARN_BASELINES),
        ),
        plots=("curve",),
    )
)


def list_experiments() -> list[str]:
    """Names of the registered experiments.

    Examples
    --------
    >>> from skbandit.experiments import list_experiments
    >>> list_experiments()
    ['beygelzimer2019', 'chen2009-table1', 'compare', 'soba2017-fig2', 'vw-cbify']
    """
    return sorted(EXPERIMENTS)


def get_experiment(name: str) -> Experiment:
    """The registered experiment ``name``; a ``KeyError`` names the choices."""
    try:
        return EXPERIMENTS[name]
    except KeyError:
        raise KeyError(
            f"unknown experiment {name!r}; choose from: "
            + ", ".join(list_experiments())
        ) from None
