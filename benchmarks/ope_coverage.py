"""Coverage of skbandit's off-policy intervals on lopsided logs (issue 31).

For each setting, ``--reps`` logs are drawn from a known generating
distribution: a finite pool of labelled rows (drawn uniformly with
replacement), a deterministic target policy ``pi`` and a logging policy ``mu``
(rewards ``1[a = y]``). The true value ``V(pi)`` is computed exactly on the
pool, as the mean of ``sum_a pi(a|x) 1[a = y]``. Every log is evaluated twice
by ``evaluate_policy`` (IPS, SNIPS, and DR with the fixed reward model
``h = 1/2``):

* **normal**: ``min_effective_sample_size=None``, the normal-approximation
  intervals at every effective sample size (the behaviour before issue 31);
* **default**: the default rule: below an effective sample size of 100, the
  betting interval for IPS and SNIPS, no interval for DR.

Printed per setting: the median (10th-90th percentile) effective sample size,
the share of logs whose 95% interval covers ``V(pi)`` (with its binomial
standard error), the share of DR intervals withheld, and the median interval
widths. The settings:

* ``softmax-N``: the lopsided population of ``tests/test_off_policy.py``
  (a sharp softmax logging policy of another linear model mixed with 4%
  uniform exploration; 4 classes), logs of ``N`` rounds;
* ``wrong-class-N`` (``eps``): a logging policy putting ``1 - eps + eps/4``
  of its mass on a class the target never plays, ``eps/4`` on the others;
* ``digits-wrong-class``: the issue's case: digits (1,797 rows, 10 classes),
  the target is the greedy policy of a logistic regression fitted on the
  first 300 rows, the logging policy puts 99.1% of its mass on a wrong class
  (the class after the target's; ``eps = 0.01``), logs of 1,797 rounds
  (effective sample size about 2).

Usage (from the repository root; a few minutes with the default 500 logs)::

    python benchmarks/ope_coverage.py --reps 500 \\
        --json docs/results/off-policy-coverage/coverage.json \\
        > docs/results/off-policy-coverage/coverage.txt
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression

# the populations and the log sampler of the test suite (one definition)
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from test_off_policy import (  # noqa: E402
    _lopsided_logs,
    _lopsided_population,
    _wrong_class_population,
)

from skbandit.evaluation._format import format_table  # noqa: E402

METHODS = ("ips", "snips", "dr")


def _digits_wrong_class(eps: float = 0.01):
    """Digits, the greedy policy of a logistic regression fitted on the first
    300 rows, and a logging policy with ``1 - eps + eps / k`` of its mass on
    the class after the target's."""
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    k = 10
    model = LogisticRegression(max_iter=1000).fit(X[:300], y[:300])
    pi = np.eye(k)[model.predict(X)]
    mu = (1 - eps) * np.roll(pi, 1, axis=1) + eps / k
    return X, y, pi, mu


SETTINGS = {
    "softmax-250": (_lopsided_population, 250),
    "softmax-1000": (_lopsided_population, 1000),
    "softmax-4000": (_lopsided_population, 4000),
    "softmax-8000": (_lopsided_population, 8000),
    "wrong-class-300": (_wrong_class_population, 300),
    "wrong-class-4000": (_wrong_class_population, 4000),
    "wrong-class-12000": (_wrong_class_population, 12000),
    "wrong-class-2000 (eps 0.1)": (lambda: _wrong_class_population(eps=0.1), 2000),
    "wrong-class-4000 (eps 0.2)": (lambda: _wrong_class_population(eps=0.2), 4000),
    "digits-wrong-class": (_digits_wrong_class, 1797),
}


def _row(name, true_value, normal, default):
    ess = np.array([res.effective_sample_size for res in default])
    n_reps = len(default)
    row = {
        "setting": name,
        "true value": round(true_value, 4),
        "ess median": round(float(np.median(ess)), 1),
        "ess 10-90%": f"{np.percentile(ess, 10):.1f}-{np.percentile(ess, 90):.1f}",
    }
    for label, results in (("normal", normal), ("default", default)):
        for m in METHODS:
            estimates = [res[m] for res in results]
            given = [e for e in estimates if e.interval != "withheld"]
            if not given:
                row[f"{label} {m}"] = "withheld"
                continue
            rate = np.mean([e.covers(true_value) for e in given])
            se = np.sqrt(rate * (1 - rate) / len(given))
            withheld = n_reps - len(given)
            row[f"{label} {m}"] = f"{rate:.3f}±{se:.3f}" + (
                f" ({withheld} withheld)" if withheld else ""
            )
            row[f"{label} {m} width"] = round(
                float(np.median([e.ci_high - e.ci_low for e in given])), 3
            )
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=500, help="logs per setting")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--settings", nargs="*", default=list(SETTINGS))
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args(argv)
    rows = []
    start = time.perf_counter()
    for name in args.settings:
        make, n_rounds = SETTINGS[name]
        population = make()
        true_value, default = _lopsided_logs(population, n_rounds, args.reps, args.seed)
        _, normal = _lopsided_logs(
            population,
            n_rounds,
            args.reps,
            args.seed,
            min_effective_sample_size=None,
        )
        rows.append(_row(name, true_value, normal, default))
    print(
        f"95% intervals over {args.reps} logs per setting (seed {args.seed}); "
        "coverage ± its binomial standard error\n"
    )
    print(format_table(rows, ["setting", "true value", "ess median", "ess 10-90%"]))
    for label in ("normal", "default"):
        print(f"\n{label} rule: coverage of the intervals given (median width)")
        table = [
            {
                "setting": r["setting"],
                **{
                    m: r[f"{label} {m}"]
                    + (
                        f" ({r[f'{label} {m} width']})"
                        if f"{label} {m} width" in r
                        else ""
                    )
                    for m in METHODS
                },
            }
            for r in rows
        ]
        print(format_table(table, ["setting", *METHODS]))
    print(f"\n{time.perf_counter() - start:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
