"""Moved: this is :mod:`concordia_env._internal.jit` now.

The package's internals are together in the private package :mod:`concordia_env._internal`. For one
release this module keeps ``import concordia_env.jit`` working by re-exporting the public names of
the new module; import them from there instead. It holds no code of its own: to patch an attribute
(a test's monkeypatch), patch the new module.
"""

from __future__ import annotations

from ._internal.jit import (
    APP_NAME,
    BUSY_FACTOR,
    CACHE_ENV,
    COMPILE_SECONDS,
    FIRST_USE_NOTICE,
    GROUPS,
    LIBRARY_COMPILE_SECONDS,
    NOTICE,
    NOTICE_ENV,
    NOTICE_MODES,
    PACKAGE_DIR,
    REGISTRY,
    STAMP_SUFFIX,
    CacheDecision,
    Kernel,
    cache_decision,
    cached_code_folder,
    compile_kernels,
    decide_cache,
    default_cache_dir,
    ensure_fresh,
    estimate_text,
    group_kernels,
    kernel,
    kernel_sources,
    resolve_groups,
    sources_stamp,
    stamp_marker,
    version_tag,
    writable_problem,
)
from ._internal.moved import moved as _moved

__all__ = [
    "APP_NAME", "BUSY_FACTOR", "CACHE_ENV", "COMPILE_SECONDS", "CacheDecision", "FIRST_USE_NOTICE", "GROUPS",
    "Kernel", "LIBRARY_COMPILE_SECONDS", "NOTICE", "NOTICE_ENV", "NOTICE_MODES", "PACKAGE_DIR", "REGISTRY",
    "STAMP_SUFFIX", "cache_decision", "cached_code_folder", "compile_kernels", "decide_cache",
    "default_cache_dir", "ensure_fresh", "estimate_text", "group_kernels", "kernel", "kernel_sources",
    "resolve_groups", "sources_stamp", "stamp_marker", "version_tag", "writable_problem",
]

_moved("concordia_env.jit", "concordia_env._internal.jit")
