# gpuleak: make build | build-nvml | test | demo | bench | fuzz | lint
GO       ?= go
BIN      := bin/gpuleak
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
FUZZTIME ?= 60s
BENCHSNAP := .bench/snapshot_100k.pickle .bench/snapshot_1m.pickle

.PHONY: pgo bench-instructions build build-nvml test test-fleet demo bench bench-data bench-data-10m bench-findings bench-report fuzz lint clean

# Static and cgo-free (CGO_ENABLED=0): with a C compiler present, go build
# would otherwise link the C library for Go's net package (pulled in by
# Parquet's and Prometheus's libraries) and the binary would need it.
build:
	CGO_ENABLED=0 $(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) .

# With NVML live capture (gpuleak capture, gpuleak watch): cgo and a C
# compiler; libnvidia-ml.so.1 is loaded at run time, not linked. go-nvml's
# header declares deprecated NVML calls; the compiler's warnings about them
# are noise here.
NVML_CFLAGS := -O2 -g -Wno-deprecated-declarations
build-nvml:
	CGO_ENABLED=1 CGO_CFLAGS="$(NVML_CFLAGS)" $(GO) build -tags nvml -ldflags "-X main.version=$(VERSION)" -o $(BIN) .

# The whole test suite (also what CI runs), and the NVML sampler against
# go-nvml's mock (needs cgo; no driver).
test:
	$(GO) test ./...
	CGO_ENABLED=1 CGO_CFLAGS="$(NVML_CFLAGS)" $(GO) test -tags nvml ./capture/

# DuckDB queries the Parquet export of ../shared/fixtures (its own module:
# DuckDB's cgo build takes about 40 s).
test-fleet:
	cd fleettest && $(GO) test ./...

# gpuleak report over 1,000, 3,000 and 10,000 hard-linked artifacts:
# CPU ms per file, files/s, peak Go heap.
bench-report:
	$(GO) test ./cmd -run '^$$' -bench BenchmarkReport -benchtime 1x -timeout 30m

# Analyse a real leaking training run shipped in testdata/.
demo: build
	./$(BIN) analyze testdata/pytorch/leak_train_loop.pickle

# The scaler's snapshots the benchmarks read (not committed; need python3):
# 100k and 1M trace entries; bench-data-10m adds 10M (732 MB, a minute).
bench-data: $(BENCHSNAP)
bench-data-10m: .bench/snapshot_10m.pickle
.bench/snapshot_%.pickle: bench/scale_snapshot.py testdata/pytorch/leak_train_loop.pickle
	mkdir -p .bench
	python3 bench/scale_snapshot.py testdata/pytorch/leak_train_loop.pickle $@ \
	  --entries $$(echo $* | sed 's/k$$/000/; s/m$$/000000/')

# Benchmarks, against CPython's pickle.load of the same file: first the real
# snapshot ../shared/bench/big_real.pickle.gz (skipped when absent), then the
# scaler's. Five rounds; in each, every benchmark runs gpuleak then
# pickle.load, so that a shared machine's drift hits both alike.
# bench/summarize.py prints medians with ranges (MB/s, CPU seconds, peak
# memory, allocations).
bench: bench-data
	@rm -f .bench/bench.txt; for i in 1 2 3 4 5; do \
	  $(GO) test -run '^$$' -bench 'BenchmarkAnalyze(BigReal|Snapshot)' -benchtime 3x ./cmd/ | tee -a .bench/bench.txt | grep '^Benchmark'; done
	@python3 bench/summarize.py .bench/bench.txt

# The snapshot Reader alone on big_real (no gzip, no analysis), counted in
# instructions by cachegrind: a figure a loaded machine does not change
# (repeatable to about 1%), for comparing builds of the decoder.
# The file is unpacked first, so that gzip is not counted.
bench-instructions:
	mkdir -p .bench && gzip -dc ../shared/bench/big_real.pickle.gz > .bench/big_real.pickle
	$(GO) test -c -pgo=$(CURDIR)/default.pgo -o .bench/pytorch.test ./parse/pytorch/
	cd parse/pytorch && GPULEAK_BENCH_REAL=../../.bench/big_real.pickle GOMAXPROCS=1 GOGC=$${GOGC:-100} valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
	  ../../.bench/pytorch.test -test.run '^$$' -test.bench ReaderBigReal -test.benchtime 1x 2>&1 | grep -E '^Benchmark|I +refs'

# default.pgo, the CPU profile go build optimises the binary by (profile-
# guided optimisation: hot calls inlined, 5-6% fewer instructions on
# big_real's decoder): gpuleak analyze on the real snapshot, a
# compute-sanitizer log and an NVML CSV, in process. Regenerate it after
# large changes to the hot paths; a stale profile only optimises less.
pgo:
	mkdir -p .bench
	$(GO) test ./cmd -run '^$$' -bench 'BenchmarkAnalyzeBigReal/gpuleak' -benchtime 4x -cpuprofile .bench/pgo-snapshot.prof
	$(GO) test ./cmd -run '^$$' -bench 'BenchmarkAnalyze(SanitizerLog|QueryGPU)$$' -benchtime 4x -cpuprofile .bench/pgo-text.prof
	$(GO) tool pprof -proto -ignore 'benchgen|sanitizerLeakLog' .bench/pgo-snapshot.prof .bench/pgo-text.prof > default.pgo && rm -f cmd.test

# Compare every snapshot's findings with those of a baseline build
# (BASE=path/to/gpuleak, saved once with SAVE=1): speed work changes none.
bench-findings: build
	@test -n "$(BASE)" || { echo "make bench-findings BASE=path/to/baseline/gpuleak [SAVE=1]"; exit 2; }
	@if [ -n "$(SAVE)" ]; then bench/compare_findings.sh save $(BASE) .bench/findings; fi
	bench/compare_findings.sh check $(BIN) .bench/findings

# Each fuzz target for FUZZTIME (make fuzz FUZZTIME=10m).
fuzz:
	@set -e; for t in $$(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u); do \
	  for f in $$(grep -h '^func Fuzz' $$t/*_test.go | sed 's/func \(Fuzz[A-Za-z0-9_]*\).*/\1/'); do \
	    echo "== $$t $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5s $$t; \
	  done; done

lint:
	@test -z "$$(gofmt -l .)" || { gofmt -l .; echo "gofmt: the files above need formatting"; exit 1; }
	$(GO) vet ./...
	CGO_ENABLED=1 CGO_CFLAGS="$(NVML_CFLAGS)" $(GO) vet -tags nvml ./capture/ ./cmd/ ./live/

clean:
	rm -rf bin .bench
