#!/usr/bin/env bash
# The one test command (README.md "Run the tests"): go vet, then go test -race,
# for every module in the repository. Property and simulation budgets default
# to a CI-sized run; COUNTERKIT_CASES=20 scales them up, COUNTERKIT_SEED=<n>
# replays a printed seed.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
for mod in . adapters/cassandra adapters/riak; do
	[ -f "$mod/go.mod" ] || continue
	echo "==> module $mod"
	( cd "$mod" && go vet ./... && go test -race -count=1 ./... ) || status=1
done
exit $status
