"""A learned completion: a network that ranks the steps inside a turn, distilled from the heuristic.

The candidates of a whole turn (:mod:`concordia_env.turns`) are completed by ranking the
options at each step of a card's action. This trains a network to do that ranking from the
positions the options lead to, so that ``turn:complete=net:completer=STEM`` plays with no
hand-written evaluation at all. Examples, from the given game records:

- every sampled step inside a turn (a decision after the card choice, in the player's own
  turn, with more than one option): the options' afterstates with the heuristic's value of each;
- with ``--card-choices P``, a share P of the card choices: the candidate turns (completed by
  the heuristic, or by ``--completer``: a network's own completions, so that it learns to rank
  the turns it will itself propose) with the heuristic's value of where each ends.

Two targets (``--target``):

- ``value`` (default): the network's output regresses the heuristic's value in points, relative
  to the other options of the same decision (squared error after subtracting each decision's
  mean). The network then ranks steps *and* values turn ends on the heuristic's scale, so the
  turn agent can weigh it (``w``) against a learned win share;
- ``best``: the softmax of the outputs over a decision's options is fitted to the heuristic's best
  options (its ties shared): a policy head.

The network has one ReLU trunk layer (what the candidate search computes): warm-started from
``--init`` (the released ``az`` network by default), or fresh with ``--hidden N`` units.

    python -m concordia_env.training.turn_td.completion --records GAMES --map italia --players 2 \\
        --hidden 512 --per-game 40 --card-choices 0.3 --epochs 8 --out runs/completion_italia/net

Reports the held-out tie-aware agreement with the heuristic and the mean value given up (in
the heuristic's points), overall and per decision phase.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
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
from concordia_env.agents.heuristic import position_value, step_values
from concordia_env.agents.numpy_policy import check_trained_for
from concordia_env.agents.value_net import ValueNet
from concordia_env.arena.records import initial_state, load_record
from concordia_env.state import GameState
from concordia_env.training.value.model import model_inputs
from concordia_env.turns import TurnGenerator, turn_goes_on

from .model import export, model_from_net, new_model

PROG = "python -m concordia_env.training.turn_td.completion"
#: a step value this close to the best is a tie
TIE = 1e-9
#: what the network's outputs are fitted to (module docstring)
TARGETS = ("value", "best")
#: candidate turns listed at a sampled card choice
CARD_CHOICE_CANDIDATES = 32


def _in_turn_choices(state: GameState, actions: Sequence[int]) -> list[int]:
    """The indices of ``actions`` (played from ``state``, left unchanged) that decide a step inside a
    turn with more than one option."""
    spots = []
    replay = state.clone()
    for i, action in enumerate(actions):
        if turn_goes_on(replay.s, replay.current_player) and int(replay.legal_action_mask().sum()) > 1:
            spots.append(i)
        replay.apply(action)
    return spots


def completion_data(record_files: Sequence[Path], per_game: int, seed: int, card_choices: float = 0.0,
                    completer: ValueNet | None = None, expect: tuple[str, int] | None = None,
                    ) -> dict[str, np.ndarray]:
    """The decisions of the records a completion learns from, one group of rows per decision.

    Up to ``per_game`` in-turn decisions of each game and, with probability ``card_choices``,
    each card choice (its candidate turns, completed by ``completer`` or else the heuristic).
    Rows: each option's afterstate or candidate end ``obs`` (float16: the observations are small
    whole numbers), ``value`` (the heuristic's value of it for the decider), ``group`` (the
    decision of each row), ``target`` (the heuristic's best options share 1); per decision:
    ``phase``. ``ValueError`` if no decision has a choice, or (with ``expect``, a map and a player
    count) for a record of another game."""
    rng = np.random.default_rng(seed)
    obs: list[np.ndarray] = []
    group: list[np.ndarray] = []
    target: list[np.ndarray] = []
    value: list[np.ndarray] = []
    phase: list[int] = []

    def add(rows: np.ndarray, v: np.ndarray, ph: int) -> None:
        best = (v >= v.max() - TIE).astype(np.float32)
        obs.append(rows.astype(np.float16))
        value.append(v.astype(np.float32))
        group.append(np.full(len(rows), len(phase), np.int64))
        target.append(best / best.sum())
        phase.append(ph)

    gens: dict[str, TurnGenerator] = {}
    for path in record_files:
        record = load_record(path)
        state = initial_state(record)
        T = state.game.tables
        if expect is not None and (state.map_name, int(state.s[E.O_NPLAYERS])) != expect:
            raise ValueError(f"{path}: a game of {state.map_name} with {int(state.s[E.O_NPLAYERS])} players; "
                             f"this completion is for {expect[0]} with {expect[1]}")
        enc = AfterstateEncoder(state.map_name)
        spots = _in_turn_choices(state, record["actions"])
        chosen = set(rng.choice(spots, size=min(per_game, len(spots)), replace=False).tolist()) if spots else set()
        gen = gens.setdefault(state.map_name, TurnGenerator(state.map_name, CARD_CHOICE_CANDIDATES,
                                                            completion=completer))
        vals = np.empty(E.NUM_ACTIONS, np.float64)
        tmp, tmask, vp = np.empty_like(state.s), np.empty(E.NUM_ACTIONS, np.int8), np.zeros(E.NGODS, np.int32)
        for i, action in enumerate(record["actions"]):
            p = state.current_player
            if i in chosen:
                mask = state.legal_action_mask().astype(np.int8)
                step_values(state.s, T, mask, state.s[E.O_CURRENT], vals, tmp, tmask, vp)
                add(enc.rows(state.s, T, mask, p), vals[np.flatnonzero(mask)], state.phase)
            elif card_choices > 0 and int(state.s[E.O_PHASE]) == E.PH_PLAY and rng.random() < card_choices:
                n = gen.generate(state.s, T)
                if n > 1:
                    ends = np.array([position_value(gen.states[k], T, p, vp) for k in range(n)])
                    add(gen.observations(T, p)[:n], ends, E.PH_PLAY)
            state.apply(action)
    if not obs:
        raise ValueError("no in-turn decision with a choice in the records given")
    return {"obs": np.concatenate(obs), "group": np.concatenate(group), "target": np.concatenate(target),
            "value": np.concatenate(value), "phase": np.asarray(phase, np.int64)}


class CompletionModel(nn.Module):
    """One ReLU trunk layer with a one-output head: an afterstate's logit or value.

    From ``init`` (its trunk, and its policy head if it has one) or, with ``hidden``, a fresh
    trunk of that many units over ``map_name``'s observations."""

    def __init__(self, init: ValueNet | None, hidden: int | None = None, map_name: str = "italia") -> None:
        super().__init__()
        self.value = new_model(map_name, [hidden]) if hidden else model_from_net(init)  # type: ignore[arg-type]
        self.policy = nn.Linear(self.value.win.in_features, 1)
        if not hidden and init is not None and init.has_policy:  # a completion continued
            w, b = init.heads["policy"]
            with torch.no_grad():
                self.policy.weight.copy_(torch.as_tensor(w))
                self.policy.bias.copy_(torch.as_tensor(b))

    def logits(self, obs: np.ndarray) -> torch.Tensor:
        """One output per afterstate observation row."""
        return self.policy(self.value.hidden(torch.as_tensor(model_inputs(obs, self.value.features))))[:, 0]


def group_log_softmax(logits: torch.Tensor, group: torch.Tensor, n_groups: int) -> torch.Tensor:
    """The log-softmax of ``logits`` within each group (rows of one decision)."""
    top = torch.full((n_groups,), -torch.inf).scatter_reduce(0, group, logits.detach(), "amax")
    z = logits - top[group]
    total = torch.zeros(n_groups).index_add(0, group, torch.exp(z))
    return z - torch.log(total[group])


def group_centred(x: torch.Tensor, group: torch.Tensor, n_groups: int) -> torch.Tensor:
    """``x`` less the mean of its group: what a ranking of one decision's options depends on."""
    count = torch.zeros(n_groups).index_add(0, group, torch.ones_like(x))
    return x - (torch.zeros(n_groups).index_add(0, group, x) / count)[group]


def loss_of(logits: torch.Tensor, rows: np.ndarray, data: dict[str, np.ndarray], group: torch.Tensor,
            n_groups: int, target: str) -> torch.Tensor:
    """The loss per decision: squared error of the group-centred values, or cross-entropy to the best."""
    if target == "value":
        value = torch.as_tensor(data["value"][rows])
        return ((group_centred(logits, group, n_groups) - group_centred(value, group, n_groups)) ** 2).sum() / n_groups
    return -(torch.as_tensor(data["target"][rows]) * group_log_softmax(logits, group, n_groups)).sum() / n_groups


def agreement(model: CompletionModel, data: dict[str, np.ndarray], groups: np.ndarray) -> dict[str, Any]:
    """Tie-aware agreement with the heuristic on ``groups`` and the heuristic's value given up by the
    network's first choice (mean, points): overall and per phase name."""
    hits: dict[str, list[tuple[bool, float]]] = {}
    starts = np.searchsorted(data["group"], np.arange(int(data["group"].max()) + 2))
    with torch.no_grad():
        for g in groups:
            rows = np.arange(starts[g], starts[g + 1])
            k = int(np.argmax(model.logits(data["obs"][rows]).numpy()))
            v = data["value"][rows]
            hits.setdefault(E.PHASE_NAMES[int(data["phase"][g])], []).append(
                (bool(data["target"][rows][k] > 0), float(v.max() - v[k])))

    def summary(pairs: list[tuple[bool, float]]) -> dict[str, Any]:
        return {"decisions": len(pairs), "agreement": round(float(np.mean([h for h, _ in pairs])), 4),
                "regret": round(float(np.mean([r for _, r in pairs])), 3)}

    return {**summary([x for v in hits.values() for x in v]),
            "by_phase": {k: summary(v) for k, v in sorted(hits.items())}}


def train(data: dict[str, np.ndarray], init: ValueNet | None, epochs: int, lr: float, batch: int, seed: int,
          target: str = "best", hidden: int | None = None, map_name: str = "italia",
          on_epoch: Callable[[dict[str, Any]], None] | None = None) -> tuple[CompletionModel, dict[str, Any]]:
    """Train the head and the trunk on 90% of the decisions (from ``init``, or fresh with ``hidden``
    units); report on the other 10% after each epoch (each epoch's line also to ``on_epoch``)."""
    if target not in TARGETS:
        raise ValueError(f"target must be one of {', '.join(TARGETS)}; got {target!r}")
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    n_groups = int(data["group"].max()) + 1
    order = rng.permutation(n_groups)
    held = order[: n_groups // 10]
    train_groups = order[n_groups // 10:]
    starts = np.searchsorted(data["group"], np.arange(n_groups + 1))
    model = CompletionModel(init, hidden, map_name)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    history = []
    for epoch in range(epochs):
        rng.shuffle(train_groups)
        total = 0.0
        for i in range(0, len(train_groups), batch):
            gs = np.sort(train_groups[i:i + batch])
            rows = np.concatenate([np.arange(starts[g], starts[g + 1]) for g in gs])
            local = torch.as_tensor(np.repeat(np.arange(len(gs)), starts[gs + 1] - starts[gs]))
            loss = loss_of(model.logits(data["obs"][rows]), rows, data, local, len(gs), target)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(gs)
        held_out = agreement(model, data, held)
        history.append({"epoch": epoch + 1, "loss": round(total / len(train_groups), 5),
                        "held_out": held_out["agreement"], "held_out_regret": held_out["regret"]})
        if on_epoch is not None:
            on_epoch(history[-1])
    return model, {"decisions": n_groups, "held_out": agreement(model, data, held), "epochs": history}


def to_net(model: CompletionModel, map_name: str, players: Sequence[int], metadata: dict[str, Any]) -> ValueNet:
    net = export(model.value, map_name, players, metadata)
    w = model.policy.weight.detach().numpy().copy()
    b = model.policy.bias.detach().numpy().copy()
    return ValueNet(net.trunk, {**net.heads, "policy": (w, b)}, net.activation, net.scale, net.unbounded,
                    map_name=map_name, metadata=metadata, players=list(players), features=net.features)


def report_size(data: dict[str, np.ndarray]) -> str:
    """How many decisions and rows a data set holds, and how many are card choices."""
    return (f"{len(data['phase']):,} decisions ({int((data['phase'] == E.PH_PLAY).sum()):,} card choices), "
            f"{len(data['obs']):,} rows")


def _share(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be a share from 0 to 1; got {text}")
    return value


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1; got {text}")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog=PROG, description="Distil the heuristic's steps inside turns into a network "
                                                       "that completes (and values) whole turns.")
    p.add_argument("--records", nargs="+", required=True, help="folders of game records (game_*.json)")
    p.add_argument("--map", required=True, choices=("imperium", "italia"))
    p.add_argument("--players", type=int, required=True)
    p.add_argument("--per-game", type=_positive, default=6, help="in-turn decisions sampled per game (default 6)")
    p.add_argument("--card-choices", type=_share, default=0.0, metavar="P",
                   help="share of the card choices whose candidate turns are examples too (default 0)")
    p.add_argument("--completer", default=None, metavar="STEM",
                   help="complete those candidate turns with this network (default: the heuristic)")
    p.add_argument("--target", choices=TARGETS, default="value",
                   help="value: regress the heuristic's values within each decision (default); "
                        "best: a policy head fitted to its best options")
    p.add_argument("--init", default="az", help="az (the released network) or a .npz path to start from")
    p.add_argument("--hidden", type=_positive, default=None, metavar="N",
                   help="start from a fresh trunk of N units instead of --init")
    p.add_argument("--epochs", type=_positive, default=6)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--batch", type=_positive, default=64, help="decisions per step (default 64)")
    p.add_argument("--threads", type=_positive, default=None, help="torch threads (default: torch's)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True, help="the network's stem (STEM.npz and STEM.json)")
    args = p.parse_args(argv)
    files = sorted(f for d in args.records for f in Path(d).glob("game_*.json"))
    if not files:
        print(f"{PROG}: error: no game_*.json in {', '.join(args.records)}", file=sys.stderr)
        return 2
    if args.threads:
        torch.set_num_threads(args.threads)
    try:
        init = None if args.hidden else released_net(args.map) if args.init == "az" else ValueNet.load(args.init)
        completer = None if args.completer is None else ValueNet.load(args.completer)
        if completer is not None:
            check_trained_for(completer, args.map, args.players)
        data = completion_data(files, args.per_game, args.seed, args.card_choices, completer,
                               expect=(args.map, args.players))
    except (ValueError, FileNotFoundError) as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    print(f"{report_size(data)}; training {args.epochs} epochs", file=sys.stderr, flush=True)
    model, report = train(data, init, args.epochs, args.lr, args.batch, args.seed, args.target, args.hidden,
                          args.map, on_epoch=lambda line: print(line, file=sys.stderr, flush=True))
    meta = {"trainer": "turn_td.completion", "games": len(files), "decisions": report["decisions"],
            "target": args.target, "hidden": args.hidden, "init": None if args.hidden else args.init,
            "per_game": args.per_game, "card_choices": args.card_choices, "completer": args.completer,
            "epochs": args.epochs, "held_out_agreement": report["held_out"]["agreement"],
            "held_out_regret": report["held_out"]["regret"], "by_phase": report["held_out"]["by_phase"]}
    to_net(model, args.map, [args.players], meta).save(args.out)
    print({k: report["held_out"][k] for k in ("decisions", "agreement", "regret")})
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
