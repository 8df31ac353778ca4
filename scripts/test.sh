#!/usr/bin/env bash
# The README's test command: set up this machine, then run every test layer it can run.
# Extra arguments go to pytest (e.g. bash scripts/test.sh -k images -x).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PYTHON=${PYTHON:-$(command -v python3 || command -v python)}

bash scripts/setup.sh

# A full run type-checks src/ ([tool.mypy] in pyproject.toml; docs/testing.md) beside the tests (a cold check
# takes minutes of one core: in front of the tests it was wall time): a type error fails the run at the end.
typecheck_log=$(mktemp)
typecheck_pid=
if [ "$#" -eq 0 ]; then
    echo "[test] type check beside the tests: $PYTHON -m mypy" >&2
    "$PYTHON" -m mypy >"$typecheck_log" 2>&1 & typecheck_pid=$!
fi
finish_typecheck() {
    [ -n "$typecheck_pid" ] || return 0
    local code=0
    wait "$typecheck_pid" || code=$?
    echo "[test] type check (python -m mypy, exit $code):" >&2
    cat "$typecheck_log"
    if [ "$code" -ne 0 ]; then
        echo "[test] error: the type check of src/ failed (python -m mypy)" >&2
        [ "$status" -ne 0 ] || status=1
    fi
}

# A full run goes in two phases: the suite in parallel workers (TEST_WORKERS; default one more than the cores, at
# least 3 and at most 8: most of a test's time is spent waiting on containers and subprocesses), then the tests
# marked serial alone (they leave or sweep leaked sandboxes machine-wide, which would race the other workers).
# Extra arguments: one plain run.
run_pytest() {
    set +e
    "$PYTHON" -m pytest "$@"
    local code=$?
    set -e
    if [ "$code" -eq 5 ]; then
        echo "[test] error: pytest collected no tests (pytest $*)" >&2
        code=1
    fi
    return "$code"
}
# The real rLLM (HEAD and v0.2.1, from the wheels) runs our classes; only on a full run. Its tests wait on
# their own containers (own run ids, nothing swept), so on a parallel run they go beside the parallel phase
# (log kept apart, printed after it) and are over before the serial tests sweep anything.
conformance_log=$(mktemp)
trap 'rm -f "$conformance_log" "$typecheck_log"' EXIT
conformance_pid=
start_conformance() { bash scripts/test_rllm_conformance.sh >"$conformance_log" 2>&1 & conformance_pid=$!; }
finish_conformance() {
    local conformance=0
    wait "$conformance_pid" || conformance=$?
    echo "[test] rLLM conformance (exit $conformance):" >&2
    cat "$conformance_log"
    [ "$status" -ne 0 ] || status=$conformance
}
cores=$(nproc 2>/dev/null || echo 2)
workers=${TEST_WORKERS:-$(( cores + 1 < 3 ? 3 : (cores + 1 > 8 ? 8 : cores + 1) ))}
status=0
if [ "$#" -eq 0 ] && [ "$workers" != 1 ] && "$PYTHON" -c "import xdist" 2>/dev/null; then
    start_conformance
    # loadfile in collection order, which tests/conftest.py sorts longest file first (xdist's own reorder puts
    # files with few tests last: the long ones were the tail of the run)
    echo "[test] parallel phase: $workers workers ($cores cores)" >&2
    run_pytest tests -v -n "$workers" --dist loadfile --no-loadscope-reorder -m "not serial" || status=$?
    finish_conformance
    run_pytest tests -v -m serial || { code=$?; [ "$status" -ne 0 ] || status=$code; }
else
    run_pytest tests -v "$@" || status=$?
    if [ "$#" -eq 0 ]; then
        start_conformance
        finish_conformance
    fi
fi
finish_typecheck
exit "$status"
