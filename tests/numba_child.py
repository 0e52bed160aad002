"""What the fresh-process Numba tests share: a child script's start (the energy function they compile, a
listener that records each Numba compilation by name, a fallback to NumPy code made an error), running a
script in a fresh process for the JSON line it prints last, and the plain Python reference with its central
differences.  A fresh process is how these tests see Numba's disk cache and its compile events alone."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np

#: the start of every child script: ``SOURCE`` (a loop that sums ``w*d*d + 0.5*x[i]``), ``compiled`` (the
#: names of the functions Numba compiles while ``Count()`` is installed on "numba:compile")
PREAMBLE = textwrap.dedent('''
    import json, sys, warnings
    import numpy as np
    import coarsen_nb as cn
    from numba.core import event
    warnings.simplefilter("error", UserWarning)     # a fallback to NumPy code fails the test
    SOURCE = """
    def energy(x, w):
        s = 0.0
        for i in range(len(x) - 1):
            d = x[i + 1] - x[i]
            s += w * d * d + 0.5 * x[i]
        return s
    """
    compiled = []

    class Count(event.Listener):
        def on_start(self, ev):
            compiled.append(ev.data["dispatcher"].py_func.__name__)

        def on_end(self, ev):
            pass
''')


def run_child(body: str, *args: str, env: dict[str, str] | None = None) -> dict:
    """Run ``PREAMBLE`` + ``body`` in a fresh interpreter; the JSON object its last line prints."""
    done = subprocess.run([sys.executable, "-c", PREAMBLE + textwrap.dedent(body), *args], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def energy(scale: float = 0.5):
    """The plain Python ``SOURCE``, with ``scale`` in place of its 0.5."""
    def plain(x, w):
        return sum(w * (x[i + 1] - x[i]) ** 2 + scale * x[i] for i in range(len(x) - 1))
    return plain


def central(fn, x, w, h: float = 1e-6):
    """Central differences of ``fn(x, w)`` in each element of x and in w."""
    gx = np.array([(fn(x + h * e, w) - fn(x - h * e, w)) / (2 * h) for e in np.eye(len(x))])
    return gx, (fn(x, w + h) - fn(x, w - h)) / (2 * h)
