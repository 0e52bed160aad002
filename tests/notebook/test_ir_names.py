"""The IR view names the compiler's temporaries as the generated code does, and changes nothing else.

What must hold for every corpus program: no compiler name (``$k1``, ``_clip3:v``) is left in the view's SSA
and gated forms, and the view is the compiler's own text with its names replaced one for one — each name
always by the same name, two names never by one, the user's variables and everything that is not a name
unchanged — so the view says what the IR says.
"""

from __future__ import annotations

import re

import pytest
from corpus import CORPUS, CORPUS_IDS

import coarsen_nb as cn
from coarsen_nb.notebook.ir_names import readable_gated, readable_ssa

#: A name of the IR (with its versions), or any other run of characters that is not one.
_TOKENS = re.compile(r"[$A-Za-z_][\w$:]*(?:\.\d+)*(?:\.out)?|[^$A-Za-z_]+")


def _renaming(before: str, after: str) -> dict[str, str]:
    """The name-for-name mapping that turns ``before`` into ``after`` (asserting that one exists)."""
    old, new = _TOKENS.findall(before), _TOKENS.findall(after)
    assert len(old) == len(new)
    mapping: dict[str, str] = {}
    for a, b in zip(old, new, strict=True):
        if a != b:
            assert re.fullmatch(r"[$A-Za-z_][\w$:]*(?:\.\d+)*(?:\.out)?", a), (a, b)    # (only names change)
        assert mapping.setdefault(a, b) == b, (a, mapping[a], b)                       # (always the same)
    assert len(set(mapping.values())) == len(mapping), "two names shown as one"
    return mapping


@pytest.mark.parametrize("entry", CORPUS, ids=CORPUS_IDS)
def test_the_ir_view_names_temporaries_by_their_words(entry):
    f = cn.coarsen(entry.fn)
    for before, after in ((f.ssa, readable_ssa(f.ssa_function)), (f.gated, readable_gated(f.gated_function))):
        mapping = _renaming(before, after)
        assert "$" not in after and not re.search(r"\w:\w", after), after
        for old, new in mapping.items():
            if old != new and not old.startswith("$") and ":" not in old.split(".")[0]:
                raise AssertionError(f"the user's {old} is shown as {new}")
