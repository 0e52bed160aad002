"""Peak memory and allocation count of one call, for the NumPy-based methods.

Why two figures: coarsening's claim is that a fused SOI materializes fewer
intermediates than operator-level AD.  Peak bytes (``tracemalloc``, which
NumPy reports its array buffers to) shows the high-water mark; the number of
array-buffer allocations shows how many intermediates were made at all, even
ones freed right away, which the peak cannot see.

Counting allocations needs a hook that sees every buffer NumPy allocates, not
just the live ones (``tracemalloc`` snapshots only hold live blocks).  NumPy
(>= 1.22) has one: a *data memory handler* (NEP 49) set with
``PyDataMem_SetHandler``.  That function is in NumPy's C-API table, not
exported to Python, so we reach it through the ``_ARRAY_API`` capsule with
ctypes and install a handler whose malloc/calloc/realloc are Python callbacks
that count and forward to libc.  It is slow, so it runs on a separate,
untimed call; it is scoped by a context variable (NumPy's handler is per
context) and always restored.  Every array remembers the handler it was
allocated with, so arrays outliving the measurement are freed correctly; the
callbacks are kept alive for the life of the process for that reason.

If anything about the hook does not check out (another NumPy layout, no libc),
:func:`count_numpy_allocations` returns ``None`` and says why in
:data:`UNAVAILABLE_REASON`; the harness then reports the count as unavailable
instead of guessing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import tracemalloc
from collections.abc import Callable

import numpy as np

_HANDLER_NAME = b"coarsen_nb_bench_counter"
_SET_HANDLER_SLOT = 304  # PyDataMem_SetHandler in numpy's __multiarray_api.h (NumPy >= 1.22)

UNAVAILABLE_REASON: str | None = None
_counter = {"n": 0}
_keepalive: list = []
_capsule = None
_set_handler = None

_MALLOC = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)
_CALLOC = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t)
_REALLOC = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)
_FREE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)


class _Allocator(ctypes.Structure):
    _fields_ = [("ctx", ctypes.c_void_p), ("malloc", _MALLOC), ("calloc", _CALLOC),
                ("realloc", _REALLOC), ("free", _FREE)]


class _Handler(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * 127), ("version", ctypes.c_uint8), ("allocator", _Allocator)]


def _handler_name() -> str:
    return np._core.multiarray.get_handler_name()


def _install() -> None:
    """Build the counting handler once; on failure record why in UNAVAILABLE_REASON."""
    global UNAVAILABLE_REASON, _capsule, _set_handler
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        libc.malloc.restype = ctypes.c_void_p
        libc.malloc.argtypes = [ctypes.c_size_t]
        libc.calloc.restype = ctypes.c_void_p
        libc.calloc.argtypes = [ctypes.c_size_t, ctypes.c_size_t]
        libc.realloc.restype = ctypes.c_void_p
        libc.realloc.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        libc.free.restype = None
        libc.free.argtypes = [ctypes.c_void_p]

        def _malloc(ctx, size):
            _counter["n"] += 1
            return libc.malloc(size)

        def _calloc(ctx, nelem, elsize):
            _counter["n"] += 1
            return libc.calloc(nelem, elsize)

        def _realloc(ctx, ptr, size):
            _counter["n"] += 1
            return libc.realloc(ptr, size)

        def _free(ctx, ptr, size):
            libc.free(ptr)

        handler = _Handler()
        handler.name = _HANDLER_NAME
        handler.version = 1
        handler.allocator = _Allocator(None, _MALLOC(_malloc), _CALLOC(_calloc),
                                       _REALLOC(_realloc), _FREE(_free))

        api = ctypes.pythonapi
        api.PyCapsule_New.restype = ctypes.py_object
        api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        api.PyCapsule_GetPointer.restype = ctypes.c_void_p
        api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
        name = b"mem_handler"
        capsule = api.PyCapsule_New(ctypes.addressof(handler), name, None)

        table = api.PyCapsule_GetPointer(np._core._multiarray_umath._ARRAY_API, None)
        slot = ctypes.cast(table, ctypes.POINTER(ctypes.c_void_p))[_SET_HANDLER_SLOT]
        set_handler = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.py_object)(slot)
        _keepalive.extend([libc, handler, name, _malloc, _calloc, _realloc, _free])
        _capsule, _set_handler = capsule, set_handler

        # Prove the slot is what we think before trusting it: the handler name must switch and back.
        before = _handler_name()
        old = _set_handler(_capsule)
        try:
            ok = _handler_name() == _HANDLER_NAME.decode()
            np.empty(3)
        finally:
            _set_handler(old)
        if not ok or _handler_name() != before:
            raise RuntimeError("PyDataMem_SetHandler slot did not switch the handler")
    except Exception as exc:  # any mismatch: report unavailable rather than crash or guess
        UNAVAILABLE_REASON = f"NumPy allocation hook unavailable: {type(exc).__name__}: {exc}"
        _capsule = _set_handler = None


def count_numpy_allocations(call: Callable[[], object]) -> int | None:
    """Run ``call()`` once and return how many NumPy array buffers it allocated (None if unavailable)."""
    if _capsule is None and UNAVAILABLE_REASON is None:
        _install()
    if _capsule is None:
        return None
    _counter["n"] = 0
    old = _set_handler(_capsule)
    try:
        result = call()
        n = _counter["n"]
    finally:
        _set_handler(old)
    del result
    return n


def peak_bytes(call: Callable[[], object]) -> int:
    """Peak traced memory (Python objects and NumPy buffers) above the level before one ``call()``."""
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    try:
        base, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        result = call()
        _, peak = tracemalloc.get_traced_memory()
        del result
    finally:
        if started:
            tracemalloc.stop()
    return max(0, peak - base)
