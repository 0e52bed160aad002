"""What one registration of the rule table says about one primitive.

A :class:`Primitive` holds every fact the compiler knows about a call such as
``np.log1p``: its names in source, how to evaluate it, its SymPy form (whose
derivative the form's class carries), which failures it can raise, how each
backend spells it, and which cost class the cost model gives its printed call.
The models are autograd's ``defvjp`` table and JAX's primitive registry: the
stages read the record and keep no list of their own.

Spellings
---------
A spelling is a callee name or a template.  A template contains ``{``: ``{0}``,
``{1}`` are the printed arguments, ``{args}`` all of them joined by ``", "``,
``{xp}`` the array namespace.  A bare name is called: in array code (``array``,
``step``) as an attribute of the array namespace (``sin`` → ``xp.sin(a)``), in
scalar code (``scalar``) and CUDA (``cuda``) as written (``math.sin``, ``abs``,
``log1p``); a bare name that starts with ``_`` is the generated module's helper of that name
(``_logsumexp``), called as written.

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
which gives ``code(x)`` (an operand's value), ``d(x)`` and ``array_tangent(x)``
(its tangent, the latter as an array even where it is zero; forward sweep only),
``helper(name)`` (the helper's name, which the module then defines), ``value()`` (the step's own
value, by its name: a rule need not recompute it), ``temp(code, hint)`` (``code`` computed once,
into a fresh name, for a rule that uses it twice) and
``matmul_reverse(x, y, bar)`` (the cotangents of a matrix product, which it
accumulates itself).  ``vjp`` returns each operand's contribution to its
cotangent; ``jvp`` the step's tangent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Spelling:
    """How generated code writes one primitive, per backend (None: that backend has no spelling)."""

    array: str | None = None    # NumPy/CuPy array code: an array-API (2024.12) attribute of xp, or a template
    scalar: str | None = None   # scalar-only code: ``math.<name>``, a builtin, or a template
    cuda: str | None = None     # a fused CUDA kernel: a C99/CUDA device function, or a template
    step: str | None = None     # an opaque step of the glue code (a call SymPy did not see into); None: ``array``
    helper: str | None = None   # the generated module's helper the array spelling calls (``_erf``), and the
    #                             scalar spelling where it is the same template (``_gammaln({0})``)


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
    jvp: Callable | None = None          # an opaque step's tangent rule: ``(sweep, args) -> tangent code``
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
        return s.array if s.array is not None and "{" not in s.array else None


def spell(spelling: str, args: list[str], xp: str | None = None, static: tuple = ()) -> str:
    """``spelling`` applied to printed ``args``; a bare name is ``xp.<name>`` when ``xp`` is given.

    ``static``: the call's compile-time parameters, ``(name, value)`` pairs (see the module docstring),
    printed as keyword arguments after the operands, or where a template names them."""
    if "{" in spelling:
        return spelling.format(*args, xp=xp, args=", ".join(args), **{k: repr(v) for k, v in static})
    callee = f"{xp}.{spelling}" if xp is not None and not spelling.startswith("_") else spelling
    return f"{callee}({', '.join([*args, *(f'{k}={v!r}' for k, v in static)])})"
