"""What one registration of the rule table says about one primitive.

A :class:`Primitive` holds every fact the compiler knows about a call such as
``np.log1p``: its names in source, how to evaluate it, its SymPy form (whose
derivative the form's class carries), which failures it can raise, how each
backend spells it, and which cost class the cost model gives its printed call.
The models are autograd's ``defvjp`` table and JAX's primitive registry: the
stages read the record and keep no list of their own.

Spellings
---------
A spelling is a callee name or a *builder*.  A bare name is called: in array code (``array``,
``step``) as an attribute of the array namespace (``sin`` → ``xp.sin(a)``), in
scalar code (``scalar``) and CUDA (``cuda``) as written (``math.sin``, ``abs``,
``log1p``); a bare name that starts with ``_`` is the generated module's helper of that name
(``_logsumexp``), called as written.  A builder is a function ``(args, xp, static) -> Expr`` of the
printed arguments (lowered-IR records, :mod:`coarsen_nb.rules.build`), the array namespace's name (or
None) and the compile-time parameters as a dict: ``({0} % {1})`` is
``lambda a, xp, static: Paren(BinOp("%", a[0], a[1]))``.  :func:`spell` applies either, to a record.
The CUDA spellings (``cuda``) are C text, a name or a template (``{0}``, ``{1}``: the printed
arguments), which :func:`cuda_spell` fills in; no pass reads C text back.

Compile-time parameters
-----------------------
``static`` names the parameters a call gives as constants written in the source (``axis=0``,
``keepdims=True``, by keyword or by position after the operands).  A call that gives them all
their defaults is the plain call (``ir.Call.static == ()``); otherwise the IR call carries every
one of them, and each stage passes them on by keyword: ``evaluate(args, xp, **static)``,
``type(args, static)``, ``vjp(sweep, args, bar, **static)``, ``jvp(sweep, args, **static)``, and a
spelling prints them as keyword arguments (a template names them: ``{axis}``).  The first ``leading``
of them come *before* the operands, by position (``np.einsum('ij,j->i', A, x)``: its subscripts).

Tuple-valued calls
------------------
A call whose value is a tuple (``np.linalg.slogdet``: a sign and a log-determinant) lists in ``parts``
one primitive per element, each a call of the same operands; the frontend makes the tuple of those
calls, so ``sign, logdet = np.linalg.slogdet(A)`` and ``np.linalg.slogdet(A)[1]`` need nothing else.

Opaque steps
------------
A primitive SymPy does not see into (``sum``, ``prod``, ``dot``) carries its own
derivative rules, written over a *sweep*: the writer of the generated function,
which gives ``expr(x)`` (an operand's value), ``d_expr(x)`` and ``array_tangent_expr(x)``
(its tangent, the latter as an array even where it is zero; forward sweep only),
``ndim(x)``, ``helper(name)`` (the helper's name, which the module then defines), ``value()`` (the step's
own value, by its name: a rule need not recompute it), ``temp(code, hint)`` (``code`` computed once,
into a fresh name, for a rule that uses it twice) and
``matmul_reverse(x, y, bar)`` (the cotangents of a matrix product, which it
accumulates itself).  Each gives a lowered-IR record (:mod:`coarsen_nb.lower.lir_exprs`), and the
rules build records of them (:mod:`coarsen_nb.rules.build`): ``vjp`` returns each operand's
contribution to its cotangent (``bar`` is the cotangent's record); ``jvp`` the step's tangent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from coarsen_nb.rules.build import Call, Expr, Name, dotted, lit

#: A spelling: a callee's name, or a builder ``(args, xp, static) -> Expr`` (see the module docstring).
Spelled = str | Callable


@dataclass(frozen=True)
class Spelling:
    """How generated code writes one primitive, per backend (None: that backend has no spelling)."""

    array: Spelled | None = None    # NumPy/CuPy array code: an array-API (2024.12) attribute of xp, or a builder
    scalar: Spelled | None = None   # scalar-only code: ``math.<name>``, a builtin, or a builder
    cuda: str | None = None         # a fused CUDA kernel: a C99/CUDA device function, or a template (C text)
    step: Spelled | None = None     # an opaque step of the glue code (a call SymPy did not see into); None: ``array``
    helper: str | None = None       # the generated module's helper the array spelling calls (``_erf``), and the
    #                                 scalar spelling where it is the same name (``_gammaln``)


@dataclass(frozen=True)
class Primitive:
    """One primitive call, everything about it (see the module docstring)."""

    name: str                            # canonical name (the IR's ``Call.func``)
    kind: str                            # elementwise | reduction | shape | constructor | opaque | reshape
    nargs: tuple[int, ...]               # accepted argument counts
    numpy: str | None                    # attribute of NumPy that evaluates it (and that a hint names)
    math: str | None = None              # attribute of ``math`` for scalars, if any
    aliases: tuple[str, ...] = ()        # other names ``np.X`` / ``math.X`` spell it with
    evaluate: Callable | None = None     # ``(args, xp) -> value`` where the default below does not hold
    nan_outside: bool = False            # scalars as NumPy: nan outside the domain (math raises ValueError)
    lift: Callable | None = None         # ``(*sympy args) -> SymPy``; None: SymPy cannot see into it
    forms: tuple[type, ...] = ()         # SymPy classes that print as this primitive (their subclasses too)
    spelling: Spelling = field(default_factory=Spelling)
    total: bool = False                  # raises for no value of its operands (phi/partial.py)
    one_arg: str | None = None           # with one argument it is this primitive instead (builtin min/max)
    differentiable: bool = True          # an opaque step of it can carry a derivative
    kink: bool = False                   # continuous with a jump in its derivative (the SOI graph marks it)
    result: str | None = None            # its value's type where not a float of its operands' rank: "int" or
    #                                     "float" (a scalar), "int of ints" (an int when every operand is)
    cost: str | None = None              # cost class of its printed call: "math" (a float per element) or
    #                                     "elementwise" (broadcasts its operands); None: the model's own rules
    vjp: Callable | None = None          # an opaque step's reverse rule: ``(sweep, args, bar) -> [(arg, cotangent)]``
    vjp_shaped: bool = False             # each cotangent ``vjp`` gives has exactly its operand's shape (so it
    #                                     may be an adjoint's first value: lower/first_contributions.py)
    jvp: Callable | None = None          # an opaque step's tangent rule: ``(sweep, args) -> tangent`` (a record)
    static: tuple[tuple[str, object], ...] = ()   # compile-time parameters after the operands, in NumPy's
    #                                     order, with their defaults: ``(("axis", None), ("keepdims", False))``
    type: Callable | None = None         # ``(operand types, static dict) -> (kind, ndim)``: its value's type
    #                                     where the rules above do not give it (an axis reduction drops axes)
    leading: int = 0                     # how many of ``static`` come before the operands (einsum's subscripts)
    parts: tuple[str, ...] = ()          # a tuple-valued call: the primitive of each element (see above)
    scipy: str | None = None             # attribute of ``scipy`` that is this function (``"special.expit"``)

    @property
    def callee(self) -> str | None:
        """The function name the array spelling calls (what the cost model sees), if it is a call."""
        s = self.spelling
        if s.helper is not None:
            return s.helper
        return s.array if isinstance(s.array, str) else None


def spell(spelling: Spelled, args: list[Expr], xp: str | None = None, static: tuple = ()) -> Expr:
    """``spelling`` applied to the records ``args``, as a record; a bare name is ``xp.<name>`` when ``xp``
    is given.

    ``static``: the call's compile-time parameters, ``(name, value)`` pairs (see the module docstring),
    printed as keyword arguments after the operands, or where a builder puts them."""
    if not isinstance(spelling, str):
        return spelling(list(args), xp, dict(static))
    callee = dotted(spelling, Name(xp)) if xp is not None and not spelling.startswith("_") else dotted(spelling)
    return Call(callee, tuple(args), tuple((k, lit(v)) for k, v in static))


def cuda_spell(spelling: str, args: list[str]) -> str:
    """A CUDA spelling (C text) applied to printed ``args``: a template's ``{0}``, ``{1}`` filled in, a bare
    name called."""
    if "{" in spelling:
        return spelling.format(*args)
    return f"{spelling}({', '.join(args)})"
