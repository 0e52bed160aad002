"""Which names a compilation read from the user's namespace, and whether they still mean the same.

The front end folds a global number in as a constant and inlines a helper
function from its source, so what a compilation produces depends on more than
the text it was given: on the value of every global it read and on the source
of every helper it inlined, which may live in other notebook cells.  A cache
of compilations (the ``%%coarsen`` magic's) must therefore check those too,
or a redefined helper or a changed constant silently keeps its old meaning.

Every namespace lookup of :class:`~coarsen_nb.frontend.source.Resolver` goes
through :func:`note`; inside ``with recording() as reads:`` each lookup is
kept with a *fingerprint* of what it found.  ``reads.unchanged()`` later asks
each namespace again and compares.  A fingerprint holds exactly what the front
end takes from the object: a number's type and value, a module's name, a
function's source text and defaults; anything else is compared by identity
(it is only ever used as a primitive such as ``np.sin``, or refused).
"""

from __future__ import annotations

import contextlib
import inspect
import types
from collections.abc import Iterator
from contextvars import ContextVar

import numpy as np

ABSENT = object()  # what a lookup of a name the namespace does not hold found


class NamespaceReads:
    """The namespace lookups of one compilation, each with what it found."""

    def __init__(self) -> None:
        self._seen: dict[tuple[int, str], tuple[dict, str, object]] = {}

    def add(self, namespace: dict, name: str, obj) -> None:
        self._seen.setdefault((id(namespace), name), (namespace, name, fingerprint(obj)))

    def lookups(self) -> tuple[tuple[dict, str], ...]:
        """``(namespace, name)`` of each lookup, in the order first made (the pipeline cache keeps them)."""
        return tuple((ns, name) for ns, name, _ in self._seen.values())

    @property
    def names(self) -> tuple[str, ...]:
        """The names read, in the order first read."""
        return tuple(name for _, name, _ in self._seen.values())

    def unchanged(self) -> bool:
        """Whether every name read still means what it meant then."""
        return all(fingerprint(ns.get(name, ABSENT)) == seen for ns, name, seen in self._seen.values())


_ACTIVE: ContextVar[NamespaceReads | None] = ContextVar("coarsen_nb_namespace_reads", default=None)


@contextlib.contextmanager
def recording() -> Iterator[NamespaceReads]:
    """Collect the namespace lookups made inside the ``with`` block (nested helpers included)."""
    reads = NamespaceReads()
    token = _ACTIVE.set(reads)
    try:
        yield reads
    finally:
        _ACTIVE.reset(token)


def note(namespace: dict, name: str, obj) -> None:
    """Record that the front end looked ``name`` up in ``namespace`` and found ``obj``."""
    reads = _ACTIVE.get()
    if reads is not None:
        reads.add(namespace, name, obj)


class _Same:
    """Equal only to a wrapper of the very same object (arrays have no usable ``==``)."""

    __slots__ = ("obj",)

    def __init__(self, obj) -> None:
        self.obj = obj

    def __eq__(self, other) -> bool:
        return isinstance(other, _Same) and other.obj is self.obj

    def __hash__(self) -> int:
        return id(self.obj)


def fingerprint(obj) -> tuple:
    """What the front end can take from ``obj``, as a value that compares by meaning."""
    if obj is ABSENT:
        return ("absent",)
    if isinstance(obj, (bool, int, float, np.number, np.bool_)):
        return ("number", type(obj).__name__, repr(obj))
    if isinstance(obj, types.ModuleType):
        return ("module", obj.__name__)
    if isinstance(obj, types.FunctionType):
        try:
            text = inspect.getsource(obj)
        except (OSError, TypeError):
            return ("function", _Same(obj))
        return ("function", obj.__qualname__, text, repr(obj.__defaults__), obj.__closure__ is None)
    return ("object", _Same(obj))
