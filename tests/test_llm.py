"""The language-model harness (concordia_env.llm): the prompt of a decision, reading answers back,
and LLMAgent's retries and fallbacks, with scripted fake models (no network, no model)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import numpy as np
import pytest

from concordia_env import engine as E
from concordia_env.agents.base import Agent
from concordia_env.agents.mcts import deck_blocks, resample_deck
from concordia_env.agents.random_agent import RandomAgent
from concordia_env.arena.records import play_game, verify_record
from concordia_env.display.structs import position_struct
from concordia_env.encoding import observation
from concordia_env.llm import AnswerError, Exchange, LLMAgent, LLMAnswerError, make_prompt, parse_answer
from concordia_env.state import GameState, new_game

#: the first decision of Italia, 2 players, seed 0: player 1 plays one of these cards (ids 0, 1, 2, 3, 6, 8)
START_MOVES = ["play Tribunus", "play Architectus", "play Praefectus", "play Mercator (3)", "play Senator",
               "play Diplomat (Jupiter)"]


def start() -> GameState:
    return new_game("italia", 2, seed=0)


def architectus() -> GameState:
    """Player 1 has just played the Architectus: moves named with arrows and dashes."""
    state = start()
    state.apply(1)
    return state


def menu_size(prompt: str) -> int:
    """N of the prompt's 'from 1 to N' (the last one: a retry repeats it)."""
    return int(re.findall(r"from 1 to (\d+)", prompt)[-1])


class Scripted:
    """A fake model: answers from a list in turn (the last one forever after), recording every prompt."""

    def __init__(self, answers: list[str]) -> None:
        self.answers = answers
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return self.answers[min(len(self.prompts) - 1, len(self.answers) - 1)]


def by_number(choose: Callable[[int], int]) -> Callable[[str], str]:
    """A fake model that answers the number ``choose(N)`` for a menu of N moves."""
    return lambda prompt: str(choose(menu_size(prompt)))


def decide(agent: Agent, state: GameState) -> int:
    return agent.act(observation(state, state.current_player), state.legal_action_mask(), state)


# ---------------------------------------------------------------- the prompt

def test_the_prompt_gives_the_seat_the_position_and_the_numbered_legal_moves() -> None:
    state = start()
    prompt = make_prompt(state)
    assert prompt.seat == 1 and prompt.actions == (0, 1, 2, 3, 6, 8) and list(prompt.names) == START_MOVES
    lines = prompt.text.splitlines()
    assert lines[0] == "You are playing the board game Concordia (Italia map, 2 players) as player 1 (P1)."
    assert str(state) in prompt.text
    moves = lines[lines.index("Legal moves:") + 1:-1]
    assert moves == [f"{i}. {name}" for i, name in enumerate(START_MOVES, 1)]
    assert lines[lines.index("Legal moves:") - 1] == "Player 1 (P1) decides now: play a card."
    assert lines[-1] == "Answer with the number of one move, from 1 to 6, and nothing else."
    assert make_prompt(state, instruction="Lose.").text.splitlines()[1] == "Lose."
    assert prompt.retry("it names no legal move").endswith(
        "Your previous answer was not accepted: it names no legal move.\n"
        "Answer with the number of one move, from 1 to 6, and nothing else.")


def test_the_json_prompt_is_the_seats_observation_and_hides_the_deck_order() -> None:
    state = architectus()
    prompt = make_prompt(state, position="json")
    doc = prompt.text.split("The position:\n", 1)[1].split("\n\nPlayer 1 (P1) decides now", 1)[0]
    assert json.loads(doc) == position_struct(state, 1)
    assert "\nThe same position as JSON:\n" + doc in make_prompt(state, position="both").text
    other = state.clone()  # the same position with the undrawn cards in another order
    resample_deck(other.s, deck_blocks(other), np.random.default_rng(5))
    s, pos = state.s, int(state.s[E.O_DECK_POS])
    assert not np.array_equal(other.s[E.O_DECK + pos:E.O_DECK + int(s[E.O_DECK_LEN])],
                              s[E.O_DECK + pos:E.O_DECK + int(s[E.O_DECK_LEN])])
    for position in ("text", "json", "both"):
        assert make_prompt(other, position=position).text == make_prompt(state, position=position).text


def test_bad_prompt_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match=r"position must be one of \['text', 'json', 'both'\], got 'xml'"):
        make_prompt(start(), position="xml")
    state = start()
    state.s[E.O_PHASE] = E.PH_OVER
    state.refresh()
    with pytest.raises(ValueError, match="the game is over: there is no decision to prompt for"):
        make_prompt(state)


# ---------------------------------------------------------------- reading answers

@pytest.mark.parametrize("answer, move", [
    ("3", "play Praefectus"), ("  #3. ", "play Praefectus"), ("(3)", "play Praefectus"),
    ("Answer: 3", "play Praefectus"), ("move 3", "play Praefectus"), ("Final answer is 3", "play Praefectus"),
    ("**play Praefectus**", "play Praefectus"), ("PLAY   praefectus", "play Praefectus"),
    ("`play Senator`", "play Senator"), ("I will play Senator now.", "play Senator"),
    ("3. play Praefectus", "play Praefectus"), ("5) Play Senator", "play Senator"),
    ("id 2", "play Praefectus"), ("action id: 8", "play Diplomat (Jupiter)"),
    ("I choose option 4 because it pays", "play Mercator (3)"), ("play Mercator (3)", "play Mercator (3)"),
    ("Let me think. 2", "play Architectus"),
])
def test_answers_are_read_by_number_id_or_name(answer: str, move: str) -> None:
    prompt = make_prompt(start())
    assert prompt.names[prompt.actions.index(prompt.parse(answer))] == move


@pytest.mark.parametrize("answer, reason", [
    ("", "it is empty; answer with a move number from 1 to 6"),
    ("   ", "it is empty"),
    ("pass", "it names no legal move; answer with a move number from 1 to 6"),
    ("play Mercator", "it names no legal move"),  # only the Mercator (3) is in hand
    ("9", "9 is not a move number from 1 to 6"),
    ("0", "0 is not a move number from 1 to 6"),  # not the action with id 0: a bare number is a move number
    ("8", "8 is not a move number from 1 to 6"),  # although 8 is a legal id
    ("id 17", "action id 17 is not legal now; answer with a move number from 1 to 6"),
    ("id 999", "action id 999 is not an action id (0-401)"),
    ("3. play Senator", "it names 2 moves ('play Praefectus'; 'play Senator'); give exactly one"),
    ("play Senator or play Tribunus", "it names 2 moves ('play Tribunus'; 'play Senator')"),
    ("between 2 and 3", "it has several numbers (2, 3); give exactly one move number from 1 to 6"),
])
def test_answers_that_name_no_move_or_several_are_refused_with_a_reason(answer: str, reason: str) -> None:
    prompt = make_prompt(start())
    with pytest.raises(AnswerError) as exc:
        prompt.parse(answer)
    assert exc.value.reason.startswith(reason) and exc.value.answer == answer
    assert str(exc.value) == f"answer {answer!r}: {exc.value.reason}"


def test_every_move_of_an_architectus_reads_back_by_name_number_and_ascii_spelling() -> None:
    state = architectus()
    prompt = make_prompt(state)
    assert len(prompt.actions) > 5 and all("→" in n and "–" in n for n in prompt.names if "move" in n)
    for i, (action, name) in enumerate(zip(prompt.actions, prompt.names), 1):
        ascii_name = name.replace("→", "->").replace("–", "-")
        for answer in (name, ascii_name.upper(), f"I'd {ascii_name}, thanks", str(i), f"{i}. {name}"):
            assert prompt.parse(answer) == action, answer


def test_parse_answer_checks_its_arguments() -> None:
    with pytest.raises(TypeError, match="an answer is a str, got int"):
        parse_answer(3, [0], ["play Tribunus"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="need as many names as actions"):
        parse_answer("1", [0, 1], ["play Tribunus"])


# ---------------------------------------------------------------- the agent

def test_the_agent_plays_the_move_the_model_names() -> None:
    state = start()
    for answers, move in ((["2"], 1), (["play Senator"], 6), (["I pick play Diplomat (Jupiter)."], 8)):
        model = Scripted(answers)
        agent = LLMAgent(model)
        assert decide(agent, state) == move
        assert model.prompts == [make_prompt(state).text]
        assert (agent.stats.decisions, agent.stats.model_calls, agent.stats.bad_answers, agent.stats.fallbacks) \
            == (1, 1, 0, 0)


def test_a_bad_answer_is_retried_with_its_reason() -> None:
    state = start()
    model, log = Scripted(["hmm", "7", "4"]), []
    agent = LLMAgent(model, on_exchange=log.append)
    assert decide(agent, state) == 3  # the 4th move: play Mercator (3)
    first = make_prompt(state)
    assert model.prompts == [first.text, first.retry("it names no legal move; answer with a move number from 1 to 6"),
                             first.retry("7 is not a move number from 1 to 6")]
    assert [(e.answer, e.action) for e in log] == [("hmm", None), ("7", None), ("4", 3)]
    assert log[0] == Exchange(1, first.text, "hmm", None,
                              "answer 'hmm': it names no legal move; answer with a move number from 1 to 6")
    assert (agent.stats.model_calls, agent.stats.bad_answers, agent.stats.fallbacks) == (3, 2, 0)


def test_after_attempts_bad_answers_the_fallback_decides() -> None:
    state = start()
    legal = state.legal_actions()
    random_picks = {decide(LLMAgent(Scripted(["?"]), seed=s), state) for s in range(12)}
    assert random_picks <= set(legal) and len(random_picks) > 1  # seeded, uniform among the legal moves
    assert decide(LLMAgent(Scripted(["?"]), seed=3), state) == decide(LLMAgent(Scripted(["?"]), seed=3), state)
    model = Scripted(["?"])
    agent = LLMAgent(model, attempts=2, fallback="first")
    assert decide(agent, state) == legal[0] and len(model.prompts) == 2
    assert (agent.stats.model_calls, agent.stats.bad_answers, agent.stats.fallbacks) == (2, 2, 1)

    class Last(Agent):
        def act(self, observation: np.ndarray, action_mask: np.ndarray, state: GameState | None = None) -> int:
            return int(np.flatnonzero(action_mask)[-1])

    assert decide(LLMAgent(Scripted(["?"]), fallback=Last()), state) == legal[-1]
    heuristic = LLMAgent(Scripted(["?"]), fallback="heuristic")
    assert decide(heuristic, state) in legal and heuristic.stats.fallbacks == 1
    with pytest.raises(LLMAnswerError, match=r"agent 'llm' at seat 1: the model gave no legal move in 3 answer\(s\)"):
        decide(LLMAgent(Scripted(["?"]), fallback="raise"), state)


def test_a_forced_move_is_played_without_asking_unless_asked_to() -> None:
    state, rng = start(), np.random.default_rng(0)
    for _ in range(82):  # random moves to a Senator who can pay a '?' with one good only
        legal = state.legal_actions()
        state.apply(legal[int(rng.integers(len(legal)))])
    assert [state.action_to_string(a) for a in state.legal_actions()] == ["Senator: pay '?' with 1 brick"]
    model = Scripted(["1"])
    agent = LLMAgent(model)
    assert decide(agent, state) == state.legal_actions()[0] and model.prompts == [] and agent.stats.forced == 1
    assert decide(LLMAgent(model, ask_forced=True), state) == state.legal_actions()[0] and len(model.prompts) == 1


def test_without_a_state_the_position_is_rebuilt_from_the_observation() -> None:
    state = start()
    model = Scripted(["play Senator"])
    assert LLMAgent(model).act(observation(state, 1), state.legal_action_mask()) == 6
    assert model.prompts[0].startswith("You are playing the board game Concordia (Italia map, 2 players) as "
                                       "player 0 (P0).")  # the deciding seat is player 0 of the rebuilt position
    with pytest.raises(ValueError, match="action_mask does not match the position's legal actions"):
        LLMAgent(model).act(observation(state, 1), architectus().legal_action_mask(), state)


def test_bad_agent_arguments_and_answers_are_refused() -> None:
    with pytest.raises(TypeError, match="model must be a callable model"):
        LLMAgent("gpt")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="attempts must be a positive int, got 0"):
        LLMAgent(str, attempts=0)
    with pytest.raises(ValueError, match=r"fallback must be one of \['random', 'first', 'heuristic', 'raise'\]"):
        LLMAgent(str, fallback="mcts")
    with pytest.raises(ValueError, match="position must be one of"):
        LLMAgent(str, position="html")
    with pytest.raises(TypeError, match="model returned NoneType, expected str"):
        decide(LLMAgent(lambda prompt: None), start())  # type: ignore[arg-type, return-value]


# ---------------------------------------------------------------- whole games

def test_a_whole_game_with_a_fake_model_through_play_game() -> None:
    def play() -> tuple[dict, LLMAgent]:
        agent = LLMAgent(by_number(lambda n: (n + 1) // 2), name="llm:middle")
        return play_game("italia", 2, 3, [agent, RandomAgent()]), agent

    record, agent = play()
    assert record["agents"] == ["llm:middle", "random"] and not record["result"]["truncated"]
    verify_record(record)
    stats = agent.stats
    assert stats.bad_answers == 0 and stats.fallbacks == 0 and stats.decisions > 100
    assert stats.model_calls == stats.decisions - stats.forced
    assert play()[0] == record  # the same seed plays the same game


def test_a_whole_game_with_a_model_that_never_answers_plays_its_fallback() -> None:
    agent = LLMAgent(Scripted(["I refuse to play."]), attempts=2)
    record = play_game("italia", 2, 4, [RandomAgent(), agent], max_turns=60)
    verify_record(record)
    stats = agent.stats
    assert stats.decisions > 20 and stats.fallbacks == stats.decisions - stats.forced
    assert stats.model_calls == stats.bad_answers == 2 * stats.fallbacks
    assert play_game("italia", 2, 4, [RandomAgent(), LLMAgent(Scripted(["no"]), attempts=2)], max_turns=60) == record
