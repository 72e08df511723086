/* Unit tests for og_value. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "value.h"

static void test_scalars(void) {
  og_value *n = og_value_null(), *t = og_value_bool(true), *f = og_value_bool(false);
  og_value *i = og_value_int(-42), *z = og_value_int(0);
  og_value *s = og_value_str("hi"), *e = og_value_str("");
  OG_CHECK(og_value_kind_of(n) == OG_V_NULL);
  OG_CHECK(og_value_kind_of(t) == OG_V_BOOL);
  OG_CHECK(og_value_kind_of(i) == OG_V_INT);
  OG_CHECK(og_value_kind_of(s) == OG_V_STR);
  OG_CHECK(og_value_kind_of(NULL) == OG_V_NULL);
  OG_CHECK(og_value_as_int(i) == -42);
  OG_CHECK(og_value_as_int(t) == 1);
  OG_CHECK(og_value_as_int(f) == 0);
  OG_CHECK(og_value_as_int(s) == 0);
  OG_CHECK_STR(og_value_as_str(s), "hi");
  OG_CHECK(og_value_as_str(i) == NULL);
  /* Truthiness follows Jinja. */
  OG_CHECK(!og_value_as_bool(n));
  OG_CHECK(og_value_as_bool(t));
  OG_CHECK(!og_value_as_bool(f));
  OG_CHECK(og_value_as_bool(i));
  OG_CHECK(!og_value_as_bool(z));
  OG_CHECK(og_value_as_bool(s));
  OG_CHECK(!og_value_as_bool(e));
  OG_CHECK(!og_value_as_bool(NULL));
  og_value *list[] = {n, t, f, i, z, s, e};
  for (size_t k = 0; k < sizeof list / sizeof *list; ++k) og_value_free(list[k]);

  char *owned = malloc(4);
  memcpy(owned, "abc", 4);
  og_value *taken = og_value_str_take(owned);
  OG_CHECK(og_value_as_str(taken) == owned);
  og_value_free(taken);

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
  OG_CHECK(og_list_len(l) == 0);
  OG_CHECK(!og_value_as_bool(l));
  for (int k = 0; k < 100; ++k) og_list_push(l, og_value_int(k));
  OG_CHECK(og_list_len(l) == 100);
  OG_CHECK(og_value_as_bool(l));
  OG_CHECK(og_value_as_int(og_list_at(l, 0)) == 0);
  OG_CHECK(og_value_as_int(og_list_at(l, 99)) == 99);
  OG_CHECK(og_list_at(l, 100) == NULL);
  og_value *s = og_value_str("x");
  OG_CHECK(og_list_len(s) == 0);
  OG_CHECK(og_list_at(s, 0) == NULL);
  og_value_free(s);
  og_value_free(l);
}

static void test_map(void) {
  og_value *m = og_value_map();
  OG_CHECK(!og_value_as_bool(m));
  OG_CHECK(og_map_len(m) == 0);
  og_map_set_str(m, "name", "add");
  og_map_set_int(m, "rank", 2);
  og_map_set_bool(m, "inplace", true);
  og_value *inner = og_value_list();
  og_list_push(inner, og_value_str("a"));
  og_map_set(m, "args", inner);
  OG_CHECK(og_value_as_bool(m));
  OG_CHECK(og_map_len(m) == 4);
  OG_CHECK_STR(og_value_as_str(og_map_get(m, "name")), "add");
  OG_CHECK(og_value_as_int(og_map_get(m, "rank")) == 2);
  OG_CHECK(og_value_as_bool(og_map_get(m, "inplace")));
  OG_CHECK(og_map_get(m, "args") == inner);
  OG_CHECK(og_map_get(m, "missing") == NULL);
  OG_CHECK(og_map_get(inner, "name") == NULL); /* not a map */

  /* Replacing keeps the key's position and frees the old value (ASan checks). */
  og_map_set_str(m, "rank", "two");
  OG_CHECK(og_map_len(m) == 4);
  OG_CHECK_STR(og_map_key_at(m, 1), "rank");
  OG_CHECK_STR(og_value_as_str(og_map_value_at(m, 1)), "two");

  /* Insertion order. */
  OG_CHECK_STR(og_map_key_at(m, 0), "name");
  OG_CHECK_STR(og_map_key_at(m, 2), "inplace");
  OG_CHECK_STR(og_map_key_at(m, 3), "args");
  OG_CHECK(og_map_key_at(m, 4) == NULL);
  OG_CHECK(og_map_value_at(m, 4) == NULL);
  OG_CHECK(og_map_len(inner) == 0);
  og_value_free(m);
}

static void test_copy(void) {
  og_value *m = og_value_map();
  og_map_set_str(m, "s", "str");
  og_map_set_int(m, "i", 7);
  og_map_set(m, "n", og_value_null());
  og_value *l = og_value_list();
  og_list_push(l, og_value_bool(false));
  og_value *nested = og_value_map();
  og_map_set_str(nested, "k", "v");
  og_list_push(l, nested);
  og_map_set(m, "l", l);

  og_value *c = og_value_copy(m);
  og_value_free(m); /* the copy must not share anything */
  OG_CHECK(og_map_len(c) == 4);
  OG_CHECK_STR(og_map_key_at(c, 0), "s");
  OG_CHECK_STR(og_value_as_str(og_map_get(c, "s")), "str");
  OG_CHECK(og_value_as_int(og_map_get(c, "i")) == 7);
  OG_CHECK(og_value_kind_of(og_map_get(c, "n")) == OG_V_NULL);
  const og_value *cl = og_map_get(c, "l");
  OG_CHECK(og_list_len(cl) == 2);
  OG_CHECK(og_value_kind_of(og_list_at(cl, 0)) == OG_V_BOOL);
  OG_CHECK_STR(og_value_as_str(og_map_get(og_list_at(cl, 1), "k")), "v");
  og_value_free(c);

  og_value *cn = og_value_copy(NULL);
  OG_CHECK(og_value_kind_of(cn) == OG_V_NULL);
  og_value_free(cn);
}

int main(void) {
  test_scalars();
  test_list();
  test_map();
  test_copy();
  return og_check_report("test_value");
}
