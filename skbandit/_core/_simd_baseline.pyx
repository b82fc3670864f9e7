"""The hot loops that are compiled twice, here built once for the baseline
x86-64 only (tests only).

Where the compiler can choose at load time (GCC and Clang on x86-64 with
glibc), ``_scores.h``'s ``SKB_CLONES`` compiles the shared class scores
(``skb_linear_scores``), the random Fourier features of a row
(``skb_rff_row``, ``_rff.h``) and the loops of the regression oracle's step
(``_oracle_step.h``) twice, for SSE2 and for AVX2, and the processor
picks one when a module loads. This module is built with ``SKB_NO_CLONES``
(meson.build), so its functions are the baseline build whatever the
processor: ``tests/test_simd_clones.py`` compares them bit for bit with the
package's own (``_scans.py_linear_scores``, ``_feature_map.rff_rows``,
``_oracle.py_oracle_step_loops``: the same Cython, included from
``_linear_scores.pxi``, ``_rff_rows.pxi`` and ``_oracle_step.pxi``),
which run the AVX2 clone on a processor that has AVX2.
"""

from libc.math cimport sqrt

from skbandit._core._kernel cimport skb_linear_scores
from skbandit._core._oracle_step cimport oracle_denominators, oracle_moves
from skbandit._core._rff cimport rff_row

import numpy as np


include "_linear_scores.pxi"


include "_rff_rows.pxi"


include "_oracle_step.pxi"
