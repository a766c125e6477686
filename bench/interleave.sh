#!/usr/bin/env bash
# Interleaved end-to-end timing of gpuleak binaries and CPython's pickle.load
# on the same files: in each round, every file is read by each binary in turn
# and by pickle.load, so that a shared machine's drift hits all alike.
# Prints one line per run (wall s, user+sys CPU s, max RSS KiB), then medians
# and ranges per file and program.
#
# Usage: bench/interleave.sh ROUNDS FILE... -- BIN...
#   e.g. bench/interleave.sh 5 ../shared/bench/big_real.pickle.gz -- /work/i17-base/gpuleak bin/gpuleak
# A .gz file is unpacked by each program (gpuleak reads gzip; pickle.load
# through the gzip module). Needs GNU time (/usr/bin/time) and python3.
set -eu
rounds=$1; shift
files=()
while [ "$1" != "--" ]; do files+=("$1"); shift; done
shift
bins=("$@")
out=$(mktemp)
py='import gzip, pickle, sys; f = open(sys.argv[1], "rb"); gz = f.read(2) == b"\x1f\x8b"; f.seek(0); pickle.load(gzip.GzipFile(fileobj=f) if gz else f)'
for r in $(seq "$rounds"); do
  for f in "${files[@]}"; do
    for b in "${bins[@]}" python; do
      if [ "$b" = python ]; then
        /usr/bin/time -f "%e %U %S %M" -o "$out.t" python3 -c "$py" "$f"
      else
        /usr/bin/time -f "%e %U %S %M" -o "$out.t" "$b" analyze --format json --top 0 "$f" >/dev/null
      fi
      read -r wall user sys rss < "$out.t"
      echo "$r $(basename "$f") $b $wall $(echo "$user + $sys" | bc) $rss" | tee -a "$out"
    done
  done
done
python3 - "$out" <<'PY'
import statistics, sys
from collections import defaultdict
d = defaultdict(lambda: ([], [], []))
order = []
for line in open(sys.argv[1]):
    r, f, b, wall, cpu, rss = line.split()
    if (f, b) not in d: order.append((f, b))
    for i, v in enumerate((wall, cpu, rss)): d[(f, b)][i].append(float(v))
def m(v, k=1): return f"{statistics.median(v)/k:.3g} [{min(v)/k:.3g}-{max(v)/k:.3g}]"
print("file program: wall s; user+sys s; max RSS MB (median [range])")
for k in order:
    w, c, rss = d[k]
    print(f"{k[0]} {k[1]}: {m(w)}; {m(c)}; {m(rss, 1000)}")
PY
rm -f "$out" "$out.t"
