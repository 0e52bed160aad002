"""Loading a function from Numba's disk cache without Numba's first-load initialization (issue 14: a warm
process, ≤ 0.5 s with the import).

Numba's ``Cache.load_overload`` begins with ``target_context.refresh()``: the first time in a process, that
imports and installs every registry of implementations and typing templates Numba has (``numba.np.arraymath``,
``linalg``, whose ``_check_blas`` imports ``scipy.linalg``, the random generators, typed containers, ...) and
builds the typing context's tables: 0.3 s of CPU on this machine, more than the rest of a warm process after
its imports.  Loading machine code from the cache reads none of it: the cached library is deserialized and
linked, its environment rebuilt, and its entry point handed to the dispatcher, which matches the argument
types it was compiled for.  The one part of ``refresh`` that loaded code does need is the runtime (NRT: the
allocator and reference counting that ``np.empty`` in the compiled code calls), which
``rtsys.initialize`` sets up, cheaply.

:func:`cache_loads_without_refresh` wraps, for one ``dispatcher.compile``, the dispatcher's ``load_overload``
so that the ``refresh`` it makes is NRT's initialization alone, the context's own method put back as soon as
the load returns: on a cache miss, the compiler's ``refresh`` (``CompilerBase.__init__``) is the real one, so
every compilation sees the full registries as before, and a dispatcher without a disk cache never reaches it.
``Dispatcher.compile`` holds Numba's global compiler lock around ``load_overload``, so no other thread
compiles while the context's method is replaced.  (``dispatcher._cache`` is Numba's own attribute, read
here alone.)
"""

from __future__ import annotations

import contextlib


@contextlib.contextmanager
def cache_loads_without_refresh(dispatcher):
    """Inside the block, ``dispatcher``'s disk-cache load initializes NRT instead of refreshing Numba's context."""
    cache = dispatcher._cache
    load = cache.load_overload

    def load_overload(sig, target_context):
        from numba.core.runtime import nrt

        def initialize_runtime_only():
            nrt.rtsys.initialize(target_context)

        target_context.refresh = initialize_runtime_only
        try:
            return load(sig, target_context)
        finally:
            del target_context.refresh          # the class's method again

    cache.load_overload = load_overload
    try:
        yield
    finally:
        del cache.load_overload
