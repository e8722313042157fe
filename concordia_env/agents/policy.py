"""Agents that play a trained policy: ``ppo`` (the released ones, numpy only) and ``policy`` (any file).

:func:`released_policy` (spec ``ppo``) plays the policy released with the package for
the map being played: ``agents/policies/ppo_{map}.npz`` with its header
``ppo_{map}.json``, plain numpy weights of the actor network (see
:mod:`concordia_env.agents.numpy_policy`). Playing it needs numpy only: importing this
module and playing ``ppo`` never imports torch, stable-baselines3 or sb3-contrib.

:class:`PolicyAgent` (spec ``policy:path=FILE``) plays either such a numpy pair
(``FILE.npz``, no torch either) or a model file written by a stable-baselines3 /
sb3-contrib algorithm's ``.save()`` (a ``.zip``; needs the ``train`` extra). The ``.zip``
is read by :mod:`concordia_env.integrations.sb3_files` (:class:`LoadedPolicy`), which
describes the observation and action spaces such a model must have, how the algorithm
class is detected and how torch's threads are set; its names are re-exported here.

.. warning::
   A stable-baselines3 ``.zip`` stores Python objects with pickle (the policy class,
   its keyword arguments, schedules), and loading it runs code from the file. Play
   only model files you trust. The numpy pair of the released policies holds no
   Python objects and is read with ``allow_pickle=False``.

Observation format
------------------
Exactly what the PettingZoo env hands the deciding seat (see
:mod:`concordia_env.encoding`): a flat float32 vector of
``concordia_env.encoding.OBSERVATION_SIZE`` raw values, seen from the deciding seat. The
vector has the same shape on every map and player count, so one policy plays any seat of
any game; the released files are per map only because the boards differ.

Legality
--------
The agent never returns an illegal action: stable-baselines3 models choose as
:meth:`LoadedPolicy.choose` says (only among the legal actions); numpy policies take the
legal action of highest logit, or sample from the softmax of the legal actions' logits.

torch and stable-baselines3 are imported lazily, at the first load of a ``.zip``, so
``import concordia_env.agents`` (and ``make_agent("random")`` or ``"ppo"``) stays free of
them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from concordia_env import encoding
from concordia_env.data import MAP_NAMES
from concordia_env.state import GameState

# the stable-baselines3 reader, re-exported: training and tests import these names from here
from ..integrations.sb3_files import (  # noqa: F401 - re-exports
    ALGORITHMS,
    MOVED_CLASSES,
    TRAIN_EXTRA_INSTALL,
    LoadedPolicy,
    _algorithm_from_data,
    _torch,
    check_spaces,
    detect_algorithm,
    inference_objects,
    model_spaces,
    moved_class_objects,
    package_spaces,
    read_model_data,
    rebuild_policy_kwargs,
    recorded_spaces,
)
from .base import Agent, check_mask, sample_softmax
from .numpy_policy import NumpyPolicy, check_trained_for, policy_files

#: where released policies live: ``ppo_{map}.npz`` + ``.json`` (package data, see pyproject)
POLICY_DIR = Path(__file__).resolve().parent / "policies"


def _as_bool(value: Any, what: str) -> bool:
    """Spec strings give ``deterministic=0`` / ``=false``; accept those as well as real bools."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "yes", "no"):
        return value.strip().lower() in ("true", "yes")
    raise ValueError(f"{what} must be true/false (or 1/0), got {value!r}")


def _resolve_path(path: str | os.PathLike) -> Path:
    """The model file; like stable-baselines3, ``model`` also finds ``model.zip`` (and, failing
    that, a numpy pair ``model.npz``)."""
    # spec strings turn an all-digit file name into an int: take any value as its text
    p = Path(path if isinstance(path, (str, os.PathLike)) else str(path)).expanduser()
    if not p.exists() and p.suffix not in (".zip", ".npz"):
        for suffix in (".zip", ".npz"):
            if p.with_name(p.name + suffix).exists():
                p = p.with_name(p.name + suffix)
                break
    if not p.exists():
        raise FileNotFoundError(f"policy model file not found: {p}")
    if not p.is_file():
        raise ValueError(f"policy model path is not a file: {p}")
    return p.resolve()


class LoadedNumpyPolicy:
    """A numpy policy pair (``.npz`` + ``.json``) behind :class:`LoadedPolicy`'s interface; no torch.

    Deterministic play is the legal action of highest logit; otherwise one drawn from the
    softmax of the legal actions' logits with the agent's generator."""

    algorithm = "numpy"
    maskable = True
    q_values = False

    def __init__(self, path: Path) -> None:
        self.model = NumpyPolicy.load(path)
        self.path = policy_files(path)[0]
        self.observation_size = encoding.OBSERVATION_SIZE

    def scores(self, observation: np.ndarray) -> np.ndarray:
        """Logits of every action, float64."""
        return self.model.logits(self._observation(observation)).astype(np.float64)

    def _observation(self, observation: np.ndarray) -> np.ndarray:
        """``observation`` as float32; ``ValueError`` naming the policy for a wrong shape."""
        obs = np.asarray(observation, dtype=np.float32)
        if obs.shape != (self.observation_size,):
            raise ValueError(f"observation has shape {obs.shape}, expected ({self.observation_size},) "
                             f"for the policy {self.path}")
        return obs

    def choose(self, observation: np.ndarray, action_mask: np.ndarray, deterministic: bool,
               rng: np.random.Generator) -> int:
        """A legal action: the legal one of highest logit, or (not deterministic) one drawn from the
        softmax of the legal actions' logits with ``rng``."""
        legal = check_mask(action_mask)
        obs = self._observation(observation)
        if legal.size == 1:  # forced move: no need to ask the network
            return int(legal[0])
        s = self.model.logits(obs)[legal].astype(np.float64)
        if deterministic:
            return int(legal[int(np.argmax(s))])
        return sample_softmax(legal, s, rng)


_CACHE: dict[tuple, LoadedPolicy | LoadedNumpyPolicy] = {}


def _file_key(path: Path) -> tuple:
    """What identifies one version of a file: its path, modification time and size."""
    st = path.stat()
    return str(path), st.st_mtime_ns, st.st_size


def load_policy(path: str | os.PathLike, device: str = "cpu", algo: str | None = None) -> LoadedPolicy:
    """The model at ``path``, loaded and validated once per process (per file version,
    device and algo: a file rewritten by training is loaded afresh)."""
    p = _resolve_path(path)
    key = (*_file_key(p), str(device), algo.lower() if algo else None,
           encoding.OBSERVATION_SIZE)  # the size it was validated against
    if key not in _CACHE:
        _CACHE[key] = LoadedPolicy(p, device=str(device), algo=algo)
    return _CACHE[key]  # type: ignore[return-value]


def load_numpy_policy(path: str | os.PathLike) -> LoadedNumpyPolicy:
    """The numpy pair at ``path`` (stem, ``.npz`` or ``.json``), loaded and validated once per
    process and per version of both files. ``FileNotFoundError`` / ``ValueError`` name the file."""
    npz, header = (p.resolve() for p in policy_files(path))
    if not (npz.is_file() and header.is_file()):
        NumpyPolicy.load(npz)  # raises FileNotFoundError naming the missing file
    key = ("numpy", *_file_key(npz), *_file_key(header), encoding.OBSERVATION_SIZE)
    if key not in _CACHE:
        _CACHE[key] = LoadedNumpyPolicy(npz)
    return _CACHE[key]  # type: ignore[return-value]


def clear_cache() -> None:
    """Forget every loaded model (frees their memory)."""
    _CACHE.clear()


class PolicyAgent(Agent):
    """Plays a saved policy file (spec ``policy:path=FILE``).

    Args:
        path: a ``.zip`` written by a stable-baselines3 algorithm's ``.save()`` (``.zip`` may be
            left off; needs torch, and runs code from the file: trusted files only), or the
            ``.npz`` of a numpy policy pair (see :mod:`concordia_env.agents.numpy_policy`).
        seed: seeds the sampling of ``deterministic=False``.
        deterministic: play the model's most likely (highest-valued) legal action; False
            samples from its distribution restricted to the legal actions.
        device: torch device for the network ("cpu": tournament workers have no GPU).
        algo: algorithm class name (MaskablePPO, PPO, A2C, TRPO, DQN, QRDQN) to load the
            file with, instead of detecting it.

    The model is loaded (and checked) when the agent is built: ``FileNotFoundError`` for a
    missing file, ``ValueError`` naming expected and found shapes for a model of another
    observation / action space. It plays any seat: the observation is always seen from the
    deciding seat. See the module doc for the observation format.
    """

    name = "policy"

    def __init__(self, path: str | os.PathLike, seed: int = 0, deterministic: bool = True,
                 device: str = "cpu", algo: str | None = None) -> None:
        self.deterministic = _as_bool(deterministic, "deterministic")
        p = _resolve_path(path)
        if p.suffix in (".npz", ".json"):
            if algo is not None:
                raise ValueError(f"algo={algo!r} applies to stable-baselines3 .zip files, not to {p}")
            self.policy: LoadedPolicy | LoadedNumpyPolicy = load_numpy_policy(p)
        else:
            self.policy = load_policy(p, device=device, algo=algo)
        self.reset(seed)

    @property
    def model(self) -> Any:
        """The stable-baselines3 model, or the :class:`NumpyPolicy` (shared with other agents
        playing the same file)."""
        return self.policy.model

    @property
    def path(self) -> Path:
        """The file the agent plays (a ``.zip``, or the ``.npz`` of a numpy pair)."""
        return self.policy.path

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: GameState | None = None) -> int:
        """The policy's legal action; a numpy pair trained for another map or player count is refused."""
        if isinstance(self.policy, LoadedNumpyPolicy):
            # a numpy pair records the map (and maybe the player counts) it was trained for: refuse
            # another game rather than play it silently with features that mean something else
            check_mask(action_mask)
            obs = np.asarray(observation)
            if obs.shape == (self.policy.observation_size,):
                players = int(np.count_nonzero(obs[encoding.OBSERVATION_LAYOUT["seat_present"]]))
                check_trained_for(self.policy.model, observed_map(obs), players)
        return self.policy.choose(observation, action_mask, self.deterministic, self.rng)


def released_policy_path(map_name: str) -> Path:
    """Where the released policy for ``map_name`` lives, its ``.npz`` (whether or not it exists;
    the header is the ``.json`` beside it)."""
    if map_name not in MAP_NAMES:
        raise ValueError(f"unknown map {map_name!r}; choose one of {list(MAP_NAMES)}")
    return POLICY_DIR / f"ppo_{map_name}.npz"


def observed_map(observation: np.ndarray) -> str:
    """The map named by the observation's ``map`` one-hot; ``ValueError`` if it names none."""
    block = np.asarray(observation)[encoding.OBSERVATION_LAYOUT["map"]]
    hot = np.flatnonzero(block == 1)
    if hot.size != 1 or np.count_nonzero(block) != 1:
        raise ValueError(f"observation's map one-hot {block.tolist()} names no single map of {list(MAP_NAMES)}")
    return MAP_NAMES[int(hot[0])]


def missing_release_message(map_name: str, path: Path) -> str:
    """What to do when the released policy of ``map_name`` is not at ``path``."""
    return (f"no released policy for map {map_name!r} at {path}; make one with "
            f"`python -m concordia_env.training.ppo --map {map_name} ... --release ppo_{map_name}.zip` "
            f"(it writes ppo_{map_name}.npz and ppo_{map_name}.json beside the zip) or "
            f"`python -m concordia_env.training.export_policy MODEL.zip {path.with_suffix('')} "
            f"--map {map_name}`, or play a model file with policy:path=FILE")


class ReleasedPolicyAgent(Agent):
    """Plays the policy released with the package for the map of the game (spec ``ppo``).

    The files, ``agents/policies/ppo_{map}.npz`` and ``.json``, are chosen at the first move
    of a game on each map, from the map one-hot of the observation (so the agent needs no
    setup arguments and can play games on either map); ``map_name`` pins one map's policy
    whatever the game. A missing file gives ``FileNotFoundError`` at that first move, saying
    how to make one. Policies are loaded once per process, with numpy only.

    Args:
        seed: seeds the sampling of ``deterministic=False``.
        map_name: play this map's policy whatever the game's map.
        deterministic: the legal action of highest logit; False samples from the softmax of
            the legal actions' logits.
        device: ignored (the numpy policy runs on the CPU); accepted so older specs still parse.
    """

    name = "ppo"

    def __init__(self, seed: int = 0, map_name: str | None = None, deterministic: bool = True,
                 device: str = "cpu") -> None:
        if map_name is not None and map_name not in MAP_NAMES:
            raise ValueError(f"unknown map {map_name!r}; choose one of {list(MAP_NAMES)}")
        self.map_name = map_name
        self.deterministic = _as_bool(deterministic, "deterministic")
        self.device = device
        self.reset(seed)

    def policy_for(self, map_name: str) -> LoadedNumpyPolicy:
        """The released policy of ``map_name`` (loaded on first use, then cached)."""
        path = released_policy_path(map_name)
        if not path.is_file():
            raise FileNotFoundError(missing_release_message(map_name, path))
        policy = load_numpy_policy(path)
        trained_on = policy.model.map_name
        if trained_on is not None and trained_on != map_name:
            raise ValueError(f"{path.with_suffix('.json')}: the released policy for {map_name!r} says it was "
                             f"trained on {trained_on!r}")
        return policy

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: GameState | None = None) -> int:
        """The legal action of the released policy of the game's (or the pinned) map."""
        check_mask(action_mask)  # the usual error for a seat that is not deciding, before any loading
        policy = self.policy_for(self.map_name or observed_map(observation))
        return policy.choose(observation, action_mask, self.deterministic, self.rng)


def released_policy(seed: int = 0, map_name: str | None = None, **kw: Any) -> ReleasedPolicyAgent:
    """The ``ppo`` agent: the released policy of the game's map (see :class:`ReleasedPolicyAgent`)."""
    return ReleasedPolicyAgent(seed=seed, map_name=map_name, **kw)
