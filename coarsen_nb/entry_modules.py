"""A compiling backend's entry functions, each printed, cached and loaded on the first call that needs it.

A generated module defines four entry functions (``NAME``, ``NAME_vjp``, ``NAME_grad``, ``NAME_jvp``:
:data:`~coarsen_nb.lower.module.ENTRY_KINDS`).  Numba compiles each on its first call only, but printing them
is not lazy: gmm's build printed all four for 0.16 s CPU (0.041 + 0.056 + 0.046 + 0.020) where a ``grad`` call
runs one.  So with a compiling backend (``Backend.compiles``: numba) a call prints the module of the entry it
runs alone (the head, the carried text, the helpers and loop functions that entry calls, the entry), caches it
in the pipeline cache under its own key (the specialization's key with the entry's kind), and loads it as its
own file (Numba's disk cache is keyed by the file, so each entry is cached apart too); a call of another kind
on the same specialization prints, caches and loads that kind's module then.

A module of one entry is a module of its own, not a slice of the whole one: a loop function is named by the
order the writer meets it, so gmm's gradient module calls ``_soi1_vjp_loop`` what the whole module, whose
VJP came first, calls ``_soi1_vjp_loop_2``.  What shows the module (``f.source``, ``f.module_parts``, export,
the notebook's code view) reads the whole module, printed from the plan the first time it is asked for
(``Compiled.whole``).  The errors and the named fallback of a numba entry run the NumPy module of the same
plan (one per specialization, shared by its entry modules), as before.

A limit met only by a later entry's printing (:class:`~coarsen_nb.errors.NoSegmentForm`: say a construct
only the forward value prints) falls back to a finer selection for that entry, said in a warning as at the
first call; its values and gradients are the same.
"""

from __future__ import annotations

from collections.abc import Callable

from coarsen_nb import pipeline_cache
from coarsen_nb.errors import InternalCompilerError

#: Each kind of entry function (:data:`coarsen_nb.lower.module.ENTRY_KINDS`, not imported here: nothing heavy
#: on a cache hit) -> what its name adds to the function's.
SUFFIXES = {"value": "", "vjp": "_vjp", "grad": "_grad", "jvp": "_jvp"}


def entry_names(function: str, kinds: tuple | None) -> tuple[str, ...]:
    """The names of the entry functions of ``kinds`` (None: every kind) of ``function``."""
    return tuple(function + SUFFIXES[k] for k in (SUFFIXES if kinds is None else kinds))


def required_names(function: str, kinds: tuple | None) -> tuple[str, ...]:
    """The entry names a loaded module must define: a module of every entry its value and VJP; a module of one
    entry that entry, unless it is ``grad`` or ``jvp`` (not defined for every function)."""
    if kinds is None:
        return entry_names(function, ("value", "vjp"))
    return entry_names(function, tuple(k for k in kinds if k in ("value", "vjp")))


def loaded(env: dict, function: str, kinds: tuple | None) -> dict:
    """kind -> the entry function ``env`` defines (None where it defines none) for each of ``kinds``."""
    return {k: env.get(function + SUFFIXES[k]) for k in (SUFFIXES if kinds is None else kinds)}


def load_entry(kind: str, function: str, scalar_result: bool, key: str | None, mode: str, fallback: str | None,
               printed: Callable[[tuple], tuple], load: Callable[[tuple, tuple], dict]):
    """The entry function of ``kind``: its module from the pipeline cache (``key``), or printed now
    (``printed((kind,))`` -> ``(selection, (plan, parts, line table))``) and cached, then loaded
    (``load(parts, names)`` -> the namespace).  None for ``grad`` of a function whose result is not a scalar."""
    if kind == "grad" and not scalar_result:
        return None
    hit = pipeline_cache.load(key) if key else None
    if hit is not None:
        parts = hit.parts
    else:
        at, (_, parts, _) = printed((kind,))
        if key:
            pipeline_cache.store(key, pipeline_cache.Entry(parts, at, fallback if at == mode else None,
                                                           scalar_result))
    names = entry_names(function, (kind,))
    try:
        env = load(parts, names)
    except SyntaxError as exc:
        raise InternalCompilerError(function, "compiling the generated module", exc) from exc
    return env.get(names[0])
