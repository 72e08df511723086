/* Math of T's precision in kernel bodies (docs/spec.md, "Math in bodies").
 *
 * A body writes exp(v), log, log1p, tanh, erf, pow, sqrt, fabs, fmin, fmax on a T value and
 * gets the function of T's precision, as C++'s overloads give CUDA kernels:
 *
 *   T = float (and the float kernels of bfloat16 ops)   expf, logf, ...
 *   T = float16 (_Float16)                              the float function
 *   T = double, and any other argument                  exp, log, ... (as in plain C)
 *
 * In C (the CPU kernels) the names become type-generic macros, as <tgmath.h> makes them,
 * but over opspec's dtypes: glibc has no _Float16 functions, which <tgmath.h> would call.
 * Written after every system header, so that only kernel code sees the macros.
 *
 * Vector forms: with OPSPEC_LIBMVEC (set by the build where glibc's vector math library
 * is linked and the compiler is GCC), expf/tanhf/erff/powf and the double exp/log/tanh/pow
 * are declared `simd`, so that a loop calling them vectorises into calls of libmvec's
 * 4/8/16-lane functions (_ZGVbN4v_expf, ... for SSE, AVX2, AVX-512). The float log and
 * log1p are opspec's own inline functions (opspec/vmath.h): libmvec's logf is 3.9 ulp
 * where XLA:CPU's budget is 1. sqrt and fabs are instructions (the build passes
 * -fno-math-errno); fmin and fmax are a compare and a select here, which vectorise where
 * the libm calls do not. The double log1p and erf stay glibc's scalar functions.
 * Accuracy of each, measured over every float32: docs/performance.md, "Math functions".
 */
#ifndef OPSPEC_MATH_H
#define OPSPEC_MATH_H

#include <math.h>

#include "opspec/dtypes.h"

#if !defined(__cplusplus)

#include "opspec/lowp.h"
#include "opspec/vmath.h"

#if defined(OPSPEC_LIBMVEC) && defined(__GNUC__) && !defined(__clang__)
/* Redeclarations of glibc's functions with the attribute glibc itself gives them only
 * under -ffast-math (bits/math-vector.h): the vector forms exist in libmvec either way. */
#define OPSPEC_SIMD_DECL __attribute__((simd("notinbranch")))
float expf(float) OPSPEC_SIMD_DECL;
float tanhf(float) OPSPEC_SIMD_DECL;
float erff(float) OPSPEC_SIMD_DECL;
float powf(float, float) OPSPEC_SIMD_DECL;
double exp(double) OPSPEC_SIMD_DECL;
double log(double) OPSPEC_SIMD_DECL;
double tanh(double) OPSPEC_SIMD_DECL;
double pow(double, double) OPSPEC_SIMD_DECL;
#undef OPSPEC_SIMD_DECL
#endif

/* fmin/fmax with C's NaN rule (a NaN argument yields the other one) as a compare and a
 * select: GCC calls libm's fminf per element otherwise. Which zero fmin(-0.0, +0.0)
 * returns is unspecified in C, as here. */
static inline float opspec_fminf(float a, float b) { return (a < b || b != b) ? a : b; }
static inline float opspec_fmaxf(float a, float b) { return (a > b || b != b) ? a : b; }
static inline double opspec_fmin(double a, double b) { return (a < b || b != b) ? a : b; }
static inline double opspec_fmax(double a, double b) { return (a > b || b != b) ? a : b; }

/* One argument: float and float16 take the float function; the rest C's double one. */
#define OPSPEC_TG1(x, name) \
  _Generic((x), float : name##f, opspec_float16 : name##f, long double : name##l, default : name)(x)
/* Two arguments: the type their sum has, as C's usual arithmetic conversions give it. */
#define OPSPEC_TG2(x, y, ff, fd, fl) \
  _Generic((x) + (y), float : ff, opspec_float16 : ff, long double : fl, default : fd)(x, y)

/* The same with opspec's own float function (opspec/vmath.h). */
#define OPSPEC_TG1_OWN(x, name) \
  _Generic((x), float : opspec_##name##f, opspec_float16 : opspec_##name##f, long double : name##l, default : name)(x)

#define exp(x)     OPSPEC_TG1(x, exp)
#define log(x)     OPSPEC_TG1_OWN(x, log)
#define log1p(x)   OPSPEC_TG1_OWN(x, log1p)
#define tanh(x)    OPSPEC_TG1(x, tanh)
#define erf(x)     OPSPEC_TG1(x, erf)
#define sqrt(x)    OPSPEC_TG1(x, sqrt)
#define fabs(x)    OPSPEC_TG1(x, fabs)
#define pow(x, y)  OPSPEC_TG2(x, y, powf, pow, powl)
#define fmin(x, y) OPSPEC_TG2(x, y, opspec_fminf, opspec_fmin, fminl)
#define fmax(x, y) OPSPEC_TG2(x, y, opspec_fmaxf, opspec_fmax, fmaxl)

#elif defined(__CUDACC__)
/* nvcc: C++'s overloads give float and double their own precision; the half types,
 * which convert to both float and long double, would be ambiguous: they compute in
 * float, as the CPU kernels' float16 does. */
#define OPSPEC_HALF_MATH1(name, H, to_float) \
  static __device__ __forceinline__ float name(H x) { return name##f(to_float(x)); }
#define OPSPEC_HALF_MATH(H, to_float)   \
  OPSPEC_HALF_MATH1(exp, H, to_float)   \
  OPSPEC_HALF_MATH1(log, H, to_float)   \
  OPSPEC_HALF_MATH1(log1p, H, to_float) \
  OPSPEC_HALF_MATH1(tanh, H, to_float)  \
  OPSPEC_HALF_MATH1(erf, H, to_float)   \
  OPSPEC_HALF_MATH1(sqrt, H, to_float)  \
  OPSPEC_HALF_MATH1(fabs, H, to_float)
OPSPEC_HALF_MATH(__half, __half2float)
OPSPEC_HALF_MATH(__nv_bfloat16, __bfloat162float)
#undef OPSPEC_HALF_MATH
#undef OPSPEC_HALF_MATH1

#elif defined(__FLT16_MAX__)
/* Host C++ (the CUDA simulator): the same for _Float16, which <math.h>'s overloads
 * leave ambiguous too. Its bfloat16 class converts to float only: no help needed. */
#define OPSPEC_HALF_MATH1(name) \
  static inline float name(_Float16 x) { return name##f((float)x); }
OPSPEC_HALF_MATH1(exp)
OPSPEC_HALF_MATH1(log)
OPSPEC_HALF_MATH1(log1p)
OPSPEC_HALF_MATH1(tanh)
OPSPEC_HALF_MATH1(erf)
OPSPEC_HALF_MATH1(sqrt)
OPSPEC_HALF_MATH1(fabs)
#undef OPSPEC_HALF_MATH1
#endif

#endif /* OPSPEC_MATH_H */
