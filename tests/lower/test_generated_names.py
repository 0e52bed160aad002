"""Generated code reads like the user's code (issue 13, item 6): the user's names, exact constants,
trivial forms printed simply.

Checked on every corpus entry and kernel, and on every entry of the vectorized corpora (reductions,
linear algebra, arrays, special functions, slices, Python forms), under the default selection and
``max_soi=1``: no numbered compiler temporary (``_t98``), no SSA or internal name (``x.1``, ``$k1``, a
compiler counter ``p6_1``, ``k9_2``, ``ix2_1``, ``sl5_2_out``: the frontend's temporaries print as
the words it recorded, ``x_tail``, ``n_x_tail``, ``sum_diff_sq``), no float literal that is a short
decimal spoiled in its last bits (``-0.4999999999999999``), no ``1.0 * x``.  The trivial scatter
``b_x += v`` and the count ``int(n)`` are checked on small functions, against finite differences,
together with the cases that must keep the general form (a loop that does not cover the whole array).
"""

from __future__ import annotations

import ast
import inspect
import math
import re

import numpy as np
import pytest
from corpus import CORPUS
from corpus_arrays import ARRAYS
from corpus_linalg import LINALG
from corpus_python_forms import PYTHON_FORMS
from corpus_reductions import REDUCTIONS
from corpus_slices import SLICES
from corpus_special import SPECIAL
from gradcheck import assert_close, finite_difference

import coarsen_nb as cn
from coarsen_nb.kernels import KERNELS, function

_NUMBERED_TEMP = re.compile(r"\b_t\d+\b")
_INTERNAL = re.compile(r"\$\w|\b[A-Za-z_]\w*\.\d+\b")
#: a compiler counter with its SSA version: p6_1, k9_2, ix2_1, i5_0_1, sl5_2_out, b_sl5_2_out
_COUNTER = re.compile(r"\b[A-Za-z]+\d+(?:_\d+)+(?:_out)?\b")
_FLOAT = re.compile(r"(?<![\w.])\d+\.\d+(?:e-?\d+)?")
#: ``y2 = 2.0 * y``: a multiple of a value, named as if it were another version of that value
_SCALED_AS_VERSION = re.compile(r"^\s+([A-Za-z_]\w*?)_?\d+ = -?\d+(?:\.\d+)?(?:e-?\d+)? \* \1$", re.M)


def _generated(src: str) -> str:
    """The generated functions of a module, without its docstring and hand-written helpers
    (``def _erf``: their constants are Cephes', written out to full precision on purpose)."""
    out, skip = [], True
    for ln in src.splitlines():
        if ln.startswith("def "):
            skip = ln.startswith("def _")
        if not skip:
            out.append(ln.split("#", 1)[0])
    return "\n".join(out)


def _spoiled(literal: str) -> bool:
    """Whether a printed float is not what a user writes: not the shortest repr of its value, or
    within 2 ulps of a decimal of at most 10 digits without being it (independent of the printer)."""
    v = float(literal)
    if repr(v) != literal:
        return True
    for digits in range(1, 11):
        c = float(f"{v:.{digits}g}")
        if c == v:
            return False
        if abs(c - v) <= 2 * math.ulp(v):
            return True
    return False


def _internal_names(code: str, fn) -> list[str]:
    """The names of ``code`` that are the compiler's, not the user's or a word: ``$k1``, ``x.1``, ``p6_1``.

    A compiler counter looks like a version of a user's variable that ends in a digit (``d1_2`` is the
    second version of ``d1``, ``b_d1_2`` its adjoint): those, of names in ``fn``'s module, are the user's."""
    user = _user_names(fn)
    counters = [n for n in _COUNTER.findall(code)
                if re.sub(r"_\d+(?:_\d+)*(?:_out)?$", "", re.sub(r"^[bd]_", "", n)) not in user]
    return _INTERNAL.findall(code) + counters


def _user_names(fn) -> set[str]:
    try:
        tree = ast.parse(inspect.getsource(inspect.getmodule(fn)))
    except (OSError, TypeError):
        return set()
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | \
        {a.arg for n in ast.walk(tree) if isinstance(n, ast.arguments) for a in n.args}


def _sources():
    for e in CORPUS:
        yield e.name, e.fn, e.wrt, e.make_args(np.random.default_rng(0))
    for group, entries in (("reductions", REDUCTIONS), ("linalg", LINALG), ("arrays", ARRAYS),
                           ("special", SPECIAL), ("slices", SLICES), ("forms", PYTHON_FORMS)):
        for e in entries:
            yield f"{group}:{e.name}", e.fn, e.wrt, e.make_args(np.random.default_rng(0))
    for name, mod in sorted(KERNELS.items()):
        yield "kernel:" + name, function(mod), mod.META["wrt"], mod.make_inputs(mod.META["test_size"], 0)


_ALL = list(_sources())


@pytest.mark.parametrize("selection", [{}, {"max_soi": 1}], ids=["default", "L=1"])
@pytest.mark.parametrize("name,fn,wrt,args", _ALL, ids=[s[0] for s in _ALL])
def test_generated_code_has_no_compiler_names_or_spoiled_constants(name, fn, wrt, args, selection):
    f = cn.coarsen(fn, wrt=wrt or None, **selection)
    try:
        f(*args)
    except cn.CoarsenError:
        pass        # a non-scalar result: the module is generated all the same
    try:
        code = _generated(f.source)
    except cn.CoarsenError:
        pytest.skip("no module generated (the refusal is tested elsewhere)")
    assert "def " in code
    assert not _NUMBERED_TEMP.findall(code), f"{name}: numbered temporaries {_NUMBERED_TEMP.findall(code)[:5]}"
    internal = sorted(set(_internal_names(code, fn)))
    assert not internal, f"{name}: internal names {internal[:8]}"
    spoiled = [x for x in _FLOAT.findall(code) if _spoiled(x)]
    assert not spoiled, f"{name}: spoiled constants {spoiled[:5]}"
    assert not re.search(r"\b1\.0 \* ", code), f"{name}: a product with 1.0"
    scaled = [m.group(0) for m in _SCALED_AS_VERSION.finditer(code)
              if re.sub(r"^[bd]_", "", m.group(1)) != "t"]      # (t, t2: no word, so no version either)
    assert not scaled, f"{name}: a multiple of a value named as a version of it: {scaled[:3]}"


def test_cse_temporaries_take_the_users_names():
    """black_scholes inlines d1 and sq into its SOI; the generated code still calls them so."""
    mod = KERNELS["black_scholes"]
    f = cn.coarsen(function(mod), wrt=mod.META["wrt"])
    f.grad(*mod.make_inputs(8, 0))
    for word in ("d1", "sq", "d2"):
        assert re.search(rf"^\s+{word} = ", f.source, re.M), f"no temporary named {word}"


def test_a_temporary_does_not_shadow_a_builtin_or_the_users_names():
    def f(x, exp, sq):
        return math.exp(x) * exp + abs(x) * x * x * sq + math.exp(x) ** 2

    c = cn.coarsen(f, wrt=("x",))
    args = (0.3, 2.0, 1.5)
    assert c(*args) == pytest.approx(f(*args), rel=1e-14)
    assert_close(c.grad(*args), finite_difference(f, args, 0), rtol=1e-6, atol=1e-9, what="dx")
    assigned = re.findall(r"^\s+(\w+) = ", _generated(c.source), re.M)
    assert not {"abs", "exp", "max", "sum", "float", "int", "len", "range"} & set(assigned)
    sig = re.search(r"def f\((.*)\):", c.source).group(1)
    assert sig == "x, exp, sq"


def test_the_exponent_of_a_gaussian_is_exactly_one_half():
    """d/dz erf(z/sqrt(2)) has exp(-z²/2): SymPy multiplies (1/sqrt(2.0))**2 out to 0.4999999999999999."""
    def cdf(z):
        return 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))

    c = cn.coarsen(cdf, wrt=("z",))
    z = 0.7
    assert c.grad(z) == pytest.approx(math.exp(-z * z / 2) / math.sqrt(2 * math.pi), rel=1e-14)
    code = _generated(c.source)
    assert "0.5" in code and "0.4999999" not in code


SUM_SQ = """def f(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * x[i]
    return s
"""

SUM_SQ_TAIL = """def f(x):
    s = 0.0
    for i in range(1, len(x)):
        s += x[i] * x[i]
    return s
"""


@pytest.mark.parametrize("src,whole", [(SUM_SQ, True), (SUM_SQ_TAIL, False)], ids=["whole", "tail"])
def test_a_scatter_over_the_whole_array_is_an_in_place_add(src, whole):
    c = cn.coarsen(src)
    x = np.array([0.5, -1.25, 2.0, 0.75])
    g = c.grad(x)
    want = 2 * x
    if not whole:
        want[0] = 0.0
    assert_close(g, want, rtol=1e-15, atol=0, what="grad")
    grad_src = c.source[c.source.index("def f_grad"):c.source.index("def f_jvp")]
    if whole:
        assert re.search(r"^\s+b_x \+= ", grad_src, re.M) and "_scatter_add(" not in grad_src, grad_src
    else:
        assert "_scatter_add(b_x, 1, " in grad_src, grad_src     # not every element: the general form


COUNT = """def f(x, n):
    k = 0
    for i in range(n):
        k += 1
    return k * x
"""


def test_a_count_of_loop_points_is_the_trip_count():
    c = cn.coarsen(COUNT, wrt=("x",))
    for n in (0, 1, 7):
        assert c(1.5, n) == 1.5 * n
        assert c.grad(1.5, n) == float(n)
    assert "broadcast_to(xp.asarray(1)" not in c.source


def test_cuda_kernels_print_constants_as_the_user_wrote_them():
    """The CUDA printer (SymPy's C printer) wrote 17 digits: 9.8100000000000005 for 9.81."""
    mod = KERNELS["pendulum_batch"]
    f = cn.coarsen(function(mod), wrt=mod.META["wrt"], backend="cupy")
    try:
        f(*mod.make_inputs(mod.META["test_size"], 0))
    except cn.CoarsenError:
        pass        # no CuPy here: the module is generated all the same
    assert "ElementwiseKernel" in f.source or "RawKernel" in f.source or "ReductionKernel" in f.source
    assert "9.81" in f.source and "9.8100000000000005" not in f.source
    spoiled = [x for x in _FLOAT.findall(_generated(f.source)) if _spoiled(x)]
    assert not spoiled, spoiled[:5]


def energy_slices(x):
    return np.sum((x[1:] - x[:-1]) ** 2)


def hinge_vec(x):
    return np.sum(np.where(x > 0.2, x - 0.2, 0.0))


@pytest.mark.parametrize("selection", [{}, {"max_soi": 1}, {"per_block": True}], ids=["default", "L=1", "per-block"])
def test_the_frontends_temporaries_print_as_what_they_hold(selection):
    """x[1:] is x_tail, its length n_x_tail; np.sum's operand is named after what it computes, its
    value sum_... (they were sl5_1, len4_1, a22_1, p23_1, ix2_1, k9_2)."""
    x = np.linspace(-1, 1, 11)
    f = cn.coarsen(energy_slices, **selection)
    assert f.grad(x) == pytest.approx(np.concatenate([[0], 2 * np.diff(x)]) - np.concatenate([2 * np.diff(x), [0]]))
    code = _generated(f.source)
    for word in ("x_tail", "x_head", "n_x_tail"):
        assert re.search(rf"\b{word}\b", code), f"no {word} in\n{code}"
    g = cn.coarsen(hinge_vec, **selection)
    g.grad(x)
    assert re.search(r"\bsum_choice\b|\bchoice\b", _generated(g.source))
    for c in (f, g):
        internal = _internal_names(_generated(c.source), energy_slices)
        assert not internal, internal


def test_a_loop_names_the_versions_it_carries():
    """theta in the loop, theta_next, theta_init, theta_end; the counter k (``for _ in``), not theta_2,
    theta_2_out, k1_2."""
    mod = KERNELS["pendulum"]
    f = cn.coarsen(function(mod), wrt=mod.META["wrt"])
    f.grad(*mod.make_inputs(8, 0))
    code = _generated(f.source)
    for word in ("theta", "theta_next", "theta_init", "theta_end", "omega_next", "k"):
        assert re.search(rf"^\s+{word} = |^\s+.*, {word} = |^\s+{word}, ", code, re.M), f"no {word}"
    assert not re.search(r"\b(theta|omega)_\d", code)


def test_summary_and_widgets_say_the_words_too():
    """The notebook's summary and derivative view name the frontend's temporaries as the code does
    (x_tail, n_x_tail), not by their kind (sl, ix, len, sb)."""
    from coarsen_nb.notebook.derivatives import derivatives_html
    from coarsen_nb.notebook.names import context_of
    from coarsen_nb.notebook.text import summary

    f = cn.coarsen(energy_slices)
    f.grad(np.linspace(-1, 1, 11))
    text = summary(f)
    assert "x_tail" in text and "n_x_tail" in text
    assert not re.search(r"\b(sl|sb|ix|len|tmp)\b", text), text
    html = derivatives_html(f.sois, f.discontinuities, context_of(f, f.sois))
    shown = set(re.findall(r"\\mathrm\{([^}]*)\}", html))
    # (the SOI reads the zeros that x[1:]'s loop fills, x_tail_zeros: one SOI with the arithmetic since issue 15)
    assert r"x\_tail\_zeros" in shown and not shown & {"sl", "sb", "ix", "len", "tmp", "p"}, shown


def _python(src: str):
    namespace = {"math": math, "np": np}
    exec(src, namespace)
    return namespace["f"]


def _assigned(code: str) -> set[str]:
    return set(re.findall(r"^\s+(\w+) = ", code, re.M))


def test_a_multiple_and_a_difference_are_named_after_what_they_compute():
    """``2.0 * y`` is ``y_scaled`` (it was ``y2``, read as a version of ``y``), ``a - b`` is ``a_minus_b``,
    ``1.0 + b * b`` ``..._shifted``: the frontend's words for the same forms (``frontend/words.py``)."""
    aug = next(e for e in CORPUS if e.name == "aug_assign")
    c = cn.coarsen(aug.fn, wrt=aug.wrt)
    args = aug.make_args(np.random.default_rng(0))
    assert c(*args) == pytest.approx(aug.fn(*args), rel=1e-14)
    names = _assigned(_generated(c.source))
    assert {"x_scaled", "y_scaled"} <= names, names
    src = """def f(a, b):
    return math.sin(a - b) * (a - b) + math.cos(a - b) / (1.0 + b * b)
"""
    c = cn.coarsen(src, wrt=("a", "b"))
    args = (0.3, 1.2)
    assert c(*args) == pytest.approx(_python(src)(*args), rel=1e-14)
    for i, g in enumerate(c.grad(*args)):
        assert_close(g, finite_difference(_python(src), args, i), rtol=1e-6, atol=1e-9, what=f"d{i}")
    names = _assigned(_generated(c.source))
    assert {"a_minus_b", "sin_a_minus_b", "cos_a_minus_b"} <= names, names
    assert any(n.endswith("_shifted") for n in names), names


def test_a_read_at_a_constant_index_says_the_index():
    """``pos[i, 0]`` is ``pos_i_at0``, ``pos[j, 1]`` ``pos_j_at1`` (they were ``pos_k`` ... ``pos_k4``:
    ``k`` is no name of the user's code)."""
    entry = next(e for e in CORPUS if e.name == "pairwise_energy")
    c = cn.coarsen(entry.fn, wrt=entry.wrt)
    args = entry.make_args(np.random.default_rng(0))
    assert c(*args) == pytest.approx(entry.fn(*args), rel=1e-12)
    names = _assigned(_generated(c.source))
    assert {"pos_i_at0", "pos_j_at0", "pos_i_at1", "pos_j_at1"} <= names, names


def test_a_product_too_long_to_name_is_not_named_after_one_factor():
    """``2 * c * dc`` was ``correlate_x``: the word ``correlate_x_w_dcorrelate_x_w`` cut to its first
    part, the name of another value.  A word too long is no word."""
    from coarsen_nb.benchmarks.style_pairs import smoothing_vec

    c = cn.coarsen(smoothing_vec, wrt=("x", "w"))
    x, w = np.linspace(-1.0, 1.0, 12), np.array([0.2, -0.5, 0.3])
    _, tangent = c.jvp((x, w), (np.ones_like(x), np.zeros_like(w)))
    assert tangent == pytest.approx(float(2 * np.correlate(x, w) @ np.correlate(np.ones_like(x), w)), rel=1e-12)
    for line in re.findall(r"^\s+\w+ = .*$", _generated(c.source), re.M):
        target, value = (p.strip() for p in line.split(" = ", 1))
        assert not re.search(rf"\b{target}_\w+\b", value), line


COUNT_POSITIVE = """def f(x):
    k = 0
    for v in x:
        if v > 0.0:
            k += 1
    return k
"""

SCALAR_BRANCH_SUM = """def f(x, a):
    s = 0.0
    for i in range(len(x)):
        if a > 0.0:
            s += 2.0 * a
        else:
            s += x[i]
    return s
"""


def test_a_sum_of_a_branch_on_each_point_sums_the_branch_values():
    """``xp.sum(t2)``, not ``xp.sum(xp.broadcast_to(xp.asarray(t2), (n,)))``: a branch on each point is
    an array of one value per point already."""
    c, py = cn.coarsen(COUNT_POSITIVE, wrt=("x",)), _python(COUNT_POSITIVE)
    rng = np.random.default_rng(3)
    for x in (rng.normal(size=9), -np.ones(4), np.ones(5), np.zeros(0)):
        assert c(x) == py(x)
    assert "broadcast_to" not in _generated(c.source)


@pytest.mark.parametrize("a", [0.75, -0.5])
def test_a_sum_of_a_branch_on_one_number_counts_its_value_once_per_point(a):
    """The branch on ``a`` may be the number ``2.0 * a``: the sum still counts it once per point."""
    c, py = cn.coarsen(SCALAR_BRANCH_SUM, wrt=("x", "a")), _python(SCALAR_BRANCH_SUM)
    args = (np.array([0.5, -1.0, 2.0, 0.25]), a)
    assert c(*args) == pytest.approx(py(*args), rel=1e-14)
    grad = c.grad(*args)
    for i in (0, 1):
        assert_close(grad[i], finite_difference(py, args, i), rtol=1e-6, atol=1e-8, what=f"d{i}")


def test_the_tangent_of_a_slice_read_is_named_after_the_slice():
    """``np.sum(y[1:] + y[:-1])``'s tangent reads ``d_y`` where the value reads ``y_tail`` and ``y_head``:
    they are ``dy_tail`` and ``dy_head`` (they were ``dy_k``, ``dy_k2``: no ``k`` in the user's code)."""
    entry = next(e for e in SLICES if e.name == "trapezoid")
    c = cn.coarsen(entry.fn, wrt=entry.wrt)
    y, h = entry.make_args(np.random.default_rng(0))
    dy = np.random.default_rng(1).normal(size=y.shape)
    value, tangent = c.jvp((y, h), (dy, 0.5))
    want = 0.5 * h * np.sum(dy[1:] + dy[:-1]) + 0.5 * 0.5 * np.sum(y[1:] + y[:-1])
    assert value == pytest.approx(entry.fn(y, h), rel=1e-14) and tangent == pytest.approx(want, rel=1e-12)
    names = _assigned(_generated(c.source))
    assert {"dy_head", "dy_tail"} <= names and not {n for n in names if re.fullmatch(r"\w+_k\d*", n)}, names
