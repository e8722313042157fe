"""No kernel code reachable from the rules' entry points allocates memory (issue "A rules core a
newcomer reads in an hour", part 5): a GPU compile of the same functions has no heap.

Each entry point is compiled afresh (not from the cache, whose code cannot be inspected) and
its LLVM IR, which holds the code of every kernel it calls, is searched for numba's runtime
allocation calls (``np.zeros``, ``np.empty``, array copies and lists all go through them)."""

from __future__ import annotations

import re

import numba
import numpy as np
import pytest

from concordia_env import encoding
from concordia_env import engine as E

ALLOCATION = re.compile(r"NRT_MemInfo_alloc\w*|NRT_Allocate\w*|NRT_MemInfo_new\w*")

ENTRY_POINTS = {
    "legal_mask": (E.legal_mask, "int64(int32[::1], int32[::1], int8[::1])"),
    "step": (E.step, "int64(int32[::1], int32[::1], int8[::1], int64)"),
    "score_player": (E.score_player, "int64(int32[::1], int32[::1], int64, int32[::1])"),
    "random_playout": (E.random_playout, "int64(int32[::1], int32[::1], int8[::1], int64, int64)"),
    "encode": (encoding.encode, "void(int32[::1], int32[::1], int64, int64, float32[::1])"),
    "setup_state": (E.setup_state, "void(int32[::1], int32[::1], int32[::1], int64)"),
}


def allocations(dispatcher, signature: str) -> set[str]:
    fresh = numba.njit(signature, cache=False)(dispatcher.py_func)
    return set(ALLOCATION.findall("".join(fresh.inspect_llvm().values())))


@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
def test_no_kernel_reachable_from_an_entry_point_allocates(name):
    dispatcher, signature = ENTRY_POINTS[name]
    assert allocations(dispatcher, signature) == set()


def test_the_check_sees_an_allocation_in_a_callee():
    """The search is not vacuous: a kernel calling one that allocates is caught."""

    @numba.njit(cache=False)
    def scratch(n):
        buf = np.zeros(n, np.int64)  # what score_player did before: a scratch array per call
        return buf.sum()

    def caller(n):
        return scratch(n)

    assert allocations(numba.njit(caller), "int64(int64)")
