"""``coarsen_nb.malloc_policy``: freed arrays of a gradient's size are reused, not faulted in again.

Each case runs in a fresh interpreter (malloc's state is the process's): six arrays of 800 kB held at once
and freed together, as a gradient's temporaries are, 50 times.  Without the policy glibc gives the heap's top
back to the system after each round and the next takes its pages again by minor faults (hundreds a round);
with it the rounds reuse the memory.  Counted with ``getrusage``, not timed.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
                                reason="the policy sets glibc's malloc only")

_ROUNDS = r'''
import json, resource, sys
import numpy as np
from coarsen_nb.malloc_policy import keep_freed_memory
applied = keep_freed_memory() if sys.argv[1] == "policy" else None

def round_():
    held = [np.ones(100_000) for _ in range(6)]
    return sum(float(a[-1]) for a in held)

for _ in range(3):
    round_()
r0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(50):
    round_()
faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - r0) / 50
print(json.dumps({"applied": applied, "faults": faults}))
'''


def _run(mode: str, **env) -> dict:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_") and k != "COARSEN_NB_MALLOC"}
    environ.update(PYTHONPATH=root, **env)
    out = subprocess.run([sys.executable, "-c", _ROUNDS, mode], env=environ, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_without_the_policy_the_rounds_fault_and_with_it_they_do_not():
    before, after = _run("plain"), _run("policy")
    assert before["faults"] > 100          # (1200 pages a round are held: most come back by faults)
    assert after["applied"] is True
    assert after["faults"] < 5


def test_the_switch_and_glibcs_own_variables_leave_malloc_alone():
    assert _run("policy", COARSEN_NB_MALLOC="system")["applied"] is False
    assert _run("policy", MALLOC_TRIM_THRESHOLD_="1000000")["applied"] is False
