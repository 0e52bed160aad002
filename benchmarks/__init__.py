"""Benchmarks: coarsen_nb against its peers on the workloads in ``kernels/``.

``python -m benchmarks [--quick]`` (or ``coarsen-nb bench``) runs :func:`benchmarks.cli.main`.
Modules: :mod:`~benchmarks.peers` (one adapter per method), :mod:`~benchmarks.measure`
(one watched measurement: correctness guard, timing, memory), :mod:`~benchmarks.harness`
(worker processes, run plan, ratios), :mod:`~benchmarks.report` (tables, plot, RESULTS.md).
"""
