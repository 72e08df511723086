/* A checking scanner for derivative formulas; see py_formula.h. */
#include "load/py_formula.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

/* Keywords a formula may use, and the role each plays between operands. */
static const char *const og_py_operator_words[] = {"and", "or", "not", "if", "else", "in", "is"};
static const char *const og_py_constant_words[] = {"None", "True", "False"};
/* Every other Python keyword: statements, lambdas and comprehensions have no place in
 * a formula that is spliced into a generated lambda. */
static const char *const og_py_banned_words[] = {
    "lambda", "for",    "while",   "def",    "class", "return",   "yield",  "await", "async",
    "import", "from",   "as",      "global", "del",   "nonlocal", "assert", "pass",  "raise",
    "try",    "except", "finally", "with",   "break", "continue", "elif",   "match", "case",
};

static bool og_in(const char *word, size_t len, const char *const *list, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (strlen(list[i]) == len && memcmp(list[i], word, len) == 0) return true;
  return false;
}
#define OG_IN(word, len, list) og_in(word, len, list, sizeof list / sizeof *list)

static void og_py_fail(og_py_scan *scan, const char *why, size_t offset) {
  if (!scan->error) {
    scan->error = why;
    scan->error_offset = offset;
  }
}

static void og_py_add_name(og_py_scan *scan, size_t *cap, const char *p, size_t len, size_t offset) {
  og_grow((void **)&scan->names, cap, scan->nnames + 1, sizeof *scan->names);
  char *name = og_xmalloc(len + 1);
  memcpy(name, p, len);
  name[len] = '\0';
  scan->names[scan->nnames++] = (og_py_name){name, offset};
}

void og_py_scan_formula(const char *text, og_py_scan *scan) {
  memset(scan, 0, sizeof *scan);
  size_t cap = 0;
  char stack[64]; /* open brackets */
  size_t depth = 0;
  /* After an operand (name, number, string, closing bracket) comes an operator; after
   * an operator or an opening bracket, an operand. */
  bool after_operand = false, after_dot = false;
  size_t i = 0;
  while (text[i] && !scan->error) {
    const char *p = text + i;
    char c = *p;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
      continue;
    }
    if (isalpha((unsigned char)c) || c == '_') {
      size_t len = 1;
      while (isalnum((unsigned char)p[len]) || p[len] == '_') ++len;
      if (after_dot) {
        after_dot = false; /* an attribute: jnp.exp, x.shape */
        after_operand = true;
      } else if (OG_IN(p, len, og_py_banned_words)) {
        og_py_fail(scan, "Python statements, lambdas and comprehensions are not allowed in a formula", i);
      } else if (OG_IN(p, len, og_py_operator_words)) {
        bool unary = len == 3 && memcmp(p, "not", 3) == 0;
        if (!unary && !after_operand) og_py_fail(scan, "an operand is missing before this keyword", i);
        after_operand = false;
      } else if (OG_IN(p, len, og_py_constant_words)) {
        if (after_operand) og_py_fail(scan, "an operator is missing before this constant", i);
        after_operand = true;
      } else {
        size_t j = i + len;
        while (text[j] == ' ' || text[j] == '\t') ++j;
        bool keyword_arg = depth > 0 && stack[depth - 1] == '(' && text[j] == '=' && text[j + 1] != '=';
        if (after_operand) og_py_fail(scan, "an operator is missing before this name", i);
        if (keyword_arg) { /* f(n=...): a parameter's name, then its value */
          after_operand = false;
          i = j + 1;
          continue;
        }
        og_py_add_name(scan, &cap, p, len, i);
        after_operand = true;
      }
      i += len;
      continue;
    }
    if (isdigit((unsigned char)c) || (c == '.' && isdigit((unsigned char)p[1]))) {
      if (after_operand) og_py_fail(scan, "an operator is missing before this number", i);
      size_t len = 0;
      while (isalnum((unsigned char)p[len]) || p[len] == '.' || p[len] == '_' ||
             ((p[len] == '+' || p[len] == '-') && len && (p[len - 1] == 'e' || p[len - 1] == 'E')))
        ++len;
      after_operand = true;
      i += len;
      continue;
    }
    if (c == '\'' || c == '"') {
      if (after_operand) og_py_fail(scan, "an operator is missing before this string", i);
      size_t j = i + 1;
      while (text[j] && text[j] != c && text[j] != '\n') j += text[j] == '\\' && text[j + 1] ? 2 : 1;
      if (text[j] != c) og_py_fail(scan, "this string is not closed on its line", i);
      after_operand = true;
      i = text[j] ? j + 1 : j; /* an unclosed string at the end: stay on the NUL */
      continue;
    }
    if (c == '(' || c == '[' || c == '{') {
      if (depth == sizeof stack)
        og_py_fail(scan, "brackets nest too deeply", i);
      else
        stack[depth++] = c;
      after_operand = false; /* a call or subscript after an operand, a group before one */
      ++i;
      continue;
    }
    if (c == ')' || c == ']' || c == '}') {
      char open = c == ')' ? '(' : c == ']' ? '[' : '{';
      if (!depth || stack[depth - 1] != open) {
        og_py_fail(scan, "this bracket closes nothing open", i);
      } else {
        --depth;
        after_operand = true; /* (), x[:] and f() are operands; an empty call is fine */
      }
      ++i;
      continue;
    }
    if (c == '.') {
      if (!after_operand) og_py_fail(scan, "'.' needs a value before it", i);
      after_dot = true;
      after_operand = false;
      ++i;
      continue;
    }
    if (c == '#' || c == ';' || c == '\\' || c == '`' || c == '$' || c == '?' || (c == '!' && p[1] != '=')) {
      og_py_fail(scan, "this character has no place in a formula (one Python expression)", i);
      continue;
    }
    if (c == ':' && p[1] == '=') {
      og_py_fail(scan, "assignments are not allowed in a formula", i);
      continue;
    }
    /* Operators: + - * / // % ** @ < > <= >= == != & | ^ ~ << >> , : = (keyword args). */
    static const char *const ops[] = {"**", "//", "<<", ">>", "<=", ">=", "==", "!=", "+", "-", "*", "/",
                                      "%",  "@",  "<",  ">",  "&",  "|",  "^",  "~",  ",", ":", "="};
    size_t len = 0;
    for (size_t o = 0; o < sizeof ops / sizeof *ops && !len; ++o)
      if (strncmp(p, ops[o], strlen(ops[o])) == 0) len = strlen(ops[o]);
    if (!len) {
      og_py_fail(scan, "this character has no place in a formula (one Python expression)", i);
      continue;
    }
    bool unary = len == 1 && (c == '-' || c == '+' || c == '~');
    bool star_arg = (c == '*') && !after_operand; /* f(*xs), f(**kw) */
    bool slice = c == ':' || c == ',';            /* x[:, None], x[1:], (a,), f(a, ) */
    if (!after_operand && !unary && !star_arg && !slice)
      og_py_fail(scan, "an operand is missing before this operator", i);
    if (c == '=' && len == 1) og_py_fail(scan, "assignments are not allowed in a formula", i);
    after_operand = false;
    i += len;
  }
  if (scan->error) return;
  if (depth)
    og_py_fail(scan, "a bracket opened here is not closed", (size_t)(strchr(text, stack[depth - 1]) - text));
  else if (strspn(text, " \t\r\n") == strlen(text))
    og_py_fail(scan, "the formula is empty", 0);
  else if (!after_operand)
    og_py_fail(scan, "the formula ends with an operator", strlen(text));
}

void og_py_scan_free(og_py_scan *scan) {
  for (size_t i = 0; i < scan->nnames; ++i) free(scan->names[i].name);
  free(scan->names);
  memset(scan, 0, sizeof *scan);
}
