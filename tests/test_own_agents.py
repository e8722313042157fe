"""Your own Python agents: ``module:Class`` specs and the ``concordia_env.agents`` entry points play
wherever a built-in does (here ``concordia tournament``), checked to be Agent subclasses, built with
the seed and options; and a spec read back from a file (a record, a results file, a strength config)
never imports a module (``tests/own_agents/canary_agent.py`` marks its import)."""

from __future__ import annotations

import json
import os
import re
import sys
from importlib import metadata
from pathlib import Path

import pytest
from test_server import quick_serve  # noqa: F401 - the fixture: serve stops at once, as after Ctrl-C

from concordia_env.agents import external, make_agent, parse_spec
from concordia_env.arena import strength as st
from concordia_env.arena.records import partial_record, save_record
from concordia_env.cli import main

HERE = Path(__file__).resolve().parent
CANARY = "CONCORDIA_CANARY_IMPORTED"


@pytest.fixture
def own_agents(monkeypatch):
    """``tests/own_agents`` on ``sys.path`` (as a user's own package would be); the canary unset
    and unimported before and after."""
    monkeypatch.syspath_prepend(str(HERE / "own_agents"))
    monkeypatch.delenv(CANARY, raising=False)
    yield
    sys.modules.pop("canary_agent", None)


def _not_imported() -> bool:
    return CANARY not in os.environ and "canary_agent" not in sys.modules


def test_module_specs_parse_without_importing(own_agents):
    assert parse_spec("tiny_agents:Offset") == ("tiny_agents:Offset", {})
    assert parse_spec("pkg.sub.bots:Outer.Inner:depth=3:c=0.5") == ("pkg.sub.bots:Outer.Inner", {"depth": 3, "c": 0.5})
    assert parse_spec("canary_agent:Canary:offset=1") == ("canary_agent:Canary", {"offset": 1})
    with pytest.raises(ValueError, match="option 'fast' is not key=value"):  # a built-in keeps its options
        parse_spec("mcts:fast")
    assert _not_imported()


def test_a_module_agent_is_built_with_the_seed_and_options(own_agents):
    agent = make_agent("tiny_agents:Offset:offset=2", seed=7)
    assert type(agent).__name__ == "Offset" and agent.offset == 2 and agent.built_with_seed == 7
    assert agent.name == "tiny_agents:Offset:offset=2"


@pytest.mark.parametrize("spec, message", [
    ("tiny_agents:NotAnAgent", "'tiny_agents:NotAnAgent': tiny_agents:NotAnAgent is not an Agent subclass "
                               r"\(concordia_env.agents.base.Agent\): it is the class NotAnAgent"),
    ("tiny_agents:offset_agent", "is not an Agent subclass .*: it is a function"),
    ("os:system", "os:system is not an Agent subclass .*: it is a builtin_function_or_method"),
    ("tiny_agents:Unfinished", "is abstract: it does not implement act"),
    ("tiny_agents:Missing", "module 'tiny_agents' has no 'Missing'"),
    ("no_such_module_here:Bot", "cannot import module 'no_such_module_here' .*ModuleNotFoundError"),
    ("tiny_agents:Offset:depth=3", "unexpected keyword argument 'depth'"),
    ("not a module:Bot", "is neither a known agent nor MODULE:CLASS"),
])
def test_a_bad_module_spec_is_one_clear_line(own_agents, spec, message):
    with pytest.raises(ValueError, match=message) as info:
        make_agent(spec)
    assert "\n" not in str(info.value)


def test_a_spec_from_a_file_imports_nothing(own_agents):
    with pytest.raises(ValueError, match="'canary_agent:Canary' would import the Python module 'canary_agent', "
                                         "and a spec read from a file never imports a module"):
        make_agent("canary_agent:Canary", allow_import=False)
    assert _not_imported()
    assert make_agent("random", allow_import=False).name == "random"  # built-ins are made as before
    assert external.outside_code("os:system") == "imports the Python module 'os'"
    assert external.outside_code("bot:cmd=./x") == "starts the program './x'"
    assert external.outside_code("mcts:ms=5") is None and external.outside_code("bad:spec:") is None


def test_a_module_agent_plays_a_tournament(own_agents, tmp_path, capsys):
    out = tmp_path / "results.json"
    assert main(["tournament", "--map", "italia", "--players", "2", "--agents",
                 "tiny_agents:Offset:offset=-1,tiny_agents:Offset", "--games", "2", "--out", str(out),
                 "--no-progress"]) == 0
    result = json.loads(out.read_text())
    assert result["complete"] and result["forfeits"] == 0
    assert set(result["per_agent"]) == {"tiny_agents:Offset:offset=-1", "tiny_agents:Offset"}
    assert all(a["games"] == 2 for a in result["per_agent"].values())
    assert "tiny_agents:Offset:offset=-1" in capsys.readouterr().out


def test_an_entry_point_agent_is_named_like_a_built_in(own_agents, monkeypatch, tmp_path):
    def entry_points(**select):
        assert select == {"group": "concordia_env.agents"}
        return [metadata.EntryPoint("tiny", "tiny_agents:Offset", "concordia_env.agents"),
                metadata.EntryPoint("random", "tiny_agents:NotAnAgent", "concordia_env.agents"),  # a built-in wins
                metadata.EntryPoint("broken", "tiny_agents:NotAnAgent", "concordia_env.agents")]

    monkeypatch.setattr(external.metadata, "entry_points", entry_points)
    agent = make_agent("tiny:offset=3", seed=4)
    assert type(agent).__name__ == "Offset" and agent.offset == 3 and agent.name == "tiny:offset=3"
    assert make_agent("tiny", allow_import=False).offset == 0  # installed as an agent: not refused
    assert type(make_agent("random")).__name__ == "RandomAgent"
    with pytest.raises(ValueError, match="agent 'broken' \\(entry point 'tiny_agents:NotAnAgent' of group "
                                         "'concordia_env.agents'\\) is not an Agent subclass"):
        make_agent("broken")
    with pytest.raises(ValueError, match="unknown agent 'nosuch'; known: az, bot, .*, turn, broken, tiny, or MODULE:CLASS"):
        make_agent("nosuch")
    out = tmp_path / "r.json"
    assert main(["tournament", "--map", "italia", "--players", "2", "--agents", "tiny:offset=1,random",
                 "--games", "2", "--out", str(out), "--no-progress"]) == 0
    assert json.loads(out.read_text())["per_agent"]["tiny:offset=1"]["games"] == 2


@pytest.mark.parametrize("agent", ["os:system", "canary_agent:Canary", "bot:cmd=./evil"])
def test_a_record_naming_a_module_imports_nothing(own_agents, tmp_path, capsys, agent):
    path = tmp_path / "shared.json"
    save_record(partial_record("italia", 2, 5, ["human", agent], []), path)
    with pytest.raises(SystemExit) as stop:
        main(["play", "--resume", str(path)], input_fn=lambda prompt="": "q")
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "Traceback" not in err
    line = err.strip().splitlines()[-1]
    runs = "starts the program './evil'" if agent.startswith("bot") else f"imports the Python module '{agent.split(':')[0]}'"
    assert f"the agent at seat 1, '{agent}', {runs}, and an agent named only by a record never does" in line
    assert f"--opponents {agent}" in line  # how to name it yourself
    assert _not_imported()


def test_a_results_file_naming_a_module_imports_nothing(own_agents, tmp_path, capsys):
    out = tmp_path / "results.json"
    args = ["tournament", "--map", "italia", "--players", "2", "--agents", "random,random", "--games", "4",
            "--save-every", "2", "--out", str(out), "--no-progress"]
    assert main(args) == 0
    data = json.loads(out.read_text())
    data.update(agents=["canary_agent:Canary", "random"], complete=False)
    out.write_text(json.dumps(data))
    # the specs come from the command line, never from the file
    assert main([*args, "--resume"]) == 2 and "is another tournament's" in capsys.readouterr().err
    assert _not_imported()


def test_a_strength_config_never_imports_a_module(own_agents):
    config = {"agents": [{"name": "canary", "spec": "canary_agent:Canary"}, {"name": "random", "spec": "random"}],
              "settings": [{"id": "italia2", "map": "italia", "players": 2, "deals": 1, "seed": 0,
                            "agents": ["canary", "random"]}]}
    with pytest.raises(ValueError, match=r"agents\[0\].spec 'canary_agent:Canary' would import the Python module "
                                         "'canary_agent', and a config never imports a module"):
        st.parse_config(config, "config x.json")
    assert _not_imported()


def test_an_illegal_action_of_a_python_agent_is_a_forfeit_in_a_tournament(own_agents, capsys):
    assert main(["tournament", "--map", "italia", "--players", "2", "--agents", "tiny_agents:IllegalAt:at=2,random",
                 "--games", "2", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "2 forfeited" in out
    assert re.search(r"\nforfeit: game 0, seat 0 \(tiny_agents:IllegalAt:at=2\): agent 'tiny_agents:IllegalAt:at=2' "
                     r"at seat 0 chose illegal action \d+ \(action #\d+ of the game\)", out)


def test_module_and_bot_agents_serve_in_the_browser(own_agents, tmp_path, quick_serve):  # noqa: F811
    bot = f"bot:manifest={HERE.parent / 'examples' / 'bots' / 'python' / 'bot.json'}"
    assert main(["serve", "--map", "italia", "--players", "3", "--agents", f"tiny_agents:Offset:offset=1,{bot}",
                 "--port", "0", "--save", str(tmp_path / "game.json")]) == 130
    session = quick_serve[0]
    assert session.names == ["human", "tiny_agents:Offset:offset=1", bot]
    assert type(session.agents[1]).__name__ == "Offset" and session.agents[1].offset == 1
    session.agents[2].close()  # the bot's process, started when it first decided


def test_a_strength_config_lists_entry_point_agents(own_agents, monkeypatch):
    monkeypatch.setattr(external.metadata, "entry_points",
                        lambda **select: [metadata.EntryPoint("tiny", "tiny_agents:Offset", "concordia_env.agents")])
    config = {"agents": [{"name": "tiny", "spec": "tiny:offset=1"}, {"name": "random", "spec": "random"}],
              "settings": [{"id": "italia2", "map": "italia", "players": 2, "deals": 1, "seed": 0,
                            "agents": ["tiny", "random"]}]}
    assert st.parse_config(config).agents == {"tiny": "tiny:offset=1", "random": "random"}
