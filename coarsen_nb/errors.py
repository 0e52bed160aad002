"""The one exception users see: :class:`CoarsenError`.

Every stage raises it for input outside the supported subset (or for anything
it cannot handle correctly), so that a user never meets a bare internal
traceback and never gets a silently wrong gradient.  The message names the
construct, shows the source line with a caret under it, and says what to
write instead.
"""

from __future__ import annotations


class CoarsenError(Exception):
    """A user-facing compile or call error.

    Parameters
    ----------
    construct : str
        What was found, in the user's words ("try/except", "lambda", ...).
    line, col : int or None
        1-based line and 0-based column in the user's source (the notebook
        cell, for a function defined in a cell).
    source_line : str or None
        The text of that line, shown with a caret under ``col``.
    hint : str
        What to do instead.
    filename : str or None
        Where the source came from, if known.

    Example
    -------
    >>> err = CoarsenError("lambda", 2, 8, "    f = lambda t: t * 2", "define a function")
    >>> print(err)  # doctest: +NORMALIZE_WHITESPACE
    unsupported construct 'lambda' at line 2, column 8:
        f = lambda t: t * 2
            ^
    hint: define a function
    """

    def __init__(
        self,
        construct: str,
        line: int | None = None,
        col: int | None = None,
        source_line: str | None = None,
        hint: str = "",
        filename: str | None = None,
        message: str | None = None,
    ) -> None:
        self.construct = construct
        self.line = line
        self.col = col
        self.source_line = source_line
        self.hint = hint
        self.filename = filename
        self.message = message or f"unsupported construct {construct!r}"
        super().__init__(self._format())

    def _format(self) -> str:
        where = ""
        if self.line is not None:
            where = f" at line {self.line}"
            if self.col is not None:
                where += f", column {self.col + 1}"
            if self.filename:
                where += f" of {self.filename}"
        parts = [f"{self.message}{where}" + (":" if self.source_line else "")]
        if self.source_line is not None:
            text = self.source_line.rstrip("\n")
            parts.append("    " + text)
            if self.col is not None:
                # Keep tabs so that the caret lines up under the construct.
                pad = "".join(c if c == "\t" else " " for c in text[: self.col])
                parts.append("    " + pad + "^")
        if self.hint:
            parts.append(f"hint: {self.hint}")
        return "\n".join(parts)

    def short(self) -> str:
        """The message without the class name, as a notebook shows it."""
        return self._format()

    def _render_traceback_(self) -> list[str]:
        """IPython shows this instead of a traceback: the user's error, not our internals."""
        return [f"CoarsenError: {self._format()}"]


#: The documented limits of the symbolic stages: segments that have no form at one SOI selection but do at a
#: finer one.  Each key is raised by exactly one site (``NoSegmentForm(key)``) and listed in the README.
SEGMENT_LIMITS: dict[str, str] = {
    "triangular-extrema": "a product or an extremum over a triangular loop nest, inside a larger SOI",
    "segment-away": "a per-segment product or extremum read away from the loop level that defines it",
    "nested-write": "an array written element by element inside a loop nested in another closed-form loop",
    "too-deep": "an expression nested too deeply for SymPy (Python's recursion limit)",
}


class NoSegmentForm(Exception):
    """The one signal on which compilation falls back to a finer SOI selection.

    A lifting or lowering stage raises it for a segment that it has no form for at the current
    selection (one of :data:`SEGMENT_LIMITS`), where a finer selection (per-block, then
    operator-level) is known to handle it.  Any *other* exception raised while compiling is a bug
    in coarsen_nb and becomes an :class:`InternalCompilerError`, never a silent fallback.
    """

    def __init__(self, limit: str, detail: str = "") -> None:
        if limit not in SEGMENT_LIMITS:
            raise KeyError(f"undocumented segment limit {limit!r}; add it to SEGMENT_LIMITS")
        self.limit = limit
        self.detail = detail
        super().__init__(SEGMENT_LIMITS[limit] + (f" ({detail})" if detail else ""))


class FallbackWarning(UserWarning):
    """Compilation used a finer SOI selection than asked for, because of a :class:`NoSegmentForm` limit.

    The values and gradients are still exact; only the speed differs.  ``f.fallback`` says why.
    """


class InternalCompilerError(CoarsenError):
    """An exception inside coarsen_nb while compiling a function the frontend accepted: a bug in coarsen_nb.

    It is a :class:`CoarsenError` so that a notebook shows it without a traceback of the compiler's
    frames; the original exception is chained as ``__cause__`` for the bug report.
    """

    def __init__(self, function: str, stage: str, exc: BaseException) -> None:
        self.function = function
        self.stage = stage
        self.original = exc
        super().__init__(
            function,
            message=f"internal compiler error while compiling {function}() ({stage}): "
                    f"{type(exc).__name__}: {exc} — this is a bug in coarsen_nb, not in your code",
            hint="please report this function to the coarsen_nb developers; meanwhile a finer selection "
                 "(per_block=True, or max_soi=1) may compile it",
        )
