"""The backends, registered in one place.

A :class:`Backend` says everything the rest of coarsen_nb needs to know about
one value of the ``backend=`` option: the array module the generated code
imports as ``xp``, what a standalone module needs, the module-level lines that
follow the imports, what to say when the module cannot be loaded here, and
the *fuser* that prints an SOI as one fused kernel (CuPy's
ElementwiseKernel/ReductionKernel, :mod:`coarsen_nb.lower.cupy`) where the
plain array printer would print one statement per operation.

The module writer (:mod:`coarsen_nb.lower.module`) and the runtime ask the
record; neither compares backend names, so a new backend is one record here
plus its printer.  Loading is the same for every backend today: the runtime
compiles the source under a real file name and executes it; an ``ImportError``
while executing (CuPy absent, or too old) leaves the source readable and
exportable, and :attr:`Backend.install_hint` says what to install.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

from coarsen_nb.lower import cupy


@dataclass(frozen=True)
class Backend:
    """One backend: the facts the module writer and the runtime read."""

    name: str                          # the ``backend=`` option
    xp_module: str                     # imported as ``xp`` by the generated module
    needs: str                         # what a standalone generated module needs, for its header
    prologue: str = ""                 # module-level code right after the imports (when ``xp`` is used)
    fuser: ModuleType | None = None    # ``forward_lines(writer, kernel)``, ``reverse_lines(writer, kernel, v, leaves)``
    install_hint: str = ""             # what to do when the module cannot be loaded here


NUMPY = Backend("numpy", "numpy", "NumPy")
CUPY = Backend("cupy", "cupy", "CuPy", prologue=cupy.VERSION_CHECK, fuser=cupy,
               install_hint="install CuPy on a machine with a CUDA GPU (pip install coarsen-nb[cupy]); "
                            "the generated code is in .source and .export() works")

#: The ``backend=`` options, in the order the docs list them.
BACKENDS: dict[str, Backend] = {b.name: b for b in (NUMPY, CUPY)}


def get(name: str) -> Backend:
    """The backend of a ``backend=`` option (checked by :func:`coarsen_nb.checks.options` first)."""
    return BACKENDS[name]


def for_module(xp_module: str) -> Backend:
    """The backend whose generated code imports ``xp_module``; any other array-API namespace (the tests
    print for ``array_api_strict``) is a plain backend of that name, without a fuser."""
    for b in BACKENDS.values():
        if b.xp_module == xp_module:
            return b
    return Backend(xp_module, xp_module, xp_module)
