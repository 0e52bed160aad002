"""Finding a function's source and what its names mean.

``inspect.getsource`` works for functions defined in a notebook cell too
(IPython registers each cell with ``linecache``), so a function object and the
text of a cell take the same path: we keep the whole text, the line of the
``def`` within it, and a *resolver* for the names the function reads that it
does not define (modules, helper functions, numeric globals).
"""

from __future__ import annotations

import ast
import inspect
import math
import textwrap
import types
from dataclasses import dataclass, field

import numpy as np

from coarsen_nb import primitives
from coarsen_nb.errors import CoarsenError
from coarsen_nb.frontend import reads
from coarsen_nb.ir import Source


@dataclass
class Unit:
    """One function ready to translate: its ``def`` node and where it came from."""

    node: ast.FunctionDef
    source: Source
    indent: int                          # columns removed by dedenting
    resolve: Resolver
    lines: list[str] = field(default_factory=list)

    def error(self, construct: str, node: ast.AST | None, hint: str = "", message: str | None = None):
        """A :class:`CoarsenError` pointing at ``node`` in the user's own line numbering."""
        line = col = None
        text = None
        if node is not None and hasattr(node, "lineno"):
            line = node.lineno + self.source.first_line - 1
            col = node.col_offset + self.indent
            k = node.lineno - 1
            text = self.lines[k] if 0 <= k < len(self.lines) else None
        return CoarsenError(construct, line, col, text, hint, self.source.filename, message)


def walk_no_defs(node: ast.AST):
    """``node`` and the nodes under it that run when it runs: not those of a nested def, lambda or class."""
    yield node
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            yield from walk_no_defs(child)


class Resolver:
    """What a free name of the function means: a module, a helper, a constant.

    Built from a function's ``__globals__`` (a function object) or from the
    other ``def`` s of the same text plus the user's namespace (a cell).
    Every namespace lookup goes through :meth:`_lookup`, which reports it to
    :mod:`coarsen_nb.frontend.reads`: a cache of compilations needs to know
    what the compiled code took from outside its text.
    """

    def __init__(self, namespace: dict | None, defs: dict[str, Unit] | None = None):
        self.namespace = namespace or {}
        self.defs = defs if defs is not None else {}

    def _lookup(self, name: str):
        obj = self.namespace.get(name, MISSING)
        reads.note(self.namespace, name, obj)
        return obj

    def module(self, name: str) -> str | None:
        """``"math"`` or ``"np"`` if ``name`` refers to that module."""
        obj = self._lookup(name)
        if obj is math:
            return "math"
        if obj is np:
            return "np"
        if obj is MISSING and name in ("math", "np", "numpy"):
            return "math" if name == "math" else "np"
        return None

    def helper(self, name: str) -> Unit | None:
        """The helper function ``name`` (to inline), if the same source defines it."""
        if name in self.defs:
            return self.defs[name]
        obj = self._lookup(name)
        if isinstance(obj, types.FunctionType) and primitives.of_object(obj) is None:
            try:
                return unit_from_function(obj)
            except CoarsenError:
                return None
        return None

    def global_object(self, name: str):
        """What the free name ``name`` is bound to in the user's namespace (MISSING if nothing)."""
        return self._lookup(name)

    def imported_function(self, name: str):
        """The primitive that ``name`` is after ``from math import sin`` or ``from scipy.special import expit
        as sigmoid`` (any name), if any."""
        obj = self._lookup(name)
        return None if obj is MISSING else primitives.of_object(obj)

    def imported_primitive(self, name: str) -> str | None:
        """``sin`` after ``from math import sin``: the primitive's attribute name (for a function of a
        submodule or of SciPy, the name it is imported under)."""
        obj = self._lookup(name)
        if obj is MISSING or obj is None:
            return None
        if primitives.of_object(obj) is not None and getattr(math, name, None) is not obj \
                and getattr(np, name, None) is not obj:
            return name
        mod = getattr(obj, "__module__", None) or ""
        if obj is getattr(math, name, None) or (mod.startswith("numpy") and obj is getattr(np, name, None)):
            return name
        if isinstance(obj, np.ufunc) and getattr(np, obj.__name__, None) is obj:
            return obj.__name__
        return None

    def constant(self, name: str):
        """A global int/float/bool the function reads, folded as a constant."""
        obj = self._lookup(name)
        if isinstance(obj, (bool, int, float, np.floating, np.integer)):
            return obj.item() if hasattr(obj, "item") else obj
        return MISSING


#: A name not bound in the namespace (shared with the expression translation).
MISSING = reads.ABSENT


def unit_from_function(fn) -> Unit:
    """The :class:`Unit` of a Python function object."""
    if not isinstance(fn, types.FunctionType):
        raise CoarsenError(type(fn).__name__, hint="pass a plain Python function defined with `def`",
                           message=f"cannot compile an object of type {type(fn).__name__!r}")
    if fn.__closure__:
        raise CoarsenError("nested function", fn.__code__.co_firstlineno, 0, None,
                           "define the function at the top level of the cell or module",
                           fn.__code__.co_filename, message="unsupported construct 'nested function'")
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError) as exc:
        raise CoarsenError("source", hint="define the function in a file or notebook cell, or pass its source text",
                           message=f"cannot read the source of {fn.__name__!r} ({exc})") from None
    text = "".join(lines)
    src = Source(text, first, fn.__code__.co_filename)
    units = _units_of(text, src, Resolver(fn.__globals__), decorators_ok=True)
    for u in units.values():
        if u.node.name == fn.__name__:
            return u
    raise CoarsenError(fn.__name__, message=f"cannot find `def {fn.__name__}` in its source")


def units_from_source(text: str, namespace: dict | None = None, filename: str | None = None) -> dict[str, Unit]:
    """Every top-level ``def`` of ``text`` (a cell or a file), by name, in order."""
    src = Source(text, 1, filename)
    return _units_of(text, src, Resolver(namespace), decorators_ok=False)


def _units_of(text: str, src: Source, resolver: Resolver, decorators_ok: bool) -> dict[str, Unit]:
    raw_lines = text.splitlines()
    dedented = textwrap.dedent(text)
    indent = 0
    for a, b in zip(raw_lines, dedented.splitlines(), strict=False):
        if a.strip():
            indent = len(a) - len(b)
            break
    try:
        tree = ast.parse(dedented)
    except SyntaxError as exc:
        line = (exc.lineno or 1) + src.first_line - 1
        k = (exc.lineno or 1) - 1
        raise CoarsenError("syntax error", line, (exc.offset or 1) - 1 + indent,
                           raw_lines[k] if 0 <= k < len(raw_lines) else None,
                           "fix the Python syntax first", src.filename,
                           message=f"syntax error: {exc.msg}") from None
    units: dict[str, Unit] = {}
    resolver.defs = units if not resolver.defs else resolver.defs
    for node in tree.body:
        if isinstance(node, ast.AsyncFunctionDef):
            unit = Unit(node, src, indent, resolver, raw_lines)  # type: ignore[arg-type]
            raise unit.error("async function", node, "write a plain `def`")
        if isinstance(node, ast.FunctionDef):
            unit = Unit(node, src, indent, resolver, raw_lines)
            if node.decorator_list and not decorators_ok:
                raise unit.error("decorator", node.decorator_list[0],
                                 "remove the decorator; `%%coarsen` compiles the plain function")
            units[node.name] = unit
    return units
