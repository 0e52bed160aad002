"""Benchmarks: coarsen_nb against its peers on the workloads in ``kernels/``.

``python -m coarsen_nb.benchmarks [--quick]`` (or ``coarsen-nb bench``) runs :func:`benchmarks.cli.main`.
Modules: :mod:`~coarsen_nb.benchmarks.peers` (one adapter per method), :mod:`~coarsen_nb.benchmarks.measure`
(one watched measurement: correctness guard, timing, memory), :mod:`~coarsen_nb.benchmarks.harness`
(worker processes, run plan, ratios), :mod:`~coarsen_nb.benchmarks.report` (tables, plot, RESULTS.md).
"""
