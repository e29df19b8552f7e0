#!/usr/bin/env bash
# Runs already-built test suites two at a time: `test-pairs.sh FILTER_A FILTER_B [FILTER_C FILTER_D ...]` runs the
# Swift Testing suites matching FILTER_A and those matching FILTER_B side by side (two processes), waits for both,
# then the next pair, one test at a time on each side. A pair is chosen so that neither side disturbs the other
# (see the Makefile's `test`).
# The second filter's output streams as it runs; the first's is printed when the pair ends. Fails if any run
# fails, after every pair has run.
#
# It runs the package's test binary itself: two `swift test --skip-build` at once fail on SwiftPM's build
# database ("database is locked") even with --ignore-lock.
set -uo pipefail

swift="${SWIFT:-swift}"
if (($# % 2 != 0)); then
    echo "test-pairs.sh: filters come in pairs (got $#)" >&2
    exit 2
fi
# SWIFT_TEST_FLAGS may choose another build (-c release, -Xswiftc ...): ask for that build's directory.
read -r -a flags <<<"${SWIFT_TEST_FLAGS:-}"
bin="$("$swift" build --show-bin-path "${flags[@]}")" || exit 1
tests=("$bin"/*PackageTests.xctest)
if ((${#tests[@]} != 1)) || [[ ! -x "${tests[0]}" ]]; then
    echo "test-pairs.sh: no single test binary in $bin (build the tests first: swift build --build-tests)" >&2
    exit 1
fi

logs="$(mktemp -d)"
trap 'rm -rf -- "$logs"' EXIT
status=0
pair=0
while (($# > 0)); do
    first="$1" second="$2"
    shift 2
    pair=$((pair + 1))
    echo "== pair $pair: '$first' beside '$second'"
    "${tests[0]}" --testing-library swift-testing --no-parallel --filter "$first" >"$logs/first" 2>&1 &
    background=$!
    "${tests[0]}" --testing-library swift-testing --no-parallel --filter "$second" || status=1
    wait "$background" || status=1
    echo "== pair $pair: '$first'"
    cat -- "$logs/first"
done
exit "$status"
