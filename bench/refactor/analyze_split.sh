#!/usr/bin/env bash
# Rewrites a tree written against the flat package analyze (analyze.X) to
# the packages of the split (callsite, snapshot, oom, sanitizer, trend,
# profiler, run), from bench/refactor/analyze_split.map. Re-runnable: a
# tree already rewritten is left as it is. Run it after merging a branch
# written before the split, then go build ./... && go test ./...
#
# Usage, from anywhere in the repository:
#   bench/refactor/analyze_split.sh            # every folder but analyze/, and main.go
#   bench/refactor/analyze_split.sh cmd report # only these
# Exit 1 when a name is not in the map (each is listed as FILE:LINE:COL)
# or when Go files are left in analyze/ itself (a branch added one: move
# it into its analysis's package by hand, then run this again).
set -eu
cd "$(dirname "$0")/../.."
if [ $# = 0 ]; then
  set -- main.go
  for d in */; do [ "$d" = analyze/ ] || set -- "$@" "${d%/}"; done
fi
go run ./bench/refactor -map bench/refactor/analyze_split.map "$@"
left=$(find analyze -maxdepth 1 -name '*.go')
if [ -n "$left" ]; then
  echo "analyze_split: Go files left in the old package analyze/, to move by hand:" $left >&2
  exit 1
fi
