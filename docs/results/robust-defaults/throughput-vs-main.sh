# SquareCB's throughput beside the main branch's, alternating in one script
# (absolute rounds/s swing with the load of the shared machine: compare the
# sides within a pass). main: the installed checkout /work/main with the system
# python; this branch: its worktree with its own environment.
set -e
for i in 1 2; do
  for side in main branch; do
    if [ $side = main ]; then D=/work/main; ACT=true; else D=/work/wt/sqcb; ACT=". /work/wt/sqcb-venv/bin/activate"; fi
    echo "== $side (pass $i)"
    (cd $D && eval "$ACT" && python benchmarks/bench_squarecb.py --inputs csr dense --n-rounds 200000 --repeat 3 --numpy-rounds 100 --vw-rounds 100 2>&1 | grep -E "SquareCB|Banditron partial_fit \(1 call")
  done
done
