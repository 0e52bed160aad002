"""Names for the printer's temporaries: the user's words, not ``_t98``.

Generated code is read (``f.source``, the notebook's code view, ``f.export``), so a shared
subexpression is named after what it is:

* the value of one of the user's variables keeps that variable's name (``d1``, ``sq``): the lifter
  inlines ``d1 = ...`` into the SOI's expressions, and :attr:`Kernel.names` remembers which
  expression each user variable stood for;
* anything else is named after its shape over those names: ``exp_x``, ``sin_theta``, ``th_sq``
  (``th**2``), ``inv_vol`` (``1/vol``), ``dt_omega`` (``dt*omega``), ``neg_x``;
* what has no good name (a long sum) is ``t``.

:func:`hint` only proposes a word; :class:`~coarsen_nb.lower.names.Names` makes it unique and keeps it
clear of :data:`AVOID` (Python's keywords and builtins, the array and ``math`` modules' attribute
names, so no temporary shadows a callee, and C's keywords, since CuPy kernels
are C).  A word never starts with ``_`` (helpers do), ``b_`` or ``d_`` (adjoints and tangents do).
"""

from __future__ import annotations

import builtins
import keyword
import math
import re

import numpy as np
import sympy as sp

from coarsen_nb import ir
from coarsen_nb.frontend.words import position
from coarsen_nb.lower import lir
from coarsen_nb.phi import forms
from coarsen_nb.plan import IterStep, PrimStep, walk_steps
from coarsen_nb.rules.table import PRIMITIVES

_C_KEYWORDS = {"auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
               "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
               "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
               "union", "unsigned", "void", "volatile", "while", "bool", "true", "false", "new", "delete",
               "this", "class", "template", "typename", "namespace", "operator", "private", "public"}

#: Words a temporary may not be (it may still contain them: ``exp_x`` is fine).
AVOID = frozenset(set(dir(builtins)) | set(keyword.kwlist) | set(keyword.softkwlist) | set(dir(math)) |
                  set(dir(np)) | _C_KEYWORDS | {"xp", "np", "math", "cupy"})

#: The word of a temporary the frontend has no word for, by its kind (the ``$`` prefix).
KIND_WORDS = {"p": "val", "a": "arg", "t": "val", "v": "val", "ix": "at", "len": "n", "stop": "stop",
              "start": "start", "step": "step", "seq": "seq", "c": "cond", "sb": "src", "sl": "part",
              "sv": "vals", "k": "k", "i": "k", "acc": "total", "cnt": "count", "brk": "broke",
              "cont": "skip", "ret": "result", "done": "returned", "o": "val", "r": "at", "sum": "total",
              # a batched loop's lanes (phi/batching.py, phi/lane_masks.py)
              "nlanes": "n_lanes", "zl": "lane_zeros", "izl": "lane_ints", "lane": "lane", "part": "part",
              "all": "all_lanes", "active": "active", "live": "live", "more": "more", "frozen": "frozen",
              "lse": "log_sum_exp"}     # others say what they are (phi/array_logsumexp.py: $lse_max4)


def kind_word(name: str) -> str | None:
    """The word of the kind of a compiler temporary with no word of its own (``$brk3.2`` -> ``broke``)."""
    local = next((p for p in name.split(".")[0].split(":") if p.startswith("$")), "")   # $sum1:2 too
    kind = local.lstrip("$").rstrip("0123456789_")
    return KIND_WORDS.get(kind) or (kind if len(kind) >= 3 else None) if local else None


_MAX = 22                     # a longer word of several parts is no word


def _function_words() -> dict:
    """SymPy class -> the word of its function, from the rule table: the array spelling's name where it is
    one (``asin``, ``log1p``), else the primitive's (``erf``, whose array spelling is a helper)."""
    out: dict = {}
    for p in PRIMITIVES.values():
        a = p.spelling.array
        word = a if isinstance(a, str) and a.isidentifier() and not a.startswith("_") else p.name
        for cls in p.forms:
            out.setdefault(cls, word)
    return out


_FUNCS = _function_words()


def user_word(name: str) -> str | None:
    """The user's variable in an SSA name (``d1.1`` -> ``d1``, ``_clip3:v.2`` -> ``v``, an inlined
    helper's result ``_norm_cdf4:$ret.2`` -> ``norm_cdf``); None for the compiler's own (``$k1.2``;
    ``g:total.2``, the loop body of ``total``, is not ``total``)."""
    helper, _, local = name.rpartition(":")
    if helper and not helper.startswith("_"):
        return None
    if local.startswith("$ret") and helper:
        return helper.split(":")[0].strip("_").rstrip("0123456789") or None
    base = local.split(".")[0].rstrip("'")
    return base if base.isidentifier() else None


def kernel_words(kernel, words, binders=()) -> dict:
    """What a printer calls the values of ``kernel``: expression -> the user's variable it is the value
    of, or the word the frontend gave its temporary (``words``, ``plan.words``: ``x[1:]`` -> ``x_tail``);
    and each loop index of ``binders`` (SymPy symbols named by SSA names: ``$k9.2`` -> ``k``)."""
    out = {e: w for e, n in kernel.names.items() if (w := user_word(n) or temp_word(n, words))}
    # an array the frontend made and wrote (a slice read, x[1:]: ``w:$sl5.2``) is called what it holds
    out.update({e: w for s, e in kernel.body if isinstance(e, forms.RWrite) and e not in out
                and (w := temp_word(str(s).partition(":")[2], words))})
    # a whole-array sum's operand the kernel keeps as a temp of its own (per_block: np.where's value before
    # np.sum's) prints as the expression it holds: that expression is called what the temp is
    summed = {e.args[0] for _, e in kernel.body if isinstance(e, forms.ElemSum)}
    out.update({e: out[s] for s, e in kernel.body if s in summed and s in out and e not in out})
    out.update({k: w for k in binders if (w := temp_word(str(k), words) or kind_word(str(k)))})
    return out


def tangent_read_words(kernel, tangent_reads: dict, words: dict) -> dict:
    """Words for the tangent reads ``tangent_reads`` (symbol -> (SSA name of the primal array, index))
    of ``kernel``'s JVP: ``d`` and the word of the primal read at the same place (``y[1:]``'s elements are
    ``y_tail``, their tangents ``dy_tail``, not ``dy_k``: the loop of a slice has no ``k`` of the user's)."""
    reads = {r.symbol: r for r in kernel.reads}
    word_of_read = {r: words[r] for r in reads if r in words}
    # a slice read's elements, written whole by its loop (y[:-1]: ``w = RWrite(zeros, g, k, ...)``, ``g`` the
    # read y[k]): what the written array is called, y_head
    body = dict(kernel.body)
    for s, e in kernel.body:
        if isinstance(e, forms.RWrite) and (w := words.get(e) or words.get(s)):
            v = e.args[1]
            while isinstance(v, sp.Symbol) and v not in reads and v in body:
                v = body[v]
            if v in reads:
                word_of_read.setdefault(v, w)
    at = {(reads[r].array, tuple(reads[r].index)): w for r, w in word_of_read.items()}
    return {s: "d" + w for s, (a, idx) in tangent_reads.items() if (w := at.get((a, tuple(idx))))}


def temp_word(name: str, words) -> str | None:
    """The frontend's word (``words``: ``plan.words``) for the temporary of SSA name ``name``."""
    return words.get(name.split(".")[0].rstrip("'"))


def identifier(name: str) -> str:
    """An SSA name as an identifier's stem: each non-word character an ``_``, runs of them one, none at
    the ends, ``v`` before a leading digit (``$t3.1`` -> ``t3_1``); the Python and the C names both."""
    base = re.sub(r"_+", "_", re.sub(r"\W", "_", name)).strip("_") or "v"
    return "v" + base if base[0].isdigit() else base


def clean(word: str | None) -> str:
    """``word`` as a temporary's stem: an identifier, not private, not an adjoint's or tangent's."""
    w = re.sub(r"\W", "_", word or "").strip("_")
    if not w or w[0].isdigit():
        w = "t" + w
    if w.startswith(("b_", "d_")):
        w = w[2:] or "t"
        if w[0].isdigit():
            w = "t" + w
    return w


def _join(*parts: str | None) -> str | None:
    parts = [p for p in parts if p]
    if not parts:
        return None
    word = "_".join(parts)
    if len(word) > _MAX and len(parts) > 1:
        return None     # not cut to its first parts: x_sq cut to x, a * b to a, would name another value
    if word in AVOID or word in ("inv", "neg", "sq", "rsqrt", "pow"):
        return None     # a function's name alone (sqrt2 would read as √2, exp2 as np.exp2)
    return word if len(word) <= _MAX + 6 else None


def hint(e, word_of) -> str | None:
    """A word for expression ``e`` (None: no good one); ``word_of(symbol)`` names a leaf or None."""
    if isinstance(e, sp.Symbol):
        return word_of(e)
    if not isinstance(e, sp.Expr) or e.is_Number:
        return None
    if isinstance(e, sp.Pow):
        b, x = e.args
        hb = _atom_word(b, word_of)
        if x == 2:
            return _join(hb, "sq")
        if x == -1:
            return _join("inv", hb)
        if x == sp.S.Half:
            return _join("sqrt", hb)
        if x == -sp.S.Half:
            return _join("rsqrt", hb)
        return _join(hb, "pow")
    if isinstance(e, sp.Mul):
        coeff, rest = e.as_coeff_Mul()
        factors = [f for f in sp.Mul.make_args(rest)]
        if len(factors) == 1:
            inner = hint(factors[0], word_of)
            # 2 * y is not y (``y2 = 2.0 * y`` reads as a version of y): y_scaled, as the frontend says
            return _join("neg", inner) if coeff == -1 else _join(inner, "scaled") if inner else None
        words = [_atom_word(f, word_of) for f in factors]
        if not all(words) or len(words) > 3:
            return None
        return _join("neg", *words) if coeff == -1 else _join(*words)
    if isinstance(e, sp.Add):
        return _sum_word(e, word_of)
    func = _FUNCS.get(type(e))
    if func is not None and len(e.args) == 1:
        return _join(func, _atom_word(e.args[0], word_of))
    return None


def _sum_word(e: sp.Add, word_of) -> str | None:
    """``a + b`` -> ``a_plus_b``, ``a - b`` -> ``a_minus_b``, ``1 + a`` -> ``a_shifted`` (the frontend's
    words for the same sums, :mod:`coarsen_nb.frontend.words`); a longer sum has no good word."""
    const, rest = e.as_coeff_Add()
    terms = sp.Add.make_args(rest)
    if const != 0:
        inner = _atom_word(terms[0], word_of) if len(terms) == 1 else None
        return _join(inner, "shifted") if inner else None
    if len(terms) != 2:
        return None
    neg = [t.could_extract_minus_sign() for t in terms]
    if all(neg):
        return None
    a, b = terms if not neg[0] else terms[::-1]
    minus = neg[0] or neg[1]
    wa, wb = _atom_word(a, word_of), _atom_word(-b if minus else b, word_of)
    return _join(wa, "minus" if minus else "plus", wb) if wa and wb else None


def _atom_word(e, word_of) -> str | None:
    """The word of a factor or argument: a name, or a short form of one (``x**2`` -> ``x_sq``)."""
    w = word_of(e)
    if w or isinstance(e, sp.Symbol):
        return w
    if isinstance(e, sp.Pow) or isinstance(e, sp.Mul) and len(e.args) == 2 and e.args[0].is_Number:
        return hint(e, word_of)
    if type(e) in _FUNCS and len(e.args) == 1 and isinstance(e.args[0], sp.Symbol):
        return hint(e, word_of)
    return None


def printer_word(pr, e) -> str | None:
    """What printer ``pr`` (an :class:`~coarsen_nb.lower.emit.Printer`) should call the value of ``e``:
    the user's variable it is the value of, else a word for its shape over the names already printed."""
    return pr.words.get(e) or hint(e, lambda x: _printed_word(pr, x))


def _printed_word(pr, x) -> str | None:
    if not isinstance(x, sp.Symbol):
        # a subexpression already computed into a name: that name (``dt * alpha``: ``dt_alpha``)
        memo = next((lv.memo[x] for lv in _levels(pr) if x in lv.memo), None)
        name = memo.id if isinstance(memo, lir.Name) else memo if isinstance(memo, str) else None
        if name and name.isidentifier() and name not in pr.wordless:
            return pr.names.word(name)
        return pr.words.get(x)
    if pr.words.get(x):
        return pr.words[x]
    if x in pr.temps:
        return user_word(str(x)) or hint(pr.temps[x], lambda y: _printed_word(pr, y))
    if x in pr.reads:
        # x[i]: x_i, with the user's loop variable; x[0]: x_at0, as the frontend says (frontend/words.py)
        arr, index = pr.reads[x]
        at = [pr.words.get(i) or (position(int(i)) if isinstance(i, sp.Integer) else None) for i in index]
        return _join(pr.names.word(arr), *(at if all(at) else ["at"]))
    if x in pr.deps.ranges:
        return None
    try:
        code = pr.leaf(x)[0]
    except KeyError:
        return None
    return pr.names.word(code) if isinstance(code, str) and code.isidentifier() else None


def _levels(pr):
    todo = [lv for lv in (pr.root, pr.elem) if lv is not None]
    while todo:
        lv = todo.pop()
        yield lv
        todo += lv.children.values()


def loop_words(plan) -> dict[str, str]:
    """Loop label -> the word the generated code names an iterated loop's own values by (its tape, its
    interchanged functions): the loop's line, ``line33`` (then ``line33_2`` for a second loop on that line),
    as the code's comments say "loop at line 33"; a loop without a line is ``loop``.  Not the label
    (``for3.head``: the compiler's)."""
    out: dict[str, str] = {}
    for s in walk_steps(plan.steps):
        if isinstance(s, IterStep) and s.label not in out:
            out[s.label] = unique(f"line{s.line}" if s.line else "loop", set(out.values()))
    return out


def length_steps(plan) -> dict[str, str]:
    """SSA name -> SSA name of the array, for each ``name = len(array)`` step of ``plan``."""
    return {n: e.args[0].id for n, e in _opaque_steps(plan) if isinstance(e, ir.Call) and e.func == "len"
            and len(e.args) == 1 and isinstance(e.args[0], ir.Name)}


def _opaque_steps(plan):
    """(name, expression) of every opaque primitive step of ``plan``, in plan order."""
    return ((s.name, s.expr) for s in walk_steps(plan.steps) if isinstance(s, PrimStep))


_PLAIN_SSA = re.compile(r"([A-Za-z_]\w*)\.\d+")
_VERSIONS = re.compile(r"([A-Za-z_]\w*)(\.\d+)+(\.out)?")


def preferred_names(plan, reserved: set[str]) -> dict[str, str]:
    """SSA name -> the plain name it prints as, where that name is unambiguous in ``plan``: the only
    version of a user's variable (``d1.1`` -> ``d1``), ``len(x)`` (``$p2.1`` -> ``n_x``), the
    function's one result (``$ret.2`` -> ``result``).  Never a parameter's name, a builtin, a keyword
    or an array-module name (a variable ``max`` stays ``max_1``: the code calls ``max``)."""
    names = set(plan.types) | set(plan.params)
    versions: dict[str, list[str]] = {}
    for n in names:
        root = n if n in plan.params else n.split(".")[0] if not n.startswith("$") and ":" not in n else None
        if root is not None:
            versions.setdefault(root, []).append(n)
    out: dict[str, str] = {}
    for root, ns in versions.items():
        if len(ns) == 1 and _PLAIN_SSA.fullmatch(ns[0]):
            out[ns[0]] = root
    for n, array in length_steps(plan).items():
        out[n] = "n_" + array.split(".")[0]
    for n, e in _opaque_steps(plan):
        # another opaque primitive: after its call (xp.matmul(x, w) -> matmul_x_w; it was p4_1)
        if n not in out and n.startswith("$p") and isinstance(e, ir.Call):
            args = [a.id.split(".")[0] if isinstance(a, ir.Name) and not a.id.startswith("$") else None
                    for a in e.args]
            word = _join(e.func.split(".")[-1], *args) if all(args) else None
            if word:
                out[n] = word
    rets = [n for n in names if n.startswith("$ret.")]
    if len(rets) == 1:
        out[rets[0]] = "result"
    for n, w in loop_roles(plan).items():
        out.setdefault(n, w)
    taken = set(reserved) | set(versions) | set(plan.params)
    chosen: dict[str, str] = {}
    seen: set[str] = set()
    for n in sorted(out):
        w = out[n]
        clash = w in seen or w in AVOID or keyword.iskeyword(w) or (w in taken and w != n.split(".")[0])
        if not clash and w.isidentifier():
            chosen[n] = w
            seen.add(w)
    for n, _e in _opaque_steps(plan):
        # the frontend's word for an opaque step's value (x[1:]'s zeros: x_tail_zeros), fixed here so that
        # the error reports (call_errors.py) name a failing step as the module does
        word = temp_word(n, plan.words)
        if n not in chosen and word:
            chosen[n] = unique(clean(word), seen | taken)
            seen.add(chosen[n])
    return chosen


def loop_roles(plan) -> dict[str, str]:
    """SSA name -> a name for the versions of a user's variable that a loop run iteration by iteration
    carries, or of its counter (``for t in range(n)``: ``t``): ``theta`` in the loop (its μ),
    ``theta_next`` for the value the body makes, ``theta_init`` before and ``theta_end`` after the loop
    (were ``theta_2``, ``theta_3``, ``theta_1``, ``theta_2_out``).  Not a parameter's versions (the
    parameter keeps its name); the first loop of a variable only."""
    out: dict[str, str] = {}

    def root(name: str) -> str | None:
        if re.fullmatch(r"\$k\d+\.\d+", name):           # a loop's counter: the user's loop variable
            return temp_word(name, plan.words) or kind_word(name)
        if name.startswith("$") or ":" in name or name in plan.params or not _VERSIONS.fullmatch(name):
            return None
        return name.split(".")[0]

    for step in walk_steps(plan.steps):
        if not isinstance(step, IterStep):
            continue
        mus = {}
        for name, init, nxt in step.mus:
            r = root(name)
            if r is None or name in out or r in out.values():
                continue
            mus[name] = r
            out[name] = r
            if isinstance(nxt, ir.Name) and root(nxt.id) == r:
                out.setdefault(nxt.id, r + "_next")
            if isinstance(init, ir.Name) and root(init.id) == r:
                out.setdefault(init.id, r + "_init")
        for after, mu in step.etas:
            if mu in mus and root(after) == mus[mu]:
                out.setdefault(after, mus[mu] + "_end")
    return out


def unique(word: str, taken) -> str:
    """``word``, else ``word2``, ``word3`` ... (``n_x_2`` after ``n_x2``... where it ends in a digit):
    the first that is not in ``taken``, a keyword or a name the code calls (:data:`AVOID`)."""
    sep = "_" if word[-1].isdigit() else ""
    cand, k = word, 1
    while cand in taken or cand in AVOID or keyword.iskeyword(cand):
        k += 1
        cand = f"{word}{sep}{k}"
    return cand
