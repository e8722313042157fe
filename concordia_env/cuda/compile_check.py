"""Compile the GPU env's kernels to PTX without a GPU: ``python -m concordia_env.cuda.compile_check``.

numba's CUDA simulator runs the rules as CPU code, so it cannot show that the rules also compile
for a GPU. This does: it compiles every kernel of :mod:`concordia_env.cuda.kernels` (and with
them the rules, the encoder and the setup, as device functions) to PTX for a compute capability
(default 9.0, the H100), and reports each kernel's PTX size and its local-memory ("stack
frame") bytes, which should stay 0: the rules keep no scratch arrays.

Needs numba-cuda and NVIDIA's NVVM library (``pip install nvidia-nvvm nvidia-cuda-nvrtc``, or a
CUDA toolkit), but no driver or device: where no device is present, numba-cuda's question for
the current device's compute capability is answered with the one asked for.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
import time
import types
from collections.abc import Iterator

#: argument types the env launches each kernel with
SIGNATURES: dict[str, str] = {
    "reset_kernel": "int32[:, ::1], int32[::1], int8[:, ::1], float32[:, ::1], int64[::1], int64[::1], "
                    "int32[::1], int32[::1], int64, int64",
    "check_kernel": "int8[:, ::1], int64[::1], int64[::1]",
    "step_kernel": "int32[:, ::1], int32[::1], int8[:, ::1], float32[:, ::1], float32[:, ::1], int32[:, ::1], "
                   "int8[::1], boolean[::1], int64[::1], int64[::1], int64[::1], int32[::1], int32[::1], "
                   "int64, int64, int64, int64",
    "playout_kernel": "int32[:, ::1], int32[::1], int8[:, ::1], int64, int64, int64[::1]",
    "gather_kernel": "int32[:, ::1], int64[::1], int64[::1], int32[:, ::1], int64[::1]",
    "random_actions_kernel": "int8[:, ::1], int64, int64[::1]",
}


@contextlib.contextmanager
def _assumed_device(cc: tuple[int, int]) -> Iterator[None]:
    """Device functions compile for the current device's compute capability; without a device,
    answer ``cc``."""
    from numba import cuda
    from numba.cuda import dispatcher

    if cuda.is_available():
        yield
        return
    saved = dispatcher.get_current_device
    dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=cc)
    try:
        yield
    finally:
        dispatcher.get_current_device = saved


def compile_all(cc: tuple[int, int] = (9, 0), names: list[str] | None = None) -> dict[str, dict[str, float]]:
    """PTX of each kernel for ``cc``: {name: {"seconds", "ptx_chars", "local_bytes"}}."""
    from numba import cuda

    from . import kernels

    out: dict[str, dict[str, float]] = {}
    with _assumed_device(cc):
        for name in names or list(SIGNATURES):
            start = time.perf_counter()
            ptx, _ = cuda.compile_ptx(getattr(kernels, name).py_func, SIGNATURES[name], cc=cc)
            frames = [int(x) for x in re.findall(r"\.local \.align \d+ \.b8 \t?__local_depot\d+\[(\d+)\]", ptx)]
            out[name] = {"seconds": time.perf_counter() - start, "ptx_chars": len(ptx),
                         "local_bytes": max(frames, default=0)}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m concordia_env.cuda.compile_check", description=__doc__.split("\n")[0])
    parser.add_argument("--cc", default="9.0", help="compute capability, e.g. 9.0 (default), 8.0")
    parser.add_argument("kernels", nargs="*", help=f"kernels (default: all of {', '.join(SIGNATURES)})")
    args = parser.parse_args(argv)
    unknown = [k for k in args.kernels if k not in SIGNATURES]
    if unknown:
        parser.error(f"unknown kernels {unknown}; known: {', '.join(SIGNATURES)}")
    major, _, minor = args.cc.partition(".")
    for name, r in compile_all((int(major), int(minor or 0)), args.kernels or None).items():
        print(f"{name:<15} {r['ptx_chars']:>9,.0f} PTX chars  local memory {r['local_bytes']:>5.0f} B  "
              f"{r['seconds']:6.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
