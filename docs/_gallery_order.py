"""The order of the gallery: named examples first, any others after by name."""

from __future__ import annotations

ORDER = [
    "plot_learning_curves.py",
    "plot_gamma_sweep.py",
    "plot_separable.py",
    "plot_nonlinear.py",
    "plot_text_classification.py",
    "plot_live_recommendation.py",
    "plot_out_of_core.py",
]


class GalleryOrder:
    """sphinx-gallery ``within_subsection_order`` key (named by string in conf)."""

    def __init__(self, src_dir: str) -> None:
        self.src_dir = src_dir

    def __call__(self, filename: str) -> tuple[int, str]:
        rank = ORDER.index(filename) if filename in ORDER else len(ORDER)
        return rank, filename

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"
