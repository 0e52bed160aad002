"""Census of the NumPy printer's level domains over the corpus and the kernels, each verified.

Compiles every corpus entry (``tests/corpus.py``) and every kernel (``kernels/``) under the default selection
with the NumPy backend, records every level domain the printer's pre-pass builds (``domain.loop_level``,
``masked_level``, ``arg_point``, called by ``soi_levels.LevelWalk``: a loop at one point, a rectangular nest,
a segment per point, a branch's points, an arg-extremum's point), runs ``domain.verify`` on each, and prints
how many entries open each kind under each kind of enclosing points, with one example's text::

    PYTHONPATH=. python tests/level_domains.py
    PYTHONPATH=. python tests/level_domains.py --pre-pass

With ``--pre-pass`` it also records each printer's outermost values (the expression and the loop indices of
the level it is asked at) and the domains of the levels it printed, and runs the pre-pass once more on the
whole list of values (``soi_levels.soi_levels``, a fresh walk, where the printer walked each value just before
printing it): it prints each compilation where the two sequences of domains differ (the first domain that
differs) and the count of printers that agree.

Not a test module (no ``test_`` prefix): it is a tool, and it takes a few minutes; ``tests/lower/
test_domain.py`` checks the same on a few entries.  Run with ``COARSEN_NB_PIPELINE_CACHE=0`` (a cached
pipeline prints nothing, so it builds no domain).
"""

from __future__ import annotations

import collections
import os
import sys
import types
import warnings

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [_HERE, os.path.dirname(_HERE)]


def _key(dom) -> tuple:
    """A level domain's fields (``Domain`` compares by identity): two levels equal when these are."""
    return dom.kind, dom.index, dom.bounds, dom.over, dom.outer, dom.where


class LevelRecorder:
    """Records every level domain the NumPy printer's pre-pass builds (``seen``: ``(body, domain)``, ``body``
    with the SOI's ``deps`` for ``verify``) and, per printer, its outermost values (``printers``: id ->
    (printer, entries, the domains of the levels it printed, in order)); ``install(setattr)`` patches the
    builders, the printer's check of each printed level and its entry points (``setattr``: the builtin, or
    pytest's ``monkeypatch.setattr``)."""

    def __init__(self):
        self.seen: list = []
        self.printers: dict = {}
        self._depth, self._current = 0, None

    def clear(self) -> None:
        self.seen.clear()
        self.printers.clear()

    def install(self, setattr_=setattr) -> None:
        from coarsen_nb.lower import domain, emit, level_printing, soi_levels

        setattr_(soi_levels, "loop_level", self._builder(domain.loop_level, True))
        setattr_(soi_levels, "masked_level", self._builder(domain.masked_level, False))
        setattr_(soi_levels, "arg_point", self._builder(domain.arg_point, False))
        setattr_(level_printing.LevelPrinting, "_mirrored", staticmethod(
            self._printed(level_printing.LevelPrinting._mirrored)))
        for name, how in (("value", "value"), ("level_for", "level"), ("rect_product", "rect_product"),
                          ("arg_scatter", "arg_scatter")):
            setattr_(emit.Printer, name, self._entry(getattr(emit.Printer, name), how))

    def _builder(self, builder, with_deps):
        def recorded(*args):
            dom = builder(*args)
            self.seen.append((types.SimpleNamespace(deps=args[0] if with_deps else lambda e: frozenset()), dom))
            return dom
        return recorded

    def _printed(self, mirrored):
        """The printer's levels as it prints them (each taken from its pre-pass and checked against it)."""
        def recorded(level, points):
            out = mirrored(level, points)
            if level.domain is not None and self._current is not None:
                self.printers[id(self._current)][2].append(level.domain)
            return out
        return recorded

    def _entry(self, method, how):
        def recorded(pr, *args, **kwargs):
            if self._depth == 0:
                entries = self.printers.setdefault(id(pr), (pr, [], []))[1]
                if how in ("rect_product", "arg_scatter"):
                    entries.append((args[0], tuple(args[1].binders), how))
                elif how == "level":
                    entries.append((None, tuple(args[0])))
                else:
                    e, ctx = args[0], args[1] if len(args) > 1 else kwargs.get("ctx")
                    kinds = [] if ctx is None else [a.kind for a in ctx.ancestors()]
                    ok = all(k in ("root", "range", "elem") for k in kinds)
                    entries.append((e, tuple(ctx.binders) if ctx is not None else ()) if ok else ("unsupported", kinds))
            self._depth += 1
            outer, self._current = self._current, pr
            try:
                return method(pr, *args, **kwargs)
            finally:
                self._depth -= 1
                self._current = outer

        return recorded

    def compare(self):
        """Per printer: None where neither opens a level; else ``(printed, pre-pass)``, both ``[]`` when the
        pre-pass opens the same level domains (equal by their fields: ``Domain`` compares by identity) in the
        same order as the printer built them, else the first that differs on each side (``#i: text``, or
        ``#i: (none)`` where one side ends).  An entry at points the pre-pass does not take (a masked arm's)
        is one ``("unsupported", kinds)`` on the left."""
        from coarsen_nb.lower import soi_levels

        for pr, entries, printed in self.printers.values():
            bad = [x for x in entries if x[0] == "unsupported"]
            if bad:
                yield bad, []
                continue
            pre = soi_levels.soi_levels(pr, entries)
            if not printed and not pre:
                yield None          # (a printer that opens no level, nor does the pre-pass for it)
                continue
            keys = [_key(d) for d in printed], [_key(d) for d in pre]
            if keys[0] == keys[1]:
                yield [], []
                continue
            i = next(i for i, (a, b) in enumerate(zip(*keys, strict=False)) if a != b) \
                if any(a != b for a, b in zip(*keys, strict=False)) else min(map(len, keys))
            yield tuple([f"#{i}: {side[i] if i < len(side) else '(none)'}"] for side in (printed, pre))


def main() -> int:
    from corpus import CORPUS

    import coarsen_nb as cn
    from coarsen_nb.kernels import KERNELS, function
    from coarsen_nb.lower import domain

    rec = LevelRecorder()
    rec.install()
    pre_pass = "--pre-pass" in sys.argv[1:]
    agree = differ = nonempty = 0
    items = [("corpus", e.name, e.fn, e.wrt, lambda e=e: e.make_args(np.random.default_rng(0))) for e in CORPUS]
    items += [("kernel", n, function(m), m.META["wrt"], lambda m=m: m.make_inputs(m.META["test_size"], 0))
              for n, m in KERNELS.items()]
    census, example, failed = collections.defaultdict(set), {}, 0
    for source, name, fn, wrt, args in items:
        rec.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                cn.coarsen(fn, wrt=wrt or None, backend="numpy")._specialize(args())
            except cn.CoarsenError as exc:
                print(f"{source}/{name}: {type(exc).__name__}")
        for diff in rec.compare() if pre_pass else ():
            if diff is None or diff == ([], []):
                agree += 1
                nonempty += diff is not None
            else:
                differ += 1
                print(f"{source}/{name}: printed {diff[0]}; pre-pass {diff[1]}")
        for deps, dom in rec.seen:
            try:
                domain.verify(dom, deps)
            except AssertionError as exc:
                failed += 1
                print(f"{source}/{name}: {dom}: {exc}")
            census[(dom.kind, dom.outer)].add(f"{source}/{name}")
            example.setdefault((dom.kind, dom.outer), str(dom))
    for (kind, outer), names in sorted(census.items()):
        print(f"{kind:8} under {outer:8} {len(names):3} entries, e.g. {example[(kind, outer)][:90]}")
    print(f"{len(items)} compilations, {sum(map(len, census.values()))} (entry, kind) pairs, {failed} failed verify")
    if pre_pass:
        print(f"pre-pass: {agree} printers' levels equal the printed ones ({nonempty} of them open a level), "
              f"{differ} differ")
    return 1 if failed or differ else 0


if __name__ == "__main__":
    sys.exit(main())
