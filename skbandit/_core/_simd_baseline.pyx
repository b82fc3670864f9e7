"""The hot loops that are compiled twice, here built once for the baseline
x86-64 only (tests only).

Where the compiler can choose at load time (GCC and Clang on x86-64 with
glibc), ``_scores.h``'s ``SKB_CLONES`` compiles the shared class scores
(``skb_linear_scores``) and the random Fourier features of a row
(``skb_rff_row``, ``_rff.h``) twice, for SSE2 and for AVX2, and the processor
picks one when a module loads. This module is built with ``SKB_NO_CLONES``
(meson.build), so its two functions are the baseline build whatever the
processor: ``tests/test_simd_clones.py`` compares them bit for bit with the
package's own (``_scans.py_linear_scores``, ``_feature_map.rff_rows``: the
same Cython, included from ``_linear_scores.pxi`` and ``_rff_rows.pxi``),
which run the AVX2 clone on a processor that has AVX2.
"""

from libc.math cimport sqrt

from skbandit._core._kernel cimport skb_linear_scores
from skbandit._core._rff cimport rff_row

import numpy as np


include "_linear_scores.pxi"


include "_rff_rows.pxi"
