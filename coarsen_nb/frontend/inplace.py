"""Whether ``x += v`` on a parameter ``x`` changes the caller's array, as far as the source tells.

On a NumPy array, ``x += v`` is an in-place add: the caller's array changes, as with ``x[i] = v``.
On a number it rebinds the local name only.  The compiled function computes values without side
effects, so the first is refused (like any write into a parameter array, with the ``x = x.copy()``
fix) and the second is fine.  The frontend knows no types, so it looks for uses that only an array
has: a subscript ``x[...]``, ``len(x)``, an attribute or method (``x.shape``, ``x.sum()``), a ``for``
over it, an operand of ``@``, or an argument of one of NumPy's reductions and array constructors.
Where the source shows none of these, ``x += v`` is taken as a number's (an array that is only
combined elementwise, ``x += 1.0; return np.sin(x)``, is not detected: its caller's array is not
changed by the compiled code).

The same holds for a name bound to a slice, ``y = u[1:]``: NumPy's ``y += v`` changes ``u`` through
the view, while a slice here is a copy; so ``+=`` on such a name is refused too, with the fixes.
"""

from __future__ import annotations

import ast

from coarsen_nb.frontend.slices import sliced_name

#: np.<name>(x, ...) that a number would not be passed to.
_ARRAY_FUNCTIONS = frozenset({"sum", "mean", "prod", "max", "min", "amax", "amin", "dot", "copy", "zeros_like",
                              "ones_like", "empty_like", "matmul", "atleast_1d", "atleast_2d", "atleast_3d",
                              "std", "var", "norm"})


def array_use(fdef: ast.FunctionDef, name: str) -> ast.AST | None:
    """A node of ``fdef`` that uses the variable ``name`` as only an array is used, or None."""
    def is_it(n: ast.AST) -> bool:
        return isinstance(n, ast.Name) and n.id == name

    for node in ast.walk(fdef):
        if isinstance(node, ast.Subscript) and is_it(node.value):
            return node
        if isinstance(node, ast.Attribute) and is_it(node.value):
            return node
        if isinstance(node, ast.For) and (is_it(node.iter) or (
                isinstance(node.iter, ast.Call) and any(is_it(a) for a in node.iter.args))):
            return node.iter
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult) and (is_it(node.left) or
                                                                                  is_it(node.right)):
            return node
        if isinstance(node, ast.Call) and any(is_it(a) for a in node.args):
            f = node.func
            if (isinstance(f, ast.Name) and f.id == "len") or \
                    (isinstance(f, ast.Attribute) and f.attr in _ARRAY_FUNCTIONS):
                return node
    return None


def refuse_inplace_parameter(unit, private: dict[str, int], target: ast.Name) -> None:
    """A CoarsenError for ``x += v`` (``target`` is ``x``) on a parameter of ``unit`` not yet rebound
    (``private``: the line of each parameter's rebinding, as for element writes) that the source uses as
    an array; or on a name assigned a slice anywhere in the function (``y = u[1:]``: NumPy's ``y += v``
    changes ``u`` through the view, and here a slice is a copy)."""
    name = target.id
    view = next((s for s in ast.walk(unit.node) if isinstance(s, ast.Assign) and sliced_name(s.value) is not None
                 and any(isinstance(t, ast.Name) and t.id == name for t in s.targets)), None)
    if view is not None:
        source = ast.unparse(view.value)
        raise unit.error("in-place update of a slice", target,
                         f"{name!r} is the slice {source} (line {view.lineno + unit.source.first_line - 1}), and "
                         f"NumPy would change {sliced_name(view.value)!r} through it: write `{source} += ...` to "
                         f"change it, or `{name} = {name} + ...` for a new array",
                         message=f"in-place update of {name!r}, a slice of {sliced_name(view.value)!r}")
    if name not in {a.arg for a in unit.node.args.args} or target.lineno > private.get(name, target.lineno):
        return
    evidence = array_use(unit.node, name)
    if evidence is not None:
        raise unit.error("in-place update of a parameter array", target,
                         f"{name!r} is an array (line {evidence.lineno + unit.source.first_line - 1} uses it as "
                         f"one), and Python would change the caller's array here, which compiled code does not: "
                         f"make a private copy, `{name} = {name}.copy()`, as the function's first line, or write "
                         f"`{name} = {name} + ...`", message=f"in-place update of the parameter array {name!r}")
