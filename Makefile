# Parley's developer entry points. `make help` lists them.
SHELL := /usr/bin/env bash
GO    ?= go
BIN   := bin/parley
PKGS  := ./...
# ARGS are extra flags for `parley serve`: make run ARGS="--llm-base-url http://127.0.0.1:11434/v1"
ARGS  ?=
# Builds are -trimpath: the binary names no directory of the build machine,
# and the Go build cache serves one tree's compiled packages to a copy of it
# elsewhere (cmd/parley's tests build the binary, and the README test runs
# `make run` in a fresh copy: both link only, after `make test`'s build).
# TAGS are Go build tags for `make build`: nosherpa leaves out --stt sherpa's
# library loader, nosphinx the local recognizer's (pocketsphinx; --stt local
# then reports it unavailable). With both, nothing links the C library
# dynamically: TAGS="nosherpa nosphinx" builds a fully static binary, for
# scratch or musl images.
TAGS  ?=

.DEFAULT_GOAL := help

.PHONY: help
help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  make %-8s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: deps
deps: ## install missing system packages (apt-get when root) and check the toolchain
	@scripts/deps.sh

.PHONY: build
build: ## build bin/parley (CGO-free; TAGS="nosherpa nosphinx": fully static, without --stt sherpa and local recognition)
	@echo "building $(BIN) (the first build compiles every dependency and takes a few minutes; later ones take seconds)"
	CGO_ENABLED=0 $(GO) build -trimpath -tags "$(TAGS)" -o $(BIN) ./cmd/parley

.PHONY: run
run: deps build ## serve on the embedded SQLite database under ./parley-data (first start prints an API key); flags: ARGS="..."
	$(BIN) serve $(ARGS)

.PHONY: test
test: deps lint ## the whole test suite, with the race detector; PostgreSQL too when PARLEY_TEST_DATABASE_URL is set
	@scripts/test-services.sh
	CGO_ENABLED=0 $(GO) build -trimpath ./...
	CGO_ENABLED=1 $(GO) test -race -count=1 -timeout 14m $(PKGS)

.PHONY: soak
soak: export PARLEY_TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/test?sslmode=disable
soak: deps ## tests that need minutes (named ...Minute): a minute-long PostgreSQL outage under live and queued calls, two servers sharing a campaign on PostgreSQL, one killed (PARLEY_TEST_DATABASE_URL, default the local test database)
	@scripts/test-services.sh
	PARLEY_SOAK=1 CGO_ENABLED=1 $(GO) test -race -count=1 -timeout 30m -run 'Minute' -v ./cmd/parley/

.PHONY: deps-bench
deps-bench: ## install what only the benchmarks use too (scripts/bench-packages.txt: prompts, voices)
	@scripts/deps.sh scripts/packages.txt scripts/bench-packages.txt

.PHONY: bench
bench: deps-bench ## benchmarks on SQLite, and PostgreSQL when PARLEY_TEST_DATABASE_URL is set (results: docs/benchmarks.md)
	@scripts/test-services.sh
	$(GO) test -run '^$$' -bench . -benchmem -count 3 ./internal/api/ ./internal/callqueue/ ./internal/media/audio/
	$(GO) test -run '^$$' -bench CallSetup -benchtime 200x -count 5 ./internal/media/sipua/
	$(GO) test -run '^$$' -bench . -benchmem -count 3 ./internal/pipeline/vad/ ./internal/pipeline/voicemail/
	$(GO) test -run '^$$' -bench Conditioner -benchmem -count 3 ./internal/provider/stt/sphinx/
	$(GO) test -run '^$$' -bench 'TurnOverhead|Interruption' -benchtime 200x -count 3 ./internal/pipeline/
	PARLEY_BENCH_LOAD_CALLS=$${PARLEY_BENCH_LOAD_CALLS:-300} PARLEY_BENCH_LOAD_HOLD=$${PARLEY_BENCH_LOAD_HOLD:-60s} $(GO) test -run '^$$' -bench CallsWithAudio -benchtime 1x -count 3 -timeout 30m ./bench/
	PARLEY_BENCH_DATABASE_URL=$${PARLEY_TEST_DATABASE_URL} $(GO) test -run '^$$' -bench Admissions -benchtime 1x -count 3 -timeout 20m ./bench/
	PARLEY_BENCH_CHUNKS=$${PARLEY_BENCH_CHUNKS:-100000} $(GO) test -run '^$$' -bench SearchKnowledgeChunks -benchtime 200x -timeout 30m ./internal/store/sqlite ./internal/store/postgres
	PARLEY_BENCH_CALLS=$${PARLEY_BENCH_CALLS:-1000000} $(GO) test -run '^$$' -bench ListCalls -benchtime 50x -timeout 60m ./internal/store/sqlite ./internal/store/postgres
	$(GO) test -run '^$$' -bench DueCampaignRecipients -benchtime 200x -timeout 30m ./internal/store/sqlite ./internal/store/postgres
	$(GO) test -run '^$$' -bench AddCampaignRecipients -benchtime 3x -timeout 30m ./internal/store/sqlite ./internal/store/postgres
	PARLEY_BENCH_DATABASE_URL=$${PARLEY_TEST_DATABASE_URL} $(GO) test -run '^$$' -bench CampaignUpload -benchtime 1x -count 3 -timeout 30m ./bench/
	PARLEY_BENCH_DATABASE_URL=$${PARLEY_TEST_DATABASE_URL} PARLEY_BENCH_CAMPAIGN_FOR=$${PARLEY_BENCH_CAMPAIGN_FOR:-60s} $(GO) test -run '^$$' -bench CampaignDispatch -benchtime 1x -timeout 60m ./bench/
	$(GO) test -run '^$$' -bench Recognition -benchtime 1x -timeout 180m ./bench/
	$(GO) test -run '^$$' -bench INVITEFlood -benchtime 3x -timeout 20m ./cmd/parley/
	PARLEY_BENCH_PROXY_CALLS=$${PARLEY_BENCH_PROXY_CALLS:-20} $(GO) test -run '^$$' -bench ServersBehindKamailio -benchtime 1x -timeout 20m ./cmd/parley/

.PHONY: bench-stt
bench-stt: deps-bench ## word error rate of the local recognizer on labelled speech over real calls, scored by sclite (PARLEY_BENCH_STT_*; docs/benchmarks.md)
	$(GO) test -run '^$$' -bench Recognition -benchtime 1x -timeout 180m ./bench/

.PHONY: stt-adapt
stt-adapt: deps-bench ## retrain the local recognizer's phone MLLR transform and cepstral mean (stt/sphinx/model/phone.mllr, phone.cmninit) and measure them before/after (docs/benchmarks.md)
	nice -n 10 $(GO) run ./internal/provider/stt/sphinx/adapt train
	nice -n 10 $(GO) run ./internal/provider/stt/sphinx/adapt measure internal/provider/stt/sphinx/model/phone.mllr

.PHONY: bench-calls
bench-calls: deps-bench ## calls held on the wire: N SIPp calls with speech (CALLS=250,500,1000 HOLD=30s), RTP captured, rtpengine baseline (docs/benchmarks.md)
	PARLEY_BENCH_HELD_CALLS=$${CALLS:-250,500,1000} PARLEY_BENCH_HELD_HOLD=$${HOLD:-30s} $(GO) test -run '^$$' -bench CallsHeld -benchtime 1x -timeout 60m ./bench/

.PHONY: lint
lint: ## go vet and gofmt
	$(GO) vet $(PKGS)
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

.PHONY: fmt
fmt: ## format the code
	gofmt -w $$(git ls-files '*.go')

.PHONY: clean
clean: ## remove build output (never ./parley-data)
	rm -rf bin
