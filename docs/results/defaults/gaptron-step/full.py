"""Gaptron with full information: the theory's step against the default step.

Usage: python full.py [DATA_DIR]  (prints the table and writes full.txt beside
this script; under a minute)

One pass, seeds 0-2, online error (%) of ``Gaptron(feedback="full")`` with
``learning_rate="auto"`` (the full-information step 2 ln 2 / (k X^2)), the AdaGrad-norm
step with B = 1, and the default AdaGrad-norm step (B = 1024), on the streams
of ``run.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from run import HELD_OUT, TUNING, stream

from skbandit import Gaptron
from skbandit.experiments._specs import upgrade_params

SETTINGS = {
    "learning_rate=auto": {"learning_rate": "auto"},
    "adagrad B=1": {"learning_rate": "adagrad", "adagrad_scale": 1.0},
    "adagrad B=1024 (default)": {"learning_rate": "adagrad", "adagrad_scale": 1024.0},
}


def main(data_dir):
    lines = ["stream".ljust(20) + "".join(s.rjust(26) for s in SETTINGS)]
    for name in TUNING + HELD_OUT:
        X, y = stream(name, data_dir)
        cells = []
        for params in SETTINGS.values():
            errors = []
            for seed in range(3):
                # (recorded under the names of the time: translated)
                est = Gaptron(feedback="full", random_state=seed)
                est.set_params(**upgrade_params("Gaptron", params))
                est.partial_fit(X, y, classes=np.unique(y))
                errors.append(100 * est.n_mistakes_ / est.t_)
            cells.append(f"{np.mean(errors):.1f}".rjust(26))
        lines.append(name.ljust(20) + "".join(cells))
        print(lines[-1], flush=True)
    Path(__file__).with_name("full.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/data")
