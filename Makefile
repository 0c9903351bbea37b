# vault-agent — build, test, benchmark.
GO       ?= go
BIN      ?= bin/vault-agent
NODE_DIRS := examples/node-client examples/acp-client examples/mcp-client scripts/embedserver

.PHONY: build install test test-go fuzz node-deps bench eval lint fmt clean

# The program is built without cgo: nothing in it needs C (the network
# resolver and user lookup have Go versions), and a static binary does not
# map the C library into every front-end process (1.4 MB of RSS each).
build:
	CGO_ENABLED=0 $(GO) build -o $(BIN) ./cmd/vault-agent

# install puts vault-agent on PATH: into $(go env GOBIN), else
# $(go env GOPATH)/bin, as go install does; with PREFIX, into $(PREFIX)/bin
# (make install PREFIX=/usr/local, or PREFIX=$$HOME/.local).
PREFIX ?=
install:
ifeq ($(PREFIX),)
	CGO_ENABLED=0 $(GO) install ./cmd/vault-agent
	@dir=$$($(GO) env GOBIN); echo "installed $${dir:-$$($(GO) env GOPATH)/bin}/vault-agent"
else
	mkdir -p $(PREFIX)/bin
	CGO_ENABLED=0 $(GO) build -o $(PREFIX)/bin/vault-agent ./cmd/vault-agent
	@echo "installed $(PREFIX)/bin/vault-agent"
endif

# The test target installs what the tests need (the npm packages of the
# Node clients: examples/node-client for serve, examples/acp-client for acp,
# examples/mcp-client for mcp; and scripts/embedserver, the embeddings
# server over a real sentence encoder that the tests and make eval use) so
# it works on a clean machine with only Go, Node and npm.
test: node-deps
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 15m ./...
	$(MAKE) fuzz

# Fuzzing: each target below runs for its own number of inputs (go test
# fuzzes one target per run), after its seed corpus. `make test` runs them
# all, about 50 s of fuzzing; a failing input is saved under the package's
# testdata/fuzz/ and fails the target. The targets: the JSON-RPC framing,
# every handler on arbitrary params (no panic, one reply each), the markdown
# parser (seeded with the inputs that were quadratic), the query parser, and
# undo on torn, truncated, huge and hostile edit journals (it never writes
# outside the vault, nor over a note no journaled edit left), and the
# vectors file damaged anywhere (opening it never fails or crashes; a
# damaged one is moved aside and rebuilt).
#
# The budgets are counts of inputs ("Nx"), each about 10 s here, not
# durations: Go's fuzzing coordinator up to 1.26 can fail a run that was
# given a duration with a bare "context deadline exceeded" and no failing
# input, when the deadline fires while a worker is busy (golang/go#75804).
# A count has no deadline. FUZZTIME=30s (or 50000x) overrides every budget.
FUZZTIME     ?=
FUZZ_TARGETS ?= rpc:FuzzStream:40000x rpc:FuzzHandlers:10000x vault:FuzzParse:12000x search:FuzzParseQuery:20000x vault:FuzzJournal:1500x search/semantic:FuzzVectorStore:4000x

fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; rest=$${t#*:}; name=$${rest%%:*}; budget=$${rest#*:}; \
		if [ -n "$(FUZZTIME)" ]; then budget=$(FUZZTIME); fi; \
		echo "fuzz $$name (./$$pkg) for $$budget"; \
		$(GO) test -run='^$$' -fuzz="^$$name\$$" -fuzztime=$$budget ./$$pkg || exit 1; \
	done

test-go:
	$(GO) test -count=1 ./...

node-deps:
	@for dir in $(NODE_DIRS); do \
		if [ -f $$dir/package.json ] && command -v npm >/dev/null 2>&1; then \
			(cd $$dir && npm ci --no-audit --no-fund --loglevel=error) || exit 1; \
		else \
			echo "node-deps: npm or $$dir/package.json missing; the Node client test of $$dir will be skipped"; \
		fi; \
	done

# Benchmarks: each runs in its own process so peak memory is per benchmark.
# BENCH_NOTES sets the generated vault size (default 10000).
bench:
	./scripts/bench.sh

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin

# Relevance: vault-agent's search against an SQLite FTS5 baseline (python3)
# on a question set over a vault. VERBOSE=1 lists every question.
#   make eval VAULT=../vaults/obsidian-hub QUESTIONS=../shared/eval/hub-questions.json
# Without VAULT it runs every set of EVAL_SETS (VAULT=QUESTIONS pairs; a set
# whose vault is missing is skipped): the hub and rockman sets, the two
# sets over Obsidian's help vault (vocabulary mismatch; plain questions)
# the set over Obsidian's developer docs, and the D&D and zettelkasten sets,
# the vaults under EVAL_VAULTS. EVAL_EMBED=use-lite also runs hybrid and
# semantic search with a real sentence encoder (the embeddings server of
# scripts/embedserver, started for the run; vectors cached by text in
# EVAL_EMBED_CACHE, so only the first run of a vault embeds it: the hub's
# 25,666 chunks take hours on 2 shared cores), and the offline answer check
# over hybrid search too; EVAL_EMBED=random checks that vectors without
# signal leave hybrid search equal to lexical. EVAL_FLAGS="--answers FILE"
# writes every answer (FILE-hybrid.md: over hybrid search) to read them.
EVAL_VAULTS ?= ../vaults
EVAL_SHARED ?= ../shared/eval
EVAL_SETS ?= $(EVAL_VAULTS)/obsidian-hub=$(EVAL_SHARED)/hub-questions.json \
	$(EVAL_VAULTS)/rockman-vault=testdata/eval/rockman-questions.json \
	$(EVAL_VAULTS)/obsidian-help=testdata/eval/help-vocabulary-questions.json \
	$(EVAL_VAULTS)/obsidian-help=testdata/eval/help-questions.json \
	$(EVAL_VAULTS)/obsidian-developer-docs=testdata/eval/devdocs-questions.json \
	$(EVAL_VAULTS)/dnd=testdata/eval/dnd-questions.json \
	$(EVAL_VAULTS)/zk=testdata/eval/zettelkasten-questions.json
EVAL_EMBED ?=
EVAL_EMBED_CACHE ?=
EVAL_ARGS = $(if $(VERBOSE),--verbose) $(if $(EVAL_EMBED),--embed $(EVAL_EMBED)) $(if $(EVAL_EMBED_CACHE),--embed-cache $(EVAL_EMBED_CACHE)) $(EVAL_FLAGS)

eval:
	@if [ -n "$(VAULT)" ]; then \
		test -n "$(QUESTIONS)" || { echo "usage: make eval [VAULT=DIR QUESTIONS=FILE] [VERBOSE=1] [EVAL_EMBED=use-lite|random] [EVAL_FLAGS=--rebuild]"; exit 2; }; \
		$(GO) run ./scripts/eval --vault "$(VAULT)" --questions "$(QUESTIONS)" $(EVAL_ARGS); \
	else \
		$(GO) build -o bin/eval ./scripts/eval || exit 1; \
		for set in $(EVAL_SETS); do \
			v=$${set%%=*}; q=$${set#*=}; \
			if [ ! -d "$$v" ] || [ ! -f "$$q" ]; then echo "eval: skipping $$v ($$v or $$q missing)"; continue; fi; \
			echo "## $$(basename $$q) over $$v"; echo; \
			./bin/eval --vault "$$v" --questions "$$q" $(EVAL_ARGS) || exit 1; echo; \
		done; \
	fi
