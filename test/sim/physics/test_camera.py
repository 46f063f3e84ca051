"""The head camera of the physics world: frames, intrinsics, pose, pointing the head."""
from __future__ import annotations

from pathlib import Path

import mujoco  # noqa: F401 - required (requirements/physics.txt): a broken install fails here, never skips
import numpy as np
import pytest

from affplan_ros.core.files.scene_io import load_scene
from affplan_ros.sim.physics.camera import HeadCamera, head_angles
from affplan_ros.sim.physics.control import RobotControl
from affplan_ros.sim.physics.world import build_world

KITCHEN = Path(__file__).resolve().parents[3] / "config" / "scenarios" / "kitchen.txt"


def test_the_head_looks_at_the_cup_and_the_depth_image_agrees_with_the_geometry():
    world = build_world(load_scene(KITCHEN))
    camera = HeadCamera(world, 320, 240)
    try:
        cup = world.position("cup0")
        pan, tilt = head_angles(world, cup)
        assert RobotControl(world).follow([{"head_pan": pan, "head_tilt": tilt}]).ok
        frame = camera.render()
        assert frame.rgb.shape == (240, 320, 3) and frame.rgb.dtype == np.uint8
        assert frame.depth.shape == (240, 320) and frame.depth.dtype == np.float32
        # The cup's centre projects near the image centre, and the depth there is the distance
        # to the cup's near side: a little less than to its centre, never more.
        u, v, z = frame.pixel_of(cup)
        assert abs(u - frame.cx) < 25 and abs(v - frame.cy) < 25, (u, v)
        measured = float(frame.depth[int(round(v)), int(round(u))])
        assert z - 0.06 < measured <= z + 0.01, (measured, z)
        # The pixel shows the cup, not the counter behind it: a pixel beside the cup is farther away.
        assert float(frame.depth[int(round(v)), min(int(round(u)) + 40, 319)]) > measured
        # Looking the other way, the cup is out of the picture.
        assert RobotControl(world).follow([{"head_pan": pan + 1.2 if pan < 0 else pan - 1.2}]).ok
        seen = camera.render().pixel_of(cup)
        assert seen is None or not (0 <= seen[0] < 320)
    finally:
        camera.close()


def test_a_too_small_image_is_refused():
    world = build_world(load_scene(KITCHEN))
    with pytest.raises(ValueError, match="too small"):
        HeadCamera(world, 8, 8)


def test_the_detector_can_be_loaded_after_the_camera_has_rendered():
    """Mesa's EGL brings its own LLVM; torchvision (the detector) imports triton, whose LLVM
    crashed the process when it came second. A fresh process, as `bench perception` is."""
    import subprocess
    import sys

    pytest.importorskip("torchvision", reason="the perception extra is not installed")
    code = ("from affplan_ros.core.files.scene_io import load_scene\n"
            "from affplan_ros.sim.physics.camera import HeadCamera\n"
            "from affplan_ros.sim.physics.world import build_world\n"
            f"camera = HeadCamera(build_world(load_scene({str(KITCHEN)!r})), 64, 48)\n"
            "camera.render()\n"
            "import torchvision\n"
            "camera.render()\n"
            "print('both')\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.strip().endswith("both"), run.stderr[-2000:]


def test_the_refrigerator_lamp_lights_what_lies_inside_and_apples_are_red():
    from affplan_ros.core.planning.planner import PlanStep
    from affplan_ros.sim.physics.executor import PhysicsExecutor

    executor = PhysicsExecutor(load_scene(KITCHEN))
    assert executor.execute([PlanStep("move", ("counter0", "refrigerator0"), "robot0"),
                             PlanStep("open", ("refrigerator0", "refrigerator0"), "robot0")]).success
    assert executor.look_at("refrigerator0")
    # The camera's own headlight off: what lights the apple is the lamp (the room's light from
    # above does not reach under the fridge's roof).
    executor.world.model.vis.headlight.diffuse[:] = 0.0
    executor.world.model.vis.headlight.ambient[:] = 0.0
    camera = HeadCamera(executor.world, 160, 120)
    try:
        frame = camera.render()
        u, v, _ = frame.pixel_of(executor.world.position("apple0"))
        r, g, b = (int(c) for c in frame.rgb[int(round(v)), int(round(u))])
        assert r > 90 and r > 2 * g and r > 2 * b, (r, g, b)   # lit, and red
    finally:
        camera.close()


def test_the_arms_go_up_out_of_the_view_turned_to_their_side_and_tuck_again():
    # Explore (perception) looks at a place turned to either side: tucked, the arm of that side
    # covered a third of the frame, and the kitchen's knife behind it was never seen.
    from affplan_ros.sim.physics.dataset import _segmentation
    from affplan_ros.sim.physics.executor import PhysicsExecutor
    from affplan_ros.sim.physics.robot import arm_joints, home_arm

    executor = PhysicsExecutor(load_scene(KITCHEN))
    camera = HeadCamera(executor.world, 320, 240)
    world = executor.world
    arm_geoms = {g for g in range(world.model.ngeom)
                 if world.model.body(int(world.model.geom_bodyid[g])).name.startswith(("r_", "l_"))}

    def arm_pixels() -> int:
        seg = _segmentation(camera)
        return int(np.isin(seg, list(arm_geoms)).sum())

    try:
        assert executor.explore("counter0").success
        on_counter = {n: world.position(n).copy() for n in ("cup0", "sponge0", "bucket0", "kitchen_knife0")}
        tucked = []
        for pan in (0.45, -0.45):
            executor.look_at("counter0", pan)
            tucked.append(arm_pixels())
        raised = executor.clear_view()
        assert sorted(raised) == ["l", "r"]
        clear = []
        for pan in (0.45, -0.45):
            executor.look_at("counter0", pan)
            clear.append(arm_pixels())
        assert min(tucked) > 0.15 * 320 * 240 and max(clear) < 0.01 * 320 * 240, (tucked, clear)
        executor.end_view(raised)
        for side in ("l", "r"):
            assert np.allclose([world.qpos(j) for j in arm_joints(side)], home_arm(side, world.spec), atol=0.05)
        # Nothing on the counter was touched on the way up or down.
        assert all(np.linalg.norm(world.position(n) - p) < 0.01 for n, p in on_counter.items())
    finally:
        camera.close()
