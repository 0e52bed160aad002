"""The types of a compiled function's arguments: what the runtime keys a specialization on.

:class:`T` is the type record type inference (:mod:`coarsen_nb.phi.types`) works with; it and
:func:`signature_of` live here, apart from inference, because every call reads them: a call that finds
its specialization compiled (or in the pipeline cache) must not import the rule table and SymPy.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class T:
    kind: str
    ndim: int = 0

    @property
    def is_array(self) -> bool:
        return self.kind not in ("shape", "tuple") and self.ndim > 0

    @property
    def differentiable(self) -> bool:
        return self.kind == "float"

    def __str__(self) -> str:
        return f"{self.kind}[{self.ndim}]" if self.ndim else self.kind


FLOAT, INT, BOOL = T("float"), T("int"), T("bool")
BOTTOM = T("undef")


def signature_of(args) -> tuple[T, ...]:
    """The type of each positional argument (a NumPy array, a float, an int, a bool)."""
    out = []
    for a in args:
        ndim = getattr(a, "ndim", 0)
        dtype = getattr(a, "dtype", None)
        if isinstance(a, bool) or (dtype is not None and dtype.kind == "b"):
            out.append(T("bool", ndim))
        elif isinstance(a, int) or (dtype is not None and dtype.kind in "iu"):
            out.append(T("int", ndim))
        else:
            out.append(T("float", ndim))
    return tuple(out)
