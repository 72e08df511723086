/* CSR matvec kernel variants on the CPU, in plain C outside XLA, for docs/performance.md
 * (issue 12): the shipped kernel before 2026-11-25 (one accumulator, rows split
 * statically), four accumulators per row, rows split into nnz-balanced ranges (binary
 * search in indptr) with one or four accumulators, and the shipped kernel now (one
 * accumulator, each index checked as it is read: `in_kernel`); 1 and 2 threads; best of
 * 15 interleaved runs. Matrices: `0` the 5-point 2-D Laplacian on a 1024 x 1024 grid, `1`
 * 524288 rows with 20 random columns each. A second argument `huge` asks for transparent
 * huge pages on every array (madvise), as NumPy does for large arrays and XLA's buffers
 * do not. Not part of the wheel:
 *   cc -std=c11 -O3 -fopenmp bench/native/csr_variants.c -o /tmp/csr && /tmp/csr 0 && /tmp/csr 1 huge
 * (-O3 as the wheel builds.) */
#define _DEFAULT_SOURCE /* madvise */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <omp.h>
typedef float T;
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}
/* `bytes` of memory on 2 MiB boundaries, with huge pages asked for if `huge`, touched. */
static void *alloc(size_t bytes, int huge) {
  size_t size = (bytes + (1u << 21) - 1) & ~(size_t)((1u << 21) - 1);
  void *p = aligned_alloc(1u << 21, size);
  if (!p) abort();
#ifdef MADV_HUGEPAGE
  if (huge) madvise(p, size, MADV_HUGEPAGE);
#endif
  memset(p, 0, size);
  return p;
}
static void k_checked(const T *restrict data, const int32_t *restrict indices, const int32_t *restrict indptr,
                      const T *restrict x, T *restrict y, int64_t rows, int64_t cols, int nt, int *rejected) {
#pragma omp parallel for num_threads(nt)
  for (int64_t i = 0; i < rows; ++i) {
    T acc = 0;
    for (int32_t p = indptr[i]; p < indptr[i + 1]; ++p) {
      const int32_t col = indices[p];
      if (col < 0 || col >= cols) {
        __atomic_store_n(rejected, 1, __ATOMIC_RELAXED);
        break;
      }
      acc += data[p] * x[col];
    }
    y[i] = acc;
  }
}
static void k_old(const T *restrict data, const int32_t *restrict indices, const int32_t *restrict indptr,
                  const T *restrict x, T *restrict y, int64_t rows, int nt) {
#pragma omp parallel for num_threads(nt)
  for (int64_t i = 0; i < rows; ++i) {
    T acc = 0;
    for (int32_t p = indptr[i]; p < indptr[i + 1]; ++p) acc += data[p] * x[indices[p]];
    y[i] = acc;
  }
}
static void k_acc(const T *restrict data, const int32_t *restrict indices, const int32_t *restrict indptr,
                  const T *restrict x, T *restrict y, int64_t rows, int nt) {
#pragma omp parallel for num_threads(nt)
  for (int64_t r = 0; r < rows; ++r) {
    T a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    int32_t p = indptr[r];
    const int32_t end = indptr[r + 1];
    for (; p + 4 <= end; p += 4) {
      a0 += data[p] * x[indices[p]];
      a1 += data[p + 1] * x[indices[p + 1]];
      a2 += data[p + 2] * x[indices[p + 2]];
      a3 += data[p + 3] * x[indices[p + 3]];
    }
    for (; p < end; ++p) a0 += data[p] * x[indices[p]];
    y[r] = (a0 + a1) + (a2 + a3);
  }
}
static void k_bal(const T *restrict data, const int32_t *restrict indices, const int32_t *restrict indptr,
                  const T *restrict x, T *restrict y, int64_t rows, int nt, int acc4) {
  const int64_t work = (int64_t)indptr[rows] + rows;
  const int64_t chunks = nt;
#pragma omp parallel for schedule(static, 1) num_threads(nt)
  for (int64_t c = 0; c < chunks; ++c) {
    int64_t bounds[2];
    for (int b = 0; b < 2; ++b) {
      const int64_t target = work / chunks * (c + b) + work % chunks * (c + b) / chunks;
      int64_t lo = 0, hi = rows;
      while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if ((int64_t)indptr[mid] + mid < target)
          lo = mid + 1;
        else
          hi = mid;
      }
      bounds[b] = lo;
    }
    if (acc4)
      for (int64_t r = bounds[0]; r < bounds[1]; ++r) {
        T a0 = 0, a1 = 0, a2 = 0, a3 = 0;
        int32_t p = indptr[r];
        const int32_t end = indptr[r + 1];
        for (; p + 4 <= end; p += 4) {
          a0 += data[p] * x[indices[p]];
          a1 += data[p + 1] * x[indices[p + 1]];
          a2 += data[p + 2] * x[indices[p + 2]];
          a3 += data[p + 3] * x[indices[p + 3]];
        }
        for (; p < end; ++p) a0 += data[p] * x[indices[p]];
        y[r] = (a0 + a1) + (a2 + a3);
      }
    else
      for (int64_t r = bounds[0]; r < bounds[1]; ++r) {
        T acc = 0;
        for (int32_t p = indptr[r]; p < indptr[r + 1]; ++p) acc += data[p] * x[indices[p]];
        y[r] = acc;
      }
  }
}
static void scan(const int32_t *v, int64_t n, volatile int *bad) {
  int b = 0;
  for (int64_t i = 0; i < n; ++i) b |= v[i] < 0;
  *bad = b;
}
int main(int argc, char **argv) {
  if (argc != 2 && argc != 3) return 2;
  int kind = atoi(argv[1]);  // 0 laplacian g=1024, 1 random 20/row rows=524288
  int huge = argc == 3 && strcmp(argv[2], "huge") == 0;
  int64_t rows, cols, nnz;
  int32_t *indptr, *indices;
  T *data;
  if (kind == 0) {
    int64_t g = 1024;
    rows = cols = g * g;
    indptr = alloc((rows + 1) * 4, huge);
    indices = alloc(rows * 5 * 4, huge);
    data = alloc(rows * 5 * 4, huge);
    nnz = 0;
    for (int64_t r = 0; r < rows; ++r) {
      indptr[r] = nnz;
      int64_t i = r / g, j = r % g;
      int64_t c[5] = {r - g, r - 1, r, r + 1, r + g};
      int ok[5] = {i > 0, j > 0, 1, j < g - 1, i < g - 1};
      for (int k = 0; k < 5; ++k)
        if (ok[k]) {
          indices[nnz] = c[k];
          data[nnz] = k == 2 ? 4 : -1;
          nnz++;
        }
    }
    indptr[rows] = nnz;
  } else {
    rows = cols = 524288;
    nnz = rows * 20;
    indptr = alloc((rows + 1) * 4, huge);
    indices = alloc(nnz * 4, huge);
    data = alloc(nnz * 4, huge);
    srand(1);
    for (int64_t r = 0; r <= rows; ++r) indptr[r] = r * 20;
    for (int64_t p = 0; p < nnz; ++p) {
      indices[p] = rand() % cols;
      data[p] = 1;
    }
  }
  T *x = alloc(cols * 4, huge), *y = alloc(rows * 4, huge);
  for (int64_t i = 0; i < cols; ++i) x[i] = 1;
  for (int64_t i = 0; i < rows; ++i) y[i] = 0;
  double bytes = 8.0 * nnz + 4.0 * (rows + 1) + 4.0 * cols + 4.0 * rows;
  const char *names[] = {"old 1acc static", "4acc static", "balanced 1acc", "balanced 4acc", "checked 1acc"};
  int rejected = 0;
  printf("%s, %s pages\n", kind ? "random" : "laplace", huge ? "huge (madvise)" : "default");
  for (int nt = 1; nt <= 2; ++nt) {
    double best[5] = {1e9, 1e9, 1e9, 1e9, 1e9};
    for (int rep = 0; rep < 15; ++rep)
      for (int v = 0; v < 5; ++v) {
        double t = now();
        if (v == 4)
          k_checked(data, indices, indptr, x, y, rows, cols, nt, &rejected);
        else if (v == 0)
          k_old(data, indices, indptr, x, y, rows, nt);
        else if (v == 1)
          k_acc(data, indices, indptr, x, y, rows, nt);
        else
          k_bal(data, indices, indptr, x, y, rows, nt, v == 3);
        t = now() - t;
        if (t < best[v]) best[v] = t;
      }
    for (int v = 0; v < 5; ++v)
      printf("%s threads=%d %-18s %7.3f ms %6.1f GB/s\n", kind ? "random" : "laplace", nt, names[v], best[v] * 1e3,
             bytes / best[v] / 1e9);
  }
  volatile int bad;
  double t = now();
  scan(indices, nnz, &bad);
  printf("index scan alone: %.3f ms%s\n", (now() - t) * 1e3, rejected ? " (a kernel rejected an index)" : "");
  return 0;
}
