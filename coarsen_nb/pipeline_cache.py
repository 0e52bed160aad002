"""The whole-pipeline cache: a generated module found on disk instead of lifted, selected and lowered anew.

Numba's disk cache (:mod:`coarsen_nb.numba_loader`) makes a restarted kernel skip *Numba's* compile, but
not coarsen_nb's own pipeline (lifting to SymPy, SOI selection, differentiation, printing), which runs
again in every process before Numba is even asked.  This cache keeps what the pipeline produced for one
specialization — the generated source, the selection it was printed at and why (a named fallback), and
whether the result is a scalar — in ``COARSEN_NB_CACHE/pipeline/<key>.json``, so that a second process
prints nothing: it loads the same text, and Numba finds its own cache beside it.

**The key is everything that affects the module:** the function as the front end resolved it, the
argument signature, the options (backend, selection, ``max_soi``, ``reuse``, ``wrt``), the coarsen_nb
version and a digest of coarsen_nb's own source files, so that a changed compiler never serves an old
module.  "As the front end resolved it" is, where it can be, the front end's *inputs*
(:mod:`coarsen_nb.front_cache`: the user's source text, file and line, and each global the front end
read — a folded constant's value, an inlined helper's source — with what it found), so that a hit needs
no parsing and never imports SymPy; otherwise the gated SSA text with the user's source and where it came
from.  Nothing that is not in the key is read from the entry.

**What a hit does not have** is the plan (the lifted SOIs, their SymPy expressions): ``f.sois``,
``f.cost``, ``f.soi_graph()`` and the error mapping read it, so a hit keeps a way to run the pipeline
again and does so the first time one of them is asked for
(:class:`~coarsen_nb.specialize.Compiled`).

**A damaged entry is a miss, said once:** an entry that cannot be read, is not what this module writes,
or belongs to another key is removed with a :class:`PipelineCacheWarning` naming it, and the pipeline runs
as if it had never been there.  Entries are written atomically and never rewritten.

``COARSEN_NB_PIPELINE_CACHE=0`` turns the cache off (the test suite does, except the cache's own tests:
a test that replaces a pipeline stage must see that stage run).
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path

from coarsen_nb import module_parts
from coarsen_nb.version import __version__

#: What an entry's layout is; an entry of another format is a miss.
FORMAT = 2

#: Subpackages whose files cannot change a generated module (they are not in the compiler's digest).
_NOT_COMPILER = ("benchmarks", "kernels", "notebook")


class PipelineCacheWarning(UserWarning):
    """A pipeline-cache entry could not be used (unreadable or not this key's); it is compiled anew."""


@dataclass(frozen=True)
class Entry:
    """What one specialization's pipeline produced that loading its module needs."""

    parts: tuple                # the generated module's parts (coarsen_nb.module_parts)
    mode: str                   # the selection it was printed at (a fallback's finer one, if any)
    fallback: str | None        # why that selection is finer than asked for (None: it is the one asked)
    scalar_result: bool         # whether the function returns a scalar (grad is defined)


def cache_root() -> Path:
    """The directory every coarsen_nb disk cache lives under (``COARSEN_NB_CACHE`` overrides)."""
    return Path(os.environ.get("COARSEN_NB_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "coarsen_nb"))


def enabled() -> bool:
    return os.environ.get("COARSEN_NB_PIPELINE_CACHE", "1") != "0"


@cache
def compiler_digest() -> str:
    """A digest of coarsen_nb's own source files (their paths and text), read once per process."""
    package = Path(__file__).resolve().parent
    digest = hashlib.sha256(__version__.encode())
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package)
        if relative.parts[0] in _NOT_COMPILER:
            continue
        digest.update(str(relative).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def key(*, front: str, signature: str, options: dict) -> str:
    """The key of one specialization (a hex digest), from everything that affects its generated module:
    ``front``, a digest of the front end's result (:mod:`coarsen_nb.front_cache`, or of the gated text),
    the argument signature and the options; the compiler's digest and this cache's format are added."""
    parts = dict(format=FORMAT, compiler=compiler_digest(), front=front, signature=signature,
                 options={k: repr(v) for k, v in sorted(options.items())})
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:32]


def _path(key_: str) -> Path:
    return cache_root() / "pipeline" / f"{key_}.json"


def load(key_: str) -> Entry | None:
    """The entry stored under ``key_``, or None (never stored, or damaged: removed, with a warning)."""
    path = _path(key_)
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return _damaged(path, f"cannot be read ({exc.strerror or exc})")
    try:
        record = json.loads(text)
    except ValueError as exc:
        return _damaged(path, f"is not JSON ({exc})")
    fields = Entry.__dataclass_fields__
    if not isinstance(record, dict) or record.get("format") != FORMAT or record.get("key") != key_ \
            or not all(name in record for name in fields):
        return _damaged(path, "is not an entry of this key and format")
    parts = module_parts.from_json(record["parts"])
    entry = Entry(**{name: record[name] for name in fields} | {"parts": parts})
    if parts is None or not isinstance(entry.mode, str) \
            or not isinstance(entry.scalar_result, bool) or not isinstance(entry.fallback, (str, type(None))):
        return _damaged(path, "has fields of the wrong types")
    return entry


def store(key_: str, entry: Entry) -> None:
    """Write ``entry`` under ``key_`` (an entry already there is the same and is kept)."""
    record = dict(asdict(entry), parts=module_parts.to_json(entry.parts), format=FORMAT, key=key_)
    write_once(_path(key_), json.dumps(record))


def write_once(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` unless a file is there already (it holds the same: the path is named by a
    key of what it holds)."""
    if not path.exists():
        write_atomically(path, text)


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path``: a reader sees the old file or the new one, never half of one.  A cache that
    cannot be written (a read-only home) costs the next process its pipeline, nothing else."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text)
        os.replace(tmp, path)
    except OSError:
        pass


def discard(key_: str, why: str) -> None:
    """Remove the entry under ``key_`` because it proved wrong (``why``), with a warning."""
    _damaged(_path(key_), why)


def _damaged(path: Path, why: str) -> None:
    warnings.warn(PipelineCacheWarning(f"coarsen_nb: the compile-cache entry {path} {why}; compiling anew"),
                  stacklevel=4)
    try:
        path.unlink()
    except OSError:
        pass
    return None
