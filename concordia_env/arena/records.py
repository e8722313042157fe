"""Game records: play one game between agents, save it as JSON, load it back and replay it exactly.

A record holds the setup (map, players, seed, intermediate scoring), the agent
names by seat, every action id in order and the result. The engine is fully
determined by the setup seed and the actions, so the actions alone rebuild the
game; :func:`verify_record` replays them and checks the stored result, which
catches corrupt or hand-edited files.

Record format (``"format": "concordia-env/game"``, ``"version": 1``)::

    {"format": "concordia-env/game", "version": 1,
     "map": "italia", "players": 2, "seed": 0, "intermediate_scoring": false,
     "agents": ["heuristic", "random"],          # agent name by seat
     "actions": [3, 17, ...],                    # action ids, in the order applied
     "result": {"scores": [112, 97],             # total VP by seat
                "vp_breakdown": [[...], [...]],  # VP by seat and god (state.GOD_COLUMNS order)
                "ranking": [0, 1],               # seats first to last, tie-break applied
                "winner": 0,                     # null when truncated
                "truncated": false,              # stopped at max_turns card plays
                "turns": 331}}                   # card plays (state.field("turn"))

A game left before its end (``concordia play`` after ``q`` or Ctrl-C) is saved
as a *partial* record: ``"truncated": true`` (so readers that know only finished
and truncated games treat it as stopped without a winner) and the optional
``"unfinished": true`` in ``result``, which says it stopped because a player left,
not at a card-play limit, and that ``concordia play --resume`` may continue it.
Records without ``"unfinished"`` are finished or truncated games.

A *forfeited* game (``play_game(..., forfeit=True)``, as tournaments play: an agent chose an
illegal action, or a bot crashed, hung or answered garbage) stops at the failed decision and is
saved with ``"truncated": true`` (no winner), the optional ``"forfeit": {"seat": k, "reason":
"..."}`` in ``result`` and a ranking with seat ``k`` last, the others by their VP at that point
with the rules' tie-break. Its actions end where seat ``k`` was to decide, which
:func:`verify_record` checks.

Agent seeds: the agent at seat ``k`` of a game with setup seed ``s`` is reset
with :func:`agent_seed` ``(s, k)``: the first 63 bits drawn from
``numpy.random.SeedSequence(s mod 2**64, spawn_key=(k,))`` (the k-th child of
``SeedSequence(s)``), so seats get independent streams and a game replays
identically from its seed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from concordia_env.data import MAP_NAMES
from concordia_env.encoding import observation
from concordia_env.engine import NUM_ACTIONS
from concordia_env.env import DEFAULT_MAX_TURNS, check_max_turns
from concordia_env.game import check_setup_args
from concordia_env.state import GOD_COLUMNS, GameState, IllegalActionError, new_game

from .._internal.files import write_text_atomic
from ..agents.base import Agent, AgentError
from .game_result import GameResult

RECORD_FORMAT = "concordia-env/game"
RECORD_VERSION = 1

#: called with (live state before the action, deciding seat, chosen action)
StepCallback = Callable[[GameState, int, int], None]


def agent_seed(game_seed: int, seat: int) -> int:
    """The seed the agent at ``seat`` gets in a game set up with ``game_seed`` (see the module doc)."""
    # SeedSequence takes only non-negative entropy; game seeds may be any int
    ss = np.random.SeedSequence(int(game_seed) % 2**64, spawn_key=(int(seat),))
    # 63 bits so that agents handing the seed to int64 consumers (numba, torch) cannot overflow
    return int(ss.generate_state(1, np.uint64)[0] >> np.uint64(1))


def _result(state: GameState, truncated: bool, unfinished: bool = False,
            forfeit: tuple[int, str] | None = None) -> dict[str, Any]:
    """The ``result`` block of a record for the state a game stopped in (``unfinished``: a
    partial record; ``forfeit``: ``(seat, reason)`` of a forfeited game; see the module doc)."""
    return GameResult.from_state(state, truncated, unfinished, forfeit).to_json()


#: the longest forfeit reason kept in a record (a bot's stderr can be long)
MAX_REASON = 500


def forfeit_reason(exc: BaseException) -> str:
    """An agent's failure as a record keeps it: one line of at most :data:`MAX_REASON` characters."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= MAX_REASON else text[:MAX_REASON - 3] + "..."


def play_game(map_name: str, num_players: int, seed: int, agents: Sequence[Agent], *,
              intermediate_scoring: bool = False, max_turns: int | None = DEFAULT_MAX_TURNS,
              on_step: StepCallback | None = None, history: list[int] | None = None,
              forfeit: bool = False) -> dict[str, Any]:
    """Play one game with ``agents[k]`` at seat ``k`` and return its record (see the module doc).

    Each agent is reset with :func:`agent_seed` ``(seed, k)`` first (an agent object
    sitting at several seats is reset once, with its first seat's seed). The
    deciding seat's agent gets its observation, the legal-action mask and the
    *live* state: agents must not mutate it (search agents clone it).
    ``on_step(state, seat, action)`` is called before each action is applied, so
    ``state.action_to_string(action)`` describes it. The game stops when it is
    over or when ``max_turns`` card plays have been made (truncated; None or 0:
    no limit). Raises :class:`AgentError` if an agent picks an illegal action or fails
    (a bot's :class:`~concordia_env.agents.bot.BotError`); with ``forfeit`` the game stops there
    instead and the record says the deciding seat forfeited (see the module doc). Every agent's
    ``close()`` is called when the game ends, however it ends (a bot's process is ended).

    ``history``, when given, is a list of action ids already played in this game (empty for a
    new one): they are applied first, without asking the agents, and every action played is
    appended to it, so a caller still has the actions so far when the game is interrupted
    (an exception from an agent or ``on_step``) and can save them with :func:`partial_record`.
    """
    state = new_game(map_name, num_players, seed, intermediate_scoring)
    if len(agents) != num_players:
        raise ValueError(f"{num_players} players need {num_players} agents, got {len(agents)}")
    limit = check_max_turns(max_turns)
    actions: list[int] = history if history is not None else []
    lost: tuple[int, str] | None = None
    try:
        _reset_agents(agents, seed)
        _replay_history(state, actions)
        truncated = _play_out(state, agents, actions, limit, on_step)
    except AgentError as exc:
        if not forfeit:
            raise
        truncated, lost = True, (int(state.current_player), forfeit_reason(exc))  # the state is before the failure
    finally:
        for agent in {id(a): a for a in agents}.values():
            agent.close()
    return {
        "format": RECORD_FORMAT,
        "version": RECORD_VERSION,
        "map": state.map_name,
        "players": int(num_players),
        "seed": int(seed),
        "intermediate_scoring": bool(intermediate_scoring),
        "agents": [getattr(a, "name", type(a).__name__) for a in agents],
        "actions": actions,
        "result": _result(state, truncated, forfeit=lost),
    }


def _reset_agents(agents: Sequence[Agent], seed: int) -> None:
    """Reset every agent with its seat's seed; an agent at several seats once, with its first seat's."""
    reset: set[int] = set()
    for seat, agent in enumerate(agents):
        if id(agent) not in reset:
            agent.reset(agent_seed(seed, seat))
            reset.add(id(agent))


def _replay_history(state: GameState, actions: Sequence[int]) -> None:
    """Apply the actions of a game to continue; ``ValueError`` naming the first illegal one."""
    for i, action in enumerate(actions):
        try:
            state.apply(action)
        except ValueError as exc:  # IllegalActionError, or an id outside the action space
            raise ValueError(f"action {i} ({action}) of the game to continue is illegal: {exc}") from None


def _play_out(state: GameState, agents: Sequence[Agent], actions: list[int], limit: int,
              on_step: StepCallback | None) -> bool:
    """Let the agents play until the game ends or ``limit`` card plays (0: none) are made, appending
    every action to ``actions``; whether the game was truncated."""
    turn = state.field("turn")  # a live view of the card-play counter
    while not state.is_terminal():
        if limit and int(turn) >= limit:
            return True
        seat = state.current_player
        agent = agents[seat]
        action = agent.act(observation(state, seat), state.legal_action_mask(), state)
        if on_step is not None:
            on_step(state, seat, action)
        try:
            state.apply(action)
        except IllegalActionError as exc:
            raise AgentError(f"agent {agent.name!r} at seat {seat} chose illegal action {action!r} "
                             f"(action #{len(actions)} of the game): {exc}") from None
        actions.append(int(action))
    return False


def partial_record(map_name: str, num_players: int, seed: int, agent_names: Sequence[str],
                   actions: Sequence[int], *, intermediate_scoring: bool = False) -> dict[str, Any]:
    """The record of a game left after ``actions`` (see the module doc): a finished game if
    they end it, else a partial record (``"truncated": true, "unfinished": true``).
    ``ValueError`` names an illegal action."""
    record = {
        "format": RECORD_FORMAT,
        "version": RECORD_VERSION,
        "map": map_name,
        "players": int(num_players),
        "seed": int(seed),
        "intermediate_scoring": bool(intermediate_scoring),
        "agents": list(agent_names),
        "actions": [int(a) for a in actions],
    }
    state = final_state({**record, "result": None})
    done = state.is_terminal()
    record["result"] = _result(state, truncated=False, unfinished=not done)
    return record


def is_unfinished(record: dict[str, Any]) -> bool:
    """Whether ``record`` is a partial record of a game left before its end."""
    return bool(record["result"].get("unfinished", False))


# ---------------------------------------------------------------- validation
def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def short_repr(x: Any, limit: int = 60) -> str:
    """``repr(x)`` cut to ``limit`` characters, for messages about values read from a file
    (which may be huge, deeply nested, or integers too long to print)."""
    try:
        text = repr(x)
    except (ValueError, RecursionError):
        return f"a {type(x).__name__} too large to show"
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _int_list(x: Any, length: int | None = None) -> bool:
    return isinstance(x, list) and all(_is_int(v) for v in x) and (length is None or len(x) == length)


def check_game_fields(obj: dict[str, Any], fields: Sequence[str], label: str = "") -> int:
    """Check the fields a game record and a data-set line share: every one of ``fields`` present, then
    the map, player count, seed, intermediate scoring, one agent name per seat and the action ids;
    ``ValueError`` names what is wrong (``label``, e.g. ``"record "``, starts the field's name). The
    player count."""
    missing = [k for k in fields if k not in obj]
    if missing:
        raise ValueError(f"{f'game {label}'.strip()} lacks field(s) {missing}")
    if obj["map"] not in MAP_NAMES:
        raise ValueError(f"{label}field 'map': unknown map {short_repr(obj['map'])}; allowed: {list(MAP_NAMES)}")
    if not _is_int(obj["players"]):
        raise ValueError(f"{label}field 'players' must be an int, got {short_repr(obj['players'])}")
    check_setup_args(obj["map"], obj["players"])
    n: int = obj["players"]
    if not _is_int(obj["seed"]):
        raise ValueError(f"{label}field 'seed' must be an int, got {short_repr(obj['seed'])}")
    if not isinstance(obj["intermediate_scoring"], bool):
        raise ValueError(f"{label}field 'intermediate_scoring' must be true or false, "
                         f"got {short_repr(obj['intermediate_scoring'])}")
    agents = obj["agents"]
    if not (isinstance(agents, list) and len(agents) == n and all(isinstance(a, str) for a in agents)):
        raise ValueError(f"{label}field 'agents' must be a list of {n} names, got {short_repr(agents)}")
    actions = obj["actions"]
    if not _int_list(actions):
        raise ValueError(f"{label}field 'actions' must be a list of ints")
    bad = next((i for i, a in enumerate(actions) if not 0 <= a < NUM_ACTIONS), None)
    if bad is not None:
        raise ValueError(f"{label}action {bad} is {actions[bad]}, outside the action ids 0..{NUM_ACTIONS - 1}")
    return n


def validate_record(record: Any) -> None:
    """Check a record's format, version, fields and their types (not the game itself:
    that is :func:`verify_record`). ``ValueError`` names what is wrong."""
    if not isinstance(record, dict):
        raise ValueError(f"a game record is a JSON object, got {type(record).__name__}")
    if record.get("format") != RECORD_FORMAT:
        raise ValueError(f"not a game record: format is {short_repr(record.get('format'))}, expected {RECORD_FORMAT!r}")
    version = record.get("version")
    if not (_is_int(version) and version == RECORD_VERSION):  # not true, 1.0 or "1"
        raise ValueError(f"unsupported game record version {short_repr(version)} "
                         f"(this reader knows version {RECORD_VERSION}, an integer)")
    n = check_game_fields(record, ("map", "players", "seed", "intermediate_scoring", "agents", "actions", "result"),
                          "record ")
    _validate_result(record["result"], n)


def _validate_result(result: Any, n: int) -> None:
    if not isinstance(result, dict):
        raise ValueError("record field 'result' must be an object")
    missing = [k for k in ("scores", "vp_breakdown", "ranking", "winner", "truncated", "turns") if k not in result]
    if missing:
        raise ValueError(f"record 'result' lacks field(s) {missing}")
    if not _int_list(result["scores"], n):
        raise ValueError(f"result 'scores' must be {n} ints, got {short_repr(result['scores'])}")
    vb = result["vp_breakdown"]
    if not (isinstance(vb, list) and len(vb) == n and all(_int_list(row, len(GOD_COLUMNS)) for row in vb)):
        raise ValueError(f"result 'vp_breakdown' must be {n} rows of {len(GOD_COLUMNS)} ints")
    if not (_int_list(result["ranking"], n) and sorted(result["ranking"]) == list(range(n))):
        raise ValueError(f"result 'ranking' must be an ordering of seats 0..{n - 1}, got {short_repr(result['ranking'])}")
    if not isinstance(result["truncated"], bool):
        raise ValueError(f"result 'truncated' must be true or false, got {short_repr(result['truncated'])}")
    w = result["winner"]
    if not (w is None or (_is_int(w) and 0 <= w < n)):
        raise ValueError(f"result 'winner' must be a seat 0..{n - 1} or null, got {short_repr(w)}")
    if not _is_int(result["turns"]) or result["turns"] < 0:
        raise ValueError(f"result 'turns' must be a non-negative int, got {short_repr(result['turns'])}")
    if "unfinished" in result:
        if not isinstance(result["unfinished"], bool):
            raise ValueError(f"result 'unfinished' must be true or false, got {short_repr(result['unfinished'])}")
        if result["unfinished"] and not result["truncated"]:
            raise ValueError("result 'unfinished' is true, so 'truncated' must be true too")
    if "forfeit" in result:
        check_forfeit(result["forfeit"], n)
        if not result["truncated"] or result.get("unfinished"):
            raise ValueError("result 'forfeit' needs 'truncated' true and no 'unfinished'")


def check_forfeit(forfeit: Any, n: int) -> tuple[int, str]:
    """A result's ``forfeit`` block as ``(seat, reason)``; ``ValueError`` unless it is
    ``{"seat": 0..n-1, "reason": "text"}``."""
    if not (isinstance(forfeit, dict) and set(forfeit) == {"seat", "reason"} and _is_int(forfeit["seat"])
            and 0 <= forfeit["seat"] < n and isinstance(forfeit["reason"], str)):
        raise ValueError(f"result 'forfeit' must be {{\"seat\": 0..{n - 1}, \"reason\": text}}, "
                         f"got {short_repr(forfeit)}")
    return forfeit["seat"], forfeit["reason"]


# ---------------------------------------------------------------- files
def save_record(record: dict[str, Any], path: str | os.PathLike) -> None:
    """Write ``record`` as JSON: one top-level field per line, so files diff and read well
    while the long action list stays on one line."""
    body = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v, separators=(', ', ': '))}" for k, v in record.items())
    write_text_atomic(path, "{\n" + body + "\n}\n")


def read_json_file(path: str | os.PathLike, what: str = "file") -> Any:
    """The JSON document in ``path``, with every way a damaged or hostile file can fail to
    parse turned into a ``ValueError`` that names the file: bytes that are not UTF-8, text that
    is not JSON, nesting too deep for the parser (``RecursionError``) and integers longer than
    Python converts from text. ``OSError`` if the file cannot be read. ``what`` names the kind
    of file in the messages."""
    name = os.fspath(path)
    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{what} {name} is not UTF-8 text: byte {exc.start} is {data[exc.start]:#04x}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{what} {name} is not valid JSON: {exc}") from None
    except RecursionError:
        raise ValueError(f"{what} {name}: JSON nested too deeply to read") from None
    except ValueError as exc:  # an integer over sys.get_int_max_str_digits() digits
        raise ValueError(f"{what} {name}: {exc}") from None


def load_record(path: str | os.PathLike) -> dict[str, Any]:
    """Read and validate a record written by :func:`save_record`.

    ``ValueError`` names the file and what is wrong (not UTF-8, not JSON, nested
    too deeply, an over-long integer, wrong format or version, a missing field, a
    wrong type); ``OSError`` if the file cannot be read."""
    record = read_json_file(path, "game record")
    try:
        validate_record(record)
    except RecursionError:  # a deeply nested value shown in a message
        raise ValueError(f"game record {os.fspath(path)}: a field is nested too deeply") from None
    except ValueError as exc:
        raise ValueError(f"game record {os.fspath(path)}: {exc}") from None
    return record


# ---------------------------------------------------------------- replay
def initial_state(record: dict[str, Any]) -> GameState:
    """The state a record's game starts from."""
    return new_game(record["map"], record["players"], record["seed"], record["intermediate_scoring"])


@dataclass(frozen=True)
class ReplayStep:
    """One replayed action: its index in the record, the seat that chose it, its
    description (in the state it was chosen in) and the state after it (a copy)."""

    index: int
    player: int
    action: int
    text: str
    state: GameState


def replay_steps(record: dict[str, Any], *, start: int = 0, describe: bool = True) -> Iterator[ReplayStep]:
    """Re-apply a record's actions to its setup, yielding a :class:`ReplayStep` per action
    from index ``start`` on (earlier ones are applied silently). ``ValueError`` names the
    first illegal action of a corrupt record."""
    state = initial_state(record)
    for i, action in enumerate(record["actions"]):
        player = state.current_player
        try:
            text = state.action_to_string(action) if describe and i >= start else ""
            state.apply(action)
        except ValueError as exc:  # IllegalActionError, or an id outside the action space
            raise ValueError(f"record action {i} ({action}) is illegal: {exc}") from None
        if i >= start:
            yield ReplayStep(i, player, int(action), text, state.clone())


def replay_states(record: dict[str, Any]) -> Iterator[tuple[int, GameState]]:
    """``(action, state after it)`` for every action of a record (each state a copy)."""
    for step in replay_steps(record, describe=False):
        yield step.action, step.state


def final_state(record: dict[str, Any]) -> GameState:
    """The state after a record's last action (``ValueError`` on an illegal action). Applied in
    place, without :func:`replay_steps`'s copy of every state: a resumed tournament replays
    every record it keeps (:func:`verify_record`)."""
    state = initial_state(record)
    for i, action in enumerate(record["actions"]):
        try:
            state.apply(action)
        except ValueError as exc:  # IllegalActionError, or an id outside the action space
            raise ValueError(f"record action {i} ({action}) is illegal: {exc}") from None
    return state


def verify_record(record: dict[str, Any]) -> GameState:
    """Validate, replay and check that the replay reproduces the recorded result exactly.

    Returns the final state; ``ValueError`` names the first mismatch (or the
    illegal action of a corrupt record)."""
    validate_record(record)
    state = final_state(record)
    recorded = record["result"]
    if not recorded["truncated"] and not state.is_terminal():
        raise ValueError(f"record says the game ended, but after its {len(record['actions'])} actions "
                         f"it is still running (player {state.current_player} to decide)")
    if recorded["truncated"] and state.is_terminal():
        raise ValueError("record says the game was truncated, but its actions finish it")
    lost = check_forfeit(recorded["forfeit"], record["players"]) if "forfeit" in recorded else None
    if lost is not None and state.current_player != lost[0]:
        raise ValueError(f"record says seat {lost[0]} forfeited, but after its actions seat "
                         f"{state.current_player} is to decide")
    replayed = _result(state, recorded["truncated"], recorded.get("unfinished", False), lost)
    for key, value in replayed.items():
        if recorded.get(key) != value:
            raise ValueError(f"record result {key!r} is {recorded[key]!r}, but the replay gives {value!r}")
    return state
