#!/usr/bin/env bash
# Behaviour check for refactors: run a matrix of gpuleak commands and output
# formats over every input the project can reach (testdata/, ../shared/fixtures,
# ../shared/field) and compare stdout, stderr and the exit code, byte for byte,
# between a baseline binary and a new one.
#
# Usage: bench/compare_outputs.sh save BASELINE_BIN DIR   # write DIR/<case>.out
#        bench/compare_outputs.sh check NEW_BIN DIR       # compare against DIR
# Run from the repository root. Exit 1 on any difference.
set -u
mode=$1 bin=$2 dir=$3
mkdir -p "$dir"
fail=0 n=0
root=$(pwd)
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
run_case() { # name, then the command's arguments
  local name=$1; shift
  local out
  # Paths are absolute (the commands run elsewhere, so that no relative
  # path resolves by accident): the checkout's own is written <root>.
  # The exit code is taken from the program itself, not from PIPESTATUS
  # after a pipe: three runs under heavy load read exit 0 for a case whose
  # program exits 1 or 2 every time it is run alone, with the same output.
  out=$(cd /tmp && "$bin" "$@" >"$raw" 2>&1 </dev/null; rc=$?; sed -E 's/"version": "[^"]*"/"version": "(any)"/; s/(gpuleak|Gpuleak) (v?[0-9a-f.+-]+-dirty|[0-9a-f]{7,}(-dirty)?|dev)\b/\1 (any)/g' "$raw" | sed "s|$root|<root>|g"; echo "exit=$rc")
  n=$((n+1))
  local f="$dir/$(echo "$name" | sed 's|[^A-Za-z0-9_.=-]|_|g').out"
  if [ "$mode" = save ]; then
    printf '%s\n' "$out" > "$f"
  elif ! diff -q <(printf '%s\n' "$out") "$f" >/dev/null 2>&1; then
    echo "DIFFERENT: $name ($*)"; diff <(printf '%s\n' "$out") "$f" | head -20; fail=1
  fi
}
inputs=()
while IFS= read -r f; do inputs+=("$f"); done < <(
  { find "$root/testdata" -type f ! -path '*/golden/*' ! -path '*/gen/*' ! -name '*.md' ! -name '*.py' ! -name '*.sh' ! -name '*.cu';
    find "$root/../shared/fixtures" "$root/../shared/field" -type f ! -name '*.md' 2>/dev/null; } | sort)
for f in "${inputs[@]}"; do
  rel=${f#"$root/"}
  for fmt in table json markdown sarif junit; do
    run_case "analyze.$fmt.$rel" analyze --top 0 --format "$fmt" "$f"
  done
  run_case "analyze.failon.$rel" analyze --fail-on leak,oom,trend,sanitizer-errors --min-bytes 1MiB --quiet "$f"
  run_case "oom.table.$rel" oom "$f"
  run_case "oom.json.$rel" oom --format json "$f"
  run_case "trend.table.$rel" trend "$f"
  run_case "trend.json.$rel" trend --format json "$f"
done
fx=$root/../shared/fixtures
run_case "analyze.all-fixtures.json" analyze --format json --top 0 $(find "$fx" -type f ! -name '*.md' | sort)
run_case "analyze.all-fixtures.table" analyze $(find "$fx" -type f ! -name '*.md' | sort)
run_case "diff.clean-leak" diff "$fx/pytorch/clean_train_loop.pickle" "$fx/pytorch/leak_train_loop.pickle"
run_case "diff.clean-leak.json" diff --format json --all "$fx/pytorch/clean_train_loop.pickle" "$fx/pytorch/leak_train_loop.pickle"
run_case "diff.san" diff "$fx/sanitizer/leak_full.txt" "$fx/sanitizer/leak_cupy.txt"
run_case "oom.beside-nvml" oom "$fx/pytorch/oom_error.txt" "$fx/nvml/query_apps.csv"
run_case "analyze.joined" analyze "$fx/pytorch/leak_train_loop.pickle" "$fx/nvml/query_apps.csv"
echo "$mode: $n cases"
[ $fail = 0 ] && [ "$mode" = check ] && echo "no output changed"
exit $fail
