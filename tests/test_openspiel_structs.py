"""OpenSpiel 2's struct / JSON API on ``python_concordia``: ``to_struct``, ``to_json``,
``to_observation_struct``, ``observation_json``, ``action_to_struct`` and back, in board terms,
deterministic, and never showing the hidden deck order (concordia_env.integrations.openspiel.structs).

Needs the ``openspiel`` extra; skipped without it."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel", reason="OpenSpiel is not installed: pip install '.[openspiel]'")

from open_spiel.python.observation import make_observation  # noqa: E402
from test_openspiel import COMBOS, ROOT, play_random  # noqa: E402

from concordia_env import engine as E  # noqa: E402
from concordia_env.display.structs import action_struct, position_struct  # noqa: E402
from concordia_env.integrations import openspiel  # noqa: E402


def canonical(text: str) -> str:
    """JSON text as OpenSpiel writes it: keys sorted, no spaces, UTF-8 kept."""
    return json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# ---------------------------------------------------------------- the state

def test_to_json_is_the_position_in_board_terms() -> None:
    game = openspiel.load_game("italia", 2)
    state = openspiel.seeded_state(game, 0)
    text = state.to_json()
    doc = json.loads(text)
    assert text == canonical(text) == state.to_struct().to_json()  # deterministic: sorted keys, compact
    assert doc == state.to_dict() == {**position_struct(openspiel.core_state(state)), "stage": "play",
                                      "current_player": 1}
    assert (doc["map"], doc["players"], doc["card_plays"], doc["game_over"]) == ("italia", 2, 0, False)
    assert doc["decision"] == {"player": 1, "active_player": 1, "phase": "play a card", "phase_id": 0}
    assert doc["cities"][0] == {"city": "Roma", "city_id": 0, "province": None, "province_id": None, "good": None,
                                "houses": []}
    assert doc["provinces"][0] == {"province": "Venetia", "province_id": 0, "numeral": "I", "bonus_marker": "cloth",
                                   "good_side_up": True, "cities": ["Bauzanum", "Aquileia", "Verona"],
                                   "city_ids": [1, 2, 3]}
    seat = doc["seats"][0]
    assert (seat["coins"], seat["praefectus_magnus"], seat["houses_left"]) == (6, True, 15)
    assert seat["goods"] == {"brick": 1, "food": 2, "tools": 1, "wine": 1, "cloth": 1}
    assert seat["hand"][2] == {"card": "Praefectus", "card_type_id": 2, "god": "Saturnus", "count": 2}
    assert seat["colonists"][0] == {"kind": "land", "slot": 1, "where": "city", "city": "Roma", "city_id": 0}
    assert seat["colonists"][2] == {"kind": "land", "slot": 3, "where": "storehouse"}
    assert seat["victory_points"]["total"] == 7 and seat["storehouse"] == {"slots": 12, "used": 10}  # 6 goods, 4 colonists
    assert doc["display"][0] == {"position": 1, "display_index": 0, "card_id": doc["display"][0]["card_id"],
                                 "card": "Smith", "card_type_id": 14, "god": "Minerva",
                                 "price": {"brick": 1, "food": 0, "tools": 1, "wine": 0, "cloth": 0, "any": 0}}
    assert doc["deck"]["cards_left"] == 8 == sum(c["count"] for c in doc["deck"]["cards"])
    assert doc["result"] is None and "observing_player" not in doc
    again = openspiel.seeded_state(openspiel.load_game("italia", 2), 0)
    assert again.to_json() == text and state.clone().to_json() == text


def test_the_stages_from_the_setup_to_the_end() -> None:
    game = openspiel.load_game("italia", 2, max_turns=6)
    state = game.new_initial_state()
    assert json.loads(state.to_json()) == {"stage": "setup", "current_player": -1, "map": "italia", "players": 2,
                                           "intermediate_scoring": False, "num_setups": 1000}
    outcomes = openspiel.deal_outcomes(game, 0)
    for k, outcome in enumerate(outcomes[:3]):
        state.apply_action(outcome)
        doc = json.loads(state.to_json())
        assert doc["stage"] == "deal" and doc["dealt"] == k and len(doc["display"]) == k
    assert doc["display"][1]["card_id"] == outcomes[2] and doc["deck_positions"] == 15
    for outcome in outcomes[3:]:
        state.apply_action(outcome)
    play_random(state, np.random.default_rng(0), 10_000)
    doc = json.loads(state.to_json())
    assert (doc["stage"], doc["current_player"], doc["decision"], doc["returns"]) == ("truncated", -4, None, [0.0, 0.0])
    over = openspiel.seeded_state(openspiel.load_game("italia", 2), 0)
    play_random(over, np.random.default_rng(0), 10_000)
    doc = json.loads(over.to_json())
    core = openspiel.core_state(over)
    assert (doc["stage"], doc["game_over"], doc["returns"]) == ("over", True, over.returns())
    assert doc["result"] == {"scores": core.scores(), "ranking": core.ranking(), "winner": core.winner()}


@pytest.mark.parametrize("moves", [0, 40, 150])
def test_no_struct_shows_the_deck_order(moves: int) -> None:
    """States of one information set (the undrawn cards in another order) give the same JSON, every view."""
    game = openspiel.load_game("imperium", 4)
    state = openspiel.seeded_state(game, 2)
    play_random(state, np.random.default_rng(moves), moves)
    others = [state.resample_from_infostate(0, openspiel.Resampler(seed)) for seed in range(4)]
    hidden = {tuple(openspiel.core_state(o).s[E.O_DECK:E.O_DECK + E.NCARD]) for o in others}
    assert len(hidden) > 1  # the orders differ ...
    for other in others:  # ... and nothing written says so
        assert other.to_json() == state.to_json()
        for p in range(4):
            assert other.observation_json(p) == state.observation_json(p)
            assert other.to_observation_struct(p).to_json() == state.to_observation_struct(p).to_json()
    during = game.new_initial_state()  # in the deal: the display dealt so far, nothing of the deck below it
    for outcome in openspiel.deal_outcomes(game, 2)[:10]:
        during.apply_action(outcome)
    doc = json.loads(during.to_json())
    assert len(doc["display"]) == E.NDISP and sorted(doc) == [
        "current_player", "dealt", "deck_positions", "display", "intermediate_scoring", "map", "players", "stage"]


def test_a_players_observation_lists_only_its_own_colonist_slots() -> None:
    game = openspiel.load_game("italia", 4)
    state = openspiel.seeded_state(game, 1)
    play_random(state, np.random.default_rng(3), 60)
    observer = make_observation(game, params={"format": "json"})
    for p in range(4):
        text = state.observation_json(p)
        doc = json.loads(text)
        assert text == canonical(text) == observer.string_from(state, p)
        assert doc == {**position_struct(openspiel.core_state(state), p), "stage": "play",
                       "current_player": state.current_player()}
        assert doc["observing_player"] == p
        for q, seat in enumerate(doc["seats"]):
            assert all(("slot" in c) == (q == p) for c in seat["colonists"])
    observer.set_from(state, 2)
    assert np.array_equal(observer.tensor, np.asarray(state.observation_tensor(2), np.float32))
    with pytest.raises(ValueError, match="format='json' is an observation, not an information state"):
        game.make_py_observer(pyspiel.IIGObservationType(perfect_recall=True), {"format": "json"})
    with pytest.raises(ValueError, match=r"player must be a seat 0\.\.3, got 4"):
        state.observation_json(4)


# ---------------------------------------------------------------- actions

@pytest.mark.parametrize("map_name, players", COMBOS)
def test_every_legal_action_of_a_few_positions_round_trips(map_name: str, players: int) -> None:
    game = openspiel.load_game(map_name, players)
    state = openspiel.seeded_state(game, 7)
    rng = np.random.default_rng(players)
    families = set()
    for _ in range(12):
        core = openspiel.core_state(state)
        for a in state.legal_actions():
            struct = state.action_to_struct(a)
            doc = json.loads(struct.to_json())
            assert doc == action_struct(core, a) and doc["id"] == a and doc["name"] == state.action_to_string(a)
            assert state.struct_to_actions(struct) == [a] and state.validate_action_struct(struct).ok()
            assert openspiel.action_from_struct(state, {"name": doc["name"].upper()}) == a
            assert openspiel.action_from_struct(state, {k: v for k, v in doc.items() if k != "id"}) == a
            families.add(doc["type"])
        play_random(state, rng, int(rng.integers(5, 30)))
    assert {"play", "move"} <= families or {"play", "buy card"} <= families


def test_actions_name_cities_goods_and_cards() -> None:
    state = openspiel.seeded_state(openspiel.load_game("italia", 2), 0)
    assert json.loads(state.action_to_struct(1).to_json()) == {
        "id": 1, "type": "play", "name": "play Architectus", "card": "Architectus", "card_type_id": 1, "god": "Jupiter"}
    state.apply_action(1)  # player 1 plays the Architectus
    assert state.legal_actions()[0] == E.A_DONE
    move = json.loads(state.action_to_struct(state.legal_actions()[1]).to_json())
    assert move["type"] == "move" and move["colonist"] == {"kind": "land", "slot": 1, "where": "city", "city": "Roma",
                                                           "city_id": 0}
    assert move["route_kind"] == "land" and move["route"] == "({}–{})".format(*move["cities"])
    assert move["name"].startswith(f"Architectus: move land colonist 1 Roma→{move['route']}, cost ")
    core = openspiel.core_state(state)
    verona = core.game.map.city_index("Verona")
    assert json.loads(state.action_to_struct(E.A_BUILD + verona).to_json()) == {
        "id": E.A_BUILD + verona, "type": "build", "name": core.action_to_string(E.A_BUILD + verona),
        "city": "Verona", "city_id": verona, "good": "brick"}
    assert json.loads(state.action_to_struct(E.A_SELL + 3).to_json())["good"] == "wine"
    assert json.loads(state.action_to_struct(E.A_BUYCARD).to_json())["card"] == "Smith"
    for a in range(E.NUM_ACTIONS):  # any id is described, legal or not, on the map or not
        assert json.loads(state.action_to_struct(a).to_json())["id"] == a


def test_chance_outcomes_have_structs_too() -> None:
    game = openspiel.load_game("italia", 2)
    state = game.new_initial_state()
    assert json.loads(state.action_to_struct(5).to_json()) == {
        "id": 5, "type": "setup", "name": "setup 5 (the package's seed 5)", "seed": 5}
    state.apply_action(0)
    for outcome, _ in state.chance_outcomes():
        doc = json.loads(state.action_to_struct(outcome).to_json())
        assert doc["type"] == "deal" and doc["card_id"] == outcome and doc["to"] == "display"
    first = state.chance_outcomes()[0][0]
    assert state.apply_action_struct(state.action_to_struct(first)).ok() and state.history() == [0, first]


def test_a_whole_game_played_by_structs() -> None:
    game = openspiel.load_game("italia", 2, max_turns=30)
    by_id, by_struct = openspiel.seeded_state(game, 4), openspiel.seeded_state(game, 4)
    rng = np.random.default_rng(4)
    while not by_id.is_terminal():
        legal = by_id.legal_actions()
        a = legal[int(rng.integers(len(legal)))]
        by_id.apply_action(a)
        assert by_struct.apply_action_struct(by_struct.action_to_struct(a)).ok()
    assert by_struct.history() == by_id.history() and by_struct.to_json() == by_id.to_json()


def test_bad_action_structs_are_one_line_errors() -> None:
    state = openspiel.seeded_state(openspiel.load_game("italia", 2), 0)
    status = state.validate_action_struct(state.action_to_struct(E.A_DONE))
    assert not status.ok() and "'done' is not legal" in status.to_string()
    cases = [
        ({"type": "play"}, "6 legal actions match the action struct {'type': 'play'}: play Tribunus; "),
        ({"type": "build"}, "no legal action matches the action struct {'type': 'build'}; legal: play Tribunus; "),
        ("{not json", "action struct is not valid JSON"),
        ("[]", "an action struct is a non-empty JSON object, got []"),
        ({"id": "3"}, "action struct id must be an int, got '3'"),
    ]
    for struct, message in cases:
        with pytest.raises(ValueError) as exc:
            openspiel.action_from_struct(state, struct)
        assert str(exc.value).startswith(f"python_concordia: {message}") and "\n" not in str(exc.value)
    with pytest.raises(ValueError, match=r"action must be an int 0\.\.401, got 402"):
        state.action_to_struct(402)


def test_the_docs_struct_example_says_what_it_gives() -> None:
    """docs/openspiel.md's struct example runs, and each commented value is what the line gives."""
    text = (ROOT / "docs" / "openspiel.md").read_text(encoding="utf-8")
    (block,) = [b for b in re.findall(r"^```py\n(.*?)^```", text, flags=re.S | re.M) if "to_json()" in b]
    lines = block.splitlines()
    scope: dict = {"__name__": "__doc_example__"}
    exec(compile("\n".join(lines[:7]), "docs/openspiel.md struct example", "exec"), scope)
    state, doc = scope["state"], scope["doc"]
    assert doc == state.to_dict() == state.to_struct().to_dict()
    for line in lines[7:]:
        code, _, comment = line.partition("  # ")
        value = eval(code, scope) if "apply_action_struct" not in code else exec(code, scope)
        if comment.startswith(("{", "'")):
            assert repr(value) == comment.strip(), line
    assert state.history()[-1] == 1
    assert lines[-1].partition("  # ")[2].startswith(f"{value}, ")
    assert state.action_to_string(value) == "Architectus: move land colonist 1 Roma→(Casinum–Roma), cost 1"
