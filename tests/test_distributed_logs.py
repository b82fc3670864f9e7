"""Logs at scale: off-policy evaluation over Dask collections, learning from Parquet.

The Dask estimates must be the in-memory ones (``evaluate_policy`` on the
whole log, DR with the partitions as folds) to 1e-12, computed on a real
``distributed.LocalCluster`` (threads, in-process: fast). The doubly robust
reward model is checked against scikit-learn's ``Ridge`` fitted on the other
folds directly. ``learn_from_parquet`` must give the learner of one in-memory
``partial_fit``, byte for byte, also when resumed from a checkpoint. dask,
distributed and pyarrow are in the ``tests`` extra: missing, these tests skip
on a developer's machine and fail under ``CI=true``.
"""

from __future__ import annotations

import pickle
import sys

import numpy as np
import pytest
from conftest import _on_ci
from sklearn.linear_model import Ridge

from skbandit import SOBA, Banditron, LoggedFeedback
from skbandit.evaluation import (
    LogCheckpoint,
    LowEffectiveSampleSizeWarning,
    cross_fit_ridge_predictions,
    dask_off_policy_evaluation,
    evaluate_policy,
    learn_from_parquet,
    parquet_files,
)
from skbandit.exploration import EpsilonGreedy

try:
    import dask
    import dask.array as da
    import dask.dataframe as dd
    import distributed
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq
except ImportError:  # pragma: no cover - depends on the environment
    if _on_ci():
        raise
    pytestmark = pytest.mark.skip(reason='needs the dask extra: pip install ".[dask]"')

N, D, K = 3000, 4, 3
CLASSES = np.arange(K)
METHODS = ("ips", "snips", "dr")
FEATURES = [f"x{j}" for j in range(D)]


def _log(n=N, seed=0):
    """Contexts, labels and an epsilon-greedy-like logging policy's rounds."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, D))
    y = np.argmax(X[:, :K] + 0.3 * rng.standard_normal((n, K)), axis=1)
    # a non-uniform logging policy: action 0 favoured
    prob = np.array([0.5, 0.3, 0.2])
    a = rng.choice(K, size=n, p=prob)
    r = (a == y).astype(float)
    return X, y, LoggedFeedback(a, r, prob[a])


def _policies(X, y):
    first = Banditron(exploration=EpsilonGreedy(0.2), random_state=0)
    second = SOBA(random_state=1)
    first.fit(X[:500], y[:500])
    second.fit(X[:300], y[:300])

    def softmax(Z):
        scores = Z[:, :K] * 2.0
        e = np.exp(scores - scores.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    return {"banditron": first, "soba": second, "softmax": softmax}


def _frame(X, logged):
    frame = pd.DataFrame(X, columns=FEATURES)
    frame["action"] = logged.actions
    frame["reward"] = logged.rewards
    frame["propensity"] = logged.propensities
    return frame


def _proba(policy, X):
    from skbandit.evaluation._off_policy import _target_proba

    return (
        _target_proba(policy, X, "greedy") if hasattr(policy, "predict") else policy(X)
    )


def _in_memory(policies, X, logged, folds, **kw):
    """The reference: evaluate_policy on the whole log, DR folds = ``folds``."""
    H = cross_fit_ridge_predictions(X, logged, CLASSES, folds)
    return {
        name: evaluate_policy(
            _proba(p, X), logged, CLASSES, reward_predictions=H, name=name, **kw
        )
        for name, p in policies.items()
    }


def _assert_same(results, reference, tol=1e-12):
    assert list(results) == list(reference)
    for name, ref in reference.items():
        got = results[name]
        assert got.n_rounds == ref.n_rounds
        assert got.n_clipped == ref.n_clipped
        assert got.min_propensity == ref.min_propensity
        np.testing.assert_allclose(
            got.effective_sample_size, ref.effective_sample_size, rtol=tol
        )
        for method in METHODS:
            g, r = got[method], ref[method]
            for attr in ("value", "std_error", "ci_low", "ci_high"):
                np.testing.assert_allclose(
                    getattr(g, attr), getattr(r, attr), rtol=tol, atol=tol
                )


@pytest.fixture(scope="module")
def client():
    """A real LocalCluster: two single-threaded in-process workers."""
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=False,
            dashboard_address=None,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


@pytest.fixture(scope="module")
def parquet_log(tmp_path_factory):
    """The log as a directory of daily Parquet files (5 days, uneven sizes)."""
    X, y, logged = _log()
    root = tmp_path_factory.mktemp("logs")
    bounds = [0, 500, 1100, 1900, 2400, N]
    for day, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:], strict=True)):
        sl = slice(lo, hi)
        frame = _frame(
            X[sl],
            LoggedFeedback(
                logged.actions[sl], logged.rewards[sl], logged.propensities[sl]
            ),
        )
        path = root / f"day={day}"
        path.mkdir()
        pq.write_table(
            pa.Table.from_pandas(frame, preserve_index=False),
            path / "part-0.parquet",
            row_group_size=170,
        )
    folds = np.repeat(np.arange(5), np.diff(bounds))
    return root, X, y, logged, folds


# --------------------------------------------------------------------------
# off-policy evaluation over Dask collections
# --------------------------------------------------------------------------
def test_parquet_on_a_cluster_equals_in_memory(client, parquet_log):
    # IPS, SNIPS and DR of three policies in one call, from dd.read_parquet on
    # the cluster: the in-memory estimates with the days as DR folds.
    root, X, y, logged, folds = parquet_log
    frame = dd.read_parquet(str(root))
    assert frame.npartitions == 5
    assert "day" in frame.columns  # the hive partitioning's column: not a feature
    policies = _policies(X, y)
    results = dask_off_policy_evaluation(policies, frame, feature_columns=FEATURES)
    _assert_same(results, _in_memory(policies, X, logged, folds))


def test_dask_arrays_with_clipping_equal_in_memory(client):
    X, y, logged = _log()
    chunks = (400, 900, 700, 1000)
    folds = np.repeat(np.arange(4), chunks)
    dX = da.from_array(X, chunks=(chunks, 2))  # column chunks are merged
    vectors = tuple(
        da.from_array(v, chunks=250)  # rechunked like X's rows
        for v in (logged.actions, logged.rewards, logged.propensities)
    )
    policies = _policies(X, y)
    results = dask_off_policy_evaluation(policies, dX, vectors, clip=2.0)
    reference = _in_memory(policies, X, logged, folds, clip=2.0)
    assert reference["softmax"].n_clipped > 0  # the clip is exercised
    _assert_same(results, reference)


def test_exploration_policy_and_feature_columns(client):
    X, y, logged = _log()
    frame = _frame(X, logged)
    frame.insert(0, "request_id", np.arange(N))  # not a feature
    learner = _policies(X, y)["banditron"]
    ddf = dd.from_pandas(frame, npartitions=3, sort=False)
    sizes = ddf.map_partitions(len).compute().to_numpy()
    results = dask_off_policy_evaluation(
        {"b": learner},
        ddf,
        feature_columns=FEATURES,
        policy="exploration",
    )
    H = cross_fit_ridge_predictions(X, logged, CLASSES, np.repeat(range(3), sizes))
    pi = learner.exploration_distribution(X)
    reference = {"b": evaluate_policy(pi, logged, CLASSES, reward_predictions=H)}
    _assert_same(results, reference)
    assert results["b"].policy == "exploration"


def test_same_numbers_on_any_scheduler(client, parquet_log):
    # The reduction tree is fixed: one cluster of two workers, the
    # synchronous scheduler and the threaded one give the same bits.
    root, X, y, logged, folds = parquet_log
    policies = _policies(X, y)
    frame = dd.read_parquet(str(root))
    on_cluster = dask_off_policy_evaluation(policies, frame, feature_columns=FEATURES)
    for scheduler in ("sync", "threads"):
        with dask.config.set(scheduler=scheduler):
            local = dask_off_policy_evaluation(
                policies, frame, feature_columns=FEATURES
            )
        assert [r.to_dict() for r in local.values()] == [
            r.to_dict() for r in on_cluster.values()
        ]


def test_every_policy_in_one_pass():
    # Each partition is loaded once for IPS and SNIPS of all the policies,
    # and twice with DR (its reward model is fitted first).
    X, y, logged = _log()
    frame = _frame(X, logged)
    loads = []

    def load(i):
        loads.append(i)
        return frame.iloc[i * 1000 : (i + 1) * 1000]

    ddf = dd.from_delayed([dask.delayed(load)(i) for i in range(3)], meta=frame[:0])
    policies = _policies(X, y)
    with dask.config.set(scheduler="sync"):
        dask_off_policy_evaluation(policies, ddf, methods=("ips", "snips"))
        assert sorted(loads) == [0, 1, 2]
        loads.clear()
        dask_off_policy_evaluation(policies, ddf)
    assert sorted(loads) == [0, 0, 1, 1, 2, 2]


def test_ridge_cross_fitting_is_sklearn_ridge_on_the_other_folds():
    # The statistics-based ridge against scikit-learn's Ridge fitted on the
    # rows of the other folds, per action. Action 2 is logged in fold 0 only:
    # fold 0's model has no row of it and predicts the mean reward of the
    # other folds (evaluate_policy's rule). Action 1's reward is constant:
    # Ridge predicts its mean.
    X, y, logged = _log(n=600, seed=3)
    folds = np.repeat(np.arange(3), 200)
    actions = logged.actions.copy()
    actions[(folds != 0) & (actions == 2)] = 0
    rewards = np.where(actions == 1, 0.25, logged.rewards)
    logged = LoggedFeedback(actions, rewards, logged.propensities)
    H = cross_fit_ridge_predictions(X, logged, CLASSES, folds, alpha=0.5)
    for f in range(3):
        test = folds == f
        for a in range(K):
            train = (folds != f) & (actions == a)
            if not train.any():
                expected = np.full(test.sum(), rewards[folds != f].mean())
            else:
                model = Ridge(alpha=0.5).fit(X[train], rewards[train])
                expected = model.predict(X[test])
            np.testing.assert_allclose(H[test, a], expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(H[:, 1], 0.25, rtol=1e-12)
    assert not np.any(actions[folds != 0] == 2)  # the no-row case is exercised


def test_low_effective_sample_size_warns_per_policy(client):
    X, y, logged = _log(n=400)

    def rare(Z):  # always the least logged action
        pi = np.zeros((Z.shape[0], K))
        pi[:, 2] = 1.0
        return pi

    ddf = dd.from_pandas(_frame(X, logged), npartitions=2, sort=False)
    with pytest.warns(LowEffectiveSampleSizeWarning, match="'rare'"):
        results = dask_off_policy_evaluation(
            {"rare": rare},
            ddf,
            classes=CLASSES,
            methods=("ips",),
            min_effective_sample_size=1000,
        )
    assert results["rare"].effective_sample_size < 1000
    # below the threshold no normal interval is given (as in evaluate_policy),
    # and the betting interval needs the rounds in order: withheld, with why
    est = results["rare"]["ips"]
    assert est.interval == "withheld" and "logged order" in est.reason
    assert np.isnan(est.ci_low) and np.isnan(est.ci_high) and np.isfinite(est.value)


def test_bad_input_is_named():
    X, y, logged = _log(n=400)
    ddf = dd.from_pandas(_frame(X, logged), npartitions=2, sort=False)
    policies = _policies(X, y)
    with pytest.raises(ValueError, match=r"columns \['clicked'\] are not in"):
        dask_off_policy_evaluation(policies, ddf, reward_column="clicked")
    with pytest.raises(TypeError, match="logged must be the tuple"):
        dask_off_policy_evaluation(policies, da.from_array(X, chunks=100))
    with pytest.raises(TypeError, match="must be a Dask DataFrame"):
        dask_off_policy_evaluation(policies, X)
    with pytest.raises(ValueError, match="classes is needed"):
        dask_off_policy_evaluation({"f": policies["softmax"]}, ddf)
    other = Banditron().fit(X[:100], y[:100] + 1)
    with pytest.raises(ValueError, match="same classes"):
        dask_off_policy_evaluation({"a": policies["soba"], "b": other}, ddf)
    single = dd.from_pandas(_frame(X, logged), npartitions=1)
    with pytest.raises(ValueError, match="at least 2 partitions"):
        dask_off_policy_evaluation(policies, single)
    with pytest.raises(ValueError, match="alpha must be a positive number"):
        dask_off_policy_evaluation(policies, ddf, alpha=0)


@pytest.mark.parametrize(
    "module", ["dask", "pyarrow"], ids=["dask-missing", "pyarrow-missing"]
)
def test_missing_extra_names_it(monkeypatch, tmp_path, module):
    X, y, logged = _log(n=200)
    monkeypatch.setitem(sys.modules, module, None)  # import fails
    with pytest.raises(ImportError, match=r"skbandit\[dask\]"):
        if module == "dask":
            dask_off_policy_evaluation(_policies(X, y), object())
        else:
            learn_from_parquet(Banditron(), tmp_path)


# --------------------------------------------------------------------------
# learning from Parquet
# --------------------------------------------------------------------------
def _learner():
    return Banditron(exploration=EpsilonGreedy(0.1), random_state=0)


@pytest.mark.parametrize("read_ahead", [True, False])
def test_learning_from_parquet_is_one_in_memory_pass(parquet_log, read_ahead):
    root, X, y, logged, folds = parquet_log
    reference = _learner().partial_fit(X, logged, classes=CLASSES)
    learned = learn_from_parquet(
        _learner(), root, classes=CLASSES, read_ahead=read_ahead
    )
    assert learned.t_ == N
    assert pickle.dumps(learned) == pickle.dumps(reference)


@pytest.mark.parametrize("read_ahead", [True, False])
def test_row_groups_read_in_several_batches(
    parquet_log, tmp_path, monkeypatch, read_ahead
):
    # Row groups of 170 rounds read in batches of 64, 64 and 42: every round
    # is learned once, in order, and positions count whole row groups.
    import skbandit.evaluation._parquet as parquet_module

    monkeypatch.setattr(parquet_module, "_BATCH_ROWS", 64)
    root, X, y, logged, folds = parquet_log
    reference = _learner().partial_fit(X, logged, classes=CLASSES)
    checkpoint = tmp_path / "ckpt.pkl"
    partial = learn_from_parquet(
        _learner(), root, classes=CLASSES, checkpoint=checkpoint, max_row_groups=4,
        read_ahead=read_ahead,
    )  # fmt: skip
    state = LogCheckpoint.load(checkpoint)
    assert state.position == (1, 1)
    assert state.n_rounds == partial.t_ == 500 + 170
    resumed = learn_from_parquet(
        _learner(), root, classes=CLASSES, checkpoint=checkpoint,
        read_ahead=read_ahead,
    )  # fmt: skip
    assert pickle.dumps(resumed) == pickle.dumps(reference)
    assert LogCheckpoint.load(checkpoint).position == (5, 0)


def test_resume_from_a_checkpoint_mid_way(parquet_log, tmp_path):
    # Stop inside the second file, resume with a fresh learner: the same
    # bytes as one pass; the checkpoint records the position and rounds.
    root, X, y, logged, folds = parquet_log
    reference = _learner().partial_fit(X, logged, classes=CLASSES)
    checkpoint = tmp_path / "ckpt.pkl"
    partial = learn_from_parquet(
        _learner(), root, classes=CLASSES, checkpoint=checkpoint, max_row_groups=4
    )
    state = LogCheckpoint.load(checkpoint)
    assert state.position == (1, 1)  # day 0 has 3 row groups of <= 170 rows
    assert state.n_rounds == partial.t_ == 500 + 170
    np.testing.assert_array_equal(
        partial.coef_,
        _learner().partial_fit(X[:670], logged[:670], classes=CLASSES).coef_,
    )
    resumed = learn_from_parquet(
        _learner(), root, classes=CLASSES, checkpoint=checkpoint, checkpoint_every=3
    )
    assert pickle.dumps(resumed) == pickle.dumps(reference)
    assert LogCheckpoint.load(checkpoint).position == (5, 0)


def test_a_changed_log_or_learner_refuses_the_checkpoint(parquet_log, tmp_path):
    root, X, y, logged, folds = parquet_log
    files = parquet_files(root)
    copy = tmp_path / "copy"
    copy.mkdir()
    for i, f in enumerate(files):
        (copy / f"{i}.parquet").write_bytes(f.read_bytes())
    checkpoint = tmp_path / "ckpt.pkl"
    learn_from_parquet(
        _learner(), copy, classes=CLASSES, checkpoint=checkpoint, max_row_groups=4
    )
    with pytest.raises(ValueError, match="holds a Banditron, not a SOBA"):
        learn_from_parquet(SOBA(), copy, classes=CLASSES, checkpoint=checkpoint)
    pq.write_table(pq.read_table(copy / "0.parquet").slice(0, 100), copy / "0.parquet")
    with pytest.raises(ValueError, match="missing or changed"):
        learn_from_parquet(_learner(), copy, classes=CLASSES, checkpoint=checkpoint)


def test_files_are_learned_in_sorted_path_order(tmp_path):
    # Written newest first: learning follows the sorted names, the log order.
    X, y, logged = _log(n=600)
    for day in (2, 1, 0):
        sl = slice(200 * day, 200 * (day + 1))
        frame = _frame(X[sl], logged[sl])
        frame.to_parquet(tmp_path / f"2024-01-0{day + 1}.parquet", index=False)
    reference = _learner().partial_fit(X, logged, classes=CLASSES)
    learned = learn_from_parquet(_learner(), tmp_path, classes=CLASSES)
    assert pickle.dumps(learned) == pickle.dumps(reference)
