#include "plan/lowp.h"

#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"

bool og_lowp_typevar(const og_typevar *t) {
  for (size_t c = 0; c < t->nchoices; ++c)
    if (!strcmp(t->choices[c], "bfloat16") || !strcmp(t->choices[c], "float16")) return true;
  return false;
}

bool og_lowp_any(const og_op *op) {
  for (size_t t = 0; t < op->ntypes; ++t)
    if (og_lowp_typevar(&op->types[t])) return true;
  return false;
}

/* The arrays the rewrite converts (inputs and outputs of such a type variable; scratch
 * stays float, the kernel's own) and the fixed-dtype bfloat16 ones, which it cannot. */
static void og_lowp_arrays(const og_op *op, og_lowp_names *names, og_idents *typevars) {
  const og_array *lists[] = {op->inputs, op->outputs};
  size_t counts[] = {op->ninputs, op->noutputs};
  for (size_t t = 0; t < op->ntypes; ++t)
    if (og_lowp_typevar(&op->types[t])) og_idents_add(typevars, op->types[t].name);
  for (size_t l = 0; l < 2; ++l)
    for (size_t i = 0; i < counts[l]; ++i) {
      const og_array *a = &lists[l][i];
      if (a->typevar >= 0 && og_lowp_typevar(&op->types[a->typevar]))
        og_lowp_names_add(names, a->name, op->types[a->typevar].name);
      else if (a->typevar < 0 && !strcmp(a->dtype, "bfloat16"))
        og_lowp_names_add(names, a->name, NULL);
    }
}

bool og_lowp_rewrite_op(const og_op *op, og_buf *body, og_buf *prologue, og_lowp_stop *stop, const og_body **where) {
  stop->what = NULL;
  *where = NULL;
  if (!og_lowp_any(op)) return false;
  og_lowp_names names = {0};
  og_idents typevars = {0};
  og_lowp_arrays(op, &names, &typevars);
  const og_body *cpu = og_plan_cpu_body(op);
  bool ok = true;
  if (!op->cpu.present && op->prologue.present) {
    ok = og_lowp_rewrite(op->prologue.text, &names, &typevars, prologue, stop);
    if (!ok) *where = &op->prologue;
  }
  if (ok && !(ok = og_lowp_rewrite(cpu->text, &names, &typevars, body, stop))) *where = cpu;
  og_lowp_names_free(&names);
  og_idents_free(&typevars);
  return ok;
}

void og_lowp_note(const og_op *op, og_diag *d) {
  og_buf body = {0}, prologue = {0};
  og_lowp_stop stop;
  const og_body *where;
  if (!og_lowp_rewrite_op(op, &body, &prologue, &stop, &where) && stop.what)
    og_diag_note(d, og_body_loc(where, stop.line, stop.col),
                 "%s: so op '%s' computes its bfloat16 variants in float on copies the handler widens and narrows "
                 "(an allocation and two passes over each bfloat16 array per call) and its float16 variants in "
                 "_Float16 (scalar code), instead of converting each element in the loop; read and write these "
                 "arrays only as elements, 'x[i]' and 'y[i] = v;' (docs/spec.md, \"bfloat16 and float16 on CPU\")",
                 stop.what, op->name);
  free(stop.what);
  og_buf_free(&body);
  og_buf_free(&prologue);
}
