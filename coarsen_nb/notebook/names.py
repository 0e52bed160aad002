"""Display names: the compiler's symbol names as the names the user wrote.

The compiler names values in SSA form: ``total.2``, ``total.2.out``,
``$k1.2`` (the counter of loop 1), ``$p2.1`` (an opaque ``len(x)``),
``x[$k1.2]#1`` (a read of ``x``), ``\\bar{$ret.2}`` (an adjoint),
``_clip3:v.2`` (a local of an inlined helper).  None of that may reach the
user's eyes: ``$`` ends MathJax's math, and ``x_0`` for a temporary next to a
parameter ``x0`` is a lie.  :class:`DisplayNames` maps every symbol of one
SOI to LaTeX:

* an SSA version prints as the variable (``total``); when one SOI holds two
  versions of a variable, the later ones get primes (``x``, ``x′``), so a
  subscript always means what the user's name says (``x0`` is ``x_{0}``);
* a loop counter prints as the user's loop variable (``i`` for
  ``for i in range(...)``), or as a free letter when the loop has none;
* a compiler temporary prints as a word (``result``, ``stop``, ``test``),
  ``len(x)`` as ``n_x``; each gets a legend line with its definition;
* reads print as subscripts (``x_{i}``, ``X_{i, j}``), adjoints with a bar.

The context (:class:`NameContext`) comes from the compiled object's plain
data: the plan's opaque steps, the SOIs' own values, and the gated SSA text
for the loop variables.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import sympy as sp

from coarsen_nb.notebook.mathtex import latex, sympy_name
from coarsen_nb.plan import IterStep, PrimStep, walk_steps

#: Words for the compiler's temporaries, by the kind in ``$<kind><n>``.
WORDS = {"ret": "result", "brk": "broke", "cont": "continued", "done": "returned", "c": "test",
         "stop": "stop", "start": "start", "step": "step", "sum": "S", "p": "p", "t": "tmp",
         "o": "tmp", "a": "tmp", "v": "tmp", "ix": "index", "len": "n", "sl": "part", "sb": "src", "sv": "vals",
         "seq": "seq", "acc": "total", "cnt": "count", "r": "tmp", "i": "k"}
#: Letters for loop counters whose loop has no variable of the user's.
FREE_INDICES = ("i", "j", "l", "m", "q", "u")
#: Base names for the shared subexpressions, the first unused one is taken.
CSE_LETTERS = (r"\xi", r"\zeta", r"\chi", r"\varpi")
CSE_PREFIX = "cse:"
#: An SSA name: base, number, versions; `#rK` marks the K-th element read of it.
_VERSIONED = re.compile(r"^(?P<base>\$?[A-Za-z_]\w*?)(?P<num>\d*)(?P<ver>(?:\.\d+)*(?:\.out)?)(?:#r\d+)?$")
_TOKEN = re.compile(r"[$A-Za-z_][\w$:]*(?:\.\d+)*(?:\.out)?")
_LOOP_HEAD = re.compile(r"loop for (\$k\d+)\.\d+ in .*, line (\d+)")
_LOOP_VAR = re.compile(r"^\s*([A-Za-z_]\w*)\.\d+ = (\$k\d+)\.\d+\s*$", re.M)


@dataclass
class NameContext:
    """What the names of one compilation stand for."""

    function: str = "result"
    params: tuple[str, ...] = ()
    loop_vars: dict[str, str] = field(default_factory=dict)     # "$k1" -> "i"
    loop_lines: dict[str, int] = field(default_factory=dict)    # "$k1" -> 3
    definitions: dict[str, object] = field(default_factory=dict)  # "$p2.1" -> len(x) (ir or sympy)
    #: the state of an iterated loop, in the paper's notation: "th.2" -> ("$k1", 0) is th_k, "th.3" -> ("$k1", 1)
    #: is th_{k+1} (k the loop's counter, shown as the user's loop variable)
    steps: dict[str, tuple[str | None, int]] = field(default_factory=dict)
    #: the word the frontend gave each of its temporaries, as generated code prints it: "$sl5" -> "x_tail"
    words: dict[str, str] = field(default_factory=dict)


def context_of(compiled, sois) -> NameContext:
    """A :class:`NameContext` from a ``Coarsened``'s public data (its plan, SOIs and gated text)."""
    ctx = NameContext(function=compiled.name, params=tuple(compiled.params), words=dict(compiled.plan.words))
    gated = compiled.gated
    ctx.loop_lines = {k: int(line) for k, line in _LOOP_HEAD.findall(gated)}
    for user, counter in _LOOP_VAR.findall(gated):
        ctx.loop_vars.setdefault(counter, user)
    for step in walk_steps(compiled.plan.steps):
        if isinstance(step, PrimStep):
            ctx.definitions[step.name] = step.expr
        elif isinstance(step, IterStep):
            counter = next((_split_helper(m[0])[1].split(".")[0] for m in step.mus
                            if _split_helper(m[0])[1].startswith("$k")), None)
            for name, _init, nxt in step.mus:
                if not _split_helper(name)[1].startswith("$"):
                    ctx.steps[name] = (counter, 0)
                    if getattr(nxt, "id", None) is not None:
                        ctx.steps[nxt.id] = (counter, 1)
    for soi in sois:
        for name, expr in soi.exprs.items():
            if str(name).lstrip("_").split(":")[-1].startswith("$") and not str(name).startswith("$ret"):
                ctx.definitions.setdefault(str(name), expr)
    return ctx


class DisplayNames:
    """LaTeX for every compiler name of one SOI, plus the legend those names need.

    >>> from coarsen_nb import ir
    >>> names = DisplayNames(["total.1", "total.2.out", "$p2.1", "x[$k1.2]#1"],
    ...                      NameContext("f", ("x",), {"$k1": "i"}, {"$k1": 3},
    ...                                  {"$p2.1": ir.Call("len", (ir.Name("x"),))}))
    >>> names.tex("total.1"), names.tex("total.2.out"), names.tex("x[$k1.2]#1"), names.tex("$p2.1")
    ('\\\\mathit{total}', "\\\\mathit{total}'", 'x_{i}', 'n_{x}')
    """

    def __init__(self, names, ctx: NameContext) -> None:
        self.ctx = ctx
        self._tex: dict[str, str] = {}
        self.legend: dict[str, str] = {}     # display TeX -> what it stands for (TeX)
        plain = sorted({v for n in names for v in _variables(str(n))}, key=_version_key)
        used = {_user_base(v) for v in plain} | set(ctx.params)
        self._cse = next((c for c in CSE_LETTERS if c.lstrip("\\").replace("var", "") not in used),
                         CSE_LETTERS[0])
        self._free = [c for c in FREE_INDICES if c not in used and c not in ctx.loop_vars.values()]
        groups: dict[str, list[str]] = {}
        for v in plain:
            groups.setdefault(self._base_tex(v), []).append(v)
        for base, members in groups.items():
            # Two temporaries with one definition (``len(x)`` taken twice) are one value: one name.
            seen: dict[str, str] = {}
            n = 0
            for v in members:
                if v in ctx.steps:                  # a loop state: v_k, v_{k+1} (the paper's recurrences)
                    counter, ahead = ctx.steps[v]
                    k = self._counter(counter) if counter else "k"
                    self._tex[v] = f"{{{base}}}_{{{k} + 1}}" if ahead else f"{{{base}}}_{{{k}}}"
                    continue
                same = self._same_as(v)
                if same is not None and same in seen:
                    self._tex[v] = seen[same]
                    continue
                self._tex[v] = base + "'" * n if n < 4 else f"{base}^{{({n + 1})}}"
                n += 1
                if same is not None:
                    seen[same] = self._tex[v]

    # -- public ------------------------------------------------------------------

    def tex(self, name: str) -> str:
        """The LaTeX of ``name`` (an adjoint, a read, a helper's local, or a plain SSA name)."""
        name = str(name)
        bar = re.fullmatch(r"\\bar\{(.*)\}", name)
        if bar:
            return r"\overline{" + self.tex(bar.group(1)) + "}"
        name = re.sub(r"#\d+$", "", name)
        item = re.fullmatch(r"([^\[]+)\[(.*)\]", name)
        if item:
            index = ", ".join(self._index(part.strip()) for part in item.group(2).split(","))
            return f"{self.tex(item.group(1))}_{{{index}}}"
        if name.startswith(CSE_PREFIX):
            return f"{self._cse}_{{{int(name[len(CSE_PREFIX):]) + 1}}}"
        if name not in self._tex:   # a name only the legend or a caller mentions
            self._tex[name] = self._base_tex(name)
        return self._tex[name]

    def legend_tex(self, exclude=()) -> list[str]:
        """One LaTeX line per compiler-made name shown: ``n_{x} = \\operatorname{len}(x)``, ..."""
        return [f"{k} {v}" for k, v in self.legend.items() if k not in exclude]

    # -- naming ------------------------------------------------------------------

    def _same_as(self, name: str) -> str | None:
        """The text of a compiler temporary's definition (values with equal text are equal)."""
        if not _split_helper(name)[1].startswith("$"):
            return None
        definition = self.ctx.definitions.get(name)
        return None if definition is None else str(definition)

    def _index(self, text: str) -> str:
        """An index expression (``$k1.2 + 1``) with its names displayed."""
        try:
            expr = sp.sympify(_TOKEN.sub(lambda m: sympy_name(m.group(0)), text))
        except (sp.SympifyError, SyntaxError, TypeError):
            return _TOKEN.sub(lambda m: self.tex(m.group(0)), text)
        return latex(expr, self, unsafe=True)

    def _base_tex(self, name: str) -> str:
        helper, local = _split_helper(name)
        if re.fullmatch(r"\$sum\d+:\d+(?::g)?", local):
            return "S"
        m = _VERSIONED.match(local)
        if not m:
            return r"\mathrm{" + _escape(local) + "}"
        base, num = m.group("base"), m.group("num")
        if not base.startswith("$"):
            return _user_tex(base + num)
        kind = base[1:]
        if kind == "k":
            return self._counter(f"$k{num}")
        if kind == "ret":
            fn = helper.lstrip("_").rstrip("0123456789") if helper else self.ctx.function
            tex = r"\mathrm{" + _escape(fn) + "}"
            return tex + (f"_{{{num}}}" if num else "")
        definition = self.ctx.definitions.get(name)
        if definition is None:
            definition = self.ctx.definitions.get(local)
        if kind in ("p", "stop") and _is_len(definition):
            array = self.tex(str(definition.args[0]))
            tex = f"n_{{{array}}}"
            self.legend[tex] = r"= \operatorname{len}\left(" + array + r"\right)"
            return tex
        word = self.ctx.words.get(name.split(".")[0]) or self.ctx.words.get(local.split(".")[0])
        tex = r"\mathrm{" + _escape(word or WORDS.get(kind, kind)) + "}"
        if definition is not None:
            self.legend.setdefault(tex, self._definition_tex(definition))
        return tex

    def _counter(self, counter: str) -> str:
        user = self.ctx.loop_vars.get(counter)
        if user is None:
            user = self._free.pop(0) if self._free else "k"
            self.ctx.loop_vars[counter] = user
        tex = _user_tex(user)
        line = self.ctx.loop_lines.get(counter)
        self.legend.setdefault(tex, r"\text{: index of the loop" + (f" on line {line}" if line else "") + "}")
        return tex

    def _definition_tex(self, definition) -> str:
        if isinstance(definition, sp.Basic):
            return "= " + latex(definition, self)
        text = _TOKEN.sub(lambda m: "{" + self.tex(m.group(0)) + "}", str(definition))
        return "= " + text


def plain_text(text: str, words=None) -> str:
    """Source-like text (a predicate) with compiler names as words: ``not $cont1`` -> ``not continued``,
    a temporary the frontend gave a word (``words``, ``plan.words``) that word: ``$c4 -> x_gt``.

    >>> plain_text("_softplus4:$c8")
    'test (in _softplus)'
    >>> plain_text("$c4.1 and y > 0", {"$c4": "x_gt"})
    'x_gt and y > 0'
    """
    helpers = []

    def word(m):
        helper, local = _split_helper(m.group(0))
        if helper:
            helpers.append(helper.rstrip("0123456789"))
        v = _VERSIONED.match(local)
        if not v:
            return local
        base = v.group("base")
        if not base.startswith("$"):
            return base + v.group("num")
        return (words or {}).get(m.group(0).split(".")[0]) or WORDS.get(base[1:], base[1:])

    out = _TOKEN.sub(word, text)
    return out + (f" (in {', '.join(dict.fromkeys(helpers))})" if helpers else "")


def _variables(name: str):
    """The plain SSA names inside a symbol name (the array and index names of a read, ...)."""
    name = re.sub(r"#\d+$", "", re.sub(r"^\\bar\{(.*)\}$", r"\1", name))
    if name.startswith(CSE_PREFIX):
        return []
    item = re.fullmatch(r"([^\[]+)\[(.*)\]", name)
    if item:
        return [item.group(1)] + [t for t in _TOKEN.findall(item.group(2)) if not _is_counter(t)]
    return [] if _is_counter(name) else [name]


def _is_counter(name: str) -> bool:
    return re.fullmatch(r"\$k\d+(?:\.\d+)*", _split_helper(name)[1]) is not None


def _split_helper(name: str) -> tuple[str, str]:
    """``_clip3:v.2`` -> (``_clip3``, ``v.2``); kernel temps ``g:total.2`` -> ("", ``total.2``)."""
    if re.fullmatch(r"\$sum\d+:\d+(?::g)?", name):
        return "", name
    head, sep, tail = name.rpartition(":")
    if not sep:
        return "", name
    helper = head.split(":")[0]
    return (helper if helper.startswith("_") else ""), tail


def _user_base(name: str) -> str:
    m = _VERSIONED.match(_split_helper(name)[1])
    return (m.group("base") + m.group("num")) if m else name


def _version_key(name: str):
    m = _VERSIONED.match(_split_helper(name)[1])
    ver = m.group("ver") if m else ""
    nums = tuple(int(p) for p in re.findall(r"\d+", ver))
    return (_user_base(name), nums, ver.endswith(".out"), name)


def _user_tex(name: str) -> str:
    """A name the user wrote, as SymPy prints a symbol (``x0`` -> ``x_{0}``, ``sigma`` -> σ)."""
    tex = sp.latex(sp.Symbol(name))
    if (tex == name and len(name) > 1) or "_" in name.strip("_") and "{" not in tex:
        return r"\mathit{" + _escape(name) + "}"
    return tex


def _is_len(definition) -> bool:
    return type(definition).__name__ == "Call" and getattr(definition, "func", "") == "len" \
        and len(definition.args) == 1 and type(definition.args[0]).__name__ == "Name"


def _escape(text: str) -> str:
    return re.sub(r"([_{}#$%&])", r"\\\1", text)
