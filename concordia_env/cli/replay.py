"""``concordia replay``: step through a saved game, or write it as a browser viewer page."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any, TextIO

from ..display.render import state_to_text
from ..state import GameState
from .common import InputFn, UsageError, compile_for, kernel_groups, print_outcome, seat_lines


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``concordia replay``."""
    p.add_argument("record", metavar="FILE", help="a game record (from play/demo --save or tournament --records)")
    p.add_argument("--no-pause", action="store_true", help="print everything without waiting for Enter")
    p.add_argument("--by-action", action="store_true", help="step (and show the board) after every action "
                   "instead of after every turn")
    p.add_argument("--from", dest="start", type=int, default=0, metavar="N",
                   help="start showing at action index N")
    p.add_argument("--html", metavar="OUT", help="write the game as one self-contained HTML page (board, players, "
                   "display, VP chart; step by action or turn, play) to OUT instead of printing it")
    p.add_argument("--analysis", metavar="SPEC", help="with --html: analyse the positions with this search agent "
                   "(mcts or az, e.g. mcts:iterations=200) and show its visit shares and values in a panel")
    p.add_argument("--analysis-every", type=int, default=1, metavar="K", help="with --analysis: analyse every "
                   "K-th position (0, K, 2K, ... and the last; default 1: all)")

#: one replayed action: (index in the record, deciding seat, action id, its description)
ReplayedAction = tuple[int, int, int, str]


def replay_turns(record: dict[str, Any], start: int = 0) -> Iterator[tuple[int, list[ReplayedAction], GameState]]:
    """A verified record's actions from index ``start`` on, grouped by turn as
    :class:`~concordia_env.display.render.TurnPrinter` groups them (a new turn when the active player
    changes, or at a card play after other actions): ``(the turn's active player,
    [(index, seat, action, text), ...], state after the turn's last action)``."""
    from ..arena.records import initial_state

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
    with ``--html OUT``, write the browser viewer page (:mod:`concordia_env.display.viewer`) instead."""
    from ..arena.records import initial_state, is_unfinished, load_record, replay_steps, verify_record

    record = load_record(args.record)
    compile_for(["engine"])
    final = verify_record(record)
    total = len(record["actions"])
    if args.html:
        _check_analysis(args)
        return _write_html(record, args.record, args.html, out, lambda: _analysis(args, record))
    if args.analysis is not None:
        raise UsageError("--analysis needs --html: the analysis is shown in the HTML viewer")
    if not 0 <= args.start <= total:
        raise UsageError(f"--from must be 0..{total} for this record of {total} actions, got {args.start}")
    names = record["agents"]
    kind = "an unfinished game, " if is_unfinished(record) else ""
    print(f"Replay of {args.record}: {record['map']}, {record['players']} players, seed {record['seed']}, "
          f"{kind}{total} actions (result verified)\n" + seat_lines(names), file=out)
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


def _check_analysis(args: argparse.Namespace) -> None:
    """:class:`UsageError` (one line, exit 2) for an ``--analysis`` spec that names no search agent
    or an ``--analysis-every`` below 1."""
    from ..display.analysis import make_analyst

    if args.analysis_every < 1:
        raise UsageError(f"--analysis-every must be 1 or more, got {args.analysis_every}")
    if args.analysis is None:
        return
    try:
        make_analyst(args.analysis)
    except ValueError as exc:
        raise UsageError(f"--analysis: {exc}") from None


def _analysis(args: argparse.Namespace, record: dict[str, Any]) -> dict[str, Any] | None:
    """``--analysis SPEC`` (every ``--analysis-every``-th position; checked by :func:`_check_analysis`):
    the analysis the page embeds, with a progress bar on stderr while it runs (on a terminal);
    None without the option."""
    if args.analysis is None:
        return None
    from tqdm import tqdm

    from ..display.analysis import analyse_record

    compile_for(kernel_groups([args.analysis]))

    with tqdm(desc=f"analysing with {args.analysis.strip()}", unit="position", file=sys.stderr,
              disable=None, leave=False) as bar:
        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.update(done - bar.n)

        return analyse_record(record, args.analysis, args.analysis_every, progress)


def _write_html(record: dict[str, Any], source: str, target: str, out: TextIO,
                analyse: Callable[[], dict[str, Any] | None] = lambda: None) -> int:
    """``replay --html``: write the viewer page for a verified record; errors as one line, exit 1."""
    from ..display.viewer import write_replay_html

    if os.path.isdir(target):
        print(f"error: --html {target} is a folder; give the path of the .html file to write", file=sys.stderr)
        return 1
    folder = os.path.dirname(os.path.abspath(target))
    while not os.path.exists(folder):  # missing folders are created; an existing file in the way is not
        folder = os.path.dirname(folder)
    if not os.path.isdir(folder):
        print(f"error: cannot write --html {target}: {folder} is a file, not a folder", file=sys.stderr)
        return 1
    analysis = analyse()  # once the target is known to be writable: it may take a while
    try:
        size = write_replay_html(record, target, analysis)
    except OSError as exc:
        why = exc.strerror or str(exc)
        print(f"error: cannot write --html {target}: {why}", file=sys.stderr)
        return 1
    analysed = "" if analysis is None else (
        f", with the analysis of {sum(p is not None for p in analysis['positions'])} positions by {analysis['spec']}")
    print(f"Replay viewer for {source} ({len(record['actions'])} actions{analysed}) written to {target} "
          f"({size / 1024:.0f} kB); open it in a browser", file=out)
    return 0
