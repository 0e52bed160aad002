"""Snapshot of everything the compiler generates, to prove a refactor pure.

Compiles every corpus entry (``tests/corpus.py``) and every kernel
(``kernels/``) under the default selection, ``max_soi=1`` and
``per_block=True`` (NumPy backend; the default selection also with
``backend="cupy"``, whose source is generated even where CuPy is absent),
calls each once on its test inputs, and writes the generated module's source
(``f.source``), ``f.cost`` and the value and gradient into one JSON file.
A refactor that claims to change no generated code compares two snapshots::

    python tests/generated_code_snapshot.py /tmp/before.json
    ... refactor ...
    python tests/generated_code_snapshot.py /tmp/after.json --compare /tmp/before.json

(``--numba`` records instead the numba backend's module source under the default selection, written but
neither loaded nor compiled, for the numba fuser's refactors: ``--numba`` on both runs.)

(``--records-strict`` also makes a lowered-IR record refuse comparison with text, for the move of the
printers to records.)

The module header names the source file of each function; run both from the
same checkout path so that it matches.  SymPy orders some terms by hash (the
CUDA printer's sums, in one corpus entry), so the tool runs itself under
``PYTHONHASHSEED=0``: two runs of the same code then agree.  Not a test module (no ``test_``
prefix): it is a tool, and it takes a minute.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [_HERE, os.path.dirname(_HERE)]

from corpus import CORPUS  # noqa: E402

import coarsen_nb as cn  # noqa: E402
from coarsen_nb import module_parts  # noqa: E402
from coarsen_nb.kernels import KERNELS, function  # noqa: E402

SELECTIONS = {"default": {}, "L=1": {"max_soi": 1}, "per-block": {"per_block": True}}


def _plain(v):
    """A JSON-able exact form of a value or gradient (floats by ``repr``: bit-exact)."""
    if isinstance(v, tuple | list):
        return [_plain(x) for x in v]
    a = np.asarray(v)
    return {"dtype": str(a.dtype), "shape": list(a.shape), "values": [repr(x) for x in a.ravel().tolist()]}


def _record(fn, wrt, args, backend="numpy", **selection) -> dict:
    """Compile ``fn`` once, call it once, and keep what it generated."""
    rec: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            f = cn.coarsen(fn, wrt=wrt or None, backend=backend, **selection)
            try:
                rec["value"] = _plain(f(*args))
                if wrt and isinstance(rec["value"], dict) and not rec["value"]["shape"]:
                    rec["grad"] = _plain(f.grad(*args))
            except cn.CoarsenError as exc:    # a non-scalar result, or the cupy module not loadable here
                rec["call_error"] = str(exc).splitlines()[0]
                if f._last is None:
                    return rec
            rec["source"] = f.source
            rec["fallback"] = f.fallback
            rec["cost"] = f.cost.as_dict()
        except cn.CoarsenError as exc:
            rec["compile_error"] = str(exc)
    return rec


def snapshot() -> dict:
    out: dict = {}
    for e in CORPUS:
        args = e.make_args(np.random.default_rng(0))
        for sel, kw in SELECTIONS.items():
            out[f"corpus/{e.name}/{sel}"] = _record(e.fn, e.wrt, args, **kw)
        out[f"corpus/{e.name}/cupy"] = _record(e.fn, e.wrt, args, backend="cupy")
    for name in sorted(KERNELS):
        mod = KERNELS[name]
        args = mod.make_inputs(mod.META["test_size"], 0)
        for sel, kw in SELECTIONS.items():
            out[f"kernel/{name}/{sel}"] = _record(function(mod), mod.META["wrt"], args, **kw)
        out[f"kernel/{name}/cupy"] = _record(function(mod), mod.META["wrt"], args, backend="cupy")
    return out


def _numba_source(fn, wrt, args) -> dict:
    """The numba module ``fn`` compiles to for ``args``: its source as the loader receives it (the loader is
    replaced by one that keeps the text and loads nothing, so Numba compiles nothing: seconds, not minutes)."""
    from coarsen_nb import numba_loader

    kept: list[str] = []

    def keep(parts, *args, **kwargs):
        kept.append(module_parts.joined(parts))
        raise ImportError("kept, not loaded")

    real, numba_loader.load = numba_loader.load, keep
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            f = cn.coarsen(fn, wrt=wrt or None, backend="numba")
            f._specialize(args)
    except cn.CoarsenError as exc:
        if not kept:
            return {"compile_error": str(exc)}
    finally:
        numba_loader.load = real
    return {"source": kept[-1]} if kept else {"compile_error": "no module"}


def numba_snapshot() -> dict:
    """The numba modules of the default selection: every corpus entry and kernel."""
    out: dict = {}
    for e in CORPUS:
        out[f"corpus/{e.name}/numba"] = _numba_source(e.fn, e.wrt, e.make_args(np.random.default_rng(0)))
    for name in sorted(KERNELS):
        mod = KERNELS[name]
        out[f"kernel/{name}/numba"] = _numba_source(function(mod), mod.META["wrt"],
                                                    mod.make_inputs(mod.META["test_size"], 0))
    return out


def compare(new: dict, old: dict) -> list[str]:
    """Every difference between two snapshots, one line each."""
    diffs = [f"{k}: only in one snapshot" for k in sorted(set(new) ^ set(old))]
    for k in sorted(set(new) & set(old)):
        for field in sorted(set(new[k]) | set(old[k])):
            if new[k].get(field) != old[k].get(field):
                diffs.append(f"{k}: {field} differs")
    return diffs


def _floats(v) -> list:
    """The numbers of a snapshot value (``_plain``), flattened, as floats; None where not numeric."""
    if isinstance(v, list):
        return [x for part in v for x in (_floats(part) or [None])]
    try:
        return [float(x) for x in v["values"]]
    except (TypeError, ValueError, KeyError):
        return None


def compare_values(new: dict, old: dict, tol: float = 1e-12) -> tuple[int, list[str]]:
    """(how many numbers were compared, every value or gradient that differs by more than ``tol``,
    relative to its size where that is above 1).  For a change that alters generated source on
    purpose (names, printed constants) and must not alter what it computes."""
    import math
    count, diffs = 0, []
    for k in sorted(set(new) & set(old)):
        for field in ("value", "grad", "call_error", "compile_error"):
            a, b = new[k].get(field), old[k].get(field)
            if field.endswith("error") or a is None or b is None:
                if a != b:
                    diffs.append(f"{k}: {field} differs")
                continue
            fa, fb = _floats(a), _floats(b)
            if fa is None or fb is None or len(fa) != len(fb) or \
                    json.dumps(_shapes(a)) != json.dumps(_shapes(b)):
                diffs.append(f"{k}: {field} differs in kind or shape")
                continue
            for x, y in zip(fa, fb, strict=True):
                count += 1
                same = x == y or (math.isnan(x) and math.isnan(y)) or abs(x - y) <= tol * max(1.0, abs(y))
                if not same:
                    diffs.append(f"{k}: {field} differs: {x!r} vs {y!r}")
                    break
    return count, diffs


def _shapes(v):
    return [_shapes(x) for x in v] if isinstance(v, list) else (v.get("dtype"), v.get("shape"))


def _refuse_text_comparisons() -> None:
    """Patch every expression record of ``lower/lir_exprs.py`` so that ``record == "text"`` raises: while the
    printers move from text to records, a forgotten ``code == "1"`` would be False and change nothing
    visible but the generated code's choice (issue 13, notes/lowered-ir.md)."""
    from coarsen_nb.lower import lir_exprs

    def strict(eq):
        def __eq__(self, other):
            if isinstance(other, str):
                raise TypeError(f"a lowered-IR record compared with text: {self!r} == {other!r}")
            return eq(self, other)
        return __eq__

    for cls in vars(lir_exprs).values():
        if isinstance(cls, type) and issubclass(cls, lir_exprs.Expr) and cls is not lir_exprs.Expr:
            cls.__eq__ = strict(cls.__eq__)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", help="the JSON file to write")
    ap.add_argument("--compare", metavar="OLD", help="a snapshot to compare with; exit 1 on any difference")
    ap.add_argument("--values", action="store_true", help="with --compare: compare only values and "
                    "gradients, to 1e-12 (the source may differ); with OUT an existing snapshot, not rerun")
    ap.add_argument("--records-strict", action="store_true", help="make a lowered-IR expression refuse to be "
                    "compared with text (a printer moved to records that still compares a value with a string "
                    "raises, instead of silently taking the other branch)")
    ap.add_argument("--numba", action="store_true", help="record the numba backend's module source (default "
                    "selection, not compiled) instead of the NumPy and CuPy snapshot")
    a = ap.parse_args(argv)
    if a.records_strict:
        _refuse_text_comparisons()
    if a.values and a.compare and os.path.exists(a.out):
        with open(a.out) as fh, open(a.compare) as fo:
            snap, old = json.load(fh), json.load(fo)
        count, diffs = compare_values(snap, old)
        print("\n".join(diffs) or f"equal to 1e-12: {count} numbers (values and gradients) in "
              f"{len(set(snap) & set(old))} compilations")
        return 1 if diffs else 0
    snap = numba_snapshot() if a.numba else snapshot()
    with open(a.out, "w") as fh:
        json.dump(snap, fh, indent=1, sort_keys=True)
    sources = sum("source" in r for r in snap.values())
    print(f"{len(snap)} compilations, {sources} generated modules -> {a.out}")
    if a.compare and a.values:
        with open(a.compare) as fh:
            count, diffs = compare_values(snap, json.load(fh))
        print("\n".join(diffs) or f"equal to 1e-12: {count} numbers (values and gradients)")
        return 1 if diffs else 0
    if a.compare:
        with open(a.compare) as fh:
            diffs = compare(snap, json.load(fh))
        print("\n".join(diffs) or "identical: source, cost, values and gradients")
        return 1 if diffs else 0
    return 0


if __name__ == "__main__":
    if os.environ.get("PYTHONHASHSEED") != "0":        # see the module docstring
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable, *sys.argv])
    sys.exit(main())
