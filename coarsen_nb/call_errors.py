"""An exception raised inside generated code becomes a :class:`CoarsenError` about the user's line.

Generated code runs the user's function on the user's arguments, so it fails
where the arguments do not fit what the function does — an array shorter
than the loop that reads it, a shape NumPy cannot broadcast — or where the
function itself fails (a division by zero, ``math.log`` of a negative).  A
traceback into ``coarsen_nb_f_3.py`` says none of that in the user's words.

:func:`from_generated` takes the exception, walks its traceback to the innermost frame
of the generated module, and maps that frame's line to the user's source line
through the comments the module writer puts above each segment
(``# SOI 4 (line 239)``, ``# loop at line 238``).  The parameters the failing
generated line reads are named with their shapes.  Statement, comment and names come from the module's
line table (``line_table``: each generated line's lowered-IR record, from
:func:`coarsen_nb.lower.lir_lines.line_table`): nothing is read back from the generated text.
The error raised is a CoarsenError that is *also* the original type (an ``IndexError`` stays an
``IndexError`` for ``except`` clauses), chained to the original, whose
message it repeats.
"""

from __future__ import annotations

import re
import sys

import numpy as np

from coarsen_nb.backends import DASK
from coarsen_nb.error_kinds import coarsen_error_as
from coarsen_nb.errors import CoarsenError
from coarsen_nb.lower import lir, lir_lines
from coarsen_nb.lower.names import Names
from coarsen_nb.plan import PrimStep, walk_steps

#: NumPy's and Python's words for an argument whose shape does not fit.
_SHAPE_WORDS = re.compile(r"out of bounds|truth value|broadcast|shape|dimension|sequence|size|index", re.IGNORECASE)


def from_generated(exc: Exception, *, filename: str, line_table: dict, fname: str, params: tuple[str, ...],
                   primal: tuple, user_source, plan=None) -> CoarsenError | None:
    """The CoarsenError to raise (``from exc``) for ``exc``, or None where ``exc`` is to propagate as it
    is: a CoarsenError already, a MemoryError, or not raised inside the generated module.  ``line_table``:
    the record printed at each line of the module loaded from ``filename`` (``ModuleWriter.line_table``)."""
    if isinstance(exc, (CoarsenError, MemoryError)):
        return None
    gen_line = _generated_line(exc.__traceback__, filename, fname)
    if gen_line is None:
        return None
    read, user_lines = _read_from_table(line_table, gen_line, params, plan)
    return _translate(exc, read, user_lines, fname, params, primal, user_source)


def _read_from_table(table: dict, gen_line: int, params: tuple[str, ...], plan) -> tuple[list[str], list[int]]:
    """The parameters generated line ``gen_line`` reads and the user's lines it computes, from the record
    printed there (``table``: the module's line table): the names its expressions read, the name it
    assigns (an opaque step's line), the lines of the comment that opens its segment."""
    stmt = table.get(gen_line)
    names = set(lir.reads(stmt)) if stmt is not None else set()
    read = [p for p in params if p in names]
    return read, _opaque_line(lir_lines.assigned_name(stmt), plan) or lir_lines.user_lines(table, gen_line)


def _generated_line(tb, filename: str, fname: str) -> int | None:
    """The line of the innermost traceback frame that runs one of the generated module's entry points
    (``f``, ``f_vjp``, ``f_grad``, ``f_jvp``; not a helper such as ``_take``, whose lines have no SOI)."""
    line = None
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename == filename and code.co_name in (fname, f"{fname}_vjp", f"{fname}_grad", f"{fname}_jvp"):
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _translate(exc: Exception, read: list[str], user_lines: list[int], fname: str, params: tuple[str, ...],
               primal: tuple, user_source) -> CoarsenError:
    """The error for ``exc`` raised at a generated line that reads parameters ``read`` and computes the
    user's ``user_lines``."""
    shapes = {p: np.shape(a) for p, a in zip(params, primal, strict=True)}
    arrays = [p for p in read if shapes[p] != ()] or read
    line = _pick_line(user_lines, arrays, user_source)
    what = type(exc).__name__
    message = f"{fname}() raised {what}: {exc}"
    if arrays:
        message += " (reading " + ", ".join(f"{p!r} of shape {shapes[p]}" for p in arrays) + ")"
    if line is None:
        message += " in its generated code"
    if _SHAPE_WORDS.search(str(exc)) and isinstance(exc, (IndexError, ValueError, TypeError)):
        shown = ", ".join(f"{p}: {s}" for p, s in shapes.items() if s != ()) or "no arrays"
        hint = (f"the arguments' shapes ({shown}) do not fit what this line does: check the loop bounds and "
                "indices against the arrays' lengths, and the number of indices against their dimensions")
    elif isinstance(exc, NotImplementedError) and _dask_arguments(params, primal):
        hint = _no_lazy_form_hint(params, primal)
    else:
        hint = f"run {'this line of ' if line is not None else ''}the plain function on the same arguments to see why"
    construct = arrays[0] if len(arrays) == 1 else fname
    text_line = user_source.line_text(line) if line is not None else None
    try:
        return coarsen_error_as(type(exc))(construct, line, None, text_line, hint, user_source.filename, message)
    except TypeError:       # an exception type that cannot be a base (an incompatible layout, a custom __init__)
        return CoarsenError(construct, line, None, text_line, hint, user_source.filename, message)


def _dask_arguments(params: tuple[str, ...], primal: tuple) -> list[str]:
    """The parameters given Dask arrays (as ``dask_arrays.is_dask``: no Dask import where none is used)."""
    da = sys.modules.get(DASK.xp_module)
    return [] if da is None else [p for p, a in zip(params, primal, strict=True) if isinstance(a, da.Array)]


def _no_lazy_form_hint(params: tuple[str, ...], primal: tuple) -> str:
    """What to do where the dask module has no lazy form for a line (``lower/dask_xp.py`` raises
    NotImplementedError naming it): run in memory what fits there.  The records are the Dask arguments with the
    most rows (an unknown number counts as most); the others are usually parameters, and with them as NumPy
    arrays a sum over the records runs chunk by chunk (dask_chunk_sums.py)."""
    dask_args = _dask_arguments(params, primal)
    values = dict(zip(params, primal, strict=True))

    def rows(p):
        shape = np.shape(values[p])
        n = shape[0] if shape else 1
        return np.inf if n != n else n       # (NaN: chunks of unknown size)

    most = max(rows(p) for p in dask_args)
    records = [p for p in dask_args if rows(p) == most]
    small = [p for p in dask_args if rows(p) != most]
    if small:
        kind = "a NumPy array" if len(small) == 1 else "NumPy arrays"
        return (f"pass {', '.join(small)} as {kind} ({small[0]}.compute()) and keep only {', '.join(records)} in "
                "Dask: a sum over the records then runs chunk by chunk; or compute every argument first")
    return f"compute {', '.join(records)} first ({records[0]}.compute()) where it fits in memory, or rewrite this line"


def _opaque_line(target: str | None, plan) -> list[int]:
    """The line of an opaque step (``p4_1 = xp.matmul(x, x)``: printed without an SOI comment) whose
    generated line assigns the name ``target``, from the plan."""
    if plan is None or target is None:
        return []
    found: dict[str, int] = {}
    names = Names.for_plan(plan)

    for s in walk_steps(plan.steps):
        if isinstance(s, PrimStep) and s.line:
            found.setdefault(names(s.name), s.line)
    return [found[target]] if target in found else []


def _pick_line(user_lines: list[int], names: list[str], user_source) -> int | None:
    """The first line in the span of a segment's lines that mentions one of ``names``, else the first
    such line after the span (in the function), else the segment's first line.

    The span, not the list: a closed-form loop's SOI lists the lines of its statements outside the loop
    body (``s = 0.0``, the ``for``, the ``return``), and the read of ``x[i]`` is the body's line between.
    After it: a sum hoisted out of a loop names the loop's line, and its read is in the body below.
    """
    if not user_lines:
        return None
    last = user_source.first_line + len(user_source.text.splitlines()) - 1
    span = range(min(user_lines), max(user_lines) + 1)
    for line in (*span, *range(span.stop, last + 1)):
        text = user_source.line_text(line) or ""
        if any(re.search(rf"(?<![\w.]){re.escape(n)}(?!\w)", text) for n in names):
            return line
    return user_lines[0]
