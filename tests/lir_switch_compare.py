"""How far the passes over records (``ModuleWriter._finish``) would change the generated code today.

Step 3 of notes/lowered-ir.md switches ``_function`` from the text passes of ``lower/liveness.py`` to
``lower/lir_passes.py``.  The record passes refuse a body holding a ``Raw`` (what the rules still return
as text): its reads are unknown.  This tool compiles what the snapshot compiles
(``tests/generated_code_snapshot.py``), runs both on every function body with that refusal lifted, and
says which functions would print differently and whether a ``Raw`` explains it (a name the difference
is about that occurs in a ``Raw``'s text, where the record passes cannot see it); likewise the module's
``import ... as xp`` from ``modules_used`` against ``"xp." in code``.  Not a test (no ``test_`` prefix)::

    python tests/lir_switch_compare.py
"""

from __future__ import annotations

import difflib
import os
import re
import sys
from collections import Counter

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [_HERE, os.path.dirname(_HERE)]

import generated_code_snapshot as snap  # noqa: E402

from coarsen_nb.lower import lir, lir_passes, module, tangent  # noqa: E402
from coarsen_nb.lower.liveness import drop_dead_assignments, free_dead_names, physical_lines  # noqa: E402

_WORD = re.compile(r"[A-Za-z_]\w*")
STATS: Counter = Counter()
UNEXPLAINED: list[str] = []
USED: dict[int, set] = {}


def _raw_words(body) -> set[str]:
    return {w for s in lir.statements(body) for x in s.exprs() for e in lir.walk(x) if isinstance(e, lir.Raw)
            for w in _WORD.findall(e.code)}


def _raw_valued(body) -> set[str]:
    """The names assigned a value with a ``Raw`` in it (the record passes cannot tell it is a number)."""
    return {s.target.id for s in lir.statements(body) if isinstance(s, lir.Assign) and isinstance(s.target, lir.Name)
            and any(isinstance(e, lir.Raw) for e in lir.walk(s.value))}


def _names_of_del(line: str):
    """The set of names a ``del`` line frees (as a sorted tuple), else None."""
    text = line.strip()
    return tuple(sorted(text[4:].split(", "))) if text.startswith("del ") else None


def _compare(writer, name: str, body: list, keep: list[str], frees: bool) -> list[str]:
    """The text passes' lines (what is generated), after comparing them with ``_finish``'s."""
    lines = drop_dead_assignments(physical_lines(lir.print_body(body)))
    if frees:
        lines = free_dead_names(lines, keep=keep)
    done, used = writer._finish(body, keep, frees)
    USED.setdefault(id(writer.shared), set()).update(used)
    new = physical_lines(lir.print_body(done))
    STATS["functions"] += 1
    if new == lines:
        STATS["identical"] += 1
        return lines
    changed = [ln[1:] for ln in difflib.unified_diff(lines, new, lineterm="", n=0)
               if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]
    words = {w for ln in changed for w in _WORD.findall(ln.split("#", 1)[0])} - {"del", "pass"}
    diff = list(difflib.unified_diff(lines, new, lineterm="", n=0))
    removed = sorted(repr(_names_of_del(ln[1:])) for ln in diff if ln[:1] == "-" and not ln.startswith("---"))
    added = sorted(repr(_names_of_del(ln[1:])) for ln in diff if ln[:1] == "+" and not ln.startswith("+++"))
    if removed == added and "None" not in removed:
        # the same names freed at the same places in another order: the text pass orders them by
        # ``str.find`` in the statement, which finds ``q_scaled`` inside ``diff_plus_q_scaled``
        STATS["differ, only the order of a del's names"] += 1
    elif words & (_raw_words(body) | _raw_valued(body)):
        STATS["differ, a Raw hides a name (read in it, or the value assigned to it)"] += 1
    else:
        STATS["differ, unexplained"] += 1
        UNEXPLAINED.append(f"{name}:\n" + "\n".join(changed[:12]))
    return lines


def _function(self, name, params, body):
    self.body, self.indent = [], 1
    self.names.new_scope()
    body()
    keep = [self.names(p) for p in params if "=" not in p]
    lines = _compare(self, name, self.body, keep, self.backend.frees_temporaries)
    sig = ", ".join(self.names(p) if "=" not in p else p for p in params)
    return self._decorated(f"def {name}({sig}):\n" + "\n".join(lines) + "\n")


def jvp_function(self):
    params = list(self.plan.params) + [self.names.tangent(p) for p in self.wrt]
    self.body, self.indent = [], 1
    self.names.new_scope()
    self._body()
    lines = _compare(self, f"{self.plan.name}_jvp", self.body, [], False)
    sig = ", ".join(self.names(p) if p in self.plan.params else p for p in params)
    return self._decorated(f"def {self.plan.name}_jvp({sig}):\n" + "\n".join(lines) + "\n")


def main() -> int:
    unchecked = lir.verify

    def verify(body, structured=False):
        unchecked(body)             # (the measure: a Raw's reads are unknown, and allowed here)

    lir.verify = lir_passes.verify = verify
    module.ModuleWriter._function = _function
    tangent.TangentSweep.jvp_function = jvp_function
    source = module.ModuleWriter.source

    def checked_source(self):
        text = source(self)
        STATS["modules"] += 1
        imported = f"import {self.xp_module} as xp" in text
        used = USED.pop(id(self.shared), set())
        STATS["xp import " + ("agrees" if imported == self._imports_xp(used) else "differs")] += 1
        return text

    module.ModuleWriter.source = checked_source
    failed = [k for k, rec in snap.snapshot().items() if "compile_error" in rec]
    STATS["compilations that failed (this tool's own error shows as one)"] = len(failed)
    for k, v in sorted(STATS.items()):
        print(f"{k}: {v}")
    print("\n\n".join(UNEXPLAINED[:20]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
