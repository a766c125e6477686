# gpuleak issue 16 device run: capture a leaking PyTorch loop at 100 ms and 1 s,
# measure the sampling cost, analyze the captures, check exit codes and SIGINT.
cd "$(dirname "$0")"; set -u; W=$PWD/w; mkdir -p $W; cd $W; G=../gpuleak
nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; nproc
T=/usr/bin/time; [ -x $T ] || T=""
for iv in 100ms 1s; do
  echo "== capture --interval $iv -- python3 leak.py"
  ${T:+$T -v -o time_$iv.txt} $G capture -o cap_$iv.jsonl --interval $iv --analyze -- python3 ../leak.py > out_$iv.txt 2> err_$iv.txt; echo "rc=$?"
  tail -n 3 err_$iv.txt; cat out_$iv.txt | grep -v '^step' ; [ -n "$T" ] && grep -E 'User time|System time|Elapsed|Maximum resident' time_$iv.txt
done
for iv in 100ms 1s; do
  echo "== idle capture --interval $iv --duration 10s (all CPU is gpuleak's)"
  ( time $G capture -o idle_$iv.jsonl --interval $iv --duration 10s ) 2>&1 | tail -n 5
done
echo "== analyze"; $G analyze cap_100ms.jsonl; $G analyze cap_1s.jsonl; $G analyze --format json cap_1s.jsonl > an_1s.json; echo "rc=$?"
echo "== exit code"; $G capture -o rc.jsonl -- python3 -c 'import sys,time; time.sleep(1.5); sys.exit(3)'; echo "rc=$? (want 3)"
echo "== SIGINT after 6 s"; set -m; $G capture -o sig.jsonl --interval 100ms -- python3 ../leak.py > sig_out.txt 2> sig_err.txt & P=$!; sleep 6; kill -INT $P; wait $P; echo "rc=$?"; tail -n 4 sig_err.txt; wc -l sig.jsonl; tail -c 300 sig.jsonl | tail -n 1 | head -c 200; echo
echo "== watch (stdout not a terminal) while leak.py runs, with --prometheus and --textfile"
python3 ../leak.py > watch_leak.txt 2>&1 & L=$!
$G watch --interval 1s --duration 14s --window 1m --textfile watch.prom --prometheus :9400 > watch.txt 2> watch_err.txt & WP=$!
sleep 10; python3 -c "import urllib.request;print(urllib.request.urlopen('http://127.0.0.1:9400/metrics').read().decode())" > scrape.txt 2>&1
wait $WP; echo "watch rc=$?"; wait $L; cat watch_err.txt; cat watch.txt; grep -v '^#' scrape.txt | grep gpuleak_ ; grep -c . watch.prom
ls -la
tar czf $OUT/capture_run.tgz .
