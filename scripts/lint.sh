#!/usr/bin/env bash
# Style checks of the hand-written code (generated code is checked by its own tests):
#   C, C++ and CUDA:  clang-format (.clang-format), which must leave every file unchanged
#   Python:            ruff check and ruff format (ruff.toml), mypy on the opspec package
# Usage: scripts/lint.sh [--fix]   (--fix rewrites the files instead of failing)
set -euo pipefail
cd "$(dirname "$0")/.."
fix=${1:-}
status=0

c_files=$(git ls-files 'generator/*.c' 'generator/*.h' 'runtime/src/*.c' 'runtime/src/*.cu' 'runtime/src/*.cpp' \
  'runtime/include/opspec/*.h' 'runtime/sim/*.h' 'tests/c/*.c' 'tests/c/*.h' 'tests/fuzz/*.c' 'tests/sim/*.c' 'tests/sim/*.cpp')
py_dirs=(runtime/python tests/python bench examples scripts)

if [ "$fix" = "--fix" ]; then
  clang-format -i --style=file $c_files
  .venv/bin/ruff check --fix --quiet "${py_dirs[@]}" || true
  .venv/bin/ruff format --quiet "${py_dirs[@]}"
  exit 0
fi

echo "clang-format: $(echo "$c_files" | wc -w) C/CUDA files"
clang-format --dry-run --Werror --style=file $c_files || status=1
echo "ruff check, ruff format --check: ${py_dirs[*]}"
.venv/bin/ruff check "${py_dirs[@]}" || status=1
.venv/bin/ruff format --check "${py_dirs[@]}" || status=1
echo "mypy: the opspec package installed in .venv"
root=$PWD
(cd /tmp && "$root/.venv/bin/mypy" --no-error-summary -p opspec) || status=1
[ "$status" -eq 0 ] && echo "lint: clean"
exit "$status"
