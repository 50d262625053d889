# ometiff: the main job, the tests, and the measurements.
GO       ?= go
FUZZTIME ?= 10s
BENCHTIME ?= 1s

.PHONY: run test bench fuzz interop turbo compare huge convertcompare hugeconvert dataset dataset-compare

# The main job: write pyramid.ome.tif from the embedded synthetic slide.
run:
	$(GO) run ./examples/slide

# Tests that skip under the race detector, which distorts what they count
# (it makes sync.Pool drop items): `make test` runs them again without it.
NORACE_TESTS = compress:TestPipelineReusesBuffers

# Vet and every test, with the race detector; then the tests it would
# distort, without it (each must exist: a renamed one fails here).
test:
	$(GO) vet ./...
	$(GO) test -race -timeout 60m ./...
	@set -e; for t in $(NORACE_TESTS); do \
	  pkg=./$${t%%:*}; name=$${t#*:}; \
	  $(GO) test -list "^$$name$$" $$pkg | grep -qx "$$name" || { echo "make test: no $$name in $$pkg"; exit 1; }; \
	  echo "$(GO) test -count=1 -run '^$$name$$' $$pkg"; \
	  $(GO) test -count=1 -run "^$$name$$" $$pkg; \
	done

# Every benchmark, once each.
bench:
	$(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) ./...

# A short run of every fuzz target. Go 1.26's fuzz coordinator can fail a
# target with a bare "context deadline exceeded" when -fuzztime runs out while
# a worker is mid-call (go.dev/issue/75804, fixed in Go 1.27), so fuzzing runs
# on FUZZ_TOOLCHAIN, which the go command fetches from the module proxy.
# Each new input is minimized for at most FUZZMINTIME (the go command's
# default, 60 s, left the dataset targets a dozen executions in 90 s).
FUZZ_TOOLCHAIN ?= go1.27.3
FUZZMINTIME ?= 2s
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  list=$$($(GO) test -list '^Fuzz' $$pkg) || { echo "$$list"; echo "fuzz: listing $$pkg's targets failed"; exit 1; }; \
	  for target in $$(echo "$$list" | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$target"; \
	    GOTOOLCHAIN=$(FUZZ_TOOLCHAIN) $(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINTIME) $$pkg; \
	  done; \
	done

# Checks with readers nobody on the team wrote: libtiff, tifffile, libvips,
# GDAL, xmllint and Viv (under Node.js, its modules pinned by
# internal/interop/viv/package-lock.json). Missing tools fail here (they
# skip in `make test`).
interop:
	cd internal/interop/viv && npm ci --no-audit --no-fund --loglevel=error
	OMETIFF_INTEROP=1 $(GO) test -count=1 -timeout 30m -run 'Interop' ./...

# The libjpeg-turbo build (-tags ometiff_turbo; it needs cgo, pkg-config
# and Debian's libjpeg62-turbo-dev), which encodes and decodes JPEG with
# libjpeg-turbo: every test and interop check, vet, package compress's tests
# under the race detector, then its JPEG decoder fuzzed.
turbo:
	cd internal/interop/viv && npm ci --no-audit --no-fund --loglevel=error
	OMETIFF_INTEROP=1 CGO_ENABLED=1 $(GO) test -count=1 -timeout 30m -tags ometiff_turbo ./...
	CGO_ENABLED=1 $(GO) vet -tags ometiff_turbo ./...
	CGO_ENABLED=1 $(GO) test -count=1 -race -tags ometiff_turbo ./compress/
	CGO_ENABLED=1 GOTOOLCHAIN=$(FUZZ_TOOLCHAIN) $(GO) test -tags ometiff_turbo -run '^$$' -fuzz '^FuzzDecodeJPEG$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINTIME) ./compress/

# The slide and stack workloads (every one but huge, which `make huge`
# runs; see examples/compare) written by this library and by the peers
# installed here (libvips, tifffile, GDAL, dd), side by side; about 9
# minutes.
compare:
	$(GO) run ./examples/compare -runs 3 -strace

# The stack workload as a multi-file dataset, as a batch system runs it:
# one static binary, the plan, and 8 processes (xargs -P here; a Slurm
# array or a Kubernetes indexed Job elsewhere, see examples/dataset), each
# writing its file; then the check that every file and plane is there.
DATASET_DIR ?= $(or $(TMPDIR),/tmp)/ometiff-dataset
dataset:
	mkdir -p $(DATASET_DIR)
	CGO_ENABLED=0 $(GO) build -o $(DATASET_DIR)/dataset ./examples/dataset
	$(DATASET_DIR)/dataset plan -files 8 -o $(DATASET_DIR)/plan.json
	seq 0 7 | xargs -P 8 -I{} $(DATASET_DIR)/dataset write -replace $(DATASET_DIR)/plan.json {}
	$(DATASET_DIR)/dataset check $(DATASET_DIR)/plan.json $(DATASET_DIR)

# Splitting costs nothing: the stack LZW workload as 8 files written by
# processes 2 at a time (-workers 1 each) against one process writing one
# file (-workers 2), medians of alternating runs.
dataset-compare:
	$(GO) run ./examples/dataset compare -runs 5

# The huge workload (65536 x 65536 uint8, streamed, BigTIFF): peak memory.
huge:
	$(GO) run ./examples/compare -workloads huge -runs 1

# ometiff convert against libvips on a 24576 x 16384 SVS-like slide and the
# 8192 x 8192 striped RGB Deflate TIFF, to LZW pyramids, and the slide with
# its JPEG tiles copied through (levels computed, or copied too) against
# libvips re-encoding it at Q70: medians of alternating runs and ratios;
# fails if a peak memory passes its bound. About 20 minutes.
convertcompare:
	$(GO) run ./examples/convertcompare -workloads svs,strips,copy,copy-levels -runs 3

# ometiff convert on a 100,000 x 100,000 RGB JPEG BigTIFF, to LZW: its peak
# memory must stay under 256 MiB. Slow (the output is about 15 GB).
hugeconvert:
	$(GO) run ./examples/convertcompare -workloads huge -runs 1

-include compress/Makefile.inc
