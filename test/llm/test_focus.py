"""Prompts that do not grow with the home (llm/focus.py): what a large home's prompts list, what
they count, and their size against a 35-object home's."""
import pytest

from affplan_ros.bench.scale import household_scene
from affplan_ros.bench.scale_prompts import MAX_HISTORY_TOKENS, MAX_RATIO, measure_prompts
from affplan_ros.bench.tokens import _goal_request, tokenizer
from affplan_ros.core.agent.tool_loop import ToolPromptView
from affplan_ros.core.knowledge.oam import load_oam
from affplan_ros.llm.focus import PROMPT_OBJECTS, PROMPT_PER_CLASS, recent_requests
from affplan_ros.llm.prompting import GoalPromptBuilder, goal_focus
from affplan_ros.llm.tool_prompting import ToolPromptBuilder
from affplan_ros.sim.executor import SimulatedExecutor


@pytest.fixture(scope="module")
def oam():
    return load_oam()


@pytest.fixture(scope="module")
def homes(oam):
    return {n: household_scene(n) for n in (35, 1000)}


def goal_prompt(scene, text, oam) -> str:
    return GoalPromptBuilder().initial_messages(_goal_request(scene, text, oam))[1]["content"]


def test_a_small_home_is_listed_whole(homes, oam):
    scene = homes[35]
    request = _goal_request(scene, "Bring me the apple", oam)
    assert goal_focus(request).listed is None
    text = goal_prompt(scene, "Bring me the apple", oam)
    assert all(name in text for name in scene.objects)      # every object named, as before
    assert "not listed" not in text


def test_a_large_home_lists_the_named_class_and_counts_the_rest(homes, oam):
    scene = homes[1000]
    text = goal_prompt(scene, "Bring me the apple", oam)
    apples = sorted(n for n, o in scene.objects.items() if o.class_name == "apple")
    shown = [a for a in apples if f" {a} " in f" {text.replace(chr(10), ' ').replace(')', ' ')} "]
    assert 1 <= len(shown) <= PROMPT_PER_CLASS < len(apples)
    assert "apple0" not in shown                 # the one shut in the refrigerator comes last
    assert f"apple {len(apples) - len(shown)}" in text          # the others counted
    assert "cucumber" not in text.split("not listed")[0]        # nothing unrelated listed


def test_a_need_lists_what_serves_it(homes, oam):
    scene = homes[1000]
    text = goal_prompt(scene, "I am thirsty", oam)
    listed = text.split("not listed")[0]
    for cls in ("water", "milk", "juice", "cup", "glass"):
        assert f"{cls}" in listed, cls
    for cls in ("apple", "fork", "cloth"):
        assert f"{cls}0" not in listed and f"{cls}1" not in listed, cls
    hungry = goal_prompt(scene, "I am hungry", oam).split("not listed")[0]
    assert "apple" in hungry and "water" not in hungry


def test_clearing_a_table_lists_what_is_on_it(homes, oam):
    scene = homes[1000]
    text = goal_prompt(scene, "Clear the table", oam)
    on_table0 = [r.args[0] for r in scene.relations if r.predicate == "on" and r.args[1] == "table0"]
    assert sum(f"(on {o} table0)" in text for o in on_table0) >= 8


def test_an_object_named_by_its_name_is_listed(homes, oam):
    scene = homes[1000]
    assert "cup37" in goal_prompt(scene, "Bring me cup37", oam)
    assert "cup37" not in goal_prompt(scene, "Bring me the cup", oam)


@pytest.mark.slow
def test_the_tool_prompt_still_tells_which_kinds_are_known(homes, oam):
    scene = homes[1000]
    memory = SimulatedExecutor(scene, oam=oam).initial_memory("all")
    text = ToolPromptBuilder().initial_messages(ToolPromptView("Cut the tomato", "", (), "", memory))[1]["content"]
    known = text.split("Known objects: ")[1].split("\n")[0]
    assert "tomato" in known and "kitchen_knife" in known   # the knife counted, though unnamed
    assert len(known.split()) < PROMPT_OBJECTS + 60


def test_a_year_of_requests_shows_the_recent_and_related_ones():
    year = [f"Bring me the {c}" for c in ("apple", "cup", "spoon") * 300] + ["Where is the milk?"]
    shown, left = recent_requests(year, "Put the milk in the fridge", {"milk", "apple", "cup", "spoon",
                                                                      "refrigerator"})
    assert shown[-1] == "Where is the milk?" and len(shown) <= 5
    assert left == len(year) - len(shown)
    shown, _ = recent_requests(["Bring me the banana", *["Where is the cup?"] * 50],
                               "Put the banana away", {"banana", "cup"})
    assert "Bring me the banana" in shown    # an older request about the same thing


@pytest.mark.slow
def test_prompts_at_1000_objects_stay_within_the_bound(homes, oam):
    count = tokenizer("cl100k_base")
    small, large = (measure_prompts(homes[n], count, oam)["requests"] for n in (35, 1000))
    for label, row in large.items():
        for kind in ("goal", "partial_goal", "tool", "alternative_direct", "alternative_choose"):
            assert row[kind] <= MAX_RATIO * small[label][kind], (label, kind, row[kind], small[label][kind])
        assert row["history_added"] <= MAX_HISTORY_TOKENS, label


def test_the_direct_alternative_question_offers_the_most_alike_kinds_of_a_large_home():
    from affplan_ros.core.agent.alternatives import DIRECT_CHOICES, direct_choices

    kinds = {f"thing{i}": {"carry"} for i in range(40)} | {"mug": {"carry", "drink", "liquid-contain"},
                                                             "jar": {"carry", "liquid-contain"}}
    choices = direct_choices("cup", [*kinds, "thing1"], lambda c: kinds.get(c, {"carry", "drink", "liquid-contain"}))
    assert len(choices) == DIRECT_CHOICES and choices[:2] == ["mug", "jar"]
    assert direct_choices("cup", ["thing1", "thing2", "thing1"], lambda c: set()) == ["thing1", "thing2"]
