"""One compilation of an ``@overload`` implementation for callers whose flags differ only where it cannot
tell (issue 14's cold bar; benchmarks/RESULTS.md, stop 41).

Numba keeps the implementation an ``@overload`` returns for some argument types (``np.empty``'s, ``max``'s
of two integers, the ``xp`` namespace's stubs) in a cache keyed by the types *and the caller's whole set of
compiler flags*, and compiles it once per key.  The implementation's own compile inherits only four of those
flags from its caller (``CPUTargetOptions.finalize``: ``nrt``, ``fastmath``, ``error_model``,
``forceinline``); the rest (the caller's wrappers, its bounds checks, ``cache``) do not reach its code.  A
generated module's functions are compiled with several flag sets (the entry point with a Python wrapper,
helpers and loop functions without, loops with NumPy's error model, some without bounds checks), so gmm's
gradient compiled ``max(int, int)`` three times and ``np.empty(int)`` twice, each an identical function.

:func:`overloads_shared_across_flags` keys that cache, for one ``dispatcher.compile``, by the types and the
four inherited flags: callers that agree on those share one compiled implementation, callers that differ in
any of them (a loop's NumPy error model against the entry point's Python one) still get their own, except
where the implementation cannot tell the error model either (:data:`ALLOCATORS`: ``np.empty``'s code allocates
and divides nothing, so gmm's gradient compiled it, with its allocator, for the entry's ``zeros`` and again
for the loop functions' ``empty(n)``: ~0.03 s of a cold process).  Entries
made inside the block are keyed apart from Numba's own (a tuple where Numba keys by a ``Flags`` object), so a
compilation outside the block never finds them.

Numba internals read here (a risk on Numba upgrades, tested in a fresh process by
``tests/test_numba_lazy_callees.py``): ``_OverloadFunctionTemplate._get_impl``, ``_build_impl``,
``_impl_cache``, and ``ConfigStack.top_or_none``; the names of the inherited flags are
``CPUTargetOptions.finalize``'s.
"""

from __future__ import annotations

import contextlib

#: the flags an ``@overload`` implementation's compile inherits from its caller (``CPUTargetOptions.finalize``)
INHERITED_FLAGS = ("nrt", "fastmath", "error_model", "forceinline")

#: the functions whose Numba implementation only allocates (NumPy's ``empty`` and ``empty_like``: a shape's
#: checks, the allocator's call, no arithmetic that can divide): one compiled implementation serves callers of
#: either error model, under the error model of the first that compiles it
ALLOCATORS = ("empty", "empty_like")


def _inherited_key(self, args, kws):
    """The cache key of an implementation: its types and what its compile inherits from the caller's flags (but
    the error model where the implementation is one of :data:`ALLOCATORS`)."""
    from numba.core import targetconfig

    flags = targetconfig.ConfigStack.top_or_none()
    names = INHERITED_FLAGS
    if _allocates(self.key):
        names = tuple(name for name in INHERITED_FLAGS if name != "error_model")
    inherited = None if flags is None else tuple(_hashable(getattr(flags, name)) for name in names)
    return self.context, tuple(args), tuple(kws.items()), ("inherited flags", inherited)


def _allocates(function) -> bool:
    """``function`` is NumPy's own ``empty`` or ``empty_like`` (:data:`ALLOCATORS`)."""
    import numpy

    return any(function is getattr(numpy, name) for name in ALLOCATORS)


def _hashable(value):
    """A flag's value as a key: ``fastmath``'s options object (unhashable) as the set of its flags."""
    flags = getattr(value, "flags", None)
    return frozenset(flags) if isinstance(flags, set) else value


def _get_impl(self, args, kws):
    """``_OverloadFunctionTemplate._get_impl`` with :func:`_inherited_key` for its cache key."""
    cache_key = _inherited_key(self, args, kws)
    try:
        return self._impl_cache[cache_key]
    except KeyError:
        pass
    return self._build_impl(cache_key, args, kws)


@contextlib.contextmanager
def overloads_shared_across_flags():
    """Inside the block, an ``@overload`` implementation is compiled once per argument types and inherited
    flags, not once per caller flag set."""
    from numba.core.typing.templates import _OverloadFunctionTemplate

    if "_get_impl" not in vars(_OverloadFunctionTemplate) or _OverloadFunctionTemplate._get_impl is _get_impl:
        yield               # (an unknown Numba, or nested: the outer block's)
        return
    original = _OverloadFunctionTemplate._get_impl
    _OverloadFunctionTemplate._get_impl = _get_impl
    try:
        yield
    finally:
        _OverloadFunctionTemplate._get_impl = original
