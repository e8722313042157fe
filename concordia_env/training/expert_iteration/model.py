"""The torch model of expert iteration (:class:`ExItModel`) and its exchange of weights with the
numpy :class:`~concordia_env.agents.value_net.ValueNet` the agents play."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from concordia_env._internal.extras import requires

with requires("train", "concordia_env.training.expert_iteration"):
    import torch
    from torch import nn

from concordia_env import encoding
from concordia_env.agents.value_net import ROWS, ValueNet
from concordia_env.training.value.model import mlp_trunk


class ExItModel(nn.Module):
    """Observation scaling -> MLP trunk -> ``win`` head (5 logits) and ``policy`` head (1 logit)."""

    def __init__(self, scale: np.ndarray, unbounded: np.ndarray, hidden: Sequence[int], activation: str,
                 dropout: float = 0.0) -> None:
        super().__init__()
        self.register_buffer("scale", torch.as_tensor(np.asarray(scale, np.float32)))
        self.register_buffer("unbounded", torch.as_tensor(np.asarray(unbounded, bool)))
        self.trunk, n_in = mlp_trunk(hidden, activation, dropout)
        self.win = nn.Linear(n_in, ROWS)
        self.policy = nn.Linear(n_in, 1)
        self.activation = activation
        sl = encoding.OBSERVATION_LAYOUT["seat_present"]
        self.present = slice(sl.start, sl.stop)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        scale, unbounded = self.get_buffer("scale"), self.get_buffer("unbounded")
        return self.trunk(torch.where(unbounded, torch.log1p(torch.clamp(x, min=0.0)), x * scale))

    def forward(self, obs: torch.Tensor, after: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(win log-shares (B, 5) with absent rows 0, afterstate policy logits (N,))``: one trunk pass."""
        h = self.features(torch.cat([obs, after]))
        present = obs[:, self.present] > 0
        z = self.win(h[:len(obs)]).masked_fill(~present, float("-inf"))
        logp = torch.log_softmax(z, dim=1).masked_fill(~present, 0.0)
        return logp, self.policy(h[len(obs):])[:, 0]

    def linears(self) -> list[nn.Linear]:
        return [m for m in self.trunk if isinstance(m, nn.Linear)]

    def to_numpy(self, map_name: str, metadata: dict[str, Any]) -> ValueNet:
        def lay(m: nn.Linear) -> tuple[np.ndarray, np.ndarray]:
            return m.weight.detach().cpu().numpy().copy(), m.bias.detach().cpu().numpy().copy()

        return ValueNet([lay(m) for m in self.linears()], {"win": lay(self.win), "policy": lay(self.policy)},
                        self.activation, self.get_buffer("scale").cpu().numpy(),
                        self.get_buffer("unbounded").cpu().numpy(), map_name=map_name, metadata=metadata)

    def load_numpy(self, net: ValueNet) -> None:
        """Copy ``net``'s weights in (its policy head too, if it has one); ``ValueError`` if the trunks differ."""
        mine = self.linears()
        if [w.shape for w, _ in net.trunk] != [tuple(m.weight.shape) for m in mine] \
                or net.activation != self.activation:
            raise ValueError(f"network {net!r} has another architecture than {self.activation} "
                             f"{[m.weight.shape[0] for m in mine]}")
        pairs = list(zip(mine, net.trunk)) + [(self.win, net.heads["win"])]
        if "policy" in net.heads:
            pairs.append((self.policy, net.heads["policy"]))
        with torch.no_grad():
            for m, (w, b) in pairs:
                m.weight.copy_(torch.as_tensor(w))
                m.bias.copy_(torch.as_tensor(b))
