"""Convert a MaskablePPO model file (``.zip``) into the numpy pair the ``ppo`` agent plays.

Example (the commands behind the shipped files)::

    python -m concordia_env.training.export_policy releases/ppo_imperium.zip \\
        concordia_env/agents/policies/ppo_imperium --map imperium

writes ``OUT_STEM.npz`` (the actor's weights and the observation scaling) and
``OUT_STEM.json`` (the header: architecture, format version, source); see
:mod:`concordia_env.agents.numpy_policy` for the format. Only the actor is kept (the
value network plays no part in choosing a move), so the pair is about half the zip.

The model must be a ``MaskablePPO`` with a ``Box`` observation, the
:class:`~concordia_env.training.nets.ObservationScaler` features extractor and a
Linear/activation policy MLP (what ``train_ppo.py`` trains). The zip is loaded without
unpickling anything from it: the spaces are built from this package's constants, the
``policy_kwargs`` are rebuilt from the zip's readable JSON (including files that name the
features extractor by its old path ``agents.nets.ObservationScaler``), and the other
pickled entries, which inference never uses, are replaced by ``None``. The export is then
checked: the numpy logits must match torch's on a batch of observations.

Needs the ``train`` extra (torch, stable-baselines3, sb3-contrib). Bad input (a missing,
foreign or incompatible file) is one ``error:`` line and exit status 2.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path
from typing import Any

import numpy as np

from concordia_env import encoding
from concordia_env._internal.extras import requires
from concordia_env.agents import policy as P
from concordia_env.agents.numpy_policy import STORAGE_DTYPES, NumpyPolicy
from concordia_env.data import MAP_NAMES

#: largest difference allowed between numpy's and torch's log-probabilities in the export check
TOLERANCE = 1e-4


def load_model(path: str | Path) -> Any:
    """The MaskablePPO model in ``path``, on the CPU, loaded without unpickling anything from
    the zip. ``ValueError`` naming the file for anything but a MaskablePPO with a Box observation."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    data = P.read_model_data(path)
    algo = P._algorithm_from_data(data, path)
    if algo != "maskableppo":
        found = P.ALGORITHMS[algo][1] if algo else "a model of an unknown policy class"
        raise ValueError(f"{path}: export needs a MaskablePPO model (sb3-contrib), this is {found}")
    observation_space, action_space = P.model_spaces(data, str(path))
    if type(observation_space).__name__ != "Box":
        raise ValueError(f"{path}: export needs a Box observation space (the ObservationScaler features "
                         f"extractor), this model takes a Dict")
    P._torch()  # the thread setting; an ImportError names the extra to install
    with requires("train", "exporting a stable-baselines3 model"):
        from sb3_contrib import MaskablePPO
        from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    # every pickled entry is replaced: those inference needs by objects built here, the rest by None
    custom: dict[str, Any] = {k: None for k, v in data.items() if isinstance(v, dict) and ":serialized:" in v}
    custom.update(P.inference_objects())
    custom.update(policy_class=MaskableActorCriticPolicy, policy_kwargs=P.rebuild_policy_kwargs(data, str(path)),
                  observation_space=observation_space, action_space=action_space)
    try:
        model = MaskablePPO.load(path, device="cpu", custom_objects=custom)
    except Exception as exc:  # noqa: BLE001 - sb3 raises many kinds; the caller wants one with the file
        raise ValueError(f"{path}: cannot load as a MaskablePPO model: {type(exc).__name__}: {exc}") from None
    model.policy.set_training_mode(False)
    return model


def check_export(model: Any, policy: NumpyPolicy, where: str, n: int = 32, seed: int = 0) -> float:
    """Largest difference between ``policy``'s and the torch model's action log-probabilities on
    ``n`` random observations within the observation bounds; ``ValueError`` above :data:`TOLERANCE`."""
    with requires("train", "checking an exported policy against its torch model"):
        import torch

    rng = np.random.default_rng(seed)
    high = np.minimum(model.observation_space.high, 30.0)  # unbounded features: coins and VP of a game
    obs = (rng.random((n, encoding.OBSERVATION_SIZE)) * (high + 1)).astype(np.int64).astype(np.float32)
    obs[0] = 0.0
    with torch.no_grad():
        dist = model.policy.get_distribution(model.policy.obs_to_tensor(obs)[0])
        expected = dist.distribution.logits.cpu().numpy().astype(np.float64)  # log-probabilities
    logits = policy.logits(obs).astype(np.float64)
    mine = logits - logits.max(1, keepdims=True)
    mine -= np.log(np.exp(mine).sum(1, keepdims=True))
    worst = float(np.abs(mine - expected).max())
    if not worst <= TOLERANCE:
        raise ValueError(f"{where}: the numpy export differs from the torch model by {worst:.3g} in "
                         f"log-probability (tolerance {TOLERANCE})")
    return worst


def export_model(model: Any, out_stem: str | Path, map_name: str | None = None, source: Path | None = None,
                 dtype: str = "float32") -> tuple[Path, Path]:
    """Write the actor of a loaded MaskablePPO ``model`` as ``OUT_STEM.npz`` + ``.json`` (checked
    against torch first); ``source`` is the zip it came from, named in the header."""
    if map_name is not None and map_name not in MAP_NAMES:
        raise ValueError(f"unknown map {map_name!r}; choose one of {list(MAP_NAMES)}")
    metadata: dict[str, Any] = {"algorithm": type(model).__name__, "num_timesteps": int(model.num_timesteps),
                                "exported_by": "concordia_env.training.export_policy"}
    if source is not None:
        metadata["source"] = {"file": Path(source).name,
                              "sha256": hashlib.sha256(Path(source).read_bytes()).hexdigest()}
    stem = Path(out_stem)
    name = stem.stem if stem.suffix in (".npz", ".json") else stem.name
    try:
        policy = NumpyPolicy.from_policy(model.policy, name=name, map_name=map_name, metadata=metadata)
    except ValueError as exc:  # a network this format cannot hold: name the file it came from
        raise ValueError(f"{source or stem}: {exc}") from None
    if dtype == "float32":  # float16 storage rounds the weights: a tolerance check would not hold
        check_export(model, policy, str(source or stem))
    return policy.save(out_stem, dtype=dtype)


def export(model_zip: str | Path, out_stem: str | Path, map_name: str | None = None,
           dtype: str = "float32") -> tuple[Path, Path]:
    """Convert ``model_zip`` into ``OUT_STEM.npz`` + ``OUT_STEM.json``; returns both paths."""
    model = load_model(model_zip)
    return export_model(model, out_stem, map_name=map_name, source=Path(model_zip), dtype=dtype)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m concordia_env.training.export_policy",
                                description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("model", type=Path, help="MaskablePPO model file (.zip), e.g. train_ppo's policy.zip")
    p.add_argument("out_stem", type=Path, help="output path without suffix: OUT_STEM.npz and OUT_STEM.json")
    p.add_argument("--map", choices=MAP_NAMES, default=None,
                   help="map the policy was trained on, recorded in the header (the ppo agent checks it)")
    p.add_argument("--dtype", choices=STORAGE_DTYPES, default="float32",
                   help="storage of the weights (float16 halves the file; play is float32 either way)")
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.model.is_file():
        parser.error(f"{args.model}: no such file")
    try:
        npz, header = export(args.model, args.out_stem, map_name=args.map, dtype=args.dtype)
    except (ValueError, OSError, ImportError) as exc:
        parser.error(str(exc))
    print(f"wrote {npz} ({npz.stat().st_size:,} bytes) and {header}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
