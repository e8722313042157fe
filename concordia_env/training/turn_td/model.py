"""The torch twin of a value network: warm start from a numpy network, training, export."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from concordia_env._internal.extras import requires

with requires("train", "concordia_env.training.turn_td"):
    import torch
    from torch import nn

from concordia_env import encoding
from concordia_env.agents.numpy_policy import check_players, observation_scaling
from concordia_env.agents.value_net import ValueNet
from concordia_env.game import get_game
from concordia_env.training.value.model import ValueModel, losses, model_inputs


def new_model(map_name: str, hidden: Sequence[int], activation: str = "ReLU",
              features: str | None = None) -> ValueModel:
    """A fresh model with win and margin heads over the map's observation scaling (and ``features``)."""
    scale, unbounded = observation_scaling(encoding.observation_bounds(get_game(map_name).tables)[1])
    return ValueModel(scale, unbounded, list(hidden), activation, margin=True, features=features)


def model_from_net(net: ValueNet, features: str | None = None) -> ValueModel:
    """A model holding ``net``'s trunk, win head and (if it has one) margin head; a net without a
    margin head gets a fresh one (its policy head, if any, is not used here).

    ``features``: the board features the model reads (default: the net's own). A net without
    them starts the model with zero weights on them, so it values every position as the net
    does until training moves them; ``ValueError`` for a net with other features."""
    features = net.features if features is None else features
    if net.features not in (None, features):
        raise ValueError(f"{net.path or 'the network'} reads {net.features!r} features, not {features!r}")
    hidden = [w.shape[0] for w, _ in net.trunk]
    model = ValueModel(net.scale, net.unbounded, hidden, net.activation, margin=True, features=features)
    linears = [m for m in model.trunk if isinstance(m, nn.Linear)]
    pairs = list(zip(linears, net.trunk)) + [(model.win, net.heads["win"])]
    if "margin" in net.heads and model.margin is not None:
        pairs.append((model.margin, net.heads["margin"]))
    with torch.no_grad():
        for layer, (w, b) in pairs:
            if layer.weight.shape[1] > w.shape[1]:  # the features' columns: zero
                layer.weight.zero_()
                layer.weight[:, :w.shape[1]].copy_(torch.as_tensor(w))
            else:
                layer.weight.copy_(torch.as_tensor(w))
            layer.bias.copy_(torch.as_tensor(b))
    return model


def fit(model: ValueModel, obs: np.ndarray, target: np.ndarray, margin: np.ndarray, *, epochs: int, lr: float,
        batch: int, margin_weight: float, seed: int, val_fraction: float = 0.1) -> dict[str, Any]:
    """Train ``model`` in place on the positions (games are not split: positions are shuffled);
    returns the train and held-out losses per epoch."""
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    order = rng.permutation(len(obs))
    n_val = int(len(obs) * val_fraction)
    val, tr = order[:n_val], order[n_val:]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    o, t, m = (torch.as_tensor(x) for x in (model_inputs(obs, model.features), target, margin))
    history = []
    for epoch in range(epochs):
        model.train()
        perm = tr[rng.permutation(len(tr))]
        total = 0.0
        for i in range(0, len(perm), batch):
            idx = torch.as_tensor(perm[i:i + batch])
            loss, _ = losses(model, o[idx], t[idx], m[idx], margin_weight)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx)
        model.eval()
        with torch.no_grad():
            vi = torch.as_tensor(val)
            val_loss, val_ce = losses(model, o[vi], t[vi], m[vi], margin_weight) if len(val) else (torch.zeros(()),) * 2
        history.append({"epoch": epoch + 1, "train_loss": round(total / max(len(tr), 1), 5),
                        "val_loss": round(float(val_loss), 5), "val_win_ce": round(float(val_ce), 5)})
    return {"positions": int(len(obs)), "held_out": int(n_val), "epochs": history}


def export(model: ValueModel, map_name: str, players: Sequence[int], metadata: dict[str, Any]) -> ValueNet:
    """The numpy network of ``model``, marked with its map and player counts."""
    net = model.to_numpy(map_name, metadata)
    net.players = check_players(list(players), "value net")
    return net
