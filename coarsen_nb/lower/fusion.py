"""Fusion: which targets of an SOI form one CUDA kernel, and that kernel's pieces.

The outputs of an SOI (or the adjoint contributions of its VJP) are grouped by
the domain they vary over (:func:`coarsen_nb.lower.fusion_domain.domain`: the
elements, the loop index of one reduction, or the loop index of scatters; the
fusable shapes of :mod:`coarsen_nb.lower.cupy`), and each group becomes one
:class:`FusedKernel`: the arguments of a CuPy ``ElementwiseKernel`` or
``ReductionKernel`` (parameters, hoisted temporaries, the loop domain's setup).  The C text comes from
:mod:`coarsen_nb.lower.cuda_printer`; the Python lines that build and call a
kernel in the generated module, from :mod:`coarsen_nb.lower.cupy`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp
from sympy.printing.pycode import PythonCodePrinter

from coarsen_nb.lower import lir
from coarsen_nb.lower.cuda_printer import (
    C_RESERVED,
    PREAMBLE,
    CudaPrinter,
    c_identifier,
    c_type_of,
    is_bool,
    leaf_ctype,
)
from coarsen_nb.lower.domain import Domain, Target
from coarsen_nb.lower.fusion_domain import Body, domain
from coarsen_nb.phi import gammas

_MAX_SOURCE = 200_000   # inlined arm-only temps can grow; past this, leave it to the array code


@dataclass
class Param:
    cname: str
    ctype: str        # "float64", "int64", "bool"
    arg: str          # Python code of the argument
    raw: bool = False
    ndim: int = 0
    is_array: bool = False
    value: lir.Expr | None = None     # the argument as a record (else ``arg`` is a name: lower/cupy.emit_call)


def _as_array(code: str, dt: str) -> dict:
    """``xp.asarray(code, dtype=xp.dt)``, the argument of an array parameter: its text and record."""
    value = lir.Call(lir.Attr(lir.Name("xp"), "asarray"), (lir.expr(code),), (("dtype", lir.Attr(lir.Name("xp"), dt)),))
    return {"arg": str(value), "value": value}


@dataclass
class FusedKernel:
    """One fused CuPy kernel: its CuPy constructor arguments and how to call it.

    ``kind`` is ``"elementwise"`` or ``"reduction"``; ``in_params`` and
    ``out_params`` are CuPy parameter lists; ``operation`` (elementwise) or
    ``map_expr``/``reduce_expr``/``post_map_expr``/``identity`` (reduction)
    are the CUDA C pieces; ``preamble`` holds the device functions they call.
    """

    kind: str
    name: str
    in_params: str
    out_params: str
    operation: str = ""
    map_expr: str = ""
    reduce_expr: str = ""
    post_map_expr: str = ""
    identity: str = ""
    preamble: str = ""
    comment: str = ""
    params: list = field(default_factory=list)      # inputs (Param), in in_params order
    outs: list = field(default_factory=list)        # outputs (Param), in out_params order
    setup: list = field(default_factory=list)       # Python statements (records) run before the call (domain arrays)
    setup_uses_math: bool = False                   # whether they use ``math`` (a loop bound's floor)
    targets: list = field(default_factory=list)     # Target per output


class _Emitter:
    """Prints hoisted temporaries and target expressions as C statements."""

    def __init__(self, body: Body, codes: dict, reads: dict, subst: dict, taken: set):
        self.body = body
        self.codes = dict(codes)
        self.pr = CudaPrinter(self.codes, body.temps, reads, subst)
        self.subst = subst
        self.taken = taken
        self.lines: list[str] = []

    def unconditional(self, exprs) -> list:
        """Temps every element evaluates: reachable without entering a branch arm or a later
        operand of ``and``/``or``, in body order (a temp only an arm needs is inlined there)."""
        need: set = set()
        stack = [sp.sympify(e) for e in exprs]
        seen: set = set()
        while stack:
            x = stack.pop()
            if x in seen or x in self.subst:
                continue
            seen.add(x)
            if isinstance(x, sp.Symbol):
                if x in self.body.temps and x not in self.codes:
                    need.add(x)
                    stack.append(self.body.temps[x])
                elif x in self.body.reads and x not in self.codes:
                    need.add(x)
                    stack.extend(sp.sympify(i) for i in self.body.reads[x][1])
                continue
            if isinstance(x, sp.Piecewise):
                stack.append(x.args[0][1])
                continue
            if isinstance(x, sp.ITE):
                stack.append(x.args[0])
                continue
            if isinstance(x, (gammas.AndThen, gammas.OrElse)):
                stack.append(x.args[0])
                continue
            stack.extend(x.args)
        order = list(self.body.reads) + list(self.body.temps)
        return sorted(need, key=order.index)

    def hoist(self, exprs, indent: str) -> None:
        for s in self.unconditional(exprs):
            if s in self.body.reads:
                # an element read every point makes: one named load
                name = c_identifier(s.name, self.taken)
                self.lines.append(f"{indent}const double {name} = {self.pr._print_Symbol(s)};")
                self.codes[s] = name
                continue
            e = self.body.temps[s]
            if e in self.subst:
                self.codes[s] = self.subst[e]
                continue
            code = self.pr.doprint(e)
            name = c_identifier(s.name, self.taken)
            ctype = "bool" if is_bool(e) else "double"
            self.lines.append(f"{indent}const {ctype} {name} = {code};")
            self.codes[s] = name

    def value(self, e) -> str:
        return self.pr.doprint(sp.sympify(e))


# --------------------------------------------------------------------------------------------
# Building fused kernels
# --------------------------------------------------------------------------------------------


def fused_source(kernel, names, targets: list[Target] | None = None, *, extra_leaves=None, extra_temps=None,
                 tag: str = "fwd", array_ndim=None) -> FusedKernel | None:
    """CUDA C of one fused CuPy kernel computing ``targets`` of ``kernel`` (default: its outputs).

    ``names`` maps SSA names to the generated module's Python identifiers
    (``ModuleWriter.py``); ``extra_leaves``/``extra_temps`` are the adjoint
    leaves and temps of a VJP (:func:`coarsen_nb.symbolic.diff.vjp`);
    ``array_ndim(python name) -> int`` gives the rank of an array written
    through a scatter.  Returns None when the targets do not form one of the
    fusable shapes (see the module docstring).
    """
    if targets is None:
        targets = [Target(names(o.name), o.symbol) for o in kernel.outputs]
    if not targets:
        return None
    body = Body(kernel, names, extra_leaves, extra_temps)
    try:
        dom = domain(body, targets)
    except (KeyError, ValueError):
        return None
    if dom is None:
        return None
    try:
        fk = _build(kernel, body, targets, dom, tag, array_ndim or (lambda name: 1))
    except (NotImplementedError, KeyError):
        return None
    if fk is None or len(fk.operation) + len(fk.preamble) > _MAX_SOURCE:
        return None
    return fk


def _leaf_params(body: Body, symbols, taken: set, raw_arrays: bool) -> tuple[list[Param], dict]:
    """Input parameters for the leaves and read arrays ``symbols`` uses, and their C codes."""
    params, codes = [], {}
    for s in sorted(symbols, key=str):
        if s not in body.leaves:
            continue
        code, ssa, is_array, t = body.leaves[s]
        dt, _ = leaf_ctype(t)
        cname = c_identifier(code, taken)
        if is_array:
            if raw_arrays:
                return [], {}               # an elementwise array inside a loop domain: not one pass
            params.append(Param(cname, dt, **_as_array(code, dt), is_array=True, ndim=getattr(t, "ndim", 1) or 1))
        else:
            value = lir.Call(lir.Name("_cn_scalar"), (lir.expr(code),))
            params.append(Param(cname, dt, str(value), value=value))
        codes[s] = cname
    return params, codes


def _read_params(body: Body, read_syms, taken: set) -> tuple[list[Param], dict]:
    params, arrays = [], {}
    for s in sorted(read_syms, key=str):
        arr, idx = body.reads[s]
        if arr not in arrays:
            t = body.kernel.types.get(arr)
            dt, _ = leaf_ctype(t)
            code = body.names(arr)
            cname = c_identifier(code, taken)
            arrays[arr] = cname
            params.append(Param(cname, dt, **_as_array(code, dt), raw=True, is_array=True,
                                ndim=getattr(t, "ndim", len(idx)) or len(idx)))
    reads = {s: (arrays[body.reads[s][0]], body.reads[s][1]) for s in read_syms}
    return params, reads


def _bounds_code(body: Body, bounds) -> tuple[list[lir.Expr], bool]:
    """The loop bounds as Python code, and whether that code uses ``math`` (SymPy's printer records
    the modules it prints calls of)."""
    out, uses_math = [], False
    for b in bounds:
        pyp = PythonCodePrinter({"standard": "python3"})
        e = body.expand(b)
        ren = {}
        for s in e.free_symbols:
            if s not in body.leaves or body.leaves[s][2]:
                raise KeyError(f"loop bound needs {s}")
            ren[s] = sp.Symbol(body.leaves[s][0])
        text = pyp.doprint(e.xreplace(ren))
        math = "math" in pyp.module_imports
        reads = tuple(sorted({str(v) for v in ren.values()} | ({"math"} if math else set())))
        out.append(lir.Call(lir.Name("int"), (lir.Code(text, reads),)))
        uses_math |= math
    return out, uses_math


def _build(kernel, body: Body, targets, dom: Domain, tag, array_ndim) -> FusedKernel | None:
    name = f"soi{kernel.index}_{tag}"
    where = f"line{'s' if len(kernel.lines) > 1 else ''} {', '.join(map(str, kernel.lines))}" if kernel.lines \
        else "no source line"
    comment = f"// SOI {kernel.index} ({where}), {tag}: one fused kernel"
    taken = set(C_RESERVED) | {name}
    syms = set()
    read_syms = set()
    for t in targets:
        for n in body.nodes(t.expr) + [m for i in t.index for m in body.nodes(sp.sympify(i))]:
            if isinstance(n, sp.Symbol):
                if n in body.reads:
                    read_syms.add(n)
                elif n in body.leaves:
                    syms.add(n)
    loop = not dom.elementwise
    params, codes = _leaf_params(body, syms, taken, raw_arrays=loop)
    if loop and any(body.leaves[s][2] for s in syms):
        return None
    rparams, reads = _read_params(body, read_syms, taken)
    if read_syms and not loop:
        return None
    params += rparams
    setup, setup_uses_math = [], False
    if loop:
        k = dom.index
        kname = c_identifier(str(k), taken)
        (a_c, b_c, s_c), setup_uses_math = _bounds_code(body, dom.bounds)
        dom_var = f"_dom_{name}"
        setup.append(lir.Assign(lir.Name(dom_var), lir.Call(lir.Attr(lir.Name("xp"), "arange"), (
            a_c, b_c, s_c), (("dtype", lir.Attr(lir.Name("xp"), "int64")),))))
        params.append(Param(kname, "int64", dom_var, is_array=True, ndim=1))
        codes[k] = kname

    if dom.reduce is not None:
        fk = _build_reduction(kernel, body, targets[0], dom, name, comment, params, codes, reads, taken, setup)
        fk.setup_uses_math = setup_uses_math
        return fk

    onames: dict = {}
    for t in targets:
        if t.target not in onames:
            onames[t.target] = c_identifier(t.target, taken)
    em = _Emitter(body, codes, reads, {}, taken)
    ind = "  "
    em.hoist([t.expr for t in targets] + [i for t in targets for i in t.index], ind)
    outs, stmts = [], []
    for t in targets:
        val = em.value(t.expr)
        oname = onames[t.target]
        if t.mode == "scatter":
            if not any(o.arg == t.target for o in outs):
                outs.append(Param(oname, "float64", t.target, raw=True, is_array=True, ndim=array_ndim(t.target)))
            idx = em.pr.flat_index(oname, t.index)
            stmts.append(f"{ind}atomicAdd(&{oname}[{idx}], (double)({val}));")
        else:
            outs.append(Param(oname, t.dtype, t.target, is_array=True))
            op = "+=" if t.mode == "add" else "="
            stmts.append(f"{ind}{oname} {op} {val};")
    operation = "\n".join([ind + comment.lstrip()] + em.lines + stmts)
    return FusedKernel("elementwise", name, _param_list(params), _param_list(outs), operation=operation,
                       preamble=PREAMBLE, comment=comment, params=params, outs=outs, setup=setup,
                       setup_uses_math=setup_uses_math, targets=list(targets))


def _build_reduction(kernel, body, target, dom: Domain, name, comment, params, codes, reads, taken, setup):
    red, kind, rbody = dom.reduce.node, dom.reduce.kind, dom.reduce.operand
    # map: a device function of the per-point inputs
    oname = c_identifier(target.target, taken)
    map_params = [p for p in params if p.cname in set(codes.values()) | {r[0] for r in reads.values()}]
    em = _Emitter(body, codes, reads, {}, taken)
    em.hoist([rbody], "  ")
    val = em.value(rbody)
    tmpl = [p for p in map_params if p.raw]
    tparams = [f"typename T_{p.cname}" for p in tmpl]
    sig = []
    for p in map_params:
        if p.raw:
            sig.append(f"const T_{p.cname}& {p.cname}")
        else:
            sig.append(f"const {c_type_of(p.ctype)} {p.cname}")
    head = (f"template <{', '.join(tparams)}>\n" if tparams else "") + \
        f"__device__ double {name}_map({', '.join(sig)}) {{"
    map_fn = "\n".join([head, f"  {comment.lstrip()}: the mapped value at one point"] + em.lines +
                       [f"  return (double)({val});", "}"])
    # post: the root code around the reduction, over the reduced value and scalar inputs
    acc = c_identifier("acc", taken)
    post_em = _Emitter(body, {s: c for s, c in codes.items() if s in body.leaves and not body.leaves[s][2]},
                       {}, {red: acc}, taken)
    post_em.hoist([target.expr], "  ")
    post_val = post_em.value(target.expr)
    post_syms = {s for s in body.nodes(target.expr) if isinstance(s, sp.Symbol) and s in body.leaves}
    post_params = [p for p in params if any(codes.get(s) == p.cname for s in post_syms) and not p.is_array]
    psig = [f"const double {acc}"] + [f"const {c_type_of(p.ctype)} {p.cname}" for p in post_params]
    post_fn = "\n".join([f"__device__ double {name}_post({', '.join(psig)}) {{",
                         f"  // the root code of SOI {kernel.index} around its {kind}"] + post_em.lines +
                        [f"  return (double)({post_val});", "}"])
    outs = [Param(oname, "float64", target.target, is_array=True)]
    reduce_expr = {"sum": "a + b", "prod": "a * b", "max": "_cn_max(a, b)", "min": "_cn_min(a, b)"}[kind]
    identity = {"sum": "0.0", "prod": "1.0", "max": "(-_cn_inf())", "min": "_cn_inf()"}[kind]
    map_expr = f"{name}_map({', '.join(p.cname for p in map_params)})"
    # always "=": the output is fresh; an adjoint is accumulated on the Python side (target += ...)
    post_map_expr = f"{oname} = {name}_post({', '.join(['a'] + [p.cname for p in post_params])})"
    preamble = PREAMBLE + "\n" + map_fn + "\n\n" + post_fn + "\n"
    return FusedKernel("reduction", name, _param_list(params), _param_list(outs), map_expr=map_expr,
                       reduce_expr=reduce_expr, post_map_expr=post_map_expr, identity=identity,
                       preamble=preamble, comment=comment, params=params, outs=outs, setup=setup,
                       targets=[target])


def _param_list(params: list[Param]) -> str:
    return ", ".join(f"{'raw ' if p.raw else ''}{p.ctype} {p.cname}" for p in params)


def fuse_groups(kernel, names, targets, leaves, temps, tag="fwd", ndims=None):
    """Split targets into fused kernels (elementwise together, scatters together, one per
    reduction) and the rest; None when nothing fuses."""
    body = Body(kernel, names, leaves, temps)
    elem, scatter, red, rest = [], [], [], []
    for t in targets:
        try:
            dom = domain(body, [t])
        except (KeyError, ValueError):
            dom = None
        if dom is None:
            rest.append(t)
        elif dom.kind == "elem":
            elem.append(t)
        elif dom.kind == "scatter":
            scatter.append(t)
        else:
            red.append(t)
    fused = []
    for j, group in enumerate([elem, scatter] + [[t] for t in red]):
        if not group:
            continue
        sub = {0: "elem", 1: "scatter"}.get(j, f"red{j - 1}")
        fk = fused_source(kernel, names, group, extra_leaves=leaves, extra_temps=temps, tag=f"{tag}_{sub}",
                          array_ndim=(ndims or {}).get)
        if fk is None:
            rest += group
        else:
            fused.append(fk)
    if not fused:
        return None
    return fused, rest
