"""Docstring fragments the learners share: numpydoc blocks written once.

A learner's docstring holds a marker line ``    %(name)s`` where a fragment
goes; the class decorator :func:`shared_docs` puts the fragment there (a plain
text replacement: the rest of the docstring, LaTeX braces included, is left as
written).
"""

from __future__ import annotations

from typing import TypeVar

_T = TypeVar("_T", bound=type)

#: marker name -> numpydoc lines (4-space indented, as in a class docstring)
FRAGMENTS: dict[str, str] = {
    # Parameters: the passes of ``fit``
    "passes": """\
    max_iter : int, default=5
        Passes over the data in ``fit``. ``partial_fit`` always makes one.
    shuffle : bool, default=True
        Whether ``fit`` visits the rows in a new random order each pass.
        ``partial_fit`` always plays the rows in the given order.""",
    # Attributes: the input and the round count of every learner
    "seen": """\
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when X has string column names.
    t_ : int
        Rounds played so far.""",
    # Attributes: the passes of the last call
    "n_iter": """\
    n_iter_ : int
        Passes finished by the last call: ``max_iter`` for ``fit``, 1 for
        ``partial_fit`` (fewer when the call failed).""",
}


def shared_docs(cls: _T) -> _T:
    """Class decorator: replace each marker line ``    %(name)s`` of the
    docstring by ``FRAGMENTS[name]``; a marker without a fragment is an
    error (a typo would otherwise print as is)."""
    doc = cls.__doc__ or ""
    for name, text in FRAGMENTS.items():
        doc = doc.replace(f"    %({name})s", text)
    if "%(" in doc and ")s" in doc.split("%(", 1)[1].split("\n", 1)[0]:
        raise ValueError(f"{cls.__name__}: unknown docstring fragment in {doc!r}")
    cls.__doc__ = doc
    return cls
