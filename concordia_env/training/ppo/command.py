"""``python -m concordia_env.training.ppo``: the command line of a MaskablePPO run and its exit statuses.

0: the policy is written; 1: a file could not be written (those written before are intact);
2: bad arguments, a missing ``train`` extra, a run directory already used, a checkpoint that
cannot be resumed; 130: Ctrl-C or SIGTERM (a checkpoint of the moment saved).
"""

from __future__ import annotations

import sys

from concordia_env.agents.policy import TRAIN_EXTRA_INSTALL  # torch is imported lazily there
from concordia_env.arena.pools import sigterm_as_ctrl_c

from .callbacks import progress_bar_problem
from .checkpoints import CheckpointError, RunExists
from .loop import Interrupted, release_stem, train
from .settings import PROG, build_parser, check_args


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    """Train as the command line ``argv`` says; the exit status. ``prog`` is the command named in
    the messages and recorded in ``config.json``."""
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    check_args(args, parser)
    try:
        import sb3_contrib  # noqa: F401
        import tensorboard  # noqa: F401 - the run's TensorBoard events (sb3 would fail on an assert mid-run)
        import torch  # noqa: F401
    except ImportError as exc:
        parser.error(f"training needs the train extra ({exc}): {TRAIN_EXTRA_INSTALL}")
    args.progress_bar = False
    if not args.no_progress:
        problem = progress_bar_problem()
        if problem is not None:  # (sb3 would stop with an ImportError once the run directory exists)
            print(f"note: {problem}; printing a line per rollout instead", file=sys.stderr)
        args.progress_bar = problem is None
    try:
        with sigterm_as_ctrl_c():  # a scheduler's stop saves a checkpoint as Ctrl-C does
            path = train(args, prog)
    except RunExists as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except CheckpointError as exc:
        print(f"{prog}: error: --resume: {exc}", file=sys.stderr)
        return 2
    except Interrupted as exc:
        print(exc, file=sys.stderr)
        return 130
    except OSError as exc:  # SaveError, or a log that could not be written
        print(f"{prog}: error: {exc}; the files written before are intact", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted before training started; nothing saved", file=sys.stderr)
        return 130
    released = ""
    if args.release:
        stem = release_stem(args.release)
        released = f", {args.release}, {stem}.npz and {stem}.json"
    print(f"policy written to {path}{released}")
    return 0
