"""How one game ended: the one result type of the arena.

Every harness that plays games (records, tournaments, evaluations, the strength table, the golden
playthroughs) makes a :class:`GameResult` from the final state and writes the JSON shapes its
files have always had from it: a record's ``result`` block (:meth:`GameResult.to_json`) and a
results file's ``per_game`` entry (:meth:`GameResult.entry`), so the shapes cannot drift apart.

A **forfeit** (a tournament game stopped because an agent failed: an illegal action, a bot that
crashed, hung or answered garbage) is a truncated game without a winner whose block adds
``"forfeit": {"seat": k, "reason": "one line"}``: seat ``k`` is ranked last and the others by
their VP at that point with the rules' tie-break (:meth:`GameState.ranking`). Ratings count
finished and forfeited games with the block's ranking, not games stopped at the card-play limit
(:func:`concordia_env.arena.stats.is_rated`): every harness (tournaments, the strength table, the
ladder) asks it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..rewards import rewards_of
from ..state import GameState


@dataclass(frozen=True)
class GameResult:
    """The end of one game, by seat.

    ``scores``: each seat's VP (final scoring, or as it would count now for a truncated game);
    ``vp_breakdown``: VP per seat and god; ``ranking``: seats from first to last; ``winner``: the
    winning seat (None when truncated); ``truncated``: stopped at the card-play limit or left;
    ``unfinished``: a game left to be continued (implies ``truncated``); ``turns``: card plays;
    ``decisions`` and ``act_seconds``: per seat, when the agents were timed; ``forfeit`` and
    ``forfeit_reason``: the seat whose agent failed and why, for a forfeited game (implies
    ``truncated``; see the module doc)."""

    scores: tuple[int, ...]
    ranking: tuple[int, ...]
    winner: int | None
    truncated: bool
    turns: int
    vp_breakdown: tuple[tuple[int, ...], ...] = ()
    unfinished: bool = False
    decisions: tuple[int, ...] | None = None
    act_seconds: tuple[float, ...] | None = None
    forfeit: int | None = None
    forfeit_reason: str | None = None

    @classmethod
    def from_state(cls, state: GameState, truncated: bool, unfinished: bool = False,
                   forfeit: tuple[int, str] | None = None) -> GameResult:
        """The result of a game that stopped in ``state``; ``forfeit``: ``(seat, reason)`` when the
        agent at that seat failed (the game is then truncated, without a winner, that seat last)."""
        breakdown = state.score_breakdown()
        ranking = tuple(state.ranking())
        if forfeit is not None:
            ranking = tuple(s for s in ranking if s != forfeit[0]) + (forfeit[0],)
        return cls(scores=tuple(int(v) for v in breakdown.sum(axis=1)), ranking=ranking,
                   winner=None if forfeit is not None else state.winner(),
                   truncated=bool(truncated or unfinished or forfeit is not None),
                   turns=int(state.field("turn")), vp_breakdown=tuple(tuple(int(v) for v in row) for row in breakdown),
                   unfinished=bool(unfinished), forfeit=None if forfeit is None else int(forfeit[0]),
                   forfeit_reason=None if forfeit is None else forfeit[1])

    @classmethod
    def from_json(cls, block: Mapping[str, Any]) -> GameResult:
        """A result from a record's ``result`` block (timings kept where present); the block's
        keys must be there (``KeyError``), as a verified record's are."""
        timed = "decisions" in block
        forfeit = block.get("forfeit")
        return cls(scores=tuple(block["scores"]), ranking=tuple(block["ranking"]), winner=block["winner"],
                   truncated=bool(block["truncated"]), turns=int(block["turns"]),
                   vp_breakdown=tuple(tuple(row) for row in block.get("vp_breakdown", ())),
                   unfinished=bool(block.get("unfinished", False)),
                   decisions=tuple(block["decisions"]) if timed else None,
                   act_seconds=tuple(block["act_seconds"]) if timed else None,
                   forfeit=None if forfeit is None else int(forfeit["seat"]),
                   forfeit_reason=None if forfeit is None else str(forfeit["reason"]))

    def timed(self, decisions: Sequence[int], act_seconds: Sequence[float]) -> GameResult:
        """This result with the agents' decisions and ``act`` seconds per seat."""
        return replace(self, decisions=tuple(decisions), act_seconds=tuple(act_seconds))

    def _forfeit_block(self) -> dict[str, Any]:
        """``{"forfeit": {"seat", "reason"}}`` for a forfeited game, else nothing."""
        return {} if self.forfeit is None else {"forfeit": {"seat": self.forfeit, "reason": self.forfeit_reason}}

    def to_json(self) -> dict[str, Any]:
        """A record's ``result`` block (plus the timings, when timed)."""
        out: dict[str, Any] = {"scores": list(self.scores), "vp_breakdown": [list(r) for r in self.vp_breakdown],
                               "ranking": list(self.ranking), "winner": self.winner, "truncated": self.truncated,
                               "turns": self.turns}
        if self.unfinished:
            out["unfinished"] = True
        out.update(self._forfeit_block())
        if self.decisions is not None and self.act_seconds is not None:
            out.update(decisions=list(self.decisions), act_seconds=list(self.act_seconds))
        return out

    def entry(self, where: Mapping[str, Any], specs: Sequence[str]) -> dict[str, Any]:
        """A results file's ``per_game`` entry: ``where`` (the game's number, seed, deal...) first,
        then the spec of every seat, the scores, ranking, winning seat and its spec, truncation,
        card plays, the forfeit when forfeited and the timings when timed."""
        out = {**where, "seats": list(specs), "scores": list(self.scores), "ranking": list(self.ranking),
               "winner_seat": self.winner, "winner": None if self.winner is None else specs[self.winner],
               "truncated": self.truncated, "turns": self.turns, **self._forfeit_block()}
        if self.decisions is not None and self.act_seconds is not None:
            out.update(decisions=list(self.decisions), act_seconds=list(self.act_seconds))
        return out

    # ---------------------------------------------------------------- training targets, per seat
    def wins(self) -> np.ndarray:
        """1.0 for the first seat of the ranking (the winner after tie-break), 0.0 for the others."""
        out = np.zeros(len(self.scores))
        out[self.ranking[0]] = 1.0
        return out

    def margins(self) -> np.ndarray:
        """Each seat's VP minus the best other seat's VP."""
        vp = np.asarray(self.scores, np.float64)
        return np.array([vp[p] - np.delete(vp, p).max() for p in range(len(vp))])

    def rewards(self, mode: str) -> np.ndarray:
        """The env's end-of-game reward per seat (``"win"``, ``"rank"`` or ``"vp"``, see
        :func:`concordia_env.rewards.seat_rewards`)."""
        return rewards_of(self.scores, self.ranking, mode)
