"""Which handlers the extension exposes and which platforms import registers."""

import pathlib

import jax
from conftest import has_gpu

import opspec
from opspec import _opspec

SPECS = pathlib.Path(__file__).resolve().parents[2] / "specs"


def has_cuda_body(spec: pathlib.Path) -> bool:
    text = spec.read_text()
    return any(line.startswith(("kernel:", "cuda:")) for line in text.splitlines())


def test_every_spec_is_registered_for_cpu():
    names = {name for name, cpu, _ in _opspec.handlers() if cpu is not None}
    assert names == {p.stem for p in SPECS.glob("*.yaml")}
    assert "cpu" in opspec.registered_platforms


def test_cuda_handlers_exactly_for_ops_with_cuda_bodies():
    cuda = {name: handler is not None for name, _, handler in _opspec.handlers()}
    for spec in SPECS.glob("*.yaml"):
        assert cuda[spec.stem] == (opspec.has_cuda and has_cuda_body(spec)), spec.stem


def test_simulated_cuda_handlers_exactly_for_ops_with_cuda_bodies():
    simulated = {name for name, _ in _opspec.cuda_sim_handlers()}
    for spec in SPECS.glob("*.yaml"):
        assert (spec.stem in simulated) == (opspec.has_cuda_sim and has_cuda_body(spec)), spec.stem


def test_backends():
    assert opspec.backends[0] == "cpu"
    assert ("cuda_sim" in opspec.backends) == opspec.has_cuda_sim
    assert ("cuda" in opspec.backends) == ("CUDA" in opspec.registered_platforms)


def test_cuda_registered_only_with_a_gpu_backend():
    assert ("CUDA" in opspec.registered_platforms) == (opspec.has_cuda and has_gpu())


def test_targets_are_prefixed():
    assert opspec.target_name("add") == "opspec_add"
    assert jax.ffi.ffi_call  # the public API the stubs use
