"""Type aliases of the public API (used in annotations only)."""

from __future__ import annotations

from typing import TypeAlias

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

__all__ = ["ArrayLike", "MatrixLike", "RandomStateLike"]

#: Rows of a stream: anything ``numpy.asarray`` accepts, or a sparse matrix.
MatrixLike: TypeAlias = ArrayLike | sp.spmatrix | sp.sparray

#: ``random_state`` of the estimators and generators.
RandomStateLike: TypeAlias = int | np.random.Generator | np.random.RandomState | None
