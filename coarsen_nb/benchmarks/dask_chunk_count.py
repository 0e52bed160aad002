"""How many corpus entries and kernels run chunk by chunk on Dask arrays, and why the others do not (issue 18).

    PYTHONPATH=. python -m coarsen_nb.benchmarks.dask_chunk_count [--reasons] [--json OUT]

For every entry of ``tests/dask/test_dask_corpus.ENTRIES`` (the corpus entries with an array argument) in its
three chunkings (one chunk, twos, single elements), and every kernel of ``tests/dask/test_dask_kernels.CHUNKED``
in its three (one chunk, uneven, single), the entry (the gradient where differentiable, else the value) is
specialized for the Dask arguments and asked ``chunk_refusal``
(:meth:`coarsen_nb.dask_arrays._Run.chunk_refusal`): nothing is computed.  A refusal raised while
specializing (a loop run iteration by iteration over a chunked axis) counts as not chunked.  Prints the
counts (chunked in every chunking, in some; entry-chunkings) and, with ``--reasons``, each refusal.  Run it
on two checkouts (``PYTHONPATH`` and the checkout's own module) to count before and after a change.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

import numpy as np


def _refusal(f, dargs, differentiable: bool) -> str:
    c = f._specialize(dargs)
    run = c.grad if differentiable and c.grad is not None else c.forward
    return run.chunk_refusal(dargs)


def _said(f, dargs, differentiable: bool, cn) -> str:
    try:
        return _refusal(f, dargs, differentiable)
    except cn.CoarsenError as exc:
        return f"CoarsenError: {str(exc).splitlines()[0]}"


def _entries(cn, da) -> dict:
    from test_dask_corpus import CHUNK_SIZES, ENTRIES

    said = {}
    for name in sorted(ENTRIES):
        e = ENTRIES[name]
        f = cn.coarsen(e.fn, wrt=e.wrt or None)
        args = e.make_args(np.random.default_rng(0))
        for how, size in CHUNK_SIZES.items():
            dargs = tuple(da.from_array(x, chunks=size or np.shape(x)) if np.ndim(x) >= 1 else x for x in args)
            said[name, how] = _said(f, dargs, e.differentiable, cn)
    return said


def _kernels(cn) -> dict:
    from dask_chunks import CHUNKINGS
    from test_dask_kernels import CHUNKED, _inputs, _on_dask

    from coarsen_nb.kernels import KERNELS, function

    said = {}
    for name in sorted(CHUNKED):
        f = cn.coarsen(function(KERNELS[name]), wrt=KERNELS[name].META["wrt"])
        args = _inputs(name)
        for how in CHUNKINGS:
            said[name, how] = _said(f, _on_dask(name, args, how), True, cn)
    return said


def _report(what: str, said: dict, reasons: bool) -> None:
    per = collections.defaultdict(list)
    for (name, _), r in said.items():
        per[name].append(not r)
    every = sorted(n for n, v in per.items() if all(v))
    some = sorted(n for n, v in per.items() if any(v))
    print(f"{what}: {len(every)} of {len(per)} chunked in every chunking, {len(some)} in some; "
          f"{sum(not r for r in said.values())} of {len(said)} in all chunkings")
    print("  every:", " ".join(every))
    print("  some only:", " ".join(sorted(set(some) - set(every))))
    if reasons:
        for (name, how), r in sorted(said.items()):
            if r:
                print(f"    {name} [{how}]: {r}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--reasons", action="store_true")
    p.add_argument("--json")
    a = p.parse_args(argv)
    import dask.array as da  # (before tests/dask is on the path)

    import coarsen_nb as cn

    sys.path[:0] = [str(Path(__file__).resolve().parents[2] / "tests" / "dask")]
    entries, kernels = _entries(cn, da), _kernels(cn)
    _report("corpus entries", entries, a.reasons)
    _report("kernels", kernels, a.reasons)
    if a.json:
        Path(a.json).write_text(json.dumps({f"{kind}|{n}|{h}": r for kind, said in
                                            (("entry", entries), ("kernel", kernels))
                                            for (n, h), r in said.items()}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
