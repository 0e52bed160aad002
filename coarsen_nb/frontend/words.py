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

_DANGLING = {"plus", "minus", "times", "over", "div", "mod", "pow", "gt", "ge", "lt", "le", "eq", "ne",
             "matmul", "neg", "inv", "n", "sum", "at", "scaled", "shifted"}
_OPS = {ast.Add: "plus", ast.Sub: "minus", ast.Mult: "times", ast.Div: "over", ast.FloorDiv: "div",
        ast.Mod: "mod", ast.MatMult: "matmul", ast.Pow: "pow"}
_CMP = {ast.Gt: "gt", ast.GtE: "ge", ast.Lt: "lt", ast.LtE: "le", ast.Eq: "eq", ast.NotEq: "ne"}
#: calls named for what they make, not after their arguments (``where`` itself is NumPy's name)
_WHOLE = {"where": "choice", "zeros": "zeros_arr", "ones": "ones_arr", "array": "arr", "asarray": "arr",
          "stack": "stacked", "concatenate": "joined", "outer": "outer_prod"}
_PLAIN_OPS = {ast.Add: "total", ast.Sub: "diff", ast.Mult: "prod", ast.Div: "ratio", ast.MatMult: "matmul"}


def join(*parts: str | None) -> str | None:
    """``parts`` joined by ``_``; a word longer than :data:`MAX` loses its last pieces, and an operator's
    word left dangling at its end (``log_spot_i_over`` -> ``log_spot_i``)."""
    ps = [q for p in parts if p for q in p.split("_") if q]
    if len("_".join(ps)) > MAX:
        while len(ps) > 1 and len("_".join(ps)) > MAX:
            ps = ps[:-1]
        while len(ps) > 1 and ps[-1] in _DANGLING:
            ps = ps[:-1]
    word = "_".join(ps)
    return word if word and len(word) <= MAX + 6 else None


def temp_word(kind: str, node: ast.AST | None) -> str | None:
    """The word of a temporary of kind ``kind`` (``$len3``: ``len``) made for ``node``: a length or a
    loop's stop is ``n_`` what it measures, a start or step ``..._start``, anything else what it computes."""
    if kind in ("len", "stop"):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range" and node.args:
            stop = expr_word(node.args[0] if len(node.args) == 1 else node.args[1])     # range(n): n
            return stop if stop and stop.startswith("n_") else join("n", stop)
        return join("n", expr_word(node))
    if kind in ("start", "step"):
        return join(expr_word(node), kind)
    return expr_word(node)


def _fits(*parts: str | None) -> str | None:
    """``parts`` joined, where every part is known and the word is at most :data:`MAX` long."""
    word = "_".join(p or "" for p in parts)
    return word if all(parts) and len(word) <= MAX else None


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
    """``x[1:]`` → ``x_tail``, ``x[:-1]`` → ``x_head``, ``x[2:5]`` → ``x_part``, ``X[:, j]`` →
    ``X_col``, ``X[i, :]`` → ``X_row``, ``x[i]`` → ``x_i``, ``x[0]`` → ``x_at0``, ``X.shape[1]`` → ``n_X_cols``."""
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
    if isinstance(node.value, ast.Attribute) and node.value.attr == "shape" and len(elts) == 1 and \
            isinstance(_int(elts[0]), int):                     # X.shape[1]: n_X_cols
        k = _int(elts[0])
        return join("n", expr_word(node.value.value), {0: "rows", 1: "cols", -1: "last_dim"}.get(k, f"dim{k}"))
    at = [expr_word(e) if _int(e) is None else position(_int(e)) for e in elts]
    return join(base, *at) if all(at) and all(w.isidentifier() for w in at) else base


def position(k: int) -> str:
    """A constant index as a word: ``at0``, ``at2``, ``last`` (-1), ``back2`` (-2) (the printer's reads
    say it too, ``lower/naming.py``)."""
    return f"at{k}" if k >= 0 else "last" if k == -1 else f"back{-k}"


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


#: NumPy's other spellings of one function: the word is the function's, however it is spelled
_ALIASES = {"amin": "min", "amax": "max", "absolute": "abs", "around": "round", "concat": "concatenate"}


def _call_word(node: ast.Call) -> str | None:
    func = node.func.attr if isinstance(node.func, ast.Attribute) else \
        node.func.id if isinstance(node.func, ast.Name) else None
    if func is None:
        return None
    func = _ALIASES.get(func, func)             # np.amin is np.min, as x.min() is
    if func == "len" and node.args:
        return join("n", expr_word(node.args[0]))
    if isinstance(node.func, ast.Attribute) and not _is_module(node.func.value):
        # x.sum() is np.sum(x): the method compiles to the function's code, so it reads as the function does
        return join(func, expr_word(node.func.value))
    if func in _WHOLE or not node.args:
        return _WHOLE.get(func, func)
    return join(func, expr_word(node.args[0]))


def _binop_word(node: ast.BinOp) -> str | None:
    left, right = expr_word(node.left), expr_word(node.right)
    if isinstance(node.op, ast.Pow) and isinstance(node.right, ast.Constant):
        return join(left or "base", "sq" if node.right.value == 2 else "pow")
    simple = [isinstance(x, (ast.Name, ast.Constant)) for x in (node.left, node.right)]
    if all(simple) and left and right:
        return join(left, _OPS.get(type(node.op), "op"), right)
    if all(simple) and (left or right):
        return join(left or right, "scaled" if isinstance(node.op, (ast.Mult, ast.Div)) else "shifted")
    return _PLAIN_OPS.get(type(node.op)) or join(left, _OPS.get(type(node.op), "op"))


def _is_module(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id in ("np", "numpy", "math", "jnp", "xp", "cp", "scipy", "special")


_IR_OPS = {"+": "plus", "-": "minus", "*": "times", "/": "over", "//": "div", "%": "mod", "@": "matmul"}
_IR_PLAIN = {"+": "total", "-": "diff", "*": "prod", "/": "ratio", "@": "matmul"}
_IR_CMP = {">": "gt", ">=": "ge", "<": "lt", "<=": "le", "==": "eq", "!=": "ne"}


def ir_word(e, name_word) -> str | None:
    """A word for the IR expression ``e`` (the one-operation temporaries of L = 1, phi/operations.py):
    ``x[i]`` → ``x_i``, ``v ** 2`` → ``v_sq``, ``exp(z)`` → ``exp_z``, ``a * b`` → ``a_times_b``;
    ``name_word(name)`` is the word of an SSA name, or None."""
    from coarsen_nb import ir

    def leaf(x) -> str | None:
        if isinstance(x, ir.Name):
            return name_word(x.id)
        if isinstance(x, ir.Const) and type(x.value) is int and x.value >= 0:
            return str(x.value)
        return None

    if isinstance(e, ir.Name):
        return name_word(e.id)
    if isinstance(e, ir.Index):       # x[i]: x_i; w[0]: w_at0; t[-1]: t_last
        at = [position(i.value) if isinstance(i, ir.Const) and type(i.value) is int else leaf(i) for i in e.index]
        return join(leaf(e.value), *(at if all(at) else ["at"]))
    if isinstance(e, ir.BinOp):
        left, right = leaf(e.left), leaf(e.right)
        if e.op == "**" and isinstance(e.right, ir.Const):
            return join(left or "base", "sq" if e.right.value == 2 else "pow")
        if isinstance(e.left, ir.Const) or isinstance(e.right, ir.Const):      # 0.5 * v, v - 1
            how = "scaled" if e.op in ("*", "/") else "shifted"
            return _fits(left if isinstance(e.right, ir.Const) else right, how) or how
        return _fits(left, _IR_OPS.get(e.op, "op"), right) or _IR_PLAIN.get(e.op)
    if isinstance(e, ir.UnaryOp) and e.op == "-":
        return join("neg", leaf(e.operand))
    if isinstance(e, ir.Compare):
        return join(leaf(e.left), _IR_CMP.get(e.op, "cmp"))
    if isinstance(e, ir.Call):
        func = e.func.split(".")[-1]
        return _WHOLE.get(e.func) or _fits(func, *[leaf(a) for a in e.args[:2]]) or _fits(func, "val")
    if isinstance(e, ir.IfExp):
        return "choice"
    return None
