"""The rule table, registration by registration: a test table that mirrors it.

Every elementwise registration with a SymPy form is compiled as a user would write it (``np.<name>``,
or ``math.<name>`` where NumPy has none), in scalar and in array code, and its value is compared with
NumPy's or math's own function and its gradient with central finite differences; its SymPy form
differentiates without a leftover ``Derivative``.  A primitive added to the table is checked here with
no test of its own.  A missing rule is a CoarsenError naming it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.special
import sympy as sp
from gradcheck import assert_close, finite_difference

import coarsen_nb as cn
from coarsen_nb import primitives
from coarsen_nb.rules.table import PRIMITIVES, rule

_BUILTIN = {"float", "min", "max"}     # no np./math. spelling to write
LIFTED = sorted(n for n, p in PRIMITIVES.items()
                if p.kind in ("elementwise", "shape") and p.lift is not None and n not in _BUILTIN)


#: Forms with no derivative rule, on purpose: digamma (the derivative of gammaln) has no second derivative here.
_NO_DERIVATIVE = {"digamma"}


def _source_call(p) -> tuple[str, str]:
    """(``module.attr`` as a user writes it, the module) for registration ``p``."""
    if p.numpy is not None and hasattr(np, p.numpy):
        return f"np.{p.numpy}", "np"
    if p.math is None and p.scipy is not None:
        return f"scipy.{p.scipy}", "scipy"
    return f"math.{p.math}", "math"


def _reference(p, args):
    """NumPy's (math's, SciPy's) own value of ``p`` at ``args``: not the table's ``evaluate``."""
    if p.numpy is not None and hasattr(np, p.numpy):
        return getattr(np, p.numpy)(*args)
    if p.math is None and p.scipy is not None:
        return getattr(scipy.special, p.scipy.split(".", 1)[1])(*args)
    return np.vectorize(getattr(math, p.math), otypes=[float])(*args)


def _program(name: str, array: bool) -> tuple[str, tuple[str, ...]]:
    """``f`` calling primitive ``name``: of numbers, or summed over arrays (a loop over the elements where
    only ``math`` has it)."""
    p = PRIMITIVES[name]
    call, module = _source_call(p)
    params = ("x", "y", "z")[: max(p.nargs)]
    if not array:
        return f"def f({', '.join(params)}):\n    return {call}({', '.join(params)})\n", params
    if module in ("np", "scipy"):
        return f"def f({', '.join(params)}, w):\n    return np.sum({call}({', '.join(params)}) * w)\n", (*params, "w")
    elems = ", ".join(f"{q}[i]" for q in params)
    return (f"def f({', '.join(params)}, w):\n    s = 0.0\n    for i in range(len(w)):\n"
            f"        s = s + {call}({elems}) * w[i]\n    return s\n"), (*params, "w")


_ABOVE_ONE = {"arccosh"}


@pytest.mark.parametrize("array", [False, True], ids=["scalar", "array"])
@pytest.mark.parametrize("name", LIFTED)
def test_each_registration_compiles_to_numpys_value_and_derivative(name, array):
    p = PRIMITIVES[name]
    src, params = _program(name, array)
    n = max(p.nargs)
    if array:
        args = (np.array([0.31, 0.52, 0.77]), np.array([0.66, 0.43, 0.58]),
                np.array([0.91, 0.47, 0.69]))[:n] + (np.array([1.5, -0.5, 0.25]),)
    else:
        args = (0.37, 0.61, 0.83)[:n]
    if name in _ABOVE_ONE:          # defined for x >= 1 only: the same samples, moved into its domain
        args = tuple(a + 1.0 for a in args[:n]) + args[n:]
    ns: dict = {"np": np, "math": math, "scipy": scipy}
    exec(src, ns)
    plain = ns["f"]
    want = np.sum(_reference(p, args[:n]) * args[-1]) if array else _reference(p, args)
    for selection in ({}, {"max_soi": 1}):
        if name in _NO_DERIVATIVE:
            with pytest.raises(cn.CoarsenError, match=rf"{_source_call(p)[0]} has no derivative rule"):
                cn.coarsen(src, wrt=params, namespace=ns, **selection).grad(*args)
            if array:       # its value needs no derivative: differentiated in the weights only
                f = cn.coarsen(src, wrt=("w",), namespace=ns, **selection)
                assert_close(f(*args), want, rtol=1e-14, atol=1e-15, what=f"{name}: value")
            continue
        f = cn.coarsen(src, wrt=params, namespace=ns, **selection)
        assert_close(f(*args), want, rtol=1e-14, atol=1e-15, what=f"{name}: value")
        grads = f.grad(*args)
        for k, g in enumerate(grads if len(params) > 1 else (grads,)):
            assert_close(g, finite_difference(plain, args, k), rtol=1e-6, atol=1e-8, what=f"{name}: d/d{params[k]}")


@pytest.mark.parametrize("name", [n for n in LIFTED if n not in _NO_DERIVATIVE])
def test_each_sympy_form_differentiates(name):
    p = PRIMITIVES[name]
    xs = sp.symbols("x y z", real=True)[: max(p.nargs)]
    e = p.lift(*xs)
    for x in xs:
        assert not sp.diff(e, x).has(sp.Derivative), f"{name}: d/d{x} is left unevaluated"


def test_every_source_name_finds_its_registration():
    for name, p in PRIMITIVES.items():
        for alias in p.aliases:
            assert primitives.ALIASES[alias] == name
        if name in LIFTED:
            call, module = _source_call(p)
            if module == "scipy":
                assert primitives.of_object(getattr(scipy.special, call.split(".")[-1])) is p
            else:
                assert primitives.lookup(module, call.split(".", 1)[1]) is p


def test_a_missing_rule_names_the_primitive():
    with pytest.raises(cn.CoarsenError, match="no_such_function"):
        rule("no_such_function")
    with pytest.raises(cn.CoarsenError, match="no_such_function"):
        primitives.evaluate("no_such_function", [1.0])
    with pytest.raises(cn.CoarsenError, match=r"np\.spherical_yn"):
        cn.coarsen("def f(x):\n    return np.spherical_yn(x)\n", wrt=("x",))(0.5)


def test_a_form_without_a_derivative_rule_is_named_not_a_printer_error(monkeypatch):
    """SymPy differentiates a function it does not know into an unevaluated ``Derivative``; that used to
    reach the printer (``no printer for Tuple``, an internal error).  Now it names the primitive."""
    from coarsen_nb.rules import table
    from coarsen_nb.rules.record import Primitive, Spelling

    nameless = type("Nameless", (sp.Function,), {"nargs": 1})     # no fdiff: SymPy keeps Derivative(...)
    p = Primitive("nameless", "elementwise", (1,), "nameless", lift=nameless, forms=(nameless,),
                  spelling=Spelling("sin", "math.sin", "sin"), cost="math")
    monkeypatch.setitem(table.PRIMITIVES, "nameless", p)
    monkeypatch.setattr(np, "nameless", np.sin, raising=False)     # (a name NumPy has, as a user's would be)
    monkeypatch.setitem(table._BY_FORM, nameless, p)
    table.printed.cache_clear()
    try:
        f = cn.coarsen("def f(x):\n    return np.nameless(x) * x\n", wrt=("x",))
        with pytest.raises(cn.CoarsenError, match=r"np\.nameless has no derivative rule"):
            f.grad(0.3)
    finally:
        table.printed.cache_clear()


def test_a_users_own_function_is_no_primitive_and_imports_no_scipy():
    """A helper the user's code calls (``_spring``) is inlined, not a primitive, decided without importing
    SciPy (whose functions are compared by identity); NumPy's and SciPy's Python functions still are."""
    import subprocess
    import sys

    code = ("import sys\nfrom coarsen_nb import primitives\n"
            "def spring(d):\n    return d * d\n"
            "assert primitives.of_object(spring) is None\n"
            "assert 'scipy.special' not in sys.modules, 'SciPy imported'\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert primitives.of_object(np.linalg.norm).numpy == "linalg.norm"
    assert primitives.of_object(scipy.special.logsumexp).name == "logsumexp"
