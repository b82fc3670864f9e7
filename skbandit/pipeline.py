"""Feature maps in front of a bandit learner, online: ``BanditPipeline``
(defined in ``skbandit._pipeline``, exported at the top level too) and
``make_bandit_pipeline``, which names the steps as scikit-learn's
``make_pipeline`` does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skbandit._pipeline import BanditPipeline

if TYPE_CHECKING:
    from skbandit._typing import RandomStateLike

__all__ = ["BanditPipeline", "make_bandit_pipeline"]


def make_bandit_pipeline(
    *steps: Any,
    max_iter: int = 5,
    shuffle: bool = True,
    random_state: RandomStateLike = None,
) -> BanditPipeline:
    """A ``BanditPipeline`` of the given estimators, named by their lowercased
    class names (numbered when repeated), as ``sklearn.pipeline.make_pipeline``.

    Parameters
    ----------
    *steps : estimators
        Transformers, then a skbandit bandit learner.
    max_iter, shuffle, random_state
        As in ``BanditPipeline``.

    Returns
    -------
    pipeline : BanditPipeline
        The unfitted pipeline.
    """
    names = [type(est).__name__.lower() for est in steps]
    counts = {n: names.count(n) for n in names}
    seen: dict[str, int] = {}
    named = []
    for n, est in zip(names, steps, strict=True):
        if counts[n] > 1:
            seen[n] = seen.get(n, 0) + 1
            n = f"{n}-{seen[n]}"
        named.append((n, est))
    return BanditPipeline(
        named, max_iter=max_iter, shuffle=shuffle, random_state=random_state
    )
