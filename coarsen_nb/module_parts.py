"""A generated module as the parts its writer printed, each with the role it plays.

The module writer (:mod:`coarsen_nb.lower.module`) prints a module as a docstring and imports, the text its
backend carries (numba's ``xp`` namespace, ``Backend.prologue``), the helpers its functions call, and the
entry functions, joined by two blank lines.  Whoever treats one of those parts differently from the rest
needs to know which text is which: the numba loader loads the carried text and the shared helpers from one
module shared by every generated module (compiled once per machine, not once per module), and the notebook's
Code view folds the carried text into one comment.  They get it from these records, never by searching the
generated text for a part (issue 13: no pass reads generated code back).

Imported on the cached path (a pipeline-cache hit prints nothing), so it imports nothing heavy.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The module's docstring and imports.
HEAD = "head"
#: Text every module of its backend carries, the same in each (``Backend.prologue``).
CARRIED = "carried"
#: A helper function the module's functions call.
HELPER = "helper"
#: A helper the backend's shared module defines, text and decorator alike (numba: ``numba_helpers``).
SHARED_HELPER = "shared helper"
#: An entry function (``f``, ``f_vjp``, ``f_grad``, ``f_jvp``).
FUNCTION = "function"

ROLES = (HEAD, CARRIED, HELPER, SHARED_HELPER, FUNCTION)

#: What the parts are joined by (two blank lines, as PEP 8 asks between top-level definitions).
SEPARATOR = "\n\n\n"


@dataclass(frozen=True)
class Part:
    """One part of a generated module: its ``role`` (one of :data:`ROLES`) and its ``text`` (no blank lines
    at either end)."""

    role: str
    text: str

    def __post_init__(self):
        if self.role not in ROLES:
            raise ValueError(f"unknown role of a module part: {self.role!r}")


def joined(parts) -> str:
    """The module's text: the parts in order, two blank lines between them, one newline at the end."""
    return SEPARATOR.join(p.text for p in parts) + "\n"


def lines_of(part: Part) -> int:
    """How many lines ``part``'s text spans (a stand-in for it keeps the module's line numbers)."""
    return part.text.count("\n") + 1


def to_json(parts) -> list:
    """``parts`` as JSON data (the pipeline cache stores a module this way)."""
    return [[p.role, p.text] for p in parts]


def from_json(data) -> tuple[Part, ...] | None:
    """The parts :func:`to_json` wrote, or None where ``data`` is not such a list."""
    if not isinstance(data, list) or not all(
            isinstance(d, list) and len(d) == 2 and d[0] in ROLES and isinstance(d[1], str) for d in data):
        return None
    return tuple(Part(role, text) for role, text in data)
