"""Grasps a parallel gripper makes of what is wider than it (a plate's lip, a hammer's handle), room
for the fingers, a hand that leans to reach further, and dropping into a bowl that holds something;
every success read from the physics (pads in contact, the object risen with the hand, at rest)."""
from __future__ import annotations

from pathlib import Path

import mujoco  # noqa: F401 - required (requirements/physics.txt): a broken install fails here, never skips
import numpy as np

from affplan_ros.core.files.scene_io import load_scene, parse_scene_text
from affplan_ros.sim.physics.relations import resting_place
from affplan_ros.sim.physics.skills import Skills
from affplan_ros.sim.physics.world import build_world

KITCHEN = Path(__file__).resolve().parents[3] / "config" / "scenarios" / "kitchen.txt"


def table_scene(*objects: str, extra: str = "") -> Skills:
    """A table with ``objects`` (class:instance, packed front row first in this order), the robot at it."""
    names = "\n".join(objects)
    on = "\n".join(f"on {o} table:0" for o in objects if f"in {o} " not in extra)
    text = (f"OBJECTS\ntable:0\nrobot:0\n{names}\nEND-OBJECTS\nRELATIONS\n{on}\n{extra}\nat robot:0 table:0\n"
            f"END-RELATIONS\nLOCATIONS\ntable0 table:0 {' '.join(objects)}\nEND-LOCATIONS\n")
    return Skills(build_world(parse_scene_text(text)))


def held(sk: Skills, obj: str, side: str) -> bool:
    pads = {sk.world.model.geom(f"{side}_pad_a").id, sk.world.model.geom(f"{side}_pad_b").id}
    return sk.world.touching_geoms(obj, pads) == pads


def grasp_and_lift(sk: Skills, obj: str, near: str = "table0"):
    w = sk.world
    assert sk.navigate(near, near=obj).success
    z0 = w.position(obj)[2]
    result = sk.grasp(obj)
    assert result.success, result.reason
    side = result.details["side"]
    assert held(sk, obj, side) and w.position(obj)[2] > z0 + 0.05 and "table0" not in w.contacts(obj)
    return result


def test_a_plate_is_taken_by_its_lip_and_rises_with_the_hand():
    sk = Skills(build_world(load_scene(KITCHEN)))
    width, _, target = sk.top_down_grasp("plate0")
    # Across its 8 mm lip at its edge, not across its 26 cm.
    assert width < 0.02 and np.hypot(*(target[:2] - sk.world.position("plate0")[:2])) > 0.1
    grasp_and_lift(sk, "plate0")
    assert abs(sk.world.rotation("plate0")[2, 2]) > 0.95       # it did not tip over in the fingers


def test_a_hammer_is_taken_across_its_handle_near_its_head():
    sk = table_scene("hammer:0")
    w = sk.world
    width, _, target = sk.top_down_grasp("hammer0")
    assert abs(width - 0.03) < 1e-6                               # the handle, not the 12 cm head
    along = w.rotation("hammer0").T @ (target - w.position("hammer0"))
    assert 0.0 < along[0] < 0.12 - 0.02                           # on the handle, towards the head
    grasp_and_lift(sk, "hammer0")


def test_the_fingers_close_where_they_have_room_beside_a_bottle():
    """A square carton with a bottle 3 cm beside it: the fingers close across the other pair of
    sides (the first pair would put a pad onto the bottle)."""
    sk = table_scene("milk_cartoon:0", "bottle:0")
    w = sk.world
    bottle0 = w.position("bottle0")
    _, yaw, target = sk.top_down_grasp("milk_cartoon0")
    towards = bottle0[:2] - target[:2]
    assert abs(np.cos(yaw) * towards[0] + np.sin(yaw) * towards[1]) / np.linalg.norm(towards) < 0.3
    grasp_and_lift(sk, "milk_cartoon0")
    assert np.linalg.norm(w.position("bottle0") - bottle0) < 0.005 and w.resting_on("bottle0", "table0")


def test_a_bowl_with_a_tomato_by_its_near_wall_is_taken_by_another_wall():
    sk = table_scene("bowl:0", "tomato:0", extra="in tomato:0 bowl:0")
    w = sk.world
    assert sk.inside("tomato0", "bowl0")
    assert sk.navigate("table0", near="bowl0").success
    near = [g for g, _ in sk.grasp_candidates("bowl0")]
    base = w.base_pose()
    # The world packs the tomato towards the room: the wall nearest the robot is not the first.
    nearest = min(near, key=lambda g: np.hypot(g.target[0] - base.x, g.target[1] - base.y))
    assert near[0] is not nearest
    grasp_and_lift(sk, "bowl0")
    assert sk.inside("tomato0", "bowl0")


def test_an_apple_is_dropped_into_a_bowl_whose_floor_a_tomato_takes():
    sk = table_scene("bowl:0", "tomato:0", "apple:0", extra="in tomato:0 bowl:0")
    w = sk.world
    grasp_and_lift(sk, "apple0")
    assert sk.navigate("table0", near="bowl0").success
    result = sk.putin("apple0", "bowl0", along="table0")
    assert result.success, result.reason
    assert result.details.get("dropped") and sk.inside("apple0", "bowl0") and sk.inside("tomato0", "bowl0")
    assert sk.holding("apple0") is None and w.velocity("apple0") < 0.02


def test_a_hand_leans_to_set_a_tomato_on_a_board_at_the_back_of_the_table():
    """The front row is taken, so the board lies at the table's back, its near edge 0.65 m from the
    base's centre: beyond a hand pointing straight down (~0.62 m at table height); leaning forward
    it reaches, and the tomato comes to rest on the board."""
    sk = table_scene("apple:0", "banana:0", "bowl:0", "plate:0", "milk_cartoon:0", "bottle:0", "cutting_board:0",
                     "tomato:0")
    w = sk.world
    grasp_and_lift(sk, "tomato0")
    assert sk.navigate("table0", near="cutting_board0").success
    assert w.to_base_frame(w.position("cutting_board0"))[0] > 0.75
    result = sk.place("tomato0", "cutting_board0", along="table0")
    assert result.success, result.reason
    assert result.details["lean"] > 0.2
    assert w.resting_on("tomato0", "cutting_board0") and "robot0" not in w.contacts("tomato0")


def test_soft_things_and_a_snack_bag_as_they_lie_ready_are_taken_and_rise_with_the_hand():
    # The object table sizes soft things as they lie ready to be taken (a folded dishcloth, a
    # pocket pack of tissues) and SayCan's chips as single-serve bags: each has a side the
    # fingers close across with room, and the physics shows it held and lifted.
    for obj in ("cloth:0", "tissue:0", "jalapeno_chips:0"):
        sk = table_scene(obj)
        name = obj.replace(":", "")
        width = sk.top_down_grasp(name)[0]
        assert width <= sk.world.spec.max_aperture - 0.015, (name, width)
        grasp_and_lift(sk, name)
        # Still upright: the bag was not knocked over by a pad coming down on it.
        assert sk.world.rotation(name)[2, 2] > 0.9, name


def _put(sk: Skills, obj: str, xy: np.ndarray, yaw: float) -> None:
    """Lay ``obj`` at ``xy`` (world) turned by ``yaw``, as it lies on the table now, and let it settle."""
    w = sk.world
    jnt = w.model.body_jntadr[w.things[obj].body_id]
    adr = w.model.jnt_qposadr[jnt]
    w.data.qpos[adr:adr + 2] = xy
    w.data.qpos[adr + 3:adr + 7] = [np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)]
    w.data.qvel[w.model.jnt_dofadr[jnt]:w.model.jnt_dofadr[jnt] + 6] = 0.0
    mujoco.mj_forward(w.model, w.data)
    w.step(w.steps(0.3))


def test_a_banana_lying_across_the_table_far_back_is_taken_from_another_standing_place():
    """A banana 0.67 m ahead of the base, lying across the line of sight (the fingers close along
    it, so the hand may not lean): beyond a hand pointing straight down from where the base lined
    up; standing aside and turned (a shoulder forward), an arm reaches it, and it rises."""
    sk = table_scene("banana:0")
    w = sk.world
    assert sk.navigate("table0", near="banana0").success
    base = w.base_pose()
    ahead = np.array([np.cos(base.yaw), np.sin(base.yaw)])
    _put(sk, "banana0", np.array([base.x, base.y]) + 0.67 * ahead, base.yaw + np.pi / 2)
    assert sk.grasp("banana0").code.value == "unreachable"
    z0 = w.position("banana0")[2]
    result = sk.grasp("banana0", along="table0")
    assert result.success, result.reason
    assert held(sk, "banana0", result.details["side"]) and w.position("banana0")[2] > z0 + 0.05
    moved = w.base_pose()
    assert abs(moved.yaw - base.yaw) > 0.1 or np.hypot(moved.x - base.x, moved.y - base.y) > 0.1


def test_a_nail_and_a_screw_lying_flat_are_taken_with_the_finger_tips_down_at_the_table():
    """5 mm thin: the finger tips come down to just above the table (at 3.5 cm, as for thicker
    things, the pads passed over the nail) and close with a light squeeze (the full force drove
    the pads through the 5 g nail); both pads hold it and it rises with the hand."""
    for obj in ("nail:0", "screw:0"):
        sk = table_scene(obj)
        name = obj.replace(":", "")
        grasp = sk.grasp_candidates(name)[0][0]
        bottom = sk.world.position(name)[2] - sk.world.things[name].props.size[2] / 2
        assert grasp.target[2] - 0.03 - bottom < 0.004, name      # the pad's tip (3 cm below the TCP)
        grasp_and_lift(sk, name)


def test_a_nail_let_go_on_a_deep_box_floor_leaves_the_box_standing():
    """The nail hangs at the finger tips: let go on the 15 cm box's floor, the hand rises until the
    tips are over the rim before the arm tucks (12 cm up, the tuck dragged the box off the table)."""
    sk = table_scene("nail:0", "box:0")
    w = sk.world
    grasp_and_lift(sk, "nail0")
    box0 = w.position("box0")
    assert sk.navigate("table0", near="box0").success
    result = sk.putin("nail0", "box0", along="table0")
    assert result.success, result.reason
    assert sk.inside("nail0", "box0") and np.linalg.norm(w.position("box0") - box0) < 0.01


def test_a_tape_on_a_box_floor_by_its_near_wall_is_taken_with_the_palm_along_the_wall():
    """A roll of tape inside a 15 cm deep box, 4.5 cm from its near wall: the wrist, 4 cm over
    the wall's top and inside it, is 5.8 cm from the wall's edge (the box round the whole box,
    grown by the forearm's 5 cm, took it for a hit); the 10 cm palm goes along the wall, clear of it."""
    text = ("OBJECTS\ncounter:0\nrobot:0\nbox:0\ntape:0\nEND-OBJECTS\nRELATIONS\non box:0 counter:0\n"
            "in tape:0 box:0\nat robot:0 counter:0\nEND-RELATIONS\nLOCATIONS\ncounter0 counter:0 box:0 tape:0\n"
            "END-LOCATIONS\n")
    sk = Skills(build_world(parse_scene_text(text)))      # a 90 cm counter (complex_kitchen's)
    w = sk.world
    assert sk.navigate("counter0", near="box0").success
    base, box = w.base_pose(), w.position("box0")
    towards = np.array([base.x, base.y]) - box[:2]
    towards /= np.linalg.norm(towards)
    near_wall = w.things["box0"].props.size[1] / 2        # the box's y side faces the robot
    _put(sk, "tape0", box[:2] + (near_wall - 0.045) * towards, 0.0)
    assert sk.inside("tape0", "box0")
    z0 = w.position("tape0")[2]
    result = sk.grasp("tape0", "box0")
    assert result.success, result.reason
    assert held(sk, "tape0", result.details["side"]) and w.position("tape0")[2] > z0 + 0.05
    assert np.linalg.norm(w.position("box0")[:2] - box[:2]) < 0.01


def test_a_watering_can_is_carried_by_its_top_handle_and_hangs_level():
    # The can is 15 cm across: before, the only grasp was a "rim" of its 5.5 cm thick side (none
    # where the knife had turned it: too_large). A real can is carried by the handle over its body,
    # and it hangs level from it (the handle sits over the centre of mass).
    sk = table_scene("watering_can:0")
    w = sk.world
    bar = w.model.geom("watering_can0/handle").id
    width, _, target = sk.top_down_grasp("watering_can0")
    assert abs(width - 0.025) < 1e-6 and abs(target[2] - w.data.geom_xpos[bar][2]) < 1e-3
    result = grasp_and_lift(sk, "watering_can0")
    side = result.details["side"]
    assert sk._pads_on(sk._pads(side), bar)                       # both pads on the bar itself
    w.step(w.steps(1.0))
    assert held(sk, "watering_can0", side) and w.rotation("watering_can0")[2, 2] > 0.995


def test_a_fork_in_front_of_a_box_wall_is_taken_with_the_hand_off_its_middle():
    """A fork lying along a box's near wall, its middle 4.8 cm from the wall (complex_kitchen1's
    counter): a hand centred over it has its 10 cm palm against the wall; it comes down 1.5 cm off
    the middle away from the wall, the far finger as close by as ever, and closing, the fingers
    push the fork in between the pads."""
    text = ("OBJECTS\ncounter:0\nrobot:0\nbox:0\nfork:0\nEND-OBJECTS\nRELATIONS\non box:0 counter:0\n"
            "on fork:0 counter:0\nEND-RELATIONS\nLOCATIONS\ncounter0 counter:0 box:0 fork:0\n"
            "END-LOCATIONS\n")
    sk = Skills(build_world(parse_scene_text(text)))
    w = sk.world
    counter = w.things["counter0"].placement
    front = np.array([-np.sin(counter.yaw), np.cos(counter.yaw)])     # the counter's local +y, out of its front
    back = np.array([counter.x, counter.y]) + (counter.depth / 2 - 0.26) * front
    _put(sk, "box0", back, counter.yaw)      # its 22 cm side across the counter, 15 cm behind its front edge
    _put(sk, "fork0", back + (0.11 + 0.048) * front, counter.yaw)
    assert sk.navigate("counter0", near="fork0").success
    box = w.position("box0")
    offs = [g.off for g, _ in sk.grasp_candidates("fork0")]
    assert 0.015 in offs and -0.015 not in offs and sorted(offs, key=abs) == offs    # away from the wall, last
    centred = [(g, yaws) for g, yaws in sk.grasp_candidates("fork0") if g.off == 0.0]
    assert sk._find_grasp("fork0", centred, ["r", "l"]) is None
    assert sk._forearm_blocker == "box0"          # the palm meets the wall
    z0 = w.position("fork0")[2]
    result = sk.grasp("fork0", "counter0")
    assert result.success, result.reason
    assert held(sk, "fork0", result.details["side"]) and w.position("fork0")[2] > z0 + 0.05
    assert np.linalg.norm(w.position("box0")[:2] - box[:2]) < 0.01


def test_a_mop_at_the_back_of_a_counter_behind_a_watering_can_is_taken_standing_side_on(shared_datasets):
    """knowledge#15: complex_kitchen4's mop lies along the back of the 60 cm counter, its handle
    0.79 m from the base centre behind a watering can. Facing the counter, or turned up to 0.9
    rad, no arm reaches it; turned side on (1.2 rad), the shoulder 17 cm nearer, an arm reaches
    over the can, and the mop rises with the hand."""
    scene = load_scene(shared_datasets / "autogpt_p" / "autogpt_p" / "data" / "evaluation" / "scenes"
                       / "complex_kitchen4.txt")
    sk = Skills(build_world(scene))
    w = sk.world
    assert sk.navigate("counter0", near="mop0").success
    assert sk.grasp("mop0").code.value == "unreachable"
    z0 = w.position("mop0")[2]
    result = sk.grasp("mop0", along="counter0")
    assert result.success, result.reason
    assert held(sk, "mop0", result.details["side"]) and w.position("mop0")[2] > z0 + 0.05
    counter = w.things["counter0"].placement
    facing = np.arctan2(-counter.front_normal[1], -counter.front_normal[0])
    turned = abs((w.base_pose().yaw - facing + np.pi) % (2 * np.pi) - np.pi)
    assert turned > 1.0


def test_where_the_fingers_close_on_nothing_the_robot_takes_it_another_way(shared_datasets):
    """bowl.txt: the screw lies on the bowl's floor 3 cm from its near wall. Across its 6 mm width
    the palm stops on the rim and the fingers close on nothing; felt at once, the screw taken end
    to end instead (the palm along the wall) comes out of the bowl."""
    from affplan_ros.core.planning.planner import PlanStep
    from affplan_ros.sim.physics.executor import PhysicsExecutor

    scene = load_scene(shared_datasets / "autogpt_p" / "autogpt_p" / "data" / "evaluation" / "scenes" / "bowl.txt")
    world = build_world(scene)
    ex = PhysicsExecutor(scene, world=world)
    plan = ["move robot0 counter0 table0", "take_out robot0 hammer0 bowl0 table0", "place robot0 hammer0 table0 table0",
            "take_out robot0 remote0 bowl0 table0", "place robot0 remote0 table0 table0",
            "take_out robot0 screw0 bowl0 table0"]
    result = ex.execute([PlanStep(t.split()[0], tuple(t.split()[2:]), t.split()[1]) for t in plan])
    assert result.success, result.failure
    side = ex.skills.holding("screw0")
    assert side is not None and held(ex.skills, "screw0", side)


def _drop_from(sk: Skills, obj: str, xy: np.ndarray, z: float, yaw: float = 0.0) -> None:
    """Let ``obj`` fall, lying flat and turned by ``yaw``, from the height ``z`` over ``xy`` (world),
    and let it settle."""
    w = sk.world
    jnt = w.model.body_jntadr[w.things[obj].body_id]
    adr = w.model.jnt_qposadr[jnt]
    w.data.qpos[adr:adr + 3] = [xy[0], xy[1], z]
    w.data.qpos[adr + 3:adr + 7] = [np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)]
    w.data.qvel[w.model.jnt_dofadr[jnt]:w.model.jnt_dofadr[jnt] + 6] = 0.0
    mujoco.mj_forward(w.model, w.data)
    w.step(w.steps(1.0))


def test_a_nail_dropped_into_a_bowl_stays_on_its_floor():
    """A 5 mm nail let fall 13 cm onto a bowl's 1 cm floor (as putin drops it over the rim): with
    the default soft contact it sank through the floor onto the table; steel stays on the floor."""
    sk = table_scene("bowl:0", "nail:0")
    w = sk.world
    floor = w.site("bowl0/inner")[0]
    _drop_from(sk, "nail0", floor[:2] + [0.03, 0.0], floor[2] + 0.13)
    assert sk.inside("nail0", "bowl0") and w.position("nail0")[2] > floor[2]
    assert "table0" not in w.contacts("nail0")


def test_a_fork_lying_under_a_spoons_bowl_is_in_the_box_not_in_the_spoon():
    """A spoon dropped into a box comes to rest across the fork there: the fork's centre lies
    within the inner volume of the spoon's 3.5 cm bowl (2 cm of room below its floor), but a 19 cm
    fork does not fit a spoon (``fits``): it is in the box, the innermost container it fits."""
    sk = table_scene("box:0", "fork:0", "spoon:0", extra="in fork:0 box:0")
    w = sk.world
    fork = w.position("fork0")
    _drop_from(sk, "spoon0", fork[:2], fork[2] + 0.02, np.pi / 2)     # across the fork
    assert "fork0" in w.contacts("spoon0")
    assert sk.inside("fork0", "spoon0")        # its centre is within the spoon's inner volume
    assert resting_place(w, sk, "fork0") == ("in", "box0")


def test_a_fork_is_set_down_on_a_plate_behind_a_knife_with_the_fingers_barely_opening():
    """A knife lies on a plate 1 cm nearer than its middle, one end on the wall (complex_kitchen1's
    counter, where the robot laid it): the
    only spot for a fork is behind it, 2.75 cm of room between them, where a finger opening the
    full 2.5 cm wider than the fork would meet the knife. Parting 5 mm from it frees it: the fork
    comes to rest on the plate, and the knife stays."""
    sk = table_scene("plate:0", "fork:0", "dinner_knife:0")
    w = sk.world
    grasp_and_lift(sk, "fork0")
    assert sk.navigate("table0", near="plate0").success
    plate = w.position("plate0")
    base = w.base_pose()
    towards = np.array([base.x, base.y]) - plate[:2]
    towards /= np.linalg.norm(towards)
    along = np.array([-towards[1], towards[0]])
    # 1.5 cm off the middle along its length, one end comes to lie on the wall (tilted 7 degrees).
    _drop_from(sk, "dinner_knife0", plate[:2] + 0.01 * towards + 0.015 * along, plate[2] + 0.04, base.yaw + np.pi / 2)
    knife = w.position("dinner_knife0")
    assert w.rotation("dinner_knife0")[2, 2] < np.cos(0.1)
    result = sk.place("fork0", "plate0", along="table0")
    assert result.success, result.reason
    assert w.resting_on("fork0", "plate0") and np.linalg.norm(w.position("dinner_knife0") - knife) < 0.01
    assert float(np.dot(w.position("fork0")[:2] - knife[:2], towards)) < -0.03     # behind the knife


def test_an_empty_spoon_let_fall_into_a_box_may_lean_but_is_set_down_upright():
    """A spoon's bowl makes it a container, kept upright for what is in it; let fall empty into a
    bin it lands as it will, so the hand may lean to hold it over the rim (knowledge#16: straight
    down, no arm reached over complex_kitchen's box at 1.18 m)."""
    sk = table_scene("spoon:0", "box:0")
    w = sk.world
    side = grasp_and_lift(sk, "spoon0").details["side"]
    point = w.position("box0")

    def leans(**kw) -> list[float]:
        return [float(np.arccos(-r[2, 0])) for r in sk._holding_rotations("spoon0", side, point, **kw)]

    assert max(leans()) < 1e-6
    assert max(leans(dropping=True)) > 0.3


def test_a_tape_roll_is_taken_once_the_base_has_come_to_rest():
    """A drive ends within 1 cm of its goal and the base creeps on the rest of the way: planned
    while it still moved 9 mm, a finger (5 mm of room beside the 8 cm roll in the 9 cm gripper)
    came down on the roll (complex_kitchen4's counter). The base comes to rest first."""
    sk = table_scene("tape:0")
    w = sk.world
    assert sk.navigate("table0", near="tape0").success
    base = w.base_pose()
    across = np.array([-np.sin(base.yaw), np.cos(base.yaw)])
    # Where the base stands, 9 mm short of its set-point across the line of sight.
    w.set_ctrl("base_x", base.x + 0.009 * across[0])
    w.set_ctrl("base_y", base.y + 0.009 * across[1])
    z0 = w.position("tape0")[2]
    result = sk.grasp("tape0", "table0")
    assert result.success, result.reason
    assert held(sk, "tape0", result.details["side"]) and w.position("tape0")[2] > z0 + 0.05
