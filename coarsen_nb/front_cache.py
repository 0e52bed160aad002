"""The front end's result known without running it: what lets a warm pipeline-cache hit skip parsing (and SymPy).

The pipeline cache (:mod:`coarsen_nb.pipeline_cache`) must be keyed on everything that affects a generated
module.  The gated SSA text is such a key, but computing it means parsing, and the parser reads the
primitive rule table, which imports SymPy: a third of a second, in every process, before the cache is
even asked.  This module keys the front end's result on its *inputs* instead:

* the **origin**: the function's source text, its file and first line, its name, its defaults, and
  coarsen_nb's own source (:func:`~coarsen_nb.pipeline_cache.compiler_digest`);
* every **namespace lookup** the front end made (:mod:`coarsen_nb.frontend.reads`: the global constants
  it folded, the helpers it inlined, the modules and primitives it resolved), each with a fingerprint of
  what it found, which can be written to disk: a number's type and value, a module's name, a helper's
  source, defaults, first line and module, a primitive's importable name.

The front end is a function of those inputs alone, so when each lookup finds the same as when the record
was written, the result is the same.  A record (``COARSEN_NB_CACHE/front/<origin>.json``) keeps the
lookups, with the parameters and defaults the runtime needs before any call; :func:`lookup` repeats
each lookup now and gives back the :class:`Front` only if every fingerprint is unchanged (and reports the
lookups to an active :func:`~coarsen_nb.frontend.reads.recording`, as the parser would have: the
``%%coarsen`` magic's own cache relies on them).  A lookup whose result has no fingerprint that can be
written (an object that is not a number, module, function or importable primitive) makes the function
uncacheable here, and the runtime keys its modules on the gated text as before.

Nothing here imports the front end or SymPy.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import sys
import types
from dataclasses import dataclass

import numpy as np

from coarsen_nb import pipeline_cache
from coarsen_nb.frontend import reads

#: What a record's layout is; a record of another format is not read.
FORMAT = 1

_DEFAULT_TYPES = {"bool": lambda text: text == "True", "int": int, "float": float}


@dataclass(frozen=True)
class Front:
    """What the runtime needs of the front end before any call, and the key of its result."""

    name: str
    params: tuple[str, ...]
    defaults: dict
    key: str | None   # a digest of the origin and of every namespace lookup's fingerprint (None: not known)


def origin(fn_or_source, name: str | None, namespace: dict | None) -> tuple[str, dict] | None:
    """``(digest, root namespace)`` of what the front end is given, or None where it cannot be told without
    the front end (no source to read, a closure: the front end refuses those or reads them its own way)."""
    if isinstance(fn_or_source, str):
        parts = dict(text=fn_or_source, name=name)
        root = namespace if namespace is not None else {}
    elif isinstance(fn_or_source, types.FunctionType) and fn_or_source.__closure__ is None:
        try:
            lines, first = inspect.getsourcelines(fn_or_source)
        except (OSError, TypeError):
            return None
        code = fn_or_source.__code__
        parts = dict(text="".join(lines), first=first, file=code.co_filename, name=fn_or_source.__name__,
                     defaults=repr(fn_or_source.__defaults__))
        root = fn_or_source.__globals__
    else:
        return None
    parts.update(format=FORMAT, compiler=pipeline_cache.compiler_digest())
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:32], root


def lookup(fn_or_source, name: str | None, namespace: dict | None) -> Front | None:
    """The :class:`Front` recorded for this function, if every namespace lookup recorded with it finds what
    it found then (else None: the front end must run)."""
    if not pipeline_cache.enabled():
        return None
    found = origin(fn_or_source, name, namespace)
    if found is None:
        return None
    digest, root = found
    record = _read(digest)
    if record is None:
        return None
    fingerprints = []
    for where, looked_up, then in record["lookups"]:
        ns = _namespace(where, root)
        if ns is None:
            return None
        obj = ns.get(looked_up, reads.ABSENT)
        if _fingerprint(obj) != then:
            return None
        fingerprints.append((where, looked_up, then))
        reads.note(ns, looked_up, obj)          # (as the parser's lookup would have)
    return Front(record["name"], tuple(record["params"]), _decoded(record["defaults"]),
                 _key(digest, fingerprints))


def remember(fn_or_source, name: str | None, namespace: dict | None, front_name: str, params: tuple[str, ...],
             defaults: dict, lookups) -> Front | None:
    """Record what the front end just produced (``lookups``: its ``(namespace, name)`` lookups) and return
    its :class:`Front`; None where some input has no fingerprint that can be written."""
    if not pipeline_cache.enabled():
        return None
    found = origin(fn_or_source, name, namespace)
    encoded = _encoded(defaults)
    if found is None or encoded is None:
        return None
    digest, root = found
    fingerprints = []
    for ns, looked_up in lookups:
        where = _where(ns, root)
        then = _fingerprint(ns.get(looked_up, reads.ABSENT))
        if where is None or then is None:
            return None
        fingerprints.append((where, looked_up, then))
    # (one record per origin, the last one compiled: a global that changes back and forth costs a parse)
    pipeline_cache.write_atomically(_path(digest), json.dumps(dict(
        format=FORMAT, origin=digest, name=front_name, params=list(params), defaults=encoded,
        lookups=fingerprints)))
    return Front(front_name, tuple(params), dict(defaults), _key(digest, fingerprints))


def _key(digest: str, fingerprints: list) -> str:
    return hashlib.sha256(json.dumps([digest, fingerprints]).encode()).hexdigest()[:32]


def _path(digest: str):
    return pipeline_cache.cache_root() / "front" / f"{digest}.json"


def _read(digest: str) -> dict | None:
    """The record under ``digest``, or None (absent, or not a record of this format and origin: rewritten
    by the next compilation, since a record is only a shortcut past the front end)."""
    try:
        record = json.loads(_path(digest).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("format") != FORMAT or record.get("origin") != digest:
        return None
    ok = (isinstance(record.get("name"), str) and isinstance(record.get("params"), list)
          and all(isinstance(p, str) for p in record["params"])
          and isinstance(record.get("defaults"), dict) and isinstance(record.get("lookups"), list)
          and all(isinstance(x, list) and len(x) == 3 for x in record["lookups"]))
    if not ok or _decoded(record["defaults"]) is None:
        return None
    return record


def _where(ns: dict, root: dict):
    """How a later process finds the namespace ``ns`` again: the root one, or an imported module's globals."""
    if ns is root or not (ns or root):      # (no namespace, or an empty one: the parser looked in an empty dict)
        return "root"
    module = sys.modules.get(ns.get("__name__", ""))
    return ns["__name__"] if module is not None and vars(module) is ns else None


def _namespace(where, root: dict) -> dict | None:
    if where == "root":
        return root
    module = sys.modules.get(where) if isinstance(where, str) else None
    return vars(module) if module is not None else None


def _fingerprint(obj) -> list | None:
    """What the front end can take from ``obj``, in a form JSON keeps (None: none such)."""
    if obj is reads.ABSENT:
        return ["absent"]
    if isinstance(obj, (bool, int, float, np.number, np.bool_)):
        return ["number", type(obj).__name__, repr(obj)]
    if isinstance(obj, types.ModuleType):
        return ["module", obj.__name__]
    if isinstance(obj, types.FunctionType):
        try:
            text = inspect.getsource(obj)
        except (OSError, TypeError):
            return None
        # (its first line, for the lines the generated code's comments name; not its file, which IPython
        # names per kernel session: a helper from another cell would never be found again after a restart)
        return ["function", obj.__qualname__, text, repr(obj.__defaults__), obj.__closure__ is None,
                obj.__code__.co_firstlineno, obj.__module__]
    return _importable(obj)


def _importable(obj) -> list | None:
    """A primitive (``np.sin``, ``scipy.special.expit``, ``math.exp``) by the name it is imported under."""
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if not isinstance(name, str):
        return None
    homes = [getattr(obj, "__module__", None)] if not isinstance(obj, np.ufunc) else ["numpy", "scipy.special"]
    for home in homes:
        module = sys.modules.get(home) if isinstance(home, str) else None
        found = module
        for part in name.split("."):
            found = getattr(found, part, None)
        if module is not None and found is obj:
            return ["object", home, name]
    return None


def _encoded(defaults: dict) -> dict | None:
    out = {}
    for p, v in defaults.items():
        kind = type(v).__name__
        if kind not in _DEFAULT_TYPES:          # (np.float64 and the like: not kept)
            return None
        out[p] = [kind, repr(v)]
    return out


def _decoded(encoded: dict) -> dict | None:
    try:
        return {p: _DEFAULT_TYPES[kind](text) for p, (kind, text) in encoded.items()}
    except (KeyError, ValueError, TypeError):
        return None
