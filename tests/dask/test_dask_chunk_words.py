"""An index in a chunk-sum refusal is spelled as the user wrote it (coarsen_nb/dask_chunk_words.py), against
the plan's SymPy expression of it in the user's names."""

from __future__ import annotations

import sympy as sp

from coarsen_nb.dask_chunk_words import Spellings

i, n_x, j = sp.symbols("i n_x j")

SOURCE = '''
    def mirrored(x, y, a):
        s = 0.0
        for i in range(len(x)):
            s += a * x[len(x) - 1 - i] * y[i, 2 * j] + x[x.shape[0] - (i + 1)]
        return s
'''


def test_the_subscript_whose_index_is_the_expression_gives_its_text():
    said = Spellings(SOURCE)            # (indented, as a method's source is: dedented first)
    assert said.index("x", (-i + n_x - 1,)) == "len(x) - 1 - i"
    assert said.index("y", (i, 2 * j)) == "i, 2 * j"


def test_no_subscript_of_that_array_and_index_is_no_spelling():
    said = Spellings(SOURCE)
    assert said.index("x", (i,)) is None        # (x is read at i nowhere)
    assert said.index("z", (-i + n_x - 1,)) is None
    assert said.index("y", (i,)) is None        # (y is read at two indices)


def test_a_source_that_does_not_parse_has_no_spellings():
    assert Spellings("def f(x:\n    return x[i]").index("x", (i,)) is None
    assert Spellings(None).index("x", (i,)) is None
