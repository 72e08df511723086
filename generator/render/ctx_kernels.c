/* The kernels of an op: the body, written once into ops/<op>_body.inc; the CPU
 * function of each type variant around it; the CUDA kernels (C++ templates over the
 * type variables) and their launcher.
 *
 * Kernels declare only the names their code uses (c_idents.h), so nothing needs to be
 * marked unused and a reader sees exactly what a body works with.
 */
#include <stdlib.h>
#include <string.h>

#include "render/ctx_kernels.h"

#include "plan/lowp.h"
#include "plan/spans.h"
#include "plan/tiles.h"
#include "render/c_text.h"
#include "util/c_idents.h"
#include "util/escape.h"

static const char *const og_index_names[] = {"i", "j", "k"};

/* ---- what a piece of code uses ------------------------------------------------------ */

static void og_use_expr_name(const og_expr *n, void *ud) { og_idents_add(ud, n->name); }

static void og_use_expr(og_idents *used, const og_expr *e) {
  if (e) og_expr_visit_names(e, og_use_expr_name, used);
}

static void og_use_launch(og_idents *used, const og_launch *l) {
  for (size_t d = 0; d < l->n; ++d) og_use_expr(used, l->extents[d]);
}

/* ---- declarations --------------------------------------------------------------- */

/* A local declared from the args struct: {type, name, value, wrap}, written
 * "<type><name> = <value>;" (the type ends in a space or a '*') at `indent` columns, or,
 * with `wrap`, where that line is too long, the value on the next line four columns in
 * (clang-format's continuation). */
static og_value *og_local(size_t indent, const char *type, const char *name, const char *value) {
  og_value *l = og_value_map();
  og_map_set_str(l, "type", type);
  og_map_set_str(l, "name", name);
  og_map_set_str(l, "value", value);
  og_map_set_bool(l, "wrap", indent + strlen(type) + strlen(name) + 3 + strlen(value) + 1 > OG_C_COLUMNS);
  return l;
}

/* Every name of the op that `used` holds, as locals (og_local) read through `args`
 * ("opspec_args->" or "opspec_args."). With `batched`, inputs and outputs point at batch
 * element opspec_b of the portable CUDA kernel's opspec_batch (inputs then outputs, as
 * opspec_batch_grid numbers them). `indent`: the columns before each declaration. Adds the type variables the declarations need to
 * `used`. */
static og_value *og_locals(const og_op *op, og_idents *used, const char *args, bool batched, size_t indent,
                           og_idents *stored) {
  og_value *locals = og_value_list();
  const og_array *lists[] = {op->inputs, op->outputs, op->scratch};
  size_t counts[] = {op->ninputs, op->noutputs, op->nscratch};
  og_buf name = {0}, type = {0}, value = {0};
  for (size_t l = 0; l < 3; ++l)
    for (size_t i = 0; i < counts[l]; ++i) {
      const og_array *a = &lists[l][i];
      const char *ctype = og_array_ctype(a), *konst = a->role == OG_INPUT ? "const " : "";
      og_buf storage = {0}; /* an input's or output's 2-byte form where the kernel converts (plan/lowp.h) */
      if (stored && l < 2 && a->typevar >= 0 && og_lowp_typevar(&op->types[a->typevar])) {
        og_buf_printf(&storage, "OPSPEC_STORAGE_%s", op->types[a->typevar].name);
        ctype = og_buf_str(&storage);
      }
      /* An aliased pair shares memory, so neither pointer may be restrict. */
      bool shared = a->role == OG_INPUT ? a->aliased : a->alias_of >= 0;
      if (og_idents_has(used, a->name)) {
        og_buf_clear(&type);
        og_buf_clear(&value);
        og_buf_printf(&type, "%s%s *%s", konst, ctype, shared ? "" : "OPSPEC_RESTRICT ");
        if (batched && l < 2)
          og_buf_printf(&value, "(%s%s *)opspec_batch_at(%s%s.data, opspec_batch, %zu, opspec_b)", konst, ctype, args,
                        a->name, l ? op->ninputs + i : i);
        else
          og_buf_printf(&value, "(%s%s *)%s%s.data", konst, ctype, args, a->name);
        og_list_push(locals, og_local(indent, og_buf_str(&type), a->name, og_buf_str(&value)));
        if (a->typevar >= 0) og_idents_add(storage.len ? stored : used, op->types[a->typevar].name);
      }
      og_buf_free(&storage);
      static const char *const parts[][2] = {{"_size", "const int64_t "}, {"_shape", "const int64_t *"}};
      for (size_t p = 0; p < 2; ++p) {
        og_buf_clear(&name);
        og_buf_printf(&name, "%s%s", a->name, parts[p][0]);
        if (!og_idents_has(used, og_buf_str(&name))) continue;
        og_buf_clear(&value);
        og_buf_printf(&value, "%s%s.%s", args, a->name, parts[p][0] + 1);
        og_list_push(locals, og_local(indent, parts[p][1], og_buf_str(&name), og_buf_str(&value)));
      }
    }
  for (size_t s = 0; s < op->nsymbols; ++s)
    if (og_idents_has(used, op->symbols[s])) {
      og_buf_clear(&value);
      og_buf_printf(&value, "%s%s", args, op->symbols[s]);
      og_list_push(locals, og_local(indent, "const int64_t ", op->symbols[s], og_buf_str(&value)));
    }
  for (size_t t = 0; t < op->nattrs; ++t)
    if (og_idents_has(used, op->attrs[t].name)) {
      og_buf_clear(&type);
      og_buf_clear(&value);
      og_buf_printf(&type, "const %s ", og_dtype_ctype(og_attr_types[op->attrs[t].type].name));
      og_buf_printf(&value, "%s%s", args, op->attrs[t].name);
      og_list_push(locals, og_local(indent, og_buf_str(&type), op->attrs[t].name, og_buf_str(&value)));
    }
  og_buf_free(&name);
  og_buf_free(&type);
  og_buf_free(&value);
  return locals;
}

/* ---- the body ---------------------------------------------------------------------- */

/* A block of the spec's code as a record {line, path, lines}: the template writes a
 * #line that points into the spec, then the lines, each indented as the YAML block
 * indents it, so the compiler's columns are the spec's too (and, where the generated
 * code goes on, the marker that render/render.c turns into a #line back). */
static og_value *og_spec_block(const og_op *op, const og_body *b) {
  og_value *block = og_value_map(), *lines = og_lines();
  og_map_set_int(block, "line", b->line);
  og_map_set(block, "path", og_escaped(og_escape_c_string, op->src->path));
  size_t len = strlen(b->text);
  while (len && (b->text[len - 1] == '\n' || b->text[len - 1] == ' ')) --len;
  for (size_t start = 0; start < len;) {
    size_t end = start;
    while (end < len && b->text[end] != '\n') ++end;
    if (end == start)
      og_line(lines, "%s", "");
    else
      og_line(lines, "%*s%.*s", b->indent, "", (int)(end - start), b->text + start);
    start = end + 1;
  }
  og_map_set(block, "lines", lines);
  return block;
}

/* ---- the CPU kernels --------------------------------------------------------------- */

/* The portable kernel's loop nest around the body, as records: `extents` the locals
 * {dim, value} that hold an inner loop's bound that is not a bare name or number, and
 * `loops` {simd, head (og_for_head's lines)}. The first launch index runs over
 * the range [opspec_begin, opspec_end) that the CPU handler hands this call (it splits
 * the launch, and a natively batched call's elements, among threads), the others whole;
 * the innermost loop gets `omp simd` where the plan says so. The handler zero-fills the
 * outputs of an empty launch and never calls the kernel then. */
static void og_cpu_loops(const og_op *op, const og_op_plan *plan, og_value *v) {
  static const char *const indents[] = {"  ", "    ", "      "};
  size_t n = op->launch.n;
  og_value *extents = og_value_list(), *loops = og_value_list();
  for (size_t d = 0; d < n; ++d) {
    og_value *loop = og_value_map();
    og_value *end = NULL;
    if (d == 0) {
      end = og_value_str("opspec_end");
    } else if (og_expr_is_atom(op->launch.extents[d])) {
      end = og_c_expr(op->launch.extents[d]);
    } else {
      og_buf local = {0};
      og_buf_printf(&local, "opspec_n%zu", d);
      end = og_value_str(og_buf_str(&local));
      og_value *extent = og_value_map();
      og_map_set_int(extent, "dim", (int64_t)d);
      og_map_set(extent, "value", og_c_expr(op->launch.extents[d]));
      og_list_push(extents, extent);
      og_buf_free(&local);
    }
    og_map_set_bool(loop, "simd", plan->cpu_simd && d + 1 == n);
    og_buf step = {0};
    og_buf_printf(&step, "++%s", og_index_names[d]);
    og_map_set(loop, "head",
               og_for_head(indents[d], og_index_names[d], d ? "0" : "opspec_begin", og_value_as_str(end),
                           og_buf_str(&step), d + 1 == n));
    og_value_free(end);
    og_buf_free(&step);
    og_list_push(loops, loop);
  }
  og_map_set(v, "cpu_extents", extents);
  og_map_set(v, "cpu_loops", loops);
  og_map_set_str(v, "cpu_close_indent", n ? indents[n - 1] : "");
  og_map_set_bool(v, "has_prologue", op->prologue.present);
  if (op->prologue.present) og_map_set(v, "prologue", og_spec_block(op, &op->prologue));
}

/* One specialisation per combination of type-variable choices, first variable slowest
 * (the order opspec_bind_inputs computes `variant` in): fills `pick`. */
static void og_variant_picks(const og_op *op, size_t v, size_t *pick) {
  for (size_t t = op->ntypes; t-- > 0;) {
    pick[t] = v % op->types[t].nchoices;
    v /= op->types[t].nchoices;
  }
}

/* The #defines that _cpu.c includes itself with for one variant, as records {name, pad,
 * value}: OPSPEC_CPU_VARIANT, the function's name, then `pairs` ({name, value}
 * records: OPSPEC_CPU_<T> per type variable the kernel uses, and the 2-byte macros of
 * plan/lowp.h), the values aligned as .clang-format's AlignConsecutiveMacros aligns
 * them. */
static og_value *og_cpu_defines(const char *function, const og_value *pairs) {
  size_t width = strlen("OPSPEC_CPU_VARIANT");
  for (size_t d = 0; d < og_list_len(pairs); ++d) {
    size_t len = strlen(og_value_as_str(og_map_get(og_list_at(pairs, d), "name")));
    if (len > width) width = len;
  }
  og_value *defines = og_value_list();
  for (size_t d = 0; d <= og_list_len(pairs); ++d) {
    og_buf pad = {0};
    const og_value *pair = d ? og_list_at(pairs, d - 1) : NULL;
    const char *name = pair ? og_value_as_str(og_map_get(pair, "name")) : "OPSPEC_CPU_VARIANT";
    og_buf_printf(&pad, "%*s", (int)(width + 1 - strlen(name)), "");
    og_value *define = og_value_map();
    og_map_set_str(define, "name", name);
    og_map_set(define, "pad", og_value_str_take(og_buf_take(&pad)));
    og_map_set_str(define, "value", pair ? og_value_as_str(og_map_get(pair, "value")) : function);
    og_list_push(defines, define);
  }
  return defines;
}

static void og_define_push(og_value *pairs, const char *prefix, const char *var, const char *value) {
  og_value *pair = og_value_map();
  og_buf name = {0};
  og_buf_printf(&name, "%s%s", prefix, var);
  og_map_set(pair, "name", og_value_str_take(og_buf_take(&name)));
  og_map_set_str(pair, "value", value);
  og_list_push(pairs, pair);
}

static void og_define_undef(og_value *undefs, const char *prefix, const char *var) {
  og_buf name = {0};
  og_buf_printf(&name, "%s%s", prefix, var);
  og_list_push(undefs, og_value_str_take(og_buf_take(&name)));
}

/* The defines of type variable `t` bound to `dtype` in a variant (og_cpu_defines): its
 * compute type, and where the kernel converts (`lowp`), its storage type and its load
 * and store conversions (identities where it is not 2-byte). */
static void og_typevar_defines(const og_op *op, size_t t, const char *dtype, bool lowp, og_value *pairs) {
  const char *name = op->types[t].name;
  bool bf16 = !strcmp(dtype, "bfloat16"), f16 = !strcmp(dtype, "float16");
  /* bfloat16 computes in float either way (no C compiler here has it); float16 where
   * the kernel converts, else in _Float16. */
  og_define_push(pairs, "OPSPEC_CPU_", name, bf16 || (f16 && lowp) ? "float" : og_dtype_ctype(dtype));
  if (!lowp || !og_lowp_typevar(&op->types[t])) return;
  og_define_push(pairs, "OPSPEC_STORAGE_", name, bf16 || f16 ? "uint16_t" : og_dtype_ctype(dtype));
  og_define_push(pairs, "OPSPEC_LOAD_", name,
                 bf16  ? "opspec_load_bfloat16"
                 : f16 ? "opspec_load_float16"
                       : "OPSPEC_SAME");
  og_define_push(pairs, "OPSPEC_STORE_", name,
                 bf16  ? "opspec_store_bfloat16"
                 : f16 ? "opspec_store_float16"
                       : "OPSPEC_SAME");
}

/* The rewritten body (and prologue) of the 2-byte variants, as og_spec_block records in
 * `v` (lowp_body, lowp_prologue). */
static void og_lowp_blocks(const og_op *op, og_value *v) {
  og_buf body = {0}, prologue = {0};
  og_lowp_stop stop;
  const og_body *where;
  if (og_lowp_rewrite_op(op, &body, &prologue, &stop, &where)) {
    og_body b = *og_plan_cpu_body(op);
    b.text = (char *)og_buf_str(&body);
    og_map_set(v, "lowp_body", og_spec_block(op, &b));
    og_map_set_bool(v, "has_lowp_body", true);
    if (!op->cpu.present && op->prologue.present) {
      og_body p = op->prologue;
      p.text = (char *)og_buf_str(&prologue);
      og_map_set(v, "lowp_prologue", og_spec_block(op, &p));
      og_map_set_bool(v, "has_lowp_prologue", true);
    }
  }
  free(stop.what);
  og_buf_free(&body);
  og_buf_free(&prologue);
}

/* The CPU function of variant `pick`, opspec_<op>_cpu_<dtype>... (`fn`). */
static void og_cpu_variant_name(const og_op *op, const size_t *pick, og_buf *fn) {
  og_buf_printf(fn, "opspec_%s_cpu", op->name);
  for (size_t t = 0; t < op->ntypes; ++t) og_buf_printf(fn, "_%s", op->types[t].choices[pick[t]]);
  if (!op->ntypes) og_buf_puts(fn, "_default"); /* opspec_<op>_cpu is the handler */
}

/* A float16 variant that runs its float32 twin on tiles (plan/tiles.h), as a record:
 * {function, twin, comment (which variant), tiles (name: the 2-byte arrays a tile each),
 * wholes (name, size), widen, shift (name, ctype), narrow}. */
static og_value *og_cpu_tiled(const og_op *op, const og_tiles *tiles, const size_t *pick, const char *function,
                              const char *twin, const char *comment) {
  og_value *t = og_value_map(), *tile = og_value_list(), *wholes = og_value_list();
  og_value *widen = og_value_list(), *shift = og_value_list(), *narrow = og_value_list();
  og_map_set_str(t, "function", function);
  og_map_set_str(t, "twin", twin);
  og_map_set_str(t, "comment", comment);
  for (size_t l = 0; l < 2; ++l)
    for (size_t a = 0; a < (l ? op->noutputs : op->ninputs); ++a) {
      const og_array *arr = l ? &op->outputs[a] : &op->inputs[a];
      og_tile_role role = l ? tiles->outputs[a] : tiles->inputs[a];
      og_value *rec = og_value_map();
      og_map_set_str(rec, "name", arr->name);
      if (role == OG_TILE_WHOLE) {
        og_map_set_int(rec, "size", og_tile_fixed_size(arr));
        og_list_push(wholes, rec);
        continue;
      }
      if (role == OG_TILE_SHIFT) {
        const char *dtype = arr->typevar >= 0 ? op->types[arr->typevar].choices[pick[arr->typevar]] : arr->dtype;
        og_map_set_str(rec, "ctype", og_dtype_ctype(dtype));
        og_map_set_str(rec, "const", l ? "" : "const ");
        og_list_push(shift, rec);
        continue;
      }
      if (role == OG_TILE_WIDEN || role == OG_TILE_NARROW) {
        og_list_push(tile, og_value_str(arr->name));
        og_list_push(role == OG_TILE_WIDEN ? widen : narrow, rec);
        continue;
      }
      og_value_free(rec);
    }
  og_map_set(t, "tiles", tile);
  og_map_set(t, "wholes", wholes);
  og_map_set(t, "widen", widen);
  og_map_set(t, "shift", shift);
  og_map_set(t, "narrow", narrow);
  return t;
}

/* The float16 row spans of a 2-D kernel (plan/spans.h), in `v`: span_arrays {name,
 * input}, span_part (each array's share of OPSPEC_CPU_SPAN_FLOATS), span_reads and
 * span_writes {name, base}, span_extent (the inner loop's bound), span_constants (the
 * body's leading constants, an og_spec_block) and span_body (the body on the spans). */
static void og_cpu_spans(const og_op *op, const og_op_plan *plan, og_value *v) {
  og_spans spans;
  if (!og_spans_plan(op, plan, &spans)) return;
  og_value *arrays = og_value_list(), *reads = og_value_list(), *writes = og_value_list();
  const og_array *all[OPSPEC_MAX_INPUTS + OPSPEC_MAX_OUTPUTS];
  for (size_t a = 0; a < op->ninputs + op->noutputs; ++a)
    all[a] = a < op->ninputs ? &op->inputs[a] : &op->outputs[a - op->ninputs];
  for (size_t a = 0; a < spans.narrays; ++a) {
    og_value *rec = og_value_map();
    og_map_set_str(rec, "name", all[spans.arrays[a]]->name);
    og_map_set_bool(rec, "input", all[spans.arrays[a]]->role == OG_INPUT);
    og_list_push(arrays, rec);
  }
  for (size_t l = 0; l < 2; ++l)
    for (size_t k = 0; k < (l ? spans.nwrites : spans.nreads); ++k) {
      const og_span_slice *slice = l ? &spans.writes[k] : &spans.reads[k];
      og_value *rec = og_value_map();
      og_map_set_str(rec, "name", all[slice->array]->name);
      og_map_set_str(rec, "base", slice->base);
      og_list_push(l ? writes : reads, rec);
    }
  og_map_set(v, "span_arrays", arrays);
  og_map_set_int(v, "span_part", (int64_t)spans.narrays);
  og_map_set(v, "span_reads", reads);
  og_value *unread = og_value_list();
  for (size_t u = 0; u < spans.nunread; ++u) og_list_push(unread, og_value_str(spans.unread[u]));
  og_map_set(v, "span_unread", unread);

  og_map_set(v, "span_writes", writes);
  const og_expr *extent = op->launch.extents[1];
  og_map_set(v, "span_extent", og_expr_is_atom(extent) ? og_c_expr(extent) : og_value_str("opspec_n1"));
  og_map_set_bool(v, "has_span_constants", spans.hoisted_end > 0);
  if (spans.hoisted_end) {
    og_body b = op->kernel;
    char *text = og_xstrndup(op->kernel.text, spans.hoisted_end);
    b.text = text;
    og_map_set(v, "span_constants", og_spec_block(op, &b));
    free(text);
  }
  og_body b = op->kernel;
  b.text = (char *)og_buf_str(&spans.body);
  og_map_set(v, "span_body", og_spec_block(op, &b));
  og_spans_free(&spans);
}

static void og_ctx_cpu(const og_op *op, const og_op_plan *plan, og_value *v) {
  og_idents used = {0}, stored = {0}; /* type variables the code names; those only its 2-byte arrays' storage does */
  const og_body *body = og_plan_cpu_body(op);
  og_idents_scan(&used, body->text);
  bool portable = plan->cpu_portable;
  if (portable) {
    if (op->prologue.present) og_idents_scan(&used, op->prologue.text);
    for (size_t d = 1; d < op->launch.n; ++d) og_use_expr(&used, op->launch.extents[d]); /* the inner loops' */
  }
  og_value *locals = og_locals(op, &used, "opspec_args->", false, 2, plan->cpu_lowp ? &stored : NULL);
  /* opspec_reject() reads opspec_args too. */
  og_map_set_bool(v, "cpu_uses_args", og_list_len(locals) || portable || plan->rejects);
  og_map_set(v, "cpu_locals", locals);
  og_map_set_bool(v, "cpu_portable", portable);
  if (portable) og_cpu_loops(op, plan, v);
  og_map_set_bool(v, "cpu_spans", plan->cpu_spans);
  if (plan->cpu_spans) og_cpu_spans(op, plan, v);
  /* A portable kernel runs a range of its launch (opspec_cpu_range_kernel); a raw `cpu:`
   * body is a whole call (opspec_cpu_kernel). */
  og_map_set(v, "cpu_kernel_type", og_value_str(portable ? "opspec_cpu_range_kernel" : "opspec_cpu_kernel"));
  og_map_set(v, "cpu_run", og_value_str(portable ? "opspec_run_cpu_range" : "opspec_run_cpu"));

  og_value *variants = og_value_list(), *tiled_variants = og_value_list();
  size_t nvariants = plan->nvariants;
  size_t pick[OPSPEC_MAX_TYPEVARS] = {0};
  for (size_t k = 0; k < nvariants; ++k) {
    og_value *var = og_value_map(), *typedefs = og_value_list();
    og_buf fn = {0}, comment = {0};
    og_variant_picks(op, k, pick);
    og_cpu_variant_name(op, pick, &fn);
    og_buf_printf(&comment, "%s on CPU", op->name);
    bool bf16 = false, f16 = false;
    for (size_t t = 0; t < op->ntypes; ++t) {
      const char *dtype = op->types[t].choices[pick[t]];
      bf16 |= !strcmp(dtype, "bfloat16");
      f16 |= !strcmp(dtype, "float16");
      og_buf_printf(&comment, ", %s = %s", op->types[t].name, dtype);
      if (og_idents_has(&used, op->types[t].name) || og_idents_has(&stored, op->types[t].name))
        og_typevar_defines(op, t, dtype, plan->cpu_lowp, typedefs);
    }
    size_t twin[OPSPEC_MAX_TYPEVARS] = {0};
    bool tiled = plan->cpu_tiles && og_tiles_variant(op, pick, twin);
    og_map_set_bool(var, "included", !tiled);
    if (tiled) {
      og_buf twin_fn = {0};
      og_cpu_variant_name(op, twin, &twin_fn);
      og_list_push(tiled_variants,
                   og_cpu_tiled(op, &plan->tiles, pick, og_buf_str(&fn), og_buf_str(&twin_fn), og_buf_str(&comment)));
      og_buf_free(&twin_fn);
    }
    bool lowp = plan->cpu_lowp && (bf16 || f16);
    bool spanned = lowp && plan->cpu_spans && og_spans_variant(op, pick);
    if (lowp) {
      og_value *pair = og_value_map();
      og_map_set_str(pair, "name", "OPSPEC_CPU_LOWP");
      og_map_set_str(pair, "value", "1");
      og_list_push(typedefs, pair);
      if (spanned) {
        pair = og_value_map();
        og_map_set_str(pair, "name", "OPSPEC_CPU_SPANS");
        og_map_set_str(pair, "value", "1");
        og_list_push(typedefs, pair);
      }
      og_buf_puts(&comment, spanned ? ", computed in float on F16C spans of its rows (generator/plan/spans.h)."
                                    : ", computed in float, converting each element in the loop (opspec/lowp.h).");
    } else if (bf16) {
      /* No C compiler here computes in bfloat16: its arrays reach the kernel widened to
       * float by the handler (runtime/src/handler.c), and narrowed after. */
      og_buf_puts(&comment, ", computed in float: the handler widens bfloat16 arrays to float and back.");
    } else if (f16 && og_lowp_any(op)) {
      og_buf_puts(&comment, ", computed in _Float16 (the body uses an array not element-wise).");
    }
    og_map_set(var, "function", og_value_str(og_buf_str(&fn)));
    /* Only where the compute type differs from the dtype does a variant say how. */
    og_map_set(var, "comment",
               lowp || bf16 || (f16 && og_lowp_any(op)) ? og_value_str_take(og_buf_take(&comment)) : og_value_str(""));
    og_map_set(var, "defines", og_cpu_defines(og_buf_str(&fn), typedefs));
    og_value_free(typedefs);
    og_list_push(variants, var);
    og_buf_free(&fn);
    og_buf_free(&comment);
  }
  og_map_set(v, "cpu_variants", variants);
  og_map_set(v, "cpu_tiled", tiled_variants);
  /* The kernel is written once, named OPSPEC_CPU_VARIANT: the file includes itself once
   * per variant with the variant's name and types defined. A body calling erf gets no
   * x86-64-v4 form (opspec/cpu.h says why). */
  static const char *const params[] = {"const void *opspec_argp", "int64_t opspec_begin", "int64_t opspec_end"};
  og_map_set(v, "cpu_head",
             og_wrap(og_idents_has(&used, "erf") ? "OPSPEC_CPU_CLONES_NO_V4 static void OPSPEC_CPU_VARIANT("
                                                 : "OPSPEC_CPU_CLONES static void OPSPEC_CPU_VARIANT(",
                     params, portable ? 3 : 1, ") {", false));
  og_value *typevars = og_value_list();
  for (size_t t = 0; t < op->ntypes; ++t)
    if (og_idents_has(&used, op->types[t].name)) og_list_push(typevars, og_value_str(op->types[t].name));
  og_map_set(v, "cpu_typevars", typevars);
  og_value *undefs = og_value_list();
  og_map_set_bool(v, "has_lowp_body", false); /* set by og_lowp_blocks */
  og_map_set_bool(v, "has_lowp_prologue", false);
  if (plan->cpu_lowp) {
    static const char *const macros[] = {"OPSPEC_STORAGE_", "OPSPEC_LOAD_", "OPSPEC_STORE_"};
    for (size_t t = 0; t < op->ntypes; ++t) {
      const char *name = op->types[t].name;
      bool in_code = og_idents_has(&used, name), in_storage = og_idents_has(&stored, name);
      if (!in_code && in_storage) og_define_undef(undefs, "OPSPEC_CPU_", name); /* no typedef reads it */
      for (size_t m = 0; m < 3 && (in_code || in_storage) && og_lowp_typevar(&op->types[t]); ++m)
        og_define_undef(undefs, macros[m], name);
    }
    og_list_push(undefs, og_value_str("OPSPEC_CPU_LOWP"));
    if (plan->cpu_spans) og_list_push(undefs, og_value_str("OPSPEC_CPU_SPANS"));
    og_lowp_blocks(op, v);
  }
  og_map_set(v, "cpu_undefs", undefs);
  og_map_set_int(v, "nvariants", (int64_t)nvariants);
  og_idents_free(&used);
  og_idents_free(&stored);
}

/* ---- the CUDA kernels -------------------------------------------------------------- */

/* The portable kernel's indices as records, at the thread function's indentation
 * (`indents`, one level a loop): `index` {name, extent} for the last launch extent, which
 * runs along x, innermost (at `x_indent`): each thread takes OPSPEC_PORTABLE_X_PER_THREAD
 * indices a block apart and skips those past the extent; `loops` {head (og_for_head's
 * lines)} for the others, which run along z and y, where a grid has at most 65535
 * blocks (opspec_launch_portable stops there): each thread loops over every index its
 * position covers. A body has no top-level return, break or continue (spec.md), so it
 * can be a loop body. */
static void og_cuda_indices(const og_launch *launch, const char *const *indents, og_value *kernel) {
  size_t last = launch->n - 1;
  og_value *index = og_value_map(), *loops = og_value_list();
  og_map_set_str(index, "name", og_index_names[last]);
  og_map_set(index, "extent", og_c_expr(launch->extents[last]));
  og_map_set(kernel, "index", index);
  og_map_set_str(kernel, "strided", launch->n == 1 ? "" : launch->n == 2 ? "y" : "z and y");
  for (size_t d = 0; d < last; ++d) {
    og_value *loop = og_value_map();
    char axis[2] = {"xyz"[launch->n - 1 - d], '\0'};
    og_value *extent = og_c_expr(launch->extents[d]);
    og_buf begin = {0}, step = {0};
    og_buf_printf(&begin, "(int64_t)blockIdx.%s * blockDim.%s + threadIdx.%s", axis, axis, axis);
    og_buf_printf(&step, "%s += (int64_t)gridDim.%s * blockDim.%s", og_index_names[d], axis, axis);
    og_map_set(loop, "head",
               og_for_head(indents[d], og_index_names[d], og_buf_str(&begin), og_value_as_str(extent),
                           og_buf_str(&step), d + 1 == last));
    og_value_free(extent);
    og_buf_free(&begin);
    og_buf_free(&step);
    og_list_push(loops, loop);
  }
  og_map_set(kernel, "loops", loops);
  og_map_set_str(kernel, "close_indent", last ? indents[last - 1] : "");
  og_map_set_str(kernel, "x_indent", indents[last]);
}

/* One kernel as a record: `thread`, the name of the function that holds its work, whose
 * `thread_head` (og_wrap's lines) takes as parameters what the code uses (the arrays, sizes,
 * shapes, symbols and attributes; the rejection flag where a body may reject); `head`, the
 * `__global__` kernel's, whose `call` passes them; with `launch` (the portable kernel), the
 * launch indices and, where plan->cuda_batch_grid, the loop over the elements of a natively
 * batched call, which stays in the kernel; the prologue and the body: the shared body
 * include, or the spec's lines.
 *
 * The work is a function of its own because nvcc honours __restrict__ on a parameter and
 * ignores it on a local: with restrict pointers, an input loads through the read-only
 * cache and a thread's OPSPEC_PORTABLE_X_PER_THREAD loads are in flight at once. As
 * locals, each load waited for the store before it (on an H200 at 64e6 elements, relu
 * went from 0.62 to 0.92 of jnp's speed: docs/performance.md, "On a GPU"). */
static og_value *og_cuda_global(const og_op *op, const og_op_plan *plan, const char *fn, const og_body *body,
                                const og_launch *launch) {
  static const char *const indents[] = {"  ", "    ", "      ", "        "};
  og_value *kernel = og_value_map();
  og_idents used = {0};
  og_idents_scan(&used, body->text);
  bool batched = launch && plan->cuda_batch_grid;
  if (launch && op->prologue.present) og_idents_scan(&used, op->prologue.text);
  if (launch) og_use_launch(&used, launch);
  og_value *locals = og_locals(op, &used, "opspec_args.", batched, 0, NULL);
  bool rejects = plan->rejects && og_idents_has(&used, "opspec_reject");
  og_idents_free(&used);
  size_t nlocals = og_list_len(locals), nparams = nlocals + (rejects ? 1 : 0);
  char **params = og_xcalloc(nparams ? nparams : 1, sizeof *params);
  const char **values = og_xcalloc(nparams ? nparams : 1, sizeof *values);
  for (size_t i = 0; i < nlocals; ++i) {
    const og_value *l = og_list_at(locals, i);
    og_buf param = {0};
    og_buf_printf(&param, "%s%s", og_value_as_str(og_map_get(l, "type")), og_value_as_str(og_map_get(l, "name")));
    params[i] = og_buf_take(&param);
    values[i] = og_value_as_str(og_map_get(l, "value"));
  }
  if (rejects) {
    params[nlocals] = og_xstrdup("int *opspec_rejected");
    values[nlocals] = "opspec_args.opspec_rejected";
  }
  /* "template <typename T, typename U>" before a kernel of an op with type variables; the
   * call names them, "<T, U>". */
  og_value *typevars = og_value_list();
  og_buf targs = {0};
  for (size_t t = 0; t < op->ntypes; ++t) {
    og_value *tv = og_value_map();
    og_map_set_str(tv, "sep", t ? ", " : "");
    og_map_set_str(tv, "name", op->types[t].name);
    og_list_push(typevars, tv);
    og_buf_printf(&targs, "%s%s", t ? ", " : "<", op->types[t].name);
  }
  if (op->ntypes) og_buf_putc(&targs, '>');
  og_map_set(kernel, "typevars", typevars);
  og_buf thread = {0}, lead = {0}, name = {0}, args = {0}, grid = {0};
  og_buf_printf(&thread, "%s_thread", fn);
  og_map_set_str(kernel, "thread", og_buf_str(&thread));
  og_buf_printf(&lead, "static __device__ __forceinline__ void %s(", og_buf_str(&thread));
  og_map_set(kernel, "thread_head",
             og_wrap_broken("", og_buf_str(&lead), (const char *const *)params, nparams, ") {", OG_SLACK_HEAD));
  og_buf_clear(&lead);
  og_buf_printf(&lead, "%s%s(", og_buf_str(&thread), og_buf_str(&targs));
  og_map_set(kernel, "call",
             og_wrap_broken(indents[batched ? 1 : 0], og_buf_str(&lead), values, nparams, ");", OG_SLACK_CALL));
  og_buf_printf(&name, "static __global__ void %s(", fn);
  og_buf_printf(&args, "const opspec_%s_args opspec_args", op->name);
  og_buf_printf(&grid, "const opspec_batch_grid<%zu> opspec_batch", op->ninputs + op->noutputs);
  const char *const kernel_params[] = {og_buf_str(&args), og_buf_str(&grid)};
  og_map_set(kernel, "head", og_wrap(og_buf_str(&name), kernel_params, batched ? 2 : 1, ") {", false));
  for (size_t i = 0; i < nparams; ++i) free(params[i]);
  free(params);
  free(values);
  og_value_free(locals);
  og_buf_free(&thread);
  og_buf_free(&lead);
  og_buf_free(&targs);
  og_buf_free(&name);
  og_buf_free(&args);
  og_buf_free(&grid);
  og_map_set_bool(kernel, "batched", batched);
  og_map_set_bool(kernel, "batch_on_grid", batched && launch->n < 3);
  og_map_set_bool(kernel, "has_prologue", launch && op->prologue.present);
  if (launch && op->prologue.present) og_map_set(kernel, "prologue", og_spec_block(op, &op->prologue));
  og_map_set_bool(kernel, "portable", launch != NULL);
  if (launch)
    og_cuda_indices(launch, indents, kernel);
  else
    og_map_set(kernel, "loops", og_value_list());
  /* The portable body is shared with the CPU unless the CPU has a raw body of its own. */
  bool include = launch && !op->cpu.present;
  og_map_set_bool(kernel, "include_body", include);
  if (!include) og_map_set(kernel, "body", og_spec_block(op, body));
  return kernel;
}

/* "{a, b}" of a launch's extents in plain C. */
static char *og_extents_init(const og_launch *l) {
  og_buf b = {0};
  og_buf_putc(&b, '{');
  for (size_t d = 0; d < l->n; ++d) {
    og_value *e = og_c_expr(l->extents[d]);
    og_buf_printf(&b, "%s%s", d ? ", " : "", og_value_as_str(e));
    og_value_free(e);
  }
  og_buf_putc(&b, '}');
  return og_buf_take(&b);
}

/* The configuration of kernel `k` (named `name`) into opspec_config[k], as a record
 * {index, name, ndims, explicit, portable, extents, threads, grid, block, shared}: the
 * template declares the arrays and calls opspec_launch_explicit, _portable or _auto.
 * `portable` for the portable kernel, whose grid-stride loops allow a capped grid. */
static og_value *og_cuda_config(size_t k, const char *name, bool portable, const og_launch *launch,
                                const og_launch *threads, const og_launch *grid, const og_launch *block,
                                const og_expr *shared) {
  og_value *c = og_value_map();
  og_map_set_int(c, "index", (int64_t)k);
  og_map_set_str(c, "name", name);
  og_map_set_bool(c, "explicit", launch->n == 0);
  og_map_set_bool(c, "portable", portable);
  og_map_set(c, "shared", shared ? og_c_expr(shared) : og_value_str("0"));
  if (launch->n) {
    og_map_set_int(c, "ndims", (int64_t)launch->n);
    og_map_set(c, "extents", og_value_str_take(og_extents_init(launch)));
    og_map_set(c, "threads", og_value_str_take(threads->n ? og_extents_init(threads) : og_xstrdup("")));
  } else {
    og_map_set_int(c, "ndims", (int64_t)grid->n);
    og_map_set(c, "grid", og_value_str_take(og_extents_init(grid)));
    og_map_set(c, "block", og_value_str_take(og_extents_init(block)));
  }
  return c;
}

/* The names the launch expressions of the op read. */
static void og_launch_uses(const og_op *op, og_idents *used) {
  og_use_launch(used, &op->launch);
  og_use_launch(used, &op->threads);
  for (size_t k = 0; k < op->ncuda; ++k) {
    const og_cuda_kernel *kern = &op->cuda[k];
    og_use_launch(used, &kern->launch);
    og_use_launch(used, &kern->threads);
    og_use_launch(used, &kern->grid);
    og_use_launch(used, &kern->block);
    og_use_expr(used, kern->shared_mem);
  }
}

/* Each type variant's kernels in launch order, as the entries of the op's table
 * (opspec_cuda_launch.kernels): "opspec_cuda_start<opspec_<op>_<kernel><T...>>". */
static og_value *og_cuda_starts(const og_op *op, const og_op_plan *plan) {
  og_value *starts = og_value_list();
  size_t pick[OPSPEC_MAX_TYPEVARS] = {0};
  for (size_t v = 0; v < plan->nvariants; ++v) {
    og_buf targs = {0};
    og_variant_picks(op, v, pick);
    for (size_t t = 0; t < op->ntypes; ++t)
      og_buf_printf(&targs, "%s%s", t ? ", " : "<", og_dtype_ctype(op->types[t].choices[pick[t]]));
    if (op->ntypes) og_buf_putc(&targs, '>');
    for (size_t k = 0; k < (op->ncuda ? op->ncuda : 1); ++k) {
      og_buf start = {0};
      og_buf_printf(&start, "opspec_cuda_start<opspec_%s_%s%s>", op->name, op->ncuda ? op->cuda[k].name : "kernel",
                    og_buf_str(&targs));
      og_list_push(starts, og_value_str_take(og_buf_take(&start)));
    }
    og_buf_free(&targs);
  }
  return starts;
}

/* The op's launch (opspec_<op>_cuda_launch, read by opspec_cuda_launch_run in
 * runtime/src/launch.c) as a record: `configure` where the spec's launch expressions
 * set the grids and blocks (raw kernels, or the portable kernel's `threads`), with its
 * locals and configurations; `starts`, the kernels' table; `object`, og_wrap's lines of
 * the launch's initializer. */
static og_value *og_cuda_launcher(const og_op *op, const og_op_plan *plan) {
  og_value *launcher = og_value_map();
  og_idents used = {0};
  og_launch_uses(op, &used);
  og_map_set(launcher, "locals", og_locals(op, &used, "opspec_args->", false, 2, NULL));
  og_idents_free(&used);
  /* Without one, the launcher runs the portable kernel with its default threads over the
   * extents the handler computed (the same expressions, checked). */
  bool configure = op->ncuda || op->threads.n;
  og_map_set_bool(launcher, "configure", configure);
  og_value *configs = og_value_list();
  for (size_t k = 0; k < op->ncuda; ++k) {
    const og_cuda_kernel *kern = &op->cuda[k];
    og_list_push(configs, og_cuda_config(k, kern->name, false, &kern->launch, &kern->threads, &kern->grid, &kern->block,
                                         kern->shared_mem));
  }
  if (!op->ncuda) og_list_push(configs, og_cuda_config(0, "kernel", true, &op->launch, &op->threads, NULL, NULL, NULL));
  og_map_set(launcher, "configs", configs);
  og_map_set(launcher, "starts", og_cuda_starts(op, plan));

  og_buf lead = {0}, fn = {0}, counts = {0}, table = {0};
  og_buf_printf(&lead, "extern \"C\" const opspec_cuda_launch opspec_%s_cuda_launch = {", op->name);
  if (configure)
    og_buf_printf(&fn, "opspec_%s_configure", op->name);
  else
    og_buf_puts(&fn, "NULL");
  og_buf_printf(&counts, "%zu, %zu", plan->nvariants, op->ncuda ? op->ncuda : (size_t)1);
  og_buf_printf(&table, "opspec_%s_kernels", op->name);
  const char *const items[] = {og_buf_str(&fn), og_buf_str(&counts), og_buf_str(&table)};
  og_map_set(launcher, "object", og_wrap(og_buf_str(&lead), items, 3, "};", false));
  og_buf_free(&lead);
  og_buf_free(&fn);
  og_buf_free(&counts);
  og_buf_free(&table);
  return launcher;
}

/* OPSPEC_DYNAMIC_SHARED(NAME, TYPE) for each name the kernels declare `extern __shared__`,
 * once: the CUDA simulator's storage for it (opspec/cuda.h). */
typedef struct og_shared_names {
  og_idents seen;
  og_value *arrays; /* {name, type} */
} og_shared_names;

static void og_shared_found(const char *type, const char *name, void *ud) {
  og_shared_names *names = ud;
  if (og_idents_has(&names->seen, name)) return;
  og_idents_add(&names->seen, name);
  og_value *array = og_value_map();
  og_map_set_str(array, "name", name);
  og_map_set_str(array, "type", type);
  og_list_push(names->arrays, array);
}

/* The `extern __shared__` arrays of the op's raw kernels, each once. */
static og_value *og_dynamic_shared(const og_op *op) {
  og_shared_names names = {{0}, og_value_list()};
  for (size_t k = 0; k < op->ncuda; ++k) og_dynamic_shared_scan(op->cuda[k].body.text, og_shared_found, &names);
  og_idents_free(&names.seen);
  return names.arrays;
}

static void og_ctx_cuda(const og_op *op, const og_op_plan *plan, og_value *v) {
  bool has = plan->has_cuda;
  og_map_set(v, "dynamic_shared", og_dynamic_shared(op));
  og_map_set_bool(v, "has_cuda", has);
  og_map_set_bool(v, "rejects", plan->rejects);
  og_map_set_bool(v, "fastmath", plan->fastmath);
  og_value *kernels = og_value_list();
  og_buf fn = {0}, comment = {0};
  for (size_t k = 0; k < op->ncuda; ++k) {
    og_buf_clear(&fn);
    og_buf_clear(&comment);
    og_buf_printf(&fn, "opspec_%s_%s", op->name, op->cuda[k].name);
    og_buf_printf(&comment, "Kernel '%s' of %s.", op->cuda[k].name, op->name);
    og_value *kv = og_value_map();
    og_map_set(kv, "comment", og_value_str(og_buf_str(&comment)));
    og_map_set(kv, "kernel", og_cuda_global(op, plan, og_buf_str(&fn), &op->cuda[k].body, NULL));
    og_list_push(kernels, kv);
  }
  if (!op->ncuda && op->kernel.present) {
    og_buf_printf(&fn, "opspec_%s_kernel", op->name);
    og_buf_printf(&comment, "%s: each thread runs OPSPEC_PORTABLE_X_PER_THREAD launch indices a block apart along x.",
                  op->name);
    og_value *kv = og_value_map();
    og_map_set(kv, "comment", og_value_str(og_buf_str(&comment)));
    og_map_set(kv, "kernel", og_cuda_global(op, plan, og_buf_str(&fn), &op->kernel, &op->launch));
    og_list_push(kernels, kv);
  }
  og_buf_free(&fn);
  og_buf_free(&comment);
  og_map_set(v, "cuda_kernels", kernels);
  if (has) og_map_set(v, "launcher", og_cuda_launcher(op, plan));
}

void og_ctx_kernels(const og_op *op, const og_op_plan *plan, og_value *v) {
  og_map_set(v, "body", og_spec_block(op, og_plan_cpu_body(op)));
  og_map_set_bool(v, "body_shared", plan->body_shared);
  og_ctx_cpu(op, plan, v);
  og_ctx_cuda(op, plan, v);
}
