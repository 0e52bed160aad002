"""What the printers share: the :class:`Level` a value is computed at, and small
facts about printed code (is it a number, an atom, an int literal; a trip count; a
common coefficient)."""

from __future__ import annotations

import itertools
import math

import sympy as sp

from coarsen_nb.errors import CoarsenError
from coarsen_nb.lower import lir
from coarsen_nb.lower.lir import Expr
from coarsen_nb.phi.gammas import is_boolean
from coarsen_nb.phi.rounding import Round

# ``xp.fn(args)`` and ``a.shape``, built as the rules build them (the module writer's own statements; a kernel
# printer has :meth:`~coarsen_nb.lower.emit.Printer.call`)
from coarsen_nb.rules.build import dim, xp_call  # noqa: F401 (named from here by the writer's modules)
from coarsen_nb.rules.build import shape as shape_of  # noqa: F401


class Nest:
    """A node of a tree of points: a printed :class:`Level`, or the pre-pass's ``soi_levels.Points`` it is
    decided by (``parent``, ``kind``, ``binder``, ``domain``: the same facts on both, so the same answers)."""

    parent: Nest | None
    kind: str
    binder: object
    domain: object

    def ancestors(self):
        lv = self
        while lv is not None:
            yield lv
            lv = lv.parent

    @property
    def points(self) -> Nest:
        """The level whose points these are: a ``cond`` level (code inside an ``if``) has its parent's."""
        lv = self
        while lv.kind == "cond" and lv.parent is not None:
            lv = lv.parent
        return lv

    @property
    def points_kind(self) -> str:
        """The kind of the points these are (:attr:`points`): a level's domain kind, else ``root``/``elem``
        (what a level opened under them is nested in: ``Domain.outer``)."""
        lv = self.points
        return lv.kind if lv.domain is None else lv.domain.kind

    @property
    def binders(self) -> list:
        """The indices these points vary over, outermost first (``ELEM``: the elements): ``Domain.over``."""
        return [a.binder for a in reversed(list(self.ancestors())) if a.binder is not None]

    def array(self) -> bool:
        """Whether values here are arrays (under a loop level or the elements), not numbers."""
        return any(a.kind in ("range", "elem") for a in self.ancestors())


class _Memo(dict):
    """A level's memo (expression -> its code) that tells the level walk (``soi_levels``) what is computed.

    The loop writers put values here from outside the printer (a nest's accumulator, a row's table, a
    log-sum-exp computed once): the printer then never computes them, and the walk, which did not know, walked
    into them and opened the branches in them at the level.  The printer takes a level's branch levels in the
    order they were opened, so a branch printed later got a level opened for one never printed (an internal
    ``UndecidedLevel``, or a level decided for another branch).  For the walk to stop where the printer stops,
    it walks each node as the printer computes it (``LevelWalk._mul``: a factor ``1/n`` known here hides the
    ``n`` the printer divides by only from a walk of the product's factors as SymPy has them)."""

    def __init__(self, level: Level):
        super().__init__()
        self.level = level

    def __setitem__(self, key, value) -> None:
        super().__setitem__(key, value)
        if self.level.mirror is not None:
            self.level.mirror.memo.add(key)

    def update(self, other=(), **more) -> None:
        for key, value in dict(other, **more).items():
            self[key] = value


class Level(Nest):
    """A set of points at which values are arrays of one length (see the module docstring)."""

    _ids = itertools.count()

    def __init__(self, parent: Level | None, kind: str, binder=None, seg: Expr | None = None,
                 size: Expr | None = None, mask: Expr | None = None, size_calls: tuple[frozenset, set] | None = None,
                 domain=None):
        self.parent, self.kind, self.binder = parent, kind, binder
        # the index-domain record of a loop or masked level (``lower/domain.py``: ``range``, ``rect``, ``segment``,
        # ``mask``, ``point``), which decided how it is printed; None for the root, the elements, a scalar branch
        self.domain = domain
        self.seg, self._size, self.mask = seg, size, mask
        # (the helpers the size's code calls, the printer's set they join when it is printed): the
        # elementwise level's shape of arrays that broadcast is ``_broadcast_shape(...)``
        self._size_calls = size_calls
        self.index_code: dict = {}          # binder symbol -> the expression of its index array at this level
        self.memo: dict = _Memo(self)
        self.children: dict = {}
        self.rect: Expr | None = None       # a ``rect`` domain's count per parent point
        # the points of the pre-pass this level prints (``soi_levels.Points``: its domain, the levels opened under
        # it), and how many of each key the printer has taken from them (``LevelPrinting._decided``)
        self.mirror = None
        self.taken: dict = {}
        self.id = next(Level._ids)

    @property
    def size(self) -> Expr | None:
        """The expression of the number of points (of the elementwise level: its shape), read to be printed: the
        helpers it calls join its printer's."""
        if self._size_calls is not None:
            calls, into = self._size_calls
            into |= calls
        return self._size

    @property
    def depth(self) -> int:
        return sum(1 for _ in self.ancestors()) - 1


# -- small expressions of the lowered IR the printers share ------------------------------------------

FLAT = lir.Tuple((lir.Lit("-1"),))      # the shape ``(-1,)`` of a flattened array
FLOAT64 = lir.Attr(lir.Name("xp"), "float64")     # the dtype of an adjoint
TRUE = lir.Lit("True")


def length(a: Expr) -> Expr:
    """``a.shape[0]``: the length of the 1-D array ``a``."""
    return dim(a, 0)


def chain(op: str, operands) -> Expr:
    """``a op b op c``: the operands joined left to right (one operand: itself)."""
    out = operands[0]
    for x in operands[1:]:
        out = lir.BinOp(op, out, x)
    return out


def positive(n: Expr) -> Expr:
    """``n > 0``: a count that is not empty."""
    return lir.Compare(">", n, lir.Lit("0"))


def lane_rows_read(printer, array, rows: tuple, lanes, rest: list) -> Expr:
    """``array[p, *rest]`` for the lanes ``p = arange(first, stop, step)`` of a batched loop (``rows`` is
    (first, step)): the rows ``first::step`` of ``array``, a view when in bounds (``_take``), not a
    gather per step.  Shared by the kernel printer and the module writer's opaque steps (``printer``, whose
    ``helper`` registers the call); the parts are expressions (``array``, ``lanes`` and ``rest`` may still be
    text from a caller)."""
    first, step = rows
    take = lir.Call(lir.Name(printer.helper("_take")), (lir.expr(array), first, length(lir.expr(lanes)), step))
    return lir.Index(take, (lir.Slice(), *map(lir.expr, rest)))


def common_coefficient(e: sp.Add):
    """``(c, a - b)`` for ``c*a - c*b`` (every term a multiple of ±c, c ≠ 1), else None."""
    parts = [t.as_coeff_Mul() for t in e.args]
    c = abs(parts[0][0])
    if c == 1 or c == 0 or float(c) == 1.0 or any(abs(k) != c or not k.is_Number for k, _ in parts):
        return None
    return c, sp.Add(*[rest if k > 0 else -rest for k, rest in parts])


def signed_terms(e: sp.Add) -> list[tuple[bool, sp.Basic]]:
    """The terms of ``e`` as printed, ``a - b`` and not ``a + (-b)``: ``(negated, term)`` with each negated
    term as its positive value (one node, shared with other uses of ``b``), the positive terms first.  The
    printer (``operators.py``) and its pre-pass (``soi_levels.py``) both compute the terms in this order:
    each decides the levels and branches of a term in the order it meets them."""
    terms = sorted(e.args, key=lambda x: x.could_extract_minus_sign())
    return [(True, -x) if x.could_extract_minus_sign() else (False, x) for x in terms]


_MAX = lir.Name("max")


def trip_count(a, b, s, a_c: Expr, b_c: Expr, s_c: Expr, maximum: Expr = _MAX) -> Expr:
    """``len(range(a, b, s))`` as arithmetic (valid for NumPy and CuPy integers too), i.e.
    ceil((b − a) / s) clipped at 0; ``maximum`` is ``xp.maximum`` when the bounds are arrays."""
    zero = lir.Lit("0")
    if s == 1:
        return lir.Call(maximum, (zero, b_c if a == 0 else lir.BinOp("-", b_c, lir.Paren(a_c))))
    span = lir.Paren(lir.BinOp("-", lir.Paren(a_c), lir.Paren(b_c)))
    return lir.Call(maximum, (zero, lir.Unary("-", lir.Paren(lir.BinOp("//", span, lir.Paren(s_c))))))


def int_typed(x) -> bool:
    """Whether the printed value of ``x`` has an integer or boolean dtype (sign, floor and ceil of a
    float are integer-valued but stay float)."""
    if isinstance(x, (sp.sign, sp.floor, sp.ceiling, Round)):
        return bool(x.args[0].is_integer)
    return bool(x.is_integer or is_boolean(x))


def number_code(e) -> str:
    """A SymPy number as exact Python code (shared by the printers)."""
    if e == sp.oo:
        return "math.inf"
    if e == -sp.oo:
        return "-math.inf"
    if e is sp.nan:
        return "math.nan"
    if e == sp.pi:
        return repr(math.pi)
    if e == sp.E:
        return repr(math.e)
    if e.is_Integer:
        return str(int(e))
    v = float(e)
    if not math.isfinite(v):
        # SymPy multiplied an expression's constants out past the float range: in Python's order of
        # operations the result may be finite (1e-300 * 1e300 * 1e300), so no number here is right
        raise CoarsenError(str(e), message=f"the constant {sp.N(e, 4)} (an expression's constants multiplied "
                           "out) is beyond the float range", hint="scale the constants of that expression so "
                           "that their product stays below 1.8e308")
    return exact_float(v)


def exact_float(v: float) -> str:
    """``v`` as the short decimal a user writes: ``repr`` (the shortest that round-trips), or a decimal of
    at most 10 digits within 2 ulps of ``v`` (``-0.5`` for the ``-0.4999999999999999`` that SymPy makes
    of ``-(1/sqrt(2.0))**2``: its constants multiplied out in floats, so the last bits are noise)."""
    if not math.isfinite(v) or v == 0:
        return repr(v)
    for digits in range(1, 11):
        c = float(f"{v:.{digits}g}")
        if c == v or abs(c - v) <= 2 * math.ulp(v):
            return repr(c)
    return repr(v)


def unwrapped(code: Expr | str) -> Expr | str:
    """``code`` without parentheses around the whole of it: the right-hand side of an assignment
    needs none (``t = a + b``, not ``t = (a + b)``).

    A record loses its outer :class:`~coarsen_nb.lower.lir.Paren` s, and a parenthesized tuple of two or
    more items its parentheses (``(a, b)`` → ``a, b``, as the text rule below always did); a
    :class:`~coarsen_nb.lower.lir.Raw` (or text, during the move to records) is unwrapped as text.  Either
    way the result prints as :func:`_unwrapped_text` of the printed ``code`` (a property test in
    ``tests/lower/test_lir.py``)."""
    if isinstance(code, str):
        return _unwrapped_text(code)
    while isinstance(code, lir.Paren):
        code = code.inner
    if isinstance(code, lir.Raw):
        return lir.Raw(_unwrapped_text(code.code))
    if isinstance(code, lir.Tuple) and not code.bare and len(code.elts) >= 2:
        return lir.Tuple(code.elts, bare=True)
    return code


def _unwrapped_text(code: str) -> str:
    """:func:`unwrapped` of text: strip outer parentheses that enclose all of ``code``."""
    while code.startswith("(") and code.endswith(")"):
        depth = 0
        for k, ch in enumerate(code):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0 and k < len(code) - 1:
                return code      # (a) + (b): the first parenthesis closes before the end
        inner = code[1:-1]
        if inner.endswith(",") or not inner.strip():
            return code          # a tuple (a,) or ()
        code = inner
    return code


# The record tests below decide from the record's kind: a compound one (a call, an operator, a
# parenthesis, an index, a tuple) is no atom and no number.  A leaf-like one (a name, a literal, an
# attribute, a sign) and a Raw (text from a printer not yet moved to records) are decided on their text,
# by the rules that decided on all printed code before, so that the answer, and the generated code, is
# the same (``-1.shape`` is no atom, ``inf`` a number).
_TEXT_TESTED = (lir.Name, lir.Lit, lir.Attr, lir.Unary, lir.Raw, str)


def is_atom_code(code: Expr | str) -> bool:
    """Whether ``code`` is a name, attribute or number: safe to repeat or use unparenthesized
    (shared by the printers in emit, operators and branches)."""
    if isinstance(code, _TEXT_TESTED):
        text = str(code)
        return text.replace("_", "").replace(".", "").isalnum() or is_number_code(text)
    return False


def is_number_code(code: Expr | str) -> bool:
    """Whether ``code`` is a numeric literal (shared by the printers)."""
    if not isinstance(code, _TEXT_TESTED):
        return False
    try:
        float(str(code))
        return True
    except ValueError:
        return False


def is_int_literal(code: Expr | str) -> bool:
    """Whether ``code`` is an integer literal (shared by the printers)."""
    return isinstance(code, _TEXT_TESTED) and str(code).lstrip("-").isdigit()


def exact_integer_division(e):
    """``(P, q, True)`` for ``floor(P / q)`` and ``(P, q, False)`` for ``ceiling(P / q)``, where ``P`` is
    integer-valued and ``q`` a positive integer, else None.

    SymPy keeps a user's ``(n + 2) // 3`` of integers as the exact ``floor(n/3 + 2/3)``; printed as
    written that is float arithmetic, ``math.floor(0.3333333333333333 * n + 0.6666666666666666)``,
    which is 2 at n = 7 (Python's 3).  ``P // q`` is exact, in Python and for NumPy integer arrays.
    """
    if not isinstance(e, (sp.floor, sp.ceiling)):
        return None
    num, den = sp.fraction(sp.together(e.args[0]))
    if not (den.is_Integer and den > 1 and num.is_integer):
        return None
    return num, int(den), isinstance(e, sp.floor)
