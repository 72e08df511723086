#!/usr/bin/env bash
# The whole pytest suite (tests/python) as two processes at once:
#
#   scripts/pytest-halves.sh PYTHON [PYTEST-ARGS...]
#
# the tests marked slow (they build the project or a package from source: the compiler's
# time, in subprocesses) and those on the CUDA simulator, beside all the others (JAX
# tracing, compiling and running ops: about one core). On the 2-core CI machine that
# takes about the longer half's time, not the sum; the simulated tests and three files of
# the others (below) even the halves (docs/notes.md, "CI"). The other half's output is printed live; the builders' half's
# when it ends. Exits non-zero if either half fails; exit 5 (pytest collected no tests:
# tests/python missing or broken) is a failure too.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
py=$1
shift

# Three files of the others join the builders' half (after its own tests), which is
# otherwise the shorter, so that both halves end about together: on the AVX2 2-core CI
# machine (2026-11-28) the others took 599-612 s beside 334-342 + 268-287 s; with
# test_raw_calls.py left with the others, 683 s beside 343 + 227 s.
moved=(tests/python/test_check_op_mistakes.py tests/python/test_check_op.py tests/python/test_raw_calls.py)
ignored=()
for f in "${moved[@]}"; do ignored+=(--ignore="$f"); done

slow_log=$(mktemp)
trap 'rm -f "$slow_log"' EXIT
builders() {  # both runs, their exit statuses combined (5, no tests collected, kept)
  local a=0 b=0
  "$py" -m pytest -q -p no:cacheprovider -m "slow or cuda_sim" "$@" tests/python || a=$?
  "$py" -m pytest -q -p no:cacheprovider -m "not slow and not cuda_sim" "$@" "${moved[@]}" || b=$?
  [ "$a" -ne 0 ] && return "$a"
  return "$b"
}
builders "$@" >"$slow_log" 2>&1 &
slow_pid=$!
# Stop the slow half too when this script is stopped.
trap 'kill "$slow_pid" 2>/dev/null; rm -f "$slow_log"; exit 130' INT TERM

status=0
"$py" -m pytest -q -p no:cacheprovider -m "not slow and not cuda_sim" "${ignored[@]}" "$@" tests/python || status=$?
slow_status=0
wait "$slow_pid" || slow_status=$?
printf '\n==> the tests that build from source and those on the CUDA simulator, then %s, run beside the others\n' "${moved[*]##*/}"
cat "$slow_log"

failed=0
for s in "$status" "$slow_status"; do
  if [ "$s" -eq 5 ]; then
    echo "pytest collected no tests: tests/python is missing or broken" >&2
    failed=1
  elif [ "$s" -ne 0 ]; then
    failed=1
  fi
done
exit "$failed"
