#!/usr/bin/env bash
# make bench: runs each benchmark in its own `go test` process (peak memory is
# per process) on a generated vault of $BENCH_NOTES notes (default 10000),
# $BENCH_COUNT times (default 3), and prints the median of every metric.
# The generated vault and its index are cached in $VAULT_AGENT_BENCH_DIR
# (default .bench/) so repeated runs skip generation.
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

echo "# search (generated vault: $VAULT_AGENT_BENCH_NOTES notes)"
run ./search BenchmarkIndexFull10k
run ./search BenchmarkIndexNaive10k 1
run ./search BenchmarkSearch "$COUNT" ""
run ./search BenchmarkSearchBadInput "$COUNT" ""
run ./search BenchmarkReopen10k "$COUNT" ""
run ./search BenchmarkTouch10 "$COUNT" ""
run ./search BenchmarkSaveToSearchable 1
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
