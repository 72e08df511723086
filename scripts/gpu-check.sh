#!/usr/bin/env bash
# Builds the CUDA extension on a GPU machine and runs the GPU tests, the GPU benchmark
# and compute-sanitizer. Uses the machine's own python3 with JAX (its jaxlib headers)
# and the committed generated/ (no libyaml needed there).
#
#   bash scripts/gpu-check.sh [OUT_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-${OUT:-/tmp/opspec-gpu}}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1

echo "== machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
$PY -c "import jax, jaxlib; print('jax', jax.__version__, jax.devices())"
nvcc --version | tail -1

echo "== build"
cmake -S . -B build-gpu -DPython3_EXECUTABLE="$(command -v $PY)" -DOPSPEC_REGENERATE=OFF -DOPSPEC_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DBUILD_TESTING=OFF > "$OUT/configure.log" 2>&1 || { tail -40 "$OUT/configure.log"; exit 1; }
cmake --build build-gpu -j 16 > "$OUT/build.log" 2>&1 || { grep -E "error" "$OUT/build.log" | head -40; tail -20 "$OUT/build.log"; exit 1; }
echo "built"

echo "== GPU tests"
PYTHONPATH=build-gpu/python $PY -m pytest -q -p no:cacheprovider -m gpu tests/python 2>&1 | tee "$OUT/pytest-gpu.log" | tail -25

echo "== CPU tests on the same build (JAX_PLATFORMS=cpu)"
JAX_PLATFORMS=cpu PYTHONPATH=build-gpu/python $PY -m pytest -q -p no:cacheprovider tests/python -k "not slow and not generator" 2>&1 | tail -3

if [ -f bench/bench_gpu.py ]; then
  echo "== GPU benchmark"
  PYTHONPATH=build-gpu/python $PY bench/bench_gpu.py --out "$OUT" 2>&1 | tee "$OUT/bench-gpu.log" | tail -30
fi

echo "== compute-sanitizer memcheck"
PYTHONPATH=build-gpu/python XLA_PYTHON_CLIENT_PREALLOCATE=false compute-sanitizer --tool memcheck --leak-check no \
  --error-exitcode 99 $PY -m pytest -q -p no:cacheprovider -m gpu tests/python -x > "$OUT/memcheck.log" 2>&1
echo "compute-sanitizer exit $?"
grep -E "ERROR SUMMARY|passed|failed" "$OUT/memcheck.log" | tail -5
