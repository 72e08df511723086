#include "util/c_idents.h"

#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

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

/* The next token of `*p` into `tok`: 'i' an identifier, 'n' a number, 'p' one other
 * character, 0 at the end. Comments, literals and blanks are skipped. */
static char og_next_token(const char **p, og_buf *tok) {
  og_buf_clear(tok);
  for (;;) {
    const char *s = *p;
    if (!*s) return 0;
    if (s[0] == '/' && s[1] == '/') {
      while (*s && *s != '\n') ++s;
    } else if (s[0] == '/' && s[1] == '*') {
      const char *end = strstr(s + 2, "*/");
      s = end ? end + 2 : s + strlen(s);
    } else if (*s == '"' || *s == '\'') {
      s = og_skip_literal(s);
    } else if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == '\f' || *s == '\v') {
      ++s;
    } else {
      char kind = og_ident_start(*s) ? 'i' : *s >= '0' && *s <= '9' ? 'n' : 'p';
      const char *start = s;
      if (kind == 'p')
        ++s;
      else
        while (og_ident_char(*s) || (kind == 'n' && *s == '.')) ++s;
      og_buf_append(tok, start, (size_t)(s - start));
      *p = s;
      return kind;
    }
    *p = s;
  }
}

/* Skips a parenthesised group that starts at tokens[*i] == "(". */
static void og_skip_group(char **tokens, size_t n, size_t *i) {
  int depth = 0;
  for (; *i < n; ++*i) {
    if (strcmp(tokens[*i], "(") == 0)
      depth++;
    else if (strcmp(tokens[*i], ")") == 0 && --depth == 0)
      return;
  }
}

void og_dynamic_shared_scan(const char *code, void (*found)(const char *type, const char *name, void *ud), void *ud) {
  og_buf tok = {0};
  char **tokens = NULL;
  size_t n = 0, cap = 0;
  const char *p = code;
  while (og_next_token(&p, &tok)) {
    og_grow((void **)&tokens, &cap, n + 1, sizeof *tokens);
    tokens[n++] = og_xstrdup(og_buf_str(&tok));
  }
  /* A statement from `extern` to `;` that says __shared__ and ends NAME [ ] ;. */
  for (size_t i = 0; i < n; ++i) {
    if (strcmp(tokens[i], "extern") != 0) continue;
    size_t end = i;
    while (end < n && strcmp(tokens[end], ";") != 0 && strcmp(tokens[end], "{") != 0) ++end;
    if (end >= n || strcmp(tokens[end], ";") != 0 || end < i + 4 || strcmp(tokens[end - 1], "]") != 0 ||
        strcmp(tokens[end - 2], "[") != 0 || !og_ident_start(tokens[end - 3][0]))
      continue;
    og_buf type = {0};
    bool shared = false;
    for (size_t t = i + 1; t < end - 3; ++t) {
      if (strcmp(tokens[t], "__shared__") == 0) {
        shared = true;
      } else if ((strcmp(tokens[t], "__align__") == 0 || strcmp(tokens[t], "alignas") == 0 ||
                  strcmp(tokens[t], "__attribute__") == 0) &&
                 t + 1 < end - 3 && strcmp(tokens[t + 1], "(") == 0) {
        ++t;
        og_skip_group(tokens, end - 3, &t);
      } else {
        og_buf_printf(&type, "%s%s", type.len ? " " : "", tokens[t]);
      }
    }
    if (shared && type.len) found(og_buf_str(&type), tokens[end - 3], ud);
    og_buf_free(&type);
    i = end;
  }
  for (size_t i = 0; i < n; ++i) free(tokens[i]);
  free(tokens);
  og_buf_free(&tok);
}

void og_idents_free(og_idents *set) {
  for (size_t i = 0; i < set->n; ++i) free(set->names[i]);
  free(set->names);
  memset(set, 0, sizeof *set);
}

/* A word that names a type, or qualifies one. */
static bool og_is_type_word(const char *word, const og_idents *types) {
  static const char *const words[] = {"void",   "char",     "short", "int",    "long",          "float",   "double",
                                      "signed", "unsigned", "bool",  "_Bool",  "auto",          "const",   "volatile",
                                      "static", "register", "half",  "__half", "__nv_bfloat16", "_Float16"};
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
