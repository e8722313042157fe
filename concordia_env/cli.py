"""``concordia``: play against the baseline agents, run tournaments, replay and demo games.

Examples::

    concordia demo --seed 0
    concordia play --map italia --players 2 --opponents heuristic
    concordia tournament --map imperium --players 4 --agents heuristic,random,random,random \\
        --games 200 --workers 2 --out results.json
    concordia play --resume game.json
    concordia replay game.json --no-pause
    concordia replay game.json --html game.html

Agents are named by spec strings (``random``, ``heuristic``, ``mcts:ms=500``, ...;
see :mod:`concordia_env.agents.base`).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NoReturn, TextIO

import numpy as np

from concordia_env import engine as E
from concordia_env.data import MAP_NAMES
from concordia_env.game import check_setup_args
from concordia_env.menu import Menu, build_menu
from concordia_env.render import WIDTH, TurnPrinter, score_table, state_to_text, status_lines, wrap
from concordia_env.shorten import cut_numbers
from concordia_env.state import GameState, new_game

from .agents.base import Agent, check_mask, make_agent, parse_spec

# The arena (records, tournaments) is imported by the commands that use it: it brings in the
# environment's dependencies and compiled kernels, which `concordia --help` does without.

#: the demo's agents by seat; an n-player demo takes the first n
DEMO_AGENTS: tuple[str, ...] = ("heuristic", "mcts:iterations=200", "random", "random", "random")
#: who ``concordia play`` puts in the other seats unless told
DEFAULT_OPPONENT = "heuristic"
HUMAN_NAME = "human"

InputFn = Callable[[str], str]

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
the file: use only .zip files you trust."""

PLAY_HELP = """\
Type the number of an action to play it: each action keeps its number for the
whole decision, whether or not its group is shown, and through all the steps of
one card's action (a move no longer possible leaves a gap; a new one gets a new
number).
  a, c, d, ...     show a group the menu sums up in one line
  a1, a2, ...      show one part of a group (a colonist's moves of one cost)
  m, menu          show the menu again
  b, board         show the board and the menu again
  h, help          this help
  q, quit, exit    leave the game (offers to save it to continue later with
                   concordia play --resume FILE; with --save it is saved)
  Ctrl-D, Ctrl-C   leave too (saved with --save; Ctrl-C exits with status 130)
Houses are written P0 ... P4 (player 0 ... 4): "Sirmium [brick] houses P0 P3"."""


#: the seeds the commands take: what the setup and the agents' seeds are made from, 63 bits
MAX_SEED = 2**63 - 1
#: agent-spec options that name a file to load (``policy:path=FILE``, ``az:net=STEM``, ``net:net=STEM``)
FILE_OPTIONS = ("path", "net")
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


class QuitGame(Exception):
    """The human asked to leave the game."""


class UsageError(Exception):
    """A bad command-line value, reported through the subcommand's ``parser.error``."""


# ---------------------------------------------------------------- human player
class HumanAgent(Agent):
    """A player at the terminal. At each decision it shows the board (when the decision starts a
    turn, or on ``b``), the legal actions as a grouped, numbered menu
    (:func:`concordia_env.menu.build_menu`) and, right above the prompt, the player's own status;
    then it reads a choice. Every line fits ``width`` columns.

    Input comes from ``input_fn`` (``input`` by default) so tests can script it; bad input is
    answered with one line and the same prompt. ``quit`` raises :class:`QuitGame`, end of input
    ``EOFError``."""

    name = HUMAN_NAME

    def __init__(self, input_fn: InputFn = input, out: TextIO | None = None, width: int = WIDTH) -> None:
        self.input_fn = input_fn
        self.out = out
        self.width = width
        self._board_turn: int | None = None  # the card play after which the board was last shown
        # the numbers given during the card's action now, so a number keeps its meaning through its steps
        self._numbers: dict[int, int] = {}
        self._numbers_for: tuple[int, bool] | None = None

    def reset(self, seed: int | None = None) -> None:
        """A new game: its first decision shows the board."""
        super().reset(seed)
        self._board_turn = None
        self._numbers, self._numbers_for = {}, None

    def _menu(self, state: GameState) -> Menu:
        """The decision's menu, numbered on from the earlier steps of the same card's action (the
        choice of a card is a step of its own): an option keeps its number, a new one gets a new
        number."""
        step = (int(state.field("turn")), state.phase == E.PH_PLAY)
        if step != self._numbers_for:
            self._numbers, self._numbers_for = {}, step
        menu = build_menu(state, "you", self.width, numbers=self._numbers)
        self._numbers.update(menu.numbering)
        return menu

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: GameState | None = None) -> int:
        if state is None:
            raise ValueError("HumanAgent needs the game state to show the board")
        out = self.out or sys.stdout
        legal = check_mask(action_mask).tolist()
        if legal != state.legal_actions():
            raise ValueError("HumanAgent: the action mask is not the legal actions of the state given")
        if len(legal) == 1:  # nothing to decide: don't make the human type it
            print("\n".join(wrap(f"(your only choice) {state.action_to_string(legal[0])}", self.width)), file=out)
            return legal[0]
        menu = self._menu(state)
        turn = int(state.field("turn"))
        self._show(state, menu, out, board=turn != self._board_turn)
        while True:
            try:
                choice = menu.parse(self.input_fn(menu.prompt))
            except ValueError as exc:
                print(exc, file=out)
                continue
            if choice.kind == "action":
                return choice.action
            if choice.kind == "quit":
                raise QuitGame
            if choice.kind == "help":
                print(PLAY_HELP, file=out)
            else:  # "board", "menu" or "view"
                self._show(state, menu, out, board=choice.kind == "board", key=choice.key or None)

    def _show(self, state: GameState, menu: Menu, out: TextIO, board: bool = False, key: str | None = None) -> None:
        """The board (if ``board``), the menu (or its part ``key``) and the player's status."""
        if board:
            print("\n" + state_to_text(state, self.width), file=out)
            self._board_turn = int(state.field("turn"))
        lines = ["", *menu.view(key), "", *status_lines(state, state.current_player, self.width)]
        print("\n".join(lines), file=out)


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
    elif result["truncated"]:
        print(f"Game stopped (truncated) after {result['turns']} card plays: no winner.", file=out)


def _seat_lines(names: Sequence[str]) -> str:
    return "\n".join(f"  player {k}: {name}" for k, name in enumerate(names))


# ---------------------------------------------------------------- commands
def _check_setup(map_name: str, players: int) -> None:
    try:
        check_setup_args(map_name, players)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _agents(specs: Sequence[str]) -> list[Agent]:
    try:
        return [make_agent(s) for s in specs]
    except ValueError as exc:
        raise UsageError(str(exc)) from None


#: the compiled kernels each agent searches with, besides the rules engine and the observation encoder
AGENT_KERNELS: dict[str, tuple[str, ...]] = {"heuristic": ("heuristic",), "mcts": ("mcts",), "turn": ("heuristic", "turns")}


def kernel_groups(specs: Sequence[str]) -> list[str]:
    """The :mod:`concordia_env.jit` kernel groups a game between the agents ``specs`` runs."""
    groups = ["engine", "encoding"]
    for spec in specs:
        name, options = parse_spec(spec)
        groups += AGENT_KERNELS.get(name, ())
        if name == "mcts" and options.get("rollout") == "random":
            groups.append("rollout")
    return groups


def _compile(groups: Sequence[str]) -> None:
    """Compile what a command needs before it starts, so a first run says so and shows progress
    instead of pausing silently (and a warm start, loading from the cache, prints nothing)."""
    from .jit import compile_kernels

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
    from .arena.records import is_unfinished, load_record

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
    line, which the message shows how to do."""
    others = [name for k, name in enumerate(record["agents"]) if k != seat]
    for k, name in enumerate(record["agents"]):
        file = named_file(name) if k != seat else None
        if file is not None:
            shown = short_text(name, 200)
            raise UsageError(f"{path}: the agent at seat {k}, {shown!r}, loads the file {short_text(file, 200)!r}, "
                             f"and a file named only by a record is never loaded; if you trust it, name the "
                             f"agents yourself: {option} {shlex.quote(short_text(','.join(others), 600))}")
    return others


def short_text(text: str, limit: int = 80) -> str:
    """``text`` cut to ``limit`` characters (``...`` at the end), for a message naming untrusted data."""
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _resume_setup(args: argparse.Namespace) -> tuple[dict[str, Any], int, list[Agent]]:
    """``play --resume``: the verified partial record, the human's seat and the opponents' specs
    (from ``--opponents`` or else the record's agent names)."""
    from .arena.records import verify_record

    record, seat = load_resumable(args.resume, args.seat)
    n = record["players"]
    specs = (opponent_specs(args.opponents, n) if args.opponents is not None
             else record_opponents(record, seat, args.resume, "--opponents"))
    opponents = _agents(specs)
    _compile(kernel_groups(specs))
    verify_record(record)
    return record, seat, opponents


def _save_game(record: dict[str, Any], path: str) -> str | None:
    """Save ``record`` to ``path``; the reason as one line if it cannot be written, else None."""
    from .arena.records import save_record

    if os.path.isdir(path):
        return f"{path} is a folder"
    try:
        save_record(record, path)
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def _ask_save(input_fn: InputFn, out: TextIO, record: dict[str, Any], default: str) -> str | None:
    """After ``q`` without ``--save``: ask whether to save and where (end of input: no).
    The path written, or None."""
    try:
        if input_fn("Save the game to continue it later? [y/N] ").strip().lower() not in ("y", "yes"):
            return None
        while True:
            path = input_fn(f"File name [{default}]: ").strip() or default
            why = _save_game(record, path)
            if why is None:
                return path
            print(f"cannot save to {path}: {why}", file=out)
    except EOFError:
        return None


def cmd_play(args: argparse.Namespace, input_fn: InputFn, out: TextIO) -> int:
    """A human at the terminal against agents; ``--resume`` continues a partial record.

    ``--save`` writes the record at the end and also when the game is left (``q``, end of input,
    Ctrl-C) as a partial record; ``q`` without ``--save`` asks whether to save. Ctrl-C exits 130."""
    from .arena.records import final_state, partial_record, play_game

    history: list[int] = []
    if args.resume:
        record, seat, opponent_list = _resume_setup(args)
        map_name, n, seed = record["map"], record["players"], record["seed"]
        scoring = record["intermediate_scoring"]
        history = list(record["actions"])
        opponents = iter(opponent_list)
        default_name = args.resume
    else:
        map_name, n, seed, scoring = args.map, args.players, args.seed, args.intermediate_scoring
        _check_setup(map_name, n)
        seat = 0 if args.seat is None else args.seat
        if not 0 <= seat < n:
            raise UsageError(f"--seat must be 0..{n - 1} for {n} players, got {seat}")
        specs = opponent_specs(DEFAULT_OPPONENT if args.opponents is None else args.opponents, n)
        opponents = iter(_agents(specs))
        _compile(kernel_groups(specs))
        default_name = default_save_name(map_name, n, seed)
    human = HumanAgent(input_fn, out)
    agents = [human if k == seat else next(opponents) for k in range(n)]
    names = ["you" if a is human else a.name for a in agents]
    print(f"Concordia: {map_name}, {n} players, seed {seed}; you are player {seat}\n"
          + _seat_lines(names), file=out)
    if history:
        print(f"Continuing {args.resume} after its {len(history)} actions", file=out)
    print("Type h for help.", file=out)
    try:
        record = play_game(map_name, n, seed, agents, intermediate_scoring=scoring,
                           on_step=move_printer(names, out), history=history)
    except (QuitGame, EOFError, KeyboardInterrupt) as exc:
        partial = partial_record(map_name, n, seed, [a.name for a in agents], history,
                                 intermediate_scoring=scoring)
        saved, why = None, None
        if args.save:
            why = _save_game(partial, args.save)
            saved = args.save if why is None else None
        elif isinstance(exc, QuitGame):
            saved = _ask_save(input_fn, out, partial, default_name)
        if saved:
            note = f"saved to {saved} (continue with: concordia play --resume {shlex.quote(saved)})"
        elif why:
            note = f"could not save to {args.save}: {why}"
        else:
            note = "nothing saved"
        if isinstance(exc, KeyboardInterrupt):
            print(f"\nGame interrupted; {note}.", file=sys.stderr)
            return 130
        reason = "you left" if isinstance(exc, QuitGame) else "end of input"
        print(f"\nGame abandoned ({reason}); {note}.", file=out)
        return 1 if why else 0
    state = final_state(record)
    print_outcome(state, record, out)
    place = state.ranking().index(seat) + 1
    print(f"You (player {seat}) finished {_ordinal(place)} of {n}.", file=out)
    if args.save:
        why = _save_game(record, args.save)
        if why:
            print(f"error: cannot save to {args.save}: {why}", file=sys.stderr)
            return 1
        print(f"Game record written to {args.save} (concordia replay {args.save})", file=out)
    return 0


def _ordinal(k: int) -> str:
    suffix = {1: "st", 2: "nd", 3: "rd"}.get(k, "th")  # places run 1..5 only
    return f"{k}{suffix}"


def resume_command(args: argparse.Namespace) -> str:
    """The command line that resumes the tournament ``args`` describe (``--resume`` added)."""
    argv = ["concordia", "tournament", "--map", args.map, "--players", str(args.players), "--agents", args.agents,
            "--games", str(args.games), "--seed", str(args.seed), "--max-turns", str(args.max_turns),
            "--workers", str(args.workers), "--save-every", str(args.save_every)]
    if args.backend != "local":
        argv += ["--backend", args.backend]
    if args.intermediate_scoring:
        argv.append("--intermediate-scoring")
    for option, value in (("--out", args.out), ("--records", args.records), ("--address", args.address)):
        if value:
            argv += [option, value]
    return shlex.join(argv + ["--resume"])


def cmd_tournament(args: argparse.Namespace, input_fn: InputFn, out: TextIO) -> int:
    """Many games with rotated seats; prints the table, optionally writes JSON and records.

    The results file and records folder are checked before the first game; Ctrl-C once finishes
    the games in flight, saves them and exits 130 with the command that resumes; Ctrl-C twice
    stops at once."""
    from .arena.tournament import (
        DEFAULT_SAVE_EVERY,
        TournamentInterrupted,
        check_tournament_args,
        format_table,
        prepare_tournament,
    )

    specs = split_specs(args.agents)
    if args.games is None:
        args.games = 20 * args.players
    if args.save_every is None:
        args.save_every = DEFAULT_SAVE_EVERY
    if args.address is not None and args.backend != "ray":
        raise UsageError("--address needs --backend ray")
    try:
        check_tournament_args(args.map, args.players, specs, args.games, 1 if args.workers is None else args.workers)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.backend == "ray":  # connect now: a missing Ray or a wrong address is one line, before any game
        try:
            from .integrations.ray_backend import cluster_cpus, connect

            connect(args.address)
        except (ImportError, ValueError) as exc:
            print(f"concordia tournament: error: {exc}", file=sys.stderr)
            return 2
        if args.workers is None:
            args.workers = cluster_cpus()
    elif args.workers is None:
        args.workers = 1
    try:  # the output paths, and what a resumed run has done: one line, exit 2, before any game
        tournament = prepare_tournament(args.map, args.players, specs, args.games, seed=args.seed,
                                        workers=args.workers, intermediate_scoring=args.intermediate_scoring,
                                        record_dir=args.records, max_turns=args.max_turns, out=args.out,
                                        save_every=args.save_every, resume=args.resume, overwrite=args.overwrite,
                                        backend=args.backend, address=args.address)
    except ValueError as exc:
        print(f"concordia tournament: error: {exc}", file=sys.stderr)
        return 2
    if tournament.done:
        print(f"Resuming after {len(tournament.done)} of {args.games} games", file=sys.stderr)
    _compile(kernel_groups(specs))  # before the workers start: they load it from the cache
    try:
        result = tournament.run(progress=not args.no_progress)
    except TournamentInterrupted as exc:
        if exc.result is not None:
            print(format_table(exc.result), file=out)
        played = exc.result["games_done"] if exc.result is not None else 0
        done = "aborted" if exc.aborted else f"interrupted after {played} of {args.games} games"
        hint = (f"resume with: {resume_command(args)}" if exc.saved else
                "nothing was saved to resume from" + ("" if args.out or args.records else " (no --out or --records)"))
        print(f"{done}; {hint}", file=sys.stderr)
        return 130
    print(format_table(result), file=out)
    if args.out:
        print(f"Results written to {args.out}", file=out)
    if args.records:
        print(f"Game records written to {args.records}/game_*.json", file=out)
    return 0


#: one replayed action: (index in the record, deciding seat, action id, its description)
ReplayedAction = tuple[int, int, int, str]


def replay_turns(record: dict[str, Any], start: int = 0) -> Iterator[tuple[int, list[ReplayedAction], GameState]]:
    """A verified record's actions from index ``start`` on, grouped by turn as
    :class:`~concordia_env.render.TurnPrinter` groups them (a new turn when the active player
    changes, or at a card play after other actions): ``(the turn's active player,
    [(index, seat, action, text), ...], state after the turn's last action)``."""
    from .arena.records import initial_state

    state = initial_state(record)
    group: list[ReplayedAction] = []
    active = -1
    for i, action in enumerate(record["actions"]):
        if i >= start:
            if group and (state.active_player != active or state.phase == 0):
                yield active, group, state.clone()
                group = []
            if not group:
                active = state.active_player
            group.append((i, state.current_player, int(action), state.action_to_string(action)))
        state.apply(action)
    if group:
        yield active, group, state.clone()


def cmd_replay(args: argparse.Namespace, input_fn: InputFn, out: TextIO) -> int:
    """Step through a saved game, board after every turn (``--by-action``: every action); or,
    with ``--html OUT``, write the browser viewer page (:mod:`concordia_env.viewer`) instead."""
    from .arena.records import initial_state, is_unfinished, load_record, replay_steps, verify_record

    record = load_record(args.record)
    _compile(["engine"])
    final = verify_record(record)
    total = len(record["actions"])
    if args.html:
        return _write_html(record, args.record, args.html, out)
    if not 0 <= args.start <= total:
        raise UsageError(f"--from must be 0..{total} for this record of {total} actions, got {args.start}")
    names = record["agents"]
    kind = "an unfinished game, " if is_unfinished(record) else ""
    print(f"Replay of {args.record}: {record['map']}, {record['players']} players, seed {record['seed']}, "
          f"{kind}{total} actions (result verified)\n" + _seat_lines(names), file=out)
    if args.start == 0:
        print("\n" + state_to_text(initial_state(record)), file=out)
    unit = "action" if args.by_action else "turn"
    try:
        if args.by_action:
            steps: Iterator[tuple[int, list[ReplayedAction], GameState]] = (
                (step.player, [(step.index, step.player, step.action, step.text)], step.state)
                for step in replay_steps(record, start=args.start))
        else:
            steps = replay_turns(record, args.start)
        for active, group, state in steps:
            if args.by_action:
                i, seat, action, text = group[0]
                print(f"\n[{i}] player {seat} ({names[seat]}): {text}  (action {action})", file=out)
            else:
                first = group[0][0]
                span = f"action {first}" if len(group) == 1 else f"actions {first}-{group[-1][0]}"
                print(f"\nTurn of player {active} ({names[active]}), {span}:", file=out)
                for i, seat, action, text in group:
                    who = "" if seat == active else f"player {seat} ({names[seat]}): "
                    print(f"  [{i}] {who}{text}  (action {action})", file=out)
            print(state_to_text(state), file=out)
            last = group[-1][0]
            if not args.no_pause and last < total - 1 \
                    and input_fn(f"[Enter] next {unit}, q to quit: ").strip().lower() in ("q", "quit", "exit"):
                print(f"Stopped after action {last}.", file=out)
                return 0
    except (EOFError, KeyboardInterrupt):
        print("\nReplay stopped.", file=out)
        return 0
    print_outcome(final, record, out)
    return 0


def _write_html(record: dict[str, Any], source: str, target: str, out: TextIO) -> int:
    """``replay --html``: write the viewer page for a verified record; errors as one line, exit 1."""
    from .viewer import write_replay_html

    if os.path.isdir(target):
        print(f"error: --html {target} is a folder; give the path of the .html file to write", file=sys.stderr)
        return 1
    folder = os.path.dirname(os.path.abspath(target))
    while not os.path.exists(folder):  # missing folders are created; an existing file in the way is not
        folder = os.path.dirname(folder)
    if not os.path.isdir(folder):
        print(f"error: cannot write --html {target}: {folder} is a file, not a folder", file=sys.stderr)
        return 1
    try:
        size = write_replay_html(record, target)
    except OSError as exc:
        why = exc.strerror or str(exc)
        print(f"error: cannot write --html {target}: {why}", file=sys.stderr)
        return 1
    print(f"Replay viewer for {source} ({len(record['actions'])} actions) written to {target} "
          f"({size / 1024:.0f} kB); open it in a browser", file=out)
    return 0


def cmd_demo(args: argparse.Namespace, input_fn: InputFn, out: TextIO) -> int:
    """One seeded game between baseline agents, printed turn by turn."""
    from .arena.records import final_state, play_game, save_record

    _check_setup(args.map, args.players)
    n = args.players
    specs = split_specs(args.agents) if args.agents else list(DEMO_AGENTS[:n])
    if len(specs) != n:
        raise UsageError(f"--agents: {n} players need {n} specs, got {len(specs)}: {specs}")
    agents = _agents(specs)
    _compile(kernel_groups(specs))
    names = [a.name for a in agents]
    print(f"Concordia demo: {args.map}, {n} players, seed {args.seed}\n" + _seat_lines(names), file=out)
    print("\n" + state_to_text(new_game(args.map, n, args.seed, args.intermediate_scoring)) + "\n", file=out)
    printer = TurnPrinter(names, out)
    record = play_game(args.map, n, args.seed, agents, intermediate_scoring=args.intermediate_scoring,
                       max_turns=args.max_turns, on_step=printer)
    printer.flush()
    print_outcome(final_state(record), record, out)
    if args.save:
        save_record(record, args.save)
        print(f"Game record written to {args.save} (concordia replay {args.save})", file=out)
    return 0


# ---------------------------------------------------------------- parser
def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="concordia", description="Play Concordia against the baseline "
                                     "agents, run tournaments between them, replay and watch games.",
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="Run 'concordia COMMAND -h' for a command's options.\n\n" + AGENT_SPECS_HELP)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, text: str, specs: bool = True) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".",
                              epilog=AGENT_SPECS_HELP if specs else None,
                              formatter_class=argparse.RawDescriptionHelpFormatter)

    def setup_args(p: argparse.ArgumentParser) -> None:
        p.add_argument("--map", default="imperium", choices=MAP_NAMES, help="(default imperium)")
        p.add_argument("--players", type=int, default=4, help="Imperium 3-5, Italia 2-4 (default 4)")
        p.add_argument("--intermediate-scoring", action="store_true", help="play with the intermediate scoring")

    p = command("play", "play against agents in the terminal")
    setup_args(p)
    p.add_argument("--opponents", default=None, metavar="SPECS",
                   help=f"one agent spec for every other seat, or a comma list of players-1 specs "
                        f"(default {DEFAULT_OPPONENT}; with --resume, the record's agents)")
    p.add_argument("--seat", type=int, default=None, help="your seat, 0..players-1 (default 0)")
    p.add_argument("--seed", type=seed_arg, default=0, help="game setup seed (default 0)")
    p.add_argument("--save", metavar="FILE", help="write the game record here at the end, and as a partial "
                   "record when you leave (q, Ctrl-D, Ctrl-C)")
    p.add_argument("--resume", metavar="RECORD", help="continue the partial game saved in RECORD from its last "
                   "action (map, players, seed and your seat come from the record; so do the agents, unless one "
                   "loads a file: a model file named only by a record is never loaded, name it in --opponents)")
    p.set_defaults(run=cmd_play, parser=p)

    p = command("tournament", "many games between agents with rotated seats; ratings table")
    setup_args(p)
    p.add_argument("--agents", required=True, metavar="SPECS",
                   help="comma list of one agent spec per seat, e.g. heuristic,random,random,random")
    p.add_argument("--games", type=int, default=None,
                   help="number of games, a multiple of players (default 20 x players)")
    p.add_argument("--seed", type=seed_arg, default=0, help="game g is set up with seed+g (default 0)")
    p.add_argument("--workers", type=int, default=None,
                   help="worker processes (default 1); with --backend ray, games in flight (default: the "
                        "cluster's CPUs)")
    p.add_argument("--backend", choices=("local", "ray"), default="local",
                   help="where games run: local (this machine) or ray (Ray tasks on a local instance or the "
                        "cluster at --address; needs the ray extra). Same results either way")
    p.add_argument("--address", metavar="ADDR", default=None,
                   help="with --backend ray: the cluster's HOST:PORT (the head's 'ray start --head' port), "
                        "ray://HOST:10001, or auto (default: start Ray on this machine)")
    p.add_argument("--max-turns", type=int, default=2000, help="stop a game after this many card plays")
    p.add_argument("--out", metavar="FILE", help="write the results as JSON (missing folders are created); "
                   "partial results are saved there as the games go")
    p.add_argument("--records", metavar="DIR", help="write every game record to DIR/game_NNNNN.json (DIR is "
                   "marked with a tournament.json naming the settings)")
    p.add_argument("--save-every", type=int, default=None, metavar="N",  # None: the arena's default
                   help="save the partial results to --out every N games (default 10; 0: only at the end)")
    p.add_argument("--resume", action="store_true",
                   help="continue an interrupted tournament from --out (and --records); the settings must be "
                        "the same, and the result is that of an uninterrupted run")
    p.add_argument("--overwrite", action="store_true",
                   help="start afresh over an unfinished --out and over another tournament's --records")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(run=cmd_tournament, parser=p)

    p = command("replay", "step through a saved game record", specs=False)
    p.add_argument("record", metavar="FILE", help="a game record (from play/demo --save or tournament --records)")
    p.add_argument("--no-pause", action="store_true", help="print everything without waiting for Enter")
    p.add_argument("--by-action", action="store_true", help="step (and show the board) after every action "
                   "instead of after every turn")
    p.add_argument("--from", dest="start", type=int, default=0, metavar="N",
                   help="start showing at action index N")
    p.add_argument("--html", metavar="OUT", help="write the game as one self-contained HTML page (board, players, "
                   "display, VP chart; step by action or turn, play) to OUT instead of printing it")
    p.set_defaults(run=cmd_replay, parser=p)

    p = command("demo", "watch one seeded game between the baseline agents")
    setup_args(p)
    p.add_argument("--seed", type=seed_arg, default=0, help="game setup seed (default 0)")
    p.add_argument("--agents", metavar="SPECS",
                   help="comma list of one spec per seat (default: the first players of "
                        + ",".join(DEMO_AGENTS) + ")")
    p.add_argument("--max-turns", type=int, default=2000, help="stop the game after this many card plays")
    p.add_argument("--save", metavar="FILE", help="write the game record here")
    p.set_defaults(run=cmd_demo, parser=p)

    from .server.command import add_serve_arguments, cmd_serve  # concordia_env/server: the browser game

    p = command("serve", "play against agents in the browser (a local web server)")
    add_serve_arguments(p, setup_args)
    p.set_defaults(run=cmd_serve, parser=p)
    return parser


def main(argv: Sequence[str] | None = None, *, input_fn: InputFn = input, out: TextIO | None = None) -> int:
    """Run the ``concordia`` command; returns the exit code.

    Bad arguments exit through ``parser.error`` (status 2); unreadable or corrupt
    files, and policy agents without torch installed, print ``error: ...`` on stderr
    and return 1."""
    args = build_parser().parse_args(argv)
    out = out or sys.stdout
    try:
        return args.run(args, input_fn, out)
    except UsageError as exc:
        args.parser.error(cut_numbers(str(exc)))
    except BrokenPipeError:
        # output piped into e.g. `head`: stop quietly, and keep the interpreter from failing
        # again when it flushes stdout at exit
        if out is sys.stdout:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except (OSError, ValueError, ImportError) as exc:  # ImportError: policy agents without the train extra
        print(f"error: {cut_numbers(str(exc))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    return 1  # pragma: no cover - parser.error exits


if __name__ == "__main__":
    sys.exit(main())
