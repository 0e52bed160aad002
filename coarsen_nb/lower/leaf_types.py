"""The dtype and C type of a fused kernel's leaf: what the CUDA printer, the CuPy fusion and the numba fuser
all name their targets' and parameters' types by.

Kept apart from :mod:`coarsen_nb.lower.cuda_printer` (which re-exports them) because that module imports
SymPy's C printer and ``sympy.codegen.ast``: the numba fuser, which needs only the dtype of a target, paid
~0.03 s of CPU for them in every cold process (benchmarks/RESULTS.md, stop 44)."""

from __future__ import annotations


def leaf_ctype(t) -> tuple[str, str]:
    """(CuPy dtype name, C type) of a leaf of type ``t`` (None: float)."""
    kind = getattr(t, "kind", "float")
    if kind == "int":
        return "int64", "long long"
    if kind == "bool":
        return "bool", "bool"
    return "float64", "double"


def c_type_of(dtype: str) -> str:
    """The C type of a CuPy dtype name (shared with the fusion and the CuPy glue)."""
    return {"float64": "double", "int64": "long long", "bool": "bool"}[dtype]
