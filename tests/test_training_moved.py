"""PPO and value learning moved into packages (``training/ppo/``, ``training/value/``): the old module
paths still work for one release, re-exporting the same objects and running the same ``main`` under
their own command names; the new commands name themselves."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

pytestmark = pytest.mark.filterwarnings("ignore::concordia_env._internal.moved.MovedWarning")

#: old module -> (new module of its main, names that must be the very same objects there)
MOVED = {
    "train_ppo": ("ppo.command", {"ppo.checkpoints": ["checkpoint_step", "CheckpointError", "TEMPORARY_NAME",
                                                      "drop_partial_optimizer_state", "remove_stale_temporaries"],
                                  "ppo.settings": ["positive_int", "int_list"],
                                  "ppo.callbacks": ["rollout_line", "format_duration"],
                                  "ppo.loop": ["new_model", "Interrupted"]}),
    "ppo_cuda": ("ppo.cuda", {"ppo.cuda": ["Config", "seat_advantages", "train"]}),
    "train_rllib": ("ppo.rllib", {"ppo.rllib": ["INSTALL_HINT", "progress_row", "train"]}),
    "value_data": ("value.data", {"value.data": ["DataConfig", "load_shards", "read_shard_arrays", "generate"]}),
    "value_train": ("value.train", {"value.model": ["ValueModel", "losses", "mlp_trunk", "torch_values"],
                                    "value.targets": ["bootstrap_targets"],
                                    "value.checkpoint": ["load_checkpoint", "load_torch_checkpoint", "plain"]}),
}
NEEDS_TORCH = {"value_train"}


def training(name: str):
    return importlib.import_module(f"concordia_env.training.{name}")


@pytest.mark.parametrize("old", sorted(MOVED))
def test_the_old_module_re_exports_the_moved_objects(old):
    if old in NEEDS_TORCH:
        pytest.importorskip("torch")
    shim = training(old)
    for new, names in MOVED[old][1].items():
        module = training(new)
        for name in names:
            assert getattr(shim, name) is getattr(module, name), f"{old}.{name}"
    assert shim.PROG == f"python -m concordia_env.training.{old}"


@pytest.mark.parametrize("old", sorted(MOVED))
def test_old_and_new_commands_name_themselves(old, capsys):
    if old in NEEDS_TORCH:
        pytest.importorskip("torch")
    new = training(MOVED[old][0])
    for main, prog in ((training(old).main, f"python -m concordia_env.training.{old}"),
                       (new.main, new.PROG)):
        with pytest.raises(SystemExit) as exc:
            main(["--help"])
        assert exc.value.code == 0
        assert capsys.readouterr().out.startswith(f"usage: {prog} "), prog


def test_the_ppo_package_runs_as_a_command():
    proc = subprocess.run([sys.executable, "-m", "concordia_env.training.ppo", "--map", "rome"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].startswith("python -m concordia_env.training.ppo: error: argument "
                                                           "--map: invalid choice: 'rome'")
