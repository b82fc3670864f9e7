"""Data for bandit multiclass experiments: synthetic streams and real data sets.

Generators (no download):

- :func:`make_synsep`, :func:`make_synnonsep`: the SynSep / SynNonSep streams
  of Kakade, Shalev-Shwartz and Tewari (2008).
- :func:`make_separable_stream`: the strongly / weakly separable streams of
  Beygelzimer et al. (2019).

Loaders (download and cache like ``sklearn.datasets.fetch_*``, or read a local
copy given as ``path=...``): :func:`fetch_usps`, :func:`fetch_mnist`,
:func:`fetch_covtype`, :func:`fetch_20newsgroups`, :func:`fetch_rcv1_reuters4`.
:func:`get_data_home` is the cache folder.
"""

from skbandit.datasets._base import get_data_home
from skbandit.datasets._covtype import fetch_covtype
from skbandit.datasets._digits import fetch_mnist, fetch_usps
from skbandit.datasets._samples_generator import (
    make_separable_stream,
    make_synnonsep,
    make_synsep,
)
from skbandit.datasets._text import fetch_20newsgroups, fetch_rcv1_reuters4

__all__ = [
    "fetch_20newsgroups",
    "fetch_covtype",
    "fetch_mnist",
    "fetch_rcv1_reuters4",
    "fetch_usps",
    "get_data_home",
    "make_separable_stream",
    "make_synnonsep",
    "make_synsep",
]
