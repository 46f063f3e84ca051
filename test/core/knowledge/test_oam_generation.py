"""LLM-generated OAMs: formulas (each operator, negation, precedence), answer validation, the three
strategies through the real openai client against the local chat-completions server, the cache."""
from __future__ import annotations

import pytest

from affplan_ros.core.knowledge.affordance_questions import (
    AffordanceQuestions,
    AnswerFormatError,
    FormulaError,
    OamGenerationError,
    load_affordance_questions,
    parse_affordance_list,
    parse_formula,
    parse_yes_no,
)
from affplan_ros.core.knowledge.oam import load_oam
from affplan_ros.core.knowledge.oam_generation import STRATEGIES, OamCache, OamGenerator, generate_mapping
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
    from affplan_ros.core.knowledge.affordances import load_affordances

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


def script(verdicts: dict[str, bool]):
    """Answers every class of a prompt, its line's verdicts from ``verdicts`` (question about
    "it" -> yes/no; unknown questions: no); the questions asked are recorded."""
    def respond(messages, _body):
        text = messages[-1]["content"]
        objects = text.split("Objects: ", 1)[1].splitlines()[0].split("; ")
        questions = [line.split(". ", 1)[1] for line in text.splitlines() if line[:1].isdigit()]
        return "\n".join(f"{o}: " + ", ".join("yes" if verdicts.get(q) else "no" for q in questions) for o in objects)
    return respond


def make(server, retries=2, **kw):
    client = ChatClient(LLMConfig(base_url=server.base_url, model="fake-gpt", api_key_env="", max_retries=0))
    return OamGenerator(client, OamPromptBuilder(), DEFS, model_name="fake-gpt", max_format_retries=retries,
                        **kw), client


def test_logic_strategy_asks_every_atom_once_in_one_prompt_and_combines_answers():
    verdicts = {"Can it be held in one hand?": True, "Can it be carried?": True, "Is it fixed in place?": False,
                "Is it a door?": False, "Is it a container?": True, "Can it be opened?": True}
    with FakeChatServer(script(verdicts)) as server:
        gen, client = make(server)
        result = gen.generate("water_bottle", "logic")
        client.close()
        asked = server.chat_requests[0].last_user_text
    assert result.affordances == ["grasp", "carry", "open"]
    assert asked.splitlines()[1:] == ["Objects: water bottle", *(f"{i}. {q}" for i, q in enumerate(verdicts, 1))]
    assert result.questions == 1 and result.prompt_tokens > 0 and result.completion_tokens > 0
    assert result.answers["Is a {} fixed in place?"] is False
    assert result.provenance()["strategy"] == "logic" and result.provenance()["model"] == "fake-gpt"


def test_negated_atom_answered_yes_removes_the_affordance():
    with FakeChatServer(script({"Can it be carried?": True, "Is it fixed in place?": True})) as server:
        gen, client = make(server)
        assert "carry" not in gen.generate("sink", "logic").affordances
        client.close()


def test_yesno_strategy_asks_a_group_of_classes_and_questions_in_one_prompt():
    verdicts = {"Can it be held in one hand?": True, "Can it be carried?": True, "Can it be opened?": False}
    with FakeChatServer(script(verdicts)) as server:
        gen, client = make(server, questions_per_call=2)
        results = gen.generate_many(["mug", "coffee_table"], "yesno")
        client.close()
        asked = [r.last_user_text for r in server.chat_requests]
        assert "yes or no" in server.chat_requests[0].messages[0]["content"]
    assert len(asked) == 2 and all("Objects: mug; coffee table" in a for a in asked)     # 3 questions, 2 a prompt
    assert [r.affordances for r in results] == [["grasp", "carry"], ["grasp", "carry"]]
    assert [r.questions for r in results] == [2, 0]                    # the calls counted once
    assert results[0].prompt_tokens + results[1].prompt_tokens == sum(
        r.prompt_tokens for r in client.accounting.records)


def test_one_class_and_one_question_is_asked_the_papers_way():
    with FakeChatServer(["Yes."]) as server:
        gen, client = make(server, questions_per_call=1)
        gen.affordances = DEFS[:1]
        assert gen.generate("mug", "yesno").affordances == ["grasp"]
        client.close()
        assert server.chat_requests[0].last_user_text == "Can a mug be held in one hand?"


def test_list_strategy_sends_the_affordances_with_descriptions():
    with FakeChatServer(["open, grasp, teleport"]) as server:
        gen, client = make(server)
        result = gen.generate("box", "list")
        client.close()
        system = server.chat_requests[0].messages[0]["content"]
    assert "carry: carried around" in system and "List the affordances of a typical box." in result.transcript[0][0]
    assert result.affordances == ["grasp", "open"] and result.ignored_terms == ["teleport"]


def test_list_strategy_asks_a_group_of_classes_once_and_a_class_left_out_alone():
    with FakeChatServer(["Box: open, grasp\nA typical water bottle: grasp, carry, teleport", "grasp"]) as server:
        gen, client = make(server)
        box, bottle, cup = gen.generate_many(["box", "water_bottle", "cup"], "list")
        client.close()
        asked = [r.last_user_text for r in server.chat_requests]
    assert asked[0].endswith(": box; water bottle; cup") and asked[1] == "List the affordances of a typical cup."
    assert (box.affordances, bottle.affordances, cup.affordances) == (["grasp", "open"], ["grasp", "carry"], ["grasp"])
    assert bottle.ignored_terms == ["teleport"] and (box.questions, cup.questions) == (1, 1)


def test_a_non_answer_is_asked_again_then_accepted():
    with FakeChatServer(["Hard to say.", "cup: yes, no"]) as server:
        client = ChatClient(LLMConfig(base_url=server.base_url, model="m", api_key_env="", max_retries=0))
        gen = OamGenerator(client, OamPromptBuilder(), DEFS[:2], max_format_retries=2)
        result = gen.generate("cup", "yesno")
        client.close()
        retry = server.chat_requests[1].messages
    assert result.affordances == ["grasp"] and result.questions == 2
    assert retry[-2] == {"role": "assistant", "content": "Hard to say."}
    assert retry[-1]["content"].startswith("Please answer only with yes or no")


def test_an_answer_that_stays_neither_yes_nor_no_is_a_clear_error_after_the_bound():
    with FakeChatServer(["Perhaps.", "It depends.", "cup: yes"]) as server:   # the last one answers 1 of 2
        client = ChatClient(LLMConfig(base_url=server.base_url, model="m", api_key_env="", max_retries=0))
        gen = OamGenerator(client, OamPromptBuilder(), DEFS[:2], max_format_retries=2)
        with pytest.raises(AnswerFormatError) as err:
            gen.generate("cup", "yesno")
        client.close()
        assert len(server.chat_requests) == 3
    msg = str(err.value)
    assert "'cup'" in msg and "cup: yes" in msg and "Can a cup be held in one hand?" in msg and "3 attempts" in msg
    assert err.value.result.questions == 3


def test_a_group_failing_on_a_later_question_marks_every_unfinished_class():
    """The first question answered for both classes, the second never: no class may pass as
    answered with no affordances (a partial record is no answer)."""
    with FakeChatServer(["mug: yes\ncup: yes", "Perhaps."]) as server:
        client = ChatClient(LLMConfig(base_url=server.base_url, model="m", api_key_env="", max_retries=0))
        gen = OamGenerator(client, OamPromptBuilder(), DEFS[:2], max_format_retries=0, questions_per_call=1)
        with pytest.raises(AnswerFormatError) as err:
            gen.generate_many(["mug", "cup"], "yesno")
        client.close()
    results = err.value.results
    assert [r.ok for r in results] == [False, False] and all("Perhaps." in r.error for r in results)
    assert [len(r.answers) for r in results] == [1, 1] and not any(r.complete for r in results)
    assert err.value.result.class_name == "mug"


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
    with FakeChatServer(script({"Can it be held in one hand?": True})) as server:
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



@pytest.mark.parametrize("text, says", [
    ("classes:\n  ladle: grasp\n", "class 'ladle': expected a list"),   # was read as g, r, a, s, p
    ("classes:\n  ladle: [grasp\n", "cannot read the OAM cache"),
    ("- ladle\n", "expected a mapping"),
    ("classes:\n  ladle: [grasp]\ngenerated:\n  ladle: list\n", "'generated'"),
])
def test_a_malformed_cache_is_reported_and_not_overwritten(tmp_path, text, says):
    from affplan_ros.core.knowledge.oam_generation import ClassResult

    path = tmp_path / "generated.yaml"
    path.write_text(text, encoding="utf-8")
    cache = OamCache(path)
    with pytest.raises(OamGenerationError, match="generated.yaml") as exc:
        cache.load()
    assert says in str(exc.value)
    with pytest.raises(OamGenerationError):
        cache.store([ClassResult("cup", "list", "fake", ["grasp"])])
    assert path.read_text(encoding="utf-8") == text


def test_questions_of_a_group_are_about_it():
    from affplan_ros.llm.oam_prompts import about_it

    assert [about_it(q) for q in ("Can a typical {} be cut?", "Is {} a kind of door?", "Can most {}s be rolled?",
                                  "Is a {} useful to pound with? Not if things go on top of the {}")] == [
        "Can it be cut?", "Is it a kind of door?", "Can most such objects be rolled?",
        "Is it useful to pound with? Not if things go on top of it"]
