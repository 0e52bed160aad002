"""The same computation written in loop style and in vectorized style (issue 15): both compile, and their
values and gradients agree with each other to 1e-10 and with central differences.  (Their speeds are
compared in the benchmarks, not here.)"""

from __future__ import annotations

import numpy as np
import pytest
from gradcheck import assert_close, finite_difference

import coarsen_nb as cn
from coarsen_nb.benchmarks.style_pairs import PAIRS


@pytest.mark.parametrize("loop, vec, make", PAIRS, ids=[p[1].__name__ for p in PAIRS])
def test_loop_and_vectorized_styles_agree(loop, vec, make):
    f_loop, f_vec = cn.coarsen(loop), cn.coarsen(vec)
    for seed in range(4):
        rng = np.random.default_rng(seed)
        args = make(rng, int(rng.integers(1, 9)))
        assert_close(f_loop(*args), f_vec(*args), rtol=1e-10, atol=1e-12, what=f"{loop.__name__} value")
        g_loop, g_vec = f_loop.grad(*args), f_vec.grad(*args)
        g_loop = g_loop if isinstance(g_loop, tuple) else (g_loop,)
        g_vec = g_vec if isinstance(g_vec, tuple) else (g_vec,)
        for k, (a, b) in enumerate(zip(g_loop, g_vec, strict=True)):
            assert_close(a, b, rtol=1e-10, atol=1e-12, what=f"{loop.__name__} d/d{k} loop vs vectorized")
            assert_close(b, finite_difference(vec, args, k), rtol=1e-5, atol=1e-6, what=f"{vec.__name__} vs FD")
