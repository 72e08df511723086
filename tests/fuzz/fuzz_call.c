/* libFuzzer target: a call frame built from the input, run through a shipped op's CPU
 * handler (the registry of generated/, linked with the runtime). docs/fuzzing.md.
 *
 * What XLA decides is taken from the input: which op, the stage, the counts and kinds
 * of arguments and results, every buffer's dtype, rank and dims, the attributes (names,
 * kinds, dtypes, values: `opspec_batch` and `opspec_kernel` included), outputs pointed
 * at an input's memory (aliases, declared or not), and the buffers' contents, so content
 * checks, in_kernel checks and the kernels themselves run on whatever the input holds.
 * What XLA guarantees is kept, as a real frame would: every buffer is allocated with the
 * bytes its dtype and dims say (dims 0..9, at most 4096 elements), and an attribute's
 * value has the size its dtype and length say. Each buffer is its own allocation, so
 * ASan sees a write one byte past it.
 *
 * Besides what the sanitizers catch, the harness aborts when a handler breaks a promise:
 * an error that does not start with "opspec <op>: " (every failure names the op).
 * OPSPEC_FUZZ_VERBOSE=1 prints each call's outcome: "ran", or the handler's error.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_call_ops.h" /* FUZZ_OPS(X, SKIP): every op, built or left out (tests/fuzz/CMakeLists.txt) */
#include "opspec/cpu.h"
#include "opspec/ffi.h"

/* The ops' CPU handlers (generated/ops/<op>_ffi.c), and what registry.c would define. */
#define FUZZ_DECLARE(op) XLA_FFI_Error *opspec_##op##_cpu(XLA_FFI_CallFrame *cf);
#define FUZZ_NOTHING(op)
FUZZ_OPS(FUZZ_DECLARE, FUZZ_NOTHING)
/* In spec order, the ops left out of this build too (NULL: the input is skipped), so an
 * input's first byte names the same op in every build. */
#define FUZZ_ENTRY(op)   {#op, opspec_##op##_cpu},
#define FUZZ_SKIPPED(op) {#op, NULL},
static const struct {
  const char *name;
  XLA_FFI_Handler *cpu;
} fuzz_ops[] = {FUZZ_OPS(FUZZ_ENTRY, FUZZ_SKIPPED)};
#define FUZZ_NOPS (sizeof fuzz_ops / sizeof fuzz_ops[0])
const char opspec_package_name[] = "opspec";

#define FUZZ_MAX_BUFFERS  (OPSPEC_MAX_INPUTS + 2)
#define FUZZ_MAX_ATTRS    8
#define FUZZ_MAX_RANK     10 /* past OPSPEC_MAX_RANK */
#define FUZZ_MAX_ELEMENTS 4096

/* ---- the input, read from the front; past its end, zeros ---------------------------- */

typedef struct fuzz_input {
  const uint8_t *data;
  size_t size, at;
} fuzz_input;

static uint8_t fuzz_byte(fuzz_input *in) { return in->at < in->size ? in->data[in->at++] : 0; }

static void fuzz_bytes(fuzz_input *in, void *out, size_t n) {
  size_t have = in->at < in->size ? in->size - in->at : 0;
  if (have > n) have = n;
  memcpy(out, in->data + in->at, have);
  memset((char *)out + have, 0, n - have);
  in->at += have;
}

/* A copy of `text` (C11 has no strdup); never NULL. */
static char *fuzz_copy(const char *text) {
  size_t n = strlen(text) + 1;
  char *copy = malloc(n);
  if (!copy) abort();
  return memcpy(copy, text, n);
}

/* ---- the XLA side: errors ---------------------------------------------------------- */

struct XLA_FFI_Error {
  XLA_FFI_Error_Code code;
  char *message;
};

static const char *fuzz_op_name; /* the op being called: every error must name it */

static XLA_FFI_Error *fuzz_error_create(XLA_FFI_Error_Create_Args *args) {
  char prefix[96];
  snprintf(prefix, sizeof prefix, "opspec %s: ", fuzz_op_name);
  if (!args->message || strncmp(args->message, prefix, strlen(prefix)) != 0) {
    fprintf(stderr, "fuzz_call: an error that does not name the op %s: %s\n", fuzz_op_name,
            args->message ? args->message : "(null)");
    abort();
  }
  XLA_FFI_Error *err = malloc(sizeof *err);
  if (!err) abort();
  err->code = args->errc;
  err->message = fuzz_copy(args->message);
  return err;
}

static void fuzz_error_message(opspec_ffi_error_message_args *args) { args->message = args->error->message; }

static void fuzz_error_destroy(XLA_FFI_Error_Destroy_Args *args) {
  free(args->error->message);
  free(args->error);
}

static XLA_FFI_Api fuzz_api;

static void fuzz_setup(void) {
  fuzz_api.struct_size = sizeof fuzz_api;
  fuzz_api.api_version.major_version = XLA_FFI_API_MAJOR;
  fuzz_api.api_version.minor_version = XLA_FFI_API_MINOR;
  fuzz_api.XLA_FFI_Error_Create = fuzz_error_create;
  fuzz_api.OPSPEC_FFI_ERROR_MESSAGE = fuzz_error_message;
  fuzz_api.XLA_FFI_Error_Destroy = fuzz_error_destroy;
  /* One thread: the handlers' parallel loops are tested by test_parallel and the Python
   * suite; here every input runs the same way each time. */
  opspec_set_parallel_threshold(INT64_MAX);
}

/* ---- the frame ---------------------------------------------------------------------- */

/* The dtypes a buffer or an attribute may claim: every one opspec knows, and a few it does
 * not (S4, TOKEN, an unknown code). */
static const XLA_FFI_DataType fuzz_dtypes[] = {
    XLA_FFI_DataType_F32, XLA_FFI_DataType_F64,  XLA_FFI_DataType_S32,   XLA_FFI_DataType_S64,
    XLA_FFI_DataType_F16, XLA_FFI_DataType_BF16, XLA_FFI_DataType_S8,    XLA_FFI_DataType_U8,
    XLA_FFI_DataType_S16, XLA_FFI_DataType_U16,  XLA_FFI_DataType_U32,   XLA_FFI_DataType_PRED,
    XLA_FFI_DataType_U64, XLA_FFI_DataType_S4,   XLA_FFI_DataType_TOKEN, (XLA_FFI_DataType)99,
};
#define FUZZ_NDTYPES (sizeof fuzz_dtypes / sizeof fuzz_dtypes[0])

/* Bytes of one element: opspec's size, 1 for what opspec does not know. */
static size_t fuzz_elem_size(XLA_FFI_DataType dtype) {
  size_t size = opspec_dtype_size((int32_t)dtype);
  return size ? size : 1;
}

typedef struct fuzz_frame {
  XLA_FFI_CallFrame cf;
  XLA_FFI_Buffer buffers[FUZZ_MAX_BUFFERS];
  int64_t dims[FUZZ_MAX_BUFFERS][FUZZ_MAX_RANK];
  void *owned[FUZZ_MAX_BUFFERS]; /* NULL where a result points at an input's memory */
  XLA_FFI_ArgType arg_types[FUZZ_MAX_BUFFERS];
  XLA_FFI_RetType ret_types[FUZZ_MAX_BUFFERS];
  void *args[FUZZ_MAX_BUFFERS], *rets[FUZZ_MAX_BUFFERS];
  /* Attributes: each value lives in its own allocation, of exactly its size. */
  XLA_FFI_AttrType attr_types[FUZZ_MAX_ATTRS];
  XLA_FFI_ByteSpan name_spans[FUZZ_MAX_ATTRS], *names[FUZZ_MAX_ATTRS];
  void *attrs[FUZZ_MAX_ATTRS];
  XLA_FFI_Scalar scalars[FUZZ_MAX_ATTRS];
  XLA_FFI_Array arrays[FUZZ_MAX_ATTRS];
  XLA_FFI_ByteSpan strings[FUZZ_MAX_ATTRS];
  XLA_FFI_Attrs dict; /* an empty dictionary */
  void *values[FUZZ_MAX_ATTRS];
  char *name_text[FUZZ_MAX_ATTRS];
} fuzz_frame;

/* One buffer, dims and contents from the input: at most FUZZ_MAX_ELEMENTS elements. */
static void fuzz_buffer(fuzz_input *in, fuzz_frame *f, int b) {
  XLA_FFI_Buffer *buf = &f->buffers[b];
  memset(buf, 0, sizeof *buf);
  buf->struct_size = sizeof *buf;
  buf->dtype = fuzz_dtypes[fuzz_byte(in) % FUZZ_NDTYPES];
  buf->rank = fuzz_byte(in) % (FUZZ_MAX_RANK + 1);
  buf->dims = f->dims[b];
  int64_t count = 1;
  for (int64_t d = 0; d < buf->rank; ++d) {
    int64_t extent = fuzz_byte(in) % 10;
    if (count * extent > FUZZ_MAX_ELEMENTS) extent = 1;
    f->dims[b][d] = extent;
    count *= extent;
  }
  size_t bytes = (size_t)count * fuzz_elem_size(buf->dtype);
  f->owned[b] = malloc(bytes ? bytes : 1); /* XLA's pointer for an empty buffer is valid too */
  if (!f->owned[b]) abort();
  fuzz_bytes(in, f->owned[b], bytes);
  buf->data = f->owned[b];
}

/* The reserved names and every shipped op's attribute names. */
static const char *const fuzz_special_names[] = {"opspec_batch", "opspec_kernel", "n",     "alpha", "slope",
                                                 "a_minus",      "a_plus",        "w_max", "w_min", "zzz"};
#define FUZZ_NSPECIAL (sizeof fuzz_special_names / sizeof fuzz_special_names[0])

/* One attribute: a name (one of the op's or a reserved one, mostly), a kind, a value. */
static void fuzz_attr(fuzz_input *in, fuzz_frame *f, int a) {
  uint8_t pick = fuzz_byte(in);
  const char *name = fuzz_special_names[pick % FUZZ_NSPECIAL];
  f->name_text[a] = fuzz_copy(name);
  f->name_spans[a] = (XLA_FFI_ByteSpan){f->name_text[a], strlen(name)};
  f->names[a] = &f->name_spans[a];
  uint8_t kind = fuzz_byte(in);
  XLA_FFI_DataType dtype = fuzz_dtypes[fuzz_byte(in) % FUZZ_NDTYPES];
  switch (kind % 4) {
    case 0: { /* a scalar */
      f->values[a] = malloc(fuzz_elem_size(dtype));
      if (!f->values[a]) abort();
      fuzz_bytes(in, f->values[a], fuzz_elem_size(dtype));
      f->scalars[a] = (XLA_FFI_Scalar){dtype, f->values[a]};
      f->attr_types[a] = XLA_FFI_AttrType_SCALAR;
      f->attrs[a] = &f->scalars[a];
      break;
    }
    case 1: { /* an array: opspec_batch's [rank, masks...] when int64, small values */
      size_t n = fuzz_byte(in) % 12, elem = fuzz_elem_size(dtype);
      f->values[a] = malloc(n * elem ? n * elem : 1);
      if (!f->values[a]) abort();
      if (dtype == XLA_FFI_DataType_S64)
        for (size_t i = 0; i < n; ++i) {
          int8_t v = (int8_t)fuzz_byte(in); /* -128..127: ranks, masks, and the odd bad one */
          ((int64_t *)f->values[a])[i] = v == -128 ? INT64_MIN : v;
        }
      else
        fuzz_bytes(in, f->values[a], n * elem);
      f->arrays[a] = (XLA_FFI_Array){dtype, n, f->values[a]};
      f->attr_types[a] = XLA_FFI_AttrType_ARRAY;
      f->attrs[a] = &f->arrays[a];
      break;
    }
    case 2: { /* a string: opspec_kernel's fingerprint, or anything */
      size_t n = fuzz_byte(in) % 24;
      f->values[a] = malloc(n ? n : 1);
      if (!f->values[a]) abort();
      fuzz_bytes(in, f->values[a], n);
      f->strings[a] = (XLA_FFI_ByteSpan){f->values[a], n};
      f->attr_types[a] = XLA_FFI_AttrType_STRING;
      f->attrs[a] = &f->strings[a];
      break;
    }
    default:
      f->attr_types[a] = XLA_FFI_AttrType_DICTIONARY;
      f->attrs[a] = &f->dict;
      break;
  }
}

/* The frame: counts, buffers, aliases, attributes. */
static void fuzz_frame_make(fuzz_input *in, fuzz_frame *f) {
  memset(f, 0, sizeof *f);
  uint8_t flags = fuzz_byte(in);
  int nargs = fuzz_byte(in) % (FUZZ_MAX_BUFFERS / 2 + 1);
  int nrets = fuzz_byte(in) % 5;
  f->cf.struct_size = sizeof f->cf;
  f->cf.api = &fuzz_api;
  f->cf.stage = (flags & 0xf) == 0xf ? XLA_FFI_ExecutionStage_PREPARE : XLA_FFI_ExecutionStage_EXECUTE;
  f->dict.struct_size = sizeof f->dict;
  for (int i = 0; i < nargs; ++i) {
    fuzz_buffer(in, f, i);
    f->arg_types[i] = XLA_FFI_ArgType_BUFFER;
    f->args[i] = &f->buffers[i];
  }
  for (int r = 0; r < nrets; ++r) {
    int b = nargs + r;
    uint8_t alias = fuzz_byte(in);
    fuzz_buffer(in, f, b);
    if (nargs && alias % 4 == 0) {
      /* The result is an input's buffer, as XLA aliases one (input_output_aliases, which
       * the spec may or may not declare): the same memory, dtype and dims. */
      int from = (alias >> 2) % nargs;
      free(f->owned[b]);
      f->owned[b] = NULL;
      f->buffers[b].data = f->buffers[from].data;
      f->buffers[b].dtype = f->buffers[from].dtype;
      f->buffers[b].rank = f->buffers[from].rank;
      memcpy(f->dims[b], f->dims[from], sizeof f->dims[b]);
    }
    f->ret_types[r] = (XLA_FFI_RetType)XLA_FFI_RetType_BUFFER;
    f->rets[r] = &f->buffers[b];
  }
  int nattrs = fuzz_byte(in) % (FUZZ_MAX_ATTRS + 1);
  for (int a = 0; a < nattrs; ++a) fuzz_attr(in, f, a);
  f->cf.args = (XLA_FFI_Args){sizeof(XLA_FFI_Args), NULL, nargs, f->arg_types, f->args};
  f->cf.rets = (XLA_FFI_Rets){sizeof(XLA_FFI_Rets), NULL, nrets, f->ret_types, f->rets};
  f->cf.attrs = (XLA_FFI_Attrs){sizeof(XLA_FFI_Attrs), NULL, nattrs, f->attr_types, f->names, f->attrs};
}

static void fuzz_frame_free(fuzz_frame *f) {
  for (int b = 0; b < FUZZ_MAX_BUFFERS; ++b) free(f->owned[b]);
  for (int a = 0; a < FUZZ_MAX_ATTRS; ++a) {
    free(f->values[a]);
    free(f->name_text[a]);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int ready, verbose;
  if (!ready) {
    fuzz_setup();
    verbose = getenv("OPSPEC_FUZZ_VERBOSE") != NULL;
    ready = 1;
  }
  fuzz_input in = {data, size, 0};
  const uint8_t which = fuzz_byte(&in);
  if (!fuzz_ops[which % FUZZ_NOPS].cpu) return 0;
  fuzz_op_name = fuzz_ops[which % FUZZ_NOPS].name;
  /* Checks on or off, by the input's second byte: with opspec.set_checks(False) no scan
   * runs before the body, and what checks off promise (docs/spec.md: garbage or a
   * rejection, never an access out of bounds) is for the bodies to keep, which ASan
   * sees here. in_kernel checks run either way. */
  opspec_set_checks((fuzz_byte(&in) & 1) == 0);
  static fuzz_frame frame; /* large: not on the stack */
  fuzz_frame_make(&in, &frame);
  XLA_FFI_Error *err = fuzz_ops[which % FUZZ_NOPS].cpu(&frame.cf);
  if (verbose) printf("%s\n", err ? err->message : "ran");
  if (err) {
    XLA_FFI_Error_Destroy_Args args = {XLA_FFI_Error_Destroy_Args_STRUCT_SIZE, NULL, err};
    fuzz_error_destroy(&args);
  }
  fuzz_frame_free(&frame);
  return 0;
}
