"""Bridges to the tools bandit researchers already use.

- :mod:`skbandit.integrations.coba`: any skbandit learner as a learner of the
  `coba <https://github.com/vowpalwabbit/coba>`_ research harness
  (:class:`~skbandit.integrations.coba.CobaLearner`), and coba environments
  built from arrays (:func:`~skbandit.integrations.coba.make_coba_environment`).
  Needs the optional extra ``coba`` (``pip install "skbandit[coba]"``).

The submodules import their third-party package when imported, not when
:mod:`skbandit` is.
"""

__all__: list[str] = []
