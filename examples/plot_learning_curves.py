"""
=====================================================================
Bandit learners against scikit-learn's full-information classifiers
=====================================================================

A bandit learner plays one class per row and is told only whether it was right;
scikit-learn's online classifiers see the true label of every row. This example
streams SynNonSep (Kakade et al. 2008: 9 classes, 400 binary features, 5% of the
labels redrawn at random) through both kinds of learner with
:func:`skbandit.evaluation.compare` (progressive validation: every row is
predicted before it is learned) and plots the online error against the number
of rounds.

- skbandit's :class:`~skbandit.Banditron`, :class:`~skbandit.SOBA` (diagonal)
  and :class:`~skbandit.PNewtron` learn from **bandit feedback**, one round per
  row.
- scikit-learn's :class:`~sklearn.linear_model.Perceptron` and
  :class:`~sklearn.linear_model.SGDClassifier` (hinge and logistic loss) learn
  with **full information** from mini-batches of 500 rows: each chunk is
  predicted, then learned.
- :class:`~sklearn.linear_model.LogisticRegression` is not an online learner:
  fitted once on the whole stream, its error on that same stream is a batch
  reference line that no online learner is expected to reach.
"""

# %%
# The stream
# ----------
# 50,000 rounds keep the example fast; the papers play 10⁶ (see
# :doc:`/experiments`).
import matplotlib.pyplot as plt
from sklearn.linear_model import LogisticRegression, Perceptron, SGDClassifier

from skbandit import SOBA, Banditron, PNewtron
from skbandit.datasets import make_synnonsep
from skbandit.evaluation import compare, plot_learning_curves
from skbandit.exploration import EpsilonGreedy, Softmax

X, y = make_synnonsep(50_000, sparse=True, random_state=0)
print(X.shape, "non-zeros per row:", X.nnz / X.shape[0])

# %%
# Progressive validation
# ----------------------
# :func:`~skbandit.evaluation.compare` streams the same rows through every
# learner and returns the results as data. Each bandit learner plays at the
# best γ of the grid on this stream in the 50,000-round runs of
# :doc:`/experiments` (see :ref:`sphx_glr_auto_examples_plot_gamma_sweep.py`
# for the whole γ axis).
learners = {
    "Banditron (bandit)": Banditron(exploration=EpsilonGreedy(2**-5), random_state=0),
    "SOBA-diag (bandit)": SOBA(exploration=EpsilonGreedy(2**-5), random_state=0),
    "PNewtron (bandit)": PNewtron(exploration=Softmax(2**-11), random_state=0),
    "Perceptron (full info)": Perceptron(random_state=0),
    "SGD hinge (full info)": SGDClassifier(loss="hinge", random_state=0),
    "SGD log-loss (full info)": SGDClassifier(loss="log_loss", random_state=0),
}
results = compare(learners, X, y, chunk_size=500)
print(results)

# %%
# The batch reference
# -------------------
# A logistic regression fitted on all the rows at once, scored on the same
# rows: an optimistic floor for a linear model on this stream (the label noise
# alone costs about 4.4%).
batch = LogisticRegression(max_iter=300).fit(X, y)
batch_error = 1.0 - batch.score(X, y)
print(f"LogisticRegression (batch, in-sample) error: {batch_error:.4f}")

# %%
# Learning curves
# ---------------
# :func:`~skbandit.evaluation.plot_learning_curves` draws the cumulative
# mistakes divided by the rounds, on log-log axes. Bandit learners pay for
# exploration (an error of at least ``(k − 1)/k · γ``) and for learning from
# one bit per round; the full-information models learn from every label.
fig, ax = plt.subplots(figsize=(9, 4.5))
plot_learning_curves(results, ax=ax)
ax.axhline(batch_error, color="k", ls=":", label="LogisticRegression (batch)")
ax.legend(fontsize="small", loc="center left", bbox_to_anchor=(1.01, 0.5))
ax.set_title("SynNonSep: online error, bandit vs full information")
fig.tight_layout()
plt.show()
