r"""
==============================================
skbandit learners beside Vowpal Wabbit in coba
==============================================

`coba <https://github.com/vowpalwabbit/coba>`_ is a research harness for
contextual bandits: it runs learners on environments and records what they
play. :class:`~skbandit.integrations.coba.CobaLearner` makes any skbandit
learner a coba learner, and
:func:`~skbandit.integrations.coba.make_coba_environment` turns arrays
``(X, y)`` into a coba environment (classification with bandit feedback: reward
1 when the played action is the label). This example runs skbandit's
:class:`~skbandit.Banditron` and :class:`~skbandit.linear_model.SquareCB`
beside coba's Vowpal Wabbit learners (ε-greedy and SquareCB reductions of VW's
``--cb_explore_adf``) on two data sets, with coba's sequential (progressive)
evaluation.

**VW's features in coba.** coba's VW learners take ``features=(1, "a", "ax",
"axx")`` by default: a constant, the action's features (here the one-hot action),
the action crossed with the context, and the action crossed with the
**quadratic** interactions of the context with itself; the context alone
(``"x"``) is dropped, since it cannot change which action wins. The quadratic
term makes VW a much richer model than skbandit's linear learners, so each VW
learner also runs with ``features=(1, "a", "ax")`` (linear in the context, the
model class of skbandit's learners): the interactions change the ranking.

**Needs** coba, Vowpal Wabbit's Python package and matplotlib: ``pip install
"skbandit[coba]" vowpalwabbit matplotlib``, or the ``docs`` extra, which builds
this gallery (``pip install "skbandit[docs]"``). coba's VW learners import
``vowpalwabbit`` only when they run, and coba leaves a learner that fails out
of its results, so the example checks for it first.
"""

# %%
# The environments and the learners
# ---------------------------------
# Digits (1,797 images, 10 classes, pixels scaled to [0, 1]) in a shuffled
# order, and 2,000 rounds of the SynSep stream (sparse binary rows, 400
# features, 9 classes, separable). Sparse rows become dict contexts
# (``{"column": value}``), which VW reads natively; ``CobaLearner`` turns them
# into rows with its ``vectorizer``, here a ``DictVectorizer`` fitted on the 400
# column names (the default, a ``FeatureHasher`` of 2**16 columns, also works,
# at the cost of wider weights).
try:
    import vowpalwabbit  # noqa: F401  (coba's VW learners need it)
except ImportError:
    raise ImportError(
        "this example runs coba's Vowpal Wabbit learners, which need vowpalwabbit: "
        'pip install vowpalwabbit (or pip install "skbandit[docs]")'
    ) from None
import coba
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.feature_extraction import DictVectorizer

from skbandit import Banditron
from skbandit.datasets import make_synsep
from skbandit.integrations.coba import CobaLearner, make_coba_environment
from skbandit.linear_model import SquareCB

X, y = load_digits(return_X_y=True)
order = np.random.default_rng(0).permutation(len(y))
X_syn, y_syn = make_synsep(2000, sparse=True, random_state=0)
environments = coba.Environments(
    [
        *make_coba_environment(X[order] / 16.0, y[order], name="digits"),
        *make_coba_environment(X_syn, y_syn, name="SynSep"),
    ]
)

columns = DictVectorizer().fit([{str(j): 1.0 for j in range(X_syn.shape[1])}])
linear = (1, "a", "ax")
learners = {
    "skbandit Banditron()": CobaLearner(Banditron(random_state=0), vectorizer=columns),
    "skbandit SquareCB()": CobaLearner(SquareCB(random_state=0), vectorizer=columns),
    "VW epsilon, default features": coba.VowpalEpsilonLearner(),
    "VW epsilon, linear features": coba.VowpalEpsilonLearner(features=linear),
    "VW squarecb, default features": coba.VowpalSquarecbLearner(),
    "VW squarecb, linear features": coba.VowpalSquarecbLearner(features=linear),
}
names = list(learners)

# %%
# The experiment
# --------------
# One process, coba's default seed. ``interactions`` has one row per
# (environment, learner, round) with the played action, its probability and
# the reward.
result = coba.Experiment(environments, list(learners.values())).run(
    quiet=True, processes=1
)
frame = result.interactions.to_pandas()
env_names = ["digits", "SynSep"]

print("mean reward (1 - online error of the played action)")
table = frame.groupby(["learner_id", "environment_id"])["reward"].mean().unstack()
for i, name in enumerate(names):
    cells = "  ".join(f"{table.loc[i, e]:.3f}" for e in range(len(env_names)))
    print(f"{name:32s} {cells}")
print(f"{'':32s} {'  '.join(f'{e:>5s}' for e in env_names)}")

# %%
# Learning curves
# ---------------
# The running mean of the reward. On digits VW's learners gain much from their
# default quadratic features, and skbandit's linear ``SquareCB`` is still ahead
# of all four VW runs (0.770 against 0.729 for VW's SquareCB with quadratic
# features, one seed); on the separable SynSep it leads whatever the features
# (where the quadratic terms only slow VW's ε-greedy learner down).
fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
styles = ["-", "-", "--", ":", "--", ":"]
colors = ["C0", "C1", "C2", "C2", "C3", "C3"]
for e, ax in enumerate(axes):
    for i, name in enumerate(names):
        rows = frame[(frame.environment_id == e) & (frame.learner_id == i)]
        rewards = rows.sort_values("index")["reward"].to_numpy(dtype=float)
        running = np.cumsum(rewards) / np.arange(1, rewards.size + 1)
        ax.plot(running, styles[i], color=colors[i], label=name)
    ax.set_title(f"{env_names[e]}: running mean reward")
    ax.set_xlabel("round")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
axes[0].set_ylabel("mean reward so far")
axes[1].legend(loc="lower right", fontsize=8)
fig.tight_layout()
plt.show()
