"""Time generated numba modules' gradients against each other, interleaved in one process (issue 14).

``python tests/numba_module_timing.py write KERNEL[,KERNEL...]`` writes each kernel's numba module (no
compile) into ``$COARSEN_NB_CACHE/numba`` and prints its path; run it once per checkout (``PYTHONPATH``)
with a cache directory each.  ``python tests/numba_module_timing.py time KERNEL SIZE FILE...`` loads the
module files (a generated NumPy module's file too: its ``KERNEL_grad`` is timed the same way), calls each
``KERNEL_grad`` once (Numba compiles it, or loads it from the cache beside the file), then times them in
alternating rounds (median of 7 rounds of 3 calls) with the kernel's hand-written NumPy gradient, and prints
each median and its ratio to the hand-written one.  The benchmark harness runs one method after the other;
on a shared machine only ratios measured interleaved are comparable.
"""

import importlib
import importlib.util
import sys
import time
import warnings

import numpy as np


def write(names: str) -> None:
    import coarsen_nb as cn
    import coarsen_nb.numba_loader as loader
    from coarsen_nb import module_parts

    def written(parts, module_name, *args, **kwargs):
        print(loader.module_file(module_parts.joined(parts), module_name))
        raise ImportError("written, not loaded")

    loader.load = written
    for name in names.split(","):
        mod = importlib.import_module(f"coarsen_nb.kernels.{name}")
        f = cn.coarsen(getattr(mod, name), wrt=tuple(mod.META["wrt"]), backend="numba")
        try:
            f.grad(*mod.make_inputs(mod.META["test_size"]))
        except Exception:       # (the module is not loaded: the call cannot run)
            pass


def timed(name: str, size: int, files: list[str]) -> None:
    kernel = importlib.import_module(f"coarsen_nb.kernels.{name}")
    args = kernel.make_inputs(size)
    fns = {}
    for path in files:
        stem = path.rsplit("/", 1)[-1][:-3]        # (the module's name is its file's: Numba's cache imports it)
        spec = importlib.util.spec_from_file_location(stem, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[stem] = module
        spec.loader.exec_module(module)
        fns[path] = getattr(module, name + "_grad")
    fns["hand-written"] = kernel.grad
    for key, f in fns.items():
        start = time.perf_counter()
        f(*args)
        print(f"{key}: first call {time.perf_counter() - start:.2f} s")
    times: dict = {k: [] for k in fns}
    for _ in range(7):
        for key, f in fns.items():
            start = time.perf_counter()
            for _ in range(3):
                f(*args)
            times[key].append((time.perf_counter() - start) / 3)
    hand = np.median(times["hand-written"])
    for key, t in times.items():
        print(f"{np.median(t) * 1e3:9.3f} ms  {np.median(t) / hand:5.2f}x  {key}")


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    if sys.argv[1] == "write":
        write(sys.argv[2])
    else:
        timed(sys.argv[2], int(sys.argv[3]), sys.argv[4:])
