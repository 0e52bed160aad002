"""Words for the frontend's temporaries, from the user's code they stand for.

Desugaring invents variables (``$sl5`` for the fresh array of ``x[1:]``, ``$len4`` for its length,
``$p6`` for the value of ``np.sum(...)``).  Their names are the compiler's; the generated module,
error messages and widgets show what they hold instead (issue 13, item 6): the builder records, with
each temporary, the word this module makes from the AST it comes from (``x_tail``, ``n_x_tail``,
``sum_diff_sq``), and :mod:`coarsen_nb.lower.naming` prints it.  A word only proposes: the namer keeps
it unique and clear of Python's and the array module's names.  None means "no good word": the printer
then names the value after its shape, else after the kind of the temporary (``naming.KIND_WORDS``).
"""

from __future__ import annotations

import ast

MAX = 20      # longer words drop their last parts

_OPS = {ast.Add: "plus", ast.Sub: "minus", ast.Mult: "times", ast.Div: "over", ast.FloorDiv: "div",
        ast.Mod: "mod", ast.MatMult: "matmul", ast.Pow: "pow"}
_CMP = {ast.Gt: "gt", ast.GtE: "ge", ast.Lt: "lt", ast.LtE: "le", ast.Eq: "eq", ast.NotEq: "ne"}
#: calls named for what they make, not after their arguments (``where`` itself is NumPy's name)
_WHOLE = {"where": "choice", "zeros": "zeros_arr", "ones": "ones_arr", "array": "arr", "asarray": "arr",
          "stack": "stacked", "concatenate": "joined", "outer": "outer_prod"}
_PLAIN_OPS = {ast.Add: "total", ast.Sub: "diff", ast.Mult: "prod", ast.Div: "ratio", ast.MatMult: "matmul"}


def join(*parts: str | None) -> str | None:
    """``parts`` joined by ``_``, dropping the last ones while the word is longer than :data:`MAX`."""
    ps = [p for p in parts if p]
    while len(ps) > 1 and len("_".join(ps)) > MAX:
        ps = ps[:-1]
    word = "_".join(ps)
    return word if word and len(word) <= MAX + 6 else None


def temp_word(kind: str, node: ast.AST | None) -> str | None:
    """The word of a temporary of kind ``kind`` (``$len3``: ``len``) made for ``node``: a length or a
    loop's stop is ``n_`` what it measures, a start or step ``..._start``, anything else what it computes."""
    if kind in ("len", "stop"):
        return join("n", expr_word(node))
    if kind in ("start", "step"):
        return join(expr_word(node), kind)
    return expr_word(node)


def expr_word(node: ast.AST | None) -> str | None:
    """A word for what ``node`` computes: ``x`` for ``x``, ``x_tail`` for ``x[1:]``, ``diff_sq`` for
    ``(a - b) ** 2``, ``sum_diff_sq`` for ``np.sum(...)`` of it, ``where`` for ``np.where(...)``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = expr_word(node.value)
        return join(base, node.attr) if base and not _is_module(node.value) else node.attr
    if isinstance(node, ast.Subscript):
        return subscript_word(node)
    if isinstance(node, ast.Call):
        return _call_word(node)
    if isinstance(node, ast.BinOp):
        return _binop_word(node)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return join("neg", expr_word(node.operand))
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _CMP:
        return join(expr_word(node.left), _CMP[type(node.ops[0])])
    if isinstance(node, ast.IfExp):
        return "choice"
    return None


def subscript_word(node: ast.Subscript) -> str | None:
    """``x[1:]`` → ``x_tail``, ``x[:-1]`` → ``x_head``, ``x[2:5]`` → ``x_from2``, ``X[:, j]`` →
    ``X_col``, ``X[i, :]`` → ``X_row``, ``x[i]`` → ``x_i``."""
    base = expr_word(node.value) or "part"
    elts = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
    if len(elts) == 2 and any(isinstance(e, ast.Slice) for e in elts):
        whole = [isinstance(e, ast.Slice) and e.lower is None and e.upper is None for e in elts]
        if whole == [True, False] and not isinstance(elts[1], ast.Slice):
            return join(base, "col")
        if whole == [False, True] and not isinstance(elts[0], ast.Slice):
            return join(base, "row")
        return join(base, "part")
    if len(elts) == 1 and isinstance(elts[0], ast.Slice):
        return join(base, _slice_part(elts[0]))
    at = [expr_word(e) if not isinstance(e, ast.Constant) else str(e.value) for e in elts]
    return join(base, *at) if all(at) and all(w.isidentifier() or w.isdigit() for w in at) else base


def _slice_part(sl: ast.Slice) -> str:
    lo, hi, step = (_int(b) for b in (sl.lower, sl.upper, sl.step))
    if sl.step is not None:
        return "rev" if step == -1 and sl.lower is None and sl.upper is None else \
            f"every{step}" if isinstance(step, int) and step > 0 else "step"
    if sl.upper is None and isinstance(lo, int):
        return "tail" if lo == 1 else f"from{lo}" if lo >= 0 else f"last{-lo}"
    if sl.lower is None and isinstance(hi, int):
        return "head" if hi == -1 else f"first{hi}" if hi >= 0 else f"drop{-hi}"
    if sl.lower is None and sl.upper is None:
        return "all"
    return "part"


def _int(node: ast.AST | None) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and type(node.operand.value) is int:
        return -node.operand.value
    return None


def _call_word(node: ast.Call) -> str | None:
    func = node.func.attr if isinstance(node.func, ast.Attribute) else \
        node.func.id if isinstance(node.func, ast.Name) else None
    if func is None:
        return None
    if func == "len" and node.args:
        return join("n", expr_word(node.args[0]))
    if func in _WHOLE or not node.args:
        return _WHOLE.get(func, func)
    if isinstance(node.func, ast.Attribute) and not _is_module(node.func.value):
        return join(expr_word(node.func.value), func)         # x.sum(), X.reshape(...)
    return join(func, expr_word(node.args[0]))


def _binop_word(node: ast.BinOp) -> str | None:
    left, right = expr_word(node.left), expr_word(node.right)
    if isinstance(node.op, ast.Pow) and isinstance(node.right, ast.Constant):
        return join(left or "base", "sq" if node.right.value == 2 else "pow")
    simple = [isinstance(x, (ast.Name, ast.Constant)) for x in (node.left, node.right)]
    if all(simple) and left and right:
        return join(left, _OPS.get(type(node.op), "op"), right)
    if all(simple) and (left or right):
        return join(left or right, _OPS.get(type(node.op), "op"))
    return _PLAIN_OPS.get(type(node.op)) or join(left, _OPS.get(type(node.op), "op"))


def _is_module(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id in ("np", "numpy", "math", "jnp", "xp", "cp", "scipy", "special")
