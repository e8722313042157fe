"""Bots in any language over the JSON-lines protocol (docs/bot-protocol.md): the C example compiled
with ``cc`` and the JavaScript one (Node.js) play full games and ``concordia tournament``; every way a
bot can fail is one line naming the bot, its seat, the decision and what was wrong; its process never
outlives the game; and in a tournament a failure is a forfeit, recorded, tabled and resumable."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from concordia_env.agents import make_agent
from concordia_env.agents.base import AgentError
from concordia_env.agents.bot import BotAgent, BotError
from concordia_env.arena.records import play_game, verify_record
from concordia_env.cli import main
from concordia_env.encoding import observation
from concordia_env.state import GameState, new_game

ROOT = Path(__file__).resolve().parents[1]
BOTS = ROOT / "examples" / "bots"

#: a Python bot that plays the lowest legal id and fails as argv says: MODE at its DECISION
FAULTY = r'''
import json, os, sys, time
mode, at = sys.argv[1], int(sys.argv[2])
hello = json.loads(sys.stdin.readline())
if mode == "protocol":
    print(json.dumps({"protocol": "concordia-bot", "version": 2}), flush=True)
if mode == "silent-hello":
    time.sleep(60)
print(json.dumps({"type": "hello", "protocol": "concordia-bot", "version": 1, "name": f"{mode}-{os.getpid()}",
                  "want": ["actions"] if mode == "want" else []}), flush=True)
for line in sys.stdin:
    request = json.loads(line)
    legal = request["legal"]
    if request["decision"] == at:
        if mode == "illegal":
            print(json.dumps({"action": next(a for a in range(402) if a not in legal)}), flush=True)
            continue
        if mode == "hang":
            time.sleep(60)
        if mode == "exit":
            print("out of ideas", file=sys.stderr, flush=True)
            sys.exit(3)
        if mode == "garbage":
            print("e4 e5", flush=True)
            continue
        if mode == "float":
            print(json.dumps({"action": float(legal[0])}), flush=True)
            continue
        if mode == "extra":  # the answer and a line nobody asked for, in one write
            sys.stdout.write(json.dumps({"action": legal[0]}) + "\n" + json.dumps({"action": legal[0]}) + "\n")
            sys.stdout.flush()
            continue
        if mode == "want":
            assert "observation" not in request and "state" not in request and request["actions"][0]["id"] == legal[0]
    print(json.dumps({"action": legal[0]}), flush=True)
'''


@pytest.fixture(scope="module")
def faulty(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("faulty") / "faulty.py"
    path.write_text(FAULTY, encoding="utf-8")
    return path


def faulty_spec(path: Path, mode: str, at: int = 2, move_ms: int = 5000) -> str:
    return f"bot:cmd={sys.executable} {path} {mode} {at}:move_ms={move_ms}"


@pytest.fixture(scope="module")
def c_bot(tmp_path_factory) -> Path:
    """The C example compiled with ``cc`` into a temporary folder, beside a copy of its manifest."""
    folder = tmp_path_factory.mktemp("c_bot")
    subprocess.run(["cc", "-O2", "-o", str(folder / "randbot"), str(BOTS / "c" / "randbot.c")], check=True)
    shutil.copy(BOTS / "c" / "bot.json", folder / "bot.json")
    return folder / "bot.json"


JS_BOT = BOTS / "js" / "bot.json"


def _gone(pid: int) -> bool:
    """Whether no process (not even a zombie) has this pid."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_the_c_and_javascript_bots_play_full_games_reproducibly(c_bot):
    specs = [f"bot:manifest={c_bot}", f"bot:manifest={JS_BOT}"]
    bots = [make_agent(s) for s in specs]
    record = play_game("italia", 2, 3, bots)
    assert record["agents"] == specs and not record["result"]["truncated"]
    assert verify_record(record).is_terminal()
    assert [b.bot_name for b in bots] == ["c-random", "js-random"]
    assert all(b.process is None for b in bots)  # ended with the game
    assert play_game("italia", 2, 3, bots) == record  # the same seeds give the same game
    assert play_game("italia", 2, 4, bots)["actions"] != record["actions"]


def test_the_python_example_bot_builds_from_the_action_names():
    bot = make_agent(f"bot:manifest={BOTS / 'python' / 'bot.json'}")
    builds = []
    record = play_game("italia", 2, 0, [bot, make_agent("random")],
                       on_step=lambda s, seat, a: builds.append(seat == 0 and ": build in " in s.action_to_string(a)))
    assert bot.bot_name == "py-builder" and bot.want == ("actions",) and any(builds)
    verify_record(record)


def test_bots_play_concordia_tournament(c_bot, tmp_path, capsys):
    out, records = tmp_path / "results.json", tmp_path / "records"
    assert main(["tournament", "--map", "italia", "--players", "2", "--agents",
                 f"bot:manifest={c_bot},bot:manifest={JS_BOT}", "--games", "2", "--out", str(out),
                 "--records", str(records), "--no-progress"]) == 0
    result = json.loads(out.read_text())
    assert result["complete"] and result["forfeits"] == 0 and result["truncated"] == 0
    assert sum(a["wins"] for a in result["per_agent"].values()) == 2
    assert "forfeit" not in capsys.readouterr().out
    for path in sorted(records.glob("game_*.json")):
        verify_record(json.loads(path.read_text()))


def test_a_tournament_goes_on_when_bots_fail(faulty, tmp_path, capsys):
    """One bot answers an illegal id at its 3rd decision, one hangs past its 300 ms, one exits: every
    game is a forfeit by the first to fail, named in the results, the records and the table."""
    specs = [faulty_spec(faulty, "illegal"), faulty_spec(faulty, "hang", move_ms=300), faulty_spec(faulty, "exit")]
    out, records = tmp_path / "results.json", tmp_path / "records"
    argv = ["tournament", "--map", "imperium", "--players", "3", "--agents", ",".join(specs), "--games", "6",
            "--out", str(out), "--records", str(records), "--no-progress"]
    assert main(argv) == 0
    result = json.loads(out.read_text())
    assert result["complete"] and result["forfeits"] == 6 and result["truncated"] == 0
    reasons = {}
    for game in result["per_game"]:
        seat, reason = game["forfeit"]["seat"], game["forfeit"]["reason"]
        assert game["winner"] is None and game["ranking"][-1] == seat and "\n" not in reason
        assert f"at seat {seat}, at its decision 2: " in reason
        reasons[game["seats"][seat]] = reason
    assert set(reasons) == set(specs)  # each bot forfeited at least once
    assert "answered action 4, which is not legal here (legal: 0, 1, 2, 3, 6, 8)" in reasons[specs[0]]
    assert "sent no answer within 300 ms" in reasons[specs[1]]
    assert "exited with status 3; its stderr ends: out of ideas" in reasons[specs[2]]
    assert sum(a["forfeits"] for a in result["per_agent"].values()) == 6
    assert all(a["wins"] == 0 and a["games"] == 6 for a in result["per_agent"].values())
    table = capsys.readouterr().out
    assert "6 forfeited" in table and " forfeits " in table and table.count("\nforfeit: game ") == 6
    record = json.loads((records / "game_00000.json").read_text())
    assert record["result"]["forfeit"] == result["per_game"][0]["forfeit"]
    verify_record(record)
    assert main(["replay", str(records / "game_00000.json"), "--no-pause"]) == 0
    seat = record["result"]["forfeit"]["seat"]
    assert f"Game forfeited by player {seat} after " in capsys.readouterr().out
    assert main([*argv, "--resume"]) == 0  # the forfeited games are verified and kept, not played again
    assert json.loads(out.read_text())["per_game"] == result["per_game"]


@pytest.mark.parametrize("mode, at, problem", [
    ("illegal", 2, r"at its decision 2: answered action 4, which is not legal here \(legal: 0, 1, 2, 3, 6, 8\)"),
    ("hang", 1, "at its decision 1: sent no answer within 300 ms"),
    ("exit", 0, "at its decision 0: exited with status 3; its stderr ends: out of ideas"),
    ("garbage", 3, "at its decision 3: answered 'e4 e5', which is not a JSON object"),
    ("float", 0, "answered '{\"action\": \\d+.0}', which has no integer 'action'"),
    ("extra", 1, "at its decision 2: wrote a line nobody asked for: '{\"action\": \\d+}'"),
    ("protocol", 0, "in its handshake: speaks protocol 'concordia-bot' version 2, but this is 'concordia-bot' "
                    "version 1"),
    ("silent-hello", 0, "in its handshake: sent no answer within 300 ms"),
])
def test_a_failing_bot_is_one_line_naming_bot_seat_and_decision(faulty, mode, at, problem):
    spec = faulty_spec(faulty, mode, at, move_ms=300 if mode == "hang" else 5000)
    spec += ":start_ms=300" if mode == "silent-hello" else ""
    bot = make_agent(spec)
    with pytest.raises(BotError, match=problem) as info:
        play_game("italia", 2, 0, [make_agent("random"), bot])
    error = info.value
    assert isinstance(error, AgentError) and error.seat == 1 and "\n" not in str(error)
    assert str(error).startswith(f"bot '{bot.bot_name}' ({spec}) at seat 1, ")
    assert bot.process is None and bot.failed is error  # not restarted within the game
    if "-" in bot.bot_name and mode != "silent-hello":  # the bot named itself MODE-PID: its process is gone
        assert _gone(int(bot.bot_name.rsplit("-", 1)[1]))


def test_a_bot_gets_only_what_it_wants_and_ends_with_the_game(faulty):
    bot = make_agent(faulty_spec(faulty, "want", at=5))
    play_game("italia", 2, 1, [bot, make_agent("random")], max_turns=8)
    assert bot.want == ("actions",) and bot.decisions > 5 and bot.process is None
    assert _gone(int(bot.bot_name.rsplit("-", 1)[1]))


def test_a_request_carries_the_observation_and_the_state_exactly(faulty):
    bot = make_agent(faulty_spec(faulty, "ok"))
    state = new_game("imperium", 4, 2)
    for action in (0, 17):
        if action in state.legal_actions():
            state.apply(action)
    seat = state.current_player
    obs, legal = observation(state, seat), np.flatnonzero(state.legal_action_mask())
    request = json.loads(bot._request(obs, legal, state, seat))
    assert request["legal"] == legal.tolist() and request["seat"] == seat and request["type"] == "act"
    assert request["actions"] == [{"id": int(a), "name": state.action_to_string(int(a))} for a in legal]
    assert request["observation"] == obs.tolist() and len(request["observation"]) == obs.size
    assert all(isinstance(v, int) for v in request["observation"])
    assert GameState.from_json(json.dumps(request["state"])) == state


@pytest.mark.parametrize("options, message", [
    ("", "a bot spec needs manifest=FILE.json or cmd=COMMAND"),
    (":cmd=no-such-program-here", "bot program 'no-such-program-here' is not on the PATH"),
    (":cmd=./no/such/bot", "bot program './no/such/bot' is not an executable file"),
    (":cmd=python3 x.py:move_ms=0", "move_ms must be a positive whole number of milliseconds, got 0"),
    (":manifest=no-such-manifest.json", "bot manifest .*no-such-manifest.json: cannot read it"),
])
def test_a_bad_bot_spec_fails_before_any_game(options, message):
    with pytest.raises(ValueError, match=message):
        make_agent("bot" + options)


@pytest.mark.parametrize("manifest, message", [
    ({"argv": []}, "'argv' must be a non-empty list of strings"),
    ({"argv": ["node"], "cmd": "x"}, r"unknown key\(s\) \['cmd'\]"),
    ({"argv": ["node"], "move_ms": 1.5}, "'move_ms' must be a positive whole number"),
    ([1], "must be a JSON object"),
])
def test_a_bad_manifest_is_named(tmp_path, manifest, message):
    path = tmp_path / "bot.json"
    path.write_text(json.dumps(manifest))
    with pytest.raises(ValueError, match=message):
        BotAgent(manifest=str(path))


def test_forfeit_records_verify_and_edits_are_caught(faulty):
    record = play_game("italia", 2, 0, [make_agent("random"), make_agent(faulty_spec(faulty, "illegal"))],
                       forfeit=True)
    result = record["result"]
    assert result["truncated"] and result["winner"] is None and result["forfeit"]["seat"] == 1
    assert result["ranking"] == [0, 1]
    verify_record(record)
    record["result"]["forfeit"]["seat"] = 0
    with pytest.raises(ValueError, match="seat 0 forfeited, but after its actions seat 1 is to decide"):
        verify_record(record)
    record["result"]["forfeit"] = {"seat": 1}
    with pytest.raises(ValueError, match="result 'forfeit' must be"):
        verify_record(record)

