"""Which function of math, NumPy or SciPy a dotted call names, and what to say when it is none we support.

A call ``a.b.c(...)`` is a method of a value (``x.sum()``), a function of a module's submodule
(``np.linalg.solve``), or a function of a module the user imported under a name of their own
(``sc.expit`` after ``import scipy.special as sc``, ``la.solve`` after ``import numpy.linalg as la``).
These functions read the attribute chain and the cell's globals (no IR), so the expression
translator (:mod:`coarsen_nb.frontend.exprs`) asks them before it translates the call; the hint
names the functions that are supported in the module the user reached for.
"""

from __future__ import annotations

import ast
import types

from coarsen_nb import primitives


def _global_chain(func: ast.Attribute, local_names: set[str]) -> tuple[str, list[str]] | None:
    """``("np", ["linalg", "solve"])`` for ``np.linalg.solve``: the free name an attribute chain starts from
    and the attributes after it, or None when it starts from a local or an expression."""
    parts = [func.attr]
    node = func.value
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id in local_names:
        return None
    return node.id, parts[::-1]


def submodule_function(func: ast.Attribute, resolve, local_names: set[str]) -> str | None:
    """``"np.linalg.solve"`` when ``func`` is a function of a submodule of math/NumPy, else None."""
    chain = _global_chain(func, local_names)
    if chain is None or len(chain[1]) < 2 or resolve.module(chain[0]) is None:
        return None
    return ".".join([chain[0], *chain[1]])


def module_function(func: ast.Attribute, resolve, local_names: set[str]):
    """``(dotted name, primitive or None)`` when ``func`` is an attribute of a module the user imported
    under any name (``sc.expit`` after ``import scipy.special as sc``, ``scipy.special.expit``,
    ``la.solve`` after ``import numpy.linalg as la``), else None (a method of a value)."""
    chain = _global_chain(func, local_names)
    if chain is None:
        return None
    root, (*modules, attr) = chain
    obj = resolve.global_object(root)
    if not isinstance(obj, types.ModuleType):
        return None
    for name in modules:
        obj = getattr(obj, name, None)
        if not isinstance(obj, types.ModuleType):
            return None
    target = getattr(obj, attr, None)
    return f"{obj.__name__}.{attr}", (primitives.of_object(target) if target is not None else None)


def unsupported_hint(dotted: str) -> str:
    """The hint of the error for ``dotted``, a function of a module that is not supported: the functions
    of that module that are, and to compute it outside and pass the result in."""
    if dotted.startswith("scipy.special."):
        known = ", ".join(sorted(p.scipy.split(".", 1)[1] for p in primitives.PRIMITIVES.values()
                                 if p.scipy is not None))
        return (f"the scipy.special functions supported are {known}: compute {dotted}(...) outside the "
                "compiled function and pass its result in as a parameter")
    if ".linalg." in dotted:
        known = ", ".join(f"np.{k}" for k in sorted(primitives.SUBMODULE_FUNCTIONS) if k.startswith("linalg."))
        return (f"the linear algebra supported is @, np.dot, np.einsum, np.trace and {known}: compute "
                f"{dotted}(...) outside the compiled function and pass its result in as a parameter")
    return (f"only functions of math and np themselves are supported: compute {dotted}(...) outside the "
            "compiled function and pass its result in as a parameter")
