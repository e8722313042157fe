"""One BLAS thread while games are played in this process (concordia_env._internal.threads): the count is
set and restored, the harnesses use it, and the moves do not depend on it."""

from __future__ import annotations

from typing import Any

import pytest

from concordia_env._internal.threads import blas_threads, one_blas_thread
from concordia_env.arena import evaluation, strength
from concordia_env.arena.strength import chunks as strength_chunks


@pytest.fixture
def two_threads() -> Any:
    """BLAS at 2 threads for the test, restored after."""
    before = blas_threads(2)
    if before is None:
        pytest.skip("numpy's BLAS thread count cannot be read here (no OpenBLAS found)")
    yield
    blas_threads(before)


def test_one_blas_thread_sets_one_and_restores(two_threads: None) -> None:
    with one_blas_thread():
        assert blas_threads(None) == 1
    assert blas_threads(None) == 2


def test_one_blas_thread_restores_after_an_error(two_threads: None) -> None:
    with pytest.raises(RuntimeError), one_blas_thread():
        raise RuntimeError("boom")
    assert blas_threads(None) == 2


def _recording(play: Any, seen: list[int | None]) -> Any:
    def wrapped(task: Any) -> Any:
        seen.append(blas_threads(None))
        return play(task)
    return wrapped


def test_evaluation_in_process_plays_with_one_thread(two_threads: None, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int | None] = []
    monkeypatch.setattr(evaluation, "_play", _recording(evaluation._play, seen))
    evaluation.run_evaluation("italia", ["random", "heuristic"], 1, seed=3, progress=False)
    assert seen == [1, 1]
    assert blas_threads(None) == 2


def test_strength_single_worker_plays_with_one_thread(two_threads: None, monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Any) -> None:
    seen: list[int | None] = []
    monkeypatch.setattr(strength_chunks, "_play", _recording(strength_chunks._play, seen))
    config = strength.parse_config({
        "format": strength.CONFIG_FORMAT, "version": strength.FORMAT_VERSION,
        "agents": [{"name": "heuristic", "spec": "heuristic"}, {"name": "random", "spec": "random"}],
        "settings": [{"id": "italia2", "map": "italia", "players": 2, "deals": 1, "seed": 0,
                      "agents": ["heuristic", "random"]}],
    }, "test config")
    strength.run_lines(config, tmp_path, workers=1, progress=False)
    assert seen == [1, 1]
    assert blas_threads(None) == 2


def test_the_net_moves_do_not_depend_on_the_thread_count(two_threads: None) -> None:
    """The products are split by rows and columns, never along the summed dimension: same games."""
    task = ("italia", 2, 5, ("net", "heuristic"), False, 2000)
    with_two = evaluation._play(task)
    with one_blas_thread():
        with_one = evaluation._play(task)
    for key in ("decisions", "act_seconds"):
        with_two.pop(key), with_one.pop(key)
    assert with_one == with_two
