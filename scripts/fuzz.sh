#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang under ASan + UBSan, in
# build-fuzz/, and runs all three at once for SECONDS each (default 60):
#
#   scripts/fuzz.sh [SECONDS]
#
# Exits non-zero if any target finds a crash, a leak, undefined behaviour, a
# timeout (an input running over 10 s) or an out-of-memory (over 2048 MB); the
# offending input is saved under build-fuzz/artifacts/TARGET/. New corpus inputs are
# kept in build-fuzz/corpus/TARGET/ and reused by the next run. docs/fuzzing.md.
#
# Installs missing Debian packages with apt-get (as root, or through sudo). Configuring
# the project also needs .venv with JAX (./run setup makes it; ./run fuzz does both).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DURATION=${1:-60}
BUILD=build-fuzz
JOBS=${OPSPEC_JOBS:-$(nproc)}
# clang and its sanitizer/libFuzzer runtimes; libomp because the top-level configure
# looks for OpenMP (for the extension) with whatever compiler it is given; cmake and
# libyaml for the generator itself.
DEBIAN_PACKAGES=(clang libclang-rt-14-dev libomp-14-dev cmake libyaml-dev)
TARGETS=(fuzz_spec fuzz_expr fuzz_call)

say() { printf '\n==> %s\n' "$*"; }

if ! [[ $DURATION =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: scripts/fuzz.sh [SECONDS]   (SECONDS: a positive integer, default 60)" >&2
  exit 2
fi

setup_debian() {
  local missing=()
  for p in "${DEBIAN_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return
  say "installing Debian packages: ${missing[*]}"
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get update
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
}

build() {
  if [ ! -x .venv/bin/python ]; then
    echo "scripts/fuzz.sh: .venv/bin/python is missing; the top-level configure needs JAX." >&2
    echo "Run ./run setup first (or ./run fuzz, which does)." >&2
    exit 1
  fi
  if ! grep -q 'add_subdirectory(tests/fuzz)' CMakeLists.txt; then
    echo "scripts/fuzz.sh: CMakeLists.txt does not add tests/fuzz when OPSPEC_FUZZ is ON" >&2
    exit 1
  fi
  say "building the fuzz targets in $BUILD (clang, ASan + UBSan)"
  cmake -S . -B "$BUILD" -DCMAKE_C_COMPILER=clang -DOPSPEC_FUZZ=ON -DOPSPEC_CUDA=OFF \
    -DOPSPEC_REGENERATE=ON -DBUILD_TESTING=OFF -DPython3_EXECUTABLE="$ROOT/.venv/bin/python" >/dev/null
  cmake --build "$BUILD" -j "$JOBS" --target "${TARGETS[@]}"
}

# Runs one target in the background; its output goes to $BUILD/logs/TARGET.log.
start() {
  local target=$1 max_len dict seeds=()
  case $target in
    fuzz_spec) max_len=65536 dict=tests/fuzz/spec.dict seeds=(specs tests/fixtures/bad tests/fuzz/spec_seeds) ;;
    fuzz_expr) max_len=4096 dict=tests/fuzz/expr.dict seeds=(tests/fuzz/expr_seeds) ;;
    # Call frames are bytes read in order (tests/fuzz/fuzz_call.c): no tokens to suggest.
    fuzz_call) max_len=8192 dict= seeds=(tests/fuzz/call_seeds) ;;
  esac
  mkdir -p "$BUILD/corpus/$target" "$BUILD/artifacts/$target" "$BUILD/logs"
  # The first corpus directory is the writable one; the seed directories are only read.
  # malloc_context_size=10 (not 30): ASan keeps every distinct allocation stack for
  # good, and the recursive parsers make new deep ones forever, so at 30 frames
  # fuzz_expr's memory grows ~40 MB per million runs and a long run would end at
  # -rss_limit_mb. Crash stacks are complete either way; replaying one input (with the
  # default) gives full allocation stacks.
  # exec: the background job's pid is the fuzzer's, so the trap below can stop it.
  ASAN_OPTIONS=detect_leaks=1:malloc_context_size=10 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    exec "$BUILD/tests/fuzz/$target" -max_total_time="$DURATION" -timeout=10 -rss_limit_mb=2048 \
    -max_len="$max_len" ${dict:+-dict="$dict"} -artifact_prefix="$BUILD/artifacts/$target/" \
    -print_final_stats=1 "$BUILD/corpus/$target" "${seeds[@]}" >"$BUILD/logs/$target.log" 2>&1
}

# One line per target from its log: executions, time, corpus size; the report if it failed.
summarize() {
  local target=$1 status=$2 seconds=$3
  local log=$BUILD/logs/$target.log execs corpus
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  corpus=$(find "$BUILD/corpus/$target" -type f | wc -l)
  if [ "$status" -eq 0 ]; then
    printf '%s: ok, %s executions in %d s, corpus %d files\n' "$target" "${execs:-?}" "$seconds" "$corpus"
    return
  fi
  printf '%s: FAILED (exit %d) after %s executions in %d s; log %s\n' \
    "$target" "$status" "${execs:-?}" "$seconds" "$log"
  # The sanitizer's headline and summary, the harness's own message, the saved input;
  # or, when libFuzzer failed before fuzzing (a bad flag, say), the end of the log.
  local report
  report=$(grep -E '^(==[0-9]+==|SUMMARY:|.*runtime error:|fuzz_(spec|expr|call): )|Test unit written to' "$log" |
    head -n 20 || true)
  if [ -n "$report" ]; then printf '%s\n' "$report"; else tail -n 5 "$log"; fi
}

setup_debian
build

say "fuzzing ${TARGETS[*]} for $DURATION s each (logs in $BUILD/logs)"
declare -A pids starts
# Background jobs of a script ignore Ctrl-C; stop them when the script is stopped.
trap 'kill "${pids[@]}" 2>/dev/null; exit 130' INT TERM
for target in "${TARGETS[@]}"; do
  start "$target" &
  pids[$target]=$!
  starts[$target]=$(date +%s)
done
failed=0
for target in "${TARGETS[@]}"; do
  status=0
  wait "${pids[$target]}" || status=$?
  summarize "$target" "$status" $(($(date +%s) - starts[$target]))
  [ "$status" -eq 0 ] || failed=1
done
if [ "$failed" -ne 0 ]; then
  echo "fuzzing found a problem: reproduce with $BUILD/tests/fuzz/TARGET FILE (docs/fuzzing.md)" >&2
fi
exit "$failed"
