"""Shared docstring fragments: one text for a parameter several functions take.

A docstring line holding only ``{name}`` (any indentation) is replaced by the
fragment ``name``, each of its lines indented like the placeholder; every
other brace of the docstring is left alone. This is the pattern of
``matplotlib._docstring.interpd`` and ``pandas.util._decorators.Substitution``,
kept to whole lines so that the source still reads as a numpydoc docstring.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from typing import TypeVar

__all__ = ["DISTRIBUTION_SECTIONS", "FEATURES_IN", "ROUND_COUNTS", "X_ROWS", "fill_doc"]

#: the fitted attributes of the input's width and column names
FEATURES_IN = """\
n_features_in_ : int
    Number of features seen during fit.
feature_names_in_ : ndarray of shape (`n_features_in_`,)
    Names of features seen during fit, when X has string column names."""

#: the round counters every bandit learner keeps
ROUND_COUNTS = """\
t_ : int
    Rounds played so far.
n_mistakes_ : int
    Rounds whose played action was not rewarded (online error
    ``n_mistakes_ / t_``).
n_greedy_mistakes_ : int
    Rounds whose greedy action was wrong (bookkeeping only)."""

#: the rows a method reads without learning
X_ROWS = """\
X : {array-like, sparse matrix} of shape (n_samples, n_features)
    Rows."""

#: the Parameters and Returns of ``exploration_distribution``
DISTRIBUTION_SECTIONS = f"""\
Parameters
----------
{X_ROWS}

Returns
-------
proba : ndarray of shape (n_samples, n_classes)
    Rows sum to one; columns in ``classes_`` order."""

_F = TypeVar("_F", bound=Callable)
_PLACEHOLDER = re.compile(r"^([ \t]*)\{(\w+)\}[ \t]*$", re.MULTILINE)


def fill_doc(**fragments: str) -> Callable[[_F], _F]:
    """Decorator replacing the docstring lines ``{name}`` by ``fragments[name]``.

    Parameters
    ----------
    **fragments : str
        The texts, by placeholder name; each is dedented, then indented like
        its placeholder line.

    Returns
    -------
    decorate : callable
        Sets the ``__doc__`` of the function or class it decorates and returns
        it. A placeholder without a fragment raises ``KeyError`` at import.

    Examples
    --------
    >>> from skbandit._docstring import fill_doc
    >>> @fill_doc(seed="seed : int\\n    The seed.")
    ... def f(seed):
    ...     '''Do it.
    ...
    ...     Parameters
    ...     ----------
    ...     {seed}
    ...     '''
    >>> print(f.__doc__.splitlines()[-3:-1])
    ['    seed : int', '        The seed.']
    """
    texts = {
        name: textwrap.dedent(text).strip("\n") for name, text in fragments.items()
    }

    def replace(match: re.Match) -> str:
        indent, name = match.groups()
        if name not in texts:
            raise KeyError(f"fill_doc: no fragment for the placeholder {{{name}}}")
        return textwrap.indent(texts[name], indent)

    def decorate(obj: _F) -> _F:
        if obj.__doc__:
            obj.__doc__ = _PLACEHOLDER.sub(replace, obj.__doc__)
        return obj

    return decorate
