"""Random programs at a large budget: every drawn program under every named backend and selection.

The property tests (``tests/phi/test_random_programs.py``, ``tests/lower/test_numba_random_programs.py``)
stop at their first failure and shrink it; at a budget of thousands of programs that is too slow and hides
every later failure.  This driver draws programs from the suite's own generators with a fixed seed, checks
each under each configuration, and logs every failure at once (one JSON line with the program text, its
arguments and the message) without shrinking; a failure is then minimized by hand into a regression test.

What is checked: ``tests/program_check.py`` (value, exception type, gradient, no fallback, no internal
error).

Usage (from the repository root; one process per seed, ``nice`` it on a shared machine)::

    PYTHONPATH=. nice -n 10 python tests/fuzz_driver.py --gen ext --seed 21 --examples 400 \\
        --configs numpy:default,numpy:max_soi=1,numpy:per_block --log /tmp/fuzz/ext_21.jsonl

Generators: ``prog`` (``program_cases()``), ``ext`` (``program_cases(extended=True)``), ``mixed``
(``vector_program_gen.mixed_programs()``).  A summary line goes to stdout at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("COARSEN_NB_PIPELINE_CACHE", "0")     # as the suite: every program compiled anew
os.environ.setdefault("COARSEN_NB_CACHE", tempfile.mkdtemp(prefix="fuzz_numba_cache_"))

from hypothesis import HealthCheck, given, seed, settings  # noqa: E402
from program_check import SELECTIONS, check_program, python_result  # noqa: E402
from program_gen import main_function, program_cases  # noqa: E402
from vector_program_gen import mixed_programs  # noqa: E402

GENERATORS = {"prog": program_cases, "ext": lambda: program_cases(extended=True), "mixed": mixed_programs}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gen", choices=sorted(GENERATORS), required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--examples", type=int, default=100)
    parser.add_argument("--configs", default="numpy:default,numpy:max_soi=1,numpy:per_block",
                        help="comma-separated BACKEND:SELECTION, selections: " + ", ".join(SELECTIONS))
    parser.add_argument("--log", required=True, help="failures are appended here, one JSON line each")
    options = parser.parse_args(argv)
    configs = [c.split(":") for c in options.configs.split(",")]
    counts = {"programs": 0, "python_raises": 0, "failures": 0}
    started = time.process_time()

    @settings(max_examples=options.examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @seed(options.seed)
    @given(GENERATORS[options.gen]())
    def run(p):
        counts["programs"] += 1
        if counts["programs"] % 50 == 0:
            print(options.gen, options.seed, counts, f"cpu {time.process_time() - started:.1f} s", flush=True)
        counts["python_raises"] += python_result(main_function(p.source), p.args)[1] is not None
        for backend, selection in configs:
            message = check_program(p, backend, selection)
            if message is not None:
                counts["failures"] += 1
                with open(options.log, "a") as log:
                    log.write(json.dumps({"gen": options.gen, "seed": options.seed, "backend": backend,
                                          "selection": selection, "message": message, "source": p.source,
                                          "args": repr(p.args), "params": p.params, "wrt": p.wrt}) + "\n")

    run()
    print(options.gen, options.seed, options.configs, counts, f"cpu {time.process_time() - started:.1f} s",
          flush=True)


if __name__ == "__main__":
    main()
