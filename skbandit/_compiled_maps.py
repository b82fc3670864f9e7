"""Which feature maps of a ``BanditPipeline`` run in its compiled kernel.

The kernel (``skbandit._core._feature_map.FeatureMapKernel``) computes the
random Fourier features of scikit-learn's ``RBFSampler`` and, for a
``FeatureUnion`` of ``"passthrough"`` then one ``RBFSampler``, the row beside
them, each block times the union's ``transformer_weights`` entry.
"""

from __future__ import annotations

from math import isfinite
from numbers import Real

from sklearn.kernel_approximation import RBFSampler
from sklearn.pipeline import FeatureUnion
from sklearn.preprocessing import FunctionTransformer
from sklearn.utils._param_validation import InvalidParameterError


def _sampler_parts(est) -> tuple[RBFSampler, bool, float, float] | None:
    """``(sampler, passthrough, w_lin, w_rff)`` when ``est`` has a compiled
    path: an ``RBFSampler`` (``(est, False, 1, 1)``), or a ``FeatureUnion`` of
    ``"passthrough"`` (an identity ``FunctionTransformer`` once fitted) then
    one ``RBFSampler`` (the row beside its random features, each block times
    its ``transformer_weights`` entry); else None."""
    if type(est) is RBFSampler:
        return est, False, 1.0, 1.0
    if type(est) is not FeatureUnion or len(est.transformer_list) != 2:
        return None
    (lin_name, lin), (rff_name, rbf) = est.transformer_list
    # "passthrough" is an identity FunctionTransformer once the union is fitted
    identity = (isinstance(lin, str) and lin == "passthrough") or (
        type(lin) is FunctionTransformer and lin.func is None
    )
    if not (identity and type(rbf) is RBFSampler):
        return None
    weights = est.transformer_weights or {}
    parts = []
    for name in (lin_name, rff_name):
        w = weights.get(name, 1.0)
        if isinstance(w, bool) or not isinstance(w, Real) or not isfinite(w):
            raise InvalidParameterError(
                f"The FeatureUnion's weight of {name!r} in BanditPipeline must "
                f"be a finite real number; got {w!r}."
            )
        parts.append(float(w))
    return rbf, True, parts[0], parts[1]


def _tail_parts(pairs) -> tuple[RBFSampler, bool, float, float]:
    """``_sampler_parts`` of the compiled sampler step (``_split``'s ``rff``)."""
    parts = _sampler_parts(pairs[-2][1])
    if parts is None:  # the caller checked _split's rff
        raise RuntimeError("BanditPipeline: no compiled sampler step")
    return parts
