"""A ``def`` inside the compiled function (or a helper), inlined at its calls like a helper of the cell.

A nested function that reads locals of the function around it is a closure.  Python reads a
closure variable when the nested function *runs* (late binding), not when the ``def`` runs, and
inlining at the call site does exactly that: inside the inlined body, a free name that is a local of
the defining function is that function's variable, at the call.  So the desugaring is

* the ``def`` statement emits nothing; it records the function (a :class:`~.source.Unit` sharing
  the cell's text) and which enclosing variables its free names are;
* a call ``g(...)`` after it is inlined by :meth:`~.builder.BuilderState.inline`, with the closure names
  bound to the enclosing variables and the enclosing function's other nested defs callable too.

Refused, each with a CoarsenError at the ``def``: a ``def`` inside an ``if`` or a loop (which
definition a call meets would depend on the path), one name defined twice or also assigned as a
variable, decorators; and, inside the nested function, writing into an enclosing function's array
(``out[i] = v`` would change it in place, which inlining would have to order against the
enclosing function's own reads and writes) — pass the array in and return the new values instead.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from coarsen_nb.frontend.source import Unit


@dataclass
class NestedDef:
    """A recorded nested ``def``: its unit, its closure (free name → enclosing variable), its siblings."""

    unit: Unit
    closure: dict[str, str]
    siblings: dict[str, NestedDef] = field(default_factory=dict)


class NestedDefs:
    """Mixin of the CFG builder: nested ``def`` statements and the frames their calls inline."""

    def _s_FunctionDef(self, s: ast.FunctionDef):
        frame = self.frame
        if not any(s is t for t in frame.unit.node.body):
            raise self.unit.error("nested function inside a block", s,
                                  f"define {s.name!r} at the top level of the function body, before the "
                                  "if or loop: which definition a call meets must not depend on the path")
        if s.decorator_list:
            raise self.unit.error("decorator", s.decorator_list[0], "remove the decorator of the nested function")
        if s.name in frame.nested or s.name in frame.locals:
            raise self.unit.error("nested function defined twice", s,
                                  f"give each nested function and variable its own name ({s.name!r} is used twice)")
        unit = Unit(s, frame.unit.source, frame.unit.indent, frame.unit.resolve, frame.unit.lines)
        closure = {v: frame.rename.get(v, v) for v in frame.locals}
        record = NestedDef(unit, closure, frame.nested)
        frame.nested[s.name] = record
        self.nested_units[id(s)] = record
        return set(), False

    def nested_def(self, name: str, call: ast.Call) -> Unit | None:
        """The nested function ``name`` visible in the current frame, if a ``def`` ran before ``call``."""
        record = self.frame.nested.get(name)
        if record is not None:
            return record.unit
        if any(isinstance(s, ast.FunctionDef) and s.name == name for s in self.frame.unit.node.body):
            raise self.unit.error("nested function called before its def", call,
                                  f"move `def {name}` above its first call: Python runs the def as a statement",
                                  message=f"{name!r} is called before `def {name}` has run")
        return None

    def enter_nested(self, helper: Unit) -> None:
        """In a frame just made for inlining ``helper``: bind its closure names, if it is a nested def."""
        record = self.nested_units.get(id(helper.node))
        if record is None:
            return
        frame = self.frame
        frame.nested = dict(record.siblings)
        for free, var in record.closure.items():
            if free not in frame.locals:
                frame.locals.add(free)
                frame.rename[free] = var
                frame.closure.add(free)

    # Set by the CFG builder.
    nested_units: dict[int, NestedDef]
