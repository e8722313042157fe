"""Agents that play a trained stable-baselines3 / sb3-contrib model: ``policy`` and ``ppo``.

:class:`PolicyAgent` plays a model file written by an algorithm's ``.save()``;
:func:`released_policy` (spec ``ppo``) plays the policy released with the
package for the map being played, ``agents/policies/ppo_{map}.zip``.

Observation format the model must expect
----------------------------------------
Exactly what the PettingZoo env hands the deciding seat (see
:mod:`concordia_env.encoding`): a flat float32 vector of
``concordia_env.encoding.OBSERVATION_SIZE`` raw values (counts and flags, not
normalised), seen from the deciding seat (its own rows first, then the others
in turn order). The model's observation space may be either

* a ``Box`` of shape ``(OBSERVATION_SIZE,)`` (the vector alone; the legal-action
  mask then reaches the model only through ``action_masks``), or
* a ``Dict`` with an ``"observation"`` Box of that shape and, optionally, an
  ``"action_mask"`` Box of shape ``(NUM_ACTIONS,)`` (the env's own dict).

The action space must be ``Discrete(NUM_ACTIONS)`` (402). Because every seat
sees the game from its own seat and the vector has the same shape on every map
and player count, one policy plays any seat of any game; the released files
are per map only because the boards differ. Observation normalisation kept
outside the model (a ``VecNormalize`` wrapper) is *not* in the model file, so
a policy must have been trained on raw observations or normalise inside its
network.

Which algorithm
---------------
The algorithm class is detected from the module of the policy class recorded
in the zip's ``data`` (read as JSON, without unpickling anything):
sb3-contrib's maskable policies -> ``MaskablePPO``; the plain actor-critic
policy -> ``PPO`` (saved data has ``clip_range``), ``TRPO`` (``cg_damping``) or
``A2C``; DQN's policy -> ``DQN``; QR-DQN's -> ``QRDQN``. Recurrent policies are
refused (they need a hidden state the ``act`` interface does not carry). For a
policy class of any other module (a custom class) MaskablePPO is tried, then
PPO. ``algo=NAME`` overrides the detection.

Legality
--------
The agent never returns an illegal action: maskable models predict with the
mask; for the others the agent takes the legal action the model rates highest
(probability for actor-critic models, Q-value for DQN-style ones), and it
samples (``deterministic=False``) only among the legal actions.

Loading a model file unpickles Python objects from it (that is how
stable-baselines3 stores spaces and schedules): load only files you trust.

torch and stable-baselines3 are imported lazily, at the first model load, so
``import agents`` (and ``make_agent("random")``) stays free of them. At that
first import the module sets ``torch.set_num_threads(TORCH_THREADS)`` (1):
tournament workers run one game per process in parallel, and a batch-1 forward
pass of a small MLP gains nothing from threads while N processes x all cores
of threads would oversubscribe the machine. Set ``concordia_env.agents.policy.TORCH_THREADS =
None`` before the first load to leave torch's setting alone.
"""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from concordia_env import encoding
from concordia_env.data import MAP_NAMES
from concordia_env.engine import NUM_ACTIONS
from concordia_env.state import GameState

from .base import Agent, check_mask, sample_softmax

#: what to install for the policy agents and training (torch's CPU build first: no CUDA wheels)
TRAIN_EXTRA_INSTALL = "pip install torch==2.13.0 && pip install -e '.[train]'"

#: torch threads set once, at the first import of torch by this module (None: leave torch alone)
TORCH_THREADS: int | None = 1

#: where released policies live: ``ppo_{map}.zip`` (shipped as package data, see pyproject)
POLICY_DIR = Path(__file__).resolve().parent / "policies"

#: algorithm class name (lower case) -> (module, class); what ``algo=`` accepts
ALGORITHMS: dict[str, tuple[str, str]] = {
    "maskableppo": ("sb3_contrib", "MaskablePPO"),
    "ppo": ("stable_baselines3", "PPO"),
    "a2c": ("stable_baselines3", "A2C"),
    "dqn": ("stable_baselines3", "DQN"),
    "qrdqn": ("sb3_contrib", "QRDQN"),
    "trpo": ("sb3_contrib", "TRPO"),
}

# module of the saved policy class -> algorithm (None: decided from the other saved data)
_POLICY_MODULES: dict[str, str | None] = {
    "sb3_contrib.common.maskable.policies": "maskableppo",
    "stable_baselines3.common.policies": None,  # shared by PPO, A2C and TRPO
    "stable_baselines3.dqn.policies": "dqn",
    "sb3_contrib.qrdqn.policies": "qrdqn",
}
_UNSUPPORTED_MODULES = {
    "sb3_contrib.common.recurrent.policies": "recurrent policies need a hidden state between moves",
}

# Replaced at load: schedules are pickled closures that often fail to unpickle on another
# Python version, and inference never calls them.
_INFERENCE_OBJECTS: dict[str, Any] = {
    "learning_rate": 0.0,
    "lr_schedule": lambda _: 0.0,
    "clip_range": lambda _: 0.0,
    "exploration_schedule": lambda _: 0.0,
}

_torch_configured = False


def _torch() -> Any:
    """torch, imported here only; sets the thread count the first time (see the module doc)."""
    global _torch_configured
    try:
        import torch
    except ImportError as exc:
        raise ImportError(
            f"the policy and ppo agents need torch and stable-baselines3 ({exc}); install the train "
            f"extra: {TRAIN_EXTRA_INSTALL}") from exc

    if not _torch_configured:
        _torch_configured = True
        if TORCH_THREADS is not None:
            torch.set_num_threads(TORCH_THREADS)
    return torch


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
    """The model file; like stable-baselines3, ``model`` also finds ``model.zip``."""
    # spec strings turn an all-digit file name into an int: take any value as its text
    p = Path(path if isinstance(path, (str, os.PathLike)) else str(path)).expanduser()
    if not p.exists() and p.suffix != ".zip" and p.with_name(p.name + ".zip").exists():
        p = p.with_name(p.name + ".zip")
    if not p.exists():
        raise FileNotFoundError(f"policy model file not found: {p}")
    if not p.is_file():
        raise ValueError(f"policy model path is not a file: {p}")
    return p.resolve()


def detect_algorithm(path: str | os.PathLike) -> str | None:
    """Key of :data:`ALGORITHMS` for a saved model, from its zip's ``data`` (no unpickling);
    None for a policy class this module does not know. ``ValueError`` if the file is not a
    stable-baselines3 save or holds a policy kind the agent cannot play."""
    p = Path(path)
    try:
        with zipfile.ZipFile(p) as zf:
            data = json.loads(zf.read("data"))
    except (zipfile.BadZipFile, KeyError, ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"{p} is not a stable-baselines3 model file (a zip written by .save()): {exc}") from None
    policy_class = data.get("policy_class")
    module = policy_class.get("__module__") if isinstance(policy_class, dict) else None
    if module in _UNSUPPORTED_MODULES:
        raise ValueError(f"{p}: cannot play a policy of {module}: {_UNSUPPORTED_MODULES[module]}")
    if module not in _POLICY_MODULES:
        return None
    algo = _POLICY_MODULES[module]
    if algo is None:  # PPO, A2C and TRPO save the same policy class; their hyperparameters differ
        algo = "ppo" if "clip_range" in data else "trpo" if "cg_damping" in data else "a2c"
    return algo


def _algorithm_class(key: str) -> Any:
    import importlib

    module, name = ALGORITHMS[key]
    return getattr(importlib.import_module(module), name)


def check_spaces(observation_space: Any, action_space: Any, where: str = "model") -> None:
    """``ValueError`` naming expected and found shapes unless the spaces are those the
    module doc describes (Box or Dict observation of the current OBSERVATION_SIZE,
    Discrete(NUM_ACTIONS) actions)."""
    from gymnasium import spaces

    size = encoding.OBSERVATION_SIZE  # read now: the layout may grow between releases
    expected = (f"a Box of shape ({size},) or a Dict with an 'observation' Box of shape ({size},) "
                f"[and an 'action_mask' Box of shape ({NUM_ACTIONS},)]")
    if isinstance(observation_space, spaces.Box):
        if tuple(observation_space.shape) != (size,):
            raise ValueError(
                f"{where}: observation space has shape {tuple(observation_space.shape)}, expected ({size},) "
                f"(concordia_env.encoding.OBSERVATION_SIZE); the model was trained on another observation "
                f"layout: retrain it")
    elif isinstance(observation_space, spaces.Dict):
        keys = set(observation_space.spaces)
        if "observation" not in keys or not keys <= {"observation", "action_mask"}:
            raise ValueError(f"{where}: observation space is a Dict with keys {sorted(keys)}; expected {expected}")
        found = {k: (type(s).__name__, tuple(s.shape)) for k, s in observation_space.spaces.items()}
        want = {"observation": ("Box", (size,)), "action_mask": ("Box", (NUM_ACTIONS,))}
        for key, (kind, shape) in found.items():
            if (kind, shape) != want[key]:
                raise ValueError(f"{where}: observation space {key!r} is a {kind} of shape {shape}, expected a "
                                 f"Box of shape {want[key][1]} (expected {expected})")
    else:
        raise ValueError(f"{where}: observation space is {observation_space}; expected {expected}")
    if not (isinstance(action_space, spaces.Discrete) and int(action_space.n) == NUM_ACTIONS
            and int(action_space.start) == 0):
        raise ValueError(f"{where}: action space is {action_space}, expected Discrete({NUM_ACTIONS})")


class LoadedPolicy:
    """One loaded, validated model and the way to pick a legal action with it.

    Shared by every agent of the process that plays the same file (see :func:`load_policy`):
    inference does not change the model, and loading costs far more than a move."""

    def __init__(self, path: Path, device: str = "cpu", algo: str | None = None) -> None:
        key = algo.lower() if algo is not None else detect_algorithm(path)
        if algo is not None and key not in ALGORITHMS:
            raise ValueError(f"unknown algo {algo!r}; known: {', '.join(c for _, c in ALGORITHMS.values())}")
        self.torch = _torch()
        tried: list[str] = []
        model = None
        for k in [key] if key is not None else ["maskableppo", "ppo"]:
            try:
                model = _algorithm_class(k).load(path, device=device, custom_objects=_INFERENCE_OBJECTS)
                break
            except Exception as exc:  # noqa: BLE001 - reported together below
                tried.append(f"{ALGORITHMS[k][1]}: {type(exc).__name__}: {exc}")
        if model is None:
            raise ValueError(f"cannot load {path} as a stable-baselines3 model ({'; '.join(tried)})")
        check_spaces(model.observation_space, model.action_space, where=str(path))
        self.path = path
        self.model = model
        self.algorithm = type(model).__name__
        policy = model.policy
        policy.set_training_mode(False)  # dropout / batch-norm in eval mode
        from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

        #: decided by the policy object, not the file: a maskable policy predicts with the mask itself
        self.maskable = isinstance(policy, MaskableActorCriticPolicy)
        self.q_values = not hasattr(policy, "get_distribution")  # DQN, QR-DQN: scores are Q-values
        space = model.observation_space
        self._dict_keys = {k: s.dtype for k, s in space.spaces.items()} if hasattr(space, "spaces") else None
        self._obs_dtype = space.dtype if self._dict_keys is None else self._dict_keys["observation"]
        self.observation_size = encoding.OBSERVATION_SIZE

    def model_input(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray | dict[str, np.ndarray]:
        """The observation as the model's space has it (the vector, or the env's dict)."""
        obs = np.asarray(observation, dtype=self._obs_dtype)
        if obs.shape != (self.observation_size,):
            raise ValueError(f"observation has shape {obs.shape}, expected ({self.observation_size},) "
                             f"for the model {self.path}")
        if self._dict_keys is None:
            return obs
        out = {"observation": obs}
        if "action_mask" in self._dict_keys:
            out["action_mask"] = np.asarray(action_mask, dtype=self._dict_keys["action_mask"])
        return out

    def scores(self, model_obs: np.ndarray | dict[str, np.ndarray]) -> np.ndarray:
        """Log-probabilities (actor-critic) or Q-values (DQN-style) of every action, float64."""
        torch = self.torch
        policy = self.model.policy
        with torch.no_grad():
            obs_t, _ = policy.obs_to_tensor(model_obs)
            if not self.q_values:
                out = policy.get_distribution(obs_t).distribution.logits
            elif hasattr(policy, "quantile_net"):  # QR-DQN: mean over quantiles
                out = policy.quantile_net(obs_t).mean(dim=1)
            else:
                out = policy.q_net(obs_t)
        return out.reshape(-1).cpu().numpy().astype(np.float64)

    def choose(self, observation: np.ndarray, action_mask: np.ndarray, deterministic: bool,
               rng: np.random.Generator) -> int:
        """A legal action: the model's best legal one, or (not deterministic) one sampled among
        the legal ones from ``rng`` (so the same seed replays the same choices)."""
        legal = check_mask(action_mask)
        model_obs = self.model_input(observation, action_mask)
        if legal.size == 1:  # forced move: no need to ask the network
            return int(legal[0])
        if deterministic and self.maskable:
            action, _ = self.model.predict(model_obs, action_masks=np.asarray(action_mask, dtype=bool),
                                           deterministic=True)
            a = int(np.asarray(action).reshape(-1)[0])
            if 0 <= a < NUM_ACTIONS and action_mask[a]:
                return a
            # unreachable with a masked distribution; fall through to the explicit legal argmax
        s = self.scores(model_obs)[legal]
        if deterministic:
            return int(legal[int(np.argmax(s))])
        if self.q_values:  # like DQN.predict: epsilon-greedy with the model's final exploration rate
            if rng.random() < float(getattr(self.model, "exploration_rate", 0.0)):
                return int(legal[rng.integers(legal.size)])
            return int(legal[int(np.argmax(s))])
        return sample_softmax(legal, s, rng)


_CACHE: dict[tuple, LoadedPolicy] = {}


def load_policy(path: str | os.PathLike, device: str = "cpu", algo: str | None = None) -> LoadedPolicy:
    """The model at ``path``, loaded and validated once per process (per file version,
    device and algo: a file rewritten by training is loaded afresh)."""
    p = _resolve_path(path)
    st = p.stat()
    key = (str(p), st.st_mtime_ns, st.st_size, str(device), algo.lower() if algo else None,
           encoding.OBSERVATION_SIZE)  # the size it was validated against
    if key not in _CACHE:
        _CACHE[key] = LoadedPolicy(p, device=str(device), algo=algo)
    return _CACHE[key]


def clear_cache() -> None:
    """Forget every loaded model (frees their memory)."""
    _CACHE.clear()


class PolicyAgent(Agent):
    """Plays a saved stable-baselines3 / sb3-contrib model (spec ``policy:path=FILE``).

    Args:
        path: the ``.zip`` written by the algorithm's ``.save()`` (``.zip`` may be left off).
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
        self.policy = load_policy(path, device=device, algo=algo)
        self.reset(seed)

    @property
    def model(self) -> Any:
        """The stable-baselines3 model (shared with other agents playing the same file)."""
        return self.policy.model

    @property
    def path(self) -> Path:
        return self.policy.path

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: GameState | None = None) -> int:
        return self.policy.choose(observation, action_mask, self.deterministic, self.rng)


def released_policy_path(map_name: str) -> Path:
    """Where the released policy for ``map_name`` lives (whether or not it exists)."""
    if map_name not in MAP_NAMES:
        raise ValueError(f"unknown map {map_name!r}; choose one of {list(MAP_NAMES)}")
    return POLICY_DIR / f"ppo_{map_name}.zip"


def observed_map(observation: np.ndarray) -> str:
    """The map named by the observation's ``map`` one-hot; ``ValueError`` if it names none."""
    block = np.asarray(observation)[encoding.OBSERVATION_LAYOUT["map"]]
    hot = np.flatnonzero(block == 1)
    if hot.size != 1 or np.count_nonzero(block) != 1:
        raise ValueError(f"observation's map one-hot {block.tolist()} names no single map of {list(MAP_NAMES)}")
    return MAP_NAMES[int(hot[0])]


class ReleasedPolicyAgent(Agent):
    """Plays the policy released with the package for the map of the game (spec ``ppo``).

    The file, ``agents/policies/ppo_{map}.zip``, is chosen at the first move of a game on
    each map, from the map one-hot of the observation (so the agent needs no setup
    arguments and can play games on either map); ``map_name`` pins one map's policy
    whatever the game. A missing file gives ``FileNotFoundError`` at that first move.
    Models are loaded once per process. Other arguments are :class:`PolicyAgent`'s.
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

    def policy_for(self, map_name: str) -> LoadedPolicy:
        """The released policy of ``map_name`` (loaded on first use, then cached)."""
        path = released_policy_path(map_name)
        if not path.is_file():
            raise FileNotFoundError(
                f"no released policy for map {map_name!r} at {path}; train one with "
                f"training/train_ppo.py or use policy:path=FILE")
        return load_policy(path, device=self.device)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: GameState | None = None) -> int:
        check_mask(action_mask)  # the usual error for a seat that is not deciding, before any loading
        policy = self.policy_for(self.map_name or observed_map(observation))
        return policy.choose(observation, action_mask, self.deterministic, self.rng)


def released_policy(seed: int = 0, map_name: str | None = None, **kw: Any) -> ReleasedPolicyAgent:
    """The ``ppo`` agent: the released policy of the game's map (see :class:`ReleasedPolicyAgent`)."""
    return ReleasedPolicyAgent(seed=seed, map_name=map_name, **kw)
