#!/usr/bin/env bash
# The benchmark report (README.md "Benchmarks"): runs every benchmark of the
# core packages once, with allocations, and prints the rows, then the ratio
# rows measured against in-run baselines (encoding/json, the naive scan
# ledger, raw driver inserts where a cluster is configured).
#
#   ./scripts/bench.sh                  # all core packages, -benchtime=1s
#   BENCHTIME=200ms ./scripts/bench.sh ./gcounter ./pncounter
#
# Output is also written to bench.out for benchstat.
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs=("$@")
if [ ${#pkgs[@]} -eq 0 ]; then
	pkgs=(./gcounter ./pncounter ./tpncounter ./ledger ./tally ./deltalog ./balance ./adapters/memory)
fi
go test -run '^$' -bench . -benchmem -benchtime="${BENCHTIME:-1s}" "${pkgs[@]}" | tee bench.out
echo
echo "== ratios and custom metrics (same run)"
grep -E '^(pkg:|Benchmark)' bench.out | awk '
	/^pkg:/ { pkg = $2; next }
	{ line = ""; for (i = 3; i <= NF; i += 2) { u = $(i+1); if (u != "ns/op" && u != "B/op" && u != "allocs/op") line = line sprintf("  %s %s", $i, u) }
	  if (line != "") printf "%-40s %-50s%s\n", pkg, $1, line }'
