/* Unit tests for og_value. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "render/c_text.h"
#include "render/value.h"

static void test_scalars(void) {
  og_value *n = og_value_null(), *t = og_value_bool(true), *f = og_value_bool(false);
  og_value *i = og_value_int(-42), *z = og_value_int(0);
  og_value *big = og_value_int(INT64_MAX), *small = og_value_int(INT64_MIN);
  og_value *s = og_value_str("hi"), *e = og_value_str("");
  OG_CHECK(og_value_kind_of(n) == OG_V_NULL);
  OG_CHECK(og_value_kind_of(t) == OG_V_BOOL);
  OG_CHECK(og_value_kind_of(i) == OG_V_INT);
  OG_CHECK(og_value_kind_of(s) == OG_V_STR);
  OG_CHECK(og_value_kind_of(NULL) == OG_V_NULL);

  OG_CHECK(og_value_as_int(i) == -42);
  OG_CHECK(og_value_as_int(z) == 0);
  OG_CHECK(og_value_as_int(big) == INT64_MAX);
  OG_CHECK(og_value_as_int(small) == INT64_MIN);
  /* Getters read only their own kind: no conversions. */
  OG_CHECK(og_value_as_int(t) == 0);
  OG_CHECK(og_value_as_int(s) == 0);
  OG_CHECK(og_value_as_int(NULL) == 0);
  OG_CHECK(og_value_as_bool(t));
  OG_CHECK(!og_value_as_bool(f));
  OG_CHECK(!og_value_as_bool(i));
  OG_CHECK(!og_value_as_bool(s));
  OG_CHECK(!og_value_as_bool(n));
  OG_CHECK(!og_value_as_bool(NULL));
  OG_CHECK_STR(og_value_as_str(s), "hi");
  OG_CHECK_STR(og_value_as_str(e), "");
  OG_CHECK(og_value_as_str(i) == NULL);
  OG_CHECK(og_value_as_str(n) == NULL);
  OG_CHECK(og_value_as_str(NULL) == NULL);
  og_value *all[] = {n, t, f, i, z, big, small, s, e};
  for (size_t k = 0; k < sizeof all / sizeof *all; ++k) og_value_free(all[k]);

  char *owned = malloc(4);
  memcpy(owned, "abc", 4);
  og_value *taken = og_value_str_take(owned);
  OG_CHECK(og_value_as_str(taken) == owned);
  og_value_free(taken); /* frees `owned` too (ASan checks) */

  /* og_value_str copies its argument. */
  char buf[] = "xyz";
  og_value *copied = og_value_str(buf);
  buf[0] = 'Q';
  OG_CHECK_STR(og_value_as_str(copied), "xyz");
  og_value_free(copied);
  og_value_free(NULL);
}

static void test_list(void) {
  og_value *l = og_value_list();
  OG_CHECK(og_value_kind_of(l) == OG_V_LIST);
  OG_CHECK(og_list_len(l) == 0);
  OG_CHECK(og_list_at(l, 0) == NULL);
  for (int k = 0; k < 100; ++k) og_list_push(l, og_value_int(k));
  OG_CHECK(og_list_len(l) == 100);
  OG_CHECK(og_value_as_int(og_list_at(l, 0)) == 0);
  OG_CHECK(og_value_as_int(og_list_at(l, 99)) == 99);
  OG_CHECK(og_list_at(l, 100) == NULL);
  /* A non-list reads as empty. */
  og_value *s = og_value_str("x");
  OG_CHECK(og_list_len(s) == 0);
  OG_CHECK(og_list_at(s, 0) == NULL);
  OG_CHECK(og_list_len(NULL) == 0);
  OG_CHECK(og_list_at(NULL, 0) == NULL);
  og_value_free(s);
  og_value_free(l);
}

static void test_map(void) {
  og_value *m = og_value_map();
  OG_CHECK(og_value_kind_of(m) == OG_V_MAP);
  OG_CHECK(og_map_get(m, "name") == NULL);
  og_map_set_str(m, "name", "add");
  og_map_set_int(m, "rank", 2);
  og_map_set_bool(m, "inplace", true);
  og_map_set(m, "none", og_value_null());
  og_value *inner = og_value_list();
  og_list_push(inner, og_value_str("a"));
  og_map_set(m, "args", inner);
  OG_CHECK_STR(og_value_as_str(og_map_get(m, "name")), "add");
  OG_CHECK(og_value_as_int(og_map_get(m, "rank")) == 2);
  OG_CHECK(og_value_as_bool(og_map_get(m, "inplace")));
  OG_CHECK(og_value_kind_of(og_map_get(m, "none")) == OG_V_NULL);
  OG_CHECK(og_map_get(m, "none") != NULL); /* present, with a null value */
  OG_CHECK(og_map_get(m, "args") == inner);
  OG_CHECK(og_map_get(m, "missing") == NULL);
  OG_CHECK(og_map_get(m, "") == NULL);
  OG_CHECK(og_map_get(inner, "name") == NULL); /* not a map */
  OG_CHECK(og_map_get(NULL, "name") == NULL);

  /* Replacing frees the old value (ASan checks) and keeps the other keys. */
  og_map_set_str(m, "rank", "two");
  og_map_set_int(m, "args", 5);
  OG_CHECK_STR(og_value_as_str(og_map_get(m, "rank")), "two");
  OG_CHECK(og_value_as_int(og_map_get(m, "args")) == 5);
  OG_CHECK_STR(og_value_as_str(og_map_get(m, "name")), "add");

  /* The map copies its keys. */
  char key[] = "k";
  og_map_set_str(m, key, "v");
  key[0] = 'Q';
  OG_CHECK_STR(og_value_as_str(og_map_get(m, "k")), "v");
  OG_CHECK(og_map_get(m, "Q") == NULL);

  /* Many keys, all found. */
  for (int k = 0; k < 200; ++k) {
    char name[16];
    snprintf(name, sizeof name, "key%d", k);
    og_map_set_int(m, name, k);
  }
  OG_CHECK(og_value_as_int(og_map_get(m, "key0")) == 0);
  OG_CHECK(og_value_as_int(og_map_get(m, "key199")) == 199);

  /* Taking a key hands over its value and keeps the others, in order. */
  og_value *taken = og_map_take(m, "name");
  OG_CHECK_STR(og_value_as_str(taken), "add");
  og_value_free(taken);
  OG_CHECK(og_map_get(m, "name") == NULL);
  OG_CHECK(og_map_take(m, "name") == NULL);
  OG_CHECK(og_value_as_int(og_map_get(m, "key0")) == 0);
  OG_CHECK(og_value_as_int(og_map_get(m, "key199")) == 199);
  OG_CHECK(og_map_take(NULL, "name") == NULL);
  og_value_free(m);
}

/* A container owns what is put in it: freeing the root frees the tree (ASan checks). */
static void test_tree(void) {
  og_value *root = og_value_map();
  og_value *list = og_value_list();
  for (int k = 0; k < 3; ++k) {
    og_value *item = og_value_map();
    og_map_set_str(item, "name", "x");
    og_value *deeper = og_value_list();
    og_list_push(deeper, og_value_str("y"));
    og_map_set(item, "deeper", deeper);
    og_list_push(list, item);
  }
  og_map_set(root, "items", list);
  const og_value *second = og_list_at(og_map_get(root, "items"), 1);
  OG_CHECK_STR(og_value_as_str(og_list_at(og_map_get(second, "deeper"), 0)), "y");
  og_value_free(root);
}

/* og_wrap's lines as the templates print them: lead, each item and its sep, close. */
static char *og_wrapped_text(const og_value *lines) {
  og_buf b = {0};
  for (size_t l = 0; l < og_list_len(lines); ++l) {
    const og_value *line = og_list_at(lines, l), *items = og_map_get(line, "items");
    og_buf_puts(&b, og_value_as_str(og_map_get(line, "lead")));
    for (size_t i = 0; i < og_list_len(items); ++i) {
      og_buf_puts(&b, og_value_as_str(og_map_get(og_list_at(items, i), "text")));
      og_buf_puts(&b, og_value_as_str(og_map_get(og_list_at(items, i), "sep")));
    }
    og_buf_printf(&b, "%s\n", og_value_as_str(og_map_get(line, "close")));
  }
  return og_buf_take(&b);
}

/* A loop head fits on its line, or wraps at a semicolon as clang-format does: the rest
 * aligned under the first clause, no line past OG_C_COLUMNS. */
static void test_for_head(void) {
  og_value *short_head = og_for_head("  ", "i", "0", "n", "++i", true);
  char *text = og_wrapped_text(short_head);
  OG_CHECK_STR(text, "  for (int64_t i = 0; i < n; ++i) {\n");
  free(text);
  og_value_free(short_head);
  og_value *long_head = og_for_head("    ", "i", "(int64_t)blockIdx.y * blockDim.y + threadIdx.y",
                                    "x_size / opspec_max(dim, 1)", "i += (int64_t)gridDim.y * blockDim.y", false);
  text = og_wrapped_text(long_head);
  OG_CHECK_STR(text,
               "    for (int64_t i = (int64_t)blockIdx.y * blockDim.y + threadIdx.y; i < x_size / opspec_max(dim, 1);\n"
               "         i += (int64_t)gridDim.y * blockDim.y)\n");
  free(text);
  og_value_free(long_head);
}

/* A batch element's pointer, as the CUDA kernels pass it. */
#define OG_AT(type, name, k) "(" type " *)opspec_batch_at(opspec_args." name ".data, opspec_batch, " #k ", opspec_b)"

/* og_wrap_broken keeps a call or a head that does not fit aligned under its first item
 * while that takes at most `slack` lines more than breaking after the parenthesis, as
 * clang-format 14 does with .clang-format: each expected text below is what clang-format
 * leaves unchanged (the other form it rewrites), and each pair sits at the edge. */
static void test_wrap_broken(void) {
  struct {
    const char *indent, *head, *items[9], *close;
    size_t n, slack;
    const char *want;
  } cases[] = {
      /* fits: one line */
      {"  ", "f<T>(", {"x", "n"}, ");", 2, OG_SLACK_CALL, "  f<T>(x, n);\n"},
      /* a call 3 lines aligned, 2 after a break: aligned */
      {"    ",
       "opspec_relu_kernel_thread<T>(",
       {OG_AT("const T", "x", 0), "opspec_args.x.size", OG_AT("T", "out", 1)},
       ");",
       3,
       OG_SLACK_CALL,
       "    opspec_relu_kernel_thread<T>((const T *)opspec_batch_at(opspec_args.x.data, opspec_batch, 0, opspec_b),\n"
       "                                 opspec_args.x.size,\n"
       "                                 (T *)opspec_batch_at(opspec_args.out.data, opspec_batch, 1, opspec_b));\n"},
      /* a call 6 lines aligned, 4 after a break: broken */
      {"    ",
       "opspec_layer_norm_kernel_thread<T>(",
       {OG_AT("const T", "x", 0), "opspec_args.x.size", OG_AT("const T", "gamma", 1), OG_AT("const T", "beta", 2),
        OG_AT("T", "out", 3), "opspec_args.n", "opspec_args.eps"},
       ");",
       7,
       OG_SLACK_CALL,
       "    opspec_layer_norm_kernel_thread<T>(\n"
       "        (const T *)opspec_batch_at(opspec_args.x.data, opspec_batch, 0, opspec_b), opspec_args.x.size,\n"
       "        (const T *)opspec_batch_at(opspec_args.gamma.data, opspec_batch, 1, opspec_b),\n"
       "        (const T *)opspec_batch_at(opspec_args.beta.data, opspec_batch, 2, opspec_b),\n"
       "        (T *)opspec_batch_at(opspec_args.out.data, opspec_batch, 3, opspec_b), "
       "opspec_args.n, opspec_args.eps);\n"},
      /* a head 6 lines aligned, 3 after a break: aligned */
      {"",
       "static __device__ __forceinline__ void opspec_lif_kernel_thread(",
       {"const T *V", "const T *OPSPEC_RESTRICT I_ext", "const T *OPSPEC_RESTRICT tau_inv",
        "const T *OPSPEC_RESTRICT V_th", "const T *OPSPEC_RESTRICT V_rest", "const T *OPSPEC_RESTRICT dt", "T *V_out",
        "int32_t *OPSPEC_RESTRICT spikes", "const int64_t n"},
       ") {",
       9,
       OG_SLACK_HEAD,
       "static __device__ __forceinline__ void opspec_lif_kernel_thread(const T *V, const T *OPSPEC_RESTRICT I_ext,\n"
       "                                                                const T *OPSPEC_RESTRICT tau_inv,\n"
       "                                                                const T *OPSPEC_RESTRICT V_th,\n"
       "                                                                const T *OPSPEC_RESTRICT V_rest,\n"
       "                                                                const T *OPSPEC_RESTRICT dt, T *V_out,\n"
       "                                                                int32_t *OPSPEC_RESTRICT spikes, "
       "const int64_t n) {\n"},
      /* a head 6 lines aligned, 2 after a break: broken */
      {"",
       "static __device__ __forceinline__ void opspec_embedding_bag_kernel_thread(",
       {"const T *OPSPEC_RESTRICT table", "const int32_t *OPSPEC_RESTRICT indices", "T *OPSPEC_RESTRICT out",
        "const int64_t vocab", "const int64_t dim", "const int64_t bags", "const int64_t bag_size",
        "int *opspec_rejected"},
       ") {",
       8,
       OG_SLACK_HEAD,
       "static __device__ __forceinline__ void opspec_embedding_bag_kernel_thread(\n"
       "    const T *OPSPEC_RESTRICT table, const int32_t *OPSPEC_RESTRICT indices, T *OPSPEC_RESTRICT out, "
       "const int64_t vocab,\n"
       "    const int64_t dim, const int64_t bags, const int64_t bag_size, int *opspec_rejected) {\n"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    og_value *lines =
        og_wrap_broken(cases[c].indent, cases[c].head, cases[c].items, cases[c].n, cases[c].close, cases[c].slack);
    char *text = og_wrapped_text(lines);
    OG_CHECK_STR(text, cases[c].want);
    free(text);
    og_value_free(lines);
  }
}

int main(void) {
  test_scalars();
  test_list();
  test_map();
  test_tree();
  test_for_head();
  test_wrap_broken();
  return og_check_report("test_value");
}
