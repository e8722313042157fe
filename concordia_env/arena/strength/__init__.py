"""The strength table: every agent against every other, resumable in chunks, merged, rated and rendered.

Example (the committed table; see docs/agents.md, "Strength table")::

    python -m concordia_env.arena.strength --config results/strength/config.json \
        --out results/strength --docs docs/agents.md --workers 16

**Config** (JSON, ``"format": "concordia-env/strength-config"``, ``"version": 1``)::

    {"agents": [{"name": "heuristic", "spec": "heuristic"}, {"name": "mcts1000", "spec": "mcts:iterations=1000"}],
     "settings": [{"id": "italia2", "map": "italia", "players": 2, "deals": 100, "seed": 0,
                   "agents": ["heuristic", "mcts1000"], "extra_pairs": [], "field": null}],
     "targets": [{"line": "italia2-mcts1000-vs-heuristic", "agent": "mcts1000", "min_win_rate": 0.6,
                  "max_ms_ratio": null, "text": "..."}],
     "max_turns": 2000, "intermediate_scoring": false}

Agent names (letters, digits, ``_`` and ``.``) are what the tables show; specs are
:func:`concordia_env.agents.base.make_agent` strings. A setting (2 or 4 players) has
**lines**, each a line-up played by :mod:`concordia_env.arena.evaluation`'s paired
scheme (deal ``k`` set up with seed ``seed + k`` and played once per seat rotation):

- a *pair* line for every unordered pair A, B of the setting's ``agents`` (A the one
  listed first) and for each of ``extra_pairs``: line-up ``A, B`` with 2 players
  (``deals`` x 2 rotations), ``A, A, B, B`` with 4 (``deals`` x 4 rotations: each agent
  sits in every seat twice per deal, and the four games of a deal are all different,
  which ``A, B, A, B`` would not give: its rotations 0 and 2 replay the same game);
  id ``<setting>-<A>-vs-<B>``;
- with ``"field": F``, a *field* line for every other agent A of the setting: ``A``
  and ``players - 1`` copies of ``F`` (fair share ``1/players``); id
  ``<setting>-<A>-plus-<players-1>-<F>``.

Every line of a setting uses the setting's seed, so all its lines meet the same deals.

**Chunks.** A line is played in chunks of deals; chunk ``a..b`` (inclusive) is written
atomically to ``OUT/lines/<line id>/deals_<a>-<b>.json`` (3-digit numbers) as soon as its
games are done. It is exactly the result :func:`~concordia_env.arena.evaluation.run_evaluation`
gives for the line-up with ``deals = b - a + 1`` and ``seed = setting seed + a`` (local deal and
game numbers), plus a ``chunk`` block (line id, first and last deal, setting seed). Beside it,
written just before it, ``deals_<a>-<b>.games.jsonl.gz`` keeps the chunk's games (setup, seats and
every action, in game order) as a :mod:`concordia_env.dataset` file, so ``concordia dataset export
OUT`` gathers the table's games; chunks written before the table kept its games have none, and
``--replay-games`` writes it for them by replaying their games (:mod:`.replay_games`). A run
skips the deals that valid chunk files already hold (same line-up, map, players, seeds, turn
limit, scoring variant; per-game entries consistent); an unreadable or mismatched file is
reported with a warning, renamed to ``*.invalid`` and its deals played again. New chunks
are cut at multiples of ``--deals-chunk``, so runs on several machines with the same chunk
size write the same file names; copying the ``lines`` folders together merges them.
Games of all selected lines run in one pool of worker processes; the results do not depend
on the worker count, the chunk size or the order in which chunks were played, only the
timings do.

**Forfeits.** The games are played as a tournament plays them: an agent that fails at a
decision (an illegal action; a bot that crashes, hangs past its time limit or answers garbage)
forfeits that game instead of ending the run. Its ``per_game`` entry (and its line in the games
file) has ``"forfeit": {"seat", "reason"}``, no winner, ``"truncated": true`` and the ranking of
:mod:`~concordia_env.arena.game_result` (the forfeiting seat last); the chunk and the merged
result count it in ``forfeits`` (per agent: the games it forfeited), not in ``truncated``; a
chunk whose forfeit does not match its entry is unusable. Chunks written before forfeits
existed have none and read as before.

**Merging.** A line's result (:func:`merged_line_result`) joins its chunks' games in deal
order, renumbers deals and games as in one run, and recomputes the statistics with
:func:`~concordia_env.arena.evaluation.agent_statistics` and
:func:`~concordia_env.arena.evaluation.paired_summary`: for a complete line it equals
(:func:`~concordia_env.arena.evaluation.comparable`) one ``run_evaluation`` over all deals.

**Summary** (``OUT/summary.json``, :func:`build_summary`): the config, then per setting and
line the games played and planned, per agent the win rate per seat-game with its 95% Wilson
interval and fair share, the share of the line's games the agent won (its seats together)
with interval and fair share, mean VP and margins, forfeits, ms per decision; the paired VP
difference A - B per deal with its 95% t interval; per setting (and line) the forfeits, the ms
per decision of every agent over all its lines and OpenSkill Plackett-Luce ratings (as in
:mod:`concordia_env.arena.tournament`: every seat a one-player team, a name filling several
seats takes the mean of its updates, games stopped at the card-play limit not rated, forfeited
ones rated with their ranking: :func:`~concordia_env.arena.stats.is_rated`) from all games
of the setting, lines in config order and games in game order; then the targets, each ``reached``, ``missed`` (complete line), ``partial`` or
``pending``. Nothing in it depends on when or where it was built, only on the config and the
chunk files.

**Table.** :func:`render` turns a summary into the markdown that stands between
``<!-- strength-table:start -->`` and ``<!-- strength-table:end -->`` in docs/agents.md
(:func:`update_docs`, atomic); a setting with forfeits gets a sentence counting them per line
and agent. Every run ends by writing the summary, ``OUT/table.md`` and, with ``--docs PAGE``,
that page: output paths are always arguments; the command prints one line per game forfeited
while it played (:func:`~concordia_env.arena.strength.chunks.forfeit_notice`).
"""

from .chunks import (
    CHUNK_RE,
    DEFAULT_DEALS_CHUNK,
    PAIRING,
    LineChunks,
    chunk_name,
    chunk_problem,
    chunk_result,
    line_folder,
    merged_line_result,
    plan_chunks,
    run_lines,
    scan_line,
)
from .cli import build_parser, main
from .config import (
    CONFIG_FORMAT,
    FORMAT_VERSION,
    MAP_TITLES,
    NAME_RE,
    PROG,
    Line,
    Setting,
    StrengthConfig,
    StrengthWarning,
    Target,
    load_config,
    parse_config,
    select_lines,
    setting_lines,
)
from .summary import SUMMARY_FORMAT, build_summary, line_summary
from .table import END_MARKER, START_MARKER, render, replace_table, table_in, update_docs, write_outputs

__all__ = ["CHUNK_RE", "CONFIG_FORMAT", "DEFAULT_DEALS_CHUNK", "END_MARKER", "FORMAT_VERSION", "Line", "LineChunks", "MAP_TITLES", "NAME_RE", "PAIRING", "PROG", "START_MARKER", "SUMMARY_FORMAT", "Setting", "StrengthConfig", "StrengthWarning", "Target", "build_parser", "build_summary", "chunk_name", "chunk_problem", "chunk_result", "line_folder", "line_summary", "load_config", "main", "merged_line_result", "parse_config", "plan_chunks", "render", "replace_table", "run_lines", "scan_line", "select_lines", "setting_lines", "table_in", "update_docs", "write_outputs"]
