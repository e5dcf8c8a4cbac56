# Wharf: the two commands that matter are `make run` and `make test`.
GO        ?= go
BINARIES  := api worker scheduler callbridge platformsim
export TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable
export TEST_REDIS_URL    ?= redis://127.0.0.1:6379/0

BENCH_COUNT ?= 1
# How long `make fuzz` runs each fuzz target (docs/FUZZING.md).
FUZZTIME ?= 30s
# Tests of one package run four at a time (t.Parallel): each owns its
# PostgreSQL and Redis databases, and most wait on I/O, so four fit two CPUs.
TEST_PARALLEL ?= 4

.PHONY: console build run stop test fuzz bench lint migrate clean

console: ## build the web console into api/console/files (skipped when console/ is unchanged; Node fetched into .tools/ if needed)
	@./scripts/console.sh

build: console ## compile bin/api (with the console), bin/worker, bin/scheduler, bin/callbridge, bin/platformsim
	@mkdir -p bin
	$(GO) build -o bin/ $(addprefix ./cmd/,$(BINARIES))

run: build ## start PostgreSQL and Redis if needed, migrate, run every process
	@./scripts/run.sh

stop: build ## stop the private PostgreSQL and Redis that `make run` may have started
	@./scripts/run.sh stop

test: console ## the whole suite, against real PostgreSQL and Redis, with the race detector (the browser tests too)
	$(GO) vet ./...
	@unformatted=$$(gofmt -l .); if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	@# The longest packages first: go test starts packages in the order named.
	$(GO) test -race -count=1 -parallel $(TEST_PARALLEL) -timeout 30m ./e2e/campaigns/ ./api/ ./e2e/ ./...
	@# Tests that assert rates run without the race detector (e2e/load/doc.go).
	$(GO) test -count=1 -timeout 10m ./e2e/load/

fuzz: ## every Fuzz* target of the module, FUZZTIME each (default 30s), one after the other; FUZZ=regexp picks some
	@FUZZTIME=$(FUZZTIME) GO=$(GO) ./scripts/fuzz.sh

bench: ## the benchmarks behind docs/BENCHMARKS.md (fixed workloads; BENCH_COUNT runs; sizes in bench/*.go)
	$(GO) test -run '^$$' -bench . -benchtime=1x -count=$(BENCH_COUNT) -timeout 180m ./bench/
	@# Bridged calls: peers in a child process, the bridge's CPU and forwarding delay (docs/BENCHMARKS.md).
	$(GO) test -run '^$$' -bench . -count=$(BENCH_COUNT) -timeout 30m ./callbridge/media/

lint: ## vet and gofmt only
	$(GO) vet ./...
	@test -z "$$(gofmt -l .)" || (gofmt -l . && exit 1)

migrate: build ## apply migrations to DATABASE_URL
	./bin/api migrate

clean:
	rm -rf bin api/console/files/app api/console/files/stamp api/console/files/build.log
