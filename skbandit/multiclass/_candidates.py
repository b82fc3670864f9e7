"""The default candidates of ``OnlineSelector``: four linear learners and, on
narrow rows with few classes, a nonlinear pipeline first."""

from __future__ import annotations

import numpy as np
from sklearn.utils._param_validation import InvalidParameterError

from skbandit.base import BaseBanditClassifier

__all__ = ["default_candidates", "nonlinear_candidate"]


#: The widest rows and the most classes for which ``default_candidates``
#: includes the nonlinear candidate: its round costs ``O(D (d + k))`` with
#: ``D = 1000`` features, which pays on dense tables and small images with
#: tens of classes, not on wide or sparse rows or catalogues of many items.
NONLINEAR_MAX_FEATURES = 256
NONLINEAR_MAX_CLASSES = 100


def nonlinear_candidate() -> BaseBanditClassifier:
    """The nonlinear candidate of ``default_candidates``: a
    :class:`~skbandit.BanditPipeline` of running standardisation, then the
    standardised row ``u`` (times 0.1) beside 1,000 random Fourier features of
    the Gaussian kernel ``exp(-||u - u'||^2 / d)`` (``FeatureUnion`` of
    ``"passthrough"`` and ``RBFSampler(gamma="scale")``, ``gamma = 1 / d``
    after the scaler; Rahimi and Recht 2007), learnt by
    ``SquareCB(step_size=AdaGrad(0.1), initial_reward=0.2)``: a model linear
    in ``u`` plus a kernel part. The weight 0.1 sets the linear block's share
    of the capped AdaGrad step (each random feature is of order
    ``sqrt(2 / D)``); the start 0.2 (every class predicted right with
    probability 0.2 until it is played) is less optimistic than SquareCB's
    default 1, with which the greedy class moves to an untried one after each
    miss, in every region of the input the random features tell apart.
    Chosen on the dense tuning streams (``benchmarks/eval_nonlinear.py``,
    ``benchmarks/nonlinear_ideas.py``, ``docs/results/nonlinear/``)."""
    from sklearn.kernel_approximation import RBFSampler
    from sklearn.pipeline import FeatureUnion

    from skbandit.linear_model import SquareCB
    from skbandit.optim import AdaGrad
    from skbandit.pipeline import BanditPipeline
    from skbandit.preprocessing import OnlineStandardScaler

    features = FeatureUnion(
        [
            ("standardised", "passthrough"),
            ("rbfsampler", RBFSampler(gamma="scale", n_components=1000)),
        ],
        transformer_weights={"standardised": 0.1},
    )
    return BanditPipeline(
        [
            ("onlinestandardscaler", OnlineStandardScaler()),
            ("featureunion", features),
            ("squarecb", SquareCB(step_size=AdaGrad(0.1), initial_reward=0.2)),
        ]
    )


def default_candidates(
    n_features: int | None = None, n_classes: int | None = None
) -> list[BaseBanditClassifier]:
    """The candidates ``OnlineSelector(candidates=None)`` runs on rows of
    ``n_features`` features and ``n_classes`` classes, in order (the first is
    the leader until the evidence says otherwise).

    * ``nonlinear_candidate()``, first, when ``n_features`` is at most
      ``NONLINEAR_MAX_FEATURES`` (256) and ``n_classes`` (if given) at most
      ``NONLINEAR_MAX_CLASSES`` (100): the standardised row ``u`` (times 0.1)
      beside random Fourier features of it, learnt by SquareCB started at
      ``initial_reward=0.2`` (a policy linear in ``u`` plus a kernel part;
      ``O(D d + (D + d) k)`` a round with ``D = 1000``);
    * ``SquareCB()``: inverse gap weighting at its defaults (``gamma_t = 300
      t^0.75`` per class, the normalized (NAG) regression oracle);
    * ``SquareCB(exploration=InverseGap(300, exponent=0.5))``: the anytime
      ``gamma_t ∝ sqrt(t)`` schedule of Foster and Rakhlin's analysis, which
      explores longer (noisy labels, many classes);
    * ``ConservativeOneVsAll()``: no exploration, Passive-Aggressive one-vs-all
      learners; strong where the greedy action is learnt fast;
    * ``OffsetTree()``: the offset-tree reduction (importance-weighted binary
      learners at the nodes).

    ``n_features=None`` gives the linear candidates only.
    """
    from skbandit.exploration import InverseGap
    from skbandit.linear_model import SquareCB
    from skbandit.multiclass import ConservativeOneVsAll, OffsetTree

    linear: list[BaseBanditClassifier] = [
        SquareCB(),
        SquareCB(exploration=InverseGap(300.0, exponent=0.5)),
        ConservativeOneVsAll(),
        OffsetTree(),
    ]
    if (
        n_features is None
        or n_features > NONLINEAR_MAX_FEATURES
        or (n_classes is not None and n_classes > NONLINEAR_MAX_CLASSES)
    ):
        return linear
    return [nonlinear_candidate(), *linear]


def _seed_default_features(candidates) -> None:
    """The default candidates take ``random_state=0``: the nonlinear one draws
    its random features with it (a fixed map of the rows, as a hashing seed
    is), the others draw nothing from theirs (the selector's uniforms drive
    every candidate), so the selector's state stays a function of its seed."""
    for c in candidates:
        if c.random_state is None:
            c.set_params(random_state=0)


def _check_candidates(
    candidates, n_features: int | None = None, n_classes: int | None = None
) -> list[BaseBanditClassifier]:
    if candidates is None:
        return default_candidates(n_features, n_classes)
    if isinstance(candidates, BaseBanditClassifier) or not hasattr(
        candidates, "__len__"
    ):
        raise InvalidParameterError(
            "The 'candidates' parameter of OnlineSelector must be a list of "
            f"skbandit learners or None; got {type(candidates).__name__}."
        )
    candidates = list(candidates)
    if not candidates:
        raise InvalidParameterError(
            "The 'candidates' parameter of OnlineSelector must hold at least "
            "one learner; got none."
        )
    for i, c in enumerate(candidates):
        if not isinstance(c, BaseBanditClassifier):
            raise InvalidParameterError(
                f"candidates[{i}] is {type(c).__name__}, not a skbandit learner "
                "(a BaseBanditClassifier): the selector runs the candidates' "
                "compiled kernels."
            )
        # a meta-learner that cannot be a candidate says so here: a selector
        # (selectors do not nest), a BanditPipeline whose maps run in Python
        check = getattr(c, "_check_selector_candidate", None)
        if check is not None:
            check(i)
    return candidates


def _same_value(a, b) -> bool:
    """Parameter values that make the same model: the same object, equal
    plain values, or objects of one type with the same values of their
    parameters (``get_params``) or attributes, compared recursively."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    if hasattr(a, "get_params"):
        pa, pb = a.get_params(deep=False), b.get_params(deep=False)
        return pa.keys() == pb.keys() and all(_same_value(pa[n], pb[n]) for n in pa)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(map(_same_value, a, b))
    if isinstance(a, str | bytes | int | float | complex | bool):
        return bool(a == b)
    return False  # unknown objects: not known to be the same


def _score_twins(candidates, modes, all_mode: int) -> np.ndarray:
    """Each candidate's *score twin* (``SelectorKernel.set_twins``): the first
    earlier candidate that scores every row alike and learns every round
    alike, or ``-1``. Twins are learners of one class that declares its
    scores pure (``_pure_scores``), with the same parameters but
    ``exploration`` (which changes the distribution, not the scores), the same
    state bit for bit (``_state_attrs``) and both in the ``all_mode`` learning
    mode (every candidate learns every round with the selector's propensity).
    The default candidates' two ``SquareCB`` (two exploration schedules over
    one regression oracle) are twins while neither was fitted apart. The
    selector calls this at the start of each block of at least
    ``_TWIN_MIN_ROWS`` rounds and computes the twins' ``k`` scores once a
    round in that block only (nothing else writes the states inside it)."""
    twins = np.full(len(candidates), -1, dtype=np.int32)
    for c, cand in enumerate(candidates):
        if not getattr(cand, "_pure_scores", False) or modes[c] != all_mode:
            continue
        params = cand.get_params(deep=False)
        params.pop("exploration", None)
        for j in range(c):
            other = candidates[j]
            if twins[j] >= 0 or type(other) is not type(cand) or modes[j] != all_mode:
                continue
            theirs = other.get_params(deep=False)
            theirs.pop("exploration", None)
            if not (
                theirs.keys() == params.keys()
                and all(_same_value(params[n], theirs[n]) for n in params)
            ):
                continue
            if all(
                _same_value(
                    np.asarray(getattr(cand, name)), np.asarray(getattr(other, name))
                )
                for name in type(cand)._state_attrs
            ):
                twins[c] = j
                break
    return twins
