"""
Live news recommendation with delayed feedback, then off-policy evaluation
==========================================================================

A news site shows each visitor one section (computers, recreation, science,
politics and religion, for sale, ...). The visitor clicks when the section is
the one of the article they came for, which the site never sees: it only logs
what it showed, whether it was clicked, and with which probability it had chosen
it. We simulate that loop from a labelled data set (20 Newsgroups posts grouped
into six sections; the click is ``1[shown section == true section]``):

* two bandit learners act on the traffic with ``sample_actions`` and learn the
  clicks with ``partial_fit(X, LoggedFeedback(...))``; the clicks of a batch
  of requests arrive one batch late (delayed feedback);
* afterwards, the first learner's logs are used to estimate, off-line, the
  value (click rate) of each learner's final greedy policy with the IPS,
  self-normalised IPS and doubly robust estimators, and the estimates are
  compared with the true values, which the simulation can compute from the
  labels.

The data: the Mini 20 Newsgroups copy in ``../shared/data`` beside the
repository when it is there (as in the tests and the documentation build), or
the file named by ``SKBANDIT_NEWS_TSV`` (a TSV file ``label<TAB>text``);
otherwise scikit-learn's 20 Newsgroups is downloaded (and cached) on the first
run.
"""

# %%
# The stream: posts as TF-IDF rows, labels as sections
# ----------------------------------------------------
import os
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import Ridge

from skbandit import Banditron, Gaptron, LoggedFeedback
from skbandit.datasets import fetch_20newsgroups
from skbandit.evaluation import off_policy_evaluation
from skbandit.exploration import EpsilonGreedy, GapMap

try:
    here = Path(__file__).resolve().parent
except NameError:  # run interactively
    here = Path.cwd()
local = here.parent.parent / "shared" / "data" / "mini_newsgroups.tsv.gz"
path = os.environ.get("SKBANDIT_NEWS_TSV") or (local if local.exists() else None)
news = fetch_20newsgroups(path=path)
SECTIONS = {"comp": "computers", "rec": "recreation", "sci": "science",
            "talk": "politics", "misc": "for sale", "alt": "religion",
            "soc": "religion"}  # fmt: skip
groups = np.asarray(news.target_names)[news.target]
y_all = np.array([SECTIONS[g.split(".")[0]] for g in groups])
X_all = TfidfVectorizer(min_df=2, sublinear_tf=True).fit_transform(news.data)

# Visitors arrive in random order; the site runs through the posts twice.
rng = np.random.default_rng(0)
order = np.concatenate([rng.permutation(len(y_all)) for _ in range(2)])
X, y = X_all[order], y_all[order]
sections = np.unique(y)
print(f"{X.shape[0]} requests, {X.shape[1]} features, sections: {sections.tolist()}")

# %%
# The live loop with delayed feedback
# -----------------------------------
# Requests come in batches of 50. The site acts on batch ``j`` with each
# learner's current policy; the clicks of batch ``j - 1`` arrive meanwhile and
# are learned then. The propensity logged with each shown section is the
# probability with which the learner chose it.
BATCH = 50
learners = {
    "Banditron": Banditron(exploration=EpsilonGreedy(0.2), random_state=0),
    "Gaptron (hinge)": Gaptron(loss="hinge", exploration=GapMap(0.2), random_state=0),
}
logs = {}
for name, learner in learners.items():
    shown = np.empty(len(y), dtype=sections.dtype)
    props = np.empty(len(y))
    starts = range(0, len(y), BATCH)
    waiting = None
    for start in starts:
        batch = slice(start, start + BATCH)
        first = start == 0
        shown[batch], props[batch] = learner.sample_actions(
            X[batch], classes=sections if first else None
        )
        if waiting is not None:  # the clicks of the previous batch arrive
            clicks = (shown[waiting] == y[waiting]).astype(float)
            learner.partial_fit(
                X[waiting], LoggedFeedback(shown[waiting], clicks, props[waiting])
            )
        waiting = batch
    clicks = (shown[waiting] == y[waiting]).astype(float)
    learner.partial_fit(
        X[waiting], LoggedFeedback(shown[waiting], clicks, props[waiting])
    )
    logs[name] = LoggedFeedback(shown, (shown == y).astype(float), props)
    print(f"{name}: online click rate {logs[name].rewards.mean():.3f}")

# %%
# Off-line evaluation on the Banditron's logs
# -------------------------------------------
# The final greedy policy of each learner is evaluated on the logs the
# Banditron collected (its exploration gives every section a propensity of at
# least ``gamma / 6``). The doubly robust estimator uses a ridge regression per
# section as its reward model, fitted by cross-fitting. The true value of a
# policy is its click rate on the logged requests, from the labels.
log = logs["Banditron"]
results, truths = {}, {}
for name, learner in learners.items():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results[name] = off_policy_evaluation(
            learner, X, log, reward_model=Ridge(alpha=1.0), random_state=0
        )
    truths[name] = float(np.mean(learner.predict(X) == y))
    print(results[name])
    print(f"true value: {truths[name]:.3f}\n")

# %%
# The figure: online click rates, then estimates against the truth
# ----------------------------------------------------------------
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
rounds = np.arange(1, len(y) + 1)
for name in learners:
    ax1.plot(rounds, np.cumsum(logs[name].rewards) / rounds, label=name)
ax1.set(xlabel="request", ylabel="cumulative click rate", title="Live loop")
ax1.legend()
methods = ["ips", "snips", "dr"]
for i, name in enumerate(learners):
    for j, m in enumerate(methods):
        e = results[name][m]
        x = i * (len(methods) + 1) + j
        err = [[e.value - e.ci_low], [e.ci_high - e.value]]
        label = m.upper() if i == 0 else None
        ax2.errorbar(x, e.value, yerr=err, fmt="o", color=f"C{j}", label=label)
    lo, hi = i * (len(methods) + 1) - 0.4, i * (len(methods) + 1) + len(methods) - 0.6
    ax2.hlines(truths[name], lo, hi, colors="k", label="true value" if i == 0 else None)
ax2.set_xticks([i * (len(methods) + 1) + 1 for i in range(len(learners))])
ax2.set_xticklabels([f"{n}\n(greedy)" for n in learners])
ax2.set(ylabel="click rate", title="Off-policy estimates (95% intervals)")
ax2.legend()
fig.tight_layout()
plt.show()
