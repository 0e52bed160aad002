"""``np.convolve`` and ``np.correlate`` of 1-D arrays, ``mode=`` ``"full"``, ``"same"`` or ``"valid"``.

Both are opaque steps, bilinear in their operands.  A mode's result is the full one from an offset,
``full[start:start + L]`` (NumPy's offsets, below), so its cotangent ``ḡ`` is the full result's
cotangent ``G`` with zeros around it, and for ``y = convolve(a, v, "full")``, ``y[n] = Σ_m a[m] v[n - m]``:

* ``ā = correlate(G, v, "valid")`` and ``v̄ = correlate(G, a, "valid")`` (``G`` is the longest of the three,
  so NumPy's "valid" never swaps its operands here);
* ``correlate(a, v)`` is ``convolve(a, v[::-1])`` in full, so its ``ā`` correlates ``G`` with ``v[::-1]``
  and its ``v̄`` is ``correlate(G, a, "valid")`` reversed;
* the tangent is the same call of each operand's tangent with the other operand, summed.

Only "same" builds ``G`` (``_full_frame``: a zero-padded copy of ``ḡ``): in "full" ``G`` is ``ḡ``, and
"valid" (the common case, and the loop style's ``Σ_k x[i + k] w[k]``) reads ``ḡ`` as it is, through the
same sums as the loop style's window contractions (``_valid_vjp``).  ``v̄``'s M dots of length N go
through ``_window_vecmat``, as the loop style's do: NumPy's own correlation runs one BLAS dot per output,
and a dot that long starts BLAS's threads (milliseconds on a loaded machine instead of microseconds).

Offsets (N = len(a), M = len(v); NumPy swaps the operands of a "same" correlation when M > N):
convolve "same" (min(N, M) - 1) // 2, "valid" min(N, M) - 1; correlate "same" (M - 1) // 2 if M <= N
else N // 2, "valid" min(N, M) - 1.  tests/rules/test_convolutions.py checks every (N, M, mode) up
to 8 against NumPy, and both rules against finite differences and JAX; test_convolutions_properties.py
draws lengths, modes and SOI selections.
"""

from __future__ import annotations

from coarsen_nb.errors import CoarsenError
from coarsen_nb.rules.build import Compare, Expr, IfExp, Paren, call, dim, lit, num, op, xp_call
from coarsen_nb.rules.record import Primitive, Spelling

MODES = ("full", "same", "valid")
ONE, TWO = num(1), num(2)


def _type(fn: str):
    def rule(args, static) -> tuple[str, int]:
        for t in args:
            if t.ndim != 1:
                what = f"a {t.ndim}-D array" if t.ndim else "a number"
                err = CoarsenError(f"np.{fn} of {what}", hint=f"np.{fn} takes two 1-D arrays: for a number, "
                                   "multiply; for 2-D data, loop over the rows",
                                   message=f"np.{fn} of {what} is not supported")
                err.user_name = fn
                raise err
        if static["mode"] not in MODES:
            err = CoarsenError(f"mode= of np.{fn}", hint=f"write one of mode={', mode='.join(map(repr, MODES))}",
                               message=f"np.{fn}'s mode={static['mode']!r} is not a mode")
            err.user_name = "mode"
            raise err
        return "float", 1
    return rule


def _start(fn: str, a: Expr, v: Expr, mode: str) -> Expr:
    """The offset of ``mode``'s result in the full one, as code over the operands' lengths."""
    n, m = dim(a, 0), dim(v, 0)
    if mode == "full":
        return num(0)
    smaller = op("-", call("min", n, m), ONE)
    if mode == "valid":
        return smaller
    if fn == "convolve":
        return Paren(op("//", Paren(smaller), TWO))
    return Paren(IfExp(op("//", Paren(op("-", m, ONE)), TWO), Compare("<=", m, n), op("//", n, TWO)))


def _vecmat(s, g: Expr, x: Expr, n: Expr, m: Expr) -> Expr:
    """``xp.correlate(x, g, mode='valid')`` for ``len(x) == n + m - 1``, ``len(g) == n``: m dots of length n,
    as the loop style's ``_window_vecmat`` (its dots run in chunks, not on BLAS's threads)."""
    return call(s.helper('_window_vecmat'), g, x, num(0), n, m)


def _full_vjp(s, fn: str, a, v, bar, mode: str) -> list:
    """The cotangents through the full result's cotangent ``G``: ``bar`` itself in mode "full", ``bar`` in
    the middle of zeros in mode "same" (its first and last outputs read the zeros around ``a``)."""
    x, y = s.expr(a), s.expr(v)
    n = dim(x, 0)
    g = bar
    if mode == "same":
        full = op("-", op("+", n, dim(y, 0)), ONE)
        g = s.temp(call(s.helper('_full_frame'), bar, full, _start(fn, x, y, mode)), "frame")
    into_v = _vecmat(s, x, g, n, dim(y, 0))              # correlate(G, a, "valid")
    if fn == "convolve":
        return [(a, _correlate(g, y)), (v, into_v)]
    return [(a, _correlate(g, xp_call("flip", y))), (v, xp_call("flip", into_v))]


def _valid_vjp(s, fn: str, a, v, bar) -> list:
    """The cotangents of a "valid" result, no zeros around it.  For ``N >= M`` (N = len(a), M = len(v)),
    ``correlate(a, v)[i] = Σ_j a[i + j] v[j]``, so ``ā = convolve(ḡ, v)`` (full: N values) and
    ``v̄ = correlate(a, ḡ, "valid")`` (M values, the loop style's ``_window_vecmat``).  For ``N < M``
    NumPy's result is ``correlate(v, a)`` reversed, and the same sums, read off the full frame, are
    ``ā = convolve(ḡ, v, "valid")`` and ``v̄ = correlate(a, ḡ, "full")``.  ``convolve(a, v)`` is
    ``correlate(a, v[::-1])`` in "valid" mode (either order), whence its ``ā = correlate(ḡ, v, ...)`` and
    its ``v̄`` reversed."""
    x, y = s.expr(a), s.expr(v)
    longer = s.temp(Compare(">=", dim(x, 0), dim(y, 0)), "longer")
    into_a = IfExp(lit("full"), longer, lit("valid"))
    into_v = IfExp(_vecmat(s, bar, x, dim(bar, 0), dim(y, 0)), longer, xp_call("correlate", x, bar, mode=lit("full")))
    if fn == "convolve":
        return [(a, xp_call("correlate", bar, y, mode=into_a)), (v, xp_call("flip", into_v))]
    return [(a, xp_call("convolve", bar, y, mode=into_a)), (v, Paren(into_v))]


def _correlate(g: Expr, x: Expr) -> Expr:
    """``xp.correlate(g, x, mode='valid')``."""
    return xp_call("correlate", g, x, mode=lit("valid"))


def _convolve_vjp(s, args, bar, mode="full"):
    a, v = args
    return _valid_vjp(s, "convolve", a, v, bar) if mode == "valid" else _full_vjp(s, "convolve", a, v, bar, mode)


def _correlate_vjp(s, args, bar, mode="valid"):
    a, v = args
    return _valid_vjp(s, "correlate", a, v, bar) if mode == "valid" else _full_vjp(s, "correlate", a, v, bar, mode)


def _bilinear_jvp(fn: str):
    def rule(s, args, mode):
        a, v = args
        return op("+", xp_call(fn, s.array_tangent_expr(a), s.expr(v), mode=lit(mode)),
                  xp_call(fn, s.expr(a), s.array_tangent_expr(v), mode=lit(mode)))
    return rule


def _convolve_jvp(s, args, mode="full"):
    return _bilinear_jvp("convolve")(s, args, mode)


def _correlate_jvp(s, args, mode="valid"):
    return _bilinear_jvp("correlate")(s, args, mode)


CONVOLUTIONS: tuple[Primitive, ...] = (
    Primitive("convolve", "opaque", (2,), "convolve", spelling=Spelling(array="convolve"), total=True,
              static=(("mode", "full"),), type=_type("convolve"), vjp=_convolve_vjp, jvp=_convolve_jvp,
              vjp_shaped=True),
    Primitive("correlate", "opaque", (2,), "correlate", spelling=Spelling(array="correlate"), total=True,
              static=(("mode", "valid"),), type=_type("correlate"), vjp=_correlate_vjp, jvp=_correlate_jvp,
              vjp_shaped=True),
)
