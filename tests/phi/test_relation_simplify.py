"""phi/relation_simplify: SymPy's ``simplify_logic`` result, without its costly proof that a relation's sides
differ (Piecewise folding's one call, phi/gammas).  Every case is checked against SymPy's own functions."""

import random

import pytest
import sympy as sp

from coarsen_nb.phi import relation_simplify as rs

x, y, z = sp.symbols("x y z", real=True)
n = sp.Symbol("n", integer=True)
p = sp.Symbol("p", positive=True)
q = sp.Symbol("q", negative=True)
# segment_distance's clamp, as the lifter writes it
dx, dy, ax, ay, px, py, l2 = sp.symbols("dx dy ax ay px py l2", real=True)
T = (dx * (-ax + px) + dy * (-ay + py)) / l2

RELATIONS = [
    sp.Le(T, sp.Float(1.0), evaluate=False), sp.Lt(T, 0, evaluate=False), sp.Gt(T, sp.Float(0.0), evaluate=False),
    sp.Lt(x + y, 2 * x, evaluate=False), sp.Ge(x * y - 1, x, evaluate=False), sp.Le(x / (y + 1), z, evaluate=False),
    sp.Gt(n + 1, n, evaluate=False), sp.Lt(p, q, evaluate=False), sp.Le(p * x, q, evaluate=False),
    # sides whose difference is 0: SymPy's proof still runs and makes the relation a truth value
    sp.Le((x + 1) ** 2, x ** 2 + 2 * x + 1, evaluate=False), sp.Lt((x + 1) ** 2, x ** 2 + 2 * x + 1, evaluate=False),
    sp.Ge(x * (y + z), x * y + x * z, evaluate=False),
    # numbers and functions the exact value does not cover: SymPy's own test
    sp.Lt(sp.Float(0.1) * x + sp.Float(0.2) * x, sp.Float(0.3) * x, evaluate=False),
    sp.Le(sp.exp(x) * y, sp.exp(x), evaluate=False), sp.Lt(sp.sqrt(2) * x, y, evaluate=False),
    sp.Le(2 ** 30 * x, y, evaluate=False),
    # Eq and Ne simplify their own way: SymPy's simplify
    sp.Eq(x + y, 2 * x, evaluate=False), sp.Ne(x * (y + 1), x * y + x, evaluate=False),
]


@pytest.mark.parametrize("rel", RELATIONS, ids=str)
def test_a_relation_simplifies_as_sympy_simplifies_it(rel):
    assert rs.relation_simplified(rel) == sp.simplify(rel)


def _random_relations(count: int, seed: int):
    rng = random.Random(seed)
    symbols = (x, y, z, n, p)

    def term():
        coefficient = rng.choice([-3, -2, -1, 1, 2, 3, sp.Float(2.0), sp.Float(-1.0)])
        return coefficient * sp.Mul(*rng.sample(symbols, rng.randint(0, 2)))

    def side():
        numerator = sp.Add(*(term() for _ in range(rng.randint(1, 3))))
        return numerator / sp.Add(*(term() for _ in range(rng.randint(1, 2)))) if rng.random() < 0.3 else numerator

    kinds = (sp.Lt, sp.Le, sp.Gt, sp.Ge)
    out = []
    while len(out) < count:
        lhs, rhs = side(), side()
        if lhs.is_number and rhs.is_number:
            continue
        out.append(rng.choice(kinds)(lhs, rhs, evaluate=False))
    return out


@pytest.mark.parametrize("seed", range(3))
def test_random_relations_simplify_as_sympy_simplifies_them(seed):
    """Rational functions with small integer numbers (the exact value's ground), some with zero differences."""
    for rel in _random_relations(12, seed):
        assert rs.relation_simplified(rel) == sp.simplify(rel), rel


@pytest.mark.parametrize("form", ["cnf", "dnf"])
def test_simplify_logic_gives_sympys_result(form):
    c1, c2 = RELATIONS[0], RELATIONS[1]
    conditions = [
        sp.Or(c1, c2), sp.And(c1, sp.Not(c2)), sp.ITE(c1, c2, RELATIONS[3]).to_nnf(),
        sp.Or(sp.And(c1, RELATIONS[4]), sp.And(sp.Not(c1), RELATIONS[5])),
        sp.Or(RELATIONS[9], RELATIONS[3]),        # a relation that simplifies to True
        sp.Or(sp.Lt(x, 1), sp.Ge(x, 1)),           # a quick exit: already in form
    ]
    for c in conditions:
        assert rs.simplify_logic(c, form=form) == sp.simplify_logic(c, form=form), c


def test_surely_not_zero_only_where_the_exact_value_shows_it():
    assert rs.surely_not_zero(T - sp.Float(1.0))
    assert rs.surely_not_zero(T)
    assert rs.surely_not_zero(p + q)            # p > 0, q < 0 given values of their signs
    assert not rs.surely_not_zero(x - x + y - y + sp.Integer(0) * z)
    assert not rs.surely_not_zero((x + 1) ** 2 - x ** 2 - 2 * x - 1)      # 0 everywhere
    assert not rs.surely_not_zero(sp.Float(0.5) * x - y)                  # a float that is no integer
    assert not rs.surely_not_zero(sp.exp(x) - y)                          # not a rational function
    assert not rs.surely_not_zero(2 ** 30 * x - y)                        # a large integer
    assert not rs.surely_not_zero(sp.Integer(3))                          # a number: SymPy's own proof


def test_another_sympy_version_runs_sympys_own_functions(monkeypatch):
    monkeypatch.setattr(rs, "COPIED_FROM", "0.0")
    called = []
    monkeypatch.setattr(rs, "_eval_simplify", lambda *a, **k: called.append(a))
    rel = RELATIONS[0]
    assert rs.relation_simplified(rel) == sp.simplify(rel)
    assert rs.simplify_logic(sp.Or(rel, RELATIONS[1]), form="cnf") == sp.simplify_logic(sp.Or(rel, RELATIONS[1]),
                                                                                         form="cnf")
    assert not called
