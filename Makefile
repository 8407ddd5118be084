# transcriber: speech-to-text on Yandex Cloud Functions.
# `make run` runs the service locally, `make test` runs the tests; `make help`
# lists the rest.

GO                    ?= go
GO_RUNTIME            := go1.23.9# the Cloud Functions runtime (golang123)
GOLANGCI_LINT_VERSION := v2.15.0
TOOLS                 := $(CURDIR)/.tools
GOLANGCI_LINT         := $(TOOLS)/golangci-lint-$(GOLANGCI_LINT_VERSION)

.DEFAULT_GOAL := help

.PHONY: help
help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z0-9-]+:.*## / {printf "  make %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: run
run: ## build ./transcriber and run the whole service on this machine (Ctrl-C stops it)
	@GO=$(GO) scripts/build-local.sh
	./transcriber local

.PHONY: test
test: ## run every test, with the race detector, then the fuzzers for a few seconds each
	$(GO) test -race -count=1 ./...
	$(MAKE) --no-print-directory fuzz

# The fuzz targets, as package:Target (docs/testing.md, "Fuzzing"). `make
# fuzz` runs each for FUZZTIME (default 5s), `make fuzz-long` for FUZZTIME
# (default 4m) and prints the execs each reached. A crasher is written to the
# package's testdata/fuzz/<Target>/ and stays there as a regression seed.
FUZZ_TARGETS := \
	./internal/httpapi:FuzzParseCreate \
	./internal/httpapi:FuzzGatewayPath \
	./internal/ident:FuzzParse \
	./internal/media/ffmpeg:FuzzProbeJSON \
	./internal/telegram:FuzzUpdate \
	./internal/trigger:FuzzObjectEvent \
	./internal/trigger:FuzzTimerEvent \
	./internal/speechkit:FuzzResultRender \
	./internal/speechkit:FuzzMetadataToken \
	./internal/speechkit:FuzzSyncAnswer \
	./internal/transcript:FuzzRenderStored \
	./internal/storage/s3:FuzzReadError \
	./internal/uploadlink:FuzzValid \
	./internal/media/oggopus:FuzzMeter \
	./internal/media/oggopus:FuzzCheck

# fuzz-each runs every target for $(1), printing for each its last
# "fuzz: elapsed: …, execs: N" line (the whole output when it fails), and
# fails at the end if a target crashed or is missing. A run that failed
# only with "context deadline exceeded" and wrote no failing input met Go's
# fuzz coordinator race at -fuzztime's end (golang/go#75804, fixed in Go
# 1.27, not in the 1.26 used here): it is run once more.
fuzz-each = failed=; log=$$(mktemp); trap 'rm -f "$$log"' EXIT; \
	for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t\#*:}; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(1) "$$pkg" >"$$log" 2>&1; rc=$$?; \
		if [ $$rc -ne 0 ] && grep -aq 'context deadline exceeded' "$$log" && ! grep -aq 'Failing input written' "$$log"; then \
			echo "$$name: the fuzz coordinator's deadline race (Go issue 75804), no input failed; run again"; \
			$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(1) "$$pkg" >"$$log" 2>&1; rc=$$?; fi; \
		if grep -aq 'no fuzz tests to fuzz' "$$log"; then \
			echo "$$name ($$pkg): no such fuzz target"; failed="$$failed $$name"; continue; fi; \
		echo "$$name ($$pkg, $(1)): $$(grep -a '^fuzz: elapsed: .*execs: ' "$$log" | tail -n 1)"; \
		if [ $$rc -ne 0 ]; then cat "$$log"; failed="$$failed $$name"; fi; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzzing failed:$$failed"; exit 1; fi

.PHONY: fuzz
fuzz: ## run each fuzz target for FUZZTIME (default 5s): every decoder of outside bytes
	@$(call fuzz-each,$(or $(FUZZTIME),5s))

.PHONY: fuzz-long
fuzz-long: ## run each fuzz target for FUZZTIME (default 4m); prints the execs each reached and any crasher; fails if one crashes
	@$(call fuzz-each,$(or $(FUZZTIME),4m))

# The YDB store's suites against a real YDB: the one at YDB_CONNECTION_STRING
# when it is set (credentials from its YDB_* variables, as `transcriber
# migrate` takes them), else a throwaway local YDB (ydbplatform/local-ydb,
# in memory; https://ydb.tech/docs/en/reference/docker/start). Without
# either it says so and succeeds: the suite itself skips without YDB.
# A Yandex Cloud serverless database gets the store probe instead
# (`transcriber selftest --store`: one scratch schema, its request units):
# the suites' some 170 stores make about 4,000 schema operations, where a
# serverless database allows 30 a minute and 1,000 a day
# (docs/database.md, "Checking a real database").
YDB_IMAGE     ?= ydbplatform/local-ydb:latest
YDB_CONTAINER ?= transcriber-test-ydb
YDB_TEST       = $(GO) test ./internal/store/ydb/ -run . -count=1 -race -v

.PHONY: test-ydb
test-ydb: ## run the YDB store's contract suites against YDB_CONNECTION_STRING when set (the store probe for a serverless database), else ydbplatform/local-ydb in Docker (says so and exits 0 without Docker)
	@if [ -n "$$YDB_CONNECTION_STRING" ]; then \
		case "$$YDB_CONNECTION_STRING" in *.serverless.yandexcloud.net*) \
			echo "test-ydb: $$YDB_CONNECTION_STRING is a serverless database: the store probe, not the suites (docs/database.md, \"Checking a real database\")"; \
			$(GO) run ./cmd/transcriber selftest --store; exit $$?;; esac; \
		echo "test-ydb: the suites against $$YDB_CONNECTION_STRING, each store in a directory transcriber_test/<id> removed afterwards"; \
		$(YDB_TEST); exit $$?; fi; \
	if ! docker info >/dev/null 2>&1; then \
		echo "test-ydb: docker is not available (docker info failed) and YDB_CONNECTION_STRING is unset: the YDB suite was not run"; exit 0; fi; \
	docker rm -f $(YDB_CONTAINER) >/dev/null 2>&1 || true; \
	docker run -d --rm --name $(YDB_CONTAINER) --hostname localhost \
		-p 2136:2136 -e GRPC_PORT=2136 -e GRPC_TLS_PORT=2135 -e MON_PORT=8765 \
		-e YDB_USE_IN_MEMORY_PDISKS=true $(YDB_IMAGE) >/dev/null || exit 1; \
	trap 'docker stop $(YDB_CONTAINER) >/dev/null 2>&1 || true' EXIT; \
	echo "test-ydb: waiting for YDB"; ready=; \
	for i in $$(seq 1 90); do \
		if docker exec $(YDB_CONTAINER) /health_check >/dev/null 2>&1; then ready=1; break; fi; sleep 2; done; \
	if [ -z "$$ready" ]; then echo "test-ydb: YDB did not become ready in 3 minutes"; docker logs --tail 50 $(YDB_CONTAINER); exit 1; fi; \
	YDB_CONNECTION_STRING=grpc://localhost:2136/local YDB_ANONYMOUS_CREDENTIALS=1 $(YDB_TEST)

# `make bench` runs every benchmark but ffmpeg's (about two minutes; CI
# runs it, so a benchmark that fails fails CI); `make bench-media` runs
# ffmpeg's, which convert hours of audio (about four minutes).
BENCH_MEDIA := ./internal/media/ffmpeg

.PHONY: bench
bench: ## run the benchmarks but ffmpeg's and print their ratios (about two minutes)
	pkgs=$$($(GO) list ./... | grep -v '/$(patsubst ./%,%,$(BENCH_MEDIA))$$') && \
		$(GO) test -run '^$$' -bench . -benchtime 1x -count 1 $$pkgs

.PHONY: bench-media
bench-media: ## run ffmpeg's benchmarks (needs ffmpeg; streaming, Split, about four minutes) and print their ratios
	$(GO) test -run '^$$' -bench . -benchtime 1x -count 1 $(BENCH_MEDIA)

.PHONY: bench-load
bench-load: ## the load model (docs/scale.md): 1,000 mixed jobs in a minute, steady loads of 2,000-30,000 a day with and without synchronous recognition, 100,000 a day with raised quotas (about four minutes)
	$(GO) test -run '^$$' -bench '^BenchmarkLoad$$' -benchtime 1x -count 1 ./internal/loadsim -args -load

# Deployment packages (docs/deploy.md). The ingest and poll zips carry a
# static Linux x86-64 ffmpeg and ffprobe: John Van Sickle's build of FFmpeg
# 7.0.2, pinned by its SHA-256, downloaded once into FFMPEG_CACHE and
# verified (scripts/ffmpeg-bundle.sh). Offline: FFMPEG_ARCHIVE=<path to the
# same .tar.xz>. Another build: set FFMPEG_URL and FFMPEG_SHA256 together.
FFMPEG_URL          ?= https://johnvansickle.com/ffmpeg/releases/ffmpeg-7.0.2-amd64-static.tar.xz
FFMPEG_URL_FALLBACK ?= https://johnvansickle.com/ffmpeg/old-releases/ffmpeg-7.0.2-amd64-static.tar.xz
FFMPEG_SHA256       ?= abda8d77ce8309141f83ab8edf0596834087c52467f6badf376a6a2a4c87cf67
FFMPEG_CACHE        ?= $(HOME)/.cache/transcriber
export FFMPEG_URL FFMPEG_URL_FALLBACK FFMPEG_SHA256 FFMPEG_CACHE

.PHONY: package
package: ## one zip per function in dist/ with the verified ffmpeg bundle; prints sizes, SHA-256 and upload path
	GO=$(GO) scripts/package.sh

.PHONY: ffmpeg-bundle
ffmpeg-bundle: ## download (once) and verify the pinned static ffmpeg build; prints where it is
	@scripts/ffmpeg-bundle.sh

.PHONY: emulate-build
emulate-build: package ## build each zip as the platform does (Go 1.23.9, plugin, ycf, cold cache, one CPU), timed
	GO=$(GO) GO_RUNTIME=$(GO_RUNTIME) scripts/emulate-build.sh

.PHONY: lint
lint: fmt-check vet golangci-lint tidy-check check-go123 check-large-files ## every static check

# Only source, docs and small test data are tracked: a build output (the
# 47 MB binary once committed) or a stray archive is refused. Files under a
# testdata/ directory are test data and may be larger.
LARGE_FILE_BYTES := 1048576

.PHONY: check-large-files
check-large-files: ## fail if a tracked file over 1 MB is not test data
	@big=$$(git ls-files -z | xargs -0 -r stat -c '%s %n' 2>/dev/null | \
		awk -v max=$(LARGE_FILE_BYTES) '$$1 > max && $$2 !~ /(^|\/)testdata\// {print $$2 " (" $$1 " bytes)"}'); \
	if [ -n "$$big" ]; then echo "tracked files over 1 MB that are not test data:"; echo "$$big"; exit 1; fi

.PHONY: fmt-check
fmt-check: ## fail if gofmt would change a file
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

.PHONY: vet
vet: ## go vet with the installed Go
	$(GO) vet ./...

.PHONY: golangci-lint
golangci-lint: $(GOLANGCI_LINT) ## golangci-lint at the pinned version
	$(GOLANGCI_LINT) run ./...

$(GOLANGCI_LINT):
	mkdir -p $(TOOLS)
	GOBIN=$(TOOLS) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(TOOLS)/golangci-lint $@

.PHONY: tidy-check
tidy-check: ## fail if `go mod tidy` would change go.mod or go.sum
	$(GO) mod tidy -diff

.PHONY: check-go123
check-go123: ## the module builds and vets with Go 1.23.9, the Cloud Functions runtime
	@gov=$$(awk '$$1 == "go" {print $$2}' go.mod); \
	case "$$gov" in 1.23|1.23.[0-9]) ;; *) echo "go.mod says 'go $$gov'; the runtime is $(GO_RUNTIME): keep 'go 1.23'"; exit 1;; esac
	@if grep -q '^toolchain' go.mod; then echo "go.mod has a toolchain line; the platform builds with exactly $(GO_RUNTIME)"; exit 1; fi
	GOTOOLCHAIN=$(GO_RUNTIME) $(GO) vet ./...
	GOTOOLCHAIN=$(GO_RUNTIME) $(GO) build ./...
