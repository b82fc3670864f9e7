"""
=====================================================
Streaming a data set larger than memory, in chunks
=====================================================

Online learners never need the whole data set at once: ``partial_fit`` takes
one chunk of rows after another. This example writes a stream to a file on
disk, then learns from it through a memory map, one chunk at a time, and
measures what Python allocates while it does. The file here is small (76 MiB) so
that the example runs in seconds; nothing below depends on its size.

Two skbandit guarantees make chunked learning safe:

- **stream invariance**: each learner owns its random generator and uses two
  uniforms per round, so feeding a stream in chunks gives *exactly* the result
  of one call (checked below);
- **the failure guarantee**: a chunk that fails validation changes nothing, so a
  long job can skip a bad chunk and go on.
"""

# %%
# A stream on disk
# ----------------
# SynNonSep rows are 0/1, so the file stores them as ``uint8``. It is written
# chunk by chunk into a ``.npy`` memory map; a real pipeline would write it from
# its logs or read a CSV with ``pandas.read_csv(..., chunksize=...)``.
import shutil
import tempfile
import tracemalloc
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from skbandit import SOBA, BanditFeedback, Banditron
from skbandit.datasets import make_synnonsep
from skbandit.evaluation import progressive_validation
from skbandit.exploration import EpsilonGreedy

n_rounds, chunk = 200_000, 2_000
X_source, y_source = make_synnonsep(n_rounds, sparse=True, random_state=0)

folder = Path(tempfile.mkdtemp())
X_file = np.lib.format.open_memmap(
    folder / "X.npy", mode="w+", dtype=np.uint8, shape=X_source.shape
)
for lo in range(0, n_rounds, chunk):
    X_file[lo : lo + chunk] = X_source[lo : lo + chunk].toarray()
X_file.flush()
np.save(folder / "y.npy", y_source)
del X_file, X_source
print(f"{(folder / 'X.npy').stat().st_size / 2**20:.0f} MiB on disk")

# %%
# Learning chunk by chunk
# -----------------------
# ``np.load(..., mmap_mode="r")`` reads rows only when a chunk is sliced. Each
# chunk gets its own :class:`~skbandit.BanditFeedback` (the environment for
# those rows); ``classes`` is needed on the first call only. We record the
# online error so far and the peak memory that Python allocated for the chunk.
X = np.load(folder / "X.npy", mmap_mode="r")
y = np.load(folder / "y.npy", mmap_mode="r")
classes = np.arange(9)

clf = Banditron(exploration=EpsilonGreedy(2**-5), random_state=0)
rounds, online_error, peak_mib = [], [], []
tracemalloc.start()
for lo in range(0, n_rounds, chunk):
    tracemalloc.reset_peak()
    X_chunk = np.asarray(X[lo : lo + chunk], dtype=np.float64)
    clf.partial_fit(X_chunk, BanditFeedback(y[lo : lo + chunk]), classes=classes)
    peak_mib.append(tracemalloc.get_traced_memory()[1] / 2**20)
    rounds.append(clf.t_)
    online_error.append(clf.n_mistakes_ / clf.t_)
tracemalloc.stop()
print(f"online error after {clf.t_:,} rounds: {online_error[-1]:.4f}")
print(f"largest peak per chunk: {max(peak_mib):.1f} MiB")

# %%
# One call or many: the same learner
# ----------------------------------
# The randomness contract makes the chunked run identical, bit for bit, to one
# ``partial_fit`` over the same rows (here the first 20,000, which fit in
# memory easily).
head = np.asarray(X[:20_000], dtype=np.float64)
one_call = Banditron(exploration=EpsilonGreedy(2**-5), random_state=0).partial_fit(
    head, y[:20_000], classes=classes
)
chunked = Banditron(exploration=EpsilonGreedy(2**-5), random_state=0)
for lo in range(0, 20_000, chunk):
    chunked.partial_fit(head[lo : lo + chunk], y[lo : lo + chunk], classes=classes)
assert np.array_equal(one_call.coef_, chunked.coef_)
assert one_call.n_mistakes_ == chunked.n_mistakes_
print("chunked == one call:", np.array_equal(one_call.coef_, chunked.coef_))

# %%
# The library does the same loop
# ------------------------------
# :func:`skbandit.evaluation.progressive_validation` slices its input chunk by
# chunk, so it streams a memory map as it is (each chunk is converted to
# float64 when the learner validates it).
soba = progressive_validation(
    SOBA(exploration=EpsilonGreedy(2**-7), random_state=0),
    X,
    y,
    chunk_size=chunk,
    checkpoints=40,
)
print(soba)

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
after_first = soba.rounds >= chunk
ax1.plot(rounds, online_error, label="Banditron, hand-written loop")
ax1.plot(
    soba.rounds[after_first],
    soba.mistakes[after_first] / soba.rounds[after_first],
    "o-",
    ms=3,
    label="SOBA-diag, progressive_validation",
)
ax1.set_xscale("log")
ax1.set_xlabel("rounds")
ax1.set_ylabel("online error")
ax1.legend(fontsize="small")
ax1.set_title("Learning from a memory-mapped file")
ax2.step(np.array(rounds) / 1_000, peak_mib, where="post", label="peak per chunk")
ax2.axhline(
    (folder / "X.npy").stat().st_size / 2**20, color="k", ls=":", label="file size"
)
ax2.set_ylim(0, None)
ax2.set_xlabel("thousands of rounds")
ax2.set_ylabel("peak MiB allocated for the chunk")
ax2.legend(fontsize="small", loc="center right")
ax2.set_title(f"Memory per {chunk:,}-row chunk")
fig.tight_layout()
plt.show()

# %%
# The peak per chunk stays flat (the float64 copy of one chunk and the
# learner's work arrays), however long the file. Clean up:

del X, y
shutil.rmtree(folder)
