/* The limits of opspec, in one place.
 *
 * The generator rejects a spec that exceeds one (with a file:line:col error that names
 * the limit), and the runtime sizes its fixed tables from the same numbers, so a spec
 * the generator accepts always fits the runtime. docs/spec.md ("Limits") lists them.
 */
#ifndef OPSPEC_LIMITS_H
#define OPSPEC_LIMITS_H

/* Dims of one array. Shapes travel by value into CUDA kernels in fixed arrays. */
#define OPSPEC_MAX_RANK 8
/* Type variables, shape symbols and attributes of one op: the handler binds them into
 * fixed tables (opspec_bound in opspec/ffi.h). */
#define OPSPEC_MAX_TYPEVARS 4
#define OPSPEC_MAX_SYMBOLS  32
#define OPSPEC_MAX_ATTRS    32
/* Arrays of one op. Far above any real op; they bound the generated code's size. */
#define OPSPEC_MAX_INPUTS  64
#define OPSPEC_MAX_OUTPUTS 64
#define OPSPEC_MAX_SCRATCH 16
/* Batch dims of one native-batched call: nested jax.vmap levels (opspec/ffi.h,
 * opspec_batch). */
#define OPSPEC_MAX_BATCH_RANK 8
/* Kernels of one `cuda:` section. */
#define OPSPEC_MAX_CUDA_KERNELS 16
/* Characters of a name (op, array, attribute, symbol, type variable, kernel). An op's
 * name becomes file names (`<op>_cuda.cu`), which must fit every file system. */
#define OPSPEC_MAX_NAME 64
/* Shape expressions: terms and operators, and nesting (parentheses, calls, unary
 * minus). Python's parser recurses once per operator of a flat `n + n + ...`. */
#define OPSPEC_MAX_EXPR_NODES 128
#define OPSPEC_MAX_EXPR_DEPTH 32

#endif /* OPSPEC_LIMITS_H */
