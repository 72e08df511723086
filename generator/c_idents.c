#include "c_idents.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"

static bool og_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool og_ident_char(char c) { return og_ident_start(c) || (c >= '0' && c <= '9'); }

/* Binary search: the index of `name`, or where it would go. */
static size_t og_idents_find(const og_idents *set, const char *name, bool *found) {
  size_t lo = 0, hi = set->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = strcmp(set->names[mid], name);
    if (c == 0) {
      *found = true;
      return mid;
    }
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  *found = false;
  return lo;
}

void og_idents_add(og_idents *set, const char *name) {
  bool found;
  size_t at = og_idents_find(set, name, &found);
  if (found) return;
  og_grow((void **)&set->names, &set->cap, set->n + 1, sizeof *set->names);
  memmove(&set->names[at + 1], &set->names[at], (set->n - at) * sizeof *set->names);
  set->names[at] = og_xstrdup(name);
  set->n++;
}

bool og_idents_has(const og_idents *set, const char *name) {
  bool found;
  og_idents_find(set, name, &found);
  return found;
}

/* Past a literal that starts at p (a quote), honouring backslash escapes. */
static const char *og_skip_literal(const char *p) {
  char quote = *p++;
  while (*p && *p != quote && *p != '\n') {
    if (*p == '\\' && p[1]) ++p;
    ++p;
  }
  return *p == quote ? p + 1 : p;
}

void og_idents_scan(og_idents *set, const char *code) {
  const char *p = code;
  while (*p) {
    if (p[0] == '/' && p[1] == '/') {
      while (*p && *p != '\n') ++p;
    } else if (p[0] == '/' && p[1] == '*') {
      const char *end = strstr(p + 2, "*/");
      p = end ? end + 2 : p + strlen(p);
    } else if (*p == '"' || *p == '\'') {
      p = og_skip_literal(p);
    } else if (*p >= '0' && *p <= '9') {
      /* A number with its suffix or hex digits: 0x1fULL, 1e-3f. */
      while (og_ident_char(*p) || *p == '.') ++p;
    } else if (og_ident_start(*p)) {
      const char *start = p;
      while (og_ident_char(*p)) ++p;
      char *name = og_xstrndup(start, (size_t)(p - start));
      og_idents_add(set, name);
      free(name);
    } else {
      ++p;
    }
  }
}

void og_idents_free(og_idents *set) {
  for (size_t i = 0; i < set->n; ++i) free(set->names[i]);
  free(set->names);
  memset(set, 0, sizeof *set);
}

/* A word that names a type, or qualifies one. */
static bool og_is_type_word(const char *word, const og_idents *types) {
  static const char *const words[] = {"void",   "char",     "short", "int",    "long",         "float", "double",
                                      "signed", "unsigned", "bool",  "_Bool",  "auto",         "const", "volatile",
                                      "static", "register", "half",  "__half", "__nv_bfloat16"};
  for (size_t i = 0; i < sizeof words / sizeof *words; ++i)
    if (strcmp(words[i], word) == 0) return true;
  size_t len = strlen(word);
  return (len > 2 && strcmp(word + len - 2, "_t") == 0) || (types && og_idents_has(types, word));
}

void og_idents_scan_decls(const char *code, const og_idents *types, og_decl_fn *fn, void *ud) {
  char prev[128] = "";            /* the identifier before the current token, "" if none */
  bool after_type = false;        /* the tokens since `prev` were only '*' */
  int depth = 0, decl_depth = -1; /* parentheses; where the current declaration began */
  int line = 0;
  const char *line_start = code;
  for (const char *p = code; *p;) {
    if (*p == '\n') {
      ++line;
      line_start = ++p;
      continue;
    }
    if (*p == ' ' || *p == '\t' || *p == '\r') {
      ++p;
      continue;
    }
    if (p[0] == '/' && p[1] == '/') {
      while (*p && *p != '\n') ++p;
    } else if (p[0] == '/' && p[1] == '*') {
      const char *end = strstr(p + 2, "*/");
      const char *stop = end ? end + 2 : p + strlen(p);
      for (; p < stop; ++p)
        if (*p == '\n') {
          ++line;
          line_start = p + 1;
        }
      after_type = false;
    } else if (*p == '"' || *p == '\'') {
      p = og_skip_literal(p);
      after_type = false;
    } else if (*p >= '0' && *p <= '9') {
      while (og_ident_char(*p) || *p == '.') ++p;
      after_type = false;
    } else if (og_ident_start(*p)) {
      const char *start = p;
      while (og_ident_char(*p)) ++p;
      size_t len = (size_t)(p - start);
      const char *next = p;
      while (*next == ' ' || *next == '\t') ++next;
      bool ends = *next == '=' && next[1] != '=';
      ends |= *next == ';' || *next == ',' || *next == '[' || *next == ')';
      if (after_type && ends && len < sizeof prev) {
        char name[128];
        memcpy(name, start, len);
        name[len] = '\0';
        fn(name, line, (int)(start - line_start) + 1, ud);
        decl_depth = depth; /* "int a = 0, b;": a ',' at this depth starts the next one */
      }
      if (len < sizeof prev) {
        memcpy(prev, start, len);
        prev[len] = '\0';
        after_type = og_is_type_word(prev, types);
      } else {
        after_type = false;
      }
    } else if (*p == '*' && after_type) {
      ++p; /* "float *y": still after a type */
    } else {
      if (*p == '(') ++depth;
      if (*p == ')') --depth;
      if (*p == ';' || *p == '{' || *p == '}' || depth < decl_depth) decl_depth = -1;
      after_type = *p == ',' && depth == decl_depth;
      ++p;
    }
  }
}
