#!/usr/bin/env bash
# Rewrites a tree written against the central list of formats in
# parse/parse.go (parse.FormatNvidiaSmiDmon, ...) to the names each input
# family's package declares (nvml.FormatDmon, ...), from
# bench/refactor/parse_formats.map: code and comments; inside a family's
# own package the names become bare. Re-runnable: a tree already
# rewritten is left as it is. Run it after merging a branch written
# before the move, then go build ./... && go test ./...
#
# Usage, from anywhere in the repository:
#   bench/refactor/parse_formats.sh            # every folder, and main.go
#   bench/refactor/parse_formats.sh cmd report # only these
# Exit 1 when a moved name is declared in parse/ again (a merge brought
# back the old list: delete it there, keeping the family's declaration),
# or when parse.FormatX names a format neither parse nor the map knows (a
# branch added a format to the old list: declare it in its family's
# parse/<family>/format.go, then use it as family.FormatX, or add a line
# to the map and run this again).
set -eu
cd "$(dirname "$0")/../.."
map=bench/refactor/parse_formats.map
if [ $# = 0 ]; then
  set -- main.go
  for d in */; do set -- "$@" "${d%/}"; done
fi
go run ./bench/refactor -map "$map" "$@"
status=0
moved=$(awk '!/^#/ && NF >= 2 && $1 != "from" && $1 != "alias" {print $1}' "$map")
for n in $moved; do
  if grep -nE "^[[:space:]]*$n[[:space:]]+Format\b" parse/*.go >&2; then
    echo "parse_formats: $n is declared in parse/ again: delete it there (its family declares it)" >&2
    status=1
  fi
done
declared=$(grep -hoE '^[[:space:]]*(const[[:space:]]+)?Format[A-Za-z0-9_]*[[:space:]]+Format\b' parse/*.go | awk '{print $NF=="Format" ? $(NF-1) : $1}')
left=$(grep -rnoE --include='*.go' --exclude-dir=testdata --exclude-dir=refactor '\bparse\.Format[A-Z][A-Za-z0-9_]*' . |
  while IFS= read -r hit; do
    n=${hit##*parse.}
    case " $(echo $declared) " in *" $n "*) ;; *) echo "$hit" ;; esac
  done)
if [ -n "$left" ]; then
  echo "$left" >&2
  echo "parse_formats: formats that neither parse nor $map knows: declare each in its family's package" >&2
  status=1
fi
exit $status
