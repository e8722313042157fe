"""The documentation's promises: its figures match the committed results, its commands, modules, links,
cited tests and examples exist and work.

Pages: README.md and docs/*.md (notebooks/README.md for links too). The training checks compare
docs/training.md with what releases/ records of the runs that made the released policies."""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import math
import re
import statistics
from pathlib import Path

import pytest

from concordia_env.data import MAP_NAMES, load_map

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
RELEASE = ROOT / "releases"
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
LINKED_PAGES = [*PAGES, ROOT / "notebooks" / "README.md"]

# the layout of the repository when the released runs were made -> today's (see docs/training.md)
OLD_TO_NEW = (("training/train_ppo.py", "python -m concordia_env.training.ppo"),
              ("agents/policies/", "releases/"))


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def page_id(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def fenced(text: str, lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", text, flags=re.S | re.M)


def code_spans(text: str) -> list[str]:
    """Every fenced block and every inline code span of a page."""
    blocks = re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.S | re.M)
    prose = re.sub(r"^```[^\n]*\n.*?^```", "", text, flags=re.S | re.M)
    return blocks + re.findall(r"`([^`\n]+)`", prose)


def documented_commands(text: str, prefix: str) -> list[str]:
    """Lines of the page's code that start with ``prefix`` (line continuations joined)."""
    out = []
    for span in code_spans(text):
        for line in span.replace("\\\n", " ").splitlines():
            line = line.strip()
            if line.startswith(prefix):
                out.append(re.sub(r"\s+", " ", line))
    return out


# ------------------------------------------------------------------ figures


def test_observation_table_matches_the_code():
    from concordia_env.encoding import OBSERVATION_FIELDS, OBSERVATION_LAYOUT

    text = read(DOCS / "environment.md")
    rows = re.findall(r"^\| `(\w+)` \| ([\d×]+) \| (\d+)–(\d+) \|", text, flags=re.M)
    assert [r[0] for r in rows] == [name for name, _, _ in OBSERVATION_FIELDS]
    for name, shape, start, stop in rows:
        _, want_shape, _ = next(f for f in OBSERVATION_FIELDS if f[0] == name)
        assert tuple(int(x) for x in shape.split("×")) == want_shape, name
        assert OBSERVATION_LAYOUT[name] == slice(int(start), int(stop) + 1), name
    size = OBSERVATION_LAYOUT[OBSERVATION_FIELDS[-1][0]].stop
    assert f"Box(float32, ({size},))" in text and f"{size:,} numbers" in text


@pytest.mark.parametrize("which", ["state", "table"])
def test_architecture_field_tables_match_the_engine(which):
    from concordia_env import engine as E

    fields, layout, size = ((E.STATE_FIELDS, E.STATE_LAYOUT, E.STATE_SIZE) if which == "state"
                            else (E.TABLE_FIELDS, E.TABLE_LAYOUT, E.TABLE_SIZE))
    text = read(DOCS / "architecture.md")
    header = "| field | shape | offset | meaning |"
    tables = [t.split("\n\n")[0] for t in text.split(header)[1:]]
    assert len(tables) == 2
    rows = re.findall(r"^\| `(\w+)` \| ([\w×]+) \| (\d+) \|", tables[0 if which == "state" else 1], flags=re.M)
    want = [(name, "×".join(map(str, shape)) if shape else "scalar", str(layout[name][0])) for name, shape in fields]
    assert rows == want
    assert f"`engine.{which.upper()}_SIZE` = {size:,}" in text


def test_strength_figures_match_the_committed_tournament_results():
    text = read(DOCS / "agents.md")
    files = sorted((ROOT / "results").glob("*.json"))
    assert len(files) >= 2
    for path in files:
        res = json.loads(read(path))
        first, *others = list(dict.fromkeys(res["agents"]))
        a = res["per_agent"][first]
        lo, hi = a["win_rate_ci95"]
        other_vp = res["per_agent"][others[0]]["mean_vp"]
        claim = (f"**{a['wins']} of {a['games']}** ({100 * a['win_rate']:.1f}%, 95% CI {100 * lo:.1f}–{100 * hi:.1f}%), "
                 f"mean {a['mean_vp']:.1f} VP against {other_vp:.1f}")
        assert claim in text, claim
        command = (f"concordia tournament --map {res['map']} --players {res['players']} --agents {','.join(res['agents'])} "
                   f"--games {res['games']} --seed {res['seed']} --workers 2 --out results/{path.name}")
        assert command in text, command
        assert res["truncated"] == 0


def test_self_play_table_matches_the_committed_results():
    """Games end: every agent against copies of itself, none truncated, as the files say."""
    text = read(DOCS / "agents.md")
    files = sorted((ROOT / "results" / "self_play").glob("*.json"))
    assert len(files) == 12
    for path in files:
        res = json.loads(read(path))
        assert len(set(res["lineup"])) == 1 and res["truncated"] == 0
        turns = sorted(g["turns"] for g in res["per_game"])
        setting = f"{res['map'].capitalize()}, {res['players']}"
        median = int(statistics.median(turns))
        row = f"| {setting} | `{res['lineup'][0]}` | {len(turns)} | 0 | {median} | {turns[-1]} |"
        assert row in text, row


@pytest.mark.parametrize("map_name", MAP_NAMES)
def test_release_was_made_by_the_documented_command(map_name):
    """The runs were made in the earlier layout: the recorded command, moved to today's paths, is the documented one."""
    text = read(DOCS / "training.md")
    config = json.loads(read(RELEASE / f"{map_name}_config.json"))
    wall = json.loads(read(RELEASE / f"{map_name}_wall_time.json"))
    assert config["map"] == map_name and config["resume"] is None
    assert wall["timesteps"] >= config["total_steps"]
    recorded = config["command"]
    assert recorded.startswith("training/train_ppo.py ")
    command = recorded
    for old, new in OLD_TO_NEW:
        command = command.replace(old, new)
    assert command in documented_commands(text, "python -m concordia_env.training.ppo "), command
    assert f"{wall['seconds'] / 60:.0f} min" in text
    assert recorded.split(" --map")[0] in text and "agents/policies/" in text  # the honest note on the old form


@pytest.mark.parametrize("map_name", MAP_NAMES)
def test_documented_evaluation_figures_match_the_committed_results(map_name):
    text = read(DOCS / "training.md")
    results = json.loads(read(RELEASE / f"eval_{map_name}.json"))
    assert results["policy"] == f"agents/policies/ppo_{map_name}.zip" and results["deterministic"]
    assert {m["players"] for m in results["matchups"]} == set(load_map(map_name).players)
    for m in results["matchups"]:
        lo, hi = m["win_rate_ci95"]
        claim = (f"| {map_name.capitalize()} {m['players']} | {m['opponent']} | **{m['wins']} of {m['games']}** "
                 f"({100 * m['win_rate']:.1f}%, 95% CI {100 * lo:.1f}–{100 * hi:.1f}%) | {m['mean_vp']:.1f} |")
        assert claim in text, claim
        assert m["tournament"]["truncated"] == 0


@pytest.mark.parametrize("map_name", MAP_NAMES)
def test_documented_evaluation_command_matches_the_results(map_name):
    text = read(DOCS / "training.md")
    results = json.loads(read(RELEASE / f"eval_{map_name}.json"))
    policy = results["policy"]
    for old, new in OLD_TO_NEW:
        policy = policy.replace(old, new)
    # (the release's command: training.md also shows evaluating a short run of one's own)
    (command,) = [c for c in documented_commands(text, "python -m concordia_env.training.evaluate")
                  if f"--map {map_name} " in c and "--out releases/" in c]
    assert f"--policy {policy} " in command
    assert f"--seed {results['seed']} " in command and f"--out releases/eval_{map_name}.json" in command
    games = int(re.search(r"--games (\d+)", command).group(1))
    opponents = re.findall(r"--vs (\S+)", command)
    assert {m["opponent"] for m in results["matchups"]} == set(opponents)
    for m in results["matchups"]:
        assert m["games"] == math.ceil(games / m["players"]) * m["players"]


# ------------------------------------------------------------------ links, modules, commands


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", read(path), flags=re.S | re.M)
    return {_slug(h) for h in re.findall(r"^#+ (.+)$", text, flags=re.M)}


def _links(path: Path) -> list[str]:
    text = re.sub(r"^```.*?^```", "", read(path), flags=re.S | re.M)
    text = re.sub(r"`[^`\n]*`", "code", text)
    return re.findall(r"\]\(([^)\s]+)\)", text)


@pytest.mark.parametrize("page", LINKED_PAGES, ids=page_id)
def test_relative_links_point_to_existing_files(page):
    links = _links(page)
    assert links or page.name != "README.md" or page.parent != ROOT
    for link in links:
        if re.match(r"^[a-z]+:", link):
            continue  # https:, mailto:
        target, _, anchor = link.partition("#")
        path = (page.parent / target).resolve() if target else page
        assert path.exists(), f"{page_id(page)}: link to {link} points to nothing"
        assert ROOT in path.parents or path == ROOT, f"{page_id(page)}: link to {link} leaves the repository"
        if anchor and path.suffix == ".md":
            assert anchor in _anchors(path), f"{page_id(page)}: no heading #{anchor} in {target or page.name}"


def test_every_documented_python_module_exists():
    modules = {m for page in LINKED_PAGES for m in re.findall(r"\bpython3? -m ([\w.]+)", read(page))}
    assert "concordia_env.tools.bench" in modules and "concordia_env.training.ppo" in modules
    missing = sorted(m for m in modules if importlib.util.find_spec(m) is None)
    assert not missing, f"the docs run modules that do not exist: {missing}"


def test_every_documented_concordia_subcommand_exists():
    from concordia_env.cli import build_parser

    (sub,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    used = {m for page in LINKED_PAGES for span in code_spans(read(page))
            for m in re.findall(r"(?:^|[\s(])concordia ([a-z][\w-]*)", span)}
    assert {"demo", "play", "tournament", "replay"} <= used
    assert used <= set(sub.choices), f"unknown subcommands in the docs: {sorted(used - set(sub.choices))}"


def test_every_cited_test_exists():
    defined = {m for path in (ROOT / "tests").glob("test_*.py")
               for m in re.findall(r"^def (test_\w+)", read(path), flags=re.M)}
    cited = {m for page in PAGES for m in re.findall(r"`(test_\w+)`", read(page))}
    assert len(cited) > 20
    assert not cited - defined, f"the docs cite tests that do not exist: {sorted(cited - defined)}"


def test_the_complexity_backlog_lists_every_marked_function():
    text = read(DOCS / "architecture.md")
    backlog = text.split("## Refactoring backlog", 1)[1]
    marked = {m for folder in ("concordia_env", "tests") for path in (ROOT / folder).rglob("*.py")
              for m in re.findall(r"^\s*def (\w+)\(.*# noqa: C901", read(path), flags=re.M)}
    missing = sorted(m for m in marked if f"`{m}`" not in backlog)
    assert not missing, f"functions marked # noqa: C901 but not in docs/architecture.md's backlog: {missing}"


# ------------------------------------------------------------------ examples


EXAMPLES = [(page, i, block) for page in PAGES for i, block in enumerate(fenced(read(page), "python"))]


@pytest.mark.parametrize("page, i, block", EXAMPLES, ids=[f"{page_id(p)}#{i}" for p, i, _ in EXAMPLES])
def test_python_examples_run(page, i, block):
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(block, f"{page_id(page)}, example {i}", "exec"), {"__name__": "__doc_example__"})
