# cordon — see README.md. `make help` lists the targets.

GO      ?= go
TAGS    := seccomp
BIN     := bin/cordon
# A static binary, as runc's releases are: each cold run executes cordon
# three times (the CLI, libcontainer's init, the sandbox's init), and the
# dynamic loader's work for libc and libseccomp was 4-6 ms of CPU time per
# run (perf stat). netgo and osusergo keep glibc's NSS out of it;
# runc_nocriu leaves out libcontainer's checkpoint/restore (go-criu), which
# cordon does not offer (`cordon features` says so).
GOFLAGS_BUILD := -tags $(TAGS),runc_nocriu,netgo,osusergo -trimpath -ldflags '-linkmode external -extldflags -static'

.DEFAULT_GOAL := build

.PHONY: build run test unit integration bench bench-claude fuzz lint deps test-deps help clean

build: deps ## build bin/cordon, and check that the darwin build compiles
	$(GO) build $(GOFLAGS_BUILD) -o $(BIN) ./cmd/cordon
	GOOS=darwin CGO_ENABLED=0 $(GO) build ./...

run: build ## build, then show a sandboxed command on the embedded default policy
	@scripts/demo.sh $(BIN)

test: build test-deps ## install what is missing, then run every test (unit and integration)
	$(GO) vet -tags $(TAGS) ./...
	GOOS=darwin CGO_ENABLED=0 $(GO) vet ./...
	$(GO) test -tags $(TAGS) -count=1 -timeout 45m $$($(GO) list ./... | grep -v /integration)
	$(GO) test -tags $(TAGS) -count=1 -timeout 70m ./integration/...

unit: ## run the unit tests only (any OS, any user)
	$(GO) test -tags $(TAGS) -count=1 $$($(GO) list ./... | grep -v /integration)

integration: build test-deps ## run the integration tests (namespaces; as root they also run as an unprivileged user)
	$(GO) test -tags $(TAGS) -count=1 -v ./integration/

bench: build test-deps ## compare cordon with bare exec, bubblewrap and runc, cold and warm (cordon serve), and a Bash call in Claude Code, in one run; print medians and ratios into docs/performance.md
	$(GO) run -tags $(TAGS) ./integration/bench -cordon $(BIN) -doc docs/performance.md

bench-claude: build test-deps ## a Bash call in the real Claude Code: no sandbox, its own, cordon cold and through cordon serve; into docs/performance.md
	$(GO) run -tags $(TAGS) ./integration/bench -cordon $(BIN) -only claude -doc docs/performance.md

fuzz: ## run every fuzz target for a short while
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -tags $(TAGS) -list 'Fuzz.*' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -tags $(TAGS) -run '^$$' -fuzz "^$$f$$" -fuzztime 20s $$pkg || exit 1; \
	  done; \
	done

lint: ## gofmt, go vet, and the import boundaries of docs/architecture.md
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet -tags $(TAGS) ./...
	$(GO) test -tags $(TAGS) -run TestImportBoundaries -count=1 .

deps: ## install what building needs (libseccomp-dev, the static C libraries, pkg-config) with apt when missing
	@scripts/deps.sh build

test-deps: ## install what the tests and benchmarks need too (bubblewrap, containerd, node, ...) with apt when missing
	@scripts/deps.sh test

clean: ## remove build output
	rm -rf bin

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

.PHONY: conformance
conformance: build ## OCI validation suite (runtime-tools) against cordon and runc; both counts (root, ~3 min)
	scripts/conformance.sh cordon=$(abspath $(BIN)) runc=@runc
