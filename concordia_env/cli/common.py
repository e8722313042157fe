"""What the ``concordia`` subcommands share: the parser class, seeds, agent specs, the setup
checks, the compile step, game printing and saving, and resuming a human's game."""

from __future__ import annotations

import argparse
import os
import shlex
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TextIO

from .._internal.shorten import cut_numbers
from ..agents.base import Agent, make_agent, parse_spec
from ..agents.human import HUMAN_NAME as HUMAN_NAME  # re-exported: the subcommands name seats with it
from ..agents.human import InputFn as InputFn
from ..display.render import WIDTH, score_table, state_to_text, wrap
from ..game import check_setup_args
from ..state import GameState

# The arena (records, tournaments) is imported by the commands that use it: it brings in the
# environment's dependencies and compiled kernels, which `concordia --help` does without.

#: who ``concordia play`` and ``serve`` put in the other seats unless told
DEFAULT_OPPONENT = "heuristic"

#: how agents are named on the command line, with the warning that a model .zip must be trusted
AGENT_SPECS_HELP = """\
agent specs: random | heuristic | mcts[:iterations=N][:ms=M] | ppo (the released
policies: numpy weights, no torch needed) | az[:simulations=N][:leaf_mix=W]
[:prior_mix=W] (search with the released network's values) | net[:head=win]
[:stall_rounds=R] (that network alone; the heuristic moves for it in a long game
stalled R rounds, 0: never; az and net take :net=STEM for another network file
pair) | policy:path=FILE, where FILE is a
numpy policy pair (.npz + .json, e.g. from export_policy) or a stable-baselines3
.zip (needs the train extra). A .zip is loaded with pickle and can run code from
the file: use only .zip files you trust. Your own agents: bot:manifest=FILE.json
| bot:cmd=COMMAND (a program in any language playing over JSON lines, see
docs/bot-protocol.md; [:move_ms=N][:start_ms=N]) | MODULE:CLASS[:key=value] (an
Agent subclass imported from MODULE) | a name installed as a
concordia_env.agents entry point."""

#: the seeds the commands take: what the setup and the agents' seeds are made from, 63 bits
MAX_SEED = 2**63 - 1
#: agent-spec options that name a file to load (``policy:path=FILE``, ``az:net=STEM``, ``net:net=STEM``,
#: ``bot:manifest=FILE``)
FILE_OPTIONS = ("path", "net", "manifest")


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser whose error line cuts huge numbers (:func:`cut_numbers`): ``--seed`` with
    4,000 digits is named, not printed in full."""

    def error(self, message: str) -> NoReturn:
        super().error(cut_numbers(message))


def seed_arg(text: str) -> int:
    """``--seed``: an integer 0..:data:`MAX_SEED` (argparse names the option in the error)."""
    try:
        seed = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer 0..{MAX_SEED}, got {text!r}") from None
    if not 0 <= seed <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"must be 0..{MAX_SEED}, got {seed}")
    return seed



class UsageError(Exception):
    """A bad command-line value, reported through the subcommand's ``parser.error``."""



# ---------------------------------------------------------------- printing games
def move_printer(names: Sequence[str], out: TextIO) -> Callable[[GameState, int, int], None]:
    """An ``on_step`` callback printing each action on its own line as ``player k (name): action``."""

    def on_step(state: GameState, seat: int, action: int) -> None:
        print("\n".join(wrap(f"player {seat} ({names[seat]}): {state.action_to_string(action)}", WIDTH)), file=out)

    return on_step


def print_outcome(state: GameState, record: dict[str, Any], out: TextIO) -> None:
    """Final board, the score table with the per-god breakdown and the winner (with its agent)."""
    # the score table names the winner of a finished game, once, with the agents' names
    print("\n" + state_to_text(state) + "\n\n" + score_table(state, record["agents"]), file=out)
    result = record["result"]
    if result.get("unfinished"):
        print(f"Game left unfinished after {result['turns']} card plays: no winner "
              "(concordia play --resume continues it).", file=out)
    elif "forfeit" in result:
        print(f"Game forfeited by player {result['forfeit']['seat']} after {result['turns']} card plays: no "
              f"winner. {result['forfeit']['reason']}", file=out)
    elif result["truncated"]:
        print(f"Game stopped (truncated) after {result['turns']} card plays: no winner.", file=out)


def seat_lines(names: Sequence[str]) -> str:
    return "\n".join(f"  player {k}: {name}" for k, name in enumerate(names))


# ---------------------------------------------------------------- setup, agents, compiling
def check_setup(map_name: str, players: int) -> None:
    try:
        check_setup_args(map_name, players)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def build_agents(specs: Sequence[str]) -> list[Agent]:
    try:
        return [make_agent(s) for s in specs]
    except ValueError as exc:
        raise UsageError(str(exc)) from None


#: the compiled kernels each agent searches with, besides the rules engine and the observation encoder
AGENT_KERNELS: dict[str, tuple[str, ...]] = {"heuristic": ("heuristic",), "mcts": ("mcts",), "az": ("mcts", "az_search"),
                                             "turn": ("heuristic", "turns")}


def kernel_groups(specs: Sequence[str]) -> list[str]:
    """The :mod:`concordia_env._internal.jit` kernel groups a game between the agents ``specs`` runs."""
    groups = ["engine", "encoding"]
    for spec in specs:
        name, options = parse_spec(spec)
        groups += AGENT_KERNELS.get(name, ())
        if name == "mcts" and options.get("rollout") == "random":
            groups.append("rollout")
        if name == "az" and options.get("turns"):
            groups.append("turn_search")
    return groups


def compile_for(groups: Sequence[str]) -> None:
    """Compile what a command needs before it starts, so a first run says so and shows progress
    instead of pausing silently (and a warm start, loading from the cache, prints nothing)."""
    from .._internal.jit import compile_kernels

    compile_kernels(groups)


def split_specs(text: str) -> list[str]:
    """``"heuristic,random"`` -> ``["heuristic", "random"]`` (specs never contain commas)."""
    return [s.strip() for s in text.split(",")]


def opponent_specs(text: str, players: int, option: str = "--opponents") -> list[str]:
    """One spec for every other seat, or a comma list of exactly ``players - 1`` specs (``option``:
    the command-line option the text came from, named in the error)."""
    specs = split_specs(text)
    if len(specs) == 1:
        return specs * (players - 1)
    if len(specs) != players - 1:
        raise UsageError(f"{option}: give one spec for all {players - 1} other seats or a comma list "
                         f"of {players - 1}, got {len(specs)}: {text!r}")
    return specs


def default_save_name(map_name: str, players: int, seed: int) -> str:
    """The file ``q`` offers to save a game to when ``play`` got no ``--save``."""
    return f"concordia-{map_name}-{players}p-seed{seed}.json"


def load_resumable(path: str, seat: int | None) -> tuple[dict[str, Any], int]:
    """An unfinished record (``play`` or ``serve``) and the seat its human played; ``ValueError``
    for a record that cannot be continued, ``UsageError`` if ``seat`` (``--seat``) is another."""
    from ..arena.records import is_unfinished, load_record

    record = load_record(path)
    if not is_unfinished(record):
        how = "truncated at its card-play limit" if record["result"]["truncated"] else "finished"
        raise ValueError(f"{path}: the game is {how}; only an unfinished game can be resumed")
    names = record["agents"]
    humans = [k for k, name in enumerate(names) if name == HUMAN_NAME]
    if len(humans) != 1:
        raise ValueError(f"{path}: expected one seat played by {HUMAN_NAME!r}, the agents are {names}")
    if seat is not None and seat != humans[0]:
        raise UsageError(f"--seat {seat}: in {path} you play seat {humans[0]}")
    return record, humans[0]


def named_file(spec: str) -> str | None:
    """The file an agent spec loads (``policy:path=FILE``, ``az:net=STEM``, ...), or None for an
    agent built from the package alone. A malformed spec names none (making it fails anyway)."""
    try:
        _, options = parse_spec(spec)
    except ValueError:
        return None
    return next((str(options[key]) for key in FILE_OPTIONS if key in options), None)


def record_opponents(record: dict[str, Any], seat: int, path: str, option: str) -> list[str]:
    """The specs of the other seats' agents as a record names them, for ``--resume`` without
    ``option`` (``--opponents``, ``--agents``). A record is data that may come from anyone, and a
    model file can run code when loaded (a stable-baselines3 .zip is a pickle): so an agent that
    loads a file is refused (:class:`UsageError`) unless the user names that file on the command
    line, which the message shows how to do. So is an agent that imports a Python module
    (``module:Class``) or starts a program (``bot:cmd=...``): nothing is imported or started."""
    from ..agents.external import outside_code

    others = [name for k, name in enumerate(record["agents"]) if k != seat]
    yourself = f"if you trust it, name the agents yourself: {option} {shlex.quote(short_text(','.join(others), 600))}"
    for k, name in enumerate(record["agents"]):
        if k == seat:
            continue
        shown = short_text(name, 200)
        file = named_file(name)
        if file is not None:
            raise UsageError(f"{path}: the agent at seat {k}, {shown!r}, loads the file {short_text(file, 200)!r}, "
                             f"and a file named only by a record is never loaded; {yourself}")
        runs = outside_code(name)
        if runs is not None:
            raise UsageError(f"{path}: the agent at seat {k}, {shown!r}, {runs}, and an agent named only by a "
                             f"record never does; {yourself}")
    return others


def short_text(text: str, limit: int = 80) -> str:
    """``text`` cut to ``limit`` characters (``...`` at the end), for a message naming untrusted data."""
    return text if len(text) <= limit else text[:limit - 3] + "..."


def save_game(record: dict[str, Any], path: str) -> str | None:
    """Save ``record`` to ``path``; the reason as one line if it cannot be written, else None."""
    from ..arena.records import save_record

    if os.path.isdir(path):
        return f"{path} is a folder"
    try:
        save_record(record, path)
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def seat_arguments(p: argparse.ArgumentParser, others: str) -> None:
    """The options a human's game shares (``concordia play`` and ``serve``): the agents at the other
    seats (option ``others``), the human's seat and the setup seed."""
    p.add_argument(others, default=None, metavar="SPECS",
                   help=f"one agent spec for every other seat, or a comma list of players-1 specs "
                        f"(default {DEFAULT_OPPONENT}; with --resume, the record's agents)")
    p.add_argument("--seat", type=int, default=None, help="your seat, 0..players-1 (default 0)")
    p.add_argument("--seed", type=seed_arg, default=0, help="game setup seed (default 0)")
