"""
====================================================
Text classification from bandit feedback: TF-IDF
====================================================

A news site shows each post under one topic and learns only whether the reader
accepted it. This example puts skbandit's learners at the end of a scikit-learn
:class:`~sklearn.pipeline.Pipeline` after a
:class:`~sklearn.feature_extraction.text.TfidfVectorizer`, trains them on the
20 Newsgroups posts with bandit feedback (``fit`` wraps the labels in a
:class:`~skbandit.BanditFeedback`, so a learner never sees more than one bit per
round), and compares their accuracy on held-out posts with scikit-learn's
full-information :class:`~sklearn.linear_model.Perceptron`.

The data is the *mini* 20 Newsgroups (2,000 posts, 100 per newsgroup), read
from the local copy beside the repository when there is one (as on this
project's machines and CI); elsewhere :func:`skbandit.datasets.fetch_20newsgroups`
downloads the full 18,846 posts (and the example takes a little longer).
"""

# %%
# The posts
# ---------
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import Perceptron
from sklearn.pipeline import make_pipeline

from skbandit import (
    SOBA,
    BanditFeedback,
    Banditron,
    ConservativeOneVsAll,
    MulticlassPerceptron,
)
from skbandit.datasets import fetch_20newsgroups
from skbandit.exploration import EpsilonGreedy

try:
    here = Path(__file__).resolve().parent
except NameError:  # run interactively
    here = Path.cwd()
local = here.parent.parent / "shared" / "data" / "mini_newsgroups.tsv.gz"
news = fetch_20newsgroups(
    path=local if local.exists() else None, shuffle=True, random_state=0
)
n_train = int(0.8 * len(news.data))
docs_train, docs_test = news.data[:n_train], news.data[n_train:]
y_train, y_test = news.target[:n_train], news.target[n_train:]
print(f"{len(news.data):,} posts, {len(news.target_names)} newsgroups")

# %%
# Pipelines
# ---------
# The vectorizer is fitted on the training posts; the learner then makes
# ``max_iter`` passes over them. With 20 classes a bandit learner that guesses
# wrong learns only that one topic was not the right one, so it needs more
# passes than a full-information learner.
learners = {
    "Banditron (γ = 0.3)": Banditron(
        exploration=EpsilonGreedy(0.3), max_iter=20, random_state=0
    ),
    "SOBA-diag (γ = 0.3)": SOBA(
        exploration=EpsilonGreedy(0.3), max_iter=20, random_state=0
    ),
    "Conservative OVA, PA": ConservativeOneVsAll(max_iter=20, random_state=0),
    "MulticlassPerceptron (full info)": MulticlassPerceptron(
        max_iter=20, random_state=0
    ),
    "sklearn Perceptron (full info)": Perceptron(max_iter=20, random_state=0),
}
accuracy = {}
for name, learner in learners.items():
    pipe = make_pipeline(TfidfVectorizer(sublinear_tf=True, min_df=2), learner)
    pipe.fit(docs_train, y_train)
    accuracy[name] = pipe.score(docs_test, y_test)
    print(f"{name:<34} test accuracy {accuracy[name]:.3f}")

# %%
# Held-out accuracy
# -----------------
# Uniform guessing scores 1/20. After 20 passes the bandit learners, told one
# bit per post and pass, come close to the full-information Perceptrons, and
# the conservative one-vs-all learner (Chen et al. 2009), which learns from
# every round without an exploration rate, matches them on this split (one
# split and one seed: differences of a point or two are noise on 400 posts).
fig, ax = plt.subplots(figsize=(7, 3.5))
names = list(accuracy)
colors = ["C0" if "full info" not in n else "C7" for n in names]
ax.barh(names, [accuracy[n] for n in names], color=colors)
ax.axvline(1 / len(news.target_names), color="k", ls=":", label="uniform guess")
ax.invert_yaxis()
ax.set_xlabel("accuracy on the held-out 20% of the posts")
ax.set_xlim(0, 1)
ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False)
for i, n in enumerate(names):
    ax.text(accuracy[n] + 0.01, i, f"{accuracy[n]:.2f}", va="center")
fig.tight_layout()
plt.show()

# %%
# What the learner was told
# -------------------------
# ``partial_fit`` with an explicit :class:`~skbandit.BanditFeedback` keeps the
# log of the revealed bits: on one pass over the training posts, the fraction
# of rounds whose played topic was accepted.

vectorizer = TfidfVectorizer(sublinear_tf=True, min_df=2).fit(docs_train)
feedback = BanditFeedback(y_train)
clf = ConservativeOneVsAll(random_state=0)
clf.partial_fit(vectorizer.transform(docs_train), feedback, classes=np.arange(20))
print("accepted on the first pass:", feedback.rewards_.mean().round(3))
