"""The command line of a MaskablePPO run: its options, their types and the checks argparse cannot make."""

from __future__ import annotations

import argparse
from pathlib import Path

from concordia_env.arguments import int_list, positive_int
from concordia_env.data import MAP_NAMES
from concordia_env.rewards import REWARD_MODES
from concordia_env.training.selfplay import TRAINING_MAX_TURNS, parse_weights

PROG = "python -m concordia_env.training.ppo"
#: the parser's description (the first line of its ``--help``)
DESCRIPTION = "Train one MaskablePPO policy for a map that plays any seat of any player count the map allows."
DEFAULT_OPPONENTS = "random=0.4,heuristic=0.1,self=0.5"


def opponent_weights(text: str) -> str:
    try:
        parse_weights(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def build_parser(prog: str = PROG) -> argparse.ArgumentParser:
    """The parser of the command; ``prog`` is the command named in its usage and errors."""
    p = argparse.ArgumentParser(prog=prog, description=DESCRIPTION,
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    _game_arguments(p.add_argument_group("game and opponents"))
    _run_arguments(p.add_argument_group("run"))
    _ppo_arguments(p.add_argument_group("MaskablePPO hyperparameters"))
    return p


def _game_arguments(g: argparse._ArgumentGroup) -> None:
    g.add_argument("--map", required=True, choices=MAP_NAMES, help="board to train on")
    g.add_argument("--players", type=int_list, default=None,
                   help="player counts drawn per episode, e.g. 2,3 or 2-4 (default: all the map allows)")
    g.add_argument("--seat", type=int, default=None, help="fix the learner's seat (default: random per episode)")
    g.add_argument("--opponents", type=opponent_weights, default=DEFAULT_OPPONENTS,
                   help="weights of the opponent kinds random, heuristic, self (frozen checkpoints)")
    g.add_argument("--pool-size", type=positive_int, default=10, help="frozen checkpoints kept as opponents")
    g.add_argument("--reward", choices=REWARD_MODES, default="rank", help="end-of-game reward")
    g.add_argument("--shaping", type=float, default=1.0,
                   help="weight of the potential-based VP-lead shaping (0: terminal reward only)")
    g.add_argument("--max-turns", type=int, default=TRAINING_MAX_TURNS, help="truncate games after this many card plays")


def _run_arguments(g: argparse._ArgumentGroup) -> None:
    g.add_argument("--total-steps", type=positive_int, default=1_000_000,
                   help="learner decisions of the whole run; with --resume, training goes on from the "
                        "checkpoint's step count up to this total (not this many more)")
    g.add_argument("--out", type=Path, default=None,
                   help="run directory (default: the --resume directory, else runs/<map>-seed<seed>)")
    g.add_argument("--seed", type=int, default=0, help="seeds torch, the environments and the opponents")
    g.add_argument("--n-envs", type=positive_int, default=8, help="environments stepped together")
    g.add_argument("--vec", choices=("dummy", "subproc"), default="dummy",
                   help="dummy: all envs in this process; subproc: one process per env")
    g.add_argument("--checkpoint-every", type=positive_int, default=100_000,
                   help="steps between checkpoints (each joins the opponent pool)")
    g.add_argument("--eval-every", type=positive_int, default=100_000, help="steps between evaluations")
    g.add_argument("--eval-episodes", type=positive_int, default=20,
                   help="games per evaluation against the HeuristicAgent")
    g.add_argument("--resume", type=Path, default=None,
                   help="checkpoint .zip to continue from (an unreadable one is an error), or a run "
                        "directory: its newest readable checkpoint, unreadable ones skipped with a warning")
    g.add_argument("--release", type=Path, default=None,
                   help="also copy the final policy here (X.zip) and write its numpy export beside it "
                        "(X.npz + X.json, what the ppo agent plays), e.g. releases/ppo_imperium.zip")
    g.add_argument("--torch-threads", type=positive_int, default=1, help="torch CPU threads")
    g.add_argument("--no-progress", action="store_true",
                   help="no progress bar: one line per rollout on stdout instead")
    g.add_argument("--verbose", type=int, default=0, choices=(0, 1, 2), help="sb3 verbosity")


def _ppo_arguments(g: argparse._ArgumentGroup) -> None:
    g.add_argument("--lr", type=float, default=3e-4, help="Adam learning rate")
    g.add_argument("--n-steps", type=positive_int, default=512, help="rollout length per env")
    g.add_argument("--batch-size", type=positive_int, default=512, help="minibatch size")
    g.add_argument("--n-epochs", type=positive_int, default=4, help="passes over each rollout")
    g.add_argument("--gamma", type=float, default=0.995, help="discount")
    g.add_argument("--gae-lambda", type=float, default=0.95, help="GAE lambda")
    g.add_argument("--clip-range", type=float, default=0.2, help="PPO clip range")
    g.add_argument("--ent-coef", type=float, default=0.01, help="entropy bonus")
    g.add_argument("--vf-coef", type=float, default=0.5, help="value loss weight")
    g.add_argument("--net-arch", type=int_list, default=[128, 128],
                   help="hidden layer sizes of the policy and of the value MLP")


def check_args(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """Errors the argument types cannot catch, reported like argparse's own."""
    from concordia_env.data import load_map

    allowed = list(load_map(args.map).players)
    if args.players is not None and not set(args.players) <= set(allowed):
        parser.error(f"--players {args.players}: {args.map} is played by {allowed} players")
    counts = args.players or allowed
    if args.seat is not None and not 0 <= args.seat < min(counts):
        parser.error(f"--seat {args.seat} does not exist in a {min(counts)}-player game")
    if args.shaping < 0:
        parser.error("--shaping must be >= 0")
    if args.max_turns < 0:
        parser.error("--max-turns must be >= 0")
    if args.n_steps * args.n_envs < args.batch_size:
        parser.error(f"--batch-size {args.batch_size} exceeds a rollout of "
                     f"--n-steps x --n-envs = {args.n_steps * args.n_envs} steps")
    if args.resume is not None and not args.resume.exists():
        parser.error(f"--resume {args.resume}: no such file or run directory")
    for name in ("lr", "gamma", "gae_lambda", "clip_range"):
        if not getattr(args, name) > 0:
            parser.error(f"--{name.replace('_', '-')} must be > 0")
