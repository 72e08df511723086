"""jax.export of computations that call opspec ops (docs/transformations.md).

    exported = jax.export.export(jax.jit(f), disabled_checks=opspec.export.checks())(x)

jax.export refuses custom calls whose targets carry no compatibility guarantee unless
the exporter names them; `checks()` names every opspec target registered in this
process. A process that deserializes and calls the result imports the packages whose
ops it uses (``import opspec``): importing a package registers its targets under the
same names, which are stable (<package>_<op>, <package>_<op>.<backend>).
"""

from __future__ import annotations

from opspec import _targets


def targets(package: str | None = None) -> list:
    """The FFI target names registered in this process (of `package`, or of every
    opspec package), sorted."""
    return sorted({name for (name, _platform), owner in _targets.REGISTERED.items() if package in (None, owner)})


def checks(package: str | None = None) -> list:
    """jax.export.DisabledSafetyCheck.custom_call for every target of targets(package)."""
    import jax.export  # imported here: jax < 0.6 does not import it with jax, and needs absl-py for it

    return [jax.export.DisabledSafetyCheck.custom_call(name) for name in targets(package)]
