"""Compiled kernels outside engine.py recompile when the engine (or encoder) source changes.

numba's on-disk cache only watches a function's own file, while a cached kernel
carries compiled copies of the kernels it calls; each such module compiles in a
stamp of the sources it depends on and recompiles itself when that is stale."""

import zlib
from pathlib import Path

from concordia_env import encoding, engine, validation, vector


class FakeKernel:
    def __init__(self, stamp=None):
        self.stamp, self.recompiled = stamp, 0

    def __call__(self):
        return self.stamp

    def recompile(self):
        self.recompiled += 1


def test_every_dependent_module_runs_kernels_built_from_the_current_sources():
    eng = zlib.crc32(Path(engine.__file__).read_bytes())
    assert engine.KERNEL_STAMP == eng
    assert validation.KERNEL_STAMP == eng
    assert encoding.KERNEL_STAMP == zlib.crc32(Path(encoding.__file__).read_bytes(), eng)
    assert vector.KERNEL_STAMP == encoding.KERNEL_STAMP
    for module in (encoding, validation, vector):
        assert module._compiled_kernel_stamp() == module.KERNEL_STAMP, module.__name__


def test_a_stale_stamp_recompiles_every_kernel_and_a_fresh_one_none():
    stale, kernels = FakeKernel(stamp=1), [FakeKernel(), FakeKernel()]
    engine.refresh_stale_kernels(stale, 2, *kernels)
    assert stale.recompiled == 1 and all(k.recompiled == 1 for k in kernels)
    fresh, kernels = FakeKernel(stamp=2), [FakeKernel()]
    engine.refresh_stale_kernels(fresh, 2, *kernels)
    assert fresh.recompiled == 0 and kernels[0].recompiled == 0
