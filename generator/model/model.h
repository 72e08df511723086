/* The op model: what a spec says, validated, as plain C structs.
 *
 * The loader (load/) builds it complete: closed vocabularies as enums (their names in
 * model/vocab.c), aliases resolved to indices, shape symbols collected, every type
 * variable's binding input found. The checker (check/) then only checks, and reports;
 * after that the model is const: every planner and renderer trusts it and never
 * re-derives a fact. Every object keeps the
 * og_loc it came from so late checks can still point at the YAML.
 */
#ifndef OG_MODEL_H
#define OG_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/diag.h"
#include "model/expr.h"
#include "load/yaml_tree.h"

#include "model/dtype.h"
#include "opspec/limits.h" /* OPSPEC_MAX_*: shared with the runtime */

typedef enum og_dim_kind {
  OG_DIM_INT,      /* a fixed extent: value */
  OG_DIM_SYM,      /* a shape symbol bound by the first input that has it: name */
  OG_DIM_ELLIPSIS, /* '...': the shared group of leading dims */
  OG_DIM_EXPR,     /* outputs and scratch only: an expression over symbols and int attrs */
} og_dim_kind;

typedef struct og_dim {
  og_loc loc;
  og_dim_kind kind;
  int64_t value;
  char *name;    /* OG_DIM_SYM */
  og_expr *expr; /* OG_DIM_EXPR (also set for INT/SYM in outputs, for uniform rendering) */
  char *text;    /* the dim as written, for messages and alias comparison */
} og_dim;

/* What an input's contents must satisfy (`check:`), enforced by the CPU handler. */
typedef struct og_content_check {
  bool present;
  og_loc loc;
  og_expr *min, *max; /* inclusive bounds, or NULL */
  bool sorted;        /* non-decreasing */
  bool in_kernel;     /* the CPU body checks as it reads, calling opspec_reject() */
  og_loc in_kernel_loc;
} og_content_check;

typedef enum og_array_role { OG_INPUT, OG_OUTPUT, OG_SCRATCH } og_array_role;

typedef struct og_array {
  og_loc loc;
  og_array_role role;
  size_t index; /* position among arrays of its role */
  char *name;
  og_loc dtype_loc;
  char *dtype; /* a dtype name, or a type variable's name */
  int typevar; /* index into op->types, or -1 for a concrete dtype */
  og_dim *dims;
  size_t ndims;
  bool has_ellipsis;
  int alias_of;           /* outputs: index of the input it aliases, or -1 */
  bool aliased;           /* inputs: some output aliases it */
  og_content_check check; /* inputs only */
} og_array;

typedef struct og_typevar {
  og_loc loc;
  char *name;
  char **choices; /* dtype names */
  og_loc *choice_locs;
  size_t nchoices;
  int bound_by; /* index of the first input with this type, or -1 (an error) */
} og_typevar;

/* Attribute types: the closed vocabulary of `attrs[].type`. */
typedef enum og_attr_type {
  OG_ATTR_BOOL,
  OG_ATTR_INT32,
  OG_ATTR_INT64,
  OG_ATTR_FLOAT32,
  OG_ATTR_FLOAT64,
  OG_ATTR_NTYPES
} og_attr_type;

typedef struct og_attr_type_info {
  const char *name;    /* as a spec writes it; also the dtype of the XLA scalar */
  const char *py_type; /* the annotation in the Python stubs */
  bool integer;        /* may appear in expressions */
} og_attr_type_info;

extern const og_attr_type_info og_attr_types[OG_ATTR_NTYPES];

/* `vmap:` methods: native batching, or one of jax.ffi.ffi_call's, as an override. */
typedef enum og_vmap {
  OG_VMAP_NATIVE, /* the default: one call runs the whole batch (opspec/batch.h) */
  OG_VMAP_NONE,
  OG_VMAP_SEQUENTIAL,
  OG_VMAP_SEQUENTIAL_UNROLLED,
  OG_VMAP_EXPAND_DIMS,
  OG_VMAP_BROADCAST_ALL,
  OG_VMAP_NMETHODS
} og_vmap;

extern const char *const og_vmap_names[OG_VMAP_NMETHODS];

/* `derivatives:` (docs/gradients.md): how one input's tangent moves the outputs. */
/* OG_DERIV_LINEAR (`linear: halo`): linear in the input, a stencil along its `halo:`
 * symbols: the JVP is the op on the tangent and the transpose is derived from the op
 * itself (runtime/python/opspec/_halo_transpose.py); no formula. */
typedef enum og_deriv_kind {
  OG_DERIV_ELEMENTWISE,
  OG_DERIV_JVP,
  OG_DERIV_TRANSPOSE,
  OG_DERIV_LINEAR,
  OG_DERIV_NKINDS
} og_deriv_kind;

extern const char *const og_deriv_kind_names[OG_DERIV_NKINDS];

typedef struct og_formula {
  og_loc loc;
  int output;        /* elementwise, jvp: the output it is about; transpose: -1 */
  char *text;        /* a Python expression */
  char **names;      /* the names it reads, sorted, once each: the generated lambda's parameters */
  og_loc *name_locs; /* where each first appears */
  size_t nnames;
} og_formula;

/* A name `let:` gives a sub-expression of the derivative formulas (docs/gradients.md):
 * formulas after it, and later lets, read it by name. */
typedef struct og_let {
  char *name;
  og_loc loc;
  og_formula formula;
} og_let;

/* One side of a `require:` condition: an integer expression over shape symbols, integer
 * attributes and inputs' NAME_size (a bare name may also be a float attribute), or a
 * floating-point literal. */
typedef struct og_require_side {
  og_expr *expr;
  char *number; /* the literal as written, when expr is NULL */
} og_require_side;

/* `require:` (docs/spec.md): a condition every call must meet, `lhs cmp rhs`. */
typedef struct og_require {
  og_loc loc;
  char *text;  /* as written, for messages */
  char cmp[3]; /* "==", "!=", "<", "<=", ">", ">=" */
  og_require_side lhs, rhs;
} og_require;

typedef struct og_derivative {
  og_loc loc;
  int input; /* index into op->inputs */
  og_deriv_kind kind;
  og_formula *formulas;
  size_t nformulas;
} og_derivative;

/* `reduce:` (docs/spec.md): how the outputs of shards split along a contracted symbol
 * combine, which lets a sharding rule keep that symbol sharded. */
typedef enum og_reduce_how { OG_REDUCE_SUM, OG_REDUCE_MAX, OG_REDUCE_MIN, OG_REDUCE_NHOWS } og_reduce_how;

extern const char *const og_reduce_names[OG_REDUCE_NHOWS];

/* Appends `names` as a loader's message lists what it expected: "a, b, c", the last one
 * after `last_sep` (", " or " or "), so the message and the table cannot drift. */
void og_vocab_list(og_buf *out, const char *const *names, size_t n, const char *last_sep);

typedef struct og_reduction {
  og_loc loc;
  char *symbol; /* a shape symbol of the inputs, or "..." for the '...' group */
  og_reduce_how how;
} og_reduction;

/* `independent:` (docs/spec.md): a symbol ("..." for the group) along which each output
 * element depends only on the inputs at its own position, which lets a sharding rule
 * keep that dim split across devices. Only the spec's author knows it: shapes cannot. */
typedef struct og_independent {
  og_loc loc;
  char *symbol;
} og_independent;

/* `halo:` (docs/spec.md): a symbol along which each output element reads the inputs
 * within `lo` positions before it and `hi` after it, which lets a sharding rule keep that
 * dim split and exchange only the edges (runtime/python/opspec/_halo.py). */
typedef struct og_halo {
  og_loc loc; /* the symbol's key */
  char *symbol;
  int64_t lo, hi;
} og_halo;

typedef struct og_attr {
  og_loc loc;
  char *name;
  bool has_type; /* false only after an error */
  og_attr_type type;
  bool has_default;
  char *default_py; /* the default as a Python literal */
  char *doc;
} og_attr;

typedef struct og_body {
  og_loc loc;  /* the YAML scalar */
  int line;    /* first content line, for #line */
  char *text;  /* "" if absent */
  int indent;  /* columns the YAML block indents it by (4 for one-line bodies) */
  bool quoted; /* a one-line body in quotes: its text starts a column past loc */
  bool present;
} og_body;

typedef struct og_launch {
  og_loc loc;
  og_expr *extents[3];
  size_t n; /* 0: absent */
} og_launch;

/* One raw `__global__` kernel of a `cuda:` section. */
typedef struct og_cuda_kernel {
  og_loc loc;
  char *name;
  og_launch launch;
  og_launch grid, block; /* explicit configuration (n == 0 when absent) */
  og_launch threads;     /* threads_per_block with launch (n == 0: defaults) */
  og_expr *shared_mem;   /* bytes of dynamic shared memory, or NULL */
  og_body body;
} og_cuda_kernel;

typedef struct og_op {
  og_source *src;
  og_ynode *tree;
  og_loc loc;
  char *name;
  char *doc;
  og_typevar *types;
  size_t ntypes;
  og_array *inputs, *outputs, *scratch;
  size_t ninputs, noutputs, nscratch;
  og_attr *attrs;
  size_t nattrs;
  char **symbols; /* shape symbols in order of first appearance in the inputs */
  size_t nsymbols;
  og_vmap vmap;
  og_launch launch;     /* portable launch extents */
  og_launch threads;    /* threads_per_block for the portable kernel on GPU */
  og_expr *bytes;       /* `bytes:`, memory traffic of a call, or NULL */
  og_expr *flops;       /* `flops:`, arithmetic of a call, or NULL */
  og_body prologue;     /* portable kernel: run once per call (per thread in CUDA) before the loop */
  bool fastmath;        /* `fastmath: true`: the CPU kernels may reassociate (opspec/cpu.h) */
  og_body kernel;       /* portable body, run once per launch index */
  og_body cpu;          /* raw CPU function body */
  og_cuda_kernel *cuda; /* raw CUDA kernels, run in order */
  size_t ncuda;
  og_derivative *derivs; /* `derivatives:` */
  size_t nderivs;
  og_let *lets; /* `derivatives: let:`, in the spec's order */
  size_t nlets;
  og_require *require; /* `require:`, in the spec's order */
  size_t nrequire;
  og_reduction *reduce; /* `reduce:`, in the spec's order */
  size_t nreduce;
  og_independent *independent; /* `independent:`, in the spec's order */
  size_t nindependent;
  og_halo *halo; /* `halo:`, in the spec's order */
  size_t nhalo;
} og_op;

void og_op_free(og_op *op);

/* The queries every stage asks (model/model.c). */
const og_attr *og_op_attr(const og_op *op, const char *name);
const og_array *og_op_array(const og_op *op, const char *name);
int og_op_symbol(const og_op *op, const char *name); /* index or -1 */
/* Whether some input's check is `in_kernel`: the op's args then carry the flag that
 * opspec_reject() sets. */
bool og_op_rejects(const og_op *op);
/* Number of type-variable specializations (product of the choice counts). */
size_t og_op_nvariants(const og_op *op);
/* Whether every dtype array `a` may take (its dtype, or each choice of its type
 * variable) `holds`: og_dtype_is_integer, og_dtype_is_float. */
bool og_array_dtypes_all(const og_op *op, const og_array *a, bool (*holds)(og_dtype));

/* Where `line` (from 0) and `col` (from 1) of a body's text are in the YAML. */
og_loc og_body_loc(const og_body *b, int line, int col);

#endif /* OG_MODEL_H */
