"""Which entries of the dask tests compute part of their graph while building their result (a script, not a test).

Runs every corpus entry of test_dask_corpus.py (its three chunkings, refused ones left out) and every kernel
of test_dask_kernels.py (one chunk, uneven, one element each) under ``dask_chunks.EarlyComputes`` on Dask's
synchronous scheduler, and writes, for each that computed early, the generated lines it computed at (the
innermost frame outside Dask: a generated line or a helper's) with their counts, to ``OUT/early.json``, and
a summary to stdout.  ``--tree`` measures another checkout (its coarsen_nb and its test lists; this file's
``EarlyComputes``), e.g. the base of a branch:

    git -C /work/main worktree add --detach /tmp/base main
    PYTHONPATH=. python tests/dask/early_computes.py --out /tmp/early-new
    python tests/dask/early_computes.py --tree /tmp/base --out /tmp/early-base
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="a directory for early.json")
    ap.add_argument("--tree", default=str(HERE.parent.parent), help="the checkout to measure")
    opts = ap.parse_args()
    tree = Path(opts.tree).resolve()
    sys.path[:0] = [str(HERE), str(tree), str(tree / "tests"), str(tree / "tests" / "dask")]
    import dask
    import dask_chunks  # (this file's: EarlyComputes; the tree's test files import it by name)
    import numpy as np
    import test_dask_corpus as corpus
    import test_dask_kernels as kernels

    import coarsen_nb as cn

    assert Path(cn.__file__).resolve().is_relative_to(tree), cn.__file__
    early: dict[str, dict[str, int]] = {}

    def run(key, entry, args):
        scheduler = dask_chunks.EarlyComputes(dask.get)
        with dask.config.set(scheduler=scheduler):
            try:
                entry(*args)
            except cn.CoarsenError:
                return
        if scheduler.early:
            early[key] = dict(collections.Counter(scheduler.early))

    for name in sorted(corpus.ENTRIES):
        e = corpus.ENTRIES[name]
        f, args, _ = corpus._compiled(name)
        for how in corpus.EVERY:
            if corpus.refused(name, how):
                continue
            size = corpus.CHUNK_SIZES[how]
            dargs = tuple(dask_chunks.da.from_array(a, chunks=size or a.shape) if np.ndim(a) >= 1 else a
                          for a in args)
            run(f"corpus {name} {how}", f.value_and_grad if e.differentiable else f, dargs)
    for name in sorted(kernels.CHUNKED):
        f, args, _ = kernels._compiled(name)
        for how in dask_chunks.CHUNKINGS:
            run(f"kernel {name} {how}", f.value_and_grad, kernels._on_dask(name, args, how))
    out = Path(opts.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "early.json").write_text(json.dumps(early, indent=1))
    entries = collections.defaultdict(list)
    for key in early:
        kind, name, how = key.split()
        entries[f"{kind} {name}"].append(how)
    for entry, hows in entries.items():
        lines = collections.Counter()
        for how in hows:
            lines.update(early[f"{entry} {how}"])
        print(f"{entry} [{', '.join(hows)}]: " + "; ".join(f"{k} x{v}" for k, v in lines.items()))
    print(f"{len(entries)} entries computed early ({len(early)} entry-chunkings)")


if __name__ == "__main__":
    main()
