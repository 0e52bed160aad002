"""Python's cyclic garbage collector paused while coarsen_nb builds a module.

A cold build allocates hundreds of thousands of objects that live on (SymPy's import, the front end's
and the lifting's expressions, the printers' records), and each allocation burst makes CPython run its
collector, whose oldest generation walks every object the process holds (NumPy's, Numba's and SymPy's
modules included) and finds nearly nothing to free: 0.05–0.1 s of gmm's 0.7 s build on Python 3.11, the
collections in the middle of ``import sympy`` among them.  A build's garbage is freed by reference counting
as it goes; what cycles it leaves are collected at the first collection after it.

The collector is resumed when the build ends, whatever it raised, and is left alone where it was already
off (the user's ``gc.disable()``, or another thread's build: the first to pause it resumes it, after which
a build still running collects as usual — slower, never wrong).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The block runs with the cyclic collector off (where it was on), and turns it on again after."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
