"""The ladder: any agent's row of the strength table, played on the table's own deals, in a results
file anyone can check.

Example (``concordia ladder``, :mod:`concordia_env.cli.ladder`)::

    concordia ladder --agent mcts:iterations=200 --name mcts200 --out ladder-mcts200 --workers 2
    concordia ladder --check ladder-mcts200/ladder.json

**What is played** (:mod:`.plan`). The table (``--table``: the folder holding its ``config.json``
and its complete ``summary.json``, by default ``results/strength`` of the checkout) fixes the
settings (map, players, deals, seed), the agents and the turn limit. In every setting the agent
(``spec``, shown as ``name``) plays the table's lines with itself listed first: a *pair* line
against every pool agent (``A, B`` with 2 players, ``A, A, B, B`` with 4) and, where the setting
has a field agent in the pool, the *field* line (``A`` and ``players - 1`` copies of it), each
on the setting's deals ``k = 0 .. deals-1`` (setup seed ``seed + k``), once per seat rotation,
exactly as :mod:`concordia_env.arena.strength` plays them; a pool agent whose spec is the agent's
own is left out. Only the agent's games are played: the pool's games against each other are
the table's. A row is *comparable* with the table's rows when it plays all the setting's deals
against the whole pool; ``--pool`` and ``--deals`` make quicker rows that say they are not.

**The folder** (``--out``, :mod:`.run`) is a :class:`~concordia_env.arena.run_folder.RunFolder`:
``settings.json`` holds the options, the games are the strength table's chunk files
(``lines/<line>/deals_<a>-<b>.json``), each written as soon as its games are done; the same
command again plays only the missing deals, another ladder's folder is refused with one line.

**The results file** (``OUT/ladder.json``, :mod:`.document`), written when every line is done::

    {"format": "concordia-env/ladder", "version": 1,
     "agent": {"name", "spec"},
     "options": {"agent", "name", "map": [maps], "pool": [names], "deals": int or null},
     "comparable": bool, "games": int, "planned": int,
     "settings": [{"id", "map", "players", "seed", "deals", "table_deals", "opponents", "field",
                   "itself", "comparable", "not_comparable": [reasons],
                   "games", "planned",
                   "lines": [the strength summary's line entry + "per_game": [every game]],
                   "ms_per_decision": {"ms", "decisions"},
                   "table_ratings": {name: {"mu", "sigma", "ordinal", "games"}},
                   "ratings": {...}, "ordinal": float, "rank": int}]}

A line entry is what the table's ``summary.json`` shows for a line (win rates with 95% Wilson
intervals, VP and margins, paired VP difference per deal, ms per decision, the chunk files and
machines) plus its games as the chunk files hold them. The ratings are OpenSkill Plackett-Luce
as in the table, rated from where the table's ratings end (``table_ratings``, from its summary)
over the agent's rated games (finished or forfeited), lines in order, games in game order: what
the table would give with the agent's lines added last. The ordinal's ``rank`` is among the
table's agents after them.

**Forfeits.** The games are played as the table plays them (:mod:`concordia_env.arena.strength`,
"Forfeits"): an agent that fails at a decision (an illegal action; a bot that crashes, hangs or
answers garbage) forfeits that game and the ladder goes on. The game's entry keeps ``"forfeit":
{"seat", "reason"}`` (no winner, that seat ranked last, the others by VP with the rules'
tie-break); each line counts ``forfeits`` (and per agent); the printed row lists every forfeit in
one line naming the line, game, seat, agent and reason. Forfeited games are rated with that
ranking, so failing costs rating.

**Checking** (:mod:`.check`): a results file is valid when it has this format and version, its
options make a ladder of the table, every line holds every game of its deals with the table's
seeds and seat rotations (a forfeit's block matching its entry, a game truncated without one
stopped at the card-play limit), and every other figure equals what the checker recomputes from those
games; anything else is refused in one line naming the file, what and where. The games
themselves are seeded (an agent at seat ``j`` of deal ``k`` is reset with
``agent_seed(seed + k, j)``), so a deterministic agent's file can also be reproduced by running
the same command.
"""

from .check import check_document, check_results
from .document import RESULTS_FORMAT, RESULTS_NAME, RESULTS_VERSION, build_results, first_difference
from .plan import DEFAULT_NAME, DEFAULT_TABLE, Ladder, LadderSetting, Table, load_table, make_ladder
from .render import describe, render_results
from .run import open_folder, results, run_ladder

__all__ = ["DEFAULT_NAME", "DEFAULT_TABLE", "RESULTS_FORMAT", "RESULTS_NAME", "RESULTS_VERSION", "Ladder",
           "LadderSetting", "Table", "build_results", "check_document", "check_results", "describe",
           "first_difference", "load_table", "make_ladder", "open_folder", "render_results", "results", "run_ladder"]
