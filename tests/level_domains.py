"""Census of the NumPy printer's level domains over the corpus and the kernels, each verified.

Compiles every corpus entry (``tests/corpus.py``) and every kernel (``kernels/``) under the default selection
with the NumPy backend, records every level domain the printer builds (``domain.loop_level``,
``masked_level``, ``arg_point``: a loop at one point, a rectangular nest, a segment per point, a branch's
points, an arg-extremum's point), runs ``domain.verify`` on each, and prints how many entries open each kind
under each kind of enclosing points, with one example's text::

    PYTHONPATH=. python tests/level_domains.py
    PYTHONPATH=. python tests/level_domains.py --pre-pass

With ``--pre-pass`` it also records each printer's outermost values (the expression and the loop indices of
the level it is asked at) and compares the levels the pre-pass ``soi_levels.soi_levels`` decides for them,
before printing, with those that printer built, as sets of domains per printer: it prints each
compilation where they differ and the count of printers that agree.

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


def main() -> int:
    from corpus import CORPUS

    import coarsen_nb as cn
    from coarsen_nb.kernels import KERNELS, function
    from coarsen_nb.lower import branches, domain, emit, level_printing, segment_printing, soi_levels

    seen: list = []
    pre_pass = "--pre-pass" in sys.argv[1:]
    # (--pre-pass) per printer: its outermost values (expr, binders) and the domains it built
    printers: dict = {}
    depth = [0, None]

    def recorder(builder, with_deps):
        def recorded(*args):
            dom = builder(*args)
            seen.append((types.SimpleNamespace(deps=args[0] if with_deps else lambda e: frozenset()), dom))
            if depth[1] is not None:
                printers[id(depth[1])][2].append(dom)
            return dom
        return recorded

    def entry(method, with_expr):
        def recorded(self, *args, **kwargs):
            if depth[0] == 0:
                rec = printers.setdefault(id(self), (self, [], []))
                if with_expr == "rect_product":
                    rec[1].append((args[0], tuple(args[1].binders), "rect_product"))
                elif with_expr:
                    e, ctx = args[0], args[1] if len(args) > 1 else kwargs.get("ctx")
                    kinds = [] if ctx is None else [a.kind for a in ctx.ancestors()]
                    ok = all(k in ("root", "range", "elem") for k in kinds)
                    rec[1].append((e, tuple(ctx.binders) if ctx is not None else ()) if ok else ("unsupported", kinds))
                else:
                    rec[1].append((None, tuple(args[0])))
            depth[0] += 1
            outer, depth[1] = depth[1], self
            try:
                return method(self, *args, **kwargs)
            finally:
                depth[0] -= 1
                depth[1] = outer

        return recorded

    if pre_pass:
        emit.Printer.value = entry(emit.Printer.value, True)
        emit.Printer.level_for = entry(emit.Printer.level_for, False)
        emit.Printer.rect_product = entry(emit.Printer.rect_product, "rect_product")
    agree = differ = nonempty = 0

    level_printing.loop_level = recorder(domain.loop_level, True)
    branches.masked_level = recorder(domain.masked_level, False)
    segment_printing.arg_point = recorder(domain.arg_point, False)
    items = [("corpus", e.name, e.fn, e.wrt, lambda e=e: e.make_args(np.random.default_rng(0))) for e in CORPUS]
    items += [("kernel", n, function(m), m.META["wrt"], lambda m=m: m.make_inputs(m.META["test_size"], 0))
              for n, m in KERNELS.items()]
    census, example, failed = collections.defaultdict(set), {}, 0
    for source, name, fn, wrt, args in items:
        seen.clear()
        printers.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                cn.coarsen(fn, wrt=wrt or None, backend="numpy")._specialize(args())
            except cn.CoarsenError as exc:
                print(f"{source}/{name}: {type(exc).__name__}")
        for pr, entries, printed in printers.values():
            if any(x[0] == "unsupported" for x in entries):
                differ += 1
                print(f"{source}/{name}: an entry at points the pre-pass does not take: {entries}")
                continue
            pre = {_key(d): d for d in soi_levels.soi_levels(pr, entries)}
            printed = {_key(d): d for d in printed}
            if pre.keys() == printed.keys():
                agree += 1
                nonempty += bool(printed)
                continue
            differ += 1
            if os.environ.get("LEVEL_DOMAINS_DEBUG"):
                print(entries)
            print(f"{source}/{name}: printed only: {[str(printed[k]) for k in printed.keys() - pre.keys()]}; "
                  f"pre-pass only: {[str(pre[k]) for k in pre.keys() - printed.keys()]}")
        for deps, dom in seen:
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
