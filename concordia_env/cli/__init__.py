"""``concordia``: play against the baseline agents, run tournaments, replay and demo games,
serve a game in the browser. One module per subcommand (:mod:`.play`, :mod:`.tournament`,
:mod:`.replay`, :mod:`.demo`, :mod:`.serve`), what they share in :mod:`.common`, the parser in
:mod:`.main`.

Examples::

    concordia demo --seed 0
    concordia play --map italia --players 2 --opponents heuristic
    concordia tournament --map imperium --players 4 --agents heuristic,random,random,random \\
        --games 200 --workers 2 --out results.json
    concordia play --resume game.json
    concordia replay game.json --no-pause
    concordia replay game.json --html game.html
    concordia serve --map italia --players 2

Agents are named by spec strings (``random``, ``heuristic``, ``mcts:ms=500``, ...;
see :mod:`concordia_env.agents.base`).
"""

from ..agents.human import HumanAgent, QuitGame
from .common import MAX_SEED, default_save_name, kernel_groups, named_file, short_text
from .demo import DEMO_AGENTS
from .main import build_parser, main

__all__ = ["DEMO_AGENTS", "MAX_SEED", "HumanAgent", "QuitGame", "build_parser", "default_save_name",
           "kernel_groups", "main", "named_file", "short_text"]
