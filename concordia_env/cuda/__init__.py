"""The rules kernel on a GPU: :class:`ConcordiaCudaVecEnv` (the ``cuda`` extra: ``pip install ".[cuda]"``).

* :mod:`.newgame`: the old home of the setup kernel, now :mod:`concordia_env.rules.setup` (host and device share it);
* :mod:`.games`: one game's step, reset, rewards and random playout, as numba kernels calling the rules;
* :mod:`.kernels`: the ``cuda.jit`` kernels, one thread per game (imports ``numba.cuda``);
* :mod:`.vector`: the env;
* :mod:`.backend`: finding numba-cuda and a device; the simulator; arrays between numba, torch and numpy.

Importing this package imports neither numba-cuda nor torch: creating the env does, and raises
:class:`CudaUnavailableError` saying what is missing. See docs/gpu.md.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .backend import CudaUnavailableError, require_cuda

__all__ = ["ConcordiaCudaVecEnv", "CudaUnavailableError", "require_cuda"]

if TYPE_CHECKING:
    from .vector import ConcordiaCudaVecEnv


def __getattr__(name: str) -> Any:
    if name == "ConcordiaCudaVecEnv":
        return importlib.import_module(".vector", __name__).ConcordiaCudaVecEnv
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
