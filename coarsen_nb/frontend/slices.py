"""Slices, ``x[a:b:s]`` read and written, desugared to counted loops of element reads and writes.

The later passes know element reads ``x[i]`` and writes ``t[k] = v`` of a counted loop, and the
lifter gives a loop ``for k in range(m): t[k] = x[a + s·k]`` a closed form (an RWrite: a vectorized
gather, no iteration at run time, with its adjoint a scatter-add).  So a slice becomes exactly that
loop, and nothing after the frontend knows slices.

Python's meaning (``slice.indices``): for an axis of length n and a constant step s ≠ 0,

* a bound b < 0 counts from the end, ``b + n``; then it is clamped to ``[0, n]`` (s > 0) or to
  ``[-1, n - 1]`` (s < 0);
* an omitted start is 0 (s > 0) or n - 1 (s < 0); an omitted stop is n (s > 0) or "before 0" (s < 0);
* the length is ``max(0, ⌈(stop - start) / s⌉)``, and element k is ``start + s·k``.

The normalized start and the length are computed once, as int IR values, before the loop; a
constant bound picks its branch here, a bound of unknown sign is an ``IfExp``.  With a step s > 0 a
constant start b >= 0 and a constant stop c < 0 need no clamping: ``max(0, ⌈(n + c - b) / s⌉)`` is the
length whatever n is (past the end, the length is 0 and the start is never read), so ``x[1:]`` is
``start = 1``, ``length = max(0, n - 1)``.

A read of a variable with constant bounds in a simple statement (``return np.sum((x[1:] - x[:-1]) ** 2)``)
has its length, bounds and fresh array computed at the start of the statement, and ``len(x)`` once
(:mod:`coarsen_nb.frontend.slice_setups`): the statement is then one SOI, as the loop
``for i in range(len(x) - 1)`` is, and the adjoint of each read goes straight into ``x``'s.

A read ``x[a:b:s]`` (``X[i, a:b]``, ``X[a:b, j]``: one sliced axis) is a fresh 1-D array::

    $slN = np.zeros(length)
    for $iN in range(length):
        $slN[$iN] = x[start + s * $iN]          # X[i, start + s * $iN] for a row

and a block ``X[a:b, c:d]`` (``img[:, 1:]``; ``X[a:b]`` of an array the function also indexes with two
indices, a block of rows) a fresh 2-D one, ``np.zeros((rows, cols))`` filled by two nested loops.  The
inner loop gets its closed form (one vectorized row at a time); the outer one stays iterated, row by
row (an element write in a loop nested in another closed-form loop is a documented limit of the
lifter), with no fallback.

A write ``u[a:b:s] = v`` first makes ``$vN = np.zeros(length) + v`` — NumPy's broadcast of a
number, or an array of the slice's length, to the slice — so v is evaluated once, before any
element of ``u`` changes (``u[1:] = u[:-1]`` reads the old values, as NumPy does), then writes
``u[start + s * $iN] = $vN[$iN]``.  ``u[a:b] += v`` is the read, the operation and the write
(:meth:`~coarsen_nb.frontend.parse._Builder._s_AugAssign`), which is what NumPy's in-place add of
the view computes.

The array a slice loop writes is the slice's value: the write's closed form (a vectorized gather or
scatter) joins the SOI of the array code that uses it.

A slice read is a copy here and a view in NumPy: the two differ only when the array or the slice
is written afterwards (``y = u[1:]`` then ``u[1] = 0``), which :func:`sliced_name` lets the alias
check refuse.  (The generated code reads a float array's slice through a view, ``_take``, where no
write can reach it: :func:`coarsen_nb.lower.trivial.whole_fills`.)
3-D slices and variable steps are refused with what to write instead.
A new axis, ``x[:, None]`` (``np.newaxis``), is the read without it followed by an ``expand_dims``
step (:meth:`SliceTranslator._new_axes`); a write through a new axis is refused.
The frontend knows no ranks: ``X[a:b]`` of a 2-D array the source does not show as one (no
``X[i, j]``, no ``X.shape[1]``) is read as 1-D and fails when called, at its line (NumPy's "setting an
array element with a sequence").
"""

from __future__ import annotations

import ast

from coarsen_nb import ir
from coarsen_nb.frontend import words
from coarsen_nb.frontend.slice_setups import SliceSetups

_NEWAXIS_HINT = ("a new axis can be read, not written: assign to the array itself (`u[:] = ...`), and "
                 "add the axis to the value instead")


def has_slice(index: ast.AST) -> bool:
    """Whether a subscript's index holds a slice, ``None``/``np.newaxis`` or ``...``."""
    elts = index.elts if isinstance(index, ast.Tuple) else [index]
    return any(isinstance(e, ast.Slice) or _is_newaxis(e) or _is_ellipsis(e) for e in elts)


def sliced_name(value: ast.AST) -> str | None:
    """``u`` when ``value`` is a slice of the variable ``u`` (``u[1:]``, ``U[:, j]``), else None."""
    if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name) and has_slice(value.slice):
        return value.value.id
    return None


def ceil_quotient(temp, span: ir.Expr, step: int, node: ast.AST) -> ir.Expr:
    """``⌈span / step⌉`` for a constant int ``step > 0``: the count of a range or slice of that span.

    The integer ``(span + step - 1) // step``, exact (tests/lower/test_integer_arithmetic.py).
    ``temp`` names a value (the builder's).
    """
    if step == 1:
        return span
    return ir.BinOp("//", ir.BinOp("+", span, ir.Const(step - 1)), ir.Const(step))


def _is_2d(fdef: ast.FunctionDef, name: str) -> bool:
    """Whether the function indexes ``name`` with two indices (``X[i, j]``, ``X[:, j]``, new axes aside) or reads
    ``name.shape[1]``: then ``name[a:b]`` is a block of rows, ``name[a:b, :]``, not a 1-D slice."""
    for n in ast.walk(fdef):
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id == name \
                and isinstance(n.slice, ast.Tuple) and len([e for e in n.slice.elts if not _is_newaxis(e)]) == 2:
            return True
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Attribute) and n.value.attr == "shape" \
                and isinstance(n.value.value, ast.Name) and n.value.value.id == name \
                and isinstance(n.slice, ast.Constant) and n.slice.value == 1:
            return True
    return False


def _is_ellipsis(e: ast.AST) -> bool:
    return isinstance(e, ast.Constant) and e.value is Ellipsis


def _is_newaxis(e: ast.AST) -> bool:
    return (isinstance(e, ast.Constant) and e.value is None) or \
        (isinstance(e, ast.Attribute) and e.attr == "newaxis")


class SliceTranslator(SliceSetups):
    """Mixin of :class:`~coarsen_nb.frontend.exprs.ExprTranslator`: slice reads, and the CFG builder's
    slice writes."""

    # -- reads ----------------------------------------------------------------------------

    def slice_read(self, node: ast.Subscript) -> ir.Expr:
        """``node`` (a subscript with a slice) as the name of the fresh array it reads."""
        elts = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        if any(_is_newaxis(e) for e in elts):
            return self._new_axes(node, elts)
        with self._set_up(node):
            base = self.temp(self.expr(node.value), "sb", node.value)
            axes = self._slice_of(node, base)
            n = next(self.counter)
            ranges = [a for a in axes if a[0] == "range"]
            word = words.subscript_word(node)
            zeros = self._fresh_array([a[3] for a in ranges], node)
        # $slN starts as the zeros where its loop starts, in the loop's SOI, which so reads the zeros step
        # itself: the write that fills them is provably whole (lower/trivial.py's whole_fills)
        out = self._hidden(f"$sl{n}", zeros, node, word)
        ks = [self._hidden(f"$i{n}_{d}", None, node, "k") for d in range(len(ranges))]
        if isinstance(node.value, ast.Name) and base == self.expr(node.value):
            src = node.value.id      # the variable itself: its adjoint then gets the slice's scatter directly
        else:
            src = self._hidden(f"$sb{n}", base, node, words.join(self.word_of(base), "src"))
        source = self._subscript(ast.Name(src, ast.Load()), axes, ks, node)
        self._loop_nest(ks, [a[3] for a in ranges], self._at(out, ks, ast.Store()), source, node)
        return ir.Name(self.rename[out])

    def _new_axes(self, node: ast.Subscript, elts: list[ast.expr]) -> ir.Expr:
        """``x[:, None]``, ``X[None, 1:, :]``, ``x[..., None]``: the read without its new axes, then one
        ``expand_dims`` step per new axis (rules/arrays.py), at its position in the result, counted from
        the start, or from the end for a new axis after an ``...``."""
        rest = [e for e in elts if not _is_newaxis(e)]
        front, back, out, after_dots = [], [], 0, False
        for k, e in enumerate(elts):
            if _is_ellipsis(e):
                after_dots = True
            elif _is_newaxis(e) and after_dots:
                back.append(-sum(1 for f in elts[k:] if isinstance(f, ast.Slice) or _is_newaxis(f)))
            elif _is_newaxis(e):
                front.append(out)
            if isinstance(e, ast.Slice) or _is_newaxis(e):
                out += 1
        whole = [e for e in rest if not _is_ellipsis(e)]
        if all(isinstance(e, ast.Slice) and e.lower is None and e.upper is None and e.step is None for e in whole):
            value = self.temp(self.expr(node.value), "sb", node.value)      # x[:, None] adds an axis to x itself
        else:
            index = rest[0] if len(rest) == 1 else ast.Tuple(rest, ast.Load())
            value = self.temp(self.expr(ast.copy_location(ast.Subscript(node.value, index, ast.Load()), node)),
                              "sb", node)
        for axis in front + sorted(back, reverse=True):
            value = self.temp(ir.Call("expand_dims", (value,), (("axis", axis),)), "p", node)
        return value

    # -- writes ---------------------------------------------------------------------------

    def slice_store(self, target: ast.Subscript, value: ir.Expr, s: ast.stmt) -> None:
        """``target = value`` where ``target`` (a subscript of a written array) holds a slice."""
        name = target.value.id
        base = ir.Name(self.rename.get(name, name))
        axes = self._slice_of(target, base)
        n = next(self.counter)
        lengths = [a[3] for a in axes if a[0] == "range"]
        word = words.join(words.subscript_word(target), "new")
        spread = self.temp(ir.BinOp("+", self._fresh_array(lengths, s), value), "v", s, word)
        values = self._hidden(f"$sv{n}", spread, s, word)
        ks = [self._hidden(f"$i{n}_{d}", None, s, "k") for d in range(len(lengths))]
        dest = self._subscript(ast.Name(name, ast.Load()), axes, ks, s)
        dest.ctx = ast.Store()
        self._loop_nest(ks, lengths, dest, self._at(values, ks, ast.Load()), s)

    # -- the pieces -----------------------------------------------------------------------

    def _slice_of(self, node: ast.Subscript, base: ir.Expr) -> list[tuple]:
        """Each axis of the subscript: ``("at", index)`` (evaluated), or ``("range", start, step, length)``
        for a sliced axis (normalized start, constant step, length)."""
        elts = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        written = ast.unparse(node)
        word, base_word = words.subscript_word(node), self.word_of(base)
        for e in elts:
            if _is_newaxis(e):
                raise self.unit.error("new axis (None / np.newaxis) in an index", e, _NEWAXIS_HINT,
                                      message=f"unsupported index {written}: a new axis")
            if _is_ellipsis(e):
                raise self.unit.error("Ellipsis (...) in an index", e, "write one index or slice per axis, "
                                      "e.g. X[:, j]")
        if len(elts) > 2:
            raise self.unit.error("slice of an array of more than 2 dimensions", node,
                                  "slice 1-D or 2-D arrays, or loop over the other indices")
        if len(elts) == 1 and isinstance(node.value, ast.Name) and _is_2d(self.unit.node, node.value.id):
            elts.append(ast.copy_location(ast.Slice(None, None, None), node))      # X[a:b] is X[a:b, :]
        axes: list[tuple] = []
        for axis, e in enumerate(elts):
            if not isinstance(e, ast.Slice):
                axes.append(("at", self.temp(self.expr(e), "ix", e)))
                continue
            step = self._step(e)
            shape = None if axis == 0 else \
                self._shared(ir.Attr(base, "shape"), "p", node, words.join(base_word, "shape"))
            size = self._shared(ir.Call("len", (base,)) if axis == 0 else ir.Index(shape, (ir.Const(axis),)),
                                "len", node, words.join("n", base_word))
            lo = self._bound(e.lower, size, step, "start", node)
            hi = self._bound(e.upper, size, step, "stop", node)
            if step < 0:
                span = ir.BinOp("-", lo, hi)
            else:
                span = hi if lo == ir.Const(0) else ir.BinOp("-", hi, lo)
            span = ceil_quotient(self.temp, span, abs(step), node)
            span = self._shared(span, "len", node, words.join("span", word))
            axes.append(("range", lo, step,
                         self._shared(ir.Call("max", (ir.Const(0), span)), "len", node, words.join("n", word))))
        return axes

    def _step(self, sl: ast.Slice) -> int:
        if sl.step is None:
            return 1
        v = self.expr(sl.step)
        if not isinstance(v, ir.Const) or isinstance(v.value, bool) or not isinstance(v.value, int):
            raise self.unit.error("slice with a variable step", sl.step,
                                  "use a constant step (`x[a:b:2]`, `x[::-1]`), or loop over "
                                  "range(a, b, s) and read x[i]")
        if v.value == 0:
            raise self.unit.error("slice step of zero", sl.step, "use a non-zero step",
                                  message="slice step cannot be zero")
        return v.value

    def _bound(self, bound: ast.AST | None, size: ir.Expr, step: int, which: str, node: ast.AST) -> ir.Expr:
        """A start or stop as ``slice.indices`` normalizes it, as an int IR value."""
        if bound is None and step > 0:
            return ir.Const(0) if which == "start" else size
        word = words.join(words.subscript_word(node), which) if isinstance(node, ast.Subscript) else which
        if bound is None:
            return self.temp(ir.BinOp("-", size, ir.Const(1)), "len", node, word) if which == "start" else ir.Const(-1)
        b = self.temp(self.expr(bound), "ix", bound)
        if step > 0 and isinstance(b, ir.Const) and (b.value >= 0) == (which == "start"):
            # a start >= 0 or a stop < 0: the length needs no clamp (module docstring)
            return b if b.value >= 0 else self._shared(ir.BinOp("-", size, ir.Const(-b.value)), "ix", node, word)
        low, high = (ir.Const(0), size) if step > 0 else (ir.Const(-1), ir.BinOp("-", size, ir.Const(1)))
        from_end = ir.Call("max", (ir.BinOp("+", b, size), low))
        from_start = ir.Call("min", (b, high))
        if isinstance(b, ir.Const):
            return self.temp(from_end if b.value < 0 else from_start, "ix", node, word)
        return self.temp(ir.IfExp(ir.Compare("<", b, ir.Const(0)), from_end, from_start), "ix", node, word)

    def _fresh_array(self, lengths: list[ir.Expr], node: ast.AST) -> ir.Expr:
        """``np.zeros(length)`` or ``np.zeros((rows, cols))``, as a constructor call of its own step."""
        shape = lengths[0] if len(lengths) == 1 else ir.Tuple(tuple(lengths))
        return self.temp(ir.Call("zeros", (shape,)), "p", node, words.join(words.expr_word(node), "zeros"))

    def _hidden(self, name: str, value: ir.Expr | None, node: ast.AST, word: str | None = None) -> str:
        """A compiler variable the desugared AST can name: ``value`` assigned to it (unless None), printed
        as ``word``."""
        frame = self.frame
        frame.rename[name] = frame.prefix + name
        frame.locals.add(name)
        self.name_temp(frame.prefix + name, word)
        if value is not None:
            self.emit(frame.prefix + name, value, node)
        return name

    def _subscript(self, base: ast.expr, axes: list[tuple], ks: list[str], node: ast.AST) -> ast.Subscript:
        """``base[...]``: a fixed axis's index, a sliced axis's ``start + step·k`` of its own counter."""
        counters = iter(ks)
        parts = [self._as_ast(a[1], node) if a[0] == "at" else self._element(a[1], a[2], next(counters), node)
                 for a in axes]
        return ast.Subscript(base, parts[0] if len(parts) == 1 else ast.Tuple(parts, ast.Load()), ast.Load())

    @staticmethod
    def _at(name: str, ks: list[str], ctx: ast.expr_context) -> ast.Subscript:
        """``name[k0]`` or ``name[k0, k1]``."""
        index = [ast.Name(k, ast.Load()) for k in ks]
        return ast.Subscript(ast.Name(name, ast.Load()), index[0] if len(index) == 1 else
                             ast.Tuple(index, ast.Load()), ctx)

    def _as_ast(self, value: ir.Expr, node: ast.AST) -> ast.expr:
        """An evaluated IR value (a constant or a name) as AST the translator reads back."""
        if isinstance(value, ir.Const):
            return ast.Constant(value.value)
        return ast.Name(self._hidden(f"$ix{next(self.counter)}", value, node, self.word_of(value)), ast.Load())

    def _loop_nest(self, ks: list[str], lengths: list[ir.Expr], target: ast.expr, value: ast.expr,
                   node: ast.AST) -> None:
        """``for k0 in range(n0): [for k1 in range(n1):] target = value``, as AST at ``node``'s position."""
        body: list[ast.stmt] = [ast.Assign(targets=[target], value=value)]
        for k, length in reversed(list(zip(ks, lengths, strict=True))):
            body = [ast.For(target=ast.Name(k, ast.Store()),
                            iter=ast.Call(ast.Name("range", ast.Load()), [self._as_ast(length, node)], []),
                            body=body, orelse=[])]
        for sub in ast.walk(body[0]):
            ast.copy_location(sub, node)
        self.stmts(body)

    def _element(self, start: ir.Expr, step: int, k: str, node: ast.AST) -> ast.expr:
        """``start + step·k`` as AST, without the terms that are 0 or 1."""
        term: ast.expr = ast.Name(k, ast.Load())
        if step != 1:
            term = ast.BinOp(ast.Constant(step), ast.Mult(), term)
        if start == ir.Const(0):
            return term
        return ast.BinOp(self._as_ast(start, node), ast.Add(), term)

    # Implemented by the CFG builder and ExprTranslator.
    def temp(self, value: ir.Expr, kind: str = "t", node: ast.AST | None = None,
             word: str | None = None) -> ir.Expr:  # pragma: no cover
        raise NotImplementedError

    def name_temp(self, name: str, word: str | None) -> None:  # pragma: no cover
        raise NotImplementedError

    def word_of(self, value: ir.Expr) -> str | None:  # pragma: no cover
        raise NotImplementedError
