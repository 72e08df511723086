/* The spec loader and checker: every shipped spec loads; every bad-spec fixture fails
 * with its message at its line and column, and nothing else is reported. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "model.h"

#define BAD "tests/fixtures/bad/"

static const struct {
  const char *file;
  const char *first; /* the first diagnostic line, exactly */
  int errors;
} og_bad_specs[] = {
    {"unknown_key", "3:33: error: unknown key 'shpae' in output (expected one of: name, dtype, shape)", 2},
    {"duplicate_key", "5:1: error: duplicate key 'cpu'", 1},
    {"missing_key", "3:5: error: output is missing required key 'dtype'", 1},
    {"wrong_type", "2:9: error: 'inputs' must be a sequence, got a mapping", 1},
    {"unknown_dtype", "4:22: error: unknown dtype 'flaot32' (expected a type variable (T) or one of bool, int8, int16, int32, "
                      "int64, uint8, uint16, uint32, uint64, float32, float64)", 1},
    {"undefined_symbol", "5:41: error: shape uses 'm', which is not a shape symbol, an integer attribute or an input's NAME_size", 1},
    {"conflicting_symbol", "3:39: error: shape symbol 'n' has the same name as attribute 'n'", 1},
    {"bad_expression", "5:49: error: unexpected end of expression", 1},
    {"alias_mismatch", "6:16: error: output 'out' (float64) aliases input 'x' (float32), but their dtypes or shapes differ", 1},
    {"name_collision", "4:12: error: input 'x' has the same name as input 'x'", 1},
    {"reserved_name", "3:12: error: input name 'lambda' is reserved", 1},
    {"wrong_file_name", "1:5: error: op 'some_other_name' must be defined in a file named 'some_other_name.yaml'", 1},
    {"unbound_typevar", "2:9: error: type variable 'T' is not the dtype of any input, so it cannot be inferred", 1},
    {"grid_without_block", "8:11: error: cuda kernel 'k' gives 'grid' without 'block'", 1},
    {"grid_and_launch", "9:11: error: cuda kernel 'k' gives both 'grid' and 'launch'; use one", 1},
    {"zero_threads", "10:25: error: 'threads_per_block' must be positive, got 0", 1},
    {"kernel_without_launch", "6:9: error: 'kernel' needs 'launch': the extents of the index space it runs over", 1},
    {"no_cpu", "1:5: error: op 'no_cpu' has no CPU implementation: give 'launch' + 'kernel' or a 'cpu' body", 1},
    {"bad_vmap", "6:7: error: unknown vmap method 'sideways' (expected one of none, sequential, sequential_unrolled, "
                 "expand_dims, broadcast_all)", 1},
    {"ellipsis_not_first", "3:42: error: '...' may only be the first dim", 1},
    {"input_expression", "3:39: error: input dims must be a non-negative integer, a symbol or '...', got 'n + 1' "
                         "(expressions belong in output shapes)", 1},
    {"float_attr_in_shape", "5:41: error: shape uses attribute 'scale' of type float32; only integer attributes may appear "
                            "in shapes", 1},
    {"bad_attr_default", "7:37: error: default of int32 attribute 'k' must be an integer in range, got '2.5'", 1},
    {"yaml_syntax", "4:1: error: while parsing a flow mapping: did not find expected ',' or '}'", 1},
    {"many_errors", "3:43: error: unknown key 'extra' in input (expected one of: name, dtype, shape)", 2},
};

static void og_test_bad_specs(void) {
  for (size_t i = 0; i < sizeof og_bad_specs / sizeof *og_bad_specs; ++i) {
    char path[256], want[512];
    snprintf(path, sizeof path, BAD "%s.yaml", og_bad_specs[i].file);
    snprintf(want, sizeof want, "%s:%s\n", path, og_bad_specs[i].first);
    og_diag d = {0};
    og_op *op = og_spec_load(path, &d);
    OG_CHECK(op == NULL);
    OG_CHECK(strncmp(og_buf_str(&d.out), want, strlen(want)) == 0);
    if (strncmp(og_buf_str(&d.out), want, strlen(want)) != 0) fprintf(stderr, "--- want:\n%s--- got:\n%s\n", want, og_buf_str(&d.out));
    OG_CHECK(d.errors == og_bad_specs[i].errors);
    if (d.errors != og_bad_specs[i].errors) fprintf(stderr, "%s: %d errors\n%s\n", path, d.errors, og_buf_str(&d.out));
    og_op_free(op);
    og_diag_free(&d);
  }
}

static void og_test_quote_and_caret(void) {
  og_diag d = {0};
  OG_CHECK(og_spec_load(BAD "unknown_dtype.yaml", &d) == NULL);
  OG_CHECK_CONTAINS(og_buf_str(&d.out), "\n 4 |   - {name: x, dtype: flaot32, shape: [n]}\n"
                                        "   |                      ^\n");
  og_diag_free(&d);
}

static void og_test_missing_file(void) {
  og_diag d = {0};
  OG_CHECK(og_spec_load(BAD "no_such_spec.yaml", &d) == NULL);
  OG_CHECK_CONTAINS(og_buf_str(&d.out), "no_such_spec.yaml: error: cannot read: No such file or directory");
  og_diag_free(&d);
}

static void og_test_good_spec_model(void) {
  og_diag d = {0};
  og_op *op = og_spec_load("specs/csr_matvec.yaml", &d);
  OG_CHECK(op != NULL);
  if (!op) {
    fprintf(stderr, "%s", og_buf_str(&d.out));
    og_diag_free(&d);
    return;
  }
  OG_CHECK_STR(op->name, "csr_matvec");
  OG_CHECK(op->ninputs == 4 && op->noutputs == 1 && op->ntypes == 1);
  OG_CHECK(op->nsymbols == 3);
  OG_CHECK_STR(op->symbols[0], "nnz");
  OG_CHECK_STR(op->symbols[1], "rows_p1");
  OG_CHECK(op->inputs[1].typevar == -1 && op->inputs[0].typevar == 0);
  OG_CHECK(op->outputs[0].dims[0].kind == OG_DIM_EXPR);
  OG_CHECK(op->launch.n == 1 && op->kernel.present && !op->cpu.present);
  OG_CHECK(op->kernel.line == 16);
  OG_CHECK(og_op_nvariants(op) == 2);
  og_op_free(op);

  op = og_spec_load("specs/exp_trace.yaml", &d);
  OG_CHECK(op != NULL);
  if (op) {
    OG_CHECK(op->outputs[0].alias_of == 0 && op->inputs[0].aliased);
    OG_CHECK(!op->inputs[1].aliased);
  }
  og_op_free(op);
  OG_CHECK(d.errors == 0);
  og_diag_free(&d);
}

int main(void) {
  og_test_bad_specs();
  og_test_quote_and_caret();
  og_test_missing_file();
  og_test_good_spec_model();
  return og_check_report("test_spec");
}
