#!/usr/bin/env bash
# Compare `gpuleak analyze --format json --top 0` of every PyTorch snapshot the
# project has (testdata/pytorch and its folders, ../shared/fixtures/pytorch,
# ../shared/field/snapshots, ../shared/bench/big_real.pickle.gz) between a baseline binary and a new one,
# byte for byte. A change in any finding is a failure.
#
# Usage: bench/compare_findings.sh save BASELINE_BIN DIR     # write DIR/<name>.json
#        bench/compare_findings.sh check NEW_BIN DIR         # compare against DIR
# Run from the repository root. Exit 1 on any difference.
set -u
mode=$1 bin=$2 dir=$3
inputs=()
for f in testdata/pytorch/*.pickle testdata/pytorch/*.pickle.gz testdata/pytorch/*/*.pickle testdata/pytorch/*/*.pickle.gz \
         ../shared/fixtures/pytorch/*.pickle ../shared/field/snapshots/* ../shared/bench/big_real.pickle.gz; do
  [ -f "$f" ] && inputs+=("$f")
done
mkdir -p "$dir"
fail=0 n=0
for f in "${inputs[@]}"; do
  name=$(echo "$f" | sed 's|^\.\./||; s|/|__|g')
  # The tool's version (git describe of each build) is not a finding.
  out=$("$bin" analyze --format json --top 0 "$f" 2>&1 | sed '0,/^    "version": /s/^    "version": .*/    "version": "(any)"/'; echo "exit=${PIPESTATUS[0]}")
  n=$((n+1))
  if [ "$mode" = save ]; then
    printf '%s\n' "$out" > "$dir/$name.json"
  elif ! diff -q <(printf '%s\n' "$out") "$dir/$name.json" >/dev/null; then
    echo "DIFFERENT: $f"; diff <(printf '%s\n' "$out") "$dir/$name.json" | head -20; fail=1
  fi
done
echo "$mode: $n inputs"
[ $fail = 0 ] && [ "$mode" = check ] && echo "no finding changed"
exit $fail
