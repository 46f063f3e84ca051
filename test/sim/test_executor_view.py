"""The simulated camera does not see through doors: what is in a closed container is not reported,
and Explore opens a closed container first (a step that can fail, which is then said)."""
from __future__ import annotations

from affplan_ros.core.files.scene_io import parse_scene_text
from affplan_ros.core.knowledge.oam import load_oam
from affplan_ros.sim.executor import SimulatedExecutor

SCENE = """OBJECTS
counter:0
refrigerator:0
apple:0
bowl:0
tomato:0
cup:0
END-OBJECTS
RELATIONS
in bowl:0 refrigerator:0
in tomato:0 bowl:0
in apple:0 refrigerator:0
closed refrigerator:0
on cup:0 counter:0
at robot:0 counter:0
END-RELATIONS
LOCATIONS
counter0 counter:0 cup:0
refrigerator0 refrigerator:0 apple:0 bowl:0 tomato:0
END-LOCATIONS
"""


def names(observation):
    return {o.name for o in observation.objects}


def test_a_closed_refrigerator_hides_its_contents_from_the_camera_but_not_from_the_scenario_memory():
    sim = SimulatedExecutor(parse_scene_text(SCENE, "fridge.txt"), oam=load_oam())
    assert names(sim.observe("refrigerator0")) == {"refrigerator0"}
    relations = {(r.predicate, tuple(r.args)) for r in sim.observe("refrigerator0").relations}
    assert ("closed", ("refrigerator0",)) in relations
    # What the robot was told at the start (an explored scenario) includes what is behind the door.
    assert {"apple0", "bowl0", "tomato0"} <= set(sim.initial_memory("all").objects)


def test_explore_opens_a_closed_container_first_and_then_sees_inside():
    sim = SimulatedExecutor(parse_scene_text(SCENE, "fridge.txt"), oam=load_oam())
    got = sim.explore("refrigerator0")
    assert got.success and got.note == ""
    assert {"apple0", "bowl0", "tomato0"} <= names(got.observation)
    assert sim.executed[-1] == "open robot0 refrigerator0 refrigerator0" and sim.world.holds("opened", "refrigerator0")
    assert got.cost == 2.0  # the move and the door


def test_explore_with_a_full_hand_says_it_could_not_look_inside():
    sim = SimulatedExecutor(parse_scene_text(SCENE, "fridge.txt"), oam=load_oam())
    assert sim.world.execute([("grasp", "robot0", ("cup0", "counter0", "counter0"))]).success
    got = sim.explore("refrigerator0")
    assert got.success and not {"apple0", "bowl0", "tomato0"} & names(got.observation)
    assert got.note == "could not look inside the closed refrigerator0: the hand of robot0 is holding something"
    assert sim.world.holds("closed", "refrigerator0")
