"""Fingerprints of every learner's plays and final state at its defaults.

Each learner, at its default parameters (``random_state`` aside), plays one
pass of ``partial_fit`` over a fixed stream, dense and CSR; the script prints,
per learner and input, the SHA-256 of the played actions and propensities
(the feedback log) and of the final state arrays (``_state_attrs``, in
declaration order, as raw float64/int64 bytes), then of ``predict``,
``decision_function`` and ``exploration_distribution`` on 50 rows, of the state
after learning a uniform log (``LoggedFeedback``) and after ``fit`` (two
passes). Run it with two versions of the
library (e.g. this checkout and the environment ``compare_release.py
--workdir`` keeps for ``main``) and compare the outputs: a refactoring that
must keep the default behaviour bit for bit prints the same lines.

    python benchmarks/defaults_fingerprint.py > after.txt
    /tmp/prev/venv/bin/python benchmarks/defaults_fingerprint.py > before.txt
    diff before.txt after.txt
"""

from __future__ import annotations

import argparse
import hashlib
import warnings

import numpy as np
import scipy.sparse as sp

import skbandit
from skbandit import BanditFeedback, LoggedFeedback, OffPolicyWarning


def _stream(n: int, d: int, k: int, seed: int):
    """Rows in [0, 1] with 70% zeros and labels of a noisy linear rule."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, d)) * (rng.random((n, d)) < 0.3)
    W = rng.normal(size=(k, d))
    y = np.argmax(X @ W.T + 0.3 * rng.normal(size=(n, k)), axis=1)
    return X, y


def _learners():
    """Every public estimator (``skbandit.__all__``), so a new learner is covered."""
    for name in skbandit.__all__:
        obj = getattr(skbandit, name)
        if isinstance(obj, type) and hasattr(obj, "partial_fit"):
            yield name, obj


def _digest(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(str(a.dtype).encode() + str(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()[:16]


def _state(est) -> str:
    return _digest(*(np.asarray(getattr(est, a)) for a in est._state_attrs))


def _logged(cls, data, y, classes, seed: int) -> str:
    """The state after learning 500 rounds of a uniform log (``LoggedFeedback``;
    "-" for a full-information learner, which refuses logs)."""
    n = min(500, data.shape[0])
    actions = np.random.default_rng(seed).integers(0, len(classes), size=n)
    rewards = (actions == y[:n]).astype(float)
    logged = LoggedFeedback(actions, rewards, np.full(n, 1.0 / len(classes)))
    est = cls(random_state=seed)
    try:
        with warnings.catch_warnings():  # the log is off-policy by design
            warnings.simplefilter("ignore", OffPolicyWarning)
            est.partial_fit(data[:n], logged, classes=classes)
    except TypeError:
        return "-"
    return _state(est)


def _fit(cls, data, y, seed: int) -> str:
    """The state after ``fit`` (two shuffled passes over 1,000 rows)."""
    est = cls(random_state=seed, max_iter=2)
    est.fit(data[:1000], y[:1000])
    return _state(est)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n-rounds", type=int, default=3000)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    X, y = _stream(args.n_rounds, 20, 5, args.seed)
    # rows of norm <= 1: the separable learner's rational kernel needs it
    X = X / np.sqrt(X.shape[1])
    classes = np.arange(5)
    for name, cls in _learners():
        for kind, data in (("dense", X), ("csr", sp.csr_matrix(X))):
            est = cls(random_state=args.seed)
            fb = BanditFeedback(y)
            est.partial_fit(data, fb, classes=classes)
            plays = _digest(fb.actions_, fb.propensities_)
            state = _state(est)
            head = data[:50]
            scores = _digest(
                est.predict(head),
                est.decision_function(head),
                est.exploration_distribution(head),
            )
            print(
                f"{name:22s} {kind:5s} plays {plays} state {state} "
                f"mistakes {est.n_mistakes_} scores {scores} "
                f"logged {_logged(cls, data, y, classes, args.seed)} "
                f"fit {_fit(cls, data, y, args.seed)}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
