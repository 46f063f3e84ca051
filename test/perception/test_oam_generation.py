"""LLM-generated OAMs: formulas (each operator, negation, precedence), answer validation, the three
strategies through the real openai client against the local chat-completions server, the cache."""
from __future__ import annotations

import pytest

from affplan_ros.core.oam import load_oam
from affplan_ros.core.oam_generation import (
    STRATEGIES, AffordanceQuestions, AnswerFormatError, FormulaError, OamCache, OamGenerationError, OamGenerator,
    generate_mapping, load_affordance_questions, parse_affordance_list, parse_formula, parse_yes_no)
from affplan_ros.llm.client import ChatClient
from affplan_ros.llm.config import LLMConfig
from affplan_ros.llm.fake_server import FakeChatServer
from affplan_ros.llm.oam_prompts import OamPromptBuilder


def evaluate(formula: str, yes: set[str]) -> tuple[bool, list[str]]:
    asked: list[str] = []

    def ask(q):
        asked.append(q)
        return q in yes
    return parse_formula(formula).evaluate(ask), asked


@pytest.mark.parametrize("yes, expected", [(set(), False), ({"A"}, True)])
def test_atom(yes, expected):
    assert evaluate("(A)", yes)[0] is expected


@pytest.mark.parametrize("yes, expected", [(set(), True), ({"A"}, False)])
def test_negation(yes, expected):
    assert evaluate("!(A)", yes)[0] is expected


def test_double_negation():
    assert evaluate("!!(A)", {"A"})[0] is True and evaluate("!!(A)", set())[0] is False


@pytest.mark.parametrize("yes, expected", [(set(), False), ({"A"}, False), ({"B"}, False), ({"A", "B"}, True)])
def test_and(yes, expected):
    assert evaluate("(A)&(B)", yes)[0] is expected


@pytest.mark.parametrize("yes, expected", [(set(), False), ({"A"}, True), ({"B"}, True), ({"A", "B"}, True)])
def test_or(yes, expected):
    assert evaluate("(A)|(B)", yes)[0] is expected


@pytest.mark.parametrize("yes, expected", [({"A", "B"}, False), ({"A"}, True), (set(), False)])
def test_and_not(yes, expected):
    assert evaluate("(A)&!(B)", yes)[0] is expected


def test_and_binds_tighter_than_or_as_in_the_original():
    # (door) | (container) & (openable): a door is openable even if it is no container.
    assert evaluate("(D)|(C)&(O)", {"D"})[0] is True
    assert evaluate("(D)|(C)&(O)", {"C"})[0] is False
    assert evaluate("((D)|(C))&(O)", {"D"})[0] is False  # explicit grouping changes it


def test_negation_applies_to_a_group():
    assert evaluate("!((A)|(B))", {"B"})[0] is False
    assert evaluate("!((A)|(B))", set())[0] is True


def test_evaluation_short_circuits():
    assert evaluate("(A)&(B)&(C)", set())[1] == ["A"]
    assert evaluate("(A)|(B)", {"A"})[1] == ["A"]


def test_questions_keep_their_inner_punctuation():
    f = parse_formula("(Can a {} be pushed? Pushing means moving it away.)&!(Is a {} fixed)")
    assert [a.question for a in f.atoms()] == ["Can a {} be pushed? Pushing means moving it away.", "Is a {} fixed"]


@pytest.mark.parametrize("text, words", [
    ("(A)&", "expected a question"),
    ("(A)(B)", "unexpected"),
    ("(A", "unbalanced"),
    ("A&(B)", "outside parentheses"),
    ("()", "empty parentheses"),
    ("", "empty formula"),
])
def test_malformed_formulas_are_errors(text, words):
    with pytest.raises(FormulaError, match=words):
        parse_formula(text)


@pytest.mark.parametrize("answer, verdict", [
    ("Yes", True), ("no.", False), ("  YES, it can.", True), ("No, it cannot be carried.", False),
    ("I think the answer is yes.", True), ("Step by step... ANSWER: no", False),
    ("Maybe", None), ("", None), ("Yes and no.", None), ("It depends", None),
])
def test_yes_no_answers(answer, verdict):
    assert parse_yes_no(answer) is verdict


def test_list_answers_keep_known_affordances_and_report_the_rest():
    found, other = parse_affordance_list("1. grasp, Carry.\n- liquid contain; fly: moves through air", 
                                         ["grasp", "carry", "liquid-contain"])
    assert found == ["grasp", "carry", "liquid-contain"] and other == ["fly"]


def test_the_project_definitions_cover_the_affordance_vocabulary():
    from affplan_ros.core.affordances import load_affordances

    defs = load_affordance_questions()
    assert [d.name for d in defs] == load_affordances().names()
    assert all(d.question and d.description for d in defs)
    assert any(isinstance(d.formula, type(parse_formula("(A)|(B)"))) for d in defs)


@pytest.mark.shared
def test_the_original_formula_files_parse(shared_datasets):
    folder = shared_datasets / "autogpt_p" / "object_affordance_mapping" / "data" / "affordances"
    for name in ("proposed_affordances_alternative.csv", "proposed_affordances_alternative.json"):
        defs = load_affordance_questions(folder / name, folder / "proposed_affordances.csv")
        by_name = {d.name: d for d in defs}
        assert len(defs) == 38
        assert str(by_name["open"].formula).startswith("(Is {} a kind of door")
        assert type(by_name["open"].formula).__name__ == "Or"
        assert by_name["carry"].question == "Can a typical {} be carried by one average person without risk of injury?"


# -- generation through the real client ------------------------------------------------------

DEFS = [
    AffordanceQuestions("grasp", "held in one hand", "Can a {} be held in one hand?",
                        parse_formula("(Can a {} be held in one hand?)")),
    AffordanceQuestions("carry", "carried around", "Can a {} be carried?",
                        parse_formula("(Can a {} be carried?)&!(Is a {} fixed in place?)")),
    AffordanceQuestions("open", "can be opened", "Can a {} be opened?",
                        parse_formula("(Is a {} a door?)|(Is a {} a container?)&(Can a {} be opened?)")),
]


def script(answers: dict[str, str]):
    def respond(messages, _body):
        return answers.get(messages[-1]["content"], "no")
    return respond


def make(server, retries=2):
    client = ChatClient(LLMConfig(base_url=server.base_url, model="fake-gpt", api_key_env="", max_retries=0))
    return OamGenerator(client, OamPromptBuilder(), DEFS, model_name="fake-gpt", max_format_retries=retries), client


def test_logic_strategy_asks_each_atom_once_and_combines_answers():
    answers = {"Can a water bottle be held in one hand?": "Yes.", "Can a water bottle be carried?": "yes",
               "Is a water bottle fixed in place?": "No", "Is a water bottle a door?": "no",
               "Is a water bottle a container?": "yes", "Can a water bottle be opened?": "Yes"}
    with FakeChatServer(script(answers)) as server:
        gen, client = make(server)
        result = gen.generate("water_bottle", "logic")
        client.close()
        asked = [r.last_user_text for r in server.chat_requests]
    assert result.affordances == ["grasp", "carry", "open"]
    assert sorted(asked) == sorted(answers)          # every atom exactly once
    # The fake server counts words and punctuation: "Yes." is 2 tokens, the other answers 1.
    assert result.questions == 6 and result.prompt_tokens > 0 and result.completion_tokens == 7
    assert result.answers["Is a {} fixed in place?"] is False
    assert result.provenance()["strategy"] == "logic" and result.provenance()["model"] == "fake-gpt"


def test_negated_atom_answered_yes_removes_the_affordance():
    answers = {"Can a sink be carried?": "yes", "Is a sink fixed in place?": "yes"}
    with FakeChatServer(script(answers)) as server:
        gen, client = make(server)
        assert "carry" not in gen.generate("sink", "logic").affordances
        client.close()


def test_yesno_strategy_asks_one_question_per_affordance():
    answers = {"Can a mug be held in one hand?": "yes", "Can a mug be carried?": "yes", "Can a mug be opened?": "no"}
    with FakeChatServer(script(answers)) as server:
        gen, client = make(server)
        result = gen.generate("mug", "yesno")
        client.close()
        assert [r.last_user_text for r in server.chat_requests] == list(answers)
        assert "yes or no" in server.chat_requests[0].messages[0]["content"]
    assert result.affordances == ["grasp", "carry"]


def test_list_strategy_sends_the_affordances_with_descriptions():
    with FakeChatServer(["open, grasp, teleport"]) as server:
        gen, client = make(server)
        result = gen.generate("box", "list")
        client.close()
        system = server.chat_requests[0].messages[0]["content"]
    assert "carry: carried around" in system and "List the affordances of a typical box." in result.transcript[0][0]
    assert result.affordances == ["grasp", "open"] and result.ignored_terms == ["teleport"]


def test_a_non_answer_is_asked_again_then_accepted():
    with FakeChatServer(["Hard to say.", "Yes"]) as server:
        client = ChatClient(LLMConfig(base_url=server.base_url, model="m", api_key_env="", max_retries=0))
        gen = OamGenerator(client, OamPromptBuilder(), DEFS[:1], max_format_retries=2)
        result = gen.generate("cup", "yesno")
        client.close()
        retry = server.chat_requests[1].messages
    assert result.affordances == ["grasp"] and result.questions == 2
    assert retry[-2] == {"role": "assistant", "content": "Hard to say."}
    assert retry[-1]["content"] == "Please answer only with yes or no."


def test_an_answer_that_stays_neither_yes_nor_no_is_a_clear_error_after_the_bound():
    with FakeChatServer(["Perhaps.", "It depends.", "Unclear."]) as server:
        client = ChatClient(LLMConfig(base_url=server.base_url, model="m", api_key_env="", max_retries=0))
        gen = OamGenerator(client, OamPromptBuilder(), DEFS[:1], max_format_retries=2)
        with pytest.raises(AnswerFormatError) as err:
            gen.generate("cup", "yesno")
        client.close()
        assert len(server.chat_requests) == 3
    msg = str(err.value)
    assert "'cup'" in msg and "Unclear." in msg and "Can a cup be held in one hand?" in msg and "3 attempts" in msg
    assert err.value.result.questions == 3


def test_bad_requests_are_refused_before_asking():
    gen = OamGenerator(object(), OamPromptBuilder(), DEFS)  # type: ignore[arg-type]
    with pytest.raises(OamGenerationError, match="unknown strategy 'guess'"):
        gen.generate("cup", "guess")
    with pytest.raises(OamGenerationError, match="empty object class"):
        gen.generate("  ", "logic")
    with pytest.raises(OamGenerationError, match="class list is empty"):
        generate_mapping(gen, [], "logic")
    assert set(STRATEGIES) == {"list", "yesno", "logic"}


def test_the_cache_keeps_strategy_model_and_date_and_is_an_oam_file(tmp_path):
    cache = OamCache(tmp_path / "generated.yaml")
    answers = {"Can a ladle be held in one hand?": "yes"}
    with FakeChatServer(script(answers)) as server:
        gen, client = make(server)
        first = generate_mapping(gen, ["Ladle"], "logic", cache)
        asked_first = len(server.chat_requests)
        again = generate_mapping(gen, ["ladle"], "logic", cache)
        other_strategy = generate_mapping(gen, ["ladle"], "yesno", cache)
        client.close()
        asked_total = len(server.chat_requests)
    assert first[0].affordances == ["grasp"] and not first[0].cached
    assert again[0].cached and again[0].affordances == ["grasp"] and asked_total > asked_first  # yesno re-asked
    assert not other_strategy[0].cached
    classes, prov = cache.load()
    assert classes == {"ladle": ["grasp"]} and prov["ladle"]["strategy"] == "yesno"
    assert prov["ladle"]["model"] == "fake-gpt" and prov["ladle"]["date"][:2] == "20"
    assert load_oam(tmp_path / "generated.yaml").affordances_of("ladle") == frozenset({"grasp"})
