"""skbandit's off-policy estimators beside Open Bandit Pipeline's (OBP 0.5.7).

Two checks, printed as tables:

1. **Agreement.** On digits logged by ``SquareCB()`` (one pass, the log of
   skbandit's simulator) the greedy and exploration policies of a
   ``Banditron`` fitted on the labels (printed: the greedy policy's true
   accuracy, each evaluation's effective sample size, smallest propensity and
   largest weight) are evaluated by skbandit (IPS, SNIPS, DR with its
   cross-fitted ridge reward model, and IPS/DR with weights clipped at
   ``--clip``) and by OBP's ``InverseProbabilityWeighting``,
   ``SelfNormalizedInverseProbabilityWeighting`` and ``DoublyRobust`` (its
   ``lambda_`` is the same clipping) given skbandit's reward-model matrix
   (``OffPolicyResult.reward_predictions``). Printed: the largest absolute
   difference of the values.
2. **SNIPS intervals.** Over ``--reps`` seeded logs of ``--rounds`` rows drawn
   from half of digits, logged uniformly at random, the 95% SNIPS intervals of
   a ``Banditron`` fitted on the other half: skbandit's delta-method interval
   against OBP's bootstrap interval (``estimate_interval``, which resamples the
   terms ``w_i r_i / mean(w)`` with ``mean(w)`` held fixed), and how often
   each covers the policy's true accuracy on that half.

OBP 0.5.7 declares Python < 3.11 and pins NumPy 1.23 and scikit-learn 1.1, so
it is not one of skbandit's extras. Its estimators are plain NumPy; install it
beside skbandit without its dependencies (torch is only needed by its neural
policies, and a stand-in module is put in its place when torch is missing)::

    pip install --no-deps --ignore-requires-python --target /tmp/obp \\
        obp==0.5.7 seaborn pyyaml
    PYTHONPATH=/tmp/obp python benchmarks/compare_obp.py        # ~1 min
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import types
import warnings

import numpy as np
from sklearn.datasets import load_digits

from skbandit import BanditFeedback, Banditron, LoggedFeedback
from skbandit.evaluation import LowEffectiveSampleSizeWarning, off_policy_evaluation
from skbandit.evaluation._format import format_table
from skbandit.linear_model import SquareCB


def _stand_in_torch() -> None:
    """A module that answers any attribute, so that ``import obp`` works
    without torch (OBP's off-policy estimators do not use it)."""

    class _Meta(type):
        def __getattr__(cls, name):
            if name.startswith("__"):
                raise AttributeError(name)
            return _Meta(name, (_Any,), {})

    class _Any(metaclass=_Meta):
        def __init__(self, *args, **kwargs):
            pass

        def __call__(self, *args, **kwargs):
            return _Any()

        def __getattr__(self, name):
            if name.startswith("__"):
                raise AttributeError(name)
            return _Any()

    def module_getattr(name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Meta(name, (_Any,), {})

    for name in ("", ".nn", ".nn.functional", ".optim", ".utils", ".utils.data"):
        mod = types.ModuleType("torch" + name)
        mod.__getattr__ = module_getattr  # type: ignore[method-assign]
        mod.__path__ = []  # a package, so that submodules import
        sys.modules["torch" + name] = mod


def _import_obp():
    if importlib.util.find_spec("obp") is None:
        sys.exit("OBP is not installed: see this script's docstring")
    if importlib.util.find_spec("torch") is None:
        _stand_in_torch()
    from obp.ope import estimators

    return estimators


def agreement(est, clip: float) -> list[dict]:
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    feedback = BanditFeedback(y)
    SquareCB(random_state=0).partial_fit(X, feedback, classes=np.arange(10))
    logged = LoggedFeedback(
        feedback.actions_, feedback.rewards_, feedback.propensities_
    )
    target = Banditron(random_state=0).fit(X, y)
    print(f"true accuracy of the greedy policy: {np.mean(target.predict(X) == y):.3f}")
    rows = []
    for policy in ("greedy", "exploration"):
        for clip_at in (None, clip):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", LowEffectiveSampleSizeWarning)
                res = off_policy_evaluation(
                    target, X, logged, policy=policy, clip=clip_at, random_state=0
                )
            print(
                f"{policy}, clip={clip_at}: effective sample size "
                f"{res.effective_sample_size:.1f}, smallest propensity "
                f"{res.min_propensity:.3g}, largest weight {res.weights.max():.1f}"
            )
            if policy == "greedy":
                pi = np.eye(10)[target.predict(X)]
            else:
                pi = target.exploration_distribution(X)
            kw = {
                "reward": logged.rewards,
                "action": logged.actions.astype(int),
                "pscore": logged.propensities,
                "action_dist": pi[:, :, None],
            }
            lam = np.inf if clip_at is None else clip_at
            obp = {
                "ips": est.InverseProbabilityWeighting(lambda_=lam),
                "dr": est.DoublyRobust(lambda_=lam),
            }
            if clip_at is None:  # OBP's SNIPW has no clipping
                obp["snips"] = est.SelfNormalizedInverseProbabilityWeighting()
            H = res.reward_predictions[:, :, None]
            for method, estimator in obp.items():
                extra = {"estimated_rewards_by_reg_model": H} if method == "dr" else {}
                theirs = estimator.estimate_policy_value(**kw, **extra)
                rows.append(
                    {
                        "policy": policy,
                        "clip": "-" if clip_at is None else f"{clip_at:g}",
                        "method": method,
                        "skbandit": res[method].value,
                        "obp": theirs,
                        "abs diff": abs(res[method].value - theirs),
                    }
                )
    return rows


def snips_coverage(est, reps: int, n_rounds: int, n_boot: int) -> list[dict]:
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    rng = np.random.default_rng(0)
    order = rng.permutation(len(y))
    train, pool = order[: len(y) // 2], order[len(y) // 2 :]
    target = Banditron(random_state=0).fit(X[train], y[train])
    pred = target.predict(X[pool])
    true_value = float(np.mean(pred == y[pool]))
    pi_pool = np.eye(10)[pred]
    snipw = est.SelfNormalizedInverseProbabilityWeighting()
    covered = {"skbandit delta method": 0, "OBP bootstrap": 0}
    widths: dict[str, list[float]] = {m: [] for m in covered}
    for rep in range(reps):
        rows = rng.integers(0, len(pool), size=n_rounds)
        actions = rng.integers(0, 10, size=n_rounds)
        rewards = (actions == y[pool][rows]).astype(float)
        logged = LoggedFeedback(actions, rewards, np.full(n_rounds, 0.1))
        # the delta-method interval at every size (these uniform logs have an
        # effective sample size near 50, below the default threshold of 100)
        ours = off_policy_evaluation(
            target,
            X[pool][rows],
            logged,
            methods=["snips"],
            min_effective_sample_size=None,
        )["snips"]
        theirs = snipw.estimate_interval(
            reward=rewards,
            action=actions,
            pscore=np.full(n_rounds, 0.1),
            action_dist=pi_pool[rows][:, :, None],
            alpha=0.05,
            n_bootstrap_samples=n_boot,
            random_state=rep,
        )
        lo = theirs["95.0% CI (lower)"]
        hi = theirs["95.0% CI (upper)"]
        covered["skbandit delta method"] += ours.ci_low <= true_value <= ours.ci_high
        covered["OBP bootstrap"] += lo <= true_value <= hi
        widths["skbandit delta method"].append(ours.ci_high - ours.ci_low)
        widths["OBP bootstrap"].append(hi - lo)
    return [
        {
            "interval": m,
            "coverage": covered[m] / reps,
            "mean width": float(np.mean(widths[m])),
            "true value": true_value,
        }
        for m in covered
    ]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clip", type=float, default=10.0)
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=500)
    parser.add_argument("--bootstrap", type=int, default=1000)
    args = parser.parse_args(argv)
    est = _import_obp()
    rows = agreement(est, args.clip)
    print("Agreement on digits logged by SquareCB(), target Banditron():")
    print(
        format_table(rows, ["policy", "clip", "method", "skbandit", "obp", "abs diff"])
    )
    print(f"largest absolute difference: {max(r['abs diff'] for r in rows):.3g}")
    print()
    print(
        f"SNIPS 95% intervals over {args.reps} uniform logs of {args.rounds} rounds "
        f"(OBP: {args.bootstrap} bootstrap samples):"
    )
    cov = snips_coverage(est, args.reps, args.rounds, args.bootstrap)
    print(format_table(cov, ["interval", "coverage", "mean width", "true value"]))


if __name__ == "__main__":
    main()
