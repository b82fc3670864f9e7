"""Mutation audit: plant one-line bugs, one at a time, and see whether the tests fail.

Each mutant changes one line of one source file of the package (a comparison
flipped, an operator swapped, an off-by-one, a ``min`` for a ``max``, ...).
For every mutant the audit applies it, runs the area's targeted test files
(``AREAS``) and records whether they failed (the mutant is *caught*); with
``--full`` the survivors are run once more against the whole default suite.
The file is restored after each mutant, whatever happens.

Mutants come from two sources:

* ``NAMED``: bugs written by hand (each a ``(file, old, new)`` replacement of
  one occurrence), among them the bugs an earlier audit found the suite let
  through;
* generated ones: ``--per-area N`` lines drawn (seeded, ``--seed``) among the
  code lines of an area's files where an operator of ``OPERATORS`` applies,
  one operator each. Docstrings, comments, blank lines, imports, raising
  lines and lines inside ``if TYPE_CHECKING`` are never mutated.

A survivor is not necessarily a gap: the mutant may be *equivalent* (it
changes no behaviour). List those in ``EQUIVALENT`` (by mutant id) with the
reason; they are reported apart and left out of the rate.

Run it in a checkout whose package is installed editable (compiled files are
rebuilt on the next import, which makes a ``.pyx`` mutant take longer)::

    python tools/mutation_audit.py --list                  # the mutants, no run
    python tools/mutation_audit.py --per-area 6 --json out.json
    python tools/mutation_audit.py --areas off_policy selector --full

Never run it in a checkout with uncommitted changes to the mutated files: it
refuses to start if ``git diff`` shows any.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: area -> (source files, targeted test files)
AREAS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "kernels": (
        (
            "skbandit/linear_model/_banditron_fast.pyx",
            "skbandit/linear_model/_bandit_pa_fast.pyx",
            "skbandit/multiclass/_pa.pxd",
            "skbandit/linear_model/_gaptron_fast.pyx",
            "skbandit/linear_model/_soba_fast.pyx",
            "skbandit/linear_model/_pnewtron_fast.pyx",
            "skbandit/linear_model/_perceptron_fast.pyx",
            "skbandit/multiclass/_conservative_ova_fast.pyx",
            "skbandit/multiclass/_offset_tree_fast.pyx",
            "skbandit/multiclass/_separable_ova_fast.pyx",
        ),
        (
            "tests/test_reference.py",
            "tests/test_averaging.py",
            "tests/test_soba.py",
            "tests/test_gaptron.py",
            "tests/test_bandit_pa.py",
            "tests/test_offset_tree.py",
            "tests/test_ova.py",
        ),
    ),
    "selector": (
        (
            "skbandit/multiclass/_selector.py",
            "skbandit/multiclass/_candidates.py",
            "skbandit/multiclass/_selector_fast.pyx",
        ),
        ("tests/test_selector.py",),
    ),
    "exploration": (
        (
            "skbandit/exploration.py",
            "skbandit/_exploration_rules.py",
            "skbandit/_core/_explore.pyx",
            "skbandit/_core/_explore.pxd",
        ),
        ("tests/test_exploration.py", "tests/test_tie_marginal.py"),
    ),
    "squarecb": (
        (
            "skbandit/linear_model/_squarecb.py",
            "skbandit/linear_model/_squarecb_fast.pyx",
            "skbandit/_core/_oracle.pyx",
        ),
        ("tests/test_squarecb.py", "tests/test_oracle.py"),
    ),
    "off_policy": (
        (
            "skbandit/evaluation/_off_policy.py",
            "skbandit/evaluation/_ope_checks.py",
            "skbandit/evaluation/_ope_intervals.py",
            "skbandit/evaluation/_ope_results.py",
        ),
        ("tests/test_off_policy.py",),
    ),
    "coba": (("skbandit/integrations/coba.py",), ("tests/test_coba.py",)),
    "validation": (
        ("skbandit/_base/_validation.py", "skbandit/_base/_rows.py"),
        (
            "tests/test_validation.py",
            "tests/test_input_canonical.py",
            "tests/test_hardening.py",
        ),
    ),
    "rollback": (
        ("skbandit/_base/_transaction.py",),
        ("tests/test_rollback.py", "tests/test_one_row_calls.py"),
    ),
    "feedback": (
        ("skbandit/feedback.py",),
        (
            "tests/test_logged.py",
            "tests/test_protocol.py",
            "tests/test_label_leak.py",
            # the log's rollback (``_truncate_log``) on a failed call
            "tests/test_rollback.py",
        ),
    ),
    "progressive": (
        (
            "skbandit/evaluation/_progressive.py",
            "skbandit/evaluation/_progressive_results.py",
            "skbandit/evaluation/_format.py",
        ),
        ("tests/test_evaluation.py",),
    ),
    "datasets": (
        ("skbandit/datasets/_samples_generator.py",),
        ("tests/test_datasets.py",),
    ),
    "live": (
        ("skbandit/live.py", "skbandit/_live_hooks.py", "skbandit/_core/_live.pyx"),
        ("tests/test_live_session.py", "tests/test_base_checks.py"),
    ),
    "union": (
        ("skbandit/_core/_feature_map.pyx", "skbandit/_compiled_maps.py"),
        ("tests/test_pipeline_union.py", "tests/test_pipeline.py"),
    ),
}

#: Hand-written mutants: id -> (file, old text, new text); ``old`` must occur
#: exactly once in the file. The first group are the bugs an audit of the
#: previous round found the full suite let through (issue 31).
NAMED: dict[str, tuple[str, str, str]] = {
    "live:reuse-act-on-other-entries": (
        "skbandit/_core/_live.pyx",
        "        if x.nnz == 0:\n            return True\n        if memcmp(",
        "        return True\n        if memcmp(",
    ),
    "live:reuse-act-of-another-round": (
        "skbandit/_core/_live.pyx",
        "if not self.memo or t != self.mt or u1 != self.mu1 or u2 != self.mu2:",
        "if not self.memo:",
    ),
    "live:hook-after-act-unseen": (
        "skbandit/live.py",
        "                live.forget()  # (the hook may change what ``act`` returns)\n",
        "",
    ),
    "live:bind-reuses-other-values": (
        "skbandit/_core/_live.pyx",
        "and memcmp(val, &self.mraw[0], self.d * sizeof(double)) == 0):",
        "):",
    ),
    "live:compaction-rewritten-record-kept": (
        "skbandit/_core/_live.pyx",
        "            self.memo = False  # (cval/cind are rewritten)",
        "            pass",
    ),
    "live:record-past-a-descriptor": (
        "skbandit/_live_hooks.py",
        "        dicts.append(obj.__dict__ if plain else None)",
        "        dicts.append(obj.__dict__)",
    ),
    "union:weights-swapped": (
        "skbandit/_core/_feature_map.pyx",
        "                self.z[e] = row[e] * self.lin_weight",
        "                self.z[e] = row[e] * self.rff_weight",
    ),
    "union:raw-row-beside-the-features": (
        "skbandit/_core/_feature_map.pyx",
        "                    self.factor, zr)\n            row = out",
        "                    self.factor, zr)\n            row = self.x_values(x)",
    ),
    "union:csr-row-not-densified": (
        "skbandit/_core/_feature_map.pyx",
        "            if self.n_lin:\n                self.dense_x(x)\n",
        "",
    ),
    "union:rff-weight-ignored": (
        "skbandit/_core/_feature_map.pyx",
        "        if self.rff_weight != 1.0:",
        "        if False:",
    ),
    "union:weight-not-checked": (
        "skbandit/_compiled_maps.py",
        "or not isfinite(w):",
        ":",
    ),
    "union:fitted-passthrough-unrecognised": (
        "skbandit/_compiled_maps.py",
        "type(lin) is FunctionTransformer and lin.func is None",
        "False",
    ),
    "squarecb:oracle-move-reassociated": (
        "skbandit/_core/_oracle_step.h",
        "tbuf[j] = (rate * (e * val[j])) / qbuf[j];",
        "tbuf[j] = ((rate * e) * val[j]) / qbuf[j];",
    ),
    "squarecb:oracle-unmoved-entries-subtracted": (
        "skbandit/_core/_oracle.pyx",
        "            if q[e] > 0.0:\n                w[e * s] = w[e * s] - v[e]",
        "            w[e * s] = w[e * s] - v[e]",
    ),
    "selector:value-by-squared-weights": (
        "skbandit/multiclass/_selector.py",
        "w = self.ips_weights_[0]",
        "w = self.ips_weights_[1]",
    ),
    "off_policy:clip-only-if-several": (
        "skbandit/evaluation/_off_policy.py",
        "    if clip is not None:\n        n_clipped",
        "    if clip is not None and np.count_nonzero(w > clip) > 1:\n"
        "        n_clipped",
    ),
    "off_policy:n-clipped-counts-equal": (
        "skbandit/evaluation/_off_policy.py",
        "n_clipped = int(np.count_nonzero(w > clip))",
        "n_clipped = int(np.count_nonzero(w >= clip))",
    ),
    "off_policy:rows-below-one-accepted": (
        "skbandit/evaluation/_ope_checks.py",
        "off = np.abs(sums - 1.0) > _SUM_TOL",
        "off = sums - 1.0 > _SUM_TOL",
    ),
    "progressive:greedy-from-played": (
        "skbandit/evaluation/_progressive.py",
        '"greedy_mistakes": int(estimator.n_greedy_mistakes_ - g0),',
        '"greedy_mistakes": int(estimator.n_mistakes_ - m0),',
    ),
    "feedback:truncate-one-too-many": (
        "skbandit/feedback.py",
        "tuple(a[:n_rounds] for a in logged)",
        "tuple(a[: max(n_rounds - 1, 0)] for a in logged)",
    ),
    "feedback:propensity-length-unchecked": (
        "skbandit/feedback.py",
        "if rewards.shape[0] != n or propensities.shape[0] != n:",
        "if rewards.shape[0] != n:",
    ),
    "coba:duplicates-not-summed": (
        "skbandit/integrations/coba.py",
        "        X.sum_duplicates()\n",
        "",
    ),
    "coba:actions-by-identity": (
        "skbandit/integrations/coba.py",
        "a is b or _equal(a, b) for a, b",
        "a is b for a, b",
    ),
    "coba:dict-keys-not-strings": (
        "skbandit/integrations/coba.py",
        "{str(k): v for k, v in context.items()}",
        "dict(context)",
    ),
    # -- issue 33: the same bugs planted before and after the redesign --------
    "kernels:banditron-twice-when-wrong": (
        "skbandit/linear_model/_banditron_fast.pyx",
        "if reward != 0.0 and played == greedy:",
        "if reward != 0.0:",
    ),
    "kernels:banditron-average-weight": (
        "skbandit/linear_model/_banditron_fast.pyx",
        "cdef double before = <double>(t - 1)",
        "cdef double before = <double>t",
    ),
    "kernels:pa-norm-factor": (
        "skbandit/linear_model/_bandit_pa_fast.pyx",
        "c = v * v + 1.0",
        "c = v * v",
    ),
    "kernels:pa2-halved-slack": (
        "skbandit/multiclass/_pa.pxd",
        "return loss / (sq + 1.0 / (2.0 * C))",
        "return loss / (sq + 1.0 / C)",
    ),
    "kernels:pa1-clip-flipped": (
        "skbandit/multiclass/_pa.pxd",
        "if tau > C:",
        "if tau < C:",
    ),
    "kernels:gaptron-no-importance-weight": (
        "skbandit/linear_model/_gaptron_fast.pyx",
        "self.step(x, xsq, t, greedy, played, 1.0 / prob)",
        "self.step(x, xsq, t, greedy, played, 1.0)",
    ),
    "kernels:soba-runner-up-min": (
        "skbandit/linear_model/_soba_fast.pyx",
        "if r != y and s[r] > s[ybar]:",
        "if r != y and s[r] < s[ybar]:",
    ),
    "kernels:soba-sqrt-p": (
        "skbandit/linear_model/_soba_fast.pyx",
        "wz = sqrt(p) * wg",
        "wz = p * wg",
    ),
    "kernels:pnewtron-unweighted": (
        "skbandit/linear_model/_pnewtron_fast.pyx",
        "ratio = (1.0 - P[played]) / prob",
        "ratio = 1.0 - P[played]",
    ),
    "kernels:perceptron-update-when-right": (
        "skbandit/linear_model/_perceptron_fast.pyx",
        "if greedy != label:",
        "if greedy == label:",
    ),
    "kernels:conservative-wrong-sign": (
        "skbandit/multiclass/_conservative_ova_fast.pyx",
        "self.step(played, -1.0, &sq, x)",
        "self.step(played, 1.0, &sq, x)",
    ),
    "kernels:offset-tree-walk-on-loss": (
        "skbandit/multiclass/_offset_tree_fast.pyx",
        "if side * f < 0.0:",
        "if side * f > 0.0:",
    ),
    "kernels:offset-tree-unweighted": (
        "skbandit/multiclass/_offset_tree_fast.pyx",
        "cdef double omega = fabs(reward - 0.5) / prob",
        "cdef double omega = fabs(reward - 0.5)",
    ),
    "kernels:separable-ova-margin": (
        "skbandit/multiclass/_separable_ova_fast.pyx",
        "if s[played] < 0.0:\n                self.add_row(played, 1.0, x)",
        "if s[played] <= 0.0:\n                self.add_row(played, 1.0, x)",
    ),
    "exploration:greedy-mass-without-base": (
        "skbandit/_core/_explore.pxd",
        "p[greedy] = base + (1.0 - gamma)",
        "p[greedy] = 1.0 - gamma",
    ),
    "exploration:hinge-gap-map-without-k": (
        "skbandit/_core/_explore.pxd",
        "a = 1.0 - (2.0 * k) * m",
        "a = 1.0 - 2.0 * m",
    ),
    "exploration:inverse-gap-without-gamma": (
        "skbandit/_core/_explore.pxd",
        "gap = best - clip01(s[a])\n                p[a] = 1.0 / (k + gamma[a] * gap)",
        "gap = best - clip01(s[a])\n                p[a] = 1.0 / (k + gap)",
    ),
    "exploration:argmax-other-start": (
        "skbandit/_core/_explore.pxd",
        "cdef int best_r = 1 if c == 0 else 0",
        "cdef int best_r = 0",
    ),
    "exploration:softmax-mixing": (
        "skbandit/_core/_explore.pyx",
        "p[r] = (1.0 - self.epsilon) * p[r] + base",
        "p[r] = p[r] + base",
    ),
    "exploration:adaptive-rate-offset": (
        "skbandit/_core/_explore.pyx",
        "sqrt(k * (1.0 + self.stat[self.index]) / <double>t)",
        "sqrt(k * self.stat[self.index] / <double>t)",
    ),
    "selector:upper-bound-as-lower": (
        "skbandit/multiclass/_selector_fast.pyx",
        "lcb = self.bound(c, l, n, -1.0, 0.5)",
        "lcb = self.bound(c, l, n, 1.0, 0.5)",
    ),
    "selector:mixture-top-weight": (
        "skbandit/multiclass/_selector_fast.pyx",
        "avg[a] = (m * avg[a] + (top - m) * P[j, a]) / top",
        "avg[a] = (m * avg[a] + top * P[j, a]) / top",
    ),
    "selector:average-unweighted": (
        "skbandit/multiclass/_selector_fast.pyx",
        "total = total + self.beta[c] * P[c, a]",
        "total = total + P[c, a]",
    ),
    "off_policy:snips-as-ips": (
        "skbandit/evaluation/_off_policy.py",
        'value = float((w * r).sum() / total) if total > 0 else float("nan")',
        'value = float((w * r).mean()) if total > 0 else float("nan")',
    ),
    "off_policy:dr-without-correction-baseline": (
        "skbandit/evaluation/_off_policy.py",
        "terms = (pi * H).sum(axis=1) + w * (r - H[np.arange(n), codes])",
        "terms = (pi * H).sum(axis=1) + w * r",
    ),
    "off_policy:standard-error-over-n": (
        "skbandit/evaluation/_ope_intervals.py",
        'se = float(terms_sd / np.sqrt(n)) if n > 1 else float("nan")',
        'se = float(terms_sd / n) if n > 1 else float("nan")',
    ),
    "validation:binary-rewards-above-one": (
        "skbandit/_base/_validation.py",
        "if not np.all((rewards == 0.0) | (rewards == 1.0)):",
        "if not np.all((rewards == 0.0) | (rewards >= 1.0)):",
    ),
    "validation:rewards-up-to-two": (
        "skbandit/_base/_validation.py",
        "rewards.max() <= 1.0",
        "rewards.max() <= 2.0",
    ),
    "validation:one-class-accepted": (
        "skbandit/_base/_validation.py",
        "if classes.shape[0] < 2:",
        "if classes.shape[0] < 1:",
    ),
    "validation:magnitude-bound-unchecked": (
        "skbandit/_base/_rows.py",
        "if within_bound(np.ascontiguousarray(data), _MAX_ABS_X):",
        "if True:",
    ),
}

#: mutant id -> why it cannot change behaviour (left out of the rate)
EQUIVALENT: dict[str, str] = {
    "selector:_selector_fast.pyx:446": (
        "var <= 0 clamps a zero variance to zero: the same value"
    ),
    "exploration:_explore.pyx:101": (
        "reads_scores only decides which kernels may host a rule (OffsetTree's "
        "walk, which computes no full score vector), and the adaptive rule "
        "reads SOBA's statistic, so only SOBA hosts it: over-declaring refuses "
        "nothing that runs"
    ),
    "exploration:_explore.pyx:107": (
        "the adaptive rate min(1, g): g >= 1 or g > 1 give 1 at g = 1 alike"
    ),
    "squarecb:_oracle.pyx:224": (
        "rescaling a weight whose scale is 0 multiplies a zero weight (a "
        "feature never seen has no weight) by 0: the same value"
    ),
    "rollback:_transaction.py:286": (
        "a block the journal did not shorten (done == n) rewinds the generator "
        "and redraws the same n pairs: the same state, some work more"
    ),
    "squarecb:_oracle.pyx:230": (
        "as _oracle.pyx:224, for the shared scale: a weight whose scale is 0 "
        "is 0, and rescaling it by 0 leaves it 0"
    ),
    "squarecb:_oracle.pyx:291": (
        "the intercept's denominator sqrt(Gb) for Gb >= 0 instead of > 0: at "
        "Gb = 0 (a sum of squares from +0.0, never -0.0) sqrt(0.0) is the 0.0 "
        "of the other branch"
    ),
    "selector:_selector.py:663": (
        "the round index passed to run_scores for decision_function: no "
        "kernel's scores depend on it (t enters the distributions only)"
    ),
}

#: (pattern, replacement) pairs; a line takes the first that applies at a
#: position drawn among its matches.
OPERATORS: tuple[tuple[str, str], ...] = (
    (r"<=", "<"),
    (r">=", ">"),
    (r"(?<![<>=!])<(?![<=])", "<="),
    (r"(?<![<>=!-])>(?![>=])", ">="),
    (r"==", "!="),
    (r"!=", "=="),
    (r" \+ 1\b(?!\.)", ""),
    (r" - 1\b(?!\.)", ""),
    (r" \+ (?!=)", " - "),
    (r" - (?!=)", " + "),
    (r" \* (?!\*)", " / "),
    (r" / ", " * "),
    (r"\bmin\(", "max("),
    (r"\bmax\(", "min("),
    (r" and ", " or "),
    (r" or ", " and "),
    (r"\bnot ", ""),
    (r"\bTrue\b", "False"),
    (r"\bFalse\b", "True"),
    (r"\.sum\(", ".mean("),
    (r"\*\* 2\b", "** 1"),
    (r"\b0\.5\b", "0.25"),
    (r"\bsqrt\(", "("),
)


@dataclass
class Mutant:
    id: str
    area: str
    file: str
    line: int  # 1-based, for the report
    old: str  # the whole original line (generated) or the replaced text (named)
    new: str
    named: bool


def _skip_lines(path: str, text: str) -> set[int]:
    """Line numbers (1-based) never mutated: docstrings, and for Python files
    the lines of imports and ``raise`` statements."""
    skip: set[int] = set()
    if path.endswith(".py"):
        tree = ast.parse(text)
        for node in ast.walk(tree):
            body = getattr(node, "body", None)
            if isinstance(body, list) and body:
                first = body[0]
                if isinstance(first, ast.Expr) and isinstance(
                    getattr(first, "value", None), ast.Constant
                ):
                    skip.update(range(first.lineno, first.end_lineno + 1))
            if isinstance(node, ast.Import | ast.ImportFrom | ast.Raise):
                skip.update(range(node.lineno, node.end_lineno + 1))
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                skip.update(range(node.lineno, node.end_lineno + 1))
    else:  # Cython: skip triple-quoted blocks
        inside = False
        for i, line in enumerate(text.splitlines(), 1):
            n = line.count('"""')
            if inside or n:
                skip.add(i)
            if n % 2:
                inside = not inside
    return skip


def _code_part(line: str) -> str:
    """The line without a trailing comment (strings are left alone)."""
    out, quote = [], None
    for ch in line:
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#":
            break
        out.append(ch)
    return "".join(out)


def _string_spans(code: str) -> list[tuple[int, int]]:
    return [m.span() for m in re.finditer(r"'[^']*'|\"[^\"]*\"", code)]


#: operators not used on Cython lines, where they would mostly make code that
#: does not compile (integer indices, pointer casts) rather than a bug
_NOT_IN_CYTHON = {r" \* (?!\*)", r" / ", r"\.sum\(", r"\*\* 2\b"}


def _mutations(line: str, cython: bool = False) -> list[str]:
    """Every single-operator mutation of ``line`` (outside strings, comments
    and Cython casts ``<type>``)."""
    code = _code_part(line)
    spans = _string_spans(code) + [
        m.span() for m in re.finditer(r"<[A-Za-z_][\w.* ]*>", code)
    ]
    out = []
    for pattern, repl in OPERATORS:
        if cython and pattern in _NOT_IN_CYTHON:
            continue
        for m in re.finditer(pattern, code):
            if any(a <= m.start() < b for a, b in spans):
                continue
            out.append(line[: m.start()] + repl + line[m.end() :])
    return out


def _parses(text: str, lineno: int, new: str) -> bool:
    lines = text.split("\n")
    lines[lineno - 1] = new
    try:
        ast.parse("\n".join(lines))
    except SyntaxError:
        return False
    return True


def generated(area: str, per_area: int, seed: int) -> list[Mutant]:
    files, _ = AREAS[area]
    pool = []
    for path in files:
        with open(os.path.join(ROOT, path)) as f:
            text = f.read()
        skip = _skip_lines(path, text)
        for i, line in enumerate(text.splitlines(), 1):
            s = line.strip()
            if i in skip or not s or s.startswith(("#", "@", "cimport", "from ")):
                continue
            for new in _mutations(line, cython=path.endswith(".pyx")):
                if path.endswith(".py") and not _parses(text, i, new):
                    continue
                pool.append((path, i, line, new))
    rng = random.Random(f"{seed}/{area}")
    # at most one mutant per line: draw lines, then one mutation of each
    by_line: dict[tuple[str, int], list] = {}
    for item in pool:
        by_line.setdefault(item[:2], []).append(item)
    keys = sorted(by_line)
    rng.shuffle(keys)
    out = []
    for path, i in keys[:per_area]:
        _, _, old, new = rng.choice(by_line[(path, i)])
        out.append(
            Mutant(
                f"{area}:{path.rsplit('/', 1)[-1]}:{i}", area, path, i, old, new, False
            )
        )
    return out


#: files that only named mutants change, by area: C headers, whose comments
#: the line generator (``generated``) does not recognise
NAMED_ONLY_FILES: dict[str, str] = {"skbandit/_core/_oracle_step.h": "squarecb"}


def named() -> list[Mutant]:
    out = []
    for mid, (path, old, new) in NAMED.items():
        area = NAMED_ONLY_FILES.get(path) or next(
            a for a, (files, _) in AREAS.items() if path in files
        )
        out.append(Mutant(mid, area, path, 0, old, new, True))
    return out


def _apply(m: Mutant) -> str | None:
    """Write the mutant; return the original text, or None if it does not apply."""
    path = os.path.join(ROOT, m.file)
    with open(path) as f:
        text = f.read()
    if m.named:
        if text.count(m.old) != 1:
            return None
        mutated = text.replace(m.old, m.new, 1)
    else:
        lines = text.split("\n")
        if m.line > len(lines) or lines[m.line - 1] != m.old:
            return None
        lines[m.line - 1] = m.new
        mutated = "\n".join(lines)
    with open(path, "w") as f:
        f.write(mutated)
    return text


def _pytest(tests: list[str], timeout: float) -> tuple[str, float]:
    """``"failed"`` if the tests failed (or errored), ``"passed"``, or
    ``"timed out"`` (the run was stopped: no verdict), with the seconds."""
    start = time.perf_counter()
    try:
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-x",
                "-q",
                "-p",
                "no:cacheprovider",
                *tests,
            ],
            cwd=ROOT,
            capture_output=True,
            timeout=timeout,
        )
        outcome = "failed" if r.returncode != 0 else "passed"
    except subprocess.TimeoutExpired:
        outcome = "timed out"
    return outcome, time.perf_counter() - start


#: (which tests, their outcome) -> the mutant's status; a run stopped by the
#: timeout gives no verdict (it is reported apart, out of the rate)
_STATUS = {
    (which, outcome): (
        f"caught ({which})"
        if outcome == "failed"
        else "survived"
        if outcome == "passed"
        else "timed out"
    )
    for which in ("targeted", "full suite")
    for outcome in ("failed", "passed", "timed out")
}


def _touch_includers(path: str) -> None:
    """Mark for rebuilding the Cython modules that include the C header
    ``path``: the editable build does not track a header that a module
    reaches through a ``cdef extern`` block, so without this a module built
    with a header's mutant would stay so after the header is restored (and
    fail every later run). The includers are the ``.pyx`` files that name the
    header or cimport a ``.pxd`` that does."""
    header = os.path.basename(path)
    pkg = os.path.join(ROOT, "skbandit")
    sources = []
    for folder, _, files in os.walk(pkg):
        sources += [
            os.path.join(folder, f) for f in files if f.endswith((".pyx", ".pxd"))
        ]
    names = {header}
    for src in sources:
        with open(src) as f:
            if src.endswith(".pxd") and header in f.read():
                names.add(os.path.basename(src)[: -len(".pxd")])
    for src in sources:
        with open(src) as f:
            text = f.read()
        if src.endswith(".pyx") and any(name in text for name in names):
            os.utime(src)


def run(mutants: list[Mutant], full: bool, timeout: float) -> list[dict]:
    results = []
    for m in mutants:
        original = _apply(m)
        if original is None:
            results.append({**asdict(m), "status": "not applicable"})
            print(f"{m.id:50s} not applicable", flush=True)
            continue
        if m.file.endswith(".h"):
            _touch_includers(m.file)
        try:
            outcome, secs = _pytest(list(AREAS[m.area][1]), timeout)
            status = _STATUS["targeted", outcome]
            if outcome == "passed" and full:
                outcome, more = _pytest(["tests"], timeout * 10)
                secs += more
                status = _STATUS["full suite", outcome]
        finally:
            with open(os.path.join(ROOT, m.file), "w") as f:
                f.write(original)
            if m.file.endswith(".h"):
                _touch_includers(m.file)
        if status == "survived" and m.id in EQUIVALENT:
            status = "equivalent"
        results.append({**asdict(m), "status": status, "seconds": round(secs, 1)})
        print(f"{m.id:50s} {status} ({secs:.0f} s)", flush=True)
    return results


def summary(results: list[dict]) -> str:
    rows = [r for r in results if r["status"] not in ("not applicable",)]
    stopped = [r for r in rows if r["status"] == "timed out"]
    counted = [r for r in rows if r["status"] not in ("equivalent", "timed out")]
    caught = [r for r in counted if r["status"].startswith("caught")]
    lines = [
        f"mutants run: {len(rows)}, equivalent: "
        f"{len(rows) - len(counted) - len(stopped)}, timed out (no verdict): "
        f"{len(stopped)}, caught: {len(caught)} of {len(counted)}"
        + (f" ({100 * len(caught) / len(counted):.0f}%)" if counted else ""),
    ]
    for area in AREAS:
        a = [r for r in counted if r["area"] == area]
        if a:
            c = sum(r["status"].startswith("caught") for r in a)
            lines.append(f"  {area:12s} {c}/{len(a)}")
    for r in stopped:
        lines.append(f"  TIMED OUT {r['id']} after {r['seconds']:.0f} s")
    for r in counted:
        if r["status"] == "survived":
            where = f"{r['file']}:{r['line']}" if r["line"] else r["file"]
            lines.append(f"  SURVIVED {r['id']} ({where}): {r['new'].strip()[:100]}")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--areas", nargs="*", default=list(AREAS), choices=list(AREAS))
    p.add_argument("--per-area", type=int, default=6)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-named", action="store_true")
    p.add_argument("--full", action="store_true", help="run survivors on the suite")
    p.add_argument("--timeout", type=float, default=600.0)
    p.add_argument("--list", action="store_true")
    p.add_argument("--json", default=None)
    a = p.parse_args(argv)
    mutants = [] if a.no_named else [m for m in named() if m.area in a.areas]
    for area in a.areas:
        mutants += generated(area, a.per_area, a.seed)
    if a.list:
        for m in mutants:
            print(f"{m.id}\n  - {m.old.strip()}\n  + {m.new.strip()}")
        return 0
    files = sorted({m.file for m in mutants})
    dirty = subprocess.run(
        ["git", "diff", "--name-only", "--", *files],
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout.split()
    if dirty:
        print("refusing: uncommitted changes in " + ", ".join(dirty), file=sys.stderr)
        return 2
    # a termination restores the mutated file (run's ``finally``) before exiting
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    results = run(mutants, a.full, a.timeout)
    text = summary(results)
    print(text)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"results": results, "summary": text}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
