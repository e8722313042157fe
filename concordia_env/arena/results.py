"""A tournament's results file and records folder: settings checks, partial results, atomic writes and resuming (see :mod:`concordia_env.arena.tournament`, "Interruptions and resuming")."""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .._internal.files import write_json_atomic
from .game_result import GameResult
from .records import check_forfeit, load_record, read_json_file, short_repr, verify_record
from .run_folder import RunFolder, differences, remove_temporaries, same_json, warn, writable_folder
from .stats import Z95, wilson_interval  # noqa: F401  (Z95: public here too)

#: the file that marks a records folder as one tournament's, naming its settings
RECORDS_MANIFEST = "tournament.json"
RECORDS_MANIFEST_FORMAT = "concordia-env/tournament-records"
#: the settings that define a tournament's result: a resumed run must match them all
SETTINGS_KEYS = ("map", "players", "agents", "games", "seed", "intermediate_scoring", "max_turns")
#: a game record's file name in a records folder
RECORD_NAME = "game_{:05d}.json"


def seat_specs(agent_specs: Sequence[str], game: int) -> list[str]:
    """The spec at each seat of game ``game``: seat ``k`` gets ``agent_specs[(k + game) % n]``."""
    n = len(agent_specs)
    return [agent_specs[(k + game) % n] for k in range(n)]


def per_game_digest(per_game: Sequence[dict[str, Any]]) -> str:
    """The sha256 of a ``per_game`` list (canonical JSON), stored beside it in a results file so that a
    resume from the file alone finds an edited or damaged list."""
    text = json.dumps(list(per_game), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _game_summary(game: int, game_seed: int, specs: Sequence[str], result: dict[str, Any]) -> dict[str, Any]:
    """One ``per_game`` entry (see the module doc): the record's result without the VP breakdown."""
    return GameResult.from_json(result).entry({"game": game, "seed": game_seed}, specs)


# ---------------------------------------------------------------- settings, output paths, resuming
def tournament_settings(map_name: str, num_players: int, agent_specs: Sequence[str], games: int, seed: int,
                        intermediate_scoring: bool, max_turns: int) -> dict[str, Any]:
    """The settings that define a tournament's result (:data:`SETTINGS_KEYS`), as stored in its
    results file and records manifest (the worker count is not one: it does not change the result)."""
    return {"map": map_name, "players": num_players, "agents": list(agent_specs), "games": games, "seed": seed,
            "intermediate_scoring": bool(intermediate_scoring), "max_turns": max_turns}


def _settings_mismatch(saved: Any, settings: dict[str, Any]) -> str | None:
    """The settings in which ``saved`` (a results file) differs, as ``"key saved there, ours here"``;
    None if they all match."""
    found = differences(saved, settings, SETTINGS_KEYS)
    return "; ".join(found) if found else None


def check_results_path(path: str | os.PathLike) -> Path:
    """``path`` as a Path if a results file can be written there, else ``ValueError``: checked before
    the first game, so a long tournament cannot end with nowhere to write. Missing parent folders
    are created; ``path`` must not be a folder and its folder must be writable."""
    out = Path(path)
    if out.is_dir():
        raise ValueError(f"results file {out} is a folder; give a file name")
    writable_folder(out.parent, f"results file {out}")
    remove_temporaries(out.parent, out.name)
    return out


def _read_results(path: Path) -> Any:
    """A results file's JSON (``ValueError`` naming it if unreadable as JSON; ``OSError`` if unreadable)."""
    return read_json_file(path, "results file")


def _unfinished(path: Path) -> dict[str, Any] | None:
    """The results in ``path`` if they are an unfinished tournament's (``"complete": false``)."""
    try:
        data = _read_results(path)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("complete") is False else None


def _ints(x: Any, length: int) -> bool:
    """``x`` is a list of ``length`` ints (not bools)."""
    return isinstance(x, list) and len(x) == length and all(isinstance(v, int) and not isinstance(v, bool) for v in x)


def _check_game(entry: Any, g: int, settings: dict[str, Any]) -> dict[str, Any]:
    """A saved ``per_game`` entry, checked to be game ``g`` of this tournament (``ValueError`` otherwise)."""
    n = settings["players"]
    if not isinstance(entry, dict):
        raise ValueError("it is not an object")
    if not (_ints(entry.get("scores"), n) and _ints(entry.get("ranking"), n)
            and sorted(entry["ranking"]) == list(range(n))):
        raise ValueError("its scores or ranking are not those of a game")
    truncated, turns = entry.get("truncated"), entry.get("turns")
    if not isinstance(truncated, bool) or not isinstance(turns, int) or isinstance(turns, bool) or turns < 0:
        raise ValueError("its truncated or turns fields are wrong")
    result = {"scores": entry["scores"], "ranking": entry["ranking"], "truncated": truncated, "turns": turns,
              "winner": None if truncated else entry["ranking"][0]}
    if "forfeit" in entry:  # a forfeited game: the seat and the reason, as the record holds them
        check_forfeit(entry["forfeit"], n)
        result["forfeit"] = entry["forfeit"]
    expected = _game_summary(g, settings["seed"] + g, seat_specs(settings["agents"], g), result)
    if not same_json(entry, expected):
        bad = next(k for k in expected if not same_json(entry.get(k), expected[k]))
        raise ValueError(f"its {bad!r} is {short_repr(entry.get(bad))}, expected {short_repr(expected[bad])}")
    return expected


def load_partial_results(path: str | os.PathLike, settings: dict[str, Any], *,
                         check_digest: bool = True) -> tuple[list[dict[str, Any]], float]:
    """The games already played (``per_game`` entries) and the seconds spent, from a results file
    of the tournament ``settings`` (:func:`tournament_settings`), complete or not. ``ValueError``
    names the file and what is wrong: not a results file, other settings, a damaged entry, and
    (``check_digest``) a list that does not match its ``per_game_sha256`` (edited or damaged; a
    caller with the game records checks the entries against them instead)."""
    path = Path(path)
    data = _read_results(path)
    if not isinstance(data, dict) or not isinstance(data.get("per_game"), list):
        raise ValueError(f"results file {path} is not a tournament's results (no per_game list)")
    mismatch = _settings_mismatch(data, settings)
    if mismatch:
        raise ValueError(f"results file {path} is another tournament's ({mismatch}); resume with the "
                         f"same settings, or start afresh with another file or --overwrite")
    per_game = data["per_game"]
    if len(per_game) > settings["games"]:
        raise ValueError(f"results file {path} lists {len(per_game)} games, more than the {settings['games']} set")
    done = []
    for g, entry in enumerate(per_game):
        try:
            done.append(_check_game(entry, g, settings))
        except (ValueError, RecursionError) as exc:
            raise ValueError(f"results file {path}: per_game entry {g} is damaged: {exc}") from None
    if check_digest and data.get("per_game_sha256") != per_game_digest(per_game):
        raise ValueError(f"results file {path}: its per_game list does not match its per_game_sha256 (edited or "
                         f"damaged); resume with the tournament's --records, whose games are verified by replay, "
                         f"or start afresh with --overwrite")
    seconds = data.get("seconds")
    return done, float(seconds) if isinstance(seconds, (int, float)) and math.isfinite(seconds) else 0.0


def _manifest(settings: Mapping[str, Any]) -> dict[str, Any]:
    return {"format": RECORDS_MANIFEST_FORMAT, "version": 1, **settings}


def _from_manifest(document: Any) -> dict[str, Any] | None:
    return document if isinstance(document, dict) and document.get("format") == RECORDS_MANIFEST_FORMAT else None


def prepare_record_dir(folder: str | os.PathLike, settings: dict[str, Any], overwrite: bool = False) -> Path:
    """Make ``folder`` the records folder of the tournament ``settings``, before the first game: a
    run folder (:mod:`concordia_env.arena.run_folder`) whose settings file is :data:`RECORDS_MANIFEST`
    and whose units are the game records.

    Missing folders are created and the folder must be writable. A folder already marked with the
    same settings (this tournament, run again or resumed) is reused. A folder holding game records
    of another tournament, or of an unknown one, is refused with a ``ValueError`` unless
    ``overwrite``, which deletes those records first. Other files in the folder are left alone."""
    return RunFolder.open(folder, settings, settings_name=RECORDS_MANIFEST, units=("game_*.json",),
                          what="records folder", owner="another tournament's records", flag="--records",
                          keys=SETTINGS_KEYS, wrap=_manifest, unwrap=_from_manifest, overwrite=overwrite).path


def verified_game(path: Path, g: int, settings: dict[str, Any]) -> dict[str, Any]:
    """The ``per_game`` entry of game ``g`` from its record at ``path``, once the record is checked to
    be that game of this tournament and its actions, replayed from its seed, give exactly its stored
    result (:func:`~concordia_env.arena.records.verify_record`). ``ValueError`` naming the file and
    what is wrong (unreadable, another game's, an illegal action, a result the replay does not give);
    ``OSError`` if it cannot be read."""
    record = load_record(path)
    specs = seat_specs(settings["agents"], g)
    setup = (record["map"], record["players"], record["seed"], record["intermediate_scoring"], record["agents"])
    expected = (settings["map"], settings["players"], settings["seed"] + g, settings["intermediate_scoring"], specs)
    result = record["result"]
    try:
        if setup != expected:
            raise ValueError(f"it is not game {g} of this tournament (map, players, seed, scoring or agents differ)")
        stopped_early = result["truncated"] and "forfeit" not in result and result["turns"] != settings["max_turns"]
        if result.get("unfinished") or stopped_early:
            raise ValueError(f"it was not stopped at this tournament's {settings['max_turns']} card plays")
        verify_record(record)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"game record {path}: {exc}") from None
    return _game_summary(g, settings["seed"] + g, specs, result)


def recorded_games(folder: Path, start: int, settings: dict[str, Any]) -> list[dict[str, Any]]:
    """``per_game`` entries for games ``start``, ``start + 1``, ... read from their records in
    ``folder`` and verified by replay (:func:`verified_game`), up to the first game whose record is
    missing or damaged: that game and the later ones are played again (a damaged record with a
    one-line warning)."""
    found = []
    for g in range(start, settings["games"]):
        path = folder / RECORD_NAME.format(g)
        if not path.exists():
            break
        try:
            found.append(verified_game(path, g, settings))
        except (OSError, ValueError) as exc:
            later = f"games {g}-{settings['games'] - 1}" if g < settings["games"] - 1 else f"game {g}"
            warn(f"{exc}; playing {later} again")
            break
    return found


def _check_against_records(out: Path, saved: Sequence[dict[str, Any]], verified: Sequence[dict[str, Any]],
                           folder: Path) -> None:
    """Warn (one line) where the results file's games differ from the verified records, which are used
    instead, or list games without a record, which are played again (a damaged record was warned
    about already)."""
    differ = [g for g, (a, b) in enumerate(zip(saved, verified)) if not same_json(a, b)]
    if differ:
        keys = [k for k in verified[differ[0]] if not same_json(saved[differ[0]].get(k), verified[differ[0]][k])]
        warn(f"results file {out}: game{'s' if len(differ) > 1 else ''} {', '.join(map(str, differ[:5]))}"
              f"{' ...' if len(differ) > 5 else ''} differ{'' if len(differ) > 1 else 's'} from the verified "
              f"record ({', '.join(keys)} of game {differ[0]}); the records are used")
    if len(saved) > len(verified) and not (folder / RECORD_NAME.format(len(verified))).exists():
        warn(f"results file {out} lists {len(saved)} games but the records hold {len(verified)}: "
              f"games {len(verified)}-{len(saved) - 1} have no record and are played again")


def write_results(result: dict[str, Any], path: str | os.PathLike) -> None:
    """Write a :func:`run_tournament` result as indented JSON."""
    write_json_atomic(result, path)
