"""The ``concordia`` command: play (scripted input), tournament, replay, demo and bad arguments.

Commands run in-process through ``main([...])`` (fast); one test runs the
installed console script in a subprocess."""

from __future__ import annotations

import io
import itertools
import json
import shutil
import subprocess
import sys
from collections.abc import Iterable

import pytest

from concordia_env import new_game
from concordia_env import scenario as sc
from concordia_env.arena.records import is_unfinished, load_record, save_record, verify_record
from concordia_env.cli import DEMO_AGENTS, HumanAgent, QuitGame, default_save_name, main
from concordia_env.display.menu import build_menu
from concordia_env.display.render import WIDTH, status_lines


def scripted(answers: Iterable[str], then: BaseException | None = None):
    """An ``input_fn`` giving ``answers`` in order, then raising ``then`` (EOFError by default)."""
    it = iter(answers)
    prompts: list[str] = []

    def input_fn(prompt: str = "") -> str:
        prompts.append(prompt)
        try:
            return next(it)
        except StopIteration:
            raise then or EOFError from None

    input_fn.prompts = prompts
    return input_fn


def always(answer: str):
    return lambda prompt="": answer


PLAY = ["play", "--map", "italia", "--players", "2", "--opponents", "random"]


# ---------------------------------------------------------------- play
def architectus_turn():
    """Imperium, 3 players: player 0 has played the Architectus with land colonists in Roma and on
    Lutetia–Massilia and a sea colonist on Massilia–Roma: 63 legal actions (60 moves, 2 houses, done)."""
    st = new_game("imperium", 3, seed=0)
    sc.set_turn(st, 0)
    sc.set_colonists(st, 0, land=["Roma", ("Lutetia", "Massilia")], sea=[("Massilia", "Roma")])
    sc.act(st, "play", "Architectus")
    return st


def ask(state, answers, human=None):
    """Run one decision of a HumanAgent with scripted ``answers``: (action, printed lines, prompts)."""
    out = io.StringIO()
    input_fn = scripted(answers)
    human = human or HumanAgent(input_fn, out)
    human.input_fn, human.out = input_fn, out
    action = human.act(None, state.legal_action_mask(), state)
    return action, out.getvalue().splitlines(), input_fn.prompts


def test_human_chooses_by_group_then_item_or_by_number():
    st = architectus_turn()
    target = sc.action_id(st, "move", "land", ("Lutetia", "Massilia"), ("Massilia", "Novaria"))
    number = build_menu(st).actions().index(target) + 1
    by_group, lines, prompts = ask(st, ["c", "c1", str(number)])
    direct, direct_lines, _ = ask(st, [str(number)])
    assert by_group == direct == target
    assert len(prompts) == 3 and len(set(prompts)) == 1
    text = "\n".join(lines)
    assert "   c move land colonist 2 from (Lutetia–Massilia): 23 routes (17-39)" in text
    assert "  c1 1 point: 6 routes (17-22)" in text  # the group, as sections
    assert f"  {number} Massilia [" in text  # the section, with the number typed
    assert f"  {number} Massilia [" not in "\n".join(direct_lines)  # the top menu only sums the group up
    assert max(map(len, lines)) <= WIDTH
    # the board once (a new turn), then only the menu; the status block always right above the prompt
    status = status_lines(st, 0)
    assert text.count("Concordia — Imperium") == 1 and text.count(status[0]) == 3
    assert lines[-len(status):] == status


def test_an_option_keeps_its_number_through_the_steps_of_one_card_action():
    st = architectus_turn()
    human = HumanAgent(scripted([]), io.StringIO())
    human.reset(0)
    seen: dict[int, int] = {}  # action -> number, over the whole Architectus action
    steps = 0
    while st.current_player == 0 and st.phase_name != "play a card":
        first = human._menu(st)
        numbers = first.numbering
        for action, number in numbers.items():  # an option seen before keeps its number ...
            assert seen.get(action, number) == number, (action, seen.get(action), number)
        new = {n for a, n in numbers.items() if a not in seen}
        assert not new & set(seen.values())  # ... and a number seen before never means a new option
        seen.update(numbers)
        # the player types what the menu showed: the number picks that option
        move = next((a for a in st.legal_actions() if "move" in st.action_to_string(a)), st.legal_actions()[-1])
        action, _, prompts = ask(st, [str(numbers[move])], human)
        assert action == move
        if len(numbers) != max(numbers.values()):  # gaps left by earlier steps: the prompt does not say 1-N
            assert prompts[-1].startswith("Your choice (") and f"1-{len(numbers)};" not in prompts[-1]
        st.apply(action)
        steps += 1
    assert steps >= 3
    # the next card play starts the numbering afresh
    sc.set_turn(st, 0)
    assert sorted(human._menu(st).numbering.values()) == list(range(1, len(st.legal_actions()) + 1))


def test_bad_input_reprompts_with_one_line_and_never_changes_the_game():
    st = architectus_turn()
    before, mask = st.s.copy(), st.legal_action_mask()
    human = HumanAgent()
    ask(st, ["1"], human)  # the first decision of the turn shows the board
    menu = build_menu(st, "you")
    assert [(g.key, len(g.entries)) for g in menu.groups] == [("a", 16), ("c", 23), ("d", 21), ("e", 2), ("f", 1)]
    bad = ["", "zz", "999", "0", "f", "a9", "-3", "x" * 200]  # f: the one action "done", not a group
    action, lines, prompts = ask(st, bad + ["1"], human)
    assert action == menu.actions()[0]
    assert len(prompts) == len(bad) + 1 and len(set(prompts)) == 1
    # the same turn: the menu and the status block, no board; then one line for each bad answer
    assert lines[:-len(bad)] == ["", *menu.view(), "", *status_lines(st, 0)]
    assert lines[-len(bad):] == [
        "type a number from 1 to 63 (h for help)",
        "'zz' is not a number from the list; type 1 to 63 (h for help)",
        "999 is not in the list; choose 1 to 63",
        "0 is not in the list; choose 1 to 63",
        "'f' is not a number from the list; type 1 to 63 (h for help)",
        "'a9' is not a number from the list; type 1 to 63 (h for help)",
        "-3 is not in the list; choose 1 to 63",
        "'xxxxxxxxxxxxxxxxx...' is not a number from the list; type 1 to 63 (h for help)",
    ]
    assert (st.s == before).all() and (st.legal_action_mask() == mask).all()


def test_human_menu_help_and_quit():
    st = architectus_turn()
    with pytest.raises(QuitGame):
        ask(st, ["h", "m", "q"])
    _, lines, _ = ask(st, ["h", "m", "1"])
    text = "\n".join(lines)
    assert "m, menu          show the menu again" in text and "houses P0 P3" in text
    assert max(map(len, lines)) <= WIDTH
    assert text.count("Player 0 (you): Architectus: 3 movement points left") == 2


@pytest.mark.parametrize("map_name,players", [("italia", "2"), ("imperium", "5")])
def test_whole_scripted_games_fit_80_columns(map_name, players, tmp_path, monkeypatch):
    """A whole game typed at the terminal: at every decision a group, a section, the menu again and
    the first entry (answers the menu refuses are answered with one line), to the end."""
    monkeypatch.chdir(tmp_path)  # a short file name in the messages
    out = io.StringIO()
    answers = itertools.cycle(["a", "a1", "m", "1"])
    path = "game.json"
    argv = ["play", "--map", map_name, "--players", players, "--opponents", "random", "--seed", "1",
            "--save", path]
    assert main(argv, input_fn=lambda prompt="": next(answers), out=out) == 0
    lines = out.getvalue().splitlines()
    assert "Final scores" in lines and any(ln.startswith("You (player 0) finished") for ln in lines)
    assert max(map(len, lines)) <= WIDTH, [ln for ln in lines if len(ln) > WIDTH]
    verify_record(load_record(path))


def test_play_bad_input_board_help_then_quit(capsys):
    input_fn = scripted(["foo", "", "999", "0", "board", "h", "quit"])
    assert main(PLAY, input_fn=input_fn) == 0
    out = capsys.readouterr().out
    assert "'foo' is not a number from the list" in out
    assert "type a number from 1 to" in out
    assert "999 is not in the list" in out and "0 is not in the list" in out
    assert out.count("Concordia — Italia") == 2  # shown, then shown again for 'board'
    assert "q, quit, exit" in out  # the help
    assert "Game abandoned (you left); nothing saved." in out  # the save question met end of input
    assert len(input_fn.prompts) == 8  # every bad answer got the same prompt again, then the save question
    assert len(set(input_fn.prompts[:7])) == 1
    assert input_fn.prompts[7] == "Save the game to continue it later? [y/N] "


def test_play_to_the_end_always_choosing_option_one(capsys, tmp_path):
    path = tmp_path / "game.json"
    assert main(PLAY + ["--seed", "2", "--seat", "1", "--save", str(path)], input_fn=always("1")) == 0
    out = capsys.readouterr().out
    assert "Final scores" in out and out.count("Winner") == 1
    record = load_record(path)
    w = record["result"]["winner"]
    assert f"Winner: player {w} ({record['agents'][w]}) with {record['result']['scores'][w]} VP" in out
    assert "You (player 1) finished" in out
    assert "player 0 (random): play " in out  # opponents' moves, one line each
    assert "player 1 (you): " in out
    record = load_record(path)
    assert record["agents"] == ["random", "human"] and record["seed"] == 2
    verify_record(record)


def test_play_eof_leaves_cleanly(capsys):
    assert main(PLAY, input_fn=scripted(["1"], then=EOFError())) == 0
    assert "Game abandoned (end of input); nothing saved." in capsys.readouterr().out


def test_play_ctrl_c_exits_130_with_one_line(capsys):
    assert main(PLAY, input_fn=scripted(["1"], then=KeyboardInterrupt())) == 130
    captured = capsys.readouterr()
    assert captured.err.strip() == "Game interrupted; nothing saved."
    assert "Traceback" not in captured.err


def test_play_save_keeps_a_game_left_with_ctrl_c_and_resume_continues_it(capsys, tmp_path):
    path, path2 = tmp_path / "game.json", tmp_path / "game2.json"
    assert main(PLAY + ["--seed", "3", "--save", str(path)],
                input_fn=scripted(["1"] * 5, then=KeyboardInterrupt())) == 130
    err = capsys.readouterr().err.strip()
    assert err == f"Game interrupted; saved to {path} (continue with: concordia play --resume {path})."
    partial = load_record(path)
    assert is_unfinished(partial) and partial["result"]["truncated"] and partial["result"]["winner"] is None
    assert partial["agents"] == ["human", "random"] and partial["seed"] == 3 and partial["actions"]
    verify_record(partial)
    # q with --save saves without asking
    assert main(["play", "--resume", str(path), "--save", str(path2)], input_fn=scripted(["1", "q"])) == 0
    out = capsys.readouterr().out
    assert f"Continuing {path} after its {len(partial['actions'])} actions" in out
    assert f"Game abandoned (you left); saved to {path2}" in out
    later = load_record(path2)
    verify_record(later)
    assert is_unfinished(later) and later["actions"][:len(partial["actions"])] == partial["actions"]
    assert len(later["actions"]) > len(partial["actions"])
    # to the end: a finished record, whose replay works
    assert main(["play", "--resume", str(path2), "--save", str(path2)], input_fn=always("1")) == 0
    assert "You (player 0) finished" in capsys.readouterr().out
    final = load_record(path2)
    verify_record(final)
    assert not is_unfinished(final) and final["result"]["winner"] is not None
    assert final["actions"][:len(later["actions"])] == later["actions"]
    # a partial record replays, and says it is unfinished
    assert main(["replay", str(path), "--no-pause"]) == 0
    out = capsys.readouterr().out
    assert "an unfinished game" in out and "Game left unfinished after" in out


def test_play_q_offers_to_save(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    default = default_save_name("italia", 2, 0)
    input_fn = scripted(["1", "q", "y", ""])
    assert main(PLAY, input_fn=input_fn) == 0
    assert input_fn.prompts[-1] == f"File name [{default}]: "
    assert f"saved to {default} (continue with: concordia play --resume {default})" in capsys.readouterr().out
    verify_record(load_record(tmp_path / default))
    # an unwritable name is answered and asked again; 'n' saves nothing
    (tmp_path / "dir").mkdir()
    assert main(PLAY, input_fn=scripted(["q", "yes", "dir", "other.json"])) == 0
    out = capsys.readouterr().out
    assert "cannot save to dir: dir is a folder" in out and "saved to other.json" in out
    assert main(PLAY, input_fn=scripted(["q", "n"])) == 0
    assert "nothing saved" in capsys.readouterr().out
    # resuming offers the resumed file as the default
    input_fn = scripted(["q", "y", ""])
    assert main(["play", "--resume", "other.json"], input_fn=input_fn) == 0
    assert input_fn.prompts[-1] == "File name [other.json]: "
    verify_record(load_record(tmp_path / "other.json"))


def test_play_resume_refuses_finished_games_and_a_wrong_seat(capsys, tmp_path):
    path = tmp_path / "done.json"
    assert main(["demo", "--map", "italia", "--players", "2", "--agents", "random,random", "--save", str(path)]) == 0
    capsys.readouterr()
    assert main(["play", "--resume", str(path)], input_fn=scripted([])) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "the game is finished; only an unfinished game can be resumed" in err and "Traceback" not in err
    partial = tmp_path / "partial.json"
    assert main(PLAY + ["--save", str(partial)], input_fn=scripted(["q"])) == 0
    with pytest.raises(SystemExit) as exc:
        main(["play", "--resume", str(partial), "--seat", "1"], input_fn=scripted([]))
    assert exc.value.code == 2
    assert "you play seat 0" in capsys.readouterr().err
    record = load_record(partial)
    record["result"]["truncated"] = False  # 'unfinished' needs 'truncated'
    save_record(record, partial)
    assert main(["play", "--resume", str(partial)], input_fn=scripted([])) == 1
    assert "'unfinished' is true, so 'truncated' must be true too" in capsys.readouterr().err


def test_play_against_a_list_of_opponents(capsys):
    argv = ["play", "--map", "italia", "--players", "3", "--opponents", "random, random", "--seat", "2"]
    assert main(argv, input_fn=scripted(["q"])) == 0
    out = capsys.readouterr().out
    assert "player 0: random\n  player 1: random\n  player 2: you" in out


# ---------------------------------------------------------------- tournament
def test_tournament_writes_results(capsys, tmp_path):
    out_path, records = tmp_path / "results.json", tmp_path / "records"
    argv = ["tournament", "--map", "italia", "--players", "2", "--agents", "random,random", "--games", "4",
            "--seed", "3", "--out", str(out_path), "--records", str(records), "--no-progress"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "italia, 2 players: 4 games from seed 3" in out and "random" in out
    result = json.loads(out_path.read_text())
    assert (result["map"], result["players"], result["games"], result["seed"]) == ("italia", 2, 4, 3)
    assert result["agents"] == ["random", "random"]
    stats = result["per_agent"]["random"]
    assert stats["games"] == 8 and stats["wins"] == 4
    assert {"win_rate", "win_rate_ci95", "mean_vp", "mean_rank", "seat_wins", "seat_games", "mu", "sigma",
            "ordinal"} <= set(stats)
    assert len(list(records.glob("game_*.json"))) == 4


# ---------------------------------------------------------------- replay
@pytest.fixture
def saved_game(tmp_path, capsys):
    """A demo game saved to disk, and the demo's printed output."""
    path = tmp_path / "game.json"
    assert main(["demo", "--map", "italia", "--players", "2", "--agents", "random,random", "--seed", "4",
                 "--save", str(path)]) == 0
    return path, capsys.readouterr().out


def _final_scores(text: str) -> str:
    return text[text.index("Final scores"):text.index("Winner")]


def test_replay_no_pause_prints_final_scores_that_match(capsys, saved_game):
    path, demo_out = saved_game
    record = load_record(path)
    assert main(["replay", str(path), "--no-pause", "--by-action"]) == 0
    out = capsys.readouterr().out
    assert "result verified" in out
    assert _final_scores(out) == _final_scores(demo_out)
    n = len(record["actions"])
    assert f"[{n - 1}] player " in out and f"[{n}]" not in out
    assert out.count("Concordia — Italia") == n + 2  # start, after every action, final
    # by turn (the default): the same actions and result, a board per turn
    assert main(["replay", str(path), "--no-pause"]) == 0
    by_turn = capsys.readouterr().out
    assert _final_scores(by_turn) == _final_scores(demo_out)
    turns = by_turn.count("\nTurn of player ")
    assert 1 < turns < n and by_turn.count("Concordia — Italia") == turns + 2
    assert all(f"  [{i}] " in by_turn for i in range(n))


def test_replay_pauses_and_quits(capsys, saved_game):
    path, _ = saved_game
    input_fn = scripted(["", "", "q"])
    assert main(["replay", str(path), "--from", "10", "--by-action"], input_fn=input_fn) == 0
    out = capsys.readouterr().out
    assert "[10] player" in out and "[12] player" in out and "[13] player" not in out
    assert "Stopped after action 12" in out and "Final scores" not in out
    assert set(input_fn.prompts) == {"[Enter] next action, q to quit: "}


def test_replay_steps_by_turn(capsys, saved_game):
    path, _ = saved_game
    input_fn = scripted(["", "q"])
    assert main(["replay", str(path), "--from", "10"], input_fn=input_fn) == 0
    out = capsys.readouterr().out
    assert set(input_fn.prompts) == {"[Enter] next turn, q to quit: "}
    assert out.count("\nTurn of player ") == 2 and out.count("Concordia — Italia") == 2  # Enter, then q
    assert "  [10] " in out and "[9]" not in out and "Final scores" not in out
    last = int(out.split("Stopped after action ")[1].split(".")[0])
    assert f"  [{last}] " in out and f"  [{last + 1}] " not in out and last > 12


def test_replay_stops_at_end_of_input(capsys, saved_game):
    path, _ = saved_game
    assert main(["replay", str(path)], input_fn=scripted([])) == 0
    assert "Replay stopped" in capsys.readouterr().out


def test_replay_corrupt_and_missing_files(capsys, tmp_path, saved_game):
    path, _ = saved_game
    record = load_record(path)
    record["result"]["scores"][0] += 1
    bad = tmp_path / "bad.json"
    save_record(record, bad)
    assert main(["replay", str(bad), "--no-pause"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: record result 'scores'") and "Traceback" not in err

    (tmp_path / "junk.json").write_text("{")
    assert main(["replay", str(tmp_path / "junk.json")]) == 1
    assert "not valid JSON" in capsys.readouterr().err

    assert main(["replay", str(tmp_path / "nope.json")]) == 1
    assert "No such file" in capsys.readouterr().err


# ---------------------------------------------------------------- demo
def test_demo_prints_turns_board_and_final_scores(capsys):
    assert main(["demo", "--agents", "random,random,random,random", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "Concordia demo: imperium, 4 players, seed 1" in out
    assert "Turn   0, player " in out and "(random): play " in out
    assert out.count("Concordia — Imperium") == 2  # the board at the start and at the end
    assert "Final scores" in out and "Concordia" in out and "Winner: player" in out


def test_demo_default_agents():
    assert DEMO_AGENTS[:4] == ("heuristic", "mcts:iterations=200", "random", "random")
    assert len(DEMO_AGENTS) == 5


# ---------------------------------------------------------------- bad arguments
@pytest.mark.parametrize("argv,message", [
    (["play", "--map", "atlantis"], "invalid choice: 'atlantis'"),
    (["play", "--map", "italia", "--players", "5", "--opponents", "random"], "cannot be played by 5 players"),
    (["play", "--players", "x"], "invalid int value"),
    (["play", "--map", "italia", "--players", "2", "--opponents", "nosuch"], "unknown agent 'nosuch'"),
    (["play", "--map", "italia", "--players", "3", "--opponents", "random,random,random"],
     "comma list of 2, got 3"),
    (["play", "--map", "italia", "--players", "2", "--opponents", "random", "--seat", "2"], "--seat must be 0..1"),
    (["tournament", "--map", "italia", "--players", "2", "--agents", "random"], "2 players need 2 agent specs"),
    (["tournament", "--map", "italia", "--players", "2", "--agents", "random,random", "--games", "3"],
     "try 2 or 4"),
    (["tournament", "--map", "italia", "--players", "2", "--agents", "random,bogus:x=1"], "unknown agent 'bogus'"),
    (["tournament", "--map", "italia", "--players", "2", "--agents", "random,random:depth"], "not key=value"),
    (["tournament", "--players", "4"], "the following arguments are required: --agents"),
    (["demo", "--agents", "random,random"], "4 players need 4 specs, got 2"),
    (["demo", "--map", "imperium", "--players", "2", "--agents", "random,random"], "cannot be played by 2"),
    (["replay"], "the following arguments are required: FILE"),
    ([], "the following arguments are required: COMMAND"),
    (["fly"], "invalid choice: 'fly'"),
])
def test_bad_arguments_exit_2_with_a_message(capsys, argv, message):
    with pytest.raises(SystemExit) as exc:
        main(argv, input_fn=scripted([]))
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_replay_from_out_of_range(capsys, saved_game):
    path, _ = saved_game
    with pytest.raises(SystemExit) as exc:
        main(["replay", str(path), "--from", "100000"])
    assert exc.value.code == 2
    assert "--from must be 0.." in capsys.readouterr().err


# ---------------------------------------------------------------- the installed command
def _command() -> list[str]:
    exe = shutil.which("concordia")
    return [exe] if exe else [sys.executable, "-m", "concordia_env.cli"]


def test_console_script(tmp_path):
    path = tmp_path / "game.json"
    run = subprocess.run(_command() + ["demo", "--map", "italia", "--players", "2", "--agents", "random,random",
                                       "--save", str(path)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "Final scores" in run.stdout
    verify_record(load_record(path))
    # play with input piped in, ended by end of input: no traceback, exit 0
    run = subprocess.run(_command() + PLAY, input="nonsense\n1\n", capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "Game abandoned (end of input)" in run.stdout and "Traceback" not in run.stderr
    run = subprocess.run(_command() + ["replay", str(tmp_path / "missing.json")], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 1 and run.stderr.startswith("error: ") and "Traceback" not in run.stderr


@pytest.mark.parametrize("command", ["play", "tournament", "demo"])
def test_help_names_the_agent_specs_and_warns_about_untrusted_zips(command, capsys):
    with pytest.raises(SystemExit) as exc:
        main([command, "--help"])
    assert exc.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "ppo (the released policies: numpy weights, no torch needed)" in text
    assert "A .zip is loaded with pickle and can run code from the file: use only .zip files you trust." in text


@pytest.mark.parametrize("argv", [
    ["play", "--seed", "9" * 4000], ["play", "--seed", "9" * 5000], ["demo", "--seed", "-" + "1" * 4000],
    ["play", "--players", "7" * 4000], ["serve", "--port", "8" * 4000], ["tournament", "--agents", "random,random",
                                                                          "--map", "italia", "--players", "2",
                                                                          "--games", "3" * 4000],
], ids=["seed", "seed-past-int-limit", "negative-seed", "players", "port", "games"])
def test_huge_numbers_in_error_lines_are_cut(argv, capsys):
    with pytest.raises(SystemExit) as stop:
        main(argv, input_fn=scripted([]))
    assert stop.value.code == 2
    err = capsys.readouterr().err
    line = err.strip().splitlines()[-1]
    assert "Traceback" not in err and line.startswith("concordia ") and ": error: " in line
    assert len(line) < 300 and "… (" in line and " digits)" in line, line


def test_seeds_are_0_to_2_63_minus_1(capsys):
    with pytest.raises(SystemExit):
        main(["play", "--seed", str(2**63)])
    assert f"--seed: must be 0..{2**63 - 1}, got {2**63}" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["demo", "--seed", "-1"])
    assert "must be 0.." in capsys.readouterr().err
