"""The helper functions a generated module may define: each one's text, and what its code uses.

The helpers are plain Python functions, written against the generated module's ``xp`` (NumPy or CuPy)
and ``math``, in :mod:`.scalar_helpers`, :mod:`.array_helpers`, :mod:`.index_helpers`,
:mod:`.special_helpers` and :mod:`.extrema_helpers`, where the tests call them as they are.  A generated
module must not import coarsen_nb, so it carries the text of each helper it uses (``inspect.getsource``):
what is there is what an exported file contains.

What a helper calls is read from its code object (the names it loads, nested functions included), never
from a table kept by hand: :func:`closure` gives the helpers a module defines from those its own code
calls, and :attr:`Helper.names` says whether a helper needs ``math`` or ``xp``.  A backend's own helper
(numba's, :mod:`.numba_helpers`; CuPy's kernel cache) is hand-written text, read the same way once
compiled (:meth:`Helper.of_source`); a loop function a fuser prints is given the names its printers
registered (:class:`Helper` itself).
"""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from coarsen_nb.lower import array_helpers, extrema_helpers, index_helpers, scalar_helpers, special_helpers


@dataclass(frozen=True)
class Helper:
    """One function a generated module may define: its name, its text, and the names its code loads
    (the other helpers it calls, ``math``, ``xp``; attribute names too, which name no helper)."""

    name: str
    # its text, or the function of this package's helper modules whose text it is (read on first use:
    # :attr:`source`)
    written: str | types.FunctionType
    names: frozenset[str]
    # whether it writes into an argument (a fused loop that also scatters in place): a call to it is kept even
    # where nothing reads what it returns (lir_passes.drop_dead_assignments)
    writes: bool = False
    # the function as records, where the back half wrote it (a fuser's loop function): what lets a caller that
    # reads only some of its results call a copy computing only those (lir_liveness.drop_dead_code's narrow)
    record: object = None

    @property
    def source(self) -> str:
        """Its text.  A helper function's is read from its file when a module first prints it, not when this
        table is made: ``inspect.getsource`` of every helper (58, tokenizing their files) was ~25 ms of each
        cold process's import of the back half, which prints a handful of them."""
        return self.written if isinstance(self.written, str) else _text_of(self.written)

    @classmethod
    def of_function(cls, function: types.FunctionType) -> Helper:
        """A helper of this package's helper modules: its text as written, its names from its code."""
        return cls(function.__name__, function, code_names(function.__code__))

    @classmethod
    def of_source(cls, source: str) -> Helper:
        """A hand-written helper kept as text (a backend's own version): compiled to read its names.  The
        text defines one function (and may set module-level names it uses, as CuPy's kernel cache does)."""
        module = compile(source, "<helper>", "exec")
        function = next(c for c in module.co_consts if isinstance(c, types.CodeType))
        return cls(function.co_name, source, code_names(module) - {function.co_name})


@functools.cache
def _text_of(function: types.FunctionType) -> str:
    """A helper function's text as written (read once per process)."""
    return inspect.getsource(function)


def code_names(code: types.CodeType) -> frozenset[str]:
    """The names ``code`` and the functions nested in it load (``co_names``)."""
    nested = (code_names(c) for c in code.co_consts if isinstance(c, types.CodeType))
    return frozenset(code.co_names).union(*nested)


def closure(called: Iterable[str], table: Mapping[str, Helper]) -> set[str]:
    """``called`` and every helper of ``table`` they call, transitively: the helpers a module defines
    when its own code calls ``called``."""
    out: set[str] = set()
    todo = list(called)
    while todo:
        name = todo.pop()
        if name not in out:
            out.add(name)
            todo += sorted(table[name].names & table.keys())
    return out


#: every helper of the NumPy-namespace modules, by name
HELPERS: dict[str, Helper] = {f.__name__: Helper.of_function(f) for module in
                              (scalar_helpers, array_helpers, index_helpers, special_helpers, extrema_helpers)
                              for f in module.HELPER_FUNCTIONS}
