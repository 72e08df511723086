/* The extension module of an opspec package: hands the generated handlers to Python.
 *
 * It exposes capsules, not behaviour: Python registers them with JAX
 * (opspec._runtime.load_package) and never sits on the call path again. Every package
 * built with opspec, the shipped one and users' own, compiles its own copy of this file
 * as <package>._opspec; the table it serves and the package's name come from the
 * generated registry.c.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "opspec/cpu.h"
#include "opspec/ffi.h"
#include "opspec/registry.h"

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
    PyList_SET_ITEM(list, (Py_ssize_t)i, item);
  }
  return list;
}

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
  PyObject *declared = opspec_py_version_text(opspec_ffi_api_declared());
  PyObject *header = opspec_py_version_text(opspec_ffi_api_header());
  PyObject *info =
      declared && header
          ? Py_BuildValue("{s:s,s:s,s:s,s:s,s:O,s:O,s:O,s:s,s:s}", "package", opspec_package_name, "version",
                          opspec_build.package_version, "opspec", opspec_build.opspec_version, "jaxlib",
                          opspec_build.jaxlib_version, "ffi_api", declared, "ffi_api_header", header, "cuda", cuda,
                          "compiler", opspec_build.c_compiler, "cuda_compiler", opspec_build.cuda_compiler)
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

static PyMethodDef opspec_py_methods[] = {
    {"handlers", opspec_py_handlers, METH_NOARGS, "List of (op name, cpu capsule, CUDA capsule or None)."},
    {"target_name", opspec_py_target_name, METH_O, "The FFI target name of an op: \"<package>_<op>\"."},
    {"package", opspec_py_package, METH_NOARGS, "The name of the Python package this extension belongs to."},
    {"build_info", opspec_py_build_info, METH_NOARGS, "What the extension was built with (dict)."},
    {"has_cuda", opspec_py_has_cuda, METH_NOARGS, "Whether the extension was built with CUDA handlers."},
    {"set_cpu_threads", opspec_py_set_cpu_threads, METH_O, "Cap OpenMP threads (0: OpenMP's default)."},
    {"cpu_threads", opspec_py_cpu_threads, METH_NOARGS, "Threads a parallel CPU loop may use."},
    {"set_parallel_threshold", opspec_py_set_parallel_threshold, METH_O, "Loop trips at which CPU loops go parallel."},
    {"parallel_threshold", opspec_py_parallel_threshold, METH_NOARGS, "Loop trips at which CPU loops go parallel."},
    {"set_checks", opspec_py_set_checks, METH_O, "Turn the CPU handlers' input contents checks on or off."},
    {"checks_enabled", opspec_py_checks_enabled, METH_NOARGS, "Whether the CPU handlers check input contents."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef opspec_py_module = {
    PyModuleDef_HEAD_INIT,
    "_opspec",
    "Native handlers of an opspec package.",
    -1,
    opspec_py_methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__opspec(void) { return PyModule_Create(&opspec_py_module); }
