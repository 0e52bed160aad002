"""Census of the NumPy printer's level domains over the corpus and the kernels, each verified.

Compiles every corpus entry (``tests/corpus.py``) and every kernel (``kernels/``) under the default selection
with the NumPy backend, records every level domain the printer builds (``domain.loop_level``,
``masked_level``, ``arg_point``: a loop at one point, a rectangular nest, a segment per point, a branch's
points, an arg-extremum's point), runs ``domain.verify`` on each, and prints how many entries open each kind
under each kind of enclosing points, with one example's text::

    PYTHONPATH=. python tests/level_domains.py

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


def main() -> int:
    from corpus import CORPUS

    import coarsen_nb as cn
    from coarsen_nb.kernels import KERNELS, function
    from coarsen_nb.lower import branches, domain, level_printing, segment_printing

    seen: list = []

    def recorder(builder, with_deps):
        def recorded(*args):
            dom = builder(*args)
            seen.append((types.SimpleNamespace(deps=args[0] if with_deps else lambda e: frozenset()), dom))
            return dom
        return recorded

    level_printing.loop_level = recorder(domain.loop_level, True)
    branches.masked_level = recorder(domain.masked_level, False)
    segment_printing.arg_point = recorder(domain.arg_point, False)
    items = [("corpus", e.name, e.fn, e.wrt, lambda e=e: e.make_args(np.random.default_rng(0))) for e in CORPUS]
    items += [("kernel", n, function(m), m.META["wrt"], lambda m=m: m.make_inputs(m.META["test_size"], 0))
              for n, m in KERNELS.items()]
    census, example, failed = collections.defaultdict(set), {}, 0
    for source, name, fn, wrt, args in items:
        seen.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                cn.coarsen(fn, wrt=wrt or None, backend="numpy")._specialize(args())
            except cn.CoarsenError as exc:
                print(f"{source}/{name}: {type(exc).__name__}")
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
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
