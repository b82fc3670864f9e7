"""Learners by name: skbandit estimators, scikit-learn baselines, Vowpal Wabbit."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = ["LearnerUnavailable", "bandit_learner_names", "make_learner"]


class LearnerUnavailable(RuntimeError):
    """A learner that cannot run here (unknown name, not installed, parameters
    it refuses); the message names the learner and the reason."""


def _sklearn_factory(key: str):
    from sklearn.linear_model import Perceptron, SGDClassifier

    defaults: dict[str, tuple[type, dict[str, Any]]] = {
        "Perceptron": (Perceptron, {}),
        "SGD-hinge": (SGDClassifier, {"loss": "hinge"}),
        "SGD-log": (SGDClassifier, {"loss": "log_loss"}),
        # PA-I in the SGD form scikit-learn recommends since
        # PassiveAggressiveClassifier's deprecation (1.8).
        "PA-I": (
            SGDClassifier,
            {"loss": "hinge", "penalty": None, "learning_rate": "pa1", "eta0": 1.0},
        ),
    }
    if key not in defaults:
        raise LearnerUnavailable(
            f"unknown scikit-learn baseline 'sklearn:{key}'; choose from: "
            + ", ".join(f"sklearn:{k}" for k in defaults)
        )
    return defaults[key]


def vw_available() -> bool:
    try:
        import vowpalwabbit  # noqa: F401
    except ImportError:
        return False
    return True


def check_learner(name: str, params: dict[str, Any]) -> None:
    """Raise ``LearnerUnavailable`` with a message if ``name(**params)`` can't run."""
    make_learner(name, params, seed=0)


def make_learner(name: str, params: dict[str, Any], seed: int):
    """A fresh estimator (or a VW marker) for ``name`` with ``params`` and ``seed``.

    skbandit learners are looked up as ``getattr(skbandit, name)`` at call
    time, so learners added later are found without a change here.
    """
    params = dict(params)
    if name == "vw":
        if not vw_available():
            raise LearnerUnavailable(
                "vw: Vowpal Wabbit is not installed (pip install vowpalwabbit)"
            )
        return VWLearner(params.get("args", "--cbify {k} --epsilon 0.05"), seed)
    if name.startswith("sklearn:"):
        cls, defaults = _sklearn_factory(name.split(":", 1)[1])
        return cls(**{**defaults, **params, "random_state": seed})
    import skbandit

    cls = getattr(skbandit, name, None)
    if cls is None or not inspect.isclass(cls) or not hasattr(cls, "partial_fit"):
        raise LearnerUnavailable(
            f"{name}: skbandit has no learner named {name!r} (not implemented yet)"
        )
    # nested parameters (``exploration__epsilon``) are set after construction
    given = dict(params)
    nested = {key: params.pop(key) for key in list(params) if "__" in key}
    try:
        estimator = cls(**params, random_state=seed)  # type: ignore[call-arg]  # cls: a skbandit learner class found by name
        if nested:
            estimator.set_params(**nested)  # type: ignore[attr-defined]  # (idem)
        estimator._validate_params()  # type: ignore[attr-defined]  # (idem)
    except (TypeError, ValueError) as exc:
        raise LearnerUnavailable(
            f"{name}: parameters {given} are not accepted ({exc})"
        ) from None
    return estimator


def bandit_learner_names() -> list[str]:
    """Every bandit learner currently exported by ``skbandit``."""
    import skbandit
    from skbandit.base import BaseBanditClassifier

    names = []
    for name in getattr(skbandit, "__all__", dir(skbandit)):
        obj = getattr(skbandit, name, None)
        if (
            inspect.isclass(obj)
            and issubclass(obj, BaseBanditClassifier)
            and name != "MulticlassPerceptron"
        ):
            names.append(name)
    return sorted(names)


def has_numeric_epsilon(name: str) -> bool:
    """Whether skbandit's ``name`` plays a default exploration rule with a
    numeric ``epsilon`` (the grid key ``exploration__epsilon``)."""
    import skbandit

    cls = getattr(skbandit, name, None)
    if cls is None:
        return False
    try:
        cls().set_params(exploration__epsilon=0.01)._validate_params()
    except (TypeError, ValueError, AttributeError):
        return False
    return True


def _vw_line(label: int, indices, values) -> str:
    """One VW text line: ``label | f<j>:<value> ...`` (values as ``repr``).

    Feature names are ``"f"`` and the column index, which VW hashes like any
    named feature. Bare integers (``"17:0.5"``) are not hashed by VW: they are
    used as the weight index itself, and consecutive column indices then share
    weights across the actions of the cbify reductions, which raises VW's
    online error (``tests/test_experiments.py`` checks a one-hot stream).
    """
    return f"{label} | " + " ".join(map("f{}:{!r}".format, indices, values))


class VWLearner:
    """Vowpal Wabbit through its Python API, one text line per row (cbify).

    Labels are coded ``1..K`` (the position in ``classes`` plus one); the online
    error is VW's cumulative loss, which for cbify (costs 0 right, 1 wrong) is
    the number of rounds whose played action was wrong.
    """

    def __init__(self, args: str, seed: int) -> None:
        self.args = args
        self.seed = seed

    def run(self, X, y, classes, checkpoints) -> dict[str, Any]:
        import time

        from vowpalwabbit import Workspace

        codes = np.searchsorted(classes, y) + 1
        args = self.args.format(k=len(classes))
        ws = Workspace(f"{args} --quiet --random_seed {self.seed}")
        X = sp.csr_matrix(X)
        wanted = set(int(c) for c in checkpoints)
        mistakes, seconds = [], []
        elapsed, block = 0.0, 4096
        try:
            for lo in range(0, X.shape[0], block):
                Xb = X[lo : lo + block]
                ptr, idx, val = (
                    Xb.indptr.tolist(),
                    Xb.indices.tolist(),
                    Xb.data.tolist(),
                )
                start = time.perf_counter()
                for t, label in enumerate(codes[lo : lo + block].tolist()):
                    row = slice(ptr[t], ptr[t + 1])
                    ws.learn(_vw_line(label, idx[row], val[row]))
                    if lo + t + 1 in wanted:
                        mistakes.append(int(round(ws.get_sum_loss())))
                        seconds.append(elapsed + time.perf_counter() - start)
                elapsed += time.perf_counter() - start
        finally:
            ws.finish()
        return {"mistakes": mistakes, "seconds": seconds}
