"""
=========================================================
The serving loop: deploy, log, learn, evaluate, redeploy
=========================================================

A deployed bandit learner runs as a loop. A fleet of replicas acts on live
traffic with a *snapshot* of the learner (``sample_actions``: an action and
its propensity per request, nothing learned); each replica writes its logged
rounds ``(x, a, r, p)``; the logs are merged and the learner learns from them
(``partial_fit`` with a :class:`~skbandit.LoggedFeedback`); before the new
snapshot is deployed, its value is estimated off-policy on logs it has not
learned from; then it replaces the old one.

This example runs that loop on a local Dask cluster: the replicas are Dask
tasks, the logs are Parquet files (one per replica and epoch), learning reads
them out of core with :func:`~skbandit.evaluation.learn_from_parquet`, and
:func:`~skbandit.evaluation.dask_off_policy_evaluation` estimates the deployed
and the candidate policies in one pass over the held-out logs. It needs the
``dask`` extra (``pip install "skbandit[dask]"``). The same code runs on a real
cluster: pass a scheduler address to ``distributed.Client``, and put the logs
on storage every worker can read.
"""

# %%
# Traffic, and the replicas of the fleet
# --------------------------------------
# The traffic is a synthetic recommendation problem: each request has 10
# features and one of 5 items is the one the user clicks (reward 1, else 0).
# A replica sees requests, acts with its snapshot and logs what it did; the
# click is revealed to it, never the best item. Each replica routes a random
# 20% of its requests to a *hold-out* log that the learner never learns from:
# the off-policy estimates of a candidate use those rounds only.
#
# A snapshot is the pickled learner: each replica unpickles its own copy
# (acting moves a copy's serving cursor, so replicas must not share one
# object). The replicas' copies hold the same generator: their uniforms
# coincide, which correlates their draws across replicas but leaves every
# logged propensity exact (each action was drawn with the logged probability).
import pickle
import shutil
import tempfile
from pathlib import Path

import dask.dataframe as dd
import distributed
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from skbandit import Banditron
from skbandit.evaluation import dask_off_policy_evaluation, learn_from_parquet
from skbandit.exploration import EpsilonGreedy

N_FEATURES, CLASSES = 10, np.arange(5)
W_TRUE = np.random.default_rng(42).standard_normal((N_FEATURES, CLASSES.size))
N_REPLICAS, REQUESTS, N_EPOCHS = 2, 4_000, 6
LOGS = Path(tempfile.mkdtemp())


def traffic(epoch, replica):
    """The requests a replica receives in an epoch, and the item each user
    would click (the environment: hidden from the learner)."""
    rng = np.random.default_rng([epoch, replica])
    X = rng.standard_normal((REQUESTS, N_FEATURES))
    clicked = np.argmax(X @ W_TRUE + 0.5 * rng.gumbel(size=(REQUESTS, 5)), axis=1)
    return X, clicked, rng.random(REQUESTS) < 0.2


def serve(snapshot, epoch, replica):
    """One replica's epoch: act with its copy of the snapshot, log to Parquet."""
    policy = pickle.loads(snapshot)
    X, clicked, holdout = traffic(epoch, replica)
    fitted = hasattr(policy, "classes_")
    actions, propensities = policy.sample_actions(
        X, classes=None if fitted else CLASSES
    )
    log = pd.DataFrame(X, columns=[f"x{j}" for j in range(N_FEATURES)])
    log["action"] = actions
    log["reward"] = (actions == clicked).astype(float)
    log["propensity"] = propensities
    for part, rows in (("learn", ~holdout), ("holdout", holdout)):
        folder = LOGS / f"epoch={epoch:02d}" / part
        folder.mkdir(parents=True, exist_ok=True)
        log[rows].to_parquet(folder / f"replica={replica:02d}.parquet", index=False)
    return float(log["reward"].mean())


# %%
# The loop
# --------
# Each epoch: deploy the snapshot to the replicas (Dask tasks), wait for their
# logs, learn a candidate from the merged ``learn`` logs (the replicas' files
# in order), estimate the deployed and the candidate policies on the hold-out
# logs (their *exploration* policies: how each will act when deployed), and
# deploy the candidate. The first deployment is an untrained learner.
cluster = distributed.LocalCluster(
    n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
)
client = distributed.Client(cluster)

learner = Banditron(exploration=EpsilonGreedy(0.1), random_state=0)
history = []
for epoch in range(N_EPOCHS):
    snapshot = pickle.dumps(learner)
    online = client.gather(
        client.map(
            serve,
            [snapshot] * N_REPLICAS,
            [epoch] * N_REPLICAS,
            range(N_REPLICAS),
            pure=False,
        )
    )
    candidate = pickle.loads(snapshot)
    learn_from_parquet(
        candidate, LOGS / f"epoch={epoch:02d}" / "learn", classes=CLASSES
    )
    held_out = dd.read_parquet(str(LOGS / f"epoch={epoch:02d}" / "holdout"))
    policies = {"deployed": pickle.loads(snapshot), "candidate": candidate}
    if epoch == 0:  # the first snapshot has never been fitted: no policy yet
        policies = {"candidate": candidate}
    estimates = dask_off_policy_evaluation(
        policies, held_out, policy="exploration", methods=("snips", "dr")
    )
    row = {"epoch": epoch, "online": float(np.mean(online))}
    for name, result in estimates.items():
        row[name] = result["dr"].value
        row[f"{name}_low"], row[f"{name}_high"] = (
            result["dr"].ci_low,
            result["dr"].ci_high,
        )
    history.append(row)
    deployed = f"deployed {row['deployed']:.3f}, " if "deployed" in row else ""
    print(
        f"epoch {epoch}: online click rate {row['online']:.3f}; DR estimates on "
        f"{estimates['candidate'].n_rounds} held-out rounds: {deployed}candidate "
        f"{row['candidate']:.3f} [{row['candidate_low']:.3f}, "
        f"{row['candidate_high']:.3f}]"
    )
    learner = candidate  # deploy

client.close()
cluster.close()
shutil.rmtree(LOGS)

# %%
# Did the estimates predict the deployments?
# ------------------------------------------
# The candidate learned at the end of epoch ``e`` is deployed in epoch ``e +
# 1``: its off-policy estimate (doubly robust, with its 95% interval) should
# match the click rate the fleet then measures online.
history = pd.DataFrame(history)
fig, ax = plt.subplots(figsize=(7, 4))
ax.plot(history["epoch"], history["online"], "o-", label="online click rate (measured)")
ax.errorbar(
    history["epoch"] + 1,
    history["candidate"],
    yerr=[
        history["candidate"] - history["candidate_low"],
        history["candidate_high"] - history["candidate"],
    ],
    fmt="s",
    capsize=4,
    label="candidate, DR estimate before deployment",
)
ax.set_xlabel("epoch (deployment)")
ax.set_ylabel("click rate")
ax.set_title("Deploy, log, learn, evaluate, redeploy")
ax.legend(loc="lower right")
fig.tight_layout()
plt.show()

# %%
# The loop at scale
# -----------------
# Nothing above holds a whole log in one process: the replicas write their
# own files, :func:`~skbandit.evaluation.learn_from_parquet` reads each row
# group in record batches of at most 65,536 rounds (and resumes from a
# ``checkpoint=`` after a failure), and
# :func:`~skbandit.evaluation.dask_off_policy_evaluation` reduces each
# partition to a few sufficient statistics on the workers. See
# :doc:`/logs_at_scale` for the formulas and the measured throughput.
