"""What a compiled function shows of itself after a call: :class:`Inspection`, a base of
:class:`~coarsen_nb.runtime.Coarsened`.

Calling (binding, specializing, running the entry functions) is :mod:`coarsen_nb.runtime`; everything here
reads the specialization the last call compiled and runs nothing of the user's: the generated module and its
parts, the plan, the selected SOIs and their graph, the branches the derivative ignores, the cost model's
figures for the last arguments' shapes, how a call on Dask arrays was chunked, and the module written out as a
file.  Apart because it is another idea than the call path, and each view imports its machinery (the SOI
report, graphviz, the cost model, the exporter) only when asked for.
"""

from __future__ import annotations

import copy
import os

from coarsen_nb import dask_arrays
from coarsen_nb.call_keys import shapes
from coarsen_nb.errors import CoarsenError
from coarsen_nb.specialize import Compiled


class Inspection:
    """The views of the last call's specialization (:class:`~coarsen_nb.runtime.Coarsened` keeps ``_last``,
    its arguments' ``_last_key`` and int values ``_last_ints``; ``_gated`` runs the front end where a cached
    one skipped it)."""

    name: str
    params: tuple
    wrt: tuple
    _last: Compiled | None
    _last_key: tuple
    _last_ints: dict

    def _compiled(self) -> Compiled:
        if self._last is None:
            raise CoarsenError(self.name, message=f"{self.name} has not been called yet; the SOIs depend on the "
                               "argument types", hint=f"call {self.name}(...) or .grad(...) once first")
        return self._last

    @property
    def source(self) -> str:
        """The generated module (of the last signature called)."""
        return self._compiled().source

    @property
    def module_parts(self) -> tuple:
        """:attr:`source` as the parts its writer printed, each with its role (:mod:`coarsen_nb.module_parts`:
        the docstring and imports, the text the backend carries, helpers, the entry functions)."""
        return self._compiled().parts

    @property
    def plan(self):
        return self._compiled().plan

    @property
    def sois(self) -> list:
        """The selected SOIs: inputs, outputs, source lines, SymPy expressions and derivatives."""
        from coarsen_nb.soi.report import records

        c = self._compiled()
        return records(c.plan, c.wrt)

    @property
    def discontinuities(self) -> list:
        """Branches and loop exits whose predicate depends on a differentiated input.

        The derivative ignores the jump there (it is the derivative of the
        branch taken); no operator-level tool tells you this.
        """
        from coarsen_nb.phi.discontinuities import find

        wrt = self._last.wrt if self._last is not None else (self.wrt or self.params)
        return find(self._gated, wrt)

    def soi_graph(self):
        """A ``graphviz.Digraph`` of the SOI partition (one coloured cluster per SOI)."""
        from coarsen_nb.soi.graph import soi_graph

        c = self._compiled()
        return soi_graph(c.plan, self._gated, c.wrt, self.discontinuities)

    @property
    def cost(self):
        """The cost model's figures for this selection and the last argument shapes.

        Counted on the lowered IR as array code (each statement of an SOI its own array), whatever the
        backend: what SOI selection trades off.  Under numba an SOI whose domain runs as one fused loop
        makes none of those temporaries: for it, these figures overstate allocations and bytes moved.
        How a call on Dask arrays was cut into chunks is :attr:`chunking`."""
        from coarsen_nb.lower.cost import estimate

        c = self._compiled()
        shapes_ = shapes(self._last_key)
        key = (shapes_, tuple(sorted(self._last_ints.items())))
        if key not in c.costs:
            c.costs[key] = estimate(c.plan, c.wrt, shapes_, ints=self._last_ints)
        return copy.deepcopy(c.costs[key])    # (the caller's to change)

    @property
    def chunking(self):
        """How the last call, if on Dask arrays, was chunked: a :class:`~coarsen_nb.dask_chunking.Chunking`
        (which way it ran and why, chunks, bytes per chunk, tasks, reductions; ``print`` says it in words),
        read from its chunks and lazy graph, nothing run.  None where the last call was not on Dask arrays."""
        return dask_arrays.chunking(self._compiled())

    def export(self, path, overwrite: bool = False) -> str:
        """Write the generated module (of the last signature called) as a standalone file.

        The file needs only what its backend's code imports, never coarsen_nb: NumPy (backend "numpy"),
        NumPy and Numba ("numba", the default where Numba imports; the header says which), CuPy, or
        Dask and NumPy.  For a module that needs only NumPy, compile with ``backend="numpy"``.

        It is written atomically (a reader never sees half of it), gets the mode any new file gets under
        the umask (0644 under umask 022), and an existing ``path`` is refused unless ``overwrite``: of
        two exports racing to one new path exactly one wins.  The refusal is a ``CoarsenError`` that is
        also a ``FileExistsError``; a missing directory is one that is also a ``FileNotFoundError``.
        Returns ``path``.
        """
        from coarsen_nb.export import write_module

        return write_module(os.fspath(path), self.source, overwrite)
