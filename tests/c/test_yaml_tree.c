/* Tests for generator/yaml_tree.c: tree shape, texts, styles and positions of a
 * realistic spec, and every error with its exact message, location and caret. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "load/yaml_tree.h"

/* Loads `text` as "spec.yaml"; *src must be freed by the caller (the tree points into
 * it). Prints the diagnostics when loading failed unexpectedly. */
static og_ynode *load_ok(const char *text, og_source **src) {
  og_diag d = {0};
  *src = og_source_from_string("spec.yaml", text);
  og_ynode *root = og_yaml_load(*src, &d);
  OG_CHECK(root != NULL);
  OG_CHECK(d.errors == 0);
  if (!root) fprintf(stderr, "unexpected load error:\n%s", og_buf_str(&d.out));
  og_diag_free(&d);
  return root;
}

/* Loads `text`, which must fail with `nerrors` errors; returns the diagnostics
 * (malloc'd). */
static char *load_err(const char *text, int nerrors) {
  og_diag d = {0};
  og_source *src = og_source_from_string("spec.yaml", text);
  og_ynode *root = og_yaml_load(src, &d);
  OG_CHECK(root == NULL);
  OG_CHECK(d.errors == nerrors);
  og_ynode_free(root);
  og_source_free(src);
  return og_buf_take(&d.out);
}

#define CHECK_LOAD_ERR(text, nerrors, want)   \
  do {                                        \
    char *got_ = load_err((text), (nerrors)); \
    OG_CHECK_STR(got_, (want));               \
    free(got_);                               \
  } while (0)

#define CHECK_AT(node, l, c)                                                               \
  do {                                                                                     \
    const og_ynode *n_ = (node);                                                           \
    OG_CHECK(n_ != NULL);                                                                  \
    if (n_) {                                                                              \
      OG_CHECK(n_->loc.line == (l));                                                       \
      OG_CHECK(n_->loc.col == (c));                                                        \
      if (n_->loc.line != (l) || n_->loc.col != (c))                                       \
        fprintf(stderr, "  got %d:%d, want %d:%d\n", n_->loc.line, n_->loc.col, (l), (c)); \
    }                                                                                      \
  } while (0)

static const char spec[] =
    "# Adds a per-channel bias.\n"                          /* 1 */
    "name: add_bias\n"                                      /* 2 */
    "doc: \"Adds a bias per channel.\"\n"                   /* 3 */
    "inputs:\n"                                             /* 4 */
    "  - {name: x, dtype: f32, shape: [n, c]}\n"            /* 5 */
    "  - {name: bias, dtype: f32, shape: [c]}\n"            /* 6 */
    "outputs:\n"                                            /* 7 */
    "  - {name: y, dtype: f32, shape: [n, c]}\n"            /* 8 */
    "attrs:\n"                                              /* 9 */
    "  - {name: alpha, type: float, default: 1.0}\n"        /* 10 */
    "launch:\n"                                             /* 11 */
    "  grid: [\"cdiv(n * c, 256)\"]\n"                      /* 12 */
    "  block: [256]\n"                                      /* 13 */
    "kernel: |\n"                                           /* 14 */
    "  int64_t i = blockIdx.x * 256 + threadIdx.x;\n"       /* 15 */
    "\n"                                                    /* 16 */
    "  if (i < n * c) y[i] = x[i] + alpha * bias[i % c];\n" /* 17 */
    "reference: >\n"                                        /* 18 */
    "  y = x +\n"                                           /* 19 */
    "  alpha * bias\n"                                      /* 20 */
    "cpu:\n"                                                /* 21 */
    "  |-\n"                                                /* 22 */
    "    return 0;\n"                                       /* 23 */
    "quoted: 'it''s'\n"                                     /* 24 */
    "wrapped: first\n"                                      /* 25 */
    "  second\n"                                            /* 26 */
    "empty:\n";                                             /* 27 */

static void test_spec(void) {
  og_source *src;
  og_ynode *root = load_ok(spec, &src);
  if (!root) {
    og_source_free(src);
    return;
  }
  OG_CHECK(root->kind == OG_Y_MAP);
  OG_CHECK(root->n == 12);
  CHECK_AT(root, 2, 1); /* the mapping starts at its first key, after the comment */
  OG_CHECK(root->loc.src == src);

  /* Keys are scalars with their own positions. */
  OG_CHECK_STR(root->keys[0]->text, "name");
  CHECK_AT(root->keys[0], 2, 1);
  OG_CHECK_STR(root->keys[3]->text, "outputs");
  CHECK_AT(root->keys[3], 7, 1);

  const og_ynode *name = og_ynode_get(root, "name");
  OG_CHECK(name && name->kind == OG_Y_SCALAR && name->style == OG_YS_PLAIN);
  OG_CHECK_STR(name->text, "add_bias");
  OG_CHECK(name->len == 8);
  CHECK_AT(name, 2, 7);
  OG_CHECK(name->content_line == 2);

  const og_ynode *doc = og_ynode_get(root, "doc");
  OG_CHECK(doc && doc->style == OG_YS_DOUBLE);
  OG_CHECK_STR(doc->text, "Adds a bias per channel.");
  CHECK_AT(doc, 3, 6); /* the opening quote */

  /* A block sequence of flow mappings. */
  const og_ynode *inputs = og_ynode_get(root, "inputs");
  OG_CHECK(inputs && inputs->kind == OG_Y_SEQ && inputs->n == 2 && inputs->keys == NULL);
  CHECK_AT(inputs, 5, 3); /* the first '-' */
  const og_ynode *x = inputs->items[0];
  OG_CHECK(x->kind == OG_Y_MAP && x->n == 3);
  CHECK_AT(x, 5, 5); /* the '{' */
  CHECK_AT(x->keys[0], 5, 6);
  OG_CHECK_STR(og_ynode_get(x, "name")->text, "x");
  CHECK_AT(og_ynode_get(x, "name"), 5, 12);
  const og_ynode *shape = og_ynode_get(x, "shape");
  OG_CHECK(shape && shape->kind == OG_Y_SEQ && shape->n == 2);
  CHECK_AT(shape, 5, 34);
  OG_CHECK_STR(shape->items[0]->text, "n");
  CHECK_AT(shape->items[0], 5, 35);
  OG_CHECK_STR(shape->items[1]->text, "c");
  CHECK_AT(shape->items[1], 5, 38);
  const og_ynode *bias = inputs->items[1];
  OG_CHECK_STR(og_ynode_get(bias, "name")->text, "bias");
  CHECK_AT(og_ynode_get(bias, "shape")->items[0], 6, 38);

  const og_ynode *alpha = og_ynode_get(root, "attrs")->items[0];
  OG_CHECK_STR(og_ynode_get(alpha, "default")->text, "1.0"); /* scalars stay text */

  const og_ynode *launch = og_ynode_get(root, "launch");
  OG_CHECK(launch && launch->kind == OG_Y_MAP);
  CHECK_AT(launch, 12, 3);
  const og_ynode *grid = og_ynode_get(launch, "grid");
  OG_CHECK(grid && grid->kind == OG_Y_SEQ && grid->n == 1);
  OG_CHECK_STR(grid->items[0]->text, "cdiv(n * c, 256)");
  OG_CHECK(grid->items[0]->style == OG_YS_DOUBLE);
  CHECK_AT(grid->items[0], 12, 10); /* the quote: the text starts one column later */

  /* A literal block: loc is the '|', content_line the line after it, and line k of
   * the text is source line content_line + k, blank lines included. */
  const og_ynode *kernel = og_ynode_get(root, "kernel");
  OG_CHECK(kernel && kernel->kind == OG_Y_SCALAR && kernel->style == OG_YS_LITERAL);
  CHECK_AT(kernel, 14, 9);
  OG_CHECK(kernel->content_line == 15);
  OG_CHECK_STR(kernel->text,
               "int64_t i = blockIdx.x * 256 + threadIdx.x;\n"
               "\n"
               "if (i < n * c) y[i] = x[i] + alpha * bias[i % c];\n");

  const og_ynode *ref = og_ynode_get(root, "reference");
  OG_CHECK(ref && ref->style == OG_YS_FOLDED);
  CHECK_AT(ref, 18, 12);
  OG_CHECK(ref->content_line == 19);
  OG_CHECK_STR(ref->text, "y = x + alpha * bias\n");

  /* The indicator on a line of its own, with a chomping indicator. */
  const og_ynode *cpu = og_ynode_get(root, "cpu");
  OG_CHECK(cpu && cpu->style == OG_YS_LITERAL);
  CHECK_AT(cpu, 22, 3);
  OG_CHECK(cpu->content_line == 23);
  OG_CHECK_STR(cpu->text, "return 0;");

  const og_ynode *quoted = og_ynode_get(root, "quoted");
  OG_CHECK(quoted && quoted->style == OG_YS_SINGLE);
  OG_CHECK_STR(quoted->text, "it's");
  CHECK_AT(quoted, 24, 9);

  /* A plain scalar over two lines is folded; it is located at its first character. */
  const og_ynode *wrapped = og_ynode_get(root, "wrapped");
  OG_CHECK(wrapped && wrapped->style == OG_YS_PLAIN);
  OG_CHECK_STR(wrapped->text, "first second");
  CHECK_AT(wrapped, 25, 10);
  OG_CHECK(wrapped->content_line == 25);

  /* A key without a value has an empty plain scalar (YAML's null). */
  const og_ynode *empty = og_ynode_get(root, "empty");
  OG_CHECK(empty && empty->kind == OG_Y_SCALAR && empty->style == OG_YS_PLAIN);
  OG_CHECK(empty->len == 0);
  OG_CHECK_STR(empty->text, "");

  /* Lookups that find nothing. */
  OG_CHECK(og_ynode_get(root, "nope") == NULL);
  OG_CHECK(og_ynode_get(inputs, "name") == NULL); /* not a mapping */
  OG_CHECK(og_ynode_get(name, "name") == NULL);
  OG_CHECK(og_ynode_get(NULL, "name") == NULL);

  og_ynode_free(root);
  og_source_free(src);
}

static void test_details(void) {
  og_source *src;
  /* Leading blank lines of a literal block are part of its text, so content_line
   * still maps text line k to source line content_line + k. */
  og_ynode *root = load_ok("body: |\n\n  x\n\n  y\nnext: 1\n", &src);
  if (root) {
    const og_ynode *body = og_ynode_get(root, "body");
    OG_CHECK_STR(body->text, "\nx\n\ny\n");
    OG_CHECK(body->content_line == 2);
    CHECK_AT(og_ynode_get(root, "next"), 6, 7);
  }
  og_ynode_free(root);
  og_source_free(src);

  /* A comma splits a flow sequence even inside parentheses: expressions with
   * commas must be quoted there (or written in block style). */
  root = load_ok("grid: [cdiv(n, 256)]\nblock:\n  - cdiv(n, 256)\n", &src);
  if (root) {
    const og_ynode *grid = og_ynode_get(root, "grid");
    OG_CHECK(grid->n == 2);
    OG_CHECK_STR(grid->items[0]->text, "cdiv(n");
    OG_CHECK_STR(grid->items[1]->text, "256)");
    const og_ynode *block = og_ynode_get(root, "block");
    OG_CHECK(block->n == 1);
    OG_CHECK_STR(block->items[0]->text, "cdiv(n, 256)");
    CHECK_AT(block->items[0], 3, 5);
  }
  og_ynode_free(root);
  og_source_free(src);

  /* Columns count bytes, while libyaml counts characters. */
  root = load_ok("\xc3\xa9t\xc3\xa9: [\xc3\xbc, v]\n", &src);
  if (root) {
    CHECK_AT(root->items[0], 1, 8);
    CHECK_AT(root->items[0]->items[1], 1, 13);
    OG_CHECK_STR(root->items[0]->items[1]->text, "v");
  }
  og_ynode_free(root);
  og_source_free(src);

  /* NUL inside a double-quoted scalar: len tells. */
  root = load_ok("k: \"a\\0b\"\n", &src);
  if (root) {
    OG_CHECK(root->items[0]->len == 3);
    OG_CHECK(memcmp(root->items[0]->text, "a\0b", 4) == 0);
  }
  og_ynode_free(root);
  og_source_free(src);

  /* A root that is a sequence; "---" and "..." around a single document are fine. */
  root = load_ok("---\n- a\n- b\n...\n", &src);
  if (root) {
    OG_CHECK(root->kind == OG_Y_SEQ && root->n == 2);
    CHECK_AT(root, 2, 1);
    CHECK_AT(root->items[1], 3, 3);
  }
  og_ynode_free(root);
  og_source_free(src);

  /* CRLF line ends count as one line break. */
  root = load_ok("a: 1\r\nb: |\r\n  x\r\n", &src);
  if (root) {
    CHECK_AT(og_ynode_get(root, "b"), 2, 4);
    OG_CHECK(og_ynode_get(root, "b")->content_line == 3);
  }
  og_ynode_free(root);
  og_source_free(src);

  OG_CHECK_STR(og_ynode_kind_name(OG_Y_MAP), "mapping");
  OG_CHECK_STR(og_ynode_kind_name(OG_Y_SEQ), "sequence");
  OG_CHECK_STR(og_ynode_kind_name(OG_Y_SCALAR), "scalar");
  og_ynode_free(NULL);
}

static void test_syntax_errors(void) {
  CHECK_LOAD_ERR("a:\n  b: 1\n c: 2\n", 1,
                 "spec.yaml:3:2: error: while parsing a block mapping: did not find expected key\n"
                 " 3 |  c: 2\n"
                 "   |  ^\n"
                 "spec.yaml:1:1: note: the block mapping started here\n"
                 " 1 | a:\n"
                 "   | ^\n");
  CHECK_LOAD_ERR("a:\n  - 1\n  b: 2\n", 1,
                 "spec.yaml:3:3: error: while parsing a block collection: did not find "
                 "expected '-' indicator\n"
                 " 3 |   b: 2\n"
                 "   |   ^\n"
                 "spec.yaml:2:3: note: the block collection started here\n"
                 " 2 |   - 1\n"
                 "   |   ^\n");
  /* No context: the problem alone. */
  CHECK_LOAD_ERR("a: 1\n  b: 2\n", 1,
                 "spec.yaml:2:4: error: mapping values are not allowed in this context\n"
                 " 2 |   b: 2\n"
                 "   |    ^\n");
  /* Scanner errors, at the end of the input (the empty last line is not quoted). */
  CHECK_LOAD_ERR("a: [1, 2\n", 1,
                 "spec.yaml:2:1: error: while parsing a flow sequence: did not find expected "
                 "',' or ']'\n"
                 "spec.yaml:1:4: note: the flow sequence started here\n"
                 " 1 | a: [1, 2\n"
                 "   |    ^\n");
  CHECK_LOAD_ERR("a: \"x\n", 1,
                 "spec.yaml:2:1: error: while scanning a quoted scalar: found unexpected end "
                 "of stream\n"
                 "spec.yaml:1:4: note: the quoted scalar started here\n"
                 " 1 | a: \"x\n"
                 "   |    ^\n");
  /* libyaml's column is in characters; ours in bytes (é and ü are two each). */
  CHECK_LOAD_ERR("\xc3\xa9: \"\xc3\xbc\" : x\n", 1,
                 "spec.yaml:1:10: error: mapping values are not allowed in this context\n"
                 " 1 | \xc3\xa9: \"\xc3\xbc\" : x\n"
                 "   |          ^\n");
  /* Reader (encoding) errors come with a byte offset. */
  CHECK_LOAD_ERR("a: 1\nb: \xff\n", 1,
                 "spec.yaml:2:4: error: invalid leading UTF-8 octet (0xFF)\n"
                 " 2 | b: \xff\n"
                 "   |    ^\n");
  CHECK_LOAD_ERR("a: \x01\n", 1,
                 "spec.yaml:1:4: error: control characters are not allowed (0x01)\n"
                 " 1 | a: \x01\n"
                 "   |    ^\n");
}

static void test_duplicates(void) {
  /* Every duplicate in the file is reported, in nested mappings too, each with a note
   * at the first definition. */
  CHECK_LOAD_ERR(
      "a: 1\n"
      "a: 2\n"
      "b:\n"
      "  - {c: 1, c: 3}\n"
      "a: 5\n",
      3,
      "spec.yaml:2:1: error: duplicate key 'a'\n"
      " 2 | a: 2\n"
      "   | ^\n"
      "spec.yaml:1:1: note: first defined here\n"
      " 1 | a: 1\n"
      "   | ^\n"
      "spec.yaml:4:12: error: duplicate key 'c'\n"
      " 4 |   - {c: 1, c: 3}\n"
      "   |            ^\n"
      "spec.yaml:4:6: note: first defined here\n"
      " 4 |   - {c: 1, c: 3}\n"
      "   |      ^\n"
      "spec.yaml:5:1: error: duplicate key 'a'\n"
      " 5 | a: 5\n"
      "   | ^\n"
      "spec.yaml:1:1: note: first defined here\n"
      " 1 | a: 1\n"
      "   | ^\n");
  /* Quoting does not make a key different. */
  CHECK_LOAD_ERR("x: 1\n\"x\": 2\n", 1,
                 "spec.yaml:2:1: error: duplicate key 'x'\n"
                 " 2 | \"x\": 2\n"
                 "   | ^\n"
                 "spec.yaml:1:1: note: first defined here\n"
                 " 1 | x: 1\n"
                 "   | ^\n");
  /* Parsing goes on after a duplicate, up to a later syntax error. */
  CHECK_LOAD_ERR("x: 1\nx: 2\ny: [1\n", 2,
                 "spec.yaml:2:1: error: duplicate key 'x'\n"
                 " 2 | x: 2\n"
                 "   | ^\n"
                 "spec.yaml:1:1: note: first defined here\n"
                 " 1 | x: 1\n"
                 "   | ^\n"
                 "spec.yaml:4:1: error: while parsing a flow sequence: did not find expected "
                 "',' or ']'\n"
                 "spec.yaml:3:4: note: the flow sequence started here\n"
                 " 3 | y: [1\n"
                 "   |    ^\n");
}

static void test_rejected_features(void) {
  CHECK_LOAD_ERR("base: &b {x: 1}\nother: *b\n", 2,
                 "spec.yaml:1:7: error: anchors and aliases are not supported in specs\n"
                 " 1 | base: &b {x: 1}\n"
                 "   |       ^\n"
                 "spec.yaml:2:8: error: anchors and aliases are not supported in specs\n"
                 " 2 | other: *b\n"
                 "   |        ^\n");
  /* An alias as a key, and an anchored scalar in a sequence. */
  CHECK_LOAD_ERR("- &a k\n- {*a : 1}\n", 2,
                 "spec.yaml:1:3: error: anchors and aliases are not supported in specs\n"
                 " 1 | - &a k\n"
                 "   |   ^\n"
                 "spec.yaml:2:4: error: anchors and aliases are not supported in specs\n"
                 " 2 | - {*a : 1}\n"
                 "   |    ^\n");
  /* Explicit tags are rejected, not ignored. */
  CHECK_LOAD_ERR("n: !!str 3\nm: !custom {}\n", 2,
                 "spec.yaml:1:4: error: tags are not supported in specs ('!!str')\n"
                 " 1 | n: !!str 3\n"
                 "   |    ^\n"
                 "spec.yaml:2:4: error: tags are not supported in specs ('!custom')\n"
                 " 2 | m: !custom {}\n"
                 "   |    ^\n");
  CHECK_LOAD_ERR("? [a, b]\n: 1\n{x: 1}: 2\n", 2,
                 "spec.yaml:1:3: error: mapping keys must be scalars, got a sequence\n"
                 " 1 | ? [a, b]\n"
                 "   |   ^\n"
                 "spec.yaml:3:1: error: mapping keys must be scalars, got a mapping\n"
                 " 3 | {x: 1}: 2\n"
                 "   | ^\n");
}

static void test_documents(void) {
  CHECK_LOAD_ERR("", 1,
                 "spec.yaml:1:1: error: empty spec\n"
                 " 1 | \n"
                 "   | ^\n");
  CHECK_LOAD_ERR("# nothing yet\n\n", 1,
                 "spec.yaml:1:1: error: empty spec\n"
                 " 1 | # nothing yet\n"
                 "   | ^\n");
  CHECK_LOAD_ERR("# header\n---\n", 1,
                 "spec.yaml:2:1: error: empty spec\n"
                 " 2 | ---\n"
                 "   | ^\n");
  CHECK_LOAD_ERR("a: 1\n---\nb: 2\n", 1,
                 "spec.yaml:2:1: error: a spec must be a single YAML document; found a second one\n"
                 " 2 | ---\n"
                 "   | ^\n");
}

static void test_depth(void) {
  /* Runaway nesting is an error, not a stack overflow. */
  og_buf text = {0};
  for (int i = 0; i < 5000; ++i) og_buf_putc(&text, '[');
  for (int i = 0; i < 5000; ++i) og_buf_putc(&text, ']');
  og_buf_putc(&text, '\n');
  og_diag d = {0};
  og_source *src = og_source_from_string("spec.yaml", og_buf_str(&text));
  og_ynode *root = og_yaml_load(src, &d);
  OG_CHECK(root == NULL);
  OG_CHECK(d.errors == 1);
  OG_CHECK_CONTAINS(og_buf_str(&d.out), "spec.yaml:1:258: error: nesting too deep\n");
  og_diag_free(&d);
  og_source_free(src);
  og_buf_free(&text);
}

int main(void) {
  test_spec();
  test_details();
  test_syntax_errors();
  test_duplicates();
  test_rejected_features();
  test_documents();
  test_depth();
  return og_check_report("test_yaml_tree");
}
