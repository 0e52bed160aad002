"""A repeated call's fast path: the key of its arguments' types, and what one key keeps.

A compiled function's specialization depends on each argument's Python type and an array's dtype and rank, and
the argument checks on nothing else; ``f.cost`` reads the last call's shapes.  So a call whose arguments have
the types, dtypes and shapes of an earlier call's (:func:`type_key`) would pass the checks and find the same
specialization as then: :class:`~coarsen_nb.runtime.Coarsened` keeps, per key, a :class:`Seen` made once on
the first such call, and a later call is one dictionary lookup and the generated function (its own run takes a
few µs for a small gradient, so each dictionary, tuple and method call on the way counts: brachistochrone's
1000-point gradient spent 1.3 µs of 11.6 in the runtime before this record).
"""

from __future__ import annotations

#: the argument keys a function remembers before it starts again (a caller giving a new shape on every call)
SEEN_MAX = 256


class Seen:
    """What a call with one :func:`type_key` needs, found on the first: the specialization, the positions of its
    integer scalars (their values are what ``f.cost`` reads besides the shapes), and ``grad``, the function
    ``f.grad`` calls directly (the gradient-only entry; None where ``f.grad`` goes through ``value_and_grad``,
    or where the module cannot be loaded and the call must raise; None too until a ``grad`` call loads it, where
    the first call was another kind: :mod:`coarsen_nb.entry_modules`)."""

    __slots__ = ("compiled", "ints", "grad")

    def __init__(self, compiled, ints: tuple[int, ...]):
        self.compiled = compiled
        self.ints = ints
        usable = not compiled.missing and compiled.scalar_result
        self.grad = compiled.loaded("grad") if usable else None

    def int_values(self, params: tuple[str, ...], args: tuple) -> dict:
        """The integer scalars of ``args`` by parameter name (``{}`` where there are none)."""
        return {params[k]: int(args[k]) for k in self.ints}


def type_key(args: tuple) -> tuple:
    """What the argument checks and the signature of ``args`` depend on, and the shapes ``f.cost`` reads: each
    one's type, and for an array (anything with a dtype) its dtype and shape."""
    return tuple([(type(a), a.dtype, a.shape) if hasattr(a, "dtype") else type(a) for a in args])


def shapes(key: tuple) -> tuple:
    """Each argument's shape, from its :func:`type_key` (``()`` for a number)."""
    return tuple([k[2] if isinstance(k, tuple) else () for k in key])
