/* Checking and binding for generated handlers; see opspec/ffi.h. */
#include "opspec/ffi.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opspec/dtypes.h"
#include "opspec/registry.h"

const char *opspec_dtype_name(int32_t dtype) {
  switch (dtype) {
#define OPSPEC_DTYPE_CASE(name, ctype, cutype, xla, np, integer) \
  case xla:                                                      \
    return #name;
    OPSPEC_DTYPES(OPSPEC_DTYPE_CASE)
#undef OPSPEC_DTYPE_CASE
    default:
      return NULL;
  }
}

size_t opspec_dtype_size(int32_t dtype) {
  switch (dtype) {
#define OPSPEC_DTYPE_SIZE(name, ctype, cutype, xla, np, integer) \
  case xla:                                                      \
    return sizeof(ctype);
    OPSPEC_DTYPES(OPSPEC_DTYPE_SIZE)
#undef OPSPEC_DTYPE_SIZE
    default:
      return 0;
  }
}

const char *opspec_dtype_label(int32_t dtype, char *buf, size_t n) {
  const char *name = opspec_dtype_name(dtype);
  if (name) return name;
  snprintf(buf, n, "unsupported dtype (XLA code %d)", (int)dtype);
  return buf;
}

XLA_FFI_Error *opspec_error(XLA_FFI_CallFrame *cf, XLA_FFI_Error_Code code, const char *op, const char *fmt, ...) {
  char message[2048];
  /* "<package> <op>: ": the package the op belongs to (opspec's own, or a user's). */
  int n = snprintf(message, sizeof message, "%s %s: ", opspec_package_name, op);
  if (n < 0 || (size_t)n >= sizeof message) n = 0; /* an absurd op name: keep the message */
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(message + n, sizeof message - (size_t)n, fmt, ap);
  va_end(ap);
  XLA_FFI_Error_Create_Args args;
  memset(&args, 0, sizeof args);
  args.struct_size = XLA_FFI_Error_Create_Args_STRUCT_SIZE;
  args.message = message; /* XLA copies it */
  args.errc = code;
  return cf->api->XLA_FFI_Error_Create(&args);
}

void opspec_drop_error(XLA_FFI_CallFrame *cf, XLA_FFI_Error *err) {
  XLA_FFI_Error_Destroy_Args args;
  memset(&args, 0, sizeof args);
  args.struct_size = XLA_FFI_Error_Destroy_Args_STRUCT_SIZE;
  args.error = err;
  cf->api->XLA_FFI_Error_Destroy(&args);
}

XLA_FFI_Error *opspec_reword_error(XLA_FFI_CallFrame *cf, XLA_FFI_Error *err, XLA_FFI_Error_Code code, const char *op,
                                   const char *what) {
  opspec_ffi_error_message_args args;
  memset(&args, 0, sizeof args);
  args.struct_size = OPSPEC_FFI_ERROR_MESSAGE_ARGS_SIZE;
  args.error = err;
  cf->api->OPSPEC_FFI_ERROR_MESSAGE(&args);
  /* The message belongs to `err`: format ours before destroying it. */
  XLA_FFI_Error *ours = opspec_error(cf, code, op, "%s: %s", what, args.message ? args.message : "(no message)");
  opspec_drop_error(cf, err);
  return ours;
}

bool opspec_metadata_query(XLA_FFI_CallFrame *cf, XLA_FFI_Handler_Traits traits) {
  for (opspec_ffi_extension *ext = cf->extension_start; ext; ext = ext->next) {
    if (ext->type != XLA_FFI_Extension_Metadata) continue;
    XLA_FFI_Metadata *md = ((XLA_FFI_Metadata_Extension *)ext)->metadata;
    /* The version the handlers need, not the header's: see OPSPEC_FFI_API_MINOR. */
    md->api_version.major_version = OPSPEC_FFI_API_MAJOR;
    md->api_version.minor_version = OPSPEC_FFI_API_MINOR;
    md->traits = traits;
    return true;
  }
  return false;
}

/* Compact "[2, 3]" rendering of a buffer's dims for messages. Only error paths call
 * it: formatting costs more than the checks themselves. */
static const char *opspec_dims_label(const XLA_FFI_Buffer *buf, char *out, size_t n) {
  size_t used = (size_t)snprintf(out, n, "[");
  for (int64_t d = 0; d < buf->rank && used < n; ++d)
    used += (size_t)snprintf(out + used, n - used, "%s%lld", d ? ", " : "", (long long)buf->dims[d]);
  if (used < n) snprintf(out + used, n - used, "]");
  return out;
}

/* The shape an array's description asks for, "[rows, cols]" or "[..., 3]", with an
 * output's computed dims as numbers. For messages. */
static const char *opspec_desc_label(const opspec_op_desc *op, const opspec_array_desc *a, const int64_t *extents,
                                     char *out, size_t n) {
  size_t used = (size_t)snprintf(out, n, "[");
  for (int32_t d = 0; d < a->ndims && used < n; ++d) {
    const char *sep = d ? ", " : "";
    const opspec_dim *dim = &a->dims[d];
    if (dim->kind == OPSPEC_DIM_SYM)
      used += (size_t)snprintf(out + used, n - used, "%s%s", sep, op->symbols[dim->value].name);
    else if (dim->kind == OPSPEC_DIM_ELLIPSIS)
      used += (size_t)snprintf(out + used, n - used, "%s...", sep);
    else
      used += (size_t)snprintf(out + used, n - used, "%s%lld", sep,
                               (long long)(dim->kind == OPSPEC_DIM_EXPR && extents ? extents[dim->value] : dim->value));
  }
  if (used < n) snprintf(out + used, n - used, "]");
  return out;
}

/* "x, y" for a list of array descriptions; "none" if empty. */
static const char *opspec_names_label(const opspec_array_desc *a, int32_t count, char *out, size_t n) {
  size_t used = 0;
  out[0] = '\0';
  for (int32_t i = 0; i < count && used < n; ++i)
    used += (size_t)snprintf(out + used, n - used, "%s%s", i ? ", " : "", a[i].name);
  if (count == 0) snprintf(out, n, "none");
  return out;
}

/* Whether two short dim lists are equal (a loop: libc's memcmp costs a call per buffer). */
static bool opspec_dims_equal(const int64_t *a, const int64_t *b, int64_t n) {
  for (int64_t d = 0; d < n; ++d)
    if (a[d] != b[d]) return false;
  return true;
}

/* The error paths of opspec_check_buffer, out of line (OPSPEC_COLD): each formats its
 * message in its own buffers, so the check that runs on every call keeps a small frame
 * and no formatting code between its branches, and is inlined into its two callers
 * (OPSPEC_INLINE; called once per buffer, it was a quarter of the call path). */
#if defined(__GNUC__) || defined(__clang__)
#define OPSPEC_COLD   __attribute__((cold, noinline))
#define OPSPEC_INLINE __attribute__((always_inline)) inline
#else
#define OPSPEC_COLD
#define OPSPEC_INLINE inline
#endif

/* No choice of type variable `tv` matches the buffer's dtype. */
static OPSPEC_COLD XLA_FFI_Error *opspec_no_dtype_choice(XLA_FFI_CallFrame *cf, const opspec_op_desc *op,
                                                         const char *role, const opspec_array_desc *a,
                                                         const opspec_typevar_desc *tv, const XLA_FFI_Buffer *buf) {
  char want[64], got[64];
  size_t used = 0;
  want[0] = '\0';
  for (int32_t c = 0; c < tv->nchoices && used < sizeof want; ++c)
    used +=
        (size_t)snprintf(want + used, sizeof want - used, "%s%s", c ? " or " : "", opspec_dtype_name(tv->choices[c]));
  return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name, "%s '%s': expected dtype %s (type %s), got %s",
                      role, a->name, want, tv->name, opspec_dtype_label((int32_t)buf->dtype, got, sizeof got));
}

/* The buffer's dtype is not `want`: a fixed dtype (tv NULL), or type variable `tv` as
 * input `from` bound it. */
static OPSPEC_COLD XLA_FFI_Error *opspec_wrong_dtype(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, const char *role,
                                                     const opspec_array_desc *a, int32_t want_dtype,
                                                     const opspec_typevar_desc *tv, const char *from,
                                                     const XLA_FFI_Buffer *buf) {
  char want[64], got[64];
  if (tv)
    return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name,
                        "%s '%s': expected dtype %s (type %s, as input '%s'), got %s", role, a->name,
                        opspec_dtype_label(want_dtype, want, sizeof want), tv->name, from,
                        opspec_dtype_label((int32_t)buf->dtype, got, sizeof got));
  return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name, "%s '%s': expected dtype %s, got %s", role,
                      a->name, opspec_dtype_label(want_dtype, want, sizeof want),
                      opspec_dtype_label((int32_t)buf->dtype, got, sizeof got));
}

static OPSPEC_COLD XLA_FFI_Error *opspec_wrong_rank(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, const char *role,
                                                    const opspec_array_desc *a, bool ellipsis, int64_t fixed,
                                                    const int64_t *extents, const XLA_FFI_Buffer *buf) {
  char shape[160], spec[160];
  return opspec_error(
      cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name, "%s '%s': expected rank %s%lld (shape %s), got shape %s", role,
      a->name, ellipsis ? "at least " : "", (long long)fixed, opspec_desc_label(op, a, extents, spec, sizeof spec),
      opspec_dims_label(buf, shape, sizeof shape));
}

static OPSPEC_COLD XLA_FFI_Error *opspec_wrong_leading_dims(XLA_FFI_CallFrame *cf, const opspec_op_desc *op,
                                                            const char *role, const opspec_array_desc *a,
                                                            const XLA_FFI_Buffer *buf) {
  char shape[160];
  return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name,
                      "%s '%s': leading dims ('...') of shape %s differ from those of the first input with '...'", role,
                      a->name, opspec_dims_label(buf, shape, sizeof shape));
}

/* Dim `axis` is `got`, not `want` (which symbol `sym` holds, if not NULL). */
static OPSPEC_COLD XLA_FFI_Error *opspec_wrong_dim(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, const char *role,
                                                   const opspec_array_desc *a, int64_t axis, const char *sym,
                                                   int64_t got, int64_t want, const XLA_FFI_Buffer *buf) {
  char shape[160];
  opspec_dims_label(buf, shape, sizeof shape);
  if (sym)
    return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name,
                        "%s '%s': dim %lld (%s) is %lld, but %s = %lld (shape %s)", role, a->name, (long long)axis, sym,
                        (long long)got, sym, (long long)want, shape);
  return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name,
                      "%s '%s': dim %lld should be %lld, got %lld (shape %s)", role, a->name, (long long)axis,
                      (long long)want, (long long)got, shape);
}

/* The dtype part of opspec_check_buffer: a type variable an input meets unbound is bound
 * to the buffer's dtype (if one of its choices). */
static OPSPEC_INLINE XLA_FFI_Error *opspec_bind_dtype(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, opspec_bound *b,
                                                      const char *role, const opspec_array_desc *a,
                                                      const XLA_FFI_Buffer *buf, bool is_input) {
  int32_t want_dtype = a->dtype;
  if (a->dtype < 0) {
    int32_t t = -1 - a->dtype;
    const opspec_typevar_desc *tv = &op->types[t];
    want_dtype = b->dtypes[t];
    if (want_dtype < 0) {
      /* Unbound (every variable is bound by an input in specs opspec-gen accepts, so
       * only hand-made tables get here for an output): any choice. */
      for (int32_t c = 0; c < tv->nchoices && want_dtype < 0; ++c)
        if (tv->choices[c] == (int32_t)buf->dtype) want_dtype = tv->choices[c];
      if (want_dtype < 0) return opspec_no_dtype_choice(cf, op, role, a, tv, buf);
      if (is_input) {
        b->dtypes[t] = want_dtype;
        b->dtype_from[t] = (int32_t)(a - op->inputs);
      }
    }
    if ((int32_t)buf->dtype != want_dtype && b->dtype_from[t] >= 0)
      return opspec_wrong_dtype(cf, op, role, a, want_dtype, tv, op->inputs[b->dtype_from[t]].name, buf);
  }
  if ((int32_t)buf->dtype != want_dtype) return opspec_wrong_dtype(cf, op, role, a, want_dtype, NULL, NULL, buf);
  return NULL;
}

/* The extent dim `dim` asks for, where the buffer has `got`: a fixed one, a symbol's (an
 * input binds one it meets unbound; an output takes any extent for it), or an output's
 * computed one. Sets *sym to the symbol's name, for the message. False for a bad kind. */
static OPSPEC_INLINE bool opspec_bind_extent(const opspec_op_desc *op, opspec_bound *b, const opspec_dim *dim,
                                             int64_t got, bool is_input, const int64_t *extents, int64_t *want,
                                             const char **sym) {
  switch (dim->kind) {
    case OPSPEC_DIM_FIXED:
      *want = dim->value;
      return true;
    case OPSPEC_DIM_SYM:
      *sym = op->symbols[dim->value].name;
      if (b->symbols_bound >> dim->value & 1u) {
        *want = b->symbols[dim->value];
      } else {
        *want = got;
        if (is_input) {
          b->symbols[dim->value] = got;
          b->symbols_bound |= 1u << dim->value;
        }
      }
      return true;
    case OPSPEC_DIM_EXPR:
      *want = extents[dim->value];
      return true;
    default:
      return false;
  }
}

/* Checks one buffer against its description: dtype, rank, each dim. Inputs bind what
 * is not bound yet (type variables, symbols, the '...' group) into `b`; outputs only
 * compare, and never write to `b` (pass `is_input` false with a `b` that must stay as
 * it is). This runs on every call: the errors are formatted out of line, above. */
static OPSPEC_INLINE XLA_FFI_Error *opspec_check_buffer(XLA_FFI_CallFrame *cf, const opspec_op_desc *op,
                                                        opspec_bound *b, const char *role, const opspec_array_desc *a,
                                                        const XLA_FFI_Buffer *buf, bool is_input,
                                                        const int64_t *extents) {
  if (buf == NULL)
    return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name, "%s '%s' is missing", role, a->name);
  XLA_FFI_Error *err = opspec_bind_dtype(cf, op, b, role, a, buf, is_input);
  if (err) return err;
  bool ellipsis = a->ndims > 0 && a->dims[0].kind == OPSPEC_DIM_ELLIPSIS;
  int64_t fixed = ellipsis ? a->ndims - 1 : a->ndims;
  if (buf->rank > OPSPEC_MAX_RANK || (ellipsis ? buf->rank < fixed : buf->rank != fixed))
    return opspec_wrong_rank(cf, op, role, a, ellipsis, fixed, extents, buf);
  int64_t lead = buf->rank - fixed; /* dims matched by '...' */
  if (ellipsis) {
    if (b->ellipsis_rank < 0 && is_input) {
      b->ellipsis_rank = (int32_t)lead;
      for (int64_t d = 0; d < lead; ++d) b->ellipsis[d] = buf->dims[d];
    } else if (b->ellipsis_rank != lead || !opspec_dims_equal(b->ellipsis, buf->dims, lead)) {
      return opspec_wrong_leading_dims(cf, op, role, a, buf);
    }
  }
  for (int64_t d = ellipsis ? 1 : 0; d < a->ndims; ++d) {
    int64_t axis = lead + d - (ellipsis ? 1 : 0); /* the buffer's own axis number */
    int64_t got = buf->dims[axis], want = 0;
    const char *sym = NULL;
    if (!opspec_bind_extent(op, b, &a->dims[d], got, is_input, extents, &want, &sym))
      return opspec_error(cf, XLA_FFI_Error_Code_INTERNAL, op->name, "%s '%s': bad dim description", role, a->name);
    /* An output's dim that names a symbol reads as any other expected extent. */
    if (got != want) return opspec_wrong_dim(cf, op, role, a, axis, is_input ? sym : NULL, got, want, buf);
  }
  return NULL;
}

/* Whether `name` spells the NUL-terminated `want`, byte for byte. A loop that stops at
 * the first difference or at want's end: an op's attribute names are a few bytes, for
 * which strlen and memcmp were two library calls per attribute per call. */
static bool opspec_name_is(const XLA_FFI_ByteSpan *name, const char *want) {
  const char *got = name->ptr;
  for (size_t k = 0; k < name->len; ++k)
    if (want[k] == '\0' || want[k] != got[k]) return false;
  return want[name->len] == '\0'; /* read only where want[0..len) has no NUL */
}

/* Appends to a message being built in buf[n]; stops quietly when it is full. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 4, 5)))
#endif
static void
opspec_append(char *buf, size_t n, size_t *used, const char *fmt, ...) {
  if (*used >= n) return;
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(buf + *used, n - *used, fmt, ap);
  va_end(ap);
  *used = k < 0 ? n : *used + (size_t)k;
}

/* The attribute in which a call records the fingerprint of the op's generated code. */
#define OPSPEC_KERNEL_ATTR "opspec_kernel"

/* Whether `name` is opspec_kernel: a compare of constant size, which the compiler
 * inlines (it runs for every attribute of every call). */
static bool opspec_is_kernel_attr(const XLA_FFI_ByteSpan *name) {
  return name->len == sizeof OPSPEC_KERNEL_ATTR - 1 &&
         memcmp(name->ptr, OPSPEC_KERNEL_ATTR, sizeof OPSPEC_KERNEL_ATTR - 1) == 0;
}

/* A call compiled, or exported, for other generated code than this build's (an edited
 * body, prologue or kernel) would silently run the new code: refused, naming the op.
 * A call without a fingerprint (an export from an opspec without them, or a record
 * made by hand) is not checked, nor is an op built without one. */
static XLA_FFI_Error *opspec_check_fingerprint(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, int64_t k) {
  if (cf->attrs.types[k] != XLA_FFI_AttrType_STRING)
    return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name,
                        "attribute '" OPSPEC_KERNEL_ATTR "': expected a string, got %s",
                        cf->attrs.types[k] == XLA_FFI_AttrType_SCALAR ? "a scalar" : "another kind of value");
  const XLA_FFI_ByteSpan *got = cf->attrs.attrs[k];
  /* strlen and memcmp: for 16 bytes two library calls cost less than a byte loop. */
  if (!op->fingerprint || !op->fingerprint[0] ||
      (strlen(op->fingerprint) == got->len && memcmp(op->fingerprint, got->ptr, got->len) == 0))
    return NULL;
  return opspec_error(cf, XLA_FFI_Error_Code_FAILED_PRECONDITION, op->name,
                      "the kernel changed: this call of %s.ops.%s was exported (or compiled) for its generated code "
                      "with fingerprint %.*s, but this build's is %s (its body, prologue or kernels differ). "
                      "Export the computation again with this build, or call it with the build it was exported from",
                      opspec_package_name, op->name, (int)(got->len > 64 ? 64 : got->len), got->ptr, op->fingerprint);
}

static bool opspec_call_has_attr(XLA_FFI_CallFrame *cf, const char *name) {
  for (int64_t j = 0; j < cf->attrs.size; ++j)
    if (opspec_name_is(cf->attrs.names[j], name)) return true;
  return false;
}

static bool opspec_op_has_attr(const opspec_op_desc *op, const XLA_FFI_ByteSpan *name) {
  for (int32_t i = 0; i < op->nattrs; ++i)
    if (opspec_name_is(name, op->attrs[i].name)) return true;
  return false;
}

/* The call's attributes do not match the table one for one: names every missing and
 * every unexpected attribute, and what the op takes. */
static XLA_FFI_Error *opspec_attr_mismatch(XLA_FFI_CallFrame *cf, const opspec_op_desc *op) {
  char missing[768] = "", unexpected[768] = "", expected[768];
  size_t missing_used = 0, unexpected_used = 0;
  int missing_count = 0, unexpected_count = 0;
  for (int32_t i = 0; i < op->nattrs; ++i)
    if (!opspec_call_has_attr(cf, op->attrs[i].name))
      opspec_append(missing, sizeof missing, &missing_used, "%s'%s' (%s)", missing_count++ ? ", " : "",
                    op->attrs[i].name, opspec_dtype_name(op->attrs[i].dtype));
  for (int64_t j = 0; j < cf->attrs.size; ++j)
    if (!opspec_op_has_attr(op, cf->attrs.names[j]) && !opspec_is_kernel_attr(cf->attrs.names[j]))
      opspec_append(unexpected, sizeof unexpected, &unexpected_used, "%s'%.*s'", unexpected_count++ ? ", " : "",
                    (int)cf->attrs.names[j]->len, cf->attrs.names[j]->ptr);
  size_t used = 0;
  expected[0] = '\0';
  for (int32_t i = 0; i < op->nattrs; ++i)
    opspec_append(expected, sizeof expected, &used, "%s%s (%s)", i ? ", " : "", op->attrs[i].name,
                  opspec_dtype_name(op->attrs[i].dtype));
  const XLA_FFI_Error_Code code = XLA_FFI_Error_Code_INVALID_ARGUMENT;
  if (missing_count && unexpected_count)
    return opspec_error(cf, code, op->name,
                        "missing attribute%s %s; unexpected attribute%s %s (expected attributes: %s)",
                        missing_count > 1 ? "s" : "", missing, unexpected_count > 1 ? "s" : "", unexpected, expected);
  if (missing_count)
    return opspec_error(cf, code, op->name, "missing attribute%s %s", missing_count > 1 ? "s" : "", missing);
  if (unexpected_count)
    return opspec_error(cf, code, op->name, "unexpected attribute%s %s (expected %s%s)",
                        unexpected_count > 1 ? "s" : "", unexpected, op->nattrs ? "attributes: " : "no attributes",
                        expected);
  /* Every name known and none missing, yet no one-for-one match: a name given twice. */
  return opspec_error(cf, code, op->name, "expected attributes %s, got %lld attributes", expected,
                      (long long)cf->attrs.size);
}

static const char *opspec_attr_type_label(XLA_FFI_AttrType type) {
  switch (type) {
    case XLA_FFI_AttrType_ARRAY:
      return "an array";
    case XLA_FFI_AttrType_DICTIONARY:
      return "a dictionary";
    case XLA_FFI_AttrType_STRING:
      return "a string";
    default:
      return "a value that is not a scalar";
  }
}

/* One pass over the call's attributes: the first opspec_kernel (*kernel, or -1), and for
 * each of the op's attributes, in table order, the call's (`at`). XLA passes attributes
 * sorted by name, as the table is, so a good call matches one for one once
 * opspec_kernel, which the op's table does not hold, is skipped by its name. False
 * where they do not match; *kernel is found either way, since a changed kernel is
 * reported before a mismatch. */
static bool opspec_match_attrs(const XLA_FFI_CallFrame *cf, const opspec_op_desc *op, int64_t *at, int64_t *kernel) {
  int32_t i = 0;
  bool match = true;
  *kernel = -1;
  for (int64_t j = 0; j < cf->attrs.size; ++j) {
    const XLA_FFI_ByteSpan *name = cf->attrs.names[j];
    if (opspec_is_kernel_attr(name)) {
      if (*kernel < 0) *kernel = j;
    } else if (match && i < op->nattrs && opspec_name_is(name, op->attrs[i].name)) {
      at[i++] = j;
    } else {
      match = false;
    }
  }
  return match && i == op->nattrs;
}

/* Checks the fingerprint, if the call has one, then binds the op's attributes: each a
 * scalar of its dtype. A call whose names do not match is reported by name. */
static XLA_FFI_Error *opspec_bind_attrs(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, opspec_bound *b) {
  int64_t at[OPSPEC_MAX_ATTRS], kernel;
  /* at[] has room: the loader caps nattrs at OPSPEC_MAX_ATTRS. */
  const bool match = opspec_match_attrs(cf, op, at, &kernel);
  XLA_FFI_Error *err = kernel >= 0 ? opspec_check_fingerprint(cf, op, kernel) : NULL;
  if (err) return err;
  if (!match) return opspec_attr_mismatch(cf, op);
  for (int32_t i = 0; i < op->nattrs; ++i) {
    const opspec_attr_desc *want = &op->attrs[i];
    const int64_t j = at[i];
    char got[64];
    if (cf->attrs.types[j] != XLA_FFI_AttrType_SCALAR)
      return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name,
                          "attribute '%s': expected a %s scalar, got %s", want->name, opspec_dtype_name(want->dtype),
                          opspec_attr_type_label(cf->attrs.types[j]));
    const XLA_FFI_Scalar *s = cf->attrs.attrs[j];
    if ((int32_t)s->dtype != want->dtype)
      return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name, "attribute '%s': expected %s, got %s",
                          want->name, opspec_dtype_name(want->dtype),
                          opspec_dtype_label((int32_t)s->dtype, got, sizeof got));
    b->attrs[i] = s->value;
  }
  return NULL;
}

XLA_FFI_Error *opspec_bind_inputs(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, opspec_bound *b) {
  if (cf->stage != XLA_FFI_ExecutionStage_EXECUTE)
    return opspec_error(cf, XLA_FFI_Error_Code_UNIMPLEMENTED, op->name,
                        "only the execute stage is implemented, got stage %d", (int)cf->stage);
  if (cf->args.size != op->ninputs || cf->rets.size != op->noutputs) {
    char inputs[512], outputs[512];
    return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name,
                        "expected %d inputs and %d outputs, got %lld and %lld (inputs: %s; outputs: %s)",
                        (int)op->ninputs, (int)op->noutputs, (long long)cf->args.size, (long long)cf->rets.size,
                        opspec_names_label(op->inputs, op->ninputs, inputs, sizeof inputs),
                        opspec_names_label(op->outputs, op->noutputs, outputs, sizeof outputs));
  }
  /* Only what says what is bound is initialised, with constant-size stores: clearing
   * the whole struct (~700 bytes), or loops over the op's counts (which GCC turns into
   * memset calls), cost more per call than the checks. */
  _Static_assert(OPSPEC_MAX_SYMBOLS <= 32, "symbols_bound has one bit per symbol");
  b->variant = 0;
  for (int32_t t = 0; t < OPSPEC_MAX_TYPEVARS; ++t) b->dtypes[t] = b->dtype_from[t] = -1;
  b->symbols_bound = 0;
  b->ellipsis_rank = -1;

  for (int32_t i = 0; i < op->ninputs; ++i) {
    if (cf->args.types[i] != XLA_FFI_ArgType_BUFFER)
      return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name, "input '%s' is not a buffer",
                          op->inputs[i].name);
    XLA_FFI_Error *err = opspec_check_buffer(cf, op, b, "input", &op->inputs[i], cf->args.args[i], true, NULL);
    if (err) return err;
  }
  for (int32_t t = 0; t < op->ntypes; ++t) {
    int32_t choice = 0;
    while (choice < op->types[t].nchoices && op->types[t].choices[choice] != b->dtypes[t]) ++choice;
    b->variant = b->variant * op->types[t].nchoices + choice;
  }

  return opspec_bind_attrs(cf, op, b);
}

XLA_FFI_Error *opspec_check_outputs(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, const opspec_bound *b,
                                    const int64_t *extents) {
  /* Outputs never bind (is_input false: opspec_check_buffer leaves `b` as it is), so no
   * copy of the bindings is needed. */
  opspec_bound *unchanged = (opspec_bound *)b;
  for (int32_t i = 0; i < op->noutputs; ++i) {
    if (cf->rets.types[i] != XLA_FFI_RetType_BUFFER)
      return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name, "output '%s' is not a buffer",
                          op->outputs[i].name);
    XLA_FFI_Error *err =
        opspec_check_buffer(cf, op, unchanged, "output", &op->outputs[i], cf->rets.rets[i], false, extents);
    if (err) return err;
  }
  return NULL;
}

int32_t opspec_arg_dtype(XLA_FFI_CallFrame *cf, int64_t index) {
  return (int32_t)((const XLA_FFI_Buffer *)cf->args.args[index])->dtype;
}

/* ---- sizes ------------------------------------------------------------------------- */

XLA_FFI_Error *opspec_check_sizes(XLA_FFI_CallFrame *cf, const char *op, const opspec_size_check *checks, int32_t n) {
  for (int32_t i = 0; i < n; ++i) {
    const opspec_size_check *c = &checks[i];
    if (c->value == OPSPEC_SIZE_INVALID)
      return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op, "%s = '%s' divides by zero or overflows int64",
                          c->what, c->text);
    if (c->value < c->min)
      return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op, "%s = '%s' is %lld, expected at least %lld",
                          c->what, c->text, (long long)c->value, (long long)c->min);
  }
  return NULL;
}

XLA_FFI_Error *opspec_buffer_bytes(XLA_FFI_CallFrame *cf, const char *op, const char *role, const char *name,
                                   int64_t count, size_t elem_size, size_t *bytes) {
  *bytes = 0;
  if (count == OPSPEC_SIZE_INVALID)
    return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op,
                        "%s '%s': its element count (the product of its dims) overflows int64", role, name);
  if (count < 0)
    return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op,
                        "%s '%s': element count is %lld, expected at least 0", role, name, (long long)count);
  /* PTRDIFF_MAX, not SIZE_MAX: no object can be larger, and pointer differences inside
   * the buffer must not overflow either. */
  if ((uint64_t)count > (uint64_t)PTRDIFF_MAX / (elem_size ? elem_size : 1))
    return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op,
                        "%s '%s': %lld elements of %zu bytes overflow the address space", role, name, (long long)count,
                        elem_size);
  *bytes = (size_t)count * elem_size;
  return NULL;
}

XLA_FFI_Error *opspec_host_alloc(XLA_FFI_CallFrame *cf, const char *op, const char *name, size_t bytes, void **ptr) {
  *ptr = malloc(bytes ? bytes : 1);
  if (!*ptr)
    return opspec_error(cf, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, op, "cannot allocate %zu bytes for scratch '%s'",
                        bytes, name);
  return NULL;
}

/* ---- overlapping buffers ----------------------------------------------------------- */

/* Whether a buffer has no elements (XLA may give empty buffers any address, shared). */
static bool opspec_buffer_empty(const XLA_FFI_Buffer *buf) {
  for (int64_t d = 0; d < buf->rank; ++d)
    if (buf->dims[d] <= 0) return true;
  return false;
}

/* Output `o` is input `i`'s memory: refused, unless the spec lets it alias that input or
 * either buffer is empty. Out of the per-call path: it only runs on a match. */
static OPSPEC_COLD XLA_FFI_Error *opspec_shared_buffer(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, int32_t o,
                                                       int32_t i) {
  if ((op->aliases && op->aliases[o] == i) || opspec_buffer_empty(cf->rets.rets[o]) ||
      opspec_buffer_empty(cf->args.args[i]))
    return NULL;
  return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name,
                      "output '%s' shares memory with input '%s', and the spec declares no alias between them "
                      "(the kernel would overwrite its own input: an ffi_call with input_output_aliases the spec "
                      "lacks?)",
                      op->outputs[o].name, op->inputs[i].name);
}

/* XLA aliases whole buffers of one shape and dtype (input_output_aliases): an output it
 * aliases to an input starts at that input's address, and no other overlap can be made
 * (every other buffer is live during the call, so has memory of its own). Comparing
 * addresses is the whole test: a few compares per call. */
XLA_FFI_Error *opspec_check_overlap(XLA_FFI_CallFrame *cf, const opspec_op_desc *op) {
  for (int32_t o = 0; o < op->noutputs; ++o) {
    const void *out = ((const XLA_FFI_Buffer *)cf->rets.rets[o])->data;
    for (int32_t i = 0; i < op->ninputs; ++i)
      if (((const XLA_FFI_Buffer *)cf->args.args[i])->data == out) {
        XLA_FFI_Error *err = opspec_shared_buffer(cf, op, o, i);
        if (err) return err;
      }
  }
  return NULL;
}
