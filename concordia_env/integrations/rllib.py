"""RLlib: the AEC env as an RLlib ``MultiAgentEnv`` with action masking out of the box.

::

    from concordia_env.integrations.rllib import ConcordiaMultiAgentEnv, masked_ppo_config

    config = masked_ppo_config({"map_name": "italia", "num_players": 2})   # one shared policy
    algo = config.build_algo()
    algo.train()

or run ``python -m concordia_env.training.ppo.rllib`` (multi-agent PPO, checkpoints,
evaluation through the tournament runner). Needs Ray with RLlib: ``pip install
".[rllib]"`` in the source folder (the ``rllib`` extra; torch is needed too, as for the ``train`` extra).

What the wrapper fixes (each of these stops a plain ``PettingZooEnv`` before it trains):

* **Observation keys.** RLlib's action-masking module (``ActionMaskingTorchRLModule``) wants
  ``{"observations": ..., "action_mask": ...}``; PettingZoo's convention is ``observation``
  (singular). The wrapper renames it, and gives the mask as float32 (the module takes its log).
* **RLlib's env pre-check** steps an *unmasked* sampled action, which the default env answers
  with :class:`~concordia_env.state.IllegalActionError`, reported by RLlib as a misleading "does
  not abide to the new gymnasium-style API". The wrapper builds the env with
  ``illegal_action="terminate"`` (the default here): an illegal action ends the game, the
  offender gets -1 and the others 0 (``ILLEGAL_REWARD``), and ``infos`` name the action. A
  masked policy never plays one. ``illegal_action="raise"`` restores the error.
* **Final rewards.** When a game ends every seat receives its observation, reward and
  ``terminated``/``truncated`` flag in the same step, so every seat's episode gets its terminal
  reward (not just the seat that made the last move).

Episodes: ``reset()`` returns the observation of the deciding agent only; ``step()`` takes
that agent's action and returns the next deciding agent's observation (reward 0) until the
game ends, when all agents get their final observation (the mask all zero) and reward, and
``__all__`` is set. ``agents`` and ``possible_agents`` are ``player_0`` ... ``player_{n-1}``.

Observations (``scale_observations=True``, the default) are those of the project's networks:
bounded features divided by their bound, unbounded ones (coins, VP, turn counter) ``log1p``
(:func:`concordia_env.agents.numpy_policy.scale_observation`), so the Box is finite apart from
the log-scaled features and a policy trained here exports to a numpy policy pair
(:func:`export_numpy_policy`) that ``policy:path=STEM.npz`` plays in tournaments.

Policies: :func:`shared_policy` maps every seat to one policy (:data:`SHARED_POLICY`),
:func:`per_seat_policy` gives each seat its own (policy id = agent id).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces

from concordia_env import engine as E
from concordia_env._internal.extras import install_hint, requires
from concordia_env.agents.numpy_policy import ACTIVATIONS, NumpyPolicy, observation_scaling, scale_observation
from concordia_env.env import DEFAULT_MAX_TURNS, raw_env

#: what to install when Ray or RLlib is missing
INSTALL_HINT = install_hint("rllib", 'pip install "ray[rllib]"')

try:
    from ray.rllib.env.multi_agent_env import MultiAgentEnv
    from ray.rllib.utils.typing import MultiAgentDict
except ImportError as _exc:  # pragma: no cover - exercised without ray
    raise ImportError(f"concordia_env.integrations.rllib needs Ray with RLlib ({_exc}); install it: "
                      f"{INSTALL_HINT}") from None

#: the env name :func:`register` gives RLlib (``config.environment(ENV_NAME, env_config=...)``)
ENV_NAME = "concordia_rllib"
#: the policy (module) id of :func:`shared_policy`
SHARED_POLICY = "shared"
#: the keys of ``env_config`` :class:`ConcordiaMultiAgentEnv` accepts
ENV_CONFIG_KEYS = ("map_name", "num_players", "intermediate_scoring", "reward", "illegal_action", "max_turns",
                   "scale_observations")

__all__ = ["ENV_CONFIG_KEYS", "ENV_NAME", "INSTALL_HINT", "SHARED_POLICY", "ConcordiaMultiAgentEnv",
           "env_creator", "export_numpy_policy", "masked_module_spec", "masked_ppo_config", "per_seat_policy",
           "register", "shared_policy"]


class ConcordiaMultiAgentEnv(MultiAgentEnv):
    """Concordia as an RLlib multi-agent env (turn-based: one agent acts per step).

    Args:
        config: RLlib's ``env_config`` (a dict; ``EnvContext`` is one), with the keys of
            :data:`ENV_CONFIG_KEYS`: ``map_name``, ``num_players``, ``intermediate_scoring``,
            ``reward`` and ``max_turns`` as :class:`concordia_env.env.raw_env`;
            ``illegal_action`` ``"terminate"`` (default, see the module doc) or ``"raise"``;
            ``scale_observations`` (default True) feed the networks' scaled observation.
            An unknown key is a ``ValueError`` naming the known ones.
    """

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        config = dict(config or {})
        unknown = sorted(set(config) - set(ENV_CONFIG_KEYS))
        if unknown:
            raise ValueError(f"unknown env_config key(s) {unknown}; known: {', '.join(ENV_CONFIG_KEYS)}")
        self.scale_observations = bool(config.get("scale_observations", True))
        self.env = raw_env(map_name=config.get("map_name", "imperium"), num_players=config.get("num_players", 4),
                           intermediate_scoring=config.get("intermediate_scoring", False),
                           reward=config.get("reward", "win"), illegal_action=config.get("illegal_action", "terminate"),
                           max_turns=config.get("max_turns", DEFAULT_MAX_TURNS))
        #: the agent ids, ``player_0`` ... (``possible_agents`` and ``agents`` hold them too)
        self.seats: list[str] = list(self.env.possible_agents)
        self.possible_agents = list(self.seats)
        self.agents = list(self.seats)
        raw_box = self.env.observation_spaces[self.seats[0]]["observation"]
        assert isinstance(raw_box, spaces.Box)
        #: scaling of the raw observation (``observation_scaling`` of the rule bounds)
        self.scale, self.unbounded = observation_scaling(raw_box.high)
        if self.scale_observations:
            high = np.where(self.unbounded, np.inf, 1.0).astype(np.float32)
            obs_box = spaces.Box(np.zeros_like(high), high, dtype=np.float32)
        else:
            obs_box = raw_box
        space = spaces.Dict({"observations": obs_box,
                             "action_mask": spaces.Box(0.0, 1.0, (E.NUM_ACTIONS,), dtype=np.float32)})
        obs_spaces: dict[str, spaces.Space] = dict.fromkeys(self.seats, space)
        act_spaces: dict[str, spaces.Space] = {a: self.env.action_space(a) for a in self.seats}
        self.observation_spaces = dict[Any, spaces.Space](obs_spaces)
        self.action_spaces = dict[Any, spaces.Space](act_spaces)
        self.observation_space = spaces.Dict(obs_spaces)
        self.action_space = spaces.Dict(act_spaces)

    def _observe(self, agent: str) -> dict[str, np.ndarray]:
        raw = self.env.observe(agent)
        obs = raw["observation"]
        if self.scale_observations:
            obs = scale_observation(obs, self.scale, self.unbounded)
        return {"observations": obs, "action_mask": raw["action_mask"].astype(np.float32)}

    def reset(self, *, seed: int | None = None,  # type: ignore[override,unused-ignore]
              options: dict | None = None) -> tuple[MultiAgentDict, MultiAgentDict]:
        """A new game (``seed`` as :meth:`raw_env.reset`): the deciding agent's observation."""
        self.env.reset(seed=seed, options=options)
        agent = self.env.agent_selection
        return {agent: self._observe(agent)}, {agent: {}}

    def step(self, action_dict: MultiAgentDict) -> tuple[  # type: ignore[override,unused-ignore]
            MultiAgentDict, MultiAgentDict, MultiAgentDict, MultiAgentDict, MultiAgentDict]:
        """Play the deciding agent's action (other agents' entries are ignored; a missing one is a
        ``KeyError`` naming the agent expected)."""
        env = self.env
        agent = env.agent_selection
        if agent not in action_dict:
            raise KeyError(f"no action for {agent}, the agent to act (got actions for {sorted(map(str, action_dict))})")
        env.step(action_dict[agent])
        if all(env.terminations[a] or env.truncations[a] for a in self.seats):
            obs: MultiAgentDict = {a: self._observe(a) for a in self.seats}
            rewards: MultiAgentDict = {a: float(env.rewards[a]) for a in self.seats}
            terminated: MultiAgentDict = {a: bool(env.terminations[a]) for a in self.seats}
            truncated: MultiAgentDict = {a: bool(env.truncations[a]) for a in self.seats}
            terminated["__all__"] = all(terminated.values())
            truncated["__all__"] = not terminated["__all__"]
            infos: MultiAgentDict = {a: dict(env.infos[a]) for a in self.seats}
            return obs, rewards, terminated, truncated, infos
        nxt = env.agent_selection
        return ({nxt: self._observe(nxt)}, {nxt: 0.0}, {nxt: False, "__all__": False},
                {nxt: False, "__all__": False}, {nxt: {}})

    def close(self) -> None:
        self.env.close()


def env_creator(config: Mapping[str, Any] | None = None) -> ConcordiaMultiAgentEnv:
    """RLlib's env creator: ``config`` is the ``env_config``."""
    return ConcordiaMultiAgentEnv(config)


def register(name: str = ENV_NAME) -> str:
    """Register the env with Ray Tune under ``name`` (Ray's registry reaches remote env runners);
    returns ``name`` for ``config.environment(name, env_config=...)``."""
    from ray.tune.registry import register_env

    register_env(name, env_creator)
    return name


def shared_policy(agent_id: Any, episode: Any = None, **kwargs: Any) -> str:
    """Policy mapping: every seat plays :data:`SHARED_POLICY`."""
    return SHARED_POLICY


def per_seat_policy(agent_id: Any, episode: Any = None, **kwargs: Any) -> str:
    """Policy mapping: one policy per seat, named after the agent (``player_0``, ...)."""
    return str(agent_id)


def masked_module_spec(hiddens: Sequence[int] = (64, 64), activation: str = "tanh") -> Any:
    """An ``RLModuleSpec`` of RLlib's action-masking PPO module (new API stack) with an MLP
    actor and critic of ``hiddens`` units and ``activation`` ("tanh" or "relu")."""
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    return RLModuleSpec(module_class=ActionMaskingTorchRLModule,
                        model_config={"fcnet_hiddens": list(hiddens), "fcnet_activation": activation,
                                      "head_fcnet_hiddens": [], "vf_share_layers": False})


def masked_ppo_config(env_config: Mapping[str, Any] | None = None, *, per_seat: bool = False,
                      hiddens: Sequence[int] = (64, 64), activation: str = "tanh") -> Any:
    """A ``PPOConfig`` (new API stack) on this env with the masking module: one shared policy
    (default) or one per seat (``per_seat``). Set env runners, batch sizes and the like on it."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec

    env_config = dict(env_config or {})
    name = register()
    if per_seat:
        ids = ConcordiaMultiAgentEnv(env_config).seats
        mapping = per_seat_policy
    else:
        ids, mapping = [SHARED_POLICY], shared_policy
    spec = masked_module_spec(hiddens, activation)
    return (PPOConfig()
            .api_stack(enable_rl_module_and_learner=True, enable_env_runner_and_connector_v2=True)
            .environment(name, env_config=env_config)
            .multi_agent(policies=set(ids), policy_mapping_fn=mapping)
            .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={i: spec for i in ids})))


def _linear_layers(module: Any) -> tuple[list[tuple[np.ndarray, np.ndarray]], str]:
    """The actor's Linear layers ``(weight, bias)`` in order, and the activation's class name."""
    with requires("rllib", "exporting an RLlib policy", 'pip install "ray[rllib]"'):
        import torch

    parts = [module.encoder.actor_encoder if hasattr(module.encoder, "actor_encoder") else module.encoder, module.pi]
    layers: list[tuple[np.ndarray, np.ndarray]] = []
    acts: set[str] = set()
    for part in parts:
        for sub in part.modules():
            if isinstance(sub, torch.nn.Linear):
                bias = sub.bias if sub.bias is not None else torch.zeros(sub.out_features)
                layers.append((sub.weight.detach().cpu().numpy().copy(), bias.detach().cpu().numpy().copy()))
            elif type(sub).__name__ in ACTIVATIONS:
                acts.add(type(sub).__name__)
            elif isinstance(sub, torch.nn.modules.normalization.LayerNorm | torch.nn.Dropout):
                raise ValueError(f"the module has a {type(sub).__name__} layer: only Linear and one "
                                 f"activation can be exported")
    if len(acts) > 1:
        raise ValueError(f"the module mixes activations {sorted(acts)}: only one can be exported")
    return layers, acts.pop() if acts else "Tanh"


def export_numpy_policy(module: Any, path: str | Path, env: ConcordiaMultiAgentEnv,
                        check_batch: int = 64) -> NumpyPolicy:
    """Write the actor of a trained masking PPO ``module`` (``algo.get_module(SHARED_POLICY)``)
    as a numpy policy pair ``path`` (``.npz`` + ``.json``; see
    :mod:`concordia_env.agents.numpy_policy`), which the ``policy:path=STEM.npz`` agent plays in
    tournaments. ``env`` must be built with ``scale_observations=True`` (the pair's input
    scaling). The export is checked: numpy's logits must match torch's on ``check_batch``
    observations from a random game (``ValueError`` otherwise)."""
    with requires("rllib", "exporting an RLlib policy", 'pip install "ray[rllib]"'):
        import torch
        from ray.rllib.core.columns import Columns

    if not env.scale_observations:
        raise ValueError("export needs a policy trained on scaled observations (scale_observations=True)")
    layers, activation = _linear_layers(module)
    policy = NumpyPolicy(layers, activation, env.scale, env.unbounded, name=Path(path).stem,
                         map_name=env.env.map_name, metadata={"source": "RLlib PPO (ActionMaskingTorchRLModule)"})
    rng = np.random.default_rng(0)
    raw_obs: list[np.ndarray] = []
    env.env.reset(seed=0)
    while len(raw_obs) < check_batch and not any(env.env.terminations.values()):
        o = env.env.observe(env.env.agent_selection)
        raw_obs.append(o["observation"])
        env.env.step(int(rng.choice(np.flatnonzero(o["action_mask"]))))
    raw = np.stack(raw_obs)
    batch = {Columns.OBS: {"observations": torch.from_numpy(scale_observation(raw, env.scale, env.unbounded)),
                           "action_mask": torch.ones(len(raw), E.NUM_ACTIONS)}}
    with torch.no_grad():
        torch_logits = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS].numpy()
    diff = float(np.abs(torch_logits - policy.logits(raw)).max())
    if not diff <= 1e-3:
        raise ValueError(f"exported policy's logits differ from the module's by {diff:.2g}")
    policy.save(path)
    return policy
