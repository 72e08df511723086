/* The CUDA simulator's float16 and bfloat16 (host C++; included by opspec/dtypes.h).
 *
 * nvcc's __half and __nv_bfloat16 (CUDA 13) convert from every arithmetic type and to
 * float and every integer type, and define their operators (+ - * /, the comparisons,
 * += -= *= /=) for two of them only. `x[i] > 0` on float16 then matches both that
 * operator (0 converted to __half) and the built-in comparison of floats (x[i]
 * converted to float), and nvcc rejects it as ambiguous; so does `v * 2.0f`, and so does
 * `acc += v` into a float (float and int conversions both apply). These classes have
 * the same conversions and operators, so the simulator's C++ compile rejects the same
 * expressions, at the spec's line, on a machine without nvcc (`v > (T)0` and
 * `acc += (float)v` compile on both). Each operation computes in float and rounds to
 * the narrow type, which for one +, -, * or / gives the value the GPU's half
 * arithmetic gives.
 */
#ifndef OPSPEC_CUDA_SIM_HALF_H
#define OPSPEC_CUDA_SIM_HALF_H

#include <math.h>

#include <type_traits>

template <typename Codec>
struct opspec_sim_narrow {
  typename Codec::storage value;

  opspec_sim_narrow() = default;
  template <typename U, typename = typename std::enable_if<std::is_arithmetic<U>::value>::type>
  opspec_sim_narrow(U x) : value(Codec::narrow((float)x)) {}
  operator float() const { return Codec::widen(value); }
  /* Toward zero, as __half2int_rz and its kin. */
  operator signed char() const { return (signed char)Codec::widen(value); }
  operator unsigned char() const { return (unsigned char)Codec::widen(value); }
  operator char() const { return (char)Codec::widen(value); }
  operator short() const { return (short)Codec::widen(value); }
  operator unsigned short() const { return (unsigned short)Codec::widen(value); }
  operator int() const { return (int)Codec::widen(value); }
  operator unsigned int() const { return (unsigned int)Codec::widen(value); }
  operator long() const { return (long)Codec::widen(value); }
  operator unsigned long() const { return (unsigned long)Codec::widen(value); }
  operator long long() const { return (long long)Codec::widen(value); }
  operator unsigned long long() const { return (unsigned long long)Codec::widen(value); }

  /* Friends, found through their class only: both operands of one type, as nvcc's. */
  friend opspec_sim_narrow operator+(const opspec_sim_narrow &a, const opspec_sim_narrow &b) {
    return opspec_sim_narrow((float)a + (float)b);
  }
  friend opspec_sim_narrow operator-(const opspec_sim_narrow &a, const opspec_sim_narrow &b) {
    return opspec_sim_narrow((float)a - (float)b);
  }
  friend opspec_sim_narrow operator*(const opspec_sim_narrow &a, const opspec_sim_narrow &b) {
    return opspec_sim_narrow((float)a * (float)b);
  }
  friend opspec_sim_narrow operator/(const opspec_sim_narrow &a, const opspec_sim_narrow &b) {
    return opspec_sim_narrow((float)a / (float)b);
  }
  friend opspec_sim_narrow operator-(const opspec_sim_narrow &a) { return opspec_sim_narrow(-(float)a); }
  friend opspec_sim_narrow operator+(const opspec_sim_narrow &a) { return a; }
  friend bool operator==(const opspec_sim_narrow &a, const opspec_sim_narrow &b) { return (float)a == (float)b; }
  friend bool operator!=(const opspec_sim_narrow &a, const opspec_sim_narrow &b) { return (float)a != (float)b; }
  friend bool operator<(const opspec_sim_narrow &a, const opspec_sim_narrow &b) { return (float)a < (float)b; }
  friend bool operator<=(const opspec_sim_narrow &a, const opspec_sim_narrow &b) { return (float)a <= (float)b; }
  friend bool operator>(const opspec_sim_narrow &a, const opspec_sim_narrow &b) { return (float)a > (float)b; }
  friend bool operator>=(const opspec_sim_narrow &a, const opspec_sim_narrow &b) { return (float)a >= (float)b; }
  opspec_sim_narrow &operator+=(const opspec_sim_narrow &b) { return *this = *this + b; }
  opspec_sim_narrow &operator-=(const opspec_sim_narrow &b) { return *this = *this - b; }
  opspec_sim_narrow &operator*=(const opspec_sim_narrow &b) { return *this = *this * b; }
  opspec_sim_narrow &operator/=(const opspec_sim_narrow &b) { return *this = *this / b; }
  opspec_sim_narrow &operator++() { return *this += opspec_sim_narrow(1.0f); }
  opspec_sim_narrow &operator--() { return *this -= opspec_sim_narrow(1.0f); }
  opspec_sim_narrow operator++(int) {
    opspec_sim_narrow old = *this;
    ++*this;
    return old;
  }
  opspec_sim_narrow operator--(int) {
    opspec_sim_narrow old = *this;
    --*this;
    return old;
  }
};

/* bfloat16: the upper half of a float32 (opspec/dtypes.h's conversions). */
struct opspec_sim_bfloat16_codec {
  typedef uint16_t storage;
  static uint16_t narrow(float x) { return opspec_float_to_bfloat16(x); }
  static float widen(uint16_t bits) { return opspec_bfloat16_to_float(bits); }
};

#if defined(__FLT16_MAX__)
/* float16: the compiler's _Float16, rounded once per operation. */
struct opspec_sim_float16_codec {
  typedef _Float16 storage;
  static _Float16 narrow(float x) { return (_Float16)x; }
  static float widen(_Float16 x) { return (float)x; }
};
#endif

/* The math functions opspec/math.h gives __half and __nv_bfloat16 under nvcc: float
 * results, computed in float (an exact match here, where the conversions above would
 * leave <math.h>'s overloads ambiguous). */
#define OPSPEC_SIM_NARROW_MATH(name)              \
  template <typename Codec>                       \
  inline float name(opspec_sim_narrow<Codec> x) { \
    return name##f((float)x);                     \
  }
OPSPEC_SIM_NARROW_MATH(exp)
OPSPEC_SIM_NARROW_MATH(log)
OPSPEC_SIM_NARROW_MATH(tanh)
OPSPEC_SIM_NARROW_MATH(sqrt)
OPSPEC_SIM_NARROW_MATH(fabs)
#undef OPSPEC_SIM_NARROW_MATH

#endif /* OPSPEC_CUDA_SIM_HALF_H */
