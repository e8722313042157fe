"""Finding numba-cuda and a device, and moving arrays between numba, torch and numpy.

Nothing here imports ``numba.cuda`` at module import: :func:`require_cuda` does, and says
clearly what is missing (the package, or a device). Under numba's CUDA simulator
(``NUMBA_ENABLE_CUDASIM=1``, which must be set before anything in the process imports
``numba.cuda``) kernels run as Python threads on the host; see :func:`on_host`.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from .._internal.extras import install_hint

INSTALL_HINT = install_hint("cuda")


class CudaUnavailableError(RuntimeError):
    """numba-cuda is not installed, or it finds no usable CUDA device."""


def simulator_requested() -> bool:
    """Whether numba's CUDA simulator is on for this process: as numba-cuda decided when ``numba.cuda``
    was imported, or, before that, as ``NUMBA_ENABLE_CUDASIM`` says it will."""
    if "numba.cuda" in sys.modules:
        from numba.core import config  # numba-cuda's too (it re-exports numba's)

        return bool(getattr(config, "ENABLE_CUDASIM", 0))
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")


def enable_simulator() -> None:
    """Switch numba's CUDA simulator on for this process (``NUMBA_ENABLE_CUDASIM=1``, and numba's
    configuration re-read, since numba read it at its import). ``RuntimeError`` once ``numba.cuda``
    was imported without it: the simulator cannot be switched on after that."""
    if "numba.cuda" in sys.modules and not simulator_requested():
        raise RuntimeError("numba.cuda was imported already without the simulator; set NUMBA_ENABLE_CUDASIM=1 "
                           "before starting Python")
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    from numba.core import config

    config.reload_config()


def require_cuda() -> Any:
    """``numba.cuda``, once numba-cuda is known to be installed and a device (or the simulator) usable.

    Raises :class:`CudaUnavailableError` naming what is missing and how to get it."""
    if importlib.util.find_spec("numba_cuda") is None:
        raise CudaUnavailableError(
            f"the GPU env needs numba-cuda, which is not installed: {INSTALL_HINT} "
            "(or, without a GPU, set NUMBA_ENABLE_CUDASIM=1 with numba-cuda installed to use the simulator)")
    from numba import cuda

    if simulator_requested():
        return cuda
    try:
        available = cuda.is_available()
    except Exception as exc:  # noqa: BLE001 - the driver's own errors vary; report them as they are
        raise CudaUnavailableError(f"no usable CUDA device: {type(exc).__name__}: {exc}") from exc
    if not available:
        reason = ""
        try:
            cuda.detect()
        except Exception as exc:  # noqa: BLE001
            reason = f" ({type(exc).__name__}: {exc})"
        raise CudaUnavailableError(
            f"no usable CUDA device: numba.cuda.is_available() is False{reason}. Check the NVIDIA driver "
            "and that numba-cuda matches it (numba-cuda[cu12] or numba-cuda[cu13]); without a GPU, "
            "set NUMBA_ENABLE_CUDASIM=1 before starting Python to run on numba's CUDA simulator")
    return cuda


def _host_array(x: Any) -> Any:
    """The numpy array behind a simulator array (or ``x`` itself)."""
    item = getattr(x, "_item", None)  # FakeWithinKernelCUDAArray -> FakeCUDAArray
    if item is not None:
        x = item
    ary = getattr(x, "_ary", None)  # FakeCUDAArray -> numpy
    return ary if ary is not None else x


def on_host(dispatcher: Any) -> Callable[..., Any]:
    """``dispatcher`` callable from a simulated kernel: the simulator hands kernels its own array
    wrappers, which a CPU-compiled kernel cannot take, so their numpy arrays are passed instead.
    The function run is the same compiled kernel the CPU uses (on a GPU, numba-cuda compiles its
    Python source as a device function instead)."""

    def call(*args: Any) -> Any:
        return dispatcher(*(_host_array(a) for a in args))

    call.__name__ = getattr(dispatcher, "__name__", "call")
    call.__wrapped__ = dispatcher  # type: ignore[attr-defined]
    return call


def torch_cuda() -> Any:
    """torch, if it is installed and sees a CUDA device, else ``None``."""
    if importlib.util.find_spec("torch") is None:
        return None
    import torch

    return torch if torch.cuda.is_available() else None


def to_host(array: Any) -> np.ndarray:
    """A numpy copy of a device array, a torch tensor or anything array-like."""
    if hasattr(array, "copy_to_host"):
        return array.copy_to_host()
    if type(array).__module__.startswith("torch"):
        return array.detach().cpu().numpy()
    return np.array(array)
