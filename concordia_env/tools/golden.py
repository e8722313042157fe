"""Golden playthroughs: ``python -m concordia_env.tools.golden --write|--check --dir tests/golden``.

Behaviour pinned before the rules core is refactored (issue 15): for every map
and player count, a few seeded games played by the package's own agents are
stored in ``tests/golden/`` with every action, its name, and a digest of the
*whole* state after it, OpenSpiel-style. A refactor that keeps the rules must
reproduce every line; ``--check`` replays the games and prints, per game, the
first line that differs (game, step, action, expected and got), exiting 1.

Games (:func:`golden_games`), per (map, players): ``random`` (every seat the
random agent, seed 0), ``heuristic`` (every seat the heuristic agent, seed 1)
and ``mixed`` (heuristic and random seats alternating, intermediate scoring on,
seed 2). All are played to the end. The agent at seat ``k`` is built with
``make_agent(spec)`` and reset with ``arena.records.agent_seed(seed, k)``, and
decides from ``act(observation(state, k), state.legal_action_mask(), state)``,
as in ``arena.records.play_game``.

File format (one gzip-compressed JSON-lines file per game, ``NAME.jsonl.gz``,
written with gzip mtime 0 so the same games give the same bytes):

* line 1, the header: ``format``, ``version``, ``generated_by`` (the command
  and how games are played), the setup (``map``, ``players``, ``seed``,
  ``intermediate_scoring``, ``agents`` by seat), ``digest`` (how digests are
  made), ``fields`` (what each step key means), ``tables`` (digest of the
  map's static tables) and ``initial_state`` (digest of the state before the
  first action);
* one line per action: ``step``, ``seat`` (who decided), ``legal`` (number of
  legal actions and digest of their ids), ``obs`` (digest of every seat's
  observation), ``action`` and ``name`` (``state.action_to_string``), all
  before the action; then ``state`` (digest of the whole flat state),
  ``turn``, ``phase`` and ``vp`` (every seat's score as final scoring would
  count it now), all after it; ``changed`` names every state field (of
  ``engine.STATE_FIELDS``) the action changed, each with a short digest of
  its new values, and ``obs_changed`` every observation field (of
  ``encoding.OBSERVATION_FIELDS``, all seats together) that differs from the
  previous step's, so that a divergence names the field that went wrong;
* the last line, ``{"result": ...}``: steps, final scores, VP by god, ranking,
  winner and card plays.

A digest is the first 16 hex characters of the SHA-256 of an array's values as
little-endian bytes (int32 for states and action ids, float32 for observations);
a field's digest keeps the first 8.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import sys
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._internal.files import write_bytes_atomic
from ..agents.base import Agent, make_agent
from ..arena.game_result import GameResult
from ..arena.records import agent_seed
from ..data import MAP_NAMES, load_map
from ..encoding import OBSERVATION_FIELDS, OBSERVATION_LAYOUT, observation
from ..rules.layout import STATE_FIELDS, field_view
from ..state import GameState, new_game

GOLDEN_FORMAT = "concordia-env/golden"
GOLDEN_VERSION = 2
#: hex characters kept of each SHA-256 digest (64 bits)
DIGEST_CHARS = 16
#: hex characters kept of a single field's digest: enough to name the field that changed
FIELD_DIGEST_CHARS = 8
SUFFIX = ".jsonl.gz"
#: safety bound: a game still running after this many actions is an error, not an endless loop
MAX_STEPS = 20_000

GENERATED_BY = (
    "python -m concordia_env.tools.golden --write; the agent at seat k is make_agent(spec) reset with "
    "concordia_env.arena.records.agent_seed(seed, k) and decides with act(observation(state, k), "
    "state.legal_action_mask(), state); the game is played to the end"
)
DIGEST_DOC = (f"first {DIGEST_CHARS} hex characters of sha256 of the array's values as little-endian bytes "
              "(int32 states and action ids, float32 observations)")
FIELDS_DOC = {
    "step": "index of the action in the game, from 0",
    "seat": "the deciding seat (state.current_player) before the action",
    "legal": "[number of legal actions, digest of their ids] before the action",
    "obs": "digest of the observations of seats 0..n-1, concatenated, before the action",
    "action": "the action id applied",
    "name": "state.action_to_string(action) before the action",
    "state": "digest of the whole flat int32 state after the action",
    "turn": "card plays so far (state field 'turn') after the action",
    "phase": "decision phase name after the action",
    "vp": "VP of every seat as final scoring would count them, after the action",
    "changed": "{state field: digest of its new values} for every state field the action changed",
    "obs_changed": "{observation field: digest over all seats} for every observation field that differs "
                   "from the previous step's (every field at step 0)",
}


@dataclass(frozen=True)
class GoldenGame:
    """One golden playthrough: its setup and the agent spec of every seat."""

    map: str
    players: int
    kind: str  # "random", "heuristic" or "mixed"
    seed: int
    agents: tuple[str, ...]
    intermediate_scoring: bool = False

    @property
    def name(self) -> str:
        """File stem, e.g. ``italia_2p_random``."""
        return f"{self.map}_{self.players}p_{self.kind}"

    @property
    def filename(self) -> str:
        return self.name + SUFFIX


def golden_games() -> list[GoldenGame]:
    """Every golden game: random, heuristic and mixed for each map and allowed player count."""
    games = []
    for map_name in MAP_NAMES:
        for n in load_map(map_name).players:
            games.append(GoldenGame(map_name, n, "random", 0, ("random",) * n))
            games.append(GoldenGame(map_name, n, "heuristic", 1, ("heuristic",) * n))
            mixed = tuple("heuristic" if k % 2 == 0 else "random" for k in range(n))
            games.append(GoldenGame(map_name, n, "mixed", 2, mixed, intermediate_scoring=True))
    return games


# ---------------------------------------------------------------- digests
def digest(values: np.ndarray) -> str:
    """The first :data:`DIGEST_CHARS` hex characters of the SHA-256 of ``values``' bytes in
    little-endian order. Only int32 and float32 arrays are taken (``ValueError`` otherwise), so
    a digest never depends on an implicit conversion."""
    arr = np.asarray(values)
    if f"{arr.dtype.kind}{arr.dtype.itemsize}" not in ("i4", "f4"):
        raise ValueError(f"digest takes int32 or float32 arrays, got {arr.dtype}")
    data = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<")).tobytes()
    return hashlib.sha256(data).hexdigest()[:DIGEST_CHARS]


def state_digest(state: GameState | np.ndarray) -> str:
    """Digest of the whole flat state array (every field of ``engine.STATE_FIELDS``)."""
    s = state.s if isinstance(state, GameState) else np.asarray(state)
    if s.ndim != 1 or s.dtype != np.int32:
        raise ValueError(f"a state is a flat int32 array, got {s.dtype} of shape {s.shape}")
    return digest(s)


def _field_digest(values: np.ndarray) -> str:
    return digest(values)[:FIELD_DIGEST_CHARS]


def state_field_digests(state: GameState) -> dict[str, str]:
    """A short digest of every state field, by its name in ``engine.STATE_FIELDS``."""
    return {name: _field_digest(field_view(state.s, name)) for name, _ in STATE_FIELDS}


def observation_field_digests(observations: np.ndarray) -> dict[str, str]:
    """A short digest of every observation field over all seats, from ``(seats, OBSERVATION_SIZE)``."""
    return {name: _field_digest(np.ascontiguousarray(observations[:, OBSERVATION_LAYOUT[name]]))
            for name, _, _ in OBSERVATION_FIELDS}


def _changed(before: dict[str, str], after: dict[str, str]) -> dict[str, str]:
    return {name: d for name, d in after.items() if before.get(name) != d}


# ---------------------------------------------------------------- playing
def _header(game: GoldenGame, state: GameState) -> dict[str, Any]:
    return {
        "format": GOLDEN_FORMAT, "version": GOLDEN_VERSION, "generated_by": GENERATED_BY,
        "game": game.name, "map": game.map, "players": game.players, "seed": game.seed,
        "intermediate_scoring": game.intermediate_scoring, "agents": list(game.agents),
        "digest": DIGEST_DOC, "fields": FIELDS_DOC,
        "tables": digest(state.game.tables), "initial_state": state_digest(state),
    }


def _result(state: GameState, steps: int) -> dict[str, Any]:
    end = GameResult.from_state(state, truncated=False).to_json()
    return {"result": {"steps": steps, **{k: end[k] for k in ("scores", "vp_breakdown", "ranking", "winner", "turns")}}}


def play(game: GoldenGame) -> Iterator[dict[str, Any]]:
    """The lines of ``game``'s golden file, produced lazily (a check stops at the first difference):
    the header, one line per action, and the result. ``RuntimeError`` past :data:`MAX_STEPS`."""
    state = new_game(game.map, game.players, game.seed, game.intermediate_scoring)
    agents: list[Agent] = [make_agent(spec) for spec in game.agents]
    for seat, agent in enumerate(agents):
        agent.reset(agent_seed(game.seed, seat))
    yield _header(game, state)
    step = 0
    fields: dict[str, str] = state_field_digests(state)
    obs_fields: dict[str, str] = {}
    while not state.is_terminal():
        if step >= MAX_STEPS:
            raise RuntimeError(f"{game.name}: the game is still running after {MAX_STEPS} actions")
        seat = state.current_player
        mask = state.legal_action_mask()
        legal = np.flatnonzero(mask).astype(np.int32)
        observations = np.stack([observation(state, k) for k in range(state.num_players)])
        line: dict[str, Any] = {"step": step, "seat": seat, "legal": [int(legal.size), digest(legal)],
                                "obs": digest(observations.ravel())}
        action = int(agents[seat].act(observation(state, seat), mask, state))
        line["action"] = action
        line["name"] = state.action_to_string(action)
        state.apply(action)
        line.update(state=state_digest(state), turn=int(state.field("turn")), phase=state.phase_name,
                    vp=state.scores())
        now, obs_now = state_field_digests(state), observation_field_digests(observations)
        line.update(changed=_changed(fields, now), obs_changed=_changed(obs_fields, obs_now))
        fields, obs_fields = now, obs_now
        yield line
        step += 1
    yield _result(state, step)


def dump_line(line: dict[str, Any]) -> str:
    """One line of a golden file: compact JSON, keys in insertion order, UTF-8 text kept."""
    return json.dumps(line, separators=(",", ":"), ensure_ascii=False)


def golden_bytes(game: GoldenGame) -> bytes:
    """The complete golden file of ``game``: gzip level 9, mtime 0, no file name (deterministic)."""
    text = "".join(dump_line(line) + "\n" for line in play(game))
    return gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)


def write_golden(folder: Path, games: Sequence[GoldenGame] | None = None) -> list[Path]:
    """(Re)write the golden file of every game of ``games`` (default: all) in ``folder``, atomically,
    and delete the ``*.jsonl.gz`` files there that no golden game produces; returns the paths written."""
    games = golden_games() if games is None else list(games)
    written = []
    for game in games:
        path = folder / game.filename
        write_bytes_atomic(path, golden_bytes(game))
        written.append(path)
    for stale in _stale_files(folder):
        stale.unlink()
    return written


def _stale_files(folder: Path) -> list[Path]:
    """The ``*.jsonl.gz`` files in ``folder`` that no golden game produces."""
    known = {game.filename for game in golden_games()}
    return [p for p in sorted(folder.glob("*" + SUFFIX)) if p.name not in known]


# ---------------------------------------------------------------- checking
@dataclass(frozen=True)
class Divergence:
    """The first difference between a golden file and the replayed game (or why it could not be read)."""

    game: str
    path: Path
    step: int | None  # None: the header, or the file as a whole
    message: str
    expected: dict[str, Any] | None = None
    got: dict[str, Any] | None = None

    def report(self) -> str:
        """Readable report: the game, the step, the action and both lines with the keys that differ."""
        where = "header" if self.step is None else f"step {self.step}"
        lines = [f"{self.game} ({self.path}), {where}: {self.message}"]
        if self.expected is not None or self.got is not None:
            exp, got = self.expected or {}, self.got or {}
            keys = [k for k in dict.fromkeys([*exp, *got]) if exp.get(k) != got.get(k)]
            if "action" in exp or "action" in got:
                lines.append(f"  action expected: {exp.get('action')} {exp.get('name')!r}")
                lines.append(f"  action got:      {got.get('action')} {got.get('name')!r}")
            if keys:
                lines.append(f"  differing keys: {', '.join(keys)}")
            for key, what in (("changed", "state"), ("obs_changed", "observation")):
                names = _differing_fields(exp.get(key), got.get(key))
                if names:
                    lines.append(f"  {what} fields that differ: {', '.join(names)}")
            lines.append(f"  expected: {dump_line(exp) if self.expected is not None else '(nothing: the file ends)'}")
            lines.append(f"  got:      {dump_line(got) if self.got is not None else '(nothing: the game ends)'}")
        return "\n".join(lines)


def _differing_fields(expected: Any, got: Any) -> list[str]:
    """The field names whose digest differs between two ``changed`` maps (a field changed in only
    one of them differs too), in layout order as written."""
    exp = expected if isinstance(expected, dict) else {}
    new = got if isinstance(got, dict) else {}
    return [k for k in dict.fromkeys([*exp, *new]) if exp.get(k) != new.get(k)]


def read_golden(path: Path) -> list[dict[str, Any]]:
    """The lines of a golden file; ``ValueError`` naming the file and line if it is unreadable."""
    try:
        text = gzip.decompress(path.read_bytes()).decode("utf-8")
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read {path}: {exc}") from None
    lines = []
    for i, raw in enumerate(text.splitlines(), 1):
        try:
            line = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}, line {i}: not JSON ({exc})") from None
        if not isinstance(line, dict):
            raise ValueError(f"{path}, line {i}: expected a JSON object")
        lines.append(line)
    return lines


def _check_header(game: GoldenGame, path: Path, header: dict[str, Any] | None) -> Divergence | None:
    if header is None:
        return Divergence(game.name, path, None, "the file is empty")
    if header.get("format") != GOLDEN_FORMAT or header.get("version") != GOLDEN_VERSION:
        return Divergence(game.name, path, None,
                          f"not a golden file of format {GOLDEN_FORMAT!r} version {GOLDEN_VERSION}: "
                          f"format {header.get('format')!r}, version {header.get('version')!r}")
    return None


def check_game(game: GoldenGame, folder: Path) -> Divergence | None:
    """Replay ``game`` and compare it line by line with its golden file in ``folder``;
    the first difference, or None when every line matches."""
    path = folder / game.filename
    if not path.exists():
        return Divergence(game.name, path, None,
                          "golden file missing (python -m concordia_env.tools.golden --write --dir DIR creates it)")
    try:
        expected = read_golden(path)
    except ValueError as exc:
        return Divergence(game.name, path, None, str(exc))
    bad = _check_header(game, path, expected[0] if expected else None)
    if bad is not None:
        return bad
    replay = play(game)
    for i, exp in enumerate(expected):
        try:
            got = next(replay, None)
        except Exception as exc:  # a broken engine or agent is a divergence to report, not a crash
            return Divergence(game.name, path, None if i == 0 else i - 1,
                              f"the replay raised {type(exc).__name__}: {exc}", exp, None)
        if got != exp:
            if i == 0:
                return Divergence(game.name, path, None, "header differs", exp, got)
            ends = "result" in exp or (got is not None and "result" in got)
            return Divergence(game.name, path, i - 1, "result differs" if ends else "step differs", exp, got)
    try:
        extra = next(replay, None)
    except Exception as exc:
        return Divergence(game.name, path, len(expected) - 1, f"the replay raised {type(exc).__name__}: {exc}")
    if extra is not None:
        return Divergence(game.name, path, len(expected) - 1, "the replayed game goes on after the file ends",
                          None, extra)
    return None


def check_golden(folder: Path, games: Sequence[GoldenGame] | None = None) -> list[Divergence]:
    """The first divergence of every game of ``games`` (default: all) whose golden file in ``folder``
    does not match, plus one for every ``*.jsonl.gz`` file there that no golden game produces;
    empty when all match."""
    games = golden_games() if games is None else list(games)
    out = [d for d in (check_game(game, folder) for game in games) if d is not None]
    for stale in _stale_files(folder):
        out.append(Divergence(stale.name[:-len(SUFFIX)], stale, None,
                                  "no golden game produces this file (--write deletes it)"))
    return out


# ---------------------------------------------------------------- command line
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m concordia_env.tools.golden",
        description="Golden playthroughs: write them, or check that the engine still plays them exactly.")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="(re)generate every golden file")
    mode.add_argument("--check", action="store_true",
                      help="replay every golden game; print the first divergence of each and exit 1 if any")
    parser.add_argument("--dir", type=Path, required=True,
                        help="folder of the golden files (the repository's are in tests/golden)")
    parser.add_argument("--game", action="append", metavar="NAME",
                        help="only this game, e.g. italia_2p_random (repeatable; default: every game)")
    args = parser.parse_args(argv)
    folder: Path = args.dir
    if folder.exists() and not folder.is_dir():
        parser.error(f"--dir {folder} is not a folder")
    games = golden_games()
    if args.game:
        names = [g.name for g in games]
        unknown = [n for n in args.game if n not in names]
        if unknown:
            parser.error(f"--game: unknown game(s) {', '.join(unknown)}; known: {', '.join(names)}")
        games = [g for g in games if g.name in args.game]
    if args.write:
        paths = write_golden(folder, games)
        total = sum(p.stat().st_size for p in paths)
        print(f"wrote {len(paths)} golden files to {folder} ({total:,} bytes)")
        return 0
    if not folder.is_dir():
        parser.error(f"--dir {folder} does not exist (run with --write to create the golden files)")
    divergences = check_golden(folder, games)
    for d in divergences:
        print(d.report())
    if divergences:
        print(f"golden check FAILED: {len(divergences)} file(s) diverge in {folder}")
        return 1
    print(f"golden check passed: {len(games)} game(s) in {folder} replay exactly")
    return 0


if __name__ == "__main__":
    sys.exit(main())
