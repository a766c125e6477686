#!/usr/bin/env bash
# Check the streaming generator (bench/benchgen/scalesnap) against
# bench/scale_snapshot.py on a real snapshot: for each N, both write a
# snapshot of N trace entries, and `gpuleak analyze --format json --top 0`
# must give byte-identical reports (the pickles are compared too, for the
# record: the generator writes CPython's bytes). The Python needs about
# 1.5 GB of RAM at 2M entries; a run takes a minute or two.
#
# Usage: bench/check_scalesnap.sh [SOURCE [N...]]   (from the repository root)
#   default: ../shared/bench/big_real.pickle.gz, N = 948963 2000000
# Exit 1 on any difference.
set -eu
src=${1:-../shared/bench/big_real.pickle.gz}
shift || true
ns=${*:-948963 2000000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/gpuleak" .
go build -o "$tmp/scalesnap" ./bench/benchgen/scalesnap
case $src in
  *.gz) gzip -dc "$src" > "$tmp/src.pickle" ;;
  *) cp "$src" "$tmp/src.pickle" ;;
esac
fail=0
for n in $ns; do
  "$tmp/scalesnap" -entries "$n" "$src" "$tmp/go.pickle"
  python3 bench/scale_snapshot.py "$tmp/src.pickle" "$tmp/py.pickle" --entries "$n"
  if cmp -s "$tmp/go.pickle" "$tmp/py.pickle"; then pk="pickles identical"; else pk="pickles differ"; fi
  # The same path for both: the report names its input.
  for w in go py; do
    ln -f "$tmp/$w.pickle" "$tmp/snapshot.pickle"
    "$tmp/gpuleak" analyze --format json --top 0 "$tmp/snapshot.pickle" > "$tmp/$w.json" || true
  done
  if [ ! -s "$tmp/go.json" ]; then echo "N=$n: no report"; fail=1
  elif cmp -s "$tmp/go.json" "$tmp/py.json"; then echo "N=$n: reports identical ($(wc -c < "$tmp/go.json") bytes; $pk, $(wc -c < "$tmp/go.pickle") bytes)"
  else echo "N=$n: REPORTS DIFFER ($pk)"; diff "$tmp/go.json" "$tmp/py.json" | head -20; fail=1; fi
  rm -f "$tmp/go.pickle" "$tmp/py.pickle" "$tmp/snapshot.pickle"
done
exit $fail
