"""Old import paths and commands, kept for one release, say where their code went."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from concordia_env._internal.moved import MovedWarning

#: old module -> where its code is now
MOVED = {
    "concordia_env.render": "concordia_env.display.render",
    "concordia_env.menu": "concordia_env.display.menu",
    "concordia_env.picture": "concordia_env.display.picture",
    "concordia_env.drawing": "concordia_env.display.drawing",
    "concordia_env.viewer": "concordia_env.display.viewer",
    "concordia_env.jit": "concordia_env._internal.jit",
    "concordia_env.files": "concordia_env._internal.files",
    "concordia_env.threads": "concordia_env._internal.threads",
    "concordia_env.shorten": "concordia_env._internal.shorten",
    "concordia_env.extras": "concordia_env._internal.extras",
    "concordia_env.training.train_ppo": "concordia_env.training.ppo",
    "concordia_env.training.ppo_cuda": "concordia_env.training.ppo.cuda",
    "concordia_env.training.train_rllib": "concordia_env.training.ppo.rllib",
    "concordia_env.training.value_data": "concordia_env.training.value.data",
    "concordia_env.training.value_train": "concordia_env.training.value.train",
    "concordia_env.training.evaluation": "concordia_env.arena.evaluation",
    "concordia_env.training.strength": "concordia_env.arena.strength",
    "concordia_env.server.command": "concordia_env.cli.serve",
    "concordia_env.cuda.newgame": "concordia_env.rules.setup",
}


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_import_path_warns_and_names_the_new_one(old):
    with pytest.warns(MovedWarning):  # (the first import in this process, or an earlier one's module)
        module = importlib.import_module(old)
        importlib.reload(module)
    with pytest.warns(MovedWarning, match=f"^{old} has moved to {MOVED[old]}; the old name goes"):
        importlib.reload(module)
    importlib.import_module(MOVED[old])  # the new path is there


def test_the_warning_points_at_the_importing_line(tmp_path):
    script = tmp_path / "old.py"
    script.write_text("import concordia_env.render\n")
    done = subprocess.run([sys.executable, "-W", "always::DeprecationWarning", str(script)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"{script}:1: MovedWarning: concordia_env.render has moved to concordia_env.display.render" in done.stderr


def test_an_old_command_says_its_new_name_first_and_runs():
    done = subprocess.run([sys.executable, "-m", "concordia_env.training.value_data", "--help"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0
    assert done.stderr.splitlines()[0] == ("note: python -m concordia_env.training.value_data is now "
                                           "python -m concordia_env.training.value.data; the old name goes in "
                                           "the next release")
    assert done.stdout.startswith("usage: python -m concordia_env.training.value_data")
