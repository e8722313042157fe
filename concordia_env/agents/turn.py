"""TurnAgent: chooses whole turns by a learned value of where they end.

At every decision of its own turn the agent lists the candidate turns
(:mod:`concordia_env.turns`: each card with its action completed, greedily and in the
variations the heuristic ranks next) and scores the position each ends in, as the deciding
seat sees it before the display is refilled:

    score = w * position value + win * V_win + margin * V_margin

``V_win`` is the network's share of a win for the decider (0..1), ``V_margin`` its predicted
final VP margin over the best other player; the position value is the heuristic's
(:func:`concordia_env.agents.heuristic.position_value`, in points of roughly VP), or with
``complete=net`` the completing network's own value of the end (a completion trained on the
heuristic's values, :mod:`concordia_env.training.turn_td.completion`, gives it in the same points). The
agent then plays the chosen turn's atomic actions one per call, as long as the game follows
the plan (a storehouse overflow decided by someone else in between makes it choose again
from there). Decisions out of turn (the good to keep) are scored the same way, one action
each. ``w=1, win=40`` with the released ``az`` network at turn ends is the blend that first
beat the heuristic; networks trained at turn boundaries
(:mod:`concordia_env.training.turn_td`) may play with ``w=0``, alone.

Only numpy at play time: one batch of at most ``candidates`` observations per decision.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from concordia_env import engine as E
from concordia_env.state import GameState
from concordia_env.turns import TurnGenerator, check_candidates, next_planned, turn_plan

from .az import finite, load_net, released_net
from .base import Agent, check_mask
from .heuristic import HeuristicAgent
from .numpy_policy import check_trained_for
from .value_net import ValueNet

#: ``net=`` values that are no file: the released ``az`` or turn-level network of the game's map, or none
NET_NAMES = ("az", "turn", "none")
POLICIES = Path(__file__).resolve().parent / "policies"


def released_turn_net_path(map_name: str) -> Path:
    """Where the turn-level network released for ``map_name`` lives (``.npz``; header beside it)."""
    return POLICIES / f"turn_{map_name}.npz"


def released_completion_path(map_name: str) -> Path:
    """Where the completion released for ``map_name`` lives: a network that values each step of a
    turn, trained on the heuristic's values (``.npz``; header beside it)."""
    return POLICIES / f"completion_{map_name}.npz"


def _released(path: Path, what: str, how: str) -> ValueNet:
    if not path.is_file():
        raise FileNotFoundError(f"no {what} released for this map at {path}; {how}")
    return load_net(path)


def released_turn_net(map_name: str) -> ValueNet:
    """The network trained at turn boundaries released for ``map_name``; ``FileNotFoundError``
    saying how to make one."""
    return _released(released_turn_net_path(map_name), "turn-level network",
                     f"train one with `python -m concordia_env.training.turn_td --map {map_name} ...` and "
                     f"play it with turn:net=STEM, or play turn:net=az")


def released_completion(map_name: str) -> ValueNet:
    """The value completion released for ``map_name`` (``completer=value``); ``FileNotFoundError``
    saying how to make one."""
    return _released(released_completion_path(map_name), "value completion",
                     f"train one with `python -m concordia_env.training.turn_td.completion --target value` "
                     f"on {map_name} records and play it with completer=STEM")


#: the candidates the agent scores by default: twice the env's, as they cost it little (about 2 ms
#: a decision) and won more games against mcts:iterations=1000 than 32 did
AGENT_CANDIDATES = 64
#: what completes a card's action into whole turns
COMPLETIONS = ("heuristic", "net")
#: ``completer=`` values that are no file: the released ``az`` network or value completion of the map
COMPLETER_NAMES = ("az", "value")


def _number(value: object, name: str, low: float = 0.0) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value) or value < low:
        raise ValueError(f"{name} must be a finite number >= {low:g}; got {value!r}")
    return float(value)


class TurnAgent(Agent):
    """Whole turns scored by a value network, optionally blended with the heuristic's value.

    Args:
        seed: seeds exploration and breaks exact ties.
        net: ``"az"`` (default) the network released for the game's map (the ``az`` agent's),
            ``"turn"`` the network trained at turn boundaries released for the map
            (:mod:`concordia_env.training.turn_td`),
            ``"none"`` no network (then ``w`` must be > 0: the position value of whole turns
            alone, the heuristic's or with ``complete=net`` the completing network's), the path of a value network file pair (``.npz`` + ``.json``,
            :class:`~concordia_env.agents.value_net.ValueNet`; e.g. one trained by
            :mod:`concordia_env.training.turn_td`), or a :class:`ValueNet`.
        w: weight of the position value (default 1; 0: the network alone): the heuristic's, or
            with ``complete=net`` the completing network's value of each end.
        win: weight of the network's win share (points per whole win).
        margin: weight of the network's VP margin (needs a network with a margin head).
        candidates: K, the most candidate turns scored per decision (default 64).
        complete: ``"heuristic"`` (default): the heuristic's step values complete the turns;
            ``"net"``: a network does: it ranks each step by its output for the position the step
            leads to (a policy head's logit, or a value), and that output for a turn's end is the
            position value ``w`` weighs, so no hand-written evaluation plays at all.
        completer: with ``complete=net``, the network that completes: ``"az"`` (default) the
            released ``az`` network of the game's map (its policy head learned from search on
            atomic moves), ``"value"`` the completion released for the map (trained to value each
            step as the heuristic does, :mod:`concordia_env.training.turn_td.completion`; with
            ``net=none:w=1`` it is ``net`` v2, a network that plays alone), or a file, e.g. one of
            :mod:`concordia_env.training.turn_td.completion`.
        explore: probability of playing a uniformly random candidate instead of the best
            (self-play exploration; 0 in play).

    ``ValueError`` names a bad option or a network of the wrong map, player count or heads.
    """

    name = "turn"

    def __init__(self, seed: int = 0, net: ValueNet | str | os.PathLike = "az", w: float = 1.0,
                 win: float = 40.0, margin: float = 0.0, candidates: int = AGENT_CANDIDATES,
                 explore: float = 0.0, complete: str = "heuristic",
                 completer: str | os.PathLike = "az") -> None:
        self.w = _number(w, "w")
        self.win = _number(win, "win")
        self.margin = _number(margin, "margin")
        self.explore = _number(explore, "explore")
        if self.explore > 1:
            raise ValueError(f"explore must be a probability from 0 to 1; got {explore!r}")
        if isinstance(net, ValueNet):
            self._net: ValueNet | None = net
            self._net_name = "given"
        elif isinstance(net, str) and net in NET_NAMES:
            self._net = None
            self._net_name = net
        elif isinstance(net, (str, os.PathLike)):
            self._net = load_net(net)
            self._net_name = "file"
        else:
            raise ValueError(f"net must be one of {', '.join(NET_NAMES)}, a file path or a ValueNet; got {net!r}")
        if self._net_name == "none" and self.w == 0:
            raise ValueError("net=none scores turns by the heuristic's value alone: give w > 0")
        if self._net is not None and self.margin > 0 and "margin" not in self._net.heads:
            raise ValueError(f"margin={margin} needs a network with a margin head; {self._source()} has none")
        if complete not in COMPLETIONS:
            raise ValueError(f"complete must be one of {', '.join(COMPLETIONS)}; got {complete!r}")
        self.complete = complete
        self._completer_name = completer if isinstance(completer, str) and completer in COMPLETER_NAMES else "file"
        self._completer = None if self._completer_name != "file" else load_net(completer)
        self._candidates = check_candidates(candidates)  # now, not at the first move
        self._generators: dict[str, TurnGenerator] = {}
        self.reset(seed)

    def _source(self) -> str:
        return str(self._net.path) if self._net is not None and self._net.path is not None else self._net_name

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._plan: list[tuple[np.ndarray, int]] = []

    # ------------------------------------------------------------ the network
    def net_for(self, map_name: str, num_players: int) -> ValueNet | None:
        """The network scoring turns in a game of ``map_name`` with ``num_players`` (None: no net)."""
        if self._net_name == "none":
            return None
        if self._net is not None:
            net = self._net
        else:
            net = released_turn_net(map_name) if self._net_name == "turn" else released_net(map_name)
        check_trained_for(net, map_name, num_players)
        return net

    def generator_for(self, map_name: str, num_players: int) -> TurnGenerator:
        key = f"{map_name}/{num_players}"
        if key not in self._generators:
            completion = None
            if self.complete == "net":
                completion = (self._completer if self._completer is not None
                              else released_completion(map_name) if self._completer_name == "value"
                              else released_net(map_name))
                check_trained_for(completion, map_name, num_players)
            self._generators[key] = TurnGenerator(map_name, self._candidates, completion=completion)
        return self._generators[key]

    def scores(self, position: GameState, gen: TurnGenerator, rows: np.ndarray) -> np.ndarray:
        """The score of each of ``gen``'s candidates (``rows``: their observations)."""
        n = gen.count
        net = self.net_for(position.game.name, int(position.s[E.O_NPLAYERS]))
        score = self.w * gen.values[:n]
        if net is not None and (self.win > 0 or self.margin > 0):
            if self.win > 0:
                score = score + self.win * finite(net, net.values(rows), "values")[:, 0]
            if self.margin > 0:
                score = score + self.margin * finite(net, net.margins(rows), "margins")[:, 0]
        return score

    # ------------------------------------------------------------ playing
    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: GameState | None = None) -> int:
        legal = check_mask(action_mask)
        mask = np.asarray(action_mask, dtype=np.int8)
        position = HeuristicAgent.position(observation, mask, state)
        planned = next_planned(self._plan, position.s)
        if planned is not None:
            return planned
        if legal.size == 1:
            return int(legal[0])
        return self._choose(position)

    def _choose(self, position: GameState) -> int:
        T = position.game.tables
        gen = self.generator_for(position.game.name, int(position.s[E.O_NPLAYERS]))
        n = gen.generate(position.s, T)
        seat = position.current_player
        rows = gen.observations(T, seat)[:n]
        if self.explore > 0 and self.rng.random() < self.explore:
            k = int(self.rng.integers(n))
        else:
            # tiny noise below any real difference: breaks exact ties by the seed
            k = int(np.argmax(self.scores(position, gen, rows) + self.rng.random(n) * 1e-9))
        sequence = gen.sequence(k)
        self._plan = turn_plan(position.s, T, sequence)[1:]
        return sequence[0]
