"""The recipes for other RL libraries (examples/recipes/, docs/recipes.md), each run with its tiny defaults.

What each asserts is the point of its recipe: TorchRL and Tianshou pay every seat its final reward on
the step that ends a game; the CleanRL-style loop never hands the sampler an all-zero mask (and
gymnasium's default autoreset would); PettingZoo's SB3 tutorial pattern returns one seat's final
reward per game where the single-learner env returns all of the learner's."""

from __future__ import annotations

import importlib.util
import multiprocessing
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("stable_baselines3")
pytest.importorskip("sb3_contrib")

RECIPES = Path(__file__).resolve().parents[1] / "examples" / "recipes"


def load(name: str) -> ModuleType:
    """A recipe script as a module (the folder is not a package: the scripts are run by path)."""
    spec = importlib.util.spec_from_file_location(f"recipe_{name}", RECIPES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(autouse=True)
def restore_global_state() -> Iterator[None]:
    """The recipes set torch's thread count and seed numpy's global generator, and importing torchrl
    sets multiprocessing's start method to "spawn" for the whole process; other tests in this
    process get all three back as they were (a tournament's workers would otherwise be spawned,
    without what a test patched into this process)."""
    threads, np_state = torch.get_num_threads(), np.random.get_state()
    start_method = multiprocessing.get_start_method(allow_none=True)
    yield
    torch.set_num_threads(threads)
    np.random.set_state(np_state)
    multiprocessing.set_start_method(start_method, force=True)


def test_torchrl_recipe_pays_every_seat_its_final_reward(capsys):
    pytest.importorskip("torchrl")
    figures = load("torchrl_pettingzoo").main([])
    assert figures["frames"] == 2000 and figures["games_finished"] >= 1
    assert figures["every_seat_got_its_final_reward"] is True
    for rewards in figures["final_rewards"]:  # the "win" reward of 2 players, in the same step
        assert sorted(rewards) == [-1.0, 1.0]
    assert np.isfinite(figures["last_loss"])
    assert "every seat got its final reward on the last step: True" in capsys.readouterr().out


def test_tianshou_recipe_marl_has_every_seat_reward_in_the_last_step(capsys):
    pytest.importorskip("tianshou")
    figures = load("tianshou_pettingzoo").main([])
    assert figures["steps"] == 2400 and figures["games_finished"] >= 1
    assert figures["every_seat_final_reward_in_the_last_step"] is True
    assert 0 <= figures["credited_1_step"] <= figures["credited_n_step"] <= figures["games_finished"]
    assert np.isfinite(figures["last_loss"])
    assert "every seat's final reward in the last step's reward vector: True" in capsys.readouterr().out


def test_tianshou_recipe_single_learner_credits_every_final_reward():
    pytest.importorskip("tianshou")
    figures = load("tianshou_pettingzoo").main(["--setup", "single", "--steps", "1600"])
    assert figures["games_finished"] >= 1
    assert figures["credited_1_step"] == figures["credited_n_step"] == figures["games_finished"]


def test_cleanrl_recipe_samples_only_from_legal_masks_across_autoresets(capsys):
    figures = load("cleanrl_ppo").main([])
    assert figures["steps"] == figures["masks_checked"] == 1024 and figures["updates"] == 4
    assert figures["episodes"] >= 1  # masks were read right after an autoreset, and none was empty
    assert figures["all_zero_masks"] == 0 and np.isfinite(figures["last_loss"])
    assert "all-zero masks: 0 (autoreset_mode=SAME_STEP)" in capsys.readouterr().out


def test_gymnasium_default_autoreset_would_hand_the_sampler_an_all_zero_mask():
    """Why the recipe sets SAME_STEP: with NEXT_STEP the step that ends an episode leaves the env
    unreset, and its mask is all zero until the next step (whose action is ignored)."""
    import gymnasium

    recipe = load("cleanrl_ppo")
    envs = gymnasium.vector.SyncVectorEnv([lambda: gymnasium.make("concordia/Italia-v0", num_players=2)])
    assert envs.autoreset_mode == gymnasium.vector.AutoresetMode.NEXT_STEP  # gymnasium 1.x's default
    envs.reset(seed=0)
    rng = np.random.default_rng(0)
    ended = False
    while not ended:
        mask = recipe.legal_masks(envs).numpy()[0]
        _, _, terminated, truncated, _ = envs.step(np.array([rng.choice(np.flatnonzero(mask))]))
        ended = bool(terminated[0] or truncated[0])
    with pytest.raises(AssertionError, match=r"all-zero action mask in envs \[0\]"):
        recipe.legal_masks(envs)


def test_sb3_tutorial_pattern_returns_one_seat_in_players_and_the_single_learner_all(capsys):
    figures = load("sb3_tutorial_pattern").main([])
    every, single = figures["tutorial_pattern"], figures["single_learner"]
    assert every["games"] == single["games"] == 10
    assert every["seats"] == 0.5 and every["abs"] == 0.5  # 2 players: the last mover's +-1 of +1 and -1
    assert single["seats"] == 1.0 and single["abs"] == 1.0
    out = capsys.readouterr().out
    assert "tutorial pattern: the learner saw 50% of the final rewards paid by seat" in out
    assert "single-learner env: the learner saw 100% by seat, 100% by absolute value" in out


def test_sb3_tutorial_pattern_with_three_players_returns_one_seat_in_three():
    figures = load("sb3_tutorial_pattern").main(["--players", "3", "--games", "2", "--steps", "64"])
    assert figures["tutorial_pattern"]["seats"] == pytest.approx(1 / 3)
    assert figures["single_learner"]["seats"] == 1.0


@pytest.mark.parametrize("name", ["torchrl_pettingzoo", "tianshou_pettingzoo", "cleanrl_ppo", "sb3_tutorial_pattern"])
def test_recipes_refuse_a_player_count_the_map_lacks(name, capsys):
    pytest.importorskip({"torchrl_pettingzoo": "torchrl", "tianshou_pettingzoo": "tianshou"}.get(name, "torch"))
    with pytest.raises(SystemExit) as exit_info:
        load(name).main(["--players", "6"])
    assert exit_info.value.code == 2
    assert "--players 6: italia is played by [2, 3, 4] players" in capsys.readouterr().err


def test_tianshou_seat_policies_miss_the_training_flag_and_the_recipe_passes_it_on():
    """Tianshou 2.0.1's MultiAgentPolicy keeps ``is_within_training_step`` to itself, so a seat's DQN
    would collect with ``eps_inference``; the recipe's ``within_training_step`` sets it on every seat."""
    tianshou = pytest.importorskip("tianshou")
    from tianshou.utils.torch_utils import policy_within_training_step

    recipe = load("tianshou_pettingzoo")
    algorithm, learner, _ = recipe.make_marl(recipe.parse_args([]))
    with policy_within_training_step(algorithm.policy):
        assert algorithm.policy.is_within_training_step
        seat_flag = learner.policy.is_within_training_step  # False with tianshou 2.0.1
    if tianshou.__version__ == "2.0.1":
        assert seat_flag is False
    with recipe.within_training_step(algorithm):
        assert all(policy.is_within_training_step for policy in algorithm.policy.policies.values())
    assert not learner.policy.is_within_training_step  # restored on leaving


def test_recipe_excerpts_in_the_docs_are_in_the_scripts():
    """docs/recipes.md quotes the scripts in ``py`` blocks; each quoted line must still be there."""
    import re

    page = (RECIPES.parents[1] / "docs" / "recipes.md").read_text(encoding="utf-8")
    sources = [path.read_text(encoding="utf-8") for path in [*sorted(RECIPES.glob("*.py")), Path(__file__)]]
    lines = {line.strip() for source in sources for line in source.splitlines()}
    excerpts = re.findall(r"^ *```py\n(.*?)^ *```", page, flags=re.S | re.M)
    assert len(excerpts) >= 4
    quoted = [line.strip() for block in excerpts for line in block.splitlines() if line.strip()]
    missing = [line for line in quoted if line not in lines]
    assert not missing, f"docs/recipes.md quotes lines the recipes no longer have: {missing}"
