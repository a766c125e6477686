# Shared by the recording drivers (hv/run.sh, hv2/run.sh): source it after
# setting RECOUT. part NAME SECONDS CMD... runs one case under a time limit
# within the run's BUDGET (seconds, default 200); finish NAME NEUTRALIZE
# neutralizes the paths in what was written and packs $RECOUT into
# $OUT/NAME.tar.gz.
HERE=$(pwd)
export PYTHONUNBUFFERED=1
rm -rf "$RECOUT"; mkdir -p "$RECOUT"
T0=$(date +%s); DEADLINE=$((T0 + ${BUDGET:-200}))

part() {
  local name=$1 secs=$2; shift 2
  local now=$(date +%s); local left=$((DEADLINE - now))
  if [ $left -lt 10 ]; then echo "### SKIP $name (out of time)"; return; fi
  [ $secs -gt $left ] && secs=$left
  echo "### $name start $(date -u +%T) limit ${secs}s"
  timeout -k 5 $secs "$@"
  echo "### $name rc=$? took $(( $(date +%s) - now ))s"
}

finish() {
  local name=$1 neutralize=$2
  find "$RECOUT" -type f -print0 | xargs -0 python3 "$neutralize" "$HERE" > "$RECOUT/neutralize.log" 2>&1
  ls -la "$RECOUT" > "$RECOUT/files.txt"
  tar czf "$OUT/$name.tar.gz" -C "$RECOUT" .
  ls -la "$OUT"; tail -3 "$RECOUT/neutralize.log"
}
