"""Real workloads for coarsen_nb, one module each, written as a notebook user writes them.

Every module ``kernels/<name>.py`` holds

* ``META`` — ``name`` (also the main function's name), ``wrt`` (parameter names
  differentiated, in order), ``sizes`` / ``quick_sizes`` (benchmark sizes for
  ``make_inputs``), ``test_size`` (small enough that the plain function runs
  well under a second), ``size_name`` (what the size counts), ``loop_kind``,
  ``paper`` (one of Shen et al.'s OOPSLA 2021 applications) and
  ``description``;
* the main function: plain loops inside coarsen_nb's supported subset,
  returning one float;
* ``grad(*args)`` — a hand-written, analytical gradient w.r.t. ``META["wrt"]``
  in that order (one value if one name, else a tuple): the practical speed
  limit the benchmarks compare against;
* ``make_inputs(size, seed=0)`` — the positional arguments, deterministic per
  seed;
* optionally ``vectorized(*args)`` — the same value as the main function, written
  with whole-array NumPy operations (``np.cumsum``, ``np.correlate``, ``np.clip``,
  a doubling scan for a linear recurrence): what a user who rewrote the loops by
  hand would run forward.  The benchmarks report the gradient's time over it
  (issue 16: loops users write should not cost more than a few vectorized
  forwards); :func:`vectorized` returns it or ``None``.

``loop_kind`` says which part of the phi-calculus a kernel leans on:
``closed-form`` (reductions, Σ with γ inside), ``linear-recurrence``
(v ← a·v + b_k, e.g. Horner), ``nested`` / ``nested-branch`` (nested Σ, with γ),
``triangular-branch`` (``range(i + 1, n)`` with a branch), ``carried-state``
(a loop carrying the previous element), ``recurrence`` (nonlinear μ with no
closed form), ``array-recurrence`` (the same over whole arrays) and
``while-break`` (trip count recorded by the forward run), ``batched`` (an outer loop of independent
iterations run as lanes of arrays, phi/batching.py).
"""

from collections.abc import Iterator, Mapping
from importlib import import_module

NAMES = (
    "bgd_hyperopt",
    "hookean_spring",
    "hmc",
    "brachistochrone",
    "black_scholes",
    "piecewise_sum",
    "rosenbrock",
    "horner_fit",
    "pendulum",
    "pendulum_batch",
    "logreg_nll",
    "gmm",
    "pairwise_energy",
    "iir_filter",
    "exp_smoothing",
    "barrier_option",
    "asian_option",
    "conv1d",
    "segment_distance",
)



class _Kernels(Mapping):
    """``{name: module}`` of every kernel, each imported when first looked up: a process that runs one kernel
    (``compile_times``' fresh processes, a user's notebook) does not import the other 18 (0.14 s of CPU,
    SciPy's special functions among them), which would count as its own start-up time."""

    def __getitem__(self, name: str):
        if name not in NAMES:
            raise KeyError(name)
        return import_module(f"{__name__}.{name}")

    def __iter__(self) -> Iterator[str]:
        return iter(NAMES)

    def __len__(self) -> int:
        return len(NAMES)


KERNELS: Mapping = _Kernels()


def function(mod):
    """The kernel's main function: the one named like ``META["name"]``."""
    return getattr(mod, mod.META["name"])


def vectorized(mod):
    """The kernel's vectorized NumPy forward, ``vectorized(*args) -> float``, or ``None`` if it has none."""
    return getattr(mod, "vectorized", None)


__all__ = ["KERNELS", "NAMES", "function", "vectorized"]
