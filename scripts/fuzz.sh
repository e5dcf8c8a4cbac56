#!/usr/bin/env bash
# make fuzz: run every fuzz target of the module, one after the other.
#
# Targets are found, not listed: every `func FuzzXxx(f *testing.F)` in a
# _test.go file of a package of this module (`go list ./...`), so a target
# added anywhere is run without editing this script or the Makefile. go test
# fuzzes one target per invocation, hence one run per target:
#
#   go test -run '^$' -fuzz '^FuzzXxx$' -fuzztime $FUZZTIME ./path/to/pkg/
#
# Environment:
#   FUZZTIME  how long each target runs (default 30s; any -fuzztime value,
#             such as 10m or 5000x)
#   FUZZ      run only the targets whose "path/to/pkg.FuzzXxx" matches this
#             extended regular expression (default: all)
#   GO        the go command (default go)
#
# `scripts/fuzz.sh -l` lists the targets and runs nothing.
#
# Every target runs even when an earlier one fails; the script fails if any
# did. A failing input is written by go test to the package's
# testdata/fuzz/FuzzXxx/ directory: fix the code and commit that file, so that
# `make test` replays it from then on (plain `go test` runs every seed of
# testdata/fuzz as a subtest of its target).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-30s}
FUZZ=${FUZZ:-}

# targets prints "./pkg/dir/ FuzzName" for every fuzz target of the module.
targets() {
	local dir f
	"$GO" list -f '{{.Dir}}' ./... | while read -r dir; do
		for f in "$dir"/*_test.go; do
			[ -e "$f" ] || continue
			sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)([A-Za-z0-9_]* \*testing\.F).*/\1/p' "$f"
		done | sort -u | while read -r f; do
			printf './%s/ %s\n' "${dir#"$ROOT"/}" "$f"
		done
	done
}

list=$(targets | while read -r pkg name; do
	id=${pkg#./}
	id=${id%/}.$name
	if [ -z "$FUZZ" ] || grep -Eq -- "$FUZZ" <<<"$id"; then
		echo "$pkg $name"
	fi
done)

if [ "${1:-}" = "-l" ]; then
	[ -n "$list" ] && echo "$list"
	exit 0
fi
if [ -z "$list" ]; then
	echo "fuzz: no fuzz target${FUZZ:+ matches $FUZZ}" >&2
	exit 1
fi

total=$(echo "$list" | wc -l)
echo "fuzz: $total targets, $FUZZTIME each"
failed=()
i=0
while read -r pkg name; do
	i=$((i + 1))
	printf '\033[1m==> [%d/%d] %s %s\033[0m\n' "$i" "$total" "$pkg" "$name"
	# stdin from /dev/null: go test must not read the list being iterated.
	if ! "$GO" test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" "$pkg" </dev/null; then
		failed+=("$pkg $name")
	fi
done <<<"$list"

if [ ${#failed[@]} -gt 0 ]; then
	echo "fuzz: ${#failed[@]} of $total targets failed (failing inputs are under each package's testdata/fuzz/):" >&2
	printf '  %s\n' "${failed[@]}" >&2
	exit 1
fi
echo "fuzz: $total of $total targets ran $FUZZTIME each without a failure"
