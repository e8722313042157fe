"""The value network in torch: observation scaling, a trunk, a win head over the seats present and a
VP-margin head (its numpy twin is :class:`concordia_env.agents.value_net.ValueNet`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from concordia_env._internal.extras import requires

with requires("train", "concordia_env.training.value"):
    import torch
    from torch import nn

from concordia_env import encoding
from concordia_env.agents.value_net import MARGIN_SCALE, ROWS, ValueNet
from concordia_env.board_features import board_features, feature_size


def mlp_trunk(hidden: Sequence[int], activation: str, dropout: float = 0.0,
              input_dropout: float = 0.0, extra_inputs: int = 0) -> tuple[nn.Sequential, int]:
    """The networks' shared trunk over the scaled observation (and ``extra_inputs`` features after
    it): ``Linear -> activation`` per width of ``hidden`` (each followed by dropout when
    ``dropout > 0``), and its output width. The layers are created in order, so a seeded torch
    initialises them the same way wherever it is built."""
    layers: list[nn.Module] = [nn.Dropout(input_dropout)] if input_dropout > 0 else []
    n_in = encoding.OBSERVATION_SIZE + extra_inputs
    for h in hidden:
        layers += [nn.Linear(n_in, h), getattr(nn, activation)()]
        if dropout > 0:
            layers.append(nn.Dropout(dropout))
        n_in = h
    return nn.Sequential(*layers), n_in


class ValueModel(nn.Module):
    """Scaling -> trunk -> win logits masked to present seats (+ margin head); see :mod:`.train`.

    With ``features`` (a :mod:`concordia_env.board_features` set) the model reads
    :func:`model_inputs`: the observation with those features appended, which it does not scale."""

    def __init__(self, scale: np.ndarray, unbounded: np.ndarray, hidden: Sequence[int], activation: str,
                 margin: bool, dropout: float = 0.0, input_dropout: float = 0.0,
                 features: str | None = None) -> None:
        super().__init__()
        self.register_buffer("scale", torch.as_tensor(scale))
        self.register_buffer("unbounded", torch.as_tensor(unbounded))
        # dropout only regularises training (identity in eval mode, absent from the numpy copy): with a
        # few hundred games a net otherwise memorises each game's setup and its winner
        self.features = features
        self.trunk, n_in = mlp_trunk(hidden, activation, dropout, input_dropout, feature_size(features))
        self.win = nn.Linear(n_in, ROWS)
        self.margin: nn.Linear | None = nn.Linear(n_in, ROWS) if margin else None
        self.activation = activation
        sl = encoding.OBSERVATION_LAYOUT["seat_present"]
        self.present = slice(sl.start, sl.stop)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """``(win log-shares with absent rows 0, margin / MARGIN_SCALE or None)``, plus absent rows masked."""
        x = obs.float()
        present = x[:, self.present] > 0
        h = self.hidden(x)
        logp = torch.log_softmax(self.win(h).masked_fill(~present, float("-inf")), dim=1)
        logp = logp.masked_fill(~present, 0.0)  # 0, not -inf: absent rows have target 0 and 0 * -inf is nan
        return logp, (self.margin(h) if self.margin is not None else None)

    def hidden(self, x: torch.Tensor) -> torch.Tensor:
        """The trunk's output for a batch of :func:`model_inputs`: the observation part scaled, the
        features as they are."""
        x = x.float()
        scale, unbounded = self.get_buffer("scale"), self.get_buffer("unbounded")  # typed as tensors
        n = encoding.OBSERVATION_SIZE
        o = torch.where(unbounded, torch.log1p(torch.clamp(x[:, :n], min=0.0)), x[:, :n] * scale)
        return self.trunk(torch.cat([o, x[:, n:]], dim=1) if x.shape[1] > n else o)

    def to_numpy(self, map_name: str, metadata: dict[str, Any]) -> ValueNet:
        def lay(m: nn.Linear) -> tuple[np.ndarray, np.ndarray]:
            return m.weight.detach().cpu().numpy().copy(), m.bias.detach().cpu().numpy().copy()
        trunk = [lay(m) for m in self.trunk if isinstance(m, nn.Linear)]
        heads = {"win": lay(self.win)}
        if self.margin is not None:
            heads["margin"] = lay(self.margin)
        return ValueNet(trunk, heads, self.activation, self.get_buffer("scale").cpu().numpy(),
                        self.get_buffer("unbounded").cpu().numpy(),
                        map_name=map_name, metadata=metadata, features=self.features)


def model_inputs(obs: np.ndarray, features: str | None) -> np.ndarray:
    """What a :class:`ValueModel` with ``features`` reads: the observations, with the board features
    appended when it has them (float32)."""
    obs = np.asarray(obs, np.float32)
    return obs if features is None else np.concatenate([obs, board_features(obs)], axis=1)


def torch_values(model: ValueModel, obs: np.ndarray) -> np.ndarray:
    """Win shares ``(B, 5)`` of the torch model (absent rows 0), for comparing with numpy."""
    with torch.no_grad():
        logp, _ = model(torch.as_tensor(model_inputs(obs, model.features)))
        present = torch.as_tensor(np.asarray(obs)[:, model.present] > 0)
        return torch.where(present, logp.exp(), 0.0).numpy()


def losses(model: ValueModel, obs: torch.Tensor, target: torch.Tensor, margin: torch.Tensor,
           margin_weight: float) -> tuple[torch.Tensor, torch.Tensor]:
    """``(total loss, win cross-entropy)`` of a batch."""
    logp, m = model(obs)
    ce = -(target * logp).sum(dim=1).mean()
    if m is None or margin_weight == 0:
        return ce, ce
    present = obs[:, model.present] > 0
    mse = (((m - margin / MARGIN_SCALE) ** 2) * present).sum() / present.sum()
    return ce + margin_weight * mse, ce


def predict(model: ValueModel, obs: np.ndarray, batch: int = 4096) -> np.ndarray:
    return np.concatenate([torch_values(model, obs[i:i + batch]) for i in range(0, len(obs), batch)])


def predict_margin(model: ValueModel, obs: np.ndarray, batch: int = 4096) -> np.ndarray:
    """The margin head's VP margins ``(B, 5)``, in slices of ``batch`` positions: one pass over a large
    validation set would hold several float32 copies of it (4-player Imperium at 10,000 games ran out of
    23 GB that way)."""
    with torch.no_grad():
        return np.concatenate([model(torch.as_tensor(model_inputs(obs[i:i + batch], model.features)))[1].numpy()
                               for i in range(0, len(obs), batch)]) * MARGIN_SCALE
