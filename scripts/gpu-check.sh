#!/usr/bin/env bash
# Builds opspec with its CUDA part on a GPU machine and runs, in one command, the GPU
# tests, the CPU tests on the same build, the GPU benchmark and compute-sanitizer.
#
#   bash scripts/gpu-check.sh [OUT_DIR]               # OUT_DIR: default $OUT, else /tmp/opspec-gpu
#   bash scripts/gpu-check.sh --build-only [OUT_DIR]  # steps 1-2 only: no GPU needed
#
# Made for a GPU machine as the device tool lends one: its own python3 with jax, jaxlib
# and the CUDA plugin preinstalled (seen: Python 3.12, jax 0.11.2, jax-cuda13-plugin,
# pytest, scipy, flatbuffers), nvcc, cmake, and no network. Nothing is downloaded here
# (PIP_NO_INDEX). What such a machine lacks travels with the working tree in .gpu/,
# which scripts/gpu-stage.sh fills on a machine with network (.gpu/ is git-ignored: name
# it in the device tool's carry, [".gpu"]):
#   .gpu/yaml/    Debian's libyaml-dev and libyaml-0-2, unpacked: with it, opspec-gen is
#                 built and regenerates generated/ as on any machine; without it (and no
#                 system yaml.h), the build uses the committed generated/ and the tests
#                 that run opspec-gen are left out;
#   .gpu/wheels/  wheels of Python packages python3 lacks, installed offline first.
# PYTHON= picks another Python; CUDA_ARCH= another GPU generation (default 90, Hopper).
#
# A lent machine gives a session about 15 minutes in all, so the steps run in order of what
# only a GPU can show (GPU tests, benchmark, compute-sanitizer) and each has a time limit
# (seconds: GPU_TESTS_S, BENCH_S, PROFILE_S, MEMCHECK_S, CPU_TESTS_S); a step that runs out says so and
# the next one starts. The CPU tests, which CI also runs, come last, spread over the
# machine's cores where pytest-xdist is installed, and get at most what is left of
# BUDGET_S (the whole script's seconds, when set).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
BUILD_ONLY=0
if [ "${1:-}" = "--build-only" ]; then
  BUILD_ONLY=1
  shift
fi
OUT=${1:-${OUT:-/tmp/opspec-gpu}}
mkdir -p "$OUT"
PY=$(command -v "${PYTHON:-python3}")
export PYTHONUNBUFFERED=1 PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1

echo "== machine"
if [ "$BUILD_ONLY" = 0 ]; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
fi
"$PY" -c "import sys, jax, jaxlib; print('Python', sys.version.split()[0], '| jax', jax.__version__, '| jaxlib', jaxlib.__version__, '|', jax.devices())"
nvcc --version | tail -1
cmake --version | head -1

if compgen -G ".gpu/wheels/*.whl" > /dev/null; then
  echo "== wheels from .gpu/wheels (offline)"
  "$PY" -m pip install --quiet --no-index --no-deps .gpu/wheels/*.whl || exit 1
fi
missing=$("$PY" -c "
import importlib.util
print(' '.join(m for m in ('jax', 'jaxlib', 'numpy', 'scipy', 'pytest') if importlib.util.find_spec(m) is None))")
if [ -n "$missing" ]; then
  echo "$PY lacks: $missing (stage wheels: bash scripts/gpu-stage.sh $missing)" >&2
  exit 1
fi

# libyaml for opspec-gen: the staged copy, else the system's, else the committed generated/.
yaml_flags=(-DOPSPEC_REGENERATE=ON)
staged_h=.gpu/yaml/usr/include/yaml.h
staged_lib=$(ls .gpu/yaml/usr/lib/*/libyaml.a 2> /dev/null | head -1)
if [ -f "$staged_h" ] && [ -n "$staged_lib" ]; then
  # The static library: opspec-gen then needs no libyaml at run time either.
  # Exported too: the tests that build a copy of the tree or a user package find it so.
  export OPSPEC_YAML_INCLUDE_DIR=$ROOT/.gpu/yaml/usr/include OPSPEC_YAML_LIBRARY=$ROOT/$staged_lib
  yaml_flags+=(-DOPSPEC_YAML_INCLUDE_DIR="$OPSPEC_YAML_INCLUDE_DIR" -DOPSPEC_YAML_LIBRARY="$OPSPEC_YAML_LIBRARY")
  echo "libyaml: staged in .gpu/yaml (static: $staged_lib)"
elif [ -f /usr/include/yaml.h ]; then
  echo "libyaml: the system's"
else
  yaml_flags=(-DOPSPEC_REGENERATE=OFF)
  echo "libyaml: none (no .gpu/yaml, no /usr/include/yaml.h): building from the committed generated/"
fi

echo "== build"
start=$SECONDS
cmake -S . -B build-gpu -DPython3_EXECUTABLE="$PY" "${yaml_flags[@]}" -DOPSPEC_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" -DBUILD_TESTING=OFF > "$OUT/configure.log" 2>&1 ||
  {
    tail -40 "$OUT/configure.log"
    exit 1
  }
cmake --build build-gpu -j "$(nproc)" > "$OUT/build.log" 2>&1 ||
  {
    grep -E "error" "$OUT/build.log" | head -40
    tail -20 "$OUT/build.log"
    exit 1
  }
# Absolute: tests start Pythons in other folders (opspec new, user packages).
export PYTHONPATH=$ROOT/build-gpu/python
"$PY" -c "
import opspec
info = opspec.build_info()
assert info['cuda'], 'built without its CUDA part'
print('built in $((SECONDS - start)) s:', info)" || exit 1
deselect="slow"
if [ -x build-gpu/generator/opspec-gen ]; then
  export OPSPEC_GEN=$ROOT/build-gpu/generator/opspec-gen
else
  deselect="slow and not generator and not golden"
fi
[ "$BUILD_ONLY" = 1 ] && exit 0

# Runs "$@" for at most $1 seconds, its output in $OUT/$2; says how it ended and how long it took.
run_step() {
  local limit=$1 log=$OUT/$2 t0=$SECONDS rc
  shift 2
  timeout --kill-after=10 "$limit" "$@" > "$log" 2>&1
  rc=$?
  [ "$rc" = 124 ] && echo "(stopped at its limit of $limit s)"
  echo "exit $rc after $((SECONDS - t0)) s (log: $(basename "$log"))"
  return 0
}

echo "== GPU tests"
run_step "${GPU_TESTS_S:-200}" pytest-gpu.log "$PY" -m pytest -q -p no:cacheprovider -m gpu tests/python
tail -25 "$OUT/pytest-gpu.log"

if [ -f bench/bench_gpu.py ]; then
  echo "== GPU benchmark"
  run_step "${BENCH_S:-120}" bench-gpu.log "$PY" bench/bench_gpu.py --out "$OUT"
  tail -30 "$OUT/bench-gpu.log"
fi

# Where each call's time goes: the kernels' own time against the calls' (Nsight Systems,
# where the image has it), at one size, opspec's kernels beside XLA's fusions.
nsys_bin=$(command -v nsys || ls /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems*/bin/nsys 2> /dev/null | head -1)
if [ -f bench/bench_gpu.py ] && [ -n "$nsys_bin" ]; then
  echo "== kernel times (nsys, n=16e6)"
  run_step "${PROFILE_S:-90}" nsys.log "$nsys_bin" profile --force-overwrite true -o /tmp/opspec-bench-gpu -t cuda \
    --stats=true "$PY" bench/bench_gpu.py --out "$OUT" --sizes 16000000
  grep -E -A30 "cuda_gpu_kern_sum|CUDA Kernel Statistics" "$OUT/nsys.log" | head -40
  grep -E -A14 "cuda_api_sum|CUDA API Statistics" "$OUT/nsys.log" | head -18
fi

echo "== compute-sanitizer memcheck"
XLA_PYTHON_CLIENT_PREALLOCATE=false run_step "${MEMCHECK_S:-150}" memcheck.log \
  compute-sanitizer --tool memcheck --leak-check no --error-exitcode 99 \
  "$PY" -m pytest -q -p no:cacheprovider -m gpu tests/python -x
grep -E "ERROR SUMMARY|Invalid|passed|failed" "$OUT/memcheck.log" | tail -8

echo "== CPU tests on the same build (JAX_PLATFORMS=cpu)"
spread=()
"$PY" -c "import xdist" 2> /dev/null && spread=(-n "$(($(nproc) / 2))")
cpu_limit=${CPU_TESTS_S:-240}
if [ -n "${BUDGET_S:-}" ] && [ $((BUDGET_S - SECONDS - 10)) -lt "$cpu_limit" ]; then
  cpu_limit=$((BUDGET_S - SECONDS - 10))
fi
[ "$cpu_limit" -lt 20 ] && { echo "(no time left for them: CI runs them)"; exit 0; }
JAX_PLATFORMS=cpu run_step "$cpu_limit" pytest-cpu.log \
  "$PY" -m pytest -q -p no:cacheprovider "${spread[@]}" tests/python -m "not gpu" -k "not $deselect"
tail -15 "$OUT/pytest-cpu.log"
