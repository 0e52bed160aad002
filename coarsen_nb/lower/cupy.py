"""CuPy lowering: one fused CUDA kernel per SOI instead of one launch per operation.

The NumPy printer (:mod:`coarsen_nb.lower.emit`) turns a kernel into array
statements; with ``xp = cupy`` every statement is its own GPU launch and its
own temporary array.  Here the *scalar body* of an SOI — the same SymPy DAG —
is printed once as CUDA C (a :class:`~sympy.printing.c.C99CodePrinter`
subclass) and wrapped in a single ``cupy.ElementwiseKernel`` or
``cupy.ReductionKernel``: the stitching idea of AStitch, one kernel per
segment.

What fuses (anything else returns ``None`` and the module writer falls back
to the array-namespace code, which with ``xp = cupy`` still runs on the GPU
operation by operation):

``elementwise``  outputs (or adjoint contributions ``b_x += ...``) that vary
                 over the elements of the kernel's array inputs and contain
                 no reduction, read or loop index;
``reduction``    one root-level expression containing exactly one reduction
                 node — ``RSum``/``RProd``/``RMax``/``RMin`` over a loop index
                 whose body reads arrays at affine indices, or ``ElemSum``
                 over the elements — mapped, reduced, then the root code
                 around it as ``post_map_expr``;
``scatter``      adjoint scatters ``b_x[i(k)] += g(k)`` over one loop index,
                 as an ElementwiseKernel over ``k`` with ``atomicAdd`` (two
                 scatters of one SOI may hit the same element from different
                 ``k``, e.g. ``x[k]`` and ``x[k + 1]`` in Rosenbrock).

A loop domain ``range(a, b, s)`` is passed as the non-raw input
``xp.arange(a, b, s)``: CuPy sizes ElementwiseKernel and ReductionKernel
launches from their non-raw arguments, and the index array makes ``k`` an
ordinary per-element value (arrays read at ``x[k + 1]`` are ``raw``).

Semantics kept from the NumPy printer:

* ``Piecewise`` becomes C ternaries, and a temporary needed only inside an arm
  is printed inside that arm (never hoisted), so the untaken branch is not
  evaluated on an element — the masked evaluation of the array printer;
* ``and``/``or`` keep Python's short-circuit order (C's ``&&``/``||``);
* Python's negative indices wrap (``x[k - 1]`` at ``k = 0`` is the last
  element), ``max``/``min`` propagate NaN like ``numpy.maximum``;
* softplus and the sigmoid use the same overflow-free forms as the NumPy
  printer; ``log1p``/``expm1``/``erf`` are CUDA's device functions;
* float64 throughout (integers stay 64-bit where they index).

Scalar arguments are passed by value; a 0-d device array (the result of an
earlier reduction) is read back first (``_cn_scalar``), one synchronisation,
because CuPy would otherwise treat it as a broadcast array that the
reduction's ``post_map_expr`` cannot see.

:func:`translation_unit` wraps a fused kernel in a minimal but faithful copy
of the ``__global__`` skeleton CuPy generates (``CUPY_FOR`` grid-stride loop,
``CArray`` raw arrays, the shared-memory tree of ``ReductionKernel``), so
the CUDA source can be compiled with ``nvcc`` where no GPU exists.

This module is the Python side: the statements of the generated module that build
and call a fused kernel (:func:`emit_call`), the hooks of
:class:`~coarsen_nb.lower.module.ModuleWriter` (:func:`forward_lines`,
:func:`reverse_lines`) and the translation unit for ``nvcc``.  Which targets
fuse and how a kernel is assembled is :mod:`coarsen_nb.lower.fusion`; the CUDA C
printer and device helpers, :mod:`coarsen_nb.lower.cuda_printer`.
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb.lower import lir
from coarsen_nb.lower.cuda_printer import PREAMBLE, c_type_of, leaf_ctype
from coarsen_nb.lower.domain import Target
from coarsen_nb.lower.fusion import FusedKernel, fuse_groups, fused_source  # noqa: F401 (fused_source: re-export)
from coarsen_nb.lower.helpers import Helper

#: The CuPy backend's own versions of helpers the NumPy code also calls (``Backend.load_helpers``).
OWN_HELPERS = {
    "_special": '''def _special():
    """CuPy's special functions (cupyx.scipy.special): the functions the compiled code called."""
    import cupyx.scipy.special as special
    return special
''',
}

# Python-side helpers the generated module needs (see ``HELPERS``).
HELPERS = {
    "_cupy_kernel": '''_CUPY_KERNELS = {}


def _cupy_kernel(key, make):
    """Build each fused CuPy kernel once per module; CuPy caches the compiled binary."""
    k = _CUPY_KERNELS.get(key)
    if k is None:
        k = _CUPY_KERNELS[key] = make()
    return k


def _cn_scalar(v):
    """A scalar kernel argument by value (a 0-d array is read back: one synchronisation)."""
    return v.item() if getattr(v, "ndim", None) == 0 else v
''',
}


# --------------------------------------------------------------------------------------------
# Python text that builds and calls the kernel
# --------------------------------------------------------------------------------------------


def _pystr(text: str, indent: str) -> str:
    if '"""' in text or "\\" in text:
        return repr(text)
    return '"""\n' + text + '\n' + indent + '"""'


def emit_call(fk: FusedKernel, indent: str = "    ", lines: tuple[int, ...] = ()) -> list[lir.Stmt]:
    """The statements (records, written at depth ``indent``) that construct ``fk`` once and call it;
    ``lines``: the user's lines of its SOI (the comment's).

    Outputs in mode ``"new"`` are assigned; ``"add"`` outputs of an
    ElementwiseKernel and scatter targets are passed in and updated in
    place; a reduction's ``"add"`` output is ``target += kernel(...)``.
    The construction spans lines, the kernel's text among them: its right-hand side is one
    :class:`~coarsen_nb.lower.lir.Raw`, its continuation lines indented for ``indent``.
    """
    i2 = indent + "    "
    assert fk.comment.startswith("// ")
    out: list[lir.Stmt] = [lir.Comment(fk.comment[len("// "):], tuple(lines)), *fk.setup]
    if fk.kind == "elementwise":
        ctor = [f"{indent}    lambda: xp.ElementwiseKernel(",
                f"{i2}    {fk.in_params!r},",
                f"{i2}    {fk.out_params!r},",
                f"{i2}    {_pystr(fk.operation, i2 + '    ')},",
                f"{i2}    {fk.name!r},",
                f"{i2}    preamble={_pystr(fk.preamble, i2 + '    ')}))"]
    else:
        ctor = [f"{indent}    lambda: xp.ReductionKernel(",
                f"{i2}    {fk.in_params!r},",
                f"{i2}    {fk.out_params!r},",
                f"{i2}    {fk.map_expr!r},",
                f"{i2}    {fk.reduce_expr!r},",
                f"{i2}    {fk.post_map_expr!r},",
                f"{i2}    {fk.identity!r},",
                f"{i2}    {fk.name!r},",
                f"{i2}    reduce_type='double',",
                f"{i2}    preamble={_pystr(fk.preamble, i2 + '    ')}))"]
    var = lir.Name(f"_k_{fk.name}")
    # (C source in string constants, built once per process by _cupy_kernel: it reads the array module)
    out.append(lir.Assign(var, lir.Code("\n".join([f"_cupy_kernel({fk.name!r},"] + ctor), ("_cupy_kernel", "xp"))))
    args = tuple(p.value if p.value is not None else lir.expr(p.arg) for p in fk.params)
    modes = {t.target: t.mode for t in fk.targets}
    if fk.kind == "reduction":
        (o,) = fk.outs
        call = lir.Call(var, args)
        out.append(lir.AugAssign(lir.Name(o.arg), "+", call) if modes[o.arg] == "add" else
                   lir.Assign(lir.Name(o.arg), call))
    elif all(modes[o.arg] == "new" for o in fk.outs):
        lhs = [lir.Name(o.arg) for o in fk.outs]
        out.append(lir.Assign(lhs[0] if len(lhs) == 1 else lir.Tuple(tuple(lhs), bare=True), lir.Call(var, args)))
    else:
        out.append(lir.ExprStmt(lir.Call(var, args + tuple(lir.Name(o.arg) for o in fk.outs))))
    return out


# --------------------------------------------------------------------------------------------
# Hooks for ModuleWriter
# --------------------------------------------------------------------------------------------


def _register_helpers(writer) -> None:
    """The Python-side helpers join the module's helper table (``writer.helper_table``) and its set."""
    for k, text in HELPERS.items():
        writer.helper_table.setdefault(k, Helper.of_source(text))
        writer.helpers.add(k)


def forward_lines(writer, kernel) -> list[lir.Stmt] | None:
    """The forward of ``kernel`` for ``ModuleWriter.kernel``: fused kernels where the outputs fuse.

    Each output that is a single root reduction gets a ReductionKernel; the
    outputs that vary elementwise share one ElementwiseKernel; the rest (plain
    scalar code) is printed by the array printer.  None: nothing fused.
    """
    fwd = [Target(writer.py(o.name), o.symbol, dtype=leaf_ctype(kernel.types.get(o.name))[0]) for o in kernel.outputs]
    groups = fuse_groups(kernel, writer.py, fwd, None, None)
    if groups is None:
        return None
    fused, rest = groups
    stmts: list[lir.Stmt] = []
    ind = "    " * writer.indent
    for fk in fused:
        stmts += emit_call(fk, ind, kernel.lines)
    writer.shared.uses_math |= any(fk.setup_uses_math for fk in fused)
    if rest:
        pr = writer.printer(kernel)
        for t in rest:
            pr.emit(lir.Assign(lir.Name(t.target), pr.value(t.expr)))
        stmts = writer.take_statements(pr) + stmts
    _register_helpers(writer)
    return stmts


def reverse_lines(writer, kernel, v, leaves) -> list[lir.Stmt] | None:
    """The adjoint of ``kernel`` for ``ModuleWriter.kernel_reverse`` (``v`` from ``diff.vjp``,
    ``leaves`` the adjoint leaves it passes to its printer); None: nothing fused."""
    targets = [Target(writer.names.bar(n), e, "add") for n, e in v.scalars + v.arrays]
    targets += _scatter_targets(writer, v)
    ndims = {writer.names.bar(sc[0]): (getattr(writer.plan.types.get(sc[0]), "ndim", 1) or 1) for sc in v.scatters}
    groups = fuse_groups(kernel, writer.py, targets, leaves, v.temps, tag="vjp", ndims=ndims)
    if groups is None:
        return None
    fused, rest = groups
    ind = "    " * writer.indent
    stmts: list[lir.Stmt] = []
    if rest:
        pr = writer.printer(kernel, extra_leaves=leaves, extra_temps=v.temps)
        pr.ieee = True      # derivative code (see ModuleWriter.kernel_reverse)
        for t in rest:
            if t.mode == "scatter":
                name = next(sc[0] for sc in v.scatters if writer.names.bar(sc[0]) == t.target and sc[2] == t.expr)
                writer.scatter(pr, name, t.index, t.expr, *([t.level] if t.level is not None else []))
            else:
                pr.emit(lir.AugAssign(lir.Name(t.target), "+", pr.value(t.expr)))
        stmts = writer.take_statements(pr)
    for fk in fused:
        stmts += emit_call(fk, ind, kernel.lines)
    writer.shared.uses_math |= any(fk.setup_uses_math for fk in fused)
    _register_helpers(writer)
    return stmts


def _scatter_targets(writer, v) -> list[Target]:
    """Scatter targets of a VJP; ``level`` (when diff records it) is the set of loop indices the
    contribution is summed over, which must be exactly the fused kernel's domain."""
    return [Target(writer.names.bar(sc[0]), sc[2], "scatter", tuple(sc[1]), sc[3] if len(sc) > 3 else None)
            for sc in v.scatters]


# --------------------------------------------------------------------------------------------
# A compilable translation unit (no GPU needed)
# --------------------------------------------------------------------------------------------

# A minimal CArray: CuPy's raw-array view (data, size, shape, strides; operator[] on a flat
# C-order index unravels it through the strides), and CuPy's grid-stride loop.
SKELETON_HEADER = """\
#include <cstddef>
#ifndef COARSEN_NB_SKELETON
#define COARSEN_NB_SKELETON
template <typename T, int ndim>
class CArray {
 public:
  T* data_;
  ptrdiff_t size_;
  ptrdiff_t shape_[ndim];
  ptrdiff_t strides_[ndim];
  __device__ ptrdiff_t size() const { return size_; }
  __device__ const ptrdiff_t* shape() const { return shape_; }
  __device__ T& operator[](ptrdiff_t i) { return const_cast<T&>(static_cast<const CArray&>(*this)[i]); }
  __device__ const T& operator[](ptrdiff_t i) const {
    const char* ptr = reinterpret_cast<const char*>(data_);
    for (int dim = ndim; --dim > 0;) {
      ptr += strides_[dim] * (i % shape_[dim]);
      i /= shape_[dim];
    }
    ptr += strides_[0] * i;
    return *reinterpret_cast<const T*>(ptr);
  }
};
#define CUPY_FOR(i, n) \\
  for (ptrdiff_t i = static_cast<ptrdiff_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \\
       i += static_cast<ptrdiff_t>(blockDim.x) * gridDim.x)
#endif
"""


def translation_unit(fk: FusedKernel, namespace: str | None = None) -> str:
    """``fk`` inside the ``__global__`` function CuPy would generate for it.

    Elementwise: CuPy's ``CUPY_FOR`` loop over the broadcast size; each
    non-raw input ``x`` is read as ``const T x = _raw_x[i]``, each non-raw
    output bound as ``T &y = _raw_y[i]`` (CuPy goes through a ``CIndexer``;
    here arrays are contiguous and the flat index is used directly), raw
    arguments are ``CArray`` s.  Reduction: the map / REDUCE / POST_MAP
    structure of CuPy's ``ReductionKernel`` template (grid-stride loop over
    the input, shared-memory tree, one output), with one output element.
    ``namespace`` lets many kernels share a file (then not ``extern "C"``).
    """
    decl = []
    for p in fk.params + fk.outs:
        c = c_type_of(p.ctype)
        if p.raw:
            decl.append(f"CArray<{c}, {p.ndim}> {p.cname}")
        elif p.is_array:
            decl.append(f"CArray<{c}, 1> _raw_{p.cname}")
        else:
            decl.append(f"{c} {p.cname}")
    nonraw_in = [p for p in fk.params if p.is_array and not p.raw]
    nonraw_out = [p for p in fk.outs if not p.raw]
    linkage = "" if namespace else 'extern "C" '
    if fk.kind == "elementwise":
        size = f"_raw_{nonraw_in[0].cname}.size()" if nonraw_in else "_n"
        if not nonraw_in:
            decl.append("ptrdiff_t _n")
        body = [f"{linkage}__global__ void {fk.name}({', '.join(decl)}) {{",
                f"  CUPY_FOR(i, {size}) {{"]
        body += [f"    const {c_type_of(p.ctype)} {p.cname} = _raw_{p.cname}[i];" for p in nonraw_in]
        body += [f"    {c_type_of(p.ctype)} &{p.cname} = _raw_{p.cname}[i];" for p in nonraw_out]
        body += ["    " + ln for ln in fk.operation.splitlines()] + ["    ;", "  }", "}"]
    else:
        size = f"_raw_{nonraw_in[0].cname}.size()"
        body = [f"#define REDUCE(a, b) ({fk.reduce_expr})",
                f"#define POST_MAP(a) ({fk.post_map_expr})",
                "typedef double _type_reduce;",
                f"{linkage}__global__ void {fk.name}({', '.join(decl)}) {{",
                "  __shared__ _type_reduce _sdata[512];",
                "  const unsigned int _tid = threadIdx.x;",
                f"  _type_reduce _s = _type_reduce({fk.identity});",
                f"  for (ptrdiff_t _j = _tid; _j < {size}; _j += blockDim.x) {{"]
        body += [f"    const {c_type_of(p.ctype)} {p.cname} = _raw_{p.cname}[_j];" for p in nonraw_in]
        body += [f"    _type_reduce _a = static_cast<_type_reduce>({fk.map_expr});",
                 "    _s = REDUCE(_s, _a);",
                 "  }",
                 "  _sdata[_tid] = _s;",
                 "  __syncthreads();",
                 "  for (unsigned int _block = blockDim.x / 2; _block > 0; _block >>= 1) {",
                 "    if (_tid < _block) {",
                 "      _type_reduce a = _sdata[_tid], b = _sdata[_tid + _block];",
                 "      _sdata[_tid] = REDUCE(a, b);",
                 "    }",
                 "    __syncthreads();",
                 "  }",
                 "  if (_tid == 0) {",
                 "    _s = _sdata[0];"]
        body += [f"    {c_type_of(p.ctype)} &{p.cname} = _raw_{p.cname}[0];" for p in nonraw_out]
        body += ["    POST_MAP(_s);", "  }", "}", "#undef REDUCE", "#undef POST_MAP"]
    text = "\n".join([fk.preamble, *body])
    if namespace:
        text = f"namespace {namespace} {{\n{text}\n}}  // namespace {namespace}"
    # the shared device helpers go first, outside any namespace (they are include-guarded)
    return SKELETON_HEADER + PREAMBLE + text + "\n"


def fused_kernels(w) -> list[FusedKernel]:
    """Every fused kernel the CuPy backend would build for the plan of the module writer ``w``
    (forward and VJP), without writing the module: what the nvcc check compiles.  The writer is
    passed in (``ModuleWriter(plan, wrt, "cupy")``) because the module writer imports this module.
    """
    from coarsen_nb.symbolic.diff import vjp as kernel_vjp

    plan = w.plan
    out: list[FusedKernel] = []
    for k in plan.kernels():
        fwd = [Target(w.py(o.name), o.symbol, dtype=leaf_ctype(k.types.get(o.name))[0]) for o in k.outputs]
        groups = fuse_groups(k, w.py, fwd, None, None)
        out += groups[0] if groups else []
        bars = {o.name: sp.Symbol("bar:" + o.name, real=True) for o in k.outputs if o.name in w.active}
        if not bars or not (set(k.inputs) & w.active):
            continue
        v = kernel_vjp(k, w.active, bars)
        leaves = {sym: (w.names.bar(name), w.is_array(name)) for name, sym in bars.items()}
        targets = [Target(w.names.bar(n), e, "add") for n, e in v.scalars + v.arrays]
        targets += _scatter_targets(w, v)
        ndims = {w.names.bar(sc[0]): (getattr(plan.types.get(sc[0]), "ndim", 1) or 1) for sc in v.scatters}
        groups = fuse_groups(k, w.py, targets, leaves, v.temps, tag="vjp", ndims=ndims)
        out += groups[0] if groups else []
    return out
