"""Numba's error messages are marked up without colorama's ``init``/``deinit`` during a compile, and are the
same strings (coarsen_nb/numba_plain_markup.py): counted by wrapping colorama's ``init`` as Numba's
``errors`` module calls it, with each message against the one Numba makes outside the block.

In a fresh process: the block sets an attribute on Numba's one color scheme object, and a process that
compiled nothing before shows the count of a compile's own markups.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np

_PROCESS = textwrap.dedent('''
    import json
    import numba
    import numpy as np
    from numba.core import errors
    from coarsen_nb.numba_plain_markup import markup_without_stream_wrapping

    scheme = errors.termcolor()
    out = {"scheme": type(scheme).__name__}
    inits = []
    real_init = getattr(errors, "init", None)
    if real_init is not None:
        def counted_init(*args, **kwargs):
            inits.append(1)
            return real_init(*args, **kwargs)
        errors.init = counted_init

    def messages():
        return [scheme.errmsg("no match"), scheme.code("x = 1"), scheme.filename("f.py"),
                scheme.indicate("^"), scheme.highlight("here"), scheme.reset("r"),
                scheme._markup("plain", None, None)]

    outside = messages()
    out["inits_outside"] = len(inits)

    @numba.njit
    def f(x):
        return np.sum(x * 2.0) + max(1, x.shape[0])

    del inits[:]
    with markup_without_stream_wrapping():
        inside = messages()
        value = f(np.arange(4.0))
        out["inits_inside"] = len(inits)
    out["same"] = inside == outside
    out["value"] = float(value)
    out["restored"] = "_markup" not in vars(scheme)
    with markup_without_stream_wrapping():
        with markup_without_stream_wrapping():      # (nested: the outer one's, then none)
            pass
        out["nested_kept"] = "_markup" in vars(scheme) or out["scheme"] != "HighlightColorScheme"
    out["restored_again"] = "_markup" not in vars(scheme)
    print(json.dumps(out))
''')


def test_messages_are_the_same_and_colorama_is_not_called_inside_the_block():
    done = subprocess.run([sys.executable, "-c", _PROCESS], capture_output=True, text=True, check=True)
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["same"]
    assert out["value"] == float(np.sum(np.arange(4.0) * 2.0) + 4)
    assert out["restored"] and out["restored_again"] and out["nested_kept"]
    if out["scheme"] == "HighlightColorScheme":
        # (outside, each markup wrapped the streams: seven messages, seven inits)
        assert out["inits_outside"] == 7
        assert out["inits_inside"] == 0
