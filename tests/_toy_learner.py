"""A toy learner added by the recipe of docs/adding_a_learner.md, for its test.

``tests/test_adding_a_learner.py`` follows the recipe with this learner: the
estimator class (what ``skbandit/<package>/_<name>.py`` would hold), its NumPy
reference with the registry's declarations (``tests/_reference_<name>.py``),
and it runs the shared suite on it. The kernel is the Banditron's, reused as
the recipe asks where an update exists already (a test cannot compile a new
``.pyx``): the toy is the Banditron of Kakade, Shalev-Shwartz and Tewari (ICML
2008) read from its last iterate, ``w_greedy -= x`` every round and
``w_a += x / p(a)`` when the played action ``a`` was right, with
epsilon-greedy exploration at ``epsilon = 1/4`` by default.
"""

from __future__ import annotations

import numpy as np
from _entry import Entry
from _reference import banditron

from skbandit.base import LinearBanditClassifier, feature_major_zeros
from skbandit.exploration import (
    EpsilonGreedy,
    ExplorationMixin,
    exploration_constraint,
    rule_values,
)
from skbandit.linear_model._banditron_fast import BanditronKernel

__all__ = ["ENTRIES", "LOGGED_ADAPTERS", "ToyBanditron", "reference"]


# -- 1. the estimator module ----------------------------------------------------


class ToyBanditron(ExplorationMixin, LinearBanditClassifier):
    """Banditron played and predicted from its last iterate (a toy learner).

    Each round: scores ``s = W x``, the distribution of the exploration rule
    (epsilon-greedy by default, ``p = (1 - epsilon) e_greedy + epsilon / k``),
    the played action ``a`` drawn from it; then ``w_greedy -= x`` and, if
    ``a`` was right, ``w_a += x / p(a)`` [1]_.

    Parameters
    ----------
    exploration : str, exploration rule or None, default=None
        ``None``: ``EpsilonGreedy(epsilon=0.25)``.
    max_iter : int, default=5
        Passes over the data in ``fit``.
    shuffle : bool, default=True
        Whether ``fit`` visits the rows in a new random order each pass.
    random_state : int, RandomState instance or None, default=None
        Seeds the uniforms of the rounds and the shuffling.

    References
    ----------
    .. [1] S. M. Kakade, S. Shalev-Shwartz and A. Tewari, "Efficient bandit
       algorithms for online multiclass prediction", ICML 2008.
    """

    _parameter_constraints: dict = {
        **LinearBanditClassifier._parameter_constraints,
        "exploration": exploration_constraint(),
    }
    # the kernel also writes an accumulator (the Banditron's averaged iterate,
    # unused here): it is state, so that a failed block rolls it back
    _state_attrs = ("coef_", "_acc")
    _feature_major = ("coef_", "_acc")
    _default_exploration = "epsilon_greedy"
    _exploration_values = rule_values(epsilon=0.25)

    def __init__(
        self, *, exploration=None, max_iter=5, shuffle=True, random_state=None
    ):
        super().__init__(max_iter=max_iter, shuffle=shuffle, random_state=random_state)
        self.exploration = exploration

    def _init_state(self, n_features, n_classes):
        super()._init_state(n_features, n_classes)
        self._acc = feature_major_zeros(n_classes, n_features)

    def _make_kernel(self):
        kernel = BanditronKernel(self.coef_.T, self._acc.T)
        kernel.set_explorer(self._explorer(self.classes_.shape[0]))
        return kernel


# -- 3. the NumPy reference and the registry's declarations ---------------------


def resolved_rule(params: dict, k: int):
    """The rule ``ToyBanditron(**params)`` plays with ``k`` classes."""
    est = ToyBanditron(**params)
    est.classes_ = np.arange(k)
    return est._resolve_exploration()


def reference(X, y, U, k, params, W0=None, A0=None, t0=0):
    """The toy's rounds in NumPy: the Banditron's (``_reference.banditron``,
    written from the paper) with the toy's resolved rule."""
    return banditron(
        X, y, U, k, exploration=resolved_rule(params, k), W0=W0, A0=A0, t0=t0
    )


ENTRIES: list[Entry] = [
    Entry(
        ToyBanditron,
        params={"exploration": EpsilonGreedy(0.3)},
        invalid_params=(
            ({"exploration": EpsilonGreedy(1.5)}, "epsilon"),
            ({"exploration": 0.2}, "exploration"),
        ),
        valid_edge_params=({"exploration": EpsilonGreedy(1.0)},),
        epsilon_greedy=True,
    ),
]


def _logged_toy(params: dict, k: int):
    """The logged-feedback adapter (see ``_reference_logged``)."""
    from _reference_logged import banditron_learn

    rule = resolved_rule(params, k)

    def run(X, U, t0, state, logged):
        if logged is None:
            tr = reference(X, np.zeros(X.shape[0], int), U, k, params, state, t0=t0)
            return tr.played, tr.propensities, tr.W
        W = np.zeros((k, X.shape[1])) if state is None else state.copy()
        banditron_learn(X, *logged, U, W, k, rule, t0)
        return None, None, W

    return run, lambda W: {"coef_": W}


LOGGED_ADAPTERS = {"ToyBanditron": _logged_toy}
