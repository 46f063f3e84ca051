"""Suggest Alternative (Algorithm 2): every branch, through the real client and the fake server."""
from __future__ import annotations

from _kitchen import client_for

from affplan_ros.core.agent.alternatives import (
    Branch,
    match_class,
    parse_affordance_list,
    parse_object_answer,
    rarest_affordance,
)
from affplan_ros.core.knowledge.oam import OamDatabase
from affplan_ros.llm.fake_server import FakeChatServer
from affplan_ros.llm.loop_factory import make_alternative_suggester

OAM = OamDatabase({
    "glass": frozenset({"grasp", "carry", "liquid-contain", "drink"}),
    "cup": frozenset({"grasp", "carry", "liquid-contain", "drink"}),
    "bottle": frozenset({"grasp", "carry", "liquid-contain", "drink", "pour"}),
    "bowl": frozenset({"grasp", "carry", "liquid-contain"}),
    "plate": frozenset({"grasp", "carry", "support"}),
    "table": frozenset({"support"}),
    "hammer": frozenset({"grasp", "carry", "pound"}),
})
# One entry per object: rarity counts objects (two bowls, two plates).
SCENE = ["cup", "bottle", "bowl", "bowl", "plate", "plate", "table", "hammer"]


def suggest(answers, missing="glass", task="I want a glass of water", method="affordance", exclude=(), **kw):
    with FakeChatServer(answers) as server:
        s = make_alternative_suggester(client_for(server), OAM, method=method, **kw)
        res = s.suggest(missing, task, SCENE, exclude=exclude)
        return res, server.chat_requests


def test_rarest_affordance_decides_the_question() -> None:
    # grasp: 7 objects, liquid-contain: 4, drink: 2 -> drink is the rarest; candidates: cup, bottle.
    res, reqs = suggest(["The user drinks: ['grasp', 'liquid-contain', 'drink']", "OBJECT: bottle"])
    assert res.branches == [Branch.RAREST_AFFORDANCE.value]
    assert res.required == ["grasp", "liquid-contain", "drink"]
    assert res.candidates == ["cup", "bottle"] and res.rarest == "drink" and res.alternative == "bottle"
    assert len(reqs) == 2
    first = reqs[0].last_user_text
    assert "affordances of a glass" in first and "drink" in first and "I want a glass of water" in first
    second = reqs[1].last_user_text
    assert "for the affordance drink" in second and "cup, bottle" in second and "bowl" not in second
    assert reqs[1].messages[2]["role"] == "assistant"  # one conversation, as the paper does
    assert res.llm_calls == 2 and res.prompt_tokens > 0 and res.completion_tokens > 0


def test_rarest_ties_go_to_the_affordance_named_first() -> None:
    affs = {c: OAM.affordances_of(c) for c in SCENE}
    assert rarest_affordance(["drink", "pour", "liquid-contain"], SCENE, affs) == "pour"
    assert rarest_affordance(["liquid-contain", "grasp"], SCENE, affs) == "liquid-contain"
    both = ["cup", "bottle"]
    assert rarest_affordance(["drink", "liquid-contain"], both, affs) == "drink"  # 2 and 2: first named
    assert rarest_affordance(["pound"], ["cup"], affs) is None


def test_single_candidate_needs_no_second_question() -> None:
    # 'pour' is no affordance of a glass: ignored. The rejected cup is no candidate.
    res, reqs = suggest(["['drink', 'pour']"], exclude=["cup"])
    assert res.branches == [Branch.SINGLE_CANDIDATE.value] and res.alternative == "bottle"
    assert res.required == ["drink"] and len(reqs) == 1


def test_fallback_when_no_object_has_every_affordance() -> None:
    res, reqs = suggest(["['drink']", "Use the bowl.\nOBJECT: bowl"], exclude=["cup", "bottle"])
    assert res.branches == [Branch.NO_CANDIDATES.value, Branch.DIRECT.value]
    assert res.candidates == [] and res.alternative == "bowl"
    direct = reqs[1].last_user_text
    assert '"I want a glass of water": bowl, plate, table, hammer?' in direct
    assert len(reqs[1].messages) == 2  # a fresh conversation


def test_fallback_when_the_answers_stay_outside_the_candidates() -> None:
    answers = ["['drink']", "OBJECT: hammer", "OBJECT: vase", "OBJECT: plastic cup", "OBJECT: cup"]
    res, reqs = suggest(answers, max_corrections=2)
    assert res.branches == ["rarest_affordance", "corrected", "corrected", "not_a_candidate", "direct"]
    assert res.alternative == "cup"
    assert "Not one of the listed objects: hammer." in reqs[2].last_user_text
    assert "cup, bottle" in reqs[2].last_user_text
    assert len(reqs) == 5


def test_corrected_answer_is_accepted() -> None:
    res, _ = suggest(["['drink']", "OBJECT: hammer", "Sorry. OBJECT: cup."])
    assert res.branches == ["rarest_affordance", "corrected"] and res.alternative == "cup"


def test_no_usable_affordance_and_unknown_class_ask_directly() -> None:
    res, _ = suggest(["None of them is needed: []", "OBJECT: bowl"])
    assert res.branches == [Branch.NO_AFFORDANCE.value, Branch.DIRECT.value] and res.alternative == "bowl"
    res, reqs = suggest(["OBJECT: cup"], missing="thermos")
    assert res.branches == [Branch.UNKNOWN_CLASS.value, Branch.DIRECT.value] and res.alternative == "cup"
    assert len(reqs) == 1


def test_naive_asks_one_direct_question_without_rejected_classes() -> None:
    res, reqs = suggest(["OBJECT: bowl"], method="naive", exclude=["cup"])
    assert res.branches == ["direct"] and res.alternative == "bowl" and res.method == "naive"
    assert reqs[0].last_user_text.endswith(": bottle, bowl, plate, table, hammer? End with OBJECT: <object>.")


def test_a_direct_answer_outside_the_scene_gives_no_alternative() -> None:
    res, reqs = suggest(["OBJECT: unicorn", "OBJECT: dragon"], method="naive", max_corrections=1)
    assert res.alternative is None and "named no object" in res.error and len(reqs) == 2
    assert "no alternative for glass" in res.message


def test_llm_error_is_reported_not_raised() -> None:
    res, _ = suggest([])  # the server has no answer: HTTP 400
    assert res.alternative is None and res.error.startswith("LLM error")


def test_parsing_answers() -> None:
    offered = ["grasp", "carry", "heat-resistance", "contain"]
    assert parse_affordance_list("I need: ['grasp', \"contain\", 'fly']", offered) == ["grasp", "contain"]
    assert parse_affordance_list('["carry"]\nfinal: ["grasp"]', offered) == ["grasp"]
    assert parse_affordance_list("grasp, carry, contain and heat-resistance", offered) == \
        ["grasp", "carry", "contain", "heat-resistance"]
    assert parse_affordance_list("none: []", offered) == []
    assert parse_object_answer("reasoning ... OBJECT: **Plastic Cup**.") == "plastic_cup"
    assert parse_object_answer("OBJECT:banana\nbecause") == "banana"
    assert parse_object_answer("no keyword") is None
    assert match_class("banana0", ["banana", "cup"]) == "banana"
    assert match_class("bananas", ["banana"]) == "banana"
    assert match_class("pear", ["banana"]) is None
