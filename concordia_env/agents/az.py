"""Learned agents: search guided by a network (``az``) and the network alone (``net``).

Both play a :class:`~concordia_env.agents.value_net.ValueNet` with numpy only (no torch):

* :class:`AZAgent` (spec ``az``) is :class:`~concordia_env.agents.mcts.MCTSAgent`'s
  determinized PUCT search with the heuristic replaced by the network, as in AlphaZero and
  expert iteration. When the search adds a node it runs the node's position through the
  network: the ``win`` head gives every player's value of the leaf (no rollout). When it first
  searches from a node it encodes the afterstate of each of its legal actions
  (:mod:`concordia_env.agents.afterstates`) and runs them through the network as one batch: the
  ``policy`` head's logits, softmaxed over the legal actions, give the priors. The walk down the
  tree and the backup are compiled (:mod:`concordia_env.agents.tree`); an iteration comes back
  to Python only for this network work. A net without a policy
  head scores afterstates by the decider's win share instead (the log of it is the logit).
  ``leaf_mix`` blends in the heuristic's leaf value (:func:`concordia_env.agents.mcts.evaluate`)
  and ``prior_mix`` the heuristic's priors (:func:`concordia_env.agents.mcts.priors`, MCTS's own);
  finished and truncated games are scored as the rules score them, and a lead counts
  ``1 + end_stake`` times more once the end is fixed, exactly as in MCTS.
* :class:`NetAgent` (spec ``net``) plays the legal action whose afterstate has the highest
  policy logit: one batch through the network per decision, no search. Its policy stops
  buying cards and building houses late in a game, so a game it would stall hands its moves
  to the heuristic (:mod:`concordia_env.agents.stall`); a game shorter than ``stall_after``
  card plays per player is the network's alone.

Without ``net=PATH`` both play the network released with the package for the game's map,
``concordia_env/agents/policies/az_{map}.npz`` and ``.json`` (loaded once per process, chosen
at the first move of a game from the game's map), trained by
:mod:`concordia_env.training.expert_iteration`; ``net=v2`` plays ``azv2_{map}`` instead, values
trained by TD(lambda) on thousands of MCTS-100 self-play games (:mod:`concordia_env.training.value`;
``az:net=v2:simulations=1000`` is the strength table's ``azv2``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from concordia_env import engine as E
from concordia_env.encoding import encode, map_id
from concordia_env.env import DEFAULT_MAX_TURNS
from concordia_env.state import GameState
from concordia_env.turn_kernels import DEFAULT_DISCREPANCIES
from concordia_env.turns import next_planned, turn_plan

from .afterstates import AfterstateEncoder
from .az_search import iterate_net
from .base import Agent, check_mask
from .heuristic import HeuristicAgent
from .mcts import (
    END_STAKE,
    MAXP,
    MCTSAgent,
    SearchResult,
    SearchRoot,
    _stretch,
    _winner,
    check_fraction,
    end_is_fixed,
    evaluate,
    is_over,
    priors,
    resample_deck,
)
from .net_kernels import CompiledNet
from .numpy_policy import check_trained_for
from .policy import observed_map
from .stall import STALL_AFTER, STALL_ROUNDS, StallGuard
from .tree import NEEDS_PRIOR, NO_CHOICE, Node, backup, deck_samples, descend, no_choice_error
from .value_net import ValueNet

if TYPE_CHECKING:  # imported when a search over whole turns first runs
    from .turn_search import TurnBuffers, TurnTree

NUM_ACTIONS = E.NUM_ACTIONS
POLICIES = Path(__file__).resolve().parent / "policies"

NET_HEADS = ("policy", "win")
"""What :class:`NetAgent` chooses by: the policy head's afterstate logits, or the win head's share."""

_NETS: dict[str, ValueNet] = {}


#: ``net=`` values that name a network released with the package rather than a file: ``v1``, the
#: expert-iteration network (the default), and ``v2``, values trained by TD(lambda) on thousands of
#: MCTS-100 self-play games (:mod:`concordia_env.training.value`), each chosen by the game's map
RELEASES = {"v1": "az", "v2": "azv2"}


def released_net_path(map_name: str, release: str = "v1") -> Path:
    """Where the network ``release`` (a key of :data:`RELEASES`) of ``map_name`` lives (``.npz``;
    its header beside it)."""
    if release not in RELEASES:
        raise ValueError(f"unknown released network {release!r}; known: {', '.join(RELEASES)}")
    return POLICIES / f"{RELEASES[release]}_{map_name}.npz"


def load_net(path: str | os.PathLike) -> ValueNet:
    """The network at ``path`` (stem, ``.npz`` or ``.json``), loaded once per process."""
    key = str(Path(path).resolve().with_suffix(""))
    if key not in _NETS:
        _NETS[key] = ValueNet.load(path)
    return _NETS[key]


def released_net(map_name: str, release: str = "v1") -> ValueNet:
    """The network ``release`` (``v1``, the default, or ``v2``) released for ``map_name``;
    ``FileNotFoundError`` saying how to make one."""
    path = released_net_path(map_name, release)
    if not path.is_file():
        how = (f"`python -m concordia_env.training.expert_iteration --map {map_name} ...` and copy its best.npz/.json"
               if release == "v1" else
               f"`python -m concordia_env.training.value.train ... --export {path.with_suffix('')}`")
        raise FileNotFoundError(
            f"no released {release} network for map {map_name!r} at {path}; train one with {how} "
            f"there, or play a file with az:net=STEM / net:net=STEM")
    net = load_net(path)
    if net.map_name is not None and net.map_name != map_name:
        raise ValueError(f"{path.with_suffix('.json')}: the network released for {map_name!r} says it was "
                         f"trained on {net.map_name!r}")
    return net


def finite(net: ValueNet, values: np.ndarray, what: str) -> np.ndarray:
    """``values`` (the network's output), or ``ValueError`` naming the network if any is NaN or
    inf: a search must never compare such values (every comparison with NaN fails, and a
    search that cannot choose would never end). Loading refuses weights that could give them,
    but a net built in memory, or inputs past the trained range, still may."""
    if not np.isfinite(values).all():
        source = net.path if net.path is not None else repr(net)
        raise ValueError(f"{source}: the network gave non-finite {what} (NaN or inf); its weights or "
                         f"observation scaling are broken")
    return values


class _NetUser:
    """The network choice shared by the two agents: a given net or file, else the released one."""

    def _set_net(self, net: ValueNet | str | os.PathLike | None) -> None:
        self._release = "v1"
        if net is None or isinstance(net, ValueNet):
            self._net = net
        elif isinstance(net, str) and net in RELEASES:
            # a release name, not a file: the network is chosen by the game's map at its first move
            self._net, self._release = None, net
        elif isinstance(net, (str, os.PathLike)):
            try:
                self._net = load_net(net)
            except FileNotFoundError as exc:
                raise FileNotFoundError(f"{exc}; or name a network released with the package: "
                                        f"{', '.join(RELEASES)}") from None
        else:
            raise ValueError(f"net must be a ValueNet, a file path or a release name ({', '.join(RELEASES)}), "
                             f"got {type(net).__name__}")
        self._encoders: dict[str, AfterstateEncoder] = {}

    def net_for(self, map_name: str, num_players: int | None = None) -> ValueNet:
        """The network this agent plays on ``map_name`` with ``num_players`` players; ``ValueError``
        naming its file if it was trained for another map or player count."""
        net = self._net if self._net is not None else released_net(map_name, self._release)
        check_trained_for(net, map_name, num_players)
        return net

    def encoder_for(self, map_name: str) -> AfterstateEncoder:
        if map_name not in self._encoders:
            self._encoders[map_name] = AfterstateEncoder(map_name)
        return self._encoders[map_name]


def softmax_over(logits: np.ndarray, temperature: float) -> np.ndarray:
    """Softmax of ``logits / temperature`` (float64)."""
    z = np.asarray(logits, np.float64) / temperature
    z = np.exp(z - z.max())
    return z / z.sum()


def afterstate_logits(net: ValueNet, rows: np.ndarray, values: np.ndarray | None = None) -> np.ndarray:
    """The policy logits of afterstate observations ``rows``: the policy head's, or the log of the
    decider's win share (row 0 of the win head) for a net without one (``values``: its win shares
    when already computed)."""
    if net.has_policy:
        return net.policy_logits(rows)
    return win_logits(net.values(rows) if values is None else values)


def win_logits(shares: np.ndarray) -> np.ndarray:
    """The log of the decider's win share (column 0 of the win head) of each afterstate row."""
    return np.log(np.maximum(shares[:, 0].astype(np.float64), 1e-9))


class AZAgent(_NetUser, MCTSAgent):
    """Determinized PUCT search with a network's values and priors (see the module docstring).

    Args:
        seed: seeds the deck samples, noise and tie-breaks.
        net: a :class:`ValueNet`, the path of one, or the name of a network released with the
            package (``v1``, the default, or ``v2``), of the game's map (a name before a file of
            that name: give ``./v2`` for the file).
        simulations: search iterations per decision (default 200).
        ms: time budget per decision in milliseconds instead (then results depend on the machine).
        c_puct: exploration constant.
        prior_temperature: the priors are the softmax of the afterstate logits divided by it.
        leaf_mix: weight of the heuristic's leaf value blended with the network's (0: the network alone).
        prior_mix: weight of the heuristic's priors blended with the network's (0: the network's
            priors alone; 1, the default: MCTS's priors with the network's values). The released
            policy heads are weaker than the heuristic's priors (releases/ablation/README.md:
            against the heuristic in 2-player Italia the released Italia net won 15 of 80 games with
            its own priors and 18 of 20 with MCTS's), so the default leaves them out; expert
            iteration searches with ``prior_mix=0``, the priors it trains.
        temperature: the heuristic's softmax temperature, used when ``leaf_mix > 0``.
        compiled: with ``prior_mix=1``, run each simulation compiled from deck sample to backup
            (:mod:`concordia_env.agents.az_search`; the default); 0 runs the loop in Python with the
            network in numpy, as ``prior_mix < 1`` always does. Both make the same search but for
            the rounding of the network's sums (about 1e-7 in a value). A network with board
            features (:mod:`concordia_env.board_features`) always runs in numpy.
        turns: 0 (the default) searches atomic actions; ``K > 0`` searches whole turns, at most
            ``K`` candidates a decision (:mod:`concordia_env.agents.turn_search`): each simulation
            walks down whole turns and values a turn's end. It needs the compiled search
            (``compiled=1``, ``prior_mix=1``); the agent then plays the chosen turn's actions one
            per call without searching again while the game follows it.
        end_stake, max_turns, root_noise, root_noise_alpha, move_temperature: as for
            :class:`~concordia_env.agents.mcts.MCTSAgent` (with ``turns``, over the root's
            candidate turns).
    """

    name = "az"

    def __init__(self, seed: int = 0, net: ValueNet | str | os.PathLike | None = None, simulations: int = 200,
                 ms: float | None = None, c_puct: float = 1.5, prior_temperature: float = 1.0,
                 leaf_mix: float = 0.0, prior_mix: float = 1.0, temperature: float = 8.0,
                 end_stake: float = END_STAKE,
                 max_turns: int | None = DEFAULT_MAX_TURNS, root_noise: float = 0.0, root_noise_alpha: float = 0.3,
                 move_temperature: float = 0.0, compiled: bool = True, turns: int = 0) -> None:
        self._configure(simulations, ms, c_puct, end_stake, max_turns, root_noise, root_noise_alpha, move_temperature)
        if not isinstance(compiled, (bool, int)) or compiled not in (0, 1):
            raise ValueError(f"compiled must be 0 or 1, got {compiled!r}")
        self.compiled = bool(compiled)
        if isinstance(turns, bool) or not isinstance(turns, int) or not 0 <= turns <= NUM_ACTIONS:
            raise ValueError(f"turns must be an int from 0 (atomic actions) to {NUM_ACTIONS}, got {turns!r}")
        if turns and not (self.compiled and prior_mix == 1):
            raise ValueError("turns needs the compiled search: compiled=1 and prior_mix=1")
        self.turns = turns
        self._turns_now = False  # whether the search under way is over whole turns
        self._turn_tree: TurnTree | None = None  # made at the first search over whole turns
        self._turn_buffers: TurnBuffers | None = None
        for name, value in (("prior_temperature", prior_temperature), ("temperature", temperature)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"{name} must be a positive number, got {value!r}")
        self.prior_temperature, self.temperature = float(prior_temperature), float(temperature)
        self.leaf_mix = check_fraction("leaf_mix", leaf_mix)
        self.prior_mix = check_fraction("prior_mix", prior_mix)
        self.rollout = "net"
        self._set_net(net)
        self._leaf = np.zeros(MAXP)
        self._heuristic = np.zeros(MAXP)
        self._shares = np.zeros(MAXP)
        self._compiled_nets: dict[int, CompiledNet] = {}
        self._map = ""
        self._plan: list[tuple[np.ndarray, int]] = []
        self.reset(seed)

    @property
    def simulations(self) -> int:
        return self.iterations

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._plan = []

    def _move(self, state: GameState, legal: np.ndarray) -> int:
        """With ``turns``, the next action of the turn chosen last while the game follows it;
        else a new search (see :class:`MCTSAgent`)."""
        planned = next_planned(self._plan, state.s)
        return planned if planned is not None else super()._move(state, legal)

    def search(self, state: GameState) -> SearchResult:
        self._map = state.game.name
        self._active_net = self.net_for(self._map, state.num_players)
        self._encoder = self.encoder_for(self._map)
        self._map_index = map_id(self._map)
        if self._runs_compiled() and id(self._active_net) not in self._compiled_nets:
            self._compiled_nets[id(self._active_net)] = CompiledNet.of(self._active_net)
        if self.turns:
            return self._search_turns(state)
        return super().search(state)

    # ------------------------------------------------------------ whole turns
    def _search_turns(self, state: GameState) -> SearchResult:
        """The search over whole turns (:mod:`concordia_env.agents.turn_search`): the first action
        of the most visited candidate turn, the rest kept as the plan; ``visits`` counts each
        candidate's visits at its first atomic action."""
        from .turn_search import TurnBuffers, TurnTree

        if not self._runs_compiled():
            source = self._active_net.path if self._active_net.path is not None else "the network"
            raise ValueError(f"{source}: az:turns needs a network over the observation alone; it also reads "
                             f"{self._active_net.features!r} features")
        if int(state.legal_action_mask().sum()) == 1:
            return super().search(state)
        if self._turn_tree is None or self._turn_buffers is None:
            self._turn_tree, self._turn_buffers = TurnTree(self._tree.capacity, self.turns), TurnBuffers(self.turns)
        self._turns_now = True
        try:
            self._run(SearchRoot.of(state, state.legal_action_mask()))
        finally:
            self._turns_now = False
        tree, (turns, _) = self._tree, self._turn_parts()
        if not turns.count[0]:  # no whole turn within MAX_TURN_LEN actions (never seen): search atomic actions
            return super().search(state)
        ks, rows = tree.children(0)
        by_candidate = np.zeros(NUM_ACTIONS, np.int64)
        by_candidate[ks] = tree.visits[rows]
        sequence = turns.sequence(0, self._choose(by_candidate, ks, rows))
        visits = np.zeros(NUM_ACTIONS, np.int64)
        for j, row in zip(ks.tolist(), rows.tolist()):
            visits[turns.actions[0, j, 0]] += tree.visits[row]
        value = tree.value[0, :state.num_players] / max(int(tree.visits[0]), 1)
        self._plan = turn_plan(state.s, state.game.tables, sequence)[1:]
        return SearchResult(sequence[0], visits, value)

    def _runs_compiled(self) -> bool:
        """Whether this search's simulations run compiled: asked for, values only from the network,
        and a network over the observation alone."""
        return self.compiled and self.prior_mix == 1 and self._active_net.features is None

    def _new_node(self, s: np.ndarray, T: np.ndarray, mask: np.ndarray, root: bool = False) -> Node:
        """A node valued by the win head of its own observation; priors wait for its first search
        (:meth:`_ensure_prior`): most leaves of a search are never searched from, and their
        afterstates would be most of the cost."""
        if not root and is_over(s, self.max_turns):
            return self._tree.add(-1)
        p = int(s[E.O_CURRENT])
        n = int(s[E.O_NPLAYERS])
        row = self._encoder.out[:1]
        encode(s, T, self._map_index, p, row[0])
        values = finite(self._active_net, self._active_net.values(row), "values")
        # row k of the observation is seat (p + k) % n
        self._leaf[:] = 0.0
        for k in range(n):
            self._leaf[(p + k) % n] = values[0, k]
        return self._tree.add(p)

    def _root_prior_state(self, root_s: np.ndarray, blocks: list[tuple[int, int]]) -> np.ndarray:
        """A copy of the root with the undrawn cards reshuffled, as every simulation samples them:
        the afterstate of a purchase would otherwise show the net the true next display card,
        which no player knows (training encodes afterstates the same way)."""
        s = root_s.copy()
        resample_deck(s, blocks, self.rng)
        return s

    def _ensure_prior(self, node: Node, s: np.ndarray, T: np.ndarray, mask: np.ndarray) -> None:
        """Priors of ``node``: the softmax of its afterstates' logits, computed at its first search
        (searching whole turns: its candidate turns, with the heuristic's priors)."""
        if node.prior is not None:
            return
        if self._turns_now:
            from .turn_search import expand

            turns, buffers = self._turn_parts()
            turns.reserve(self._tree)
            expand(self._tree.arrays, turns.arrays, node.index, s, T, DEFAULT_DISCREPANCIES, buffers.arrays,
                   buffers.no_net, self._map_index)
            return
        prior = np.zeros(NUM_ACTIONS)
        if self.prior_mix < 1:  # prior_mix=1 needs no afterstates: the net's priors weigh nothing
            rows = self._encoder.rows(s, T, mask, node.player)
            logits = finite(self._active_net, afterstate_logits(self._active_net, rows), "policy logits")
            prior[np.flatnonzero(mask)] = softmax_over(logits, self.prior_temperature)
        if self.prior_mix > 0:
            heuristic = np.empty(NUM_ACTIONS)
            priors(s, T, mask, heuristic)
            prior = (1 - self.prior_mix) * prior + self.prior_mix * heuristic
        node.prior = prior

    def _iterate(self, root: SearchRoot, count: int) -> None:
        """Run ``count`` simulations from ``root``: compiled whole (:mod:`concordia_env.agents.az_search`)
        where the network gives only values, else :meth:`_iterate_python`."""
        if self._turns_now:
            self._iterate_turns(root, count)
            return
        if not self._runs_compiled():
            self._iterate_python(root, count)
            return
        decks = np.empty((count, E.NCARD), np.int32)
        deck_samples(root.s, root.starts, root.stops, self.rng, decks)
        net = self._compiled_nets[id(self._active_net)]
        ran = iterate_net(self._tree.arrays, self._tree.path, root.s, root.mask, root.T, self._s, self._mask,
                          self._result, decks, self.c_puct, self.max_turns, self.end_stake, self.leaf_mix,
                          self.temperature, self._map_index, self._encoder.out[0], net.arrays, self._shares,
                          self._leaf, self._heuristic)
        if ran < count:
            raise no_choice_error(type(self).__name__)

    def _turn_parts(self) -> tuple[TurnTree, TurnBuffers]:
        """The candidate store and scratch buffers of the search over whole turns under way."""
        if self._turn_tree is None or self._turn_buffers is None:
            raise RuntimeError("no search over whole turns is under way")
        return self._turn_tree, self._turn_buffers

    def _iterate_turns(self, root: SearchRoot, count: int) -> None:
        """Run ``count`` simulations over whole turns from ``root`` (expanded), compiled whole."""
        from .turn_search import iterate_turns

        turns, buffers = self._turn_parts()
        turns.reserve(self._tree)
        decks = np.empty((count, E.NCARD), np.int32)
        deck_samples(root.s, root.starts, root.stops, self.rng, decks)
        net = self._compiled_nets[id(self._active_net)]
        iterate_turns(self._tree.arrays, turns.arrays, self._tree.path, root.s, root.T, self._s, self._mask,
                      self._result, decks, self.c_puct, self.max_turns, self.end_stake, self.leaf_mix,
                      self.temperature, self._map_index, DEFAULT_DISCREPANCIES, buffers.arrays,
                      buffers.no_net, self._encoder.out[0], net.arrays, self._shares, self._leaf,
                      self._heuristic)

    def _add_root_noise(self, root: Node, mask: np.ndarray) -> None:
        """Dirichlet noise over the root's moves: its legal actions, or its candidate turns when
        searching them (candidate ``k`` is move ``k``)."""
        if self._turns_now:
            mask = (np.arange(NUM_ACTIONS) < self._turn_parts()[0].count[root.index]).astype(np.int8)
        super()._add_root_noise(root, mask)

    def _iterate_python(self, root: SearchRoot, count: int) -> None:
        """Run ``count`` iterations from ``root``: the walk down the tree is compiled
        (:func:`~concordia_env.agents.tree.descend`), and comes back here for the network's work,
        the priors of a node searched from for the first time and the value of the new leaf."""
        tree, s, mask, result, T = self._tree, self._s, self._mask, self._result, root.T
        arrays, path = tree.arrays, tree.path  # room was made for count more nodes: no reallocation
        # the deck samples of all the iterations at once: nothing else draws from rng meanwhile
        decks = np.empty((count, E.NCARD), np.int32)
        deck_samples(root.s, root.starts, root.stops, self.rng, decks)
        for deck in decks:
            s[:] = root.s
            s[E.O_DECK:E.O_DECK + E.NCARD] = deck
            mask[:] = root.mask
            path[0], depth = 0, 1
            a, depth = descend(arrays, s, T, mask, path, depth, self.c_puct)
            while a == NEEDS_PRIOR:
                self._ensure_prior(tree.node(int(path[depth - 1])), s, T, mask)
                a, depth = descend(arrays, s, T, mask, path, depth, self.c_puct)
            if a == NO_CHOICE:
                raise no_choice_error(type(self).__name__)
            if a >= 0:  # the walk left the tree by action a: a new leaf
                leaf = self._new_node(s, T, mask)
                tree.child[path[depth - 1], a] = leaf.index
                path[depth] = leaf.index
                depth += 1
            else:  # a finished game already in the tree
                leaf = tree.node(int(path[depth - 1]))
            self._leaf_value(s, T, mask, leaf, result)
            backup(arrays, path, depth, result)

    def _leaf_value(self, s: np.ndarray, T: np.ndarray, mask: np.ndarray, leaf: Node, out: np.ndarray) -> None:
        """Every player's value of the new leaf ``leaf`` at ``s`` into ``out``: the network's (and
        the heuristic's, with ``leaf_mix``), as the rules score a finished game."""
        n = int(s[E.O_NPLAYERS])
        out[:] = 0.0
        if is_over(s, self.max_turns):
            out[_winner(s, T)] = 1.0
        else:
            out[:] = self._leaf
            if self.leaf_mix > 0:
                evaluate(s, T, self.temperature, self._heuristic)
                out[:n] = (1 - self.leaf_mix) * out[:n] + self.leaf_mix * self._heuristic[:n]
        if end_is_fixed(s, self.max_turns):
            _stretch(out, n, 1.0 + self.end_stake)


class NetAgent(_NetUser, Agent):
    """The network alone: the legal action whose afterstate scores highest (see the module docstring).

    Args:
        seed: seeds the sampling of ``temperature > 0`` and breaks exact ties.
        net: a :class:`ValueNet`, the path of one, or a release name (``v1``, the default, or
            ``v2``): the network released for the game's map.
        temperature: 0 plays the best-scored action; ``t > 0`` samples from the softmax of logits / t.
        head: ``"policy"`` scores afterstates by the policy head's logits; ``"win"`` by the win
            head's share for the decider (one-ply greedy on the value, the policy head's ablation).
        stall_after, stall_rounds: the stall guard (:class:`~concordia_env.agents.stall.StallGuard`):
            once the game has lasted ``stall_after`` card plays per player and nobody has taken
            a card or built a house for ``stall_rounds`` rounds, the heuristic moves until
            somebody does. ``stall_rounds=0`` plays the network alone however long the game.
            The released networks never end a game against themselves without it.

    ``guarded`` counts the decisions of the current game handed to the heuristic.
    """

    name = "net"

    def __init__(self, seed: int = 0, net: ValueNet | str | os.PathLike | None = None,
                 temperature: float = 0.0, head: str = "policy", stall_after: int = STALL_AFTER,
                 stall_rounds: int = STALL_ROUNDS) -> None:
        if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not temperature >= 0:
            raise ValueError(f"temperature must be a number >= 0, got {temperature!r}")
        if head not in NET_HEADS:
            raise ValueError(f"head must be one of {', '.join(NET_HEADS)}, got {head!r}")
        self.temperature = float(temperature)
        self.head = head
        self._guard = StallGuard(stall_after, stall_rounds)
        self._stand_in = HeuristicAgent(seed)
        self._set_net(net)
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._guard.reset()
        self._stand_in.reset(seed)
        self.guarded = 0

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: GameState | None = None) -> int:
        legal = check_mask(action_mask)
        if legal.size == 1:
            return int(legal[0])
        mask = np.asarray(action_mask, dtype=np.int8)
        position = HeuristicAgent.position(observation, mask, state)
        if self._guard.stalled(position.s):
            self.guarded += 1
            return self._stand_in.act_in(position, mask)  # the position is checked already
        map_name = position.game.name
        assert map_name == observed_map(observation), "the observation's map one-hot names the game's map"
        rows = self.encoder_for(map_name).rows(position.s, position.game.tables, mask, position.current_player)
        net = self.net_for(map_name, int(position.s[E.O_NPLAYERS]))
        if self.head == "win":  # greedy on the value head: the decider's win share after each action
            logits = win_logits(finite(net, net.values(rows), "values"))
        else:
            logits = finite(net, afterstate_logits(net, rows), "policy logits")
        if self.temperature > 0:
            return int(legal[self.rng.choice(legal.size, p=softmax_over(logits, self.temperature))])
        # tiny noise below any real difference: breaks exact ties by the seed
        return int(legal[np.argmax(logits + self.rng.random(legal.size) * 1e-6)])

