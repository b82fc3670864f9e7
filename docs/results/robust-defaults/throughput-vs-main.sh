set -e
for i in 1 2; do
  for side in main squarecb; do
    if [ $side = main ]; then V=/tmp/h6-main-venv; D=/tmp/h6-main; else V=/work/wt/squarecb-venv; D=/work/wt/squarecb; fi
    echo "== $side (pass $i)"
    (cd $D && . $V/bin/activate && python benchmarks/bench_squarecb.py --inputs csr --n-rounds 200000 --repeat 3 --numpy-rounds 100 --vw-rounds 100 2>&1 | grep -E "SquareCB|Banditron partial_fit \(1 call")
  done
done
