"""A learned completion: a policy head that ranks the steps inside a turn, distilled from the heuristic.

The candidates of a whole turn (:mod:`concordia_env.turns`) are completed by ranking the
options at each step of a card's action. This trains a network to do that ranking from the
positions the options lead to, so that ``turn:w=0:complete=net:completer=STEM`` plays with no
hand-written evaluation at all: every step inside a turn of the given self-play records (the
decisions after the card choice, in the player's own turn, with more than one option) is a
training example, the target the heuristic's best options (its ties shared), the prediction the
softmax of the policy head's logits over the options' afterstates. The network has one ReLU
trunk layer (what the candidate search computes), warm-started from ``--init``.

    python -m concordia_env.training.turn_td.completion --records runs/turn_italia/round_03/games \\
        --map italia --players 2 --out runs/completion_italia/net

Reports the held-out tie-aware agreement with the heuristic, overall and per decision phase.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from concordia_env._internal.extras import requires

with requires("train", "concordia_env.training.turn_td"):
    import torch
    from torch import nn

from concordia_env import engine as E
from concordia_env.agents.afterstates import AfterstateEncoder
from concordia_env.agents.az import released_net
from concordia_env.agents.heuristic import step_values
from concordia_env.agents.value_net import ValueNet
from concordia_env.arena.records import initial_state, load_record
from concordia_env.training.value.model import model_inputs
from concordia_env.turns import turn_goes_on

from .model import export, model_from_net

PROG = "python -m concordia_env.training.turn_td.completion"
#: a step value this close to the best is a tie
TIE = 1e-9


def completion_data(record_files: Sequence[Path], per_game: int, seed: int) -> dict[str, np.ndarray]:
    """Up to ``per_game`` in-turn decisions of each game: their options' afterstates ``obs``
    (float16: the observations are small whole numbers), ``group`` (the decision of each row),
    ``target`` (the heuristic's best options share 1) and ``phase`` per decision."""
    rng = np.random.default_rng(seed)
    obs, group, target, phase = [], [], [], []
    g = 0
    for path in record_files:
        record = load_record(path)
        state = initial_state(record)
        T = state.game.tables
        enc = AfterstateEncoder(state.map_name)
        spots = []
        replay = state.clone()
        for i, action in enumerate(record["actions"]):
            p = replay.current_player
            if turn_goes_on(replay.s, p) and int(replay.legal_action_mask().sum()) > 1:
                spots.append(i)
            replay.apply(action)
        chosen = set(rng.choice(spots, size=min(per_game, len(spots)), replace=False).tolist()) if spots else set()
        vals = np.empty(E.NUM_ACTIONS, np.float64)
        tmp, tmask, vp = np.empty_like(state.s), np.empty(E.NUM_ACTIONS, np.int8), np.zeros(E.NGODS, np.int32)
        for i, action in enumerate(record["actions"]):
            if i in chosen:
                mask = state.legal_action_mask().astype(np.int8)
                p = state.current_player
                rows = enc.rows(state.s, T, mask, p)
                step_values(state.s, T, mask, state.s[E.O_CURRENT], vals, tmp, tmask, vp)
                v = vals[np.flatnonzero(mask)]
                best = (v >= v.max() - TIE).astype(np.float32)
                obs.append(rows.astype(np.float16))
                group.append(np.full(len(rows), g, np.int64))
                target.append(best / best.sum())
                phase.append(state.phase)
                g += 1
            state.apply(action)
    if not obs:
        raise ValueError("no in-turn decision with a choice in the records given")
    return {"obs": np.concatenate(obs), "group": np.concatenate(group), "target": np.concatenate(target),
            "phase": np.asarray(phase, np.int64)}


class CompletionModel(nn.Module):
    """A warm-started value model with a policy head (one logit per afterstate)."""

    def __init__(self, net: ValueNet) -> None:
        super().__init__()
        self.value = model_from_net(net)
        self.policy = nn.Linear(self.value.win.in_features, 1)

    def logits(self, obs: np.ndarray) -> torch.Tensor:
        """One logit per afterstate observation row."""
        return self.policy(self.value.hidden(torch.as_tensor(model_inputs(obs, self.value.features))))[:, 0]


def group_log_softmax(logits: torch.Tensor, group: torch.Tensor, n_groups: int) -> torch.Tensor:
    """The log-softmax of ``logits`` within each group (rows of one decision)."""
    top = torch.full((n_groups,), -torch.inf).scatter_reduce(0, group, logits.detach(), "amax")
    z = logits - top[group]
    total = torch.zeros(n_groups).index_add(0, group, torch.exp(z))
    return z - torch.log(total[group])


def agreement(model: CompletionModel, data: dict[str, np.ndarray], groups: np.ndarray) -> dict[str, Any]:
    """Tie-aware agreement with the heuristic on ``groups``: overall and per phase name."""
    hits: dict[str, list[bool]] = {}
    with torch.no_grad():
        for g in groups:
            rows = np.flatnonzero(data["group"] == g)
            logit = model.logits(data["obs"][rows]).numpy()
            hits.setdefault(E.PHASE_NAMES[int(data["phase"][g])], []).append(
                bool(data["target"][rows][int(np.argmax(logit))] > 0))
    every = [h for v in hits.values() for h in v]
    return {"decisions": len(every), "agreement": round(float(np.mean(every)), 4),
            "by_phase": {k: {"decisions": len(v), "agreement": round(float(np.mean(v)), 4)}
                         for k, v in sorted(hits.items())}}


def train(data: dict[str, np.ndarray], init: ValueNet, epochs: int, lr: float, batch: int, seed: int
          ) -> tuple[CompletionModel, dict[str, Any]]:
    """Train the policy head (and the trunk) on 90% of the decisions; report on the other 10%."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    n_groups = int(data["group"].max()) + 1
    order = rng.permutation(n_groups)
    held = order[: n_groups // 10]
    train_groups = order[n_groups // 10:]
    starts = np.searchsorted(data["group"], np.arange(n_groups + 1))
    model = CompletionModel(init)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    history = []
    for epoch in range(epochs):
        rng.shuffle(train_groups)
        total = 0.0
        for i in range(0, len(train_groups), batch):
            gs = np.sort(train_groups[i:i + batch])
            rows = np.concatenate([np.arange(starts[g], starts[g + 1]) for g in gs])
            local = np.repeat(np.arange(len(gs)), starts[gs + 1] - starts[gs])
            logp = group_log_softmax(model.logits(data["obs"][rows]),
                                     torch.as_tensor(local), len(gs))
            loss = -(torch.as_tensor(data["target"][rows]) * logp).sum() / len(gs)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(gs)
        history.append({"epoch": epoch + 1, "loss": round(total / len(train_groups), 5),
                        "held_out": agreement(model, data, held)["agreement"]})
    return model, {"decisions": n_groups, "held_out": agreement(model, data, held), "epochs": history}


def to_net(model: CompletionModel, map_name: str, players: Sequence[int], metadata: dict[str, Any]) -> ValueNet:
    net = export(model.value, map_name, players, metadata)
    w = model.policy.weight.detach().numpy().copy()
    b = model.policy.bias.detach().numpy().copy()
    return ValueNet(net.trunk, {**net.heads, "policy": (w, b)}, net.activation, net.scale, net.unbounded,
                    map_name=map_name, metadata=metadata, players=list(players), features=net.features)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog=PROG, description="Distil the heuristic's in-turn steps into a policy head.")
    p.add_argument("--records", nargs="+", required=True, help="folders of game records (game_*.json)")
    p.add_argument("--map", required=True, choices=("imperium", "italia"))
    p.add_argument("--players", type=int, required=True)
    p.add_argument("--per-game", type=int, default=6, help="in-turn decisions sampled per game (default 6)")
    p.add_argument("--init", default="az", help="az (the released network) or a .npz path")
    p.add_argument("--epochs", type=int, default=6)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--batch", type=int, default=64, help="decisions per step (default 64)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True, help="the network's stem (STEM.npz and STEM.json)")
    args = p.parse_args(argv)
    files = sorted(f for d in args.records for f in Path(d).glob("game_*.json"))
    if not files:
        print(f"{PROG}: error: no game_*.json in {', '.join(args.records)}", file=sys.stderr)
        return 2
    try:
        init = released_net(args.map) if args.init == "az" else ValueNet.load(args.init)
        data = completion_data(files, args.per_game, args.seed)
    except (ValueError, FileNotFoundError) as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    model, report = train(data, init, args.epochs, args.lr, args.batch, args.seed)
    meta = {"trainer": "turn_td.completion", "games": len(files), "decisions": report["decisions"],
            "held_out_agreement": report["held_out"]["agreement"]}
    to_net(model, args.map, [args.players], meta).save(args.out)
    print(report["held_out"])
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
