/* Checking and binding for generated handlers; see opspec/ffi.h. */
#include "opspec/ffi.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "opspec/dtypes.h"

const char *opspec_dtype_name(int32_t dtype) {
  switch (dtype) {
#define OPSPEC_DTYPE_CASE(name, ctype, cutype, xla, np) \
  case xla:                                             \
    return #name;
    OPSPEC_DTYPES(OPSPEC_DTYPE_CASE)
#undef OPSPEC_DTYPE_CASE
    default:
      return NULL;
  }
}

size_t opspec_dtype_size(int32_t dtype) {
  switch (dtype) {
#define OPSPEC_DTYPE_SIZE(name, ctype, cutype, xla, np) \
  case xla:                                             \
    return sizeof(ctype);
    OPSPEC_DTYPES(OPSPEC_DTYPE_SIZE)
#undef OPSPEC_DTYPE_SIZE
    default:
      return 0;
  }
}

/* Formats a dtype for messages; unsupported dtypes show their XLA code. */
static const char *opspec_dtype_label(int32_t dtype, char *buf, size_t n) {
  const char *name = opspec_dtype_name(dtype);
  if (name) return name;
  snprintf(buf, n, "unsupported dtype (XLA code %d)", (int)dtype);
  return buf;
}

XLA_FFI_Error *opspec_error(XLA_FFI_CallFrame *cf, XLA_FFI_Error_Code code, const char *op, const char *fmt, ...) {
  char message[1024];
  int n = snprintf(message, sizeof message, "opspec %s: ", op);
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

bool opspec_metadata_query(XLA_FFI_CallFrame *cf, XLA_FFI_Handler_Traits traits) {
  for (XLA_FFI_Extension_Base *ext = cf->extension_start; ext; ext = ext->next) {
    if (ext->type != XLA_FFI_Extension_Metadata) continue;
    XLA_FFI_Metadata *md = ((XLA_FFI_Metadata_Extension *)ext)->metadata;
    md->api_version.major_version = XLA_FFI_API_MAJOR;
    md->api_version.minor_version = XLA_FFI_API_MINOR;
    md->traits = traits;
    return true;
  }
  return false;
}

/* Compact "[2, 3]" rendering of a buffer's dims for messages. */
static void opspec_dims_label(const XLA_FFI_Buffer *buf, char *out, size_t n) {
  size_t used = (size_t)snprintf(out, n, "[");
  for (int64_t d = 0; d < buf->rank && used < n; ++d)
    used += (size_t)snprintf(out + used, n - used, "%s%lld", d ? ", " : "", (long long)buf->dims[d]);
  if (used < n) snprintf(out + used, n - used, "]");
}

/* Checks one buffer against its description: dtype, rank, each dim. Inputs bind what
 * is not bound yet (type variables, symbols, the '...' group); outputs only compare. */
static XLA_FFI_Error *opspec_check_buffer(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, opspec_bound *b,
                                          const char *role, const opspec_array_desc *a, const XLA_FFI_Buffer *buf,
                                          bool is_input, const int64_t *extents) {
  char got[64], want[64], shape[160];
  if (buf == NULL) return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name, "%s '%s' is missing", role, a->name);
  int32_t want_dtype = a->dtype;
  if (a->dtype < 0) {
    int32_t t = -1 - a->dtype;
    const opspec_typevar_desc *tv = &op->types[t];
    if (b->dtypes[t] < 0) {
      for (int32_t c = 0; c < tv->nchoices && b->dtypes[t] < 0; ++c)
        if (tv->choices[c] == (int32_t)buf->dtype) b->dtypes[t] = tv->choices[c];
      if (b->dtypes[t] < 0) {
        size_t used = 0;
        for (int32_t c = 0; c < tv->nchoices && used < sizeof want; ++c)
          used += (size_t)snprintf(want + used, sizeof want - used, "%s%s", c ? " or " : "", opspec_dtype_name(tv->choices[c]));
        return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name, "%s '%s': expected dtype %s (type %s), got %s", role,
                            a->name, want, tv->name, opspec_dtype_label((int32_t)buf->dtype, got, sizeof got));
      }
    }
    want_dtype = b->dtypes[t];
  }
  if ((int32_t)buf->dtype != want_dtype)
    return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name, "%s '%s': expected dtype %s, got %s", role, a->name,
                        opspec_dtype_label(want_dtype, want, sizeof want), opspec_dtype_label((int32_t)buf->dtype, got, sizeof got));

  bool ellipsis = a->ndims > 0 && a->dims[0].kind == OPSPEC_DIM_ELLIPSIS;
  int64_t fixed = ellipsis ? a->ndims - 1 : a->ndims;
  opspec_dims_label(buf, shape, sizeof shape);
  if (buf->rank > OPSPEC_MAX_RANK || (ellipsis ? buf->rank < fixed : buf->rank != fixed))
    return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name, "%s '%s': expected rank %s%lld, got shape %s", role,
                        a->name, ellipsis ? "at least " : "", (long long)fixed, shape);
  int64_t lead = buf->rank - fixed; /* dims matched by '...' */
  if (ellipsis) {
    if (b->ellipsis_rank < 0 && is_input) {
      b->ellipsis_rank = (int32_t)lead;
      memcpy(b->ellipsis, buf->dims, (size_t)lead * sizeof *buf->dims);
    } else if (b->ellipsis_rank != lead || memcmp(b->ellipsis, buf->dims, (size_t)lead * sizeof *buf->dims) != 0) {
      return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name,
                          "%s '%s': leading dims ('...') of shape %s differ from those of the first input with '...'", role, a->name,
                          shape);
    }
  }
  for (int64_t d = ellipsis ? 1 : 0; d < a->ndims; ++d) {
    const opspec_dim *dim = &a->dims[d];
    int64_t axis = lead + d - (ellipsis ? 1 : 0); /* the buffer's own axis number */
    int64_t got_extent = buf->dims[axis];
    int64_t want_extent;
    const char *sym = NULL;
    switch (dim->kind) {
      case OPSPEC_DIM_FIXED:
        want_extent = dim->value;
        break;
      case OPSPEC_DIM_SYM:
        sym = op->symbols[dim->value];
        if (b->symbols[dim->value] < 0) b->symbols[dim->value] = got_extent;
        want_extent = b->symbols[dim->value];
        break;
      case OPSPEC_DIM_EXPR:
        want_extent = extents[dim->value];
        break;
      default:
        return opspec_error(cf, XLA_FFI_Error_Code_INTERNAL, op->name, "%s '%s': bad dim description", role, a->name);
    }
    if (got_extent != want_extent) {
      if (sym)
        return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name, "%s '%s': dim %lld (%s) is %lld, but %s = %lld (shape %s)",
                            role, a->name, (long long)axis, sym, (long long)got_extent, sym, (long long)want_extent, shape);
      return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name, "%s '%s': dim %lld should be %lld, got %lld (shape %s)",
                          role, a->name, (long long)axis, (long long)want_extent, (long long)got_extent, shape);
    }
  }
  return NULL;
}

XLA_FFI_Error *opspec_bind_inputs(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, opspec_bound *b) {
  if (cf->stage != XLA_FFI_ExecutionStage_EXECUTE)
    return opspec_error(cf, XLA_FFI_Error_Code_UNIMPLEMENTED, op->name, "only the execute stage is implemented, got stage %d",
                        (int)cf->stage);
  if (cf->args.size != op->ninputs || cf->rets.size != op->noutputs)
    return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name, "expected %d inputs and %d outputs, got %lld and %lld",
                        (int)op->ninputs, (int)op->noutputs, (long long)cf->args.size, (long long)cf->rets.size);
  memset(b, 0, sizeof *b);
  for (int32_t t = 0; t < OPSPEC_MAX_TYPEVARS; ++t) b->dtypes[t] = -1;
  for (int32_t s = 0; s < OPSPEC_MAX_SYMBOLS; ++s) b->symbols[s] = -1;
  b->ellipsis_rank = -1;

  for (int32_t i = 0; i < op->ninputs; ++i) {
    if (cf->args.types[i] != XLA_FFI_ArgType_BUFFER)
      return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name, "input '%s' is not a buffer", op->inputs[i].name);
    XLA_FFI_Error *err = opspec_check_buffer(cf, op, b, "input", &op->inputs[i], cf->args.args[i], true, NULL);
    if (err) return err;
  }
  for (int32_t t = 0; t < op->ntypes; ++t) {
    int32_t choice = 0;
    while (choice < op->types[t].nchoices && op->types[t].choices[choice] != b->dtypes[t]) ++choice;
    b->variant = b->variant * op->types[t].nchoices + choice;
  }

  /* Attributes come sorted by name, as the table is: compare one for one. */
  if (cf->attrs.size != op->nattrs)
    return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name, "expected %d attributes, got %lld", (int)op->nattrs,
                        (long long)cf->attrs.size);
  for (int32_t i = 0; i < op->nattrs; ++i) {
    const XLA_FFI_ByteSpan *name = cf->attrs.names[i];
    const opspec_attr_desc *want = &op->attrs[i];
    if (strlen(want->name) != name->len || memcmp(want->name, name->ptr, name->len) != 0)
      return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name, "unexpected attribute '%.*s' (expected '%s')",
                          (int)name->len, name->ptr, want->name);
    char got[64];
    if (cf->attrs.types[i] != XLA_FFI_AttrType_SCALAR)
      return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name, "attribute '%s' must be a %s scalar", want->name,
                          opspec_dtype_name(want->dtype));
    const XLA_FFI_Scalar *s = cf->attrs.attrs[i];
    if ((int32_t)s->dtype != want->dtype)
      return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name, "attribute '%s': expected %s, got %s", want->name,
                          opspec_dtype_name(want->dtype), opspec_dtype_label((int32_t)s->dtype, got, sizeof got));
    b->attrs[i] = s->value;
  }
  return NULL;
}

XLA_FFI_Error *opspec_check_outputs(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, const opspec_bound *b,
                                    const int64_t *extents) {
  opspec_bound scratch = *b; /* outputs never bind: checking works on a copy */
  for (int32_t i = 0; i < op->noutputs; ++i) {
    if (cf->rets.types[i] != XLA_FFI_RetType_BUFFER)
      return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name, "output '%s' is not a buffer", op->outputs[i].name);
    XLA_FFI_Error *err = opspec_check_buffer(cf, op, &scratch, "output", &op->outputs[i], cf->rets.rets[i], false, extents);
    if (err) return err;
  }
  return NULL;
}

static void *opspec_view(const XLA_FFI_Buffer *buf, int64_t *size, int64_t *shape) {
  int64_t n = 1;
  for (int64_t d = 0; d < OPSPEC_MAX_RANK; ++d) {
    shape[d] = d < buf->rank ? buf->dims[d] : 1;
    if (d < buf->rank) n *= buf->dims[d];
  }
  *size = n;
  return buf->data;
}

void *opspec_arg(XLA_FFI_CallFrame *cf, int64_t index, int64_t *size, int64_t *shape) {
  return opspec_view(cf->args.args[index], size, shape);
}

void *opspec_ret(XLA_FFI_CallFrame *cf, int64_t index, int64_t *size, int64_t *shape) {
  return opspec_view(cf->rets.rets[index], size, shape);
}
