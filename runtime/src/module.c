/* The extension module of an opspec package: hands the generated handlers to Python.
 *
 * It exposes capsules, not behaviour: Python registers them with JAX
 * (opspec._runtime.load_package) and never sits on the call path again. Every package
 * built with opspec, the shipped one and users' own, compiles its own copy of this file
 * as <package>._opspec; the table it serves and the package's name come from the
 * generated registry.c.
 *
 * It uses only the limited C API of Python 3.11, so a build made with Py_LIMITED_API
 * (OpspecExtension.cmake defines it when scikit-build-core's wheel.py-api asks for abi3,
 * as opspec's own pyproject.toml does) runs on every CPython from 3.11 (one cp311-abi3
 * wheel). Nothing here is on the call path: XLA calls the handlers directly.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <limits.h>

#include "opspec/bfloat16.h"
#include "opspec/cpu.h"
#include "opspec/ffi.h"
#include "opspec/pages.h"
#include "opspec/parallel.h"
#include "opspec/registry.h"
#ifdef OPSPEC_WITH_CUDA_SIM
#include "opspec/cuda_sim.h"
#endif

/* In ffi_abi.c: FFI API versions as major * 1000 + minor. */
int opspec_ffi_api_declared(void);
int opspec_ffi_api_header(void);

static PyObject *opspec_py_capsule(XLA_FFI_Handler *handler) {
  if (!handler) Py_RETURN_NONE;
  /* The capsule's name must be NULL: jax.ffi.register_ffi_target reads the raw pointer. */
  return PyCapsule_New((void *)handler, NULL, NULL);
}

/* handlers() -> list of (name, cpu capsule, CUDA capsule or None) */
static PyObject *opspec_py_handlers(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  PyObject *list = PyList_New((Py_ssize_t)opspec_op_count);
  if (!list) return NULL;
  for (size_t i = 0; i < opspec_op_count; ++i) {
    const opspec_op_entry *e = &opspec_op_table[i];
    PyObject *cpu = opspec_py_capsule(e->cpu);
    PyObject *cuda = cpu ? opspec_py_capsule(e->cuda) : NULL;
    PyObject *item = cuda ? Py_BuildValue("(sNN)", e->name, cpu, cuda) : NULL;
    if (!item) {
      Py_XDECREF(cpu);
      Py_XDECREF(cuda);
      Py_DECREF(list);
      return NULL;
    }
    if (PyList_SetItem(list, (Py_ssize_t)i, item) < 0) { /* it took `item` either way */
      Py_DECREF(list);
      return NULL;
    }
  }
  return list;
}

/* cuda_sim_handlers() -> list of (name, capsule): the CUDA kernels on the simulator */
static PyObject *opspec_py_cuda_sim_handlers(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  PyObject *list = PyList_New(0);
  for (size_t i = 0; list && i < opspec_op_count; ++i) {
    const opspec_op_entry *e = &opspec_op_table[i];
    if (!e->cuda_sim) continue;
    PyObject *item = Py_BuildValue("(sN)", e->name, opspec_py_capsule(e->cuda_sim));
    if (!item || PyList_Append(list, item) < 0) Py_CLEAR(list);
    Py_XDECREF(item);
  }
  return list;
}

static PyObject *opspec_py_has_cuda_sim(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
#ifdef OPSPEC_WITH_CUDA_SIM
  Py_RETURN_TRUE;
#else
  Py_RETURN_FALSE;
#endif
}

#ifdef OPSPEC_WITH_CUDA_SIM
static PyObject *opspec_py_cuda_sim_set_device_count(PyObject *self, PyObject *arg) {
  (void)self;
  long n = PyLong_AsLong(arg);
  if (n == -1 && PyErr_Occurred()) return NULL;
  if (n < 1 || n > OPSPEC_SIM_MAX_DEVICES || opspec_sim_set_device_count((int)n)) {
    PyErr_Format(PyExc_ValueError, "the CUDA simulator models 1 to %d devices, not %ld", OPSPEC_SIM_MAX_DEVICES, n);
    return NULL;
  }
  Py_RETURN_NONE;
}

static PyObject *opspec_py_cuda_sim_device_count(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  int n = 0;
  opspec_sim_device_count(&n);
  return PyLong_FromLong(n);
}

/* cuda_sim_take_launches() -> list of dicts, oldest first: what was launched since the
 * last call (device, code, grid, block, shared_mem). */
static PyObject *opspec_py_cuda_sim_take_launches(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  enum { opspec_max_records = 4096 };
  opspec_sim_launch_record *records = PyMem_Malloc(opspec_max_records * sizeof *records);
  if (!records) return PyErr_NoMemory();
  size_t n = opspec_sim_take_launches(records, opspec_max_records);
  PyObject *list = PyList_New((Py_ssize_t)n);
  for (size_t i = 0; list && i < n; ++i) {
    const opspec_sim_launch_record *r = &records[i];
    PyObject *item = Py_BuildValue("{s:i,s:i,s:(III),s:(III),s:K}", "device", r->device, "code", r->code, "grid",
                                   r->grid[0], r->grid[1], r->grid[2], "block", r->block[0], r->block[1], r->block[2],
                                   "shared_mem", (unsigned long long)r->shared_mem);
    if (!item || PyList_SetItem(list, (Py_ssize_t)i, item) < 0) Py_CLEAR(list);
  }
  PyMem_Free(records);
  return list;
}
#endif

static PyObject *opspec_py_target_name(PyObject *self, PyObject *arg) {
  (void)self;
  if (!PyUnicode_Check(arg)) {
    PyErr_SetString(PyExc_TypeError, "target_name expects an op name (str)");
    return NULL;
  }
  /* The package's name first: two packages may both have an op "add". */
  return PyUnicode_FromFormat("%s_%U", opspec_package_name, arg);
}

static PyObject *opspec_py_version_text(int version) {
  return PyUnicode_FromFormat("%d.%d", version / 1000, version % 1000);
}

/* build_info() -> dict: what this extension was built from and with. */
static PyObject *opspec_py_build_info(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
#ifdef OPSPEC_WITH_CUDA
  PyObject *cuda = Py_True;
#else
  PyObject *cuda = Py_False;
#endif
#ifdef OPSPEC_WITH_CUDA_SIM
  PyObject *cuda_sim = Py_True;
#else
  PyObject *cuda_sim = Py_False;
#endif
  PyObject *declared = opspec_py_version_text(opspec_ffi_api_declared());
  PyObject *header = opspec_py_version_text(opspec_ffi_api_header());
  PyObject *info = declared && header
                       ? Py_BuildValue("{s:s,s:s,s:s,s:s,s:O,s:O,s:O,s:O,s:s,s:s}", "package", opspec_package_name,
                                       "version", opspec_build.package_version, "opspec", opspec_build.opspec_version,
                                       "jaxlib", opspec_build.jaxlib_version, "ffi_api", declared, "ffi_api_header",
                                       header, "cuda", cuda, "cuda_sim", cuda_sim, "compiler", opspec_build.c_compiler,
                                       "cuda_compiler", opspec_build.cuda_compiler)
                       : NULL;
  Py_XDECREF(declared);
  Py_XDECREF(header);
  return info;
}

static PyObject *opspec_py_package(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  return PyUnicode_FromString(opspec_package_name);
}

static PyObject *opspec_py_has_cuda(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
#ifdef OPSPEC_WITH_CUDA
  Py_RETURN_TRUE;
#else
  Py_RETURN_FALSE;
#endif
}

static PyObject *opspec_py_set_cpu_threads(PyObject *self, PyObject *arg) {
  (void)self;
  long n = PyLong_AsLong(arg);
  if (n == -1 && PyErr_Occurred()) return NULL;
  opspec_set_cpu_threads(n > 0 && n < 1 << 16 ? (int)n : 0);
  Py_RETURN_NONE;
}

static PyObject *opspec_py_cpu_threads(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  return PyLong_FromLong(opspec_cpu_threads());
}

static PyObject *opspec_py_cpu_form(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  return PyUnicode_FromString(opspec_cpu_form());
}

static PyObject *opspec_py_cpu_forms(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  return PyUnicode_FromString(opspec_cpu_forms());
}

static PyObject *opspec_py_last_work(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  int64_t w[4];
  opspec_last_work(w);
  return Py_BuildValue("(LLLL)", (long long)w[0], (long long)w[1], (long long)w[2], (long long)w[3]);
}

static PyObject *opspec_py_set_parallel_threshold(PyObject *self, PyObject *arg) {
  (void)self;
  long long n = PyLong_AsLongLong(arg);
  if (n == -1 && PyErr_Occurred()) return NULL;
  opspec_set_parallel_threshold(n);
  Py_RETURN_NONE;
}

static PyObject *opspec_py_parallel_threshold(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  return PyLong_FromLongLong(opspec_parallel_threshold());
}

/* The registry position of op `name`, or -1 with ValueError set. */
static int64_t opspec_py_op_index(const char *name) {
  int64_t index = opspec_op_position(opspec_op_table, opspec_op_count, name);
  if (index < 0) PyErr_Format(PyExc_ValueError, "package %s has no op '%s'", opspec_package_name, name);
  return index;
}

/* set_op_parallel_threshold(op name, work): the op's own threshold; work < 1: none. */
static PyObject *opspec_py_set_op_parallel_threshold(PyObject *self, PyObject *args) {
  (void)self;
  const char *name;
  long long n;
  if (!PyArg_ParseTuple(args, "sL", &name, &n)) return NULL;
  int64_t index = opspec_py_op_index(name);
  if (index < 0) return NULL;
  if (!opspec_set_op_threshold(opspec_op_table, opspec_op_count, (size_t)index, n)) return PyErr_NoMemory();
  Py_RETURN_NONE;
}

/* op_parallel_threshold(op name) -> the op's own threshold, 0 for none. */
static PyObject *opspec_py_op_parallel_threshold(PyObject *self, PyObject *arg) {
  (void)self;
  const char *name = PyUnicode_Check(arg) ? PyUnicode_AsUTF8AndSize(arg, NULL) : NULL;
  if (!name) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "op_parallel_threshold expects an op name (str)");
    return NULL;
  }
  int64_t index = opspec_py_op_index(name);
  return index < 0 ? NULL : PyLong_FromLongLong(opspec_op_threshold_at((size_t)index));
}

static PyObject *opspec_py_parallel_stats(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  int64_t loops, chunks;
  opspec_parallel_stats(&loops, &chunks);
  return Py_BuildValue("(LL)", (long long)loops, (long long)chunks);
}

static PyObject *opspec_py_set_cpu_pool(PyObject *self, PyObject *arg) {
  (void)self;
  long pool = PyLong_AsLong(arg);
  if (pool == -1 && PyErr_Occurred()) return NULL;
  if (pool < 0 || pool > INT_MAX || !opspec_set_cpu_pool((int)pool)) {
    PyErr_Format(PyExc_ValueError, "unknown CPU pool %ld", pool);
    return NULL;
  }
  Py_RETURN_NONE;
}

static PyObject *opspec_py_cpu_pool(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  return PyLong_FromLong(opspec_cpu_pool());
}

static PyObject *opspec_py_set_checks(PyObject *self, PyObject *arg) {
  (void)self;
  int enabled = PyObject_IsTrue(arg);
  if (enabled < 0) return NULL;
  opspec_set_checks(enabled != 0);
  Py_RETURN_NONE;
}

static PyObject *opspec_py_checks_enabled(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  return PyBool_FromLong(opspec_checks_enabled());
}

/* How many bfloat16 arrays CPU handlers have widened to float copies (opspec/bfloat16.h):
 * tests see that an op that converts in its loop made none. */
static PyObject *opspec_py_widened_arrays(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  return PyLong_FromLongLong((long long)opspec_widened_arrays());
}

/* check_op's test for unwritten outputs: a byte 0..255 to fill outputs with before each
 * kernel, or -1 for off (opspec_set_output_fill). */
static PyObject *opspec_py_set_output_fill(PyObject *self, PyObject *arg) {
  (void)self;
  long byte = PyLong_AsLong(arg);
  if (byte == -1 && PyErr_Occurred()) return NULL;
  if (byte < -1 || byte > 255) {
    PyErr_Format(PyExc_ValueError, "set_output_fill: expected a byte 0..255 or -1 (off), got %ld", byte);
    return NULL;
  }
  opspec_set_output_fill((int)byte);
  Py_RETURN_NONE;
}

static PyMethodDef opspec_py_methods[] = {
    {"handlers", opspec_py_handlers, METH_NOARGS, "List of (op name, cpu capsule, CUDA capsule or None)."},
    {"target_name", opspec_py_target_name, METH_O, "The FFI target name of an op: \"<package>_<op>\"."},
    {"package", opspec_py_package, METH_NOARGS, "The name of the Python package this extension belongs to."},
    {"build_info", opspec_py_build_info, METH_NOARGS, "What the extension was built with (dict)."},
    {"has_cuda", opspec_py_has_cuda, METH_NOARGS, "Whether the extension was built with CUDA handlers."},
    {"cuda_sim_handlers", opspec_py_cuda_sim_handlers, METH_NOARGS,
     "List of (op name, capsule): CUDA kernels on the simulator."},
    {"has_cuda_sim", opspec_py_has_cuda_sim, METH_NOARGS, "Whether the extension was built with the CUDA simulator."},
#ifdef OPSPEC_WITH_CUDA_SIM
    {"cuda_sim_set_device_count", opspec_py_cuda_sim_set_device_count, METH_O,
     "How many GPUs the CUDA simulator models."},
    {"cuda_sim_device_count", opspec_py_cuda_sim_device_count, METH_NOARGS, "How many GPUs the CUDA simulator models."},
    {"cuda_sim_take_launches", opspec_py_cuda_sim_take_launches, METH_NOARGS,
     "The kernel launches the CUDA simulator ran since the last call, oldest first."},
#endif
    {"set_cpu_threads", opspec_py_set_cpu_threads, METH_O, "Cap the threads of a parallel loop (0: the CPUs)."},
    {"cpu_threads", opspec_py_cpu_threads, METH_NOARGS, "Threads a parallel CPU loop may use."},
    {"cpu_form", opspec_py_cpu_form, METH_NOARGS, "The form of the CPU kernels that runs on this CPU."},
    {"cpu_forms", opspec_py_cpu_forms, METH_NOARGS, "The forms of the CPU kernels the build made, comma-separated."},
    {"set_parallel_threshold", opspec_py_set_parallel_threshold, METH_O,
     "Work (elements) at which portable CPU loops go parallel."},
    {"parallel_threshold", opspec_py_parallel_threshold, METH_NOARGS,
     "Work (elements) at which portable CPU loops go parallel."},
    {"set_op_parallel_threshold", opspec_py_set_op_parallel_threshold, METH_VARARGS,
     "(op name, work): the op's own threshold, over the package's (work < 1: none)."},
    {"op_parallel_threshold", opspec_py_op_parallel_threshold, METH_O,
     "The op's own threshold (work), 0 where it follows the package's."},
    {"last_work", opspec_py_last_work, METH_NOARGS,
     "(bytes, flops, work, work without the formulas) of the last portable CPU call."},
    {"parallel_stats", opspec_py_parallel_stats, METH_NOARGS,
     "(loops, chunks) handed to more than one thread since the process started."},
    {"set_cpu_pool", opspec_py_set_cpu_pool, METH_O, "Where parallel loops' helpers come from (OPSPEC_POOL_*)."},
    {"cpu_pool", opspec_py_cpu_pool, METH_NOARGS, "Where parallel loops' helpers come from (OPSPEC_POOL_*)."},
    {"set_checks", opspec_py_set_checks, METH_O, "Turn the input contents checks of every handler on or off."},
    {"checks_enabled", opspec_py_checks_enabled, METH_NOARGS, "Whether the handlers check input contents."},
    {"widened_arrays", opspec_py_widened_arrays, METH_NOARGS,
     "How many bfloat16 arrays CPU handlers have widened to float copies since load."},
    {"set_output_fill", opspec_py_set_output_fill, METH_O,
     "Fill outputs with a byte before each kernel (-1: off); opspec.testing.check_op's unwritten check."},
    {NULL, NULL, 0, NULL},
};

/* At import, on the importing thread: reads OPSPEC_HUGE_PAGES and the kernel's huge page
 * setting once (runtime/src/pages.c), as the other knobs are read at import, rather than
 * on an XLA thread at the first large call. */
static int opspec_py_exec(PyObject *module) {
  (void)module;
  (void)opspec_huge_page_size();
  return 0;
}

/* Free-threaded Python (3.13t, 3.14t) keeps the GIL enabled for a module that does not say
 * it can do without. This one can: it keeps no Python state, and the native state its
 * functions read and set (thread cap, threshold, pool, checks switch, the simulator's
 * device count and launch log) is atomic or locked already, because XLA's threads run the
 * handlers that read it without the GIL on every Python. Py_mod_gil exists from 3.13 on
 * (and in the limited API from 3.13), hence the guard; an abi3 build for 3.11 lacks it and
 * cannot load on a free-threaded Python anyway. */
static PyModuleDef_Slot opspec_py_slots[] = {
    {Py_mod_exec, (void *)opspec_py_exec},
#ifdef Py_mod_gil
    {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
    {0, NULL},
};

static struct PyModuleDef opspec_py_module = {
    PyModuleDef_HEAD_INIT,
    "_opspec",
    "Native handlers of an opspec package.",
    0,
    opspec_py_methods,
    opspec_py_slots,
    NULL,
    NULL,
    NULL,
};

/* Multi-phase initialisation: the form that carries slots (Py_mod_gil). */
PyMODINIT_FUNC PyInit__opspec(void) { return PyModuleDef_Init(&opspec_py_module); }
