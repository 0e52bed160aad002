"""Random programs that mix the NumPy users write with loops and branches, for property-based tests.

:func:`mixed_programs` is a Hypothesis strategy of :class:`program_gen.Program` records: one function of a
float array ``x`` (4–7 elements) and floats ``a``, ``b``, built from 3–6 statements, each one of

* an elementwise array expression over ``x`` and the arrays made so far, with ``np.where``,
  ``np.maximum``/``np.minimum``, ``np.clip``, ``np.tanh``/``np.sin``, ``np.exp`` of a bounded value,
  ``u[::-1]``, and a scalar broadcast against it;
* a shift by slices, ``np.concatenate([u[k:], u[:k]])``, and a slice write into a fresh array
  (``v = np.zeros(len(x)); v[k:] = u[:-k] * a; v[:k] = b``);
* a broadcast outer product reduced over one axis (``np.sum(np.tanh(u[:, None] * w[None, :]), axis=0)``);
* a reduction of slices (``np.sum(u[k:] * u[:-k])``) or of an ``axis=`` reduction, into a scalar;
* a counted loop, accumulating ``u[i] * c`` or writing ``v[i] = 0.5 * v[i - 1] + u[i]`` element by element;
* an iterated loop whose body is array code (``s = np.tanh(np.sum(u * s) * 0.3 + a)``);
* an ``if``/``else`` on a reduction, each arm an array expression.

The result is a reduction of the last array ``w`` plus the scalars: ``np.sum(w * w)``, or one where a
number ``c`` (a parameter, a constant, a reduction made before) meets every element of an array before it is
reduced (:data:`RESULTS`): ``np.sum(w * w + c)``, ``np.mean(w - c)``, ``np.prod``/``np.max``/``np.min`` of
``w`` plus a number, ``np.sum(c * w)``, the same over a slice of another length (``np.sum(w[1:] * w[:-1] +
c)``), and a 2-D ``w[:, None] * w[None, :]`` plus a row, a column or a number.  ``c``'s gradient is the count
of the elements it met (where the kernel also holds arrays of another length, its elements', not theirs).
Every array keeps the length of ``x``; every value stays bounded (``tanh``, contractions, ``exp`` of a
``tanh``), so nothing overflows.
"""

from __future__ import annotations

from hypothesis import strategies as st
from program_gen import Program

_FLOATS = st.floats(min_value=-1.5, max_value=1.5, allow_nan=False, allow_infinity=False)
_CONSTS = ("0.5", "0.25", "1.5", "0.3", "2.0")


@st.composite
def _elementwise(draw, arrays: list[str], scalars: list[str], depth: int = 0) -> str:
    """An elementwise array expression: every operand has the length of ``x`` or is a number."""
    u = draw(st.sampled_from(arrays))
    if depth >= 2:
        return draw(st.sampled_from([u, f"{u}[::-1]", f"({u} * {draw(st.sampled_from(scalars + list(_CONSTS)))})"]))
    v = draw(_elementwise(arrays, scalars, depth + 1))
    c = draw(st.sampled_from(scalars + list(_CONSTS)))
    w = draw(_elementwise(arrays, scalars, depth + 1))
    return draw(st.sampled_from([
        f"({v} + {c} * {w})",
        f"({v} * {w})",
        f"({v} - {w})",
        f"np.tanh({v})",
        f"np.sin({v} + {c})",
        f"np.exp(np.tanh({v}))",
        f"({v} / (1.0 + {w} * {w}))",
        f"np.where({v} > {c}, {w}, {c} * {v})",
        f"np.maximum({v}, {w})",
        f"np.minimum({v}, {c})",
        f"np.clip({v}, -0.5, 0.5)",
    ]))


@st.composite
def _statement(draw, k: int, arrays: list[str], scalars: list[str]) -> list[str]:
    """The lines of statement ``k``; it appends the names it defines to ``arrays`` or ``scalars``."""
    name = f"u{k}"
    u, w = draw(st.sampled_from(arrays)), draw(st.sampled_from(arrays))
    shift = draw(st.integers(1, 2))
    kind = draw(st.sampled_from(["elementwise", "roll", "slice_write", "outer", "slice_sum", "loop_sum",
                                 "loop_write", "iterated", "branch"]))
    if kind == "elementwise":
        lines = [f"{name} = {draw(_elementwise(arrays, scalars))}"]
    elif kind == "roll":
        lines = [f"{name} = np.concatenate([{u}[{shift}:], {u}[:{shift}]]) * {draw(st.sampled_from(scalars))}"]
    elif kind == "slice_write":
        lines = [f"{name} = np.zeros(len(x))", f"{name}[{shift}:] = {u}[:-{shift}] * {draw(st.sampled_from(scalars))}",
                 f"{name}[:{shift}] = {draw(st.sampled_from(scalars))}"]
    elif kind == "outer":
        axis = draw(st.integers(0, 1))
        lines = [f"{name} = np.sum(np.tanh({u}[:, None] * {w}[None, :]), axis={axis}) * 0.5"]
    elif kind == "slice_sum":
        s = f"s{k}"
        lines = [f"{s} = np.tanh(np.sum({u}[{shift}:] * {w}[:-{shift}]))"]
        scalars.append(s)
        return lines
    elif kind == "loop_sum":
        s = f"s{k}"
        c = draw(st.sampled_from(scalars + list(_CONSTS)))
        lines = [f"{s} = 0.0", "for i in range(len(x)):", f"    {s} += {u}[i] * {c}"]
        if draw(st.booleans()):
            lines += [f"    if {u}[i] > 0.3:", f"        {s} += 0.5 * {w}[i]"]
        lines.append(f"{s} = np.tanh({s})")
        scalars.append(s)
        return lines
    elif kind == "loop_write":
        lines = [f"{name} = np.zeros(len(x))", f"{name}[0] = {u}[0]", "for i in range(1, len(x)):",
                 f"    {name}[i] = 0.5 * {name}[i - 1] + {draw(st.sampled_from(scalars))} * {u}[i]"]
    elif kind == "iterated":
        s = f"s{k}"
        steps = draw(st.integers(0, 3))
        lines = [f"{s} = {draw(st.sampled_from(scalars))}", f"for _ in range({steps}):",
                 f"    {s} = np.tanh(np.sum({u} * {s}) * 0.3 + {draw(st.sampled_from(scalars))})"]
        scalars.append(s)
        return lines
    else:
        test = draw(st.sampled_from([f"np.sum({u}) > {draw(st.sampled_from(_CONSTS))}",
                                     f"np.max({u}) < {draw(st.sampled_from(scalars))}"]))
        lines = [f"if {test}:", f"    {name} = {draw(_elementwise(arrays, scalars))}", "else:",
                 f"    {name} = {draw(_elementwise(arrays, scalars))}"]
    arrays.append(name)
    return lines


#: the reductions a program may return, of its last array ``w`` and a number ``c`` (``{w}``, ``{c}``)
RESULTS = {
    "sum_of_squares": "np.sum({w} * {w})",
    "sum_plus_number": "np.sum({w} * {w} + {c})",
    "mean_minus_number": "np.mean({w} - {c})",
    "prod_plus_number": "np.prod(0.5 * np.tanh({w}) + {c})",
    "max_plus_number": "np.max({w} + {c})",
    "min_minus_number": "np.min({w} - {c} * {c})",
    "number_times_array": "np.sum({c} * {w})",
    "slices_plus_number": "np.sum({w}[1:] * {w}[:-1] + {c})",
    "slice_mean_minus_number": "np.mean({w}[:-2] - {c})",
    "matrix_plus_row": "np.sum(np.tanh({w}[:, None] * {w}[None, :] + {w}[None, :]))",
    "matrix_plus_column": "np.sum(np.tanh({w}[:, None] * {w}[None, :] - {w}[:, None] * {c}))",
    "matrix_plus_number": "np.sum(np.tanh({w}[:, None] * {w}[None, :] + {c}))",
}


@st.composite
def mixed_programs(draw, results: tuple[str, ...] = ("sum_of_squares",)) -> Program:
    """A program of 3–6 statements whose result is one of ``results`` (names of :data:`RESULTS`).

    The default draws exactly the programs it drew before the other results existed (one result and no number
    draw nothing), so the derandomized tests that use it keep their examples."""
    arrays, scalars = ["x"], ["a", "b"]
    body: list[str] = []
    for k in range(draw(st.integers(3, 6))):
        body += draw(_statement(k, arrays, scalars))
    result = RESULTS[draw(st.sampled_from(results))]
    c = draw(st.sampled_from(scalars + list(_CONSTS))) if "{c}" in result else None
    body.append(f"return {result.format(w=arrays[-1], c=c)} + {' + '.join(scalars)}")
    source = "import numpy as np\n\n\ndef f(x, a, b):\n" + "".join(f"    {line}\n" for line in body)
    n = draw(st.integers(4, 7))
    import numpy as np
    x = np.array(draw(st.lists(_FLOATS, min_size=n, max_size=n)))
    return Program(source, (x, draw(_FLOATS), draw(_FLOATS)), ("x", "a", "b"), ("x", "a", "b"))
