"""One table of rounds/s from runs of ``bench_feature_maps.py`` by two
versions, alternating (old, new, old, new, ...) on the same machine.

Speed on a shared machine drifts by tens of percent from one minute to the
next, so versions are compared only in runs alternated in one sitting; this
prints every run's rounds/s per row, then ``ratio``, the best of the new runs
over the best of the old ones.

    python benchmarks/pair_table.py --old old1.txt old2.txt --new new1.txt new2.txt
"""

from __future__ import annotations

import argparse
import re

ROW = re.compile(r"^(?P<name>.+?)\s+(?P<d>\d+)\s+(?P<D>-|\d+)\s+(?P<rate>[\d,]+)$")


def speed_rows(path: str) -> dict[tuple[str, str, str], float]:
    """``(learner, d, D) -> rounds/s`` of the speed part of one output."""
    rows = {}
    with open(path) as f:
        for line in f:
            m = ROW.match(line.rstrip())
            if m:
                key = (m["name"].strip(), m["d"], m["D"])
                rows[key] = float(m["rate"].replace(",", ""))
    return rows


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--old", nargs="+", required=True, help="the old version's outputs")
    p.add_argument("--new", nargs="+", required=True, help="the new version's outputs")
    args = p.parse_args(argv)
    old = [speed_rows(f) for f in args.old]
    new = [speed_rows(f) for f in args.new]
    keys = [k for k in old[0] if all(k in r for r in old + new)]
    if not keys:
        raise SystemExit("no row of rounds/s is in every output")
    heads = [f"old-{i + 1}" for i in range(len(old))]
    heads += [f"new-{i + 1}" for i in range(len(new))]
    print(f"{'rounds/s':<58} {'d':>4} {'D':>5}", *(f"{h:>10}" for h in heads), "ratio")
    for key in keys:
        rates = [r[key] for r in old + new]
        ratio = max(r[key] for r in new) / max(r[key] for r in old)
        cells = " ".join(f"{v:>10,.0f}" for v in rates)
        print(f"{key[0]:<58} {key[1]:>4} {key[2]:>5} {cells} {ratio:5.2f}")


if __name__ == "__main__":
    main()
