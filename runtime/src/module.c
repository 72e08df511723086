/* The opspec extension module: hands the generated handlers to Python.
 *
 * It exposes capsules, not behaviour: Python registers them with JAX (opspec/__init__.py)
 * and never sits on the call path again.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "opspec/cpu.h"
#include "opspec/ffi.h"
#include "opspec/registry.h"

#define OPSPEC_TARGET_PREFIX "opspec_"

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
  return PyUnicode_FromFormat(OPSPEC_TARGET_PREFIX "%U", arg);
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
    {"target_name", opspec_py_target_name, METH_O, "The FFI target name of an op."},
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
    PyModuleDef_HEAD_INIT, "_opspec", "Native handlers of the opspec op library.", -1, opspec_py_methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__opspec(void) { return PyModule_Create(&opspec_py_module); }
