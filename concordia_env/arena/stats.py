"""The statistics every harness of the arena reports: win rates with Wilson intervals, means
with Student-t intervals, per-agent statistics of a line-up, paired per-deal summaries of two
agents, and OpenSkill (Plackett-Luce) ratings. Pure functions of the games' results, no scipy."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from statistics import NormalDist
from typing import Any

from openskill.models import PlackettLuce

#: the two-sided 95% normal quantile, 1.95996...
Z95 = NormalDist().inv_cdf(0.975)


# ---------------------------------------------------------------- intervals
def wilson_interval(wins: int, games: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a win rate of ``wins`` out of ``games`` ((0, 1) for no games).

    Unlike the normal approximation it stays inside [0, 1] and is not degenerate at 0 or all wins."""
    if games <= 0:
        return 0.0, 1.0
    p = wins / games
    z2n = z * z / games
    centre = (p + z2n / 2) / (1 + z2n)
    half = z * math.sqrt(p * (1 - p) / games + z2n / (4 * games)) / (1 + z2n)
    # the bounds are exactly 0 and 1 at the extremes; say so rather than leave rounding dust
    lo = 0.0 if wins == 0 else centre - half
    hi = 1.0 if wins == games else centre + half
    return lo, hi


def t_quantile_975(df: int) -> float:
    """The 0.975 quantile of Student's t with ``df`` degrees of freedom (``t(1) = 12.706``,
    ``t(19) = 2.093``), by bisection on its closed-form CDF for integer ``df`` (Abramowitz &
    Stegun 26.7.3-4), so the package needs no scipy. Above 1000 degrees the normal 1.960 is used."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    if df > 1000:  # t and the normal quantile agree to 0.001 there
        return Z95

    def central(t: float) -> float:  # P(|T| < t)
        theta = math.atan(t / math.sqrt(df))
        c2, term, total = math.cos(theta) ** 2, 1.0, 1.0
        if df % 2:  # odd: (2/pi) (theta + sin cos (1 + 2/3 cos^2 + ...)), the bracket empty for df = 1
            for j in range(1, (df - 1) // 2):
                term *= c2 * (2 * j) / (2 * j + 1)
                total += term
            inner = math.sin(theta) * math.cos(theta) * total if df > 1 else 0.0
            return 2 / math.pi * (theta + inner)
        for j in range(1, df // 2):  # even: sin (1 + 1/2 cos^2 + 1.3/(2.4) cos^4 + ...)
            term *= c2 * (2 * j - 1) / (2 * j)
            total += term
        return math.sin(theta) * total

    lo, hi = Z95, 20.0
    while central(hi) < 0.95:
        hi *= 2
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if central(mid) < 0.95 else (lo, mid)
    return (lo + hi) / 2


def mean_interval(values: Sequence[float]) -> dict[str, Any]:
    """``{"mean", "ci95", "n"}``: the mean and its 95% Student-t interval (null for fewer than 2 values)."""
    n = len(values)
    if n == 0:
        return {"mean": None, "ci95": None, "n": 0}
    mean = sum(values) / n
    if n < 2:
        return {"mean": mean, "ci95": None, "n": n}
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = t_quantile_975(n - 1) * sd / math.sqrt(n)
    return {"mean": mean, "ci95": [mean - half, mean + half], "n": n}


def _mean(total: float, count: int) -> float | None:
    return total / count if count else None


# ---------------------------------------------------------------- forfeits
# A forfeited game (:mod:`concordia_env.arena.game_result` ranks it: the forfeiting seat last) is a
# truncated game whose result or per_game entry has "forfeit": {"seat", "reason"}.
def forfeited_seat(game: Mapping[str, Any]) -> int | None:
    """The seat that forfeited ``game`` (a record's ``result`` block or a ``per_game`` entry); None if none did."""
    forfeit = game.get("forfeit")
    return None if forfeit is None else int(forfeit["seat"])


def is_rated(game: Mapping[str, Any]) -> bool:
    """Whether ratings count ``game`` (a record's ``result`` block or a ``per_game`` entry), with its
    ranking: a game played to its end or forfeited, not one stopped at the card-play limit or left."""
    return not game["truncated"] or "forfeit" in game


# ---------------------------------------------------------------- line-ups
def game_counts(per_game: Sequence[dict[str, Any]]) -> dict[str, int]:
    """``truncated``: the games stopped at the card-play limit; ``forfeits``: the games an agent
    forfeited (:mod:`~concordia_env.arena.game_result`), counted apart, as the tournament does."""
    forfeits = sum(forfeited_seat(g) is not None for g in per_game)
    return {"truncated": sum(bool(g["truncated"]) for g in per_game) - forfeits, "forfeits": forfeits}


def agent_statistics(per_game: Sequence[dict[str, Any]], lineup: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Per distinct spec of ``lineup`` (pooled over its seats) the statistics of the module doc,
    from ``per_game`` entries (``seats``, ``scores``, ``ranking``, ``winner_seat``, ``truncated``,
    ``decisions``, ``act_seconds``, ``forfeit`` where forfeited). ``truncated``: its games stopped
    at the card-play limit; ``forfeits``: its games it forfeited. A forfeited game counts as played,
    not won, and (as a truncated one) not in VP, margins or place, for every seat."""
    n = len(lineup)
    out = {}
    for spec in dict.fromkeys(lineup):
        games = wins = finished = truncated = forfeits = decisions = 0
        vp = best = mean_others = places = seconds = 0.0
        seat_games, seat_wins = [0] * n, [0] * n
        for game in per_game:
            for seat, who in enumerate(game["seats"]):
                if who != spec:
                    continue
                games += 1
                seat_games[seat] += 1
                decisions += game["decisions"][seat]
                seconds += game["act_seconds"][seat]
                if game["truncated"]:
                    lost = forfeited_seat(game)
                    truncated += lost is None
                    forfeits += lost == seat
                    continue
                scores = game["scores"]
                others = scores[:seat] + scores[seat + 1:]
                finished += 1
                vp += scores[seat]
                best += scores[seat] - max(others)
                mean_others += scores[seat] - sum(others) / len(others)
                places += game["ranking"].index(seat) + 1
                if game["winner_seat"] == seat:
                    wins += 1
                    seat_wins[seat] += 1
        lo, hi = wilson_interval(wins, games)
        out[spec] = {
            "seats": list(lineup).count(spec), "games": games, "wins": wins,
            "win_rate": wins / games if games else 0.0, "win_rate_ci95": [lo, hi], "fair_share": 1 / n,
            "finished": finished, "truncated": truncated, "mean_vp": _mean(vp, finished),
            "mean_margin_best_other": _mean(best, finished), "mean_margin_mean_others": _mean(mean_others, finished),
            "mean_place": _mean(places, finished), "seat_games": seat_games, "seat_wins": seat_wins,
            "forfeits": forfeits, "decisions": decisions, "ms_per_decision": _mean(1000 * seconds, decisions),
        }
    return out


def paired_summary(per_game: Sequence[dict[str, Any]], lineup: Sequence[str]) -> dict[str, Any] | None:
    """For a line-up of exactly two distinct specs A and B (A listed first), per deal: the wins of
    each over the deal's rotations and ``difference`` = wins A - wins B; ``win_rate_difference`` =
    wins A / (A's seat-games in the deal) - the same for B, whose mean over deals is exactly A's
    win rate minus B's; ``vp_difference`` = A's mean VP - B's over the deal's finished games (null if
    none). Each with its mean over deals and 95% t interval. None for other line-ups."""
    specs = list(dict.fromkeys(lineup))
    if len(specs) != 2:
        return None
    a, b = specs
    deals: dict[int, list[dict[str, Any]]] = {}
    for game in per_game:
        deals.setdefault(game["deal"], []).append(game)
    rows = []
    for k, games in sorted(deals.items()):
        wins = {a: 0, b: 0}
        seat_games = {a: 0, b: 0}
        vp: dict[str, list[int]] = {a: [], b: []}
        for game in games:
            for seat, who in enumerate(game["seats"]):
                seat_games[who] += 1
                wins[who] += game["winner_seat"] == seat
                if not game["truncated"]:
                    vp[who].append(game["scores"][seat])
        vp_diff = sum(vp[a]) / len(vp[a]) - sum(vp[b]) / len(vp[b]) if vp[a] else None
        rows.append({"deal": k, "seed": games[0]["seed"], "wins": [wins[a], wins[b]],
                     "difference": wins[a] - wins[b],
                     "win_rate_difference": wins[a] / seat_games[a] - wins[b] / seat_games[b],
                     "vp_difference": vp_diff})
    return {
        "agents": [a, b], "deals": len(rows), "per_deal": rows,
        "difference": mean_interval([r["difference"] for r in rows]),
        "win_rate_difference": mean_interval([r["win_rate_difference"] for r in rows]),
        "vp_difference": mean_interval([r["vp_difference"] for r in rows if r["vp_difference"] is not None]),
    }


# ---------------------------------------------------------------- ratings
def openskill_ratings(games: Iterable[tuple[Sequence[str], Sequence[int]]], names: Sequence[str],
                      start: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """Plackett-Luce ratings from ``(name per seat, ranking)`` games in order, updated as
    :mod:`concordia_env.arena.tournament` does: every seat a one-player team placed by the
    ranking, a name filling several seats taking the mean of its seats' updated ratings.
    ``start``: the ratings to go on from (``mu``, ``sigma`` and ``games`` per name, as this
    returns them), so rating more games after a first batch equals rating all of them in one go;
    a name it lacks starts from the model's initial rating."""
    model = PlackettLuce()
    start = start or {}
    mu = {name: start[name]["mu"] if name in start else model.rating(name=name).mu for name in names}
    sigma = {name: start[name]["sigma"] if name in start else model.rating(name=name).sigma for name in names}
    rated = {name: start[name]["games"] if name in start else 0 for name in names}
    for seats, ranking in games:
        place = {seat: i + 1 for i, seat in enumerate(ranking)}
        teams = [[model.rating(mu=mu[s], sigma=sigma[s], name=s)] for s in seats]
        new = model.rate(teams, ranks=[place[k] for k in range(len(seats))])
        for name in dict.fromkeys(seats):
            mine = [team[0] for k, team in enumerate(new) if seats[k] == name]
            mu[name] = sum(t.mu for t in mine) / len(mine)
            sigma[name] = sum(t.sigma for t in mine) / len(mine)
            rated[name] += 1
    return {name: {"mu": mu[name], "sigma": sigma[name], "ordinal": mu[name] - 3 * sigma[name], "games": rated[name]}
            for name in names}
