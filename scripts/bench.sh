#!/usr/bin/env bash
# make bench: runs each benchmark in its own `go test` process (peak memory is
# per process) on a generated vault of $BENCH_NOTES notes (default 10000),
# $BENCH_COUNT times (default 3), and prints the median of every metric.
# The generated vault and its index are cached in $VAULT_AGENT_BENCH_DIR
# (default .bench/) so repeated runs skip generation. BENCH_NOTES=100000
# gives the serving figures at 100,000 notes (saves, memory, a branch
# switch, serve itself) to set beside those at 10,000.
#
# BENCH_VAULT=DIR is the real-corpus mode: only a full index of the vault
# folder DIR (BenchmarkIndexVault), in turn with bleve alone on the same
# notes (BenchmarkBleveFloor, BenchmarkBleveFloorFTS5Fields: what bleve takes
# once the documents are made) and with the SQLite FTS5 baseline
# (eval/fts5.py index, python3) on the same folder, $BENCH_COUNT times
# each. The full index of the generated vault is paired with FTS5 the same
# way. The medians end with each full index's time over FTS5's, the median
# of the pairs' ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
export VAULT_AGENT_BENCH_DIR="${VAULT_AGENT_BENCH_DIR:-$PWD/.bench}"
export VAULT_AGENT_BENCH_NOTES="${BENCH_NOTES:-10000}"
# The first search benchmark builds the cached vault and index; it runs
# first so the serving benchmarks measure processes that never bulk-indexed.
COUNT="${BENCH_COUNT:-3}"
mkdir -p "$VAULT_AGENT_BENCH_DIR"
OUT="$VAULT_AGENT_BENCH_DIR/bench.out"
: > "$OUT"

run() { # package benchmark [count] [benchtime]
	local pkg=$1 name=$2 count=${3:-$COUNT} benchtime=${4-1x}
	for _ in $(seq "$count"); do
		go test -run '^$' -bench "^${name}\$" ${benchtime:+-benchtime "$benchtime"} -count 1 "$pkg" 2>&1 |
			grep -E '^Benchmark' | tee -a "$OUT"
	done
}

# paired VAULT NAME...: the full-index benchmark NAME of ./search (and any
# further ones) and the FTS5 baseline on VAULT, in turn, $COUNT times each
# (one test binary, built first). The FTS5 run is named after the first.
paired() {
	local vault=$1 name=$2 bin="$VAULT_AGENT_BENCH_DIR/search.test"
	shift
	go test -c -o "$bin" ./search
	for _ in $(seq "$COUNT"); do
		for b in "$@"; do
			"$bin" -test.run '^$' -test.bench "^${b}\$" -test.benchtime 1x 2>&1 | grep -E '^Benchmark' | tee -a "$OUT"
		done
		python3 eval/fts5.py index "$vault" "$VAULT_AGENT_BENCH_DIR/fts5.db" "BenchmarkFTS5${name#Benchmark}" | tee -a "$OUT"
	done
	rm -f "$VAULT_AGENT_BENCH_DIR/fts5.db"
}

machine() {
	echo "# machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | xargs), load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null), $(go version | cut -d' ' -f3), $(python3 -c 'import sqlite3; print("sqlite", sqlite3.sqlite_version)')"
}

if [ -n "${BENCH_VAULT:-}" ]; then
	export VAULT_AGENT_BENCH_VAULT
	VAULT_AGENT_BENCH_VAULT="$(cd "$BENCH_VAULT" && pwd)"
	machine
	echo "# full index of $VAULT_AGENT_BENCH_VAULT, in turn with bleve alone (the floor: documents made"
	echo "# before the timer; ours, and FTS5's three fields) and with FTS5"
	paired "$VAULT_AGENT_BENCH_VAULT" BenchmarkIndexVault BenchmarkBleveFloor BenchmarkBleveFloorFTS5Fields
	echo
	echo "# medians over runs ($OUT)"
	go run ./scripts/benchmedian < "$OUT"
	exit 0
fi

machine
echo "# search (generated vault: $VAULT_AGENT_BENCH_NOTES notes)"
run ./search BenchmarkIndexFull10k 1 # generates the vault when it is not cached
GEN_VAULT="$VAULT_AGENT_BENCH_DIR/vault-$VAULT_AGENT_BENCH_NOTES-42"
paired "$GEN_VAULT" BenchmarkIndexFull10k
run ./search BenchmarkIndexNaive10k 1
run ./search BenchmarkSearch "$COUNT" ""
run ./search BenchmarkSearchBadInput "$COUNT" ""
run ./search BenchmarkReopen10k "$COUNT" ""
run ./search BenchmarkTouch10 "$COUNT" ""
run ./search BenchmarkSaveToSearchable 1
run ./search BenchmarkServeMemory "$COUNT"
run ./search BenchmarkBranchSwitch 1
echo "# vault-agent serve: resident memory after opening the index and answering 1,000 searches"
go build -o "$VAULT_AGENT_BENCH_DIR/vault-agent" ./cmd/vault-agent
for _ in $(seq "$COUNT"); do
	go run ./scripts/benchserve --bin "$VAULT_AGENT_BENCH_DIR/vault-agent" --vault "$GEN_VAULT" \
		--index "$VAULT_AGENT_BENCH_DIR/index-$VAULT_AGENT_BENCH_NOTES-42-serve" | tee -a "$OUT"
done
echo "# search/semantic (100,000 chunks x 768 dimensions, embedder excluded)"
run ./search/semantic BenchmarkSemanticQuery100k "$COUNT" 1x
BENCH_FILES="rpc/*_test.go agent/*_test.go agent/offline/*_test.go reasoning/*_test.go"
for b in $(grep -ho '^func Benchmark[A-Za-z0-9_]*' $BENCH_FILES 2>/dev/null | sed 's/^func //'); do
	pkg=$(grep -l "^func $b(" $BENCH_FILES | head -1 | xargs dirname)
	echo "# $pkg $b"
	run "./$pkg" "$b" "$COUNT" 1x
done

echo
echo "# medians over runs ($OUT)"
go run ./scripts/benchmedian < "$OUT"
