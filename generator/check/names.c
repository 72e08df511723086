#include "check/names.h"

#include <ctype.h>
#include <stdbool.h>
#include <string.h>

typedef struct og_reserved_group {
  const char *why;
  const char *const *names; /* NULL-terminated */
} og_reserved_group;

static const char *const og_launch_indices[] = {"i", "j", "k", NULL};
/* Kept free for the per-call `backend=` keyword argument of every op. */
static const char *const og_opspec_words[] = {"backend", NULL};
/* Word lists, aligned by hand. */
/* clang-format off */
static const char *const og_c_keywords[] = {
    "auto",   "break",  "case",     "char",     "const",  "continue", "default", "do",     "double",
    "else",   "enum",   "extern",   "float",    "for",    "goto",     "if",      "inline", "int",
    "long",   "register", "restrict", "return", "short",  "signed",   "sizeof",  "static", "struct",
    "switch", "typedef", "union",   "unsigned", "void",   "volatile", "while",   NULL};
/* CUDA sources are C++: its keywords and alternative operator spellings too. */
static const char *const og_cpp_keywords[] = {
    "alignas",     "alignof",   "and",          "and_eq",       "asm",       "bitand",       "bitor",
    "bool",        "catch",     "char8_t",      "char16_t",     "char32_t",  "class",        "compl",
    "concept",     "const_cast", "consteval",   "constexpr",    "constinit", "co_await",     "co_return",
    "co_yield",    "decltype",  "delete",       "dynamic_cast", "explicit",  "export",       "false",
    "friend",      "mutable",   "namespace",    "new",          "noexcept",  "not",          "not_eq",
    "nullptr",     "operator",  "or",           "or_eq",        "private",   "protected",    "public",
    "reinterpret_cast", "requires", "static_assert", "static_cast", "template", "this",     "thread_local",
    "throw",       "true",      "try",          "typeid",       "typename",  "using",        "virtual",
    "wchar_t",     "xor",       "xor_eq",       NULL};
static const char *const og_python_keywords[] = {
    "False", "None",   "True",     "as",     "assert", "async", "await",  "def", "del",  "elif",
    "except", "finally", "from",   "global", "import", "in",    "is",     "lambda", "nonlocal",
    "pass",  "raise",  "with",     "yield",  NULL};
/* Lower-case object-like macros the generated code's headers (or the compilers, in
 * GNU mode) may define: a local of that name would be macro-expanded. */
static const char *const og_c_macros[] = {"errno", "math_errhandling", "stdin", "stdout", "stderr",
                                          "linux", "unix", "i386", NULL};
static const char *const og_cuda_builtins[] = {"threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize",
                                               "dim3", NULL};

/* clang-format on */

static const og_reserved_group og_reserved_groups[] = {
    {"a launch index (i, j, k)", og_launch_indices},
    {"reserved for the backend= argument every op takes", og_opspec_words},
    {"a C keyword", og_c_keywords},
    {"a C++ keyword (CUDA kernels compile as C++)", og_cpp_keywords},
    {"a Python keyword", og_python_keywords},
    {"a macro of the C headers or compilers", og_c_macros},
    {"a CUDA built-in variable or type", og_cuda_builtins},
};

static bool og_starts_with_nocase(const char *s, const char *prefix) {
  for (; *prefix; ++s, ++prefix)
    if (tolower((unsigned char)*s) != *prefix) return false;
  return true;
}

/* CUDA's vector types: char1 ... ulonglong4, float1 ... double4. */
static bool og_is_cuda_vector_type(const char *name) {
  static const char *const bases[] = {"char", "uchar", "short",    "ushort",    "int",   "uint",
                                      "long", "ulong", "longlong", "ulonglong", "float", "double"};
  size_t len = strlen(name);
  if (len < 2 || name[len - 1] < '1' || name[len - 1] > '4') return false;
  for (size_t b = 0; b < sizeof bases / sizeof *bases; ++b)
    if (strlen(bases[b]) == len - 1 && strncmp(name, bases[b], len - 1) == 0) return true;
  return false;
}

/* Upper case, digits and '_' only, with at least two letters: macro style. */
static bool og_is_macro_style(const char *name) {
  int letters = 0;
  for (const char *p = name; *p; ++p) {
    if (islower((unsigned char)*p)) return false;
    letters += isupper((unsigned char)*p) != 0;
  }
  return letters >= 2;
}

const char *og_reserved_why(const char *name) {
  for (size_t g = 0; g < sizeof og_reserved_groups / sizeof *og_reserved_groups; ++g)
    for (const char *const *n = og_reserved_groups[g].names; *n; ++n)
      if (strcmp(*n, name) == 0) return og_reserved_groups[g].why;
  if (name[0] == '_')
    return "names starting with '_' are reserved (by C and C++, and for the generated Python module's own names)";
  if (og_starts_with_nocase(name, "opspec")) return "names starting with 'opspec' are reserved for the generated code";
  if (og_starts_with_nocase(name, "cuda") || strncmp(name, "CU_", 3) == 0)
    return "names starting with 'cuda' are reserved for the CUDA runtime";
  size_t len = strlen(name);
  if (len >= 2 && strcmp(name + len - 2, "_t") == 0)
    return "names ending in '_t' are reserved for types (int64_t, size_t, ...)";
  if (og_is_cuda_vector_type(name)) return "a CUDA vector type";
  if (og_is_macro_style(name))
    return "names in capitals are reserved for macros (NULL, INFINITY, INT64_MAX, ...); a single capital letter is "
           "fine";
  return NULL;
}
