"""Stand-ins for ``math`` and ``numpy`` that route a plain function's calls to a peer.

Why: kernels call ``math.exp(z)`` on scalars and ``np.sum(x)`` on arrays.
Under autograd, JAX or PyTorch those values are boxes, tracers or tensors,
which the real ``math`` rejects; the shims map each name to the peer's own
differentiable function and fall back to the real module for everything else
(constants such as ``math.pi``, and names the peer does not need to see), so a
kernel that uses something unmapped fails loudly inside the peer, where the
harness reports it, rather than being silently rewritten.
"""

from __future__ import annotations

import math

import numpy as np

# math name -> numpy-style name, for peers that mirror NumPy's naming.
_MATH_TO_NP = {
    "sin": "sin", "cos": "cos", "tan": "tan", "asin": "arcsin", "acos": "arccos", "atan": "arctan",
    "atan2": "arctan2", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "asinh": "arcsinh",
    "acosh": "arccosh", "atanh": "arctanh", "exp": "exp", "expm1": "expm1", "log1p": "log1p",
    "log2": "log2", "log10": "log10", "sqrt": "sqrt", "fabs": "abs", "pow": "power", "hypot": "hypot",
}


class MathShim:
    """A ``math`` look-alike: mapped names go to the peer, the rest to the real ``math``."""

    def __init__(self, peer: str, table: dict):
        self._peer = peer
        self._table = table

    def __getattr__(self, name):
        try:
            return self._table[name]
        except KeyError:
            return getattr(math, name)

    def __repr__(self):
        return f"<math shim for {self._peer}>"


def _np_style(ns, peer, special):
    """Map math names onto a NumPy-like namespace ``ns`` (and ``special`` for erf/erfc)."""
    table = {m: getattr(ns, n) for m, n in _MATH_TO_NP.items() if hasattr(ns, n)}
    # One-argument log only: a shim lambda would hide the function from tangent's source lookup,
    # and math.log(x, base) then fails loudly in the peer instead of being rewritten.
    table["log"] = ns.log
    for name in ("erf", "erfc"):
        if special is not None and hasattr(special, name):
            table[name] = getattr(special, name)
    return MathShim(peer, table)


def numpy_math():
    """``math`` over NumPy functions (for tangent, which differentiates NumPy calls it knows)."""
    try:
        import scipy.special as special
    except ImportError:
        special = None
    return _np_style(np, "numpy", special)


def autograd_math():
    import autograd.numpy as anp

    try:
        import autograd.scipy.special as special
    except ImportError:
        special = None
    return _np_style(anp, "autograd", special)


def jax_math():
    import jax.numpy as jnp
    import jax.scipy.special as special

    return _np_style(jnp, "jax", special)


def _tensor(x):
    import torch

    if isinstance(x, torch.Tensor):
        return x
    if isinstance(x, np.ndarray):
        return torch.from_numpy(x)
    return torch.as_tensor(x, dtype=torch.get_default_dtype() if isinstance(x, float) else None)


def torch_math():
    import torch

    def unary(f):
        return lambda x: f(_tensor(x))

    def binary(f):
        return lambda a, b: f(_tensor(a), _tensor(b))

    names = {"sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
             "atanh", "exp", "expm1", "log1p", "log2", "log10", "sqrt", "erf", "erfc"}
    table = {n: unary(getattr(torch, n)) for n in names}
    table["fabs"] = unary(torch.abs)
    table["atan2"] = binary(torch.atan2)
    table["pow"] = binary(torch.pow)
    table["hypot"] = binary(torch.hypot)
    table["log"] = unary(torch.log)
    return MathShim("torch", table)


class TorchNumpy:
    """Enough of ``numpy``'s surface over torch for plain numeric code (float64 by default).

    Elementwise and reduction names accept Python scalars and ``axis=``, as
    NumPy's do; array constructors keep integer arguments as sizes.
    """

    _UNARY = ("sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "exp", "expm1",
              "log", "log1p", "log2", "log10", "sqrt", "abs", "absolute", "square", "sign", "floor", "ceil")
    _BINARY = ("arctan2", "power", "maximum", "minimum", "hypot", "logaddexp", "outer")
    _REDUCE = {"sum": "sum", "mean": "mean", "prod": "prod", "max": "amax", "min": "amin",
               "amax": "amax", "amin": "amin", "cumsum": "cumsum", "cumprod": "cumprod"}

    def __init__(self):
        import torch

        self._torch = torch
        self.pi, self.e, self.inf, self.nan = math.pi, math.e, math.inf, math.nan
        self.float64, self.float32, self.int64 = torch.float64, torch.float32, torch.int64
        self.linalg = torch.linalg
        self.newaxis = None

    def __getattr__(self, name):
        torch = self._torch
        if name in self._UNARY:
            f = getattr(torch, name)
            return lambda x, *a, **k: f(_tensor(x), *a, **k)
        if name in self._BINARY:
            f = getattr(torch, name)
            return lambda a, b: f(_tensor(a), _tensor(b))
        if name in self._REDUCE:
            f = getattr(torch, self._REDUCE[name])

            def reduce(x, axis=None, keepdims=False):
                x = _tensor(x)
                if axis is None:
                    return f(x.reshape(-1), 0) if name.startswith("cum") else (
                        f(x) if not keepdims else f(x).reshape([1] * x.dim()))
                return f(x, axis) if name.startswith("cum") else f(x, axis, keepdim=keepdims)

            return reduce
        return getattr(torch, name)

    def dot(self, a, b):
        a, b = _tensor(a), _tensor(b)
        if a.dim() == 0 or b.dim() == 0:
            return a * b
        return self._torch.dot(a, b) if a.dim() == b.dim() == 1 else self._torch.matmul(a, b)

    def where(self, c, a, b):
        return self._torch.where(_tensor(c), _tensor(a), _tensor(b))

    def clip(self, x, lo, hi):
        return self._torch.clamp(_tensor(x), lo, hi)

    def array(self, x, dtype=None):
        return self._torch.as_tensor(x, dtype=dtype)

    asarray = array


def torch_numpy():
    return TorchNumpy()
