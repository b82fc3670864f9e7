"""The numpydoc blocks the learners share, filled by ``_docstring.fill_doc``.

A learner's class docstring holds the placeholder lines ``{passes}`` (in
Parameters), ``{features_in}`` and ``{n_iter}`` (in Attributes); the class
decorator :data:`learner_doc` puts the texts below there.
"""

from __future__ import annotations

from skbandit._docstring import FEATURES_IN, fill_doc

__all__ = ["N_ITER", "PASSES", "learner_doc"]

#: the passes of ``fit`` (Parameters)
PASSES = """\
max_iter : int, default=5
    Passes over the data in ``fit``. ``partial_fit`` always makes one.
shuffle : bool, default=True
    Whether ``fit`` visits the rows in a new random order each pass.
    ``partial_fit`` always plays the rows in the given order."""

#: the passes of the last call (Attributes)
N_ITER = """\
n_iter_ : int
    Passes finished by the last call: ``max_iter`` for ``fit``, 1 for
    ``partial_fit`` (fewer when the call failed)."""

#: the class decorator of the learners' docstrings
learner_doc = fill_doc(passes=PASSES, features_in=FEATURES_IN, n_iter=N_ITER)
