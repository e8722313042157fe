"""Reading stable-baselines3 / sb3-contrib model files (``.zip``) for the ``policy`` agent.

:class:`LoadedPolicy` is one model file written by an algorithm's ``.save()``, loaded and
checked, with the way to pick a legal action with it; :class:`concordia_env.agents.policy.PolicyAgent`
(spec ``policy:path=FILE.zip``) plays it. The training scripts use the same reader
(:func:`read_model_data`, :func:`moved_class_objects`, :func:`model_spaces`). Needs the
``train`` extra (torch, stable-baselines3, sb3-contrib), imported only when a model is loaded:
importing this module imports neither.

.. warning::
   A stable-baselines3 ``.zip`` stores Python objects with pickle (the policy class,
   its keyword arguments, schedules), and loading it runs code from the file. Play
   only model files you trust.

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
and player count, one policy plays any seat of any game. Observation
normalisation kept outside the model (a ``VecNormalize`` wrapper) is *not* in the
model file, so a policy must have been trained on raw observations or normalise
inside its network.

The spaces are checked from the JSON ``data`` entry of the zip (kind, keys, shapes and
dtypes as recorded), before anything is loaded; the model is then given spaces built
from this package's own constants (``custom_objects``) instead of unpickling the saved
ones. Files of this project's earlier layout, whose features extractor was pickled as
``agents.nets.ObservationScaler``, load too: their ``policy_kwargs`` are rebuilt from
the same JSON.

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
:meth:`LoadedPolicy.choose` never returns an illegal action: maskable models predict
with the mask; for the others it takes the legal action the model rates highest
(probability for actor-critic models, Q-value for DQN-style ones), and it samples
(``deterministic=False``) only among the legal actions.

Threads
-------
At its first import of torch this module sets ``torch.set_num_threads(TORCH_THREADS)`` (1):
tournament workers run one game per process in parallel, and a batch-1 forward
pass of a small MLP gains nothing from threads while N processes x all cores
of threads would oversubscribe the machine. Set
``concordia_env.integrations.sb3_files.TORCH_THREADS = None`` before the first load to
leave torch's setting alone.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import zipfile
import zlib
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from concordia_env import encoding
from concordia_env.data import MAP_NAMES
from concordia_env.engine import NUM_ACTIONS

from .._internal.extras import install_hint, requires
from ..agents.base import check_mask, sample_softmax

#: what to install for stable-baselines3 model files and training, on any machine (torch's
#: CPU-only wheel index first: the default index gives Linux the multi-GB CUDA build)
TRAIN_EXTRA_INSTALL = ("pip install torch --index-url https://download.pytorch.org/whl/cpu, then "
                       + install_hint("train"))

#: torch threads set once, at the first import of torch by this module (None: leave torch alone)
TORCH_THREADS: int | None = 1

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

#: classes pickled under a module path that no longer exists -> where they live now
MOVED_CLASSES = {"agents.nets.ObservationScaler": "concordia_env.training.nets.ObservationScaler"}

# class paths a rebuilt policy_kwargs may name: imported by name, never unpickled
_CLASS_REPR = re.compile(r"^<class '([\w.]+)'>$")
_IMPORTABLE_PREFIXES = ("torch.nn.", "torch.optim.", "stable_baselines3.", "sb3_contrib.",
                        "concordia_env.training.nets.")

_torch_configured = False


def _torch() -> Any:
    """torch, imported here only; sets the thread count the first time (see the module doc)."""
    global _torch_configured
    try:
        import torch
    except ImportError as exc:
        raise ImportError(
            f"stable-baselines3 model files need torch and stable-baselines3 ({exc}); install the train "
            f"extra: {TRAIN_EXTRA_INSTALL}") from exc

    if not _torch_configured:
        _torch_configured = True
        if TORCH_THREADS is not None:
            torch.set_num_threads(TORCH_THREADS)
    return torch

# ------------------------------------------------------------ the zip's JSON data, read without unpickling
def read_model_data(path: str | os.PathLike) -> dict[str, Any]:
    """The JSON ``data`` entry of a stable-baselines3 zip (nothing unpickled); ``ValueError``
    naming the file if it is not a zip, has no ``data``, or ``data`` is not a JSON object."""
    p = Path(path)
    try:
        with zipfile.ZipFile(p) as zf:
            data = json.loads(zf.read("data"))
    # what a damaged zip or a hostile 'data' entry raises besides BadZipFile: a missing entry
    # (KeyError), bad JSON, non-UTF-8 bytes or an over-long int literal (ValueError), nesting
    # past the recursion limit, corrupt or truncated compressed data (zlib.error, EOFError), an
    # unsupported compression method (NotImplementedError) or encryption (RuntimeError)
    except (zipfile.BadZipFile, KeyError, ValueError, RecursionError, zlib.error, EOFError,
            NotImplementedError, RuntimeError) as exc:
        why = "its 'data' entry is nested too deeply" if isinstance(exc, RecursionError) else str(exc)[:300]
        raise ValueError(f"{p} is not a stable-baselines3 model file (a zip written by .save()): {why}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{p} is not a stable-baselines3 model file (a zip written by .save()): its 'data' "
                         f"entry is a JSON {type(data).__name__}, not an object")
    return data


def _algorithm_from_data(data: dict[str, Any], path: Path) -> str | None:
    """:func:`detect_algorithm` of a zip's ``data`` already read (``path`` names it in messages)."""
    policy_class = data.get("policy_class")
    module = policy_class.get("__module__") if isinstance(policy_class, dict) else None
    if module in _UNSUPPORTED_MODULES:
        raise ValueError(f"{path}: cannot play a policy of {module}: {_UNSUPPORTED_MODULES[module]}")
    if module not in _POLICY_MODULES:
        return None
    algo = _POLICY_MODULES[module]
    if algo is None:  # PPO, A2C and TRPO save the same policy class; their hyperparameters differ
        algo = "ppo" if "clip_range" in data else "trpo" if "cg_damping" in data else "a2c"
    return algo


def detect_algorithm(path: str | os.PathLike) -> str | None:
    """Key of :data:`ALGORITHMS` for a saved model, from its zip's ``data`` (no unpickling);
    None for a policy class this module does not know. ``ValueError`` if the file is not a
    stable-baselines3 save or holds a policy kind the agent cannot play."""
    return _algorithm_from_data(read_model_data(path), Path(path))


def _kind(record: Any) -> str:
    """``"Box"`` for a recorded ``{":type:": "<class 'gymnasium.spaces.box.Box'>", ...}``."""
    text = record.get(":type:", "") if isinstance(record, dict) else ""
    m = re.search(r"'([\w.]+)'", str(text))
    return m.group(1).rsplit(".", 1)[-1] if m else "unknown"


def _dtype(text: Any, where: str) -> np.dtype:
    """The recorded dtype ``text``; ``ValueError`` naming ``where`` if numpy cannot read it."""
    try:
        return np.dtype(str(text))
    except TypeError:
        raise ValueError(f"{where}: unreadable dtype {text!r} in the saved data") from None


def _recorded_box(record: dict[str, Any], where: str) -> Any:
    """A stand-in Box with the recorded shape and dtype (bounds do not matter for the checks)."""
    from gymnasium import spaces

    shape = record.get("_shape")
    if not (isinstance(shape, list) and all(isinstance(n, int) and n >= 0 for n in shape)):
        raise ValueError(f"{where}: unreadable observation shape {shape!r} in the saved data")
    return spaces.Box(0, 1, tuple(shape), _dtype(record.get("dtype"), where))


def _recorded_dict_entries(text: Any, where: str) -> dict[str, tuple[str, tuple[int, ...], str]]:
    """``{key: (kind, shape, dtype)}`` from the repr of a Dict's spaces as the zip records it,
    e.g. ``"{'action_mask': Box(0, 1, (402,), int8), 'observation': Box(0.0, inf, (7,), float32)}"``."""
    if not isinstance(text, str):
        raise ValueError(f"{where}: unreadable Dict observation space {text!r} in the saved data")
    starts = list(re.finditer(r"'([^']*)': (\w+)\(", text))
    if not starts:
        raise ValueError(f"{where}: unreadable Dict observation space {text!r} in the saved data")
    out = {}
    for m, nxt in zip(starts, starts[1:] + [None]):
        segment = text[m.start():nxt.start() if nxt else len(text)]
        # a Box repr ends with its shape and dtype: ..., (2378,), float32)
        tail = list(re.finditer(r"\((\d+(?:, ?\d+)*),?\), (\w+)\)", segment))
        shape = tuple(int(n) for n in tail[-1].group(1).split(",") if n.strip()) if tail else ()
        out[m.group(1)] = (m.group(2), shape, tail[-1].group(2) if tail else "")
    return out


def recorded_spaces(data: dict[str, Any], where: str) -> tuple[Any, Any]:
    """Stand-ins for the saved observation and action spaces with their recorded kinds, keys,
    shapes and dtypes, read from the JSON ``data`` (nothing unpickled). ``ValueError`` if the
    record is missing or a kind :func:`check_spaces` can only refuse."""
    from gymnasium import spaces

    obs, act = data.get("observation_space"), data.get("action_space")
    if not isinstance(obs, dict) or not isinstance(act, dict):
        raise ValueError(f"{where}: the saved data records no observation or action space")
    kind = _kind(obs)
    if kind == "Box":
        obs_space = _recorded_box(obs, where)
    elif kind == "Dict":
        entries = _recorded_dict_entries(obs.get("spaces"), where)
        sub: dict[str, Any] = {}
        for key, (sub_kind, shape, dtype) in entries.items():
            if sub_kind != "Box":
                raise ValueError(f"{where}: observation space {key!r} is a {sub_kind}, expected a Box")
            sub[key] = spaces.Box(0, 1, shape, _dtype(dtype, where))
        obs_space = spaces.Dict(sub)
    else:
        raise ValueError(f"{where}: observation space is a {kind}; expected a Box of shape "
                         f"({encoding.OBSERVATION_SIZE},) or a Dict with an 'observation' Box")
    if _kind(act) != "Discrete":
        raise ValueError(f"{where}: action space is a {_kind(act)}, expected Discrete({NUM_ACTIONS})")
    try:
        act_space = spaces.Discrete(int(act["n"]), start=int(act.get("start", 0)))
    except (KeyError, TypeError, ValueError):
        raise ValueError(f"{where}: unreadable action space {act!r} in the saved data") from None
    return obs_space, act_space


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
        found = {k: (type(s).__name__, tuple(s.shape or ())) for k, s in observation_space.spaces.items()}
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


@cache
def _observation_bounds(size: int) -> tuple[np.ndarray, np.ndarray]:
    """The union of every map's observation bounds (``size`` keys the cache to the layout)."""
    from concordia_env.game import get_game

    bounds = [encoding.observation_bounds(get_game(m).tables) for m in MAP_NAMES]
    low = np.min([b[0] for b in bounds], axis=0).astype(np.float32)
    high = np.max([b[1] for b in bounds], axis=0).astype(np.float32)
    return low, high


def package_spaces(recorded_observation: Any) -> tuple[Any, Any]:
    """The observation and action spaces to give a model whose saved spaces passed
    :func:`check_spaces`, built from this package's constants: the observation Box has the
    rule bounds of the maps, the recorded dtype and the Dict keys the model was saved with."""
    from gymnasium import spaces

    low, high = _observation_bounds(encoding.OBSERVATION_SIZE)
    obs_record = recorded_observation["observation"] if isinstance(recorded_observation, spaces.Dict) \
        else recorded_observation
    dtype: Any = np.dtype(obs_record.dtype)
    if dtype.kind != "f":
        raise ValueError(f"observation dtype {dtype} is not a float type; the env's observations are float32")
    box = spaces.Box(low, high, (encoding.OBSERVATION_SIZE,), dtype)
    if isinstance(recorded_observation, spaces.Dict):
        sub: dict[str, Any] = {"observation": box}
        if "action_mask" in recorded_observation.spaces:
            mask_dtype: Any = recorded_observation["action_mask"].dtype
            sub["action_mask"] = spaces.Box(0, 1, (NUM_ACTIONS,), mask_dtype)
        observation_space: Any = spaces.Dict(sub)
    else:
        observation_space = box
    return observation_space, spaces.Discrete(NUM_ACTIONS)


def model_spaces(data: dict[str, Any], where: str) -> tuple[Any, Any]:
    """Check the spaces recorded in a zip's ``data``, then build the ones to load it with."""
    recorded_obs, recorded_act = recorded_spaces(data, where)
    check_spaces(recorded_obs, recorded_act, where=where)
    try:
        return package_spaces(recorded_obs)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None


def _resolve_class(path: str, where: str) -> Any:
    """The class a recorded ``<class 'path'>`` names, imported by module and name (only from
    the libraries :data:`_IMPORTABLE_PREFIXES` lists, and :data:`MOVED_CLASSES`)."""
    path = MOVED_CLASSES.get(path, path)
    module, _, name = path.rpartition(".")
    if not path.startswith(_IMPORTABLE_PREFIXES):
        raise ValueError(f"{where} names the class {path}, which cannot be rebuilt without unpickling")
    if module.startswith("torch.nn."):  # torch.nn.modules.activation.Tanh is torch.nn.Tanh
        module = "torch.nn"
    elif module.startswith("torch.optim."):
        module = "torch.optim"
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"{where} names the class {path}, which cannot be imported: {exc}") from None


def _rebuild(value: Any, where: str) -> Any:
    """A recorded ``policy_kwargs`` value with every class repr imported by name (see
    :func:`rebuild_policy_kwargs`); ``where`` names it in messages."""
    if isinstance(value, dict):
        return {k: _rebuild(v, f"{where}[{k!r}]") for k, v in value.items()}
    if isinstance(value, list):
        return [_rebuild(v, where) for v in value]
    if isinstance(value, str):
        m = _CLASS_REPR.match(value)
        if m:
            return _resolve_class(m.group(1), where)
        if value.startswith("<"):  # a repr of a function or an object: only the pickle has it
            raise ValueError(f"{where} is {value}, which cannot be rebuilt without unpickling")
    return value


def rebuild_policy_kwargs(data: dict[str, Any], where: str) -> dict[str, Any]:
    """The model's ``policy_kwargs`` rebuilt from the readable JSON next to their pickle: plain
    values as recorded, classes imported by name (a moved class from where it lives now).
    ``ValueError`` for an entry only the pickle holds (a function, an unknown class)."""
    record = data.get("policy_kwargs", {})
    if not isinstance(record, dict):
        raise ValueError(f"{where}: policy_kwargs recorded as {record!r}, not an object")
    return {k: _rebuild(v, f"{where}: policy_kwargs[{k!r}]") for k, v in record.items() if not k.startswith(":")}


def _names_moved_class(data: dict[str, Any]) -> bool:
    """Whether the recorded policy_kwargs name a class pickled under a module path that is gone."""
    record = data.get("policy_kwargs")
    if not isinstance(record, dict):
        return False
    return any(isinstance(v, str) and (m := _CLASS_REPR.match(v)) and m.group(1) in MOVED_CLASSES
               for v in record.values())


def moved_class_objects(path: str | os.PathLike) -> dict[str, Any]:
    """``custom_objects`` that let stable-baselines3 load a zip whose ``policy_kwargs`` name a class
    under a module path that no longer exists (:data:`MOVED_CLASSES`): the kwargs rebuilt from
    the zip's JSON. Empty for any other zip."""
    data = read_model_data(path)
    return {"policy_kwargs": rebuild_policy_kwargs(data, str(path))} if _names_moved_class(data) else {}


def inference_objects() -> dict[str, Any]:
    """``custom_objects`` entries that replace what inference never uses (schedules)."""
    return dict(_INFERENCE_OBJECTS)


def _algorithm_class(key: str) -> Any:
    """The algorithm class of an :data:`ALGORITHMS` key, imported now (needs the ``train`` extra)."""
    module, name = ALGORITHMS[key]
    return getattr(importlib.import_module(module), name)


class LoadedPolicy:
    """One loaded, validated stable-baselines3 model and the way to pick a legal action with it.

    Shared by every agent of the process that plays the same file (see
    :func:`concordia_env.agents.policy.load_policy`):
    inference does not change the model, and loading costs far more than a move. Loading
    unpickles the policy class and its keyword arguments: the file must be trusted."""

    def __init__(self, path: Path, device: str = "cpu", algo: str | None = None) -> None:
        data = read_model_data(path)
        key = algo.lower() if algo is not None else _algorithm_from_data(data, path)
        if algo is not None and key not in ALGORITHMS:
            raise ValueError(f"unknown algo {algo!r}; known: {', '.join(c for _, c in ALGORITHMS.values())}")
        # checked from the JSON before torch is even imported; the model gets the package's spaces
        observation_space, action_space = model_spaces(data, str(path))
        custom = {**_INFERENCE_OBJECTS, "observation_space": observation_space, "action_space": action_space}
        if _names_moved_class(data):
            custom["policy_kwargs"] = rebuild_policy_kwargs(data, str(path))
        self.torch = _torch()
        tried: list[str] = []
        model = None
        for k in [key] if key is not None else ["maskableppo", "ppo"]:
            try:
                model = _algorithm_class(k).load(path, device=device, custom_objects=custom)
                break
            except Exception as exc:  # noqa: BLE001 - reported together below
                tried.append(f"{ALGORITHMS[k][1]}: {type(exc).__name__}: {exc}")
        if model is None:
            raise ValueError(f"cannot load {path} as a stable-baselines3 model ({'; '.join(tried)})")
        self.path = path
        self.model = model
        self.algorithm = type(model).__name__
        policy = model.policy
        policy.set_training_mode(False)  # dropout / batch-norm in eval mode
        with requires("train", "stable-baselines3 model files"):
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
