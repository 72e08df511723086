#!/usr/bin/env bash
# Style checks:
#   C, C++ and CUDA:  clang-format (.clang-format), which must leave every file unchanged
#   generated/:       the same, outside the spec's own code (below)
#   Python:            ruff check and ruff format (ruff.toml), mypy on the opspec package
# Usage: scripts/lint.sh [--fix]   (--fix rewrites the files instead of failing)
set -euo pipefail
cd "$(dirname "$0")/.."
fix=${1:-}
status=0

c_files=$(git ls-files 'generator/*.c' 'generator/*.h' 'runtime/src/*.c' 'runtime/src/*.cu' 'runtime/src/*.cpp' \
  'runtime/include/opspec/*.h' 'runtime/sim/*.h' 'tests/c/*.c' 'tests/c/*.h' 'tests/fuzz/*.c' 'tests/sim/*.c' 'tests/sim/*.cpp')
py_dirs=(runtime/python tests/python bench examples scripts)

# The generated C and CUDA (generated/, and the golden copy in tests/golden/) follow
# .clang-format too, except the spec's own code: a body, prologue or raw CUDA body is
# copied verbatim between `#line N "<the spec>.yaml"` and the `#line M "<this file>"`
# that follows (or the end of the file), so that the compiler's lines and columns are
# the spec's. clang-format formats a copy in which exactly those regions are fenced by
# `// clang-format off` / `// clang-format on` lines; with the fences taken out again,
# the copy must equal the file. --fix leaves generated code alone: change the templates.
generated_files=$(git ls-files 'generated/*.c' 'generated/*.cu' 'generated/*.h' 'generated/*.inc' \
  'tests/golden/*.c' 'tests/golden/*.cu' 'tests/golden/*.h' 'tests/golden/*.inc')
generated_formatted() {
  awk '/^#line [0-9]+ ".*\.ya?ml"$/ { print "// clang-format off"; print; next }
       /^#line [0-9]+ "/              { print; print "// clang-format on"; next }
       { print }' "$1" |
    clang-format --style=file --assume-filename="$1" |
    grep -v -x -E '[[:space:]]*// clang-format (off|on)'
}
check_generated() {
  local f bad=0
  for f in $generated_files; do
    if ! generated_formatted "$f" | diff -u --label "$f" --label "$f (clang-format)" "$f" - >&2; then bad=1; fi
  done
  return "$bad"
}

if [ "$fix" = "--fix" ]; then
  clang-format -i --style=file $c_files
  .venv/bin/ruff check --fix --quiet "${py_dirs[@]}" || true
  .venv/bin/ruff format --quiet "${py_dirs[@]}"
  exit 0
fi

echo "clang-format: $(echo "$c_files" | wc -w) C/CUDA files"
clang-format --dry-run --Werror --style=file $c_files || status=1
echo "clang-format: $(echo "$generated_files" | wc -w) generated files, outside the spec's code"
check_generated || status=1
echo "ruff check, ruff format --check: ${py_dirs[*]}"
.venv/bin/ruff check "${py_dirs[@]}" || status=1
.venv/bin/ruff format --check "${py_dirs[@]}" || status=1
echo "mypy: the opspec package installed in .venv"
root=$PWD
(cd /tmp && "$root/.venv/bin/mypy" --no-error-summary -p opspec) || status=1
[ "$status" -eq 0 ] && echo "lint: clean"
exit "$status"
