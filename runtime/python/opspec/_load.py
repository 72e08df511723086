"""Loading an opspec package: what ``import opspec`` and ``import <package>`` run.

``load_package`` refuses a JAX the handlers cannot run on, applies the machine's
parallel settings, then registers the package's handlers with JAX (opspec._targets).
"""

from __future__ import annotations

import importlib
import os
import re

import jax
import jaxlib

from opspec import _targets, _tune

# The jax versions opspec runs on. The floor is where jax.ffi (ffi_call, register_ffi_target,
# include_dir) appeared, and jaxlib 0.5 ships FFI API 0.1, the version the handlers declare.
# Keep in sync with `dependencies` in pyproject.toml; CI runs the tests under each TESTED.
JAX_MIN = (0, 5)
TESTED = ("0.5.3", "0.8.3", "0.10.2", "0.12.0.1")
SUPPORTED = f"jax and jaxlib >= {JAX_MIN[0]}.{JAX_MIN[1]} (tested: {', '.join(TESTED)})"

# The API of the runtime that generated ops.py files and package __init__.py files call;
# a package built against another one must be rebuilt. 2: ops pass backend= to the call.
RUNTIME_API = 2


def _version_tuple(text: str) -> tuple:
    return tuple(int(p) for p in re.findall(r"\d+", text)[:3])


def framework_ffi_api(jaxlib_dir: str | None = None) -> tuple | None:
    """The XLA FFI API version the installed jaxlib implements, from the header it ships
    (xla/ffi/api/c_api.h: it was built from that header). None if the header is missing."""
    if jaxlib_dir is None:
        jaxlib_dir = os.path.dirname(jaxlib.__file__)
    try:
        with open(os.path.join(jaxlib_dir, "include", "xla", "ffi", "api", "c_api.h")) as f:
            text = f.read()
    except OSError:
        return None
    major = re.search(r"^#define XLA_FFI_API_MAJOR (\d+)", text, re.M)
    minor = re.search(r"^#define XLA_FFI_API_MINOR (\d+)", text, re.M)
    return (int(major.group(1)), int(minor.group(1))) if major and minor else None


def check_jax(
    package: str,
    declared_api: tuple,
    jax_version: str | None = None,
    jaxlib_version: str | None = None,
    framework_api: tuple | None = None,
) -> None:
    """Raises ImportError unless the installed jax can run handlers that declare
    `declared_api`: a jax or jaxlib older than JAX_MIN, or a jaxlib whose FFI API is older
    than the declared one (XLA would refuse every handler when the first computation
    starts the backend, and fail every later call with NOT_FOUND). The installed versions
    are read when not given."""
    if jax_version is None:
        jax_version = jax.__version__
    if jaxlib_version is None:
        jaxlib_version = jaxlib.__version__
    installed = f"jax {jax_version} and jaxlib {jaxlib_version} are installed"
    if _version_tuple(jax_version)[:2] < JAX_MIN or _version_tuple(jaxlib_version)[:2] < JAX_MIN:
        raise ImportError(
            f"{package} needs {SUPPORTED}, but {installed}. "
            f"Install a supported one: pip install 'jax>={JAX_MIN[0]}.{JAX_MIN[1]}'"
        )
    if framework_api is None:
        framework_api = framework_ffi_api()
    if framework_api is not None and tuple(framework_api) < tuple(declared_api):
        have = ".".join(map(str, framework_api))
        need = ".".join(map(str, declared_api))
        raise ImportError(
            f"{package}'s handlers declare XLA FFI API {need}, but {installed}, whose FFI API is "
            f"{have}: XLA would refuse every handler. {package} needs a jaxlib with FFI API {need} "
            f"or newer; it supports {SUPPORTED}"
        )


def load_package(package: str, api: int = RUNTIME_API) -> tuple:
    """Loads `package`'s native module <package>._opspec, checks that the installed jax
    can run its handlers, and registers them. Returns (native module, platforms).
    Raises ImportError, naming the installed and the supported versions, otherwise."""
    if api != RUNTIME_API:
        raise ImportError(
            f"{package} was built for opspec runtime API {api}, but the installed opspec has "
            f"API {RUNTIME_API}: rebuild {package} against the installed opspec"
        )
    native = importlib.import_module(f"{package}._opspec")
    info = native.build_info()
    check_jax(package, _version_tuple(info["ffi_api"]))
    _tune.apply(package, native)
    return native, _targets.register_targets(native)
