"""sim_world: the default robot. Serves every skill action against a simulated ground truth.

The world is loaded from a scenario (an AutoGPT+P scene file). Each skill goal is mapped back
to the PDDL actions it may stand for (config/skills.yaml), checked against the true state, and
applied; a false precondition fails the skill with what / why / suggestion. Skills take a
realistic time (scaled by ``time_scale``) and can be canceled midway, leaving the world as it
was before the step.
"""
from __future__ import annotations

import time
from functools import partial

from rclpy.action import ActionServer, CancelResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node

from affplan_ros.core.capabilities import parameter_names
from affplan_ros.core.failure import Failure, FailureCode
from affplan_ros.core.scene_io import SceneFormatError, load_scene
from affplan_ros.core.skills import SkillMap, SkillMapError
from affplan_ros.env import config_file
from affplan_ros.interfaces import interface_types
from affplan_ros.nodes.base import declare, require, run_node
from affplan_ros.nodes.convert import failure_to_msg, message_fields
from affplan_ros.sim.world import SimWorld

# Seconds a real robot would take per skill, before time_scale.
DURATIONS = {"Navigate": 4.0, "Grasp": 3.0, "Place": 2.5, "Pour": 4.0, "Handover": 3.0,
             "Wipe": 6.0, "Open": 3.0, "Close": 2.5, "Skill": 4.0}


class SimWorldNode(Node):
    def __init__(self) -> None:
        super().__init__("sim_world")
        scenario = declare(self, "scenario", "", "scene file of the simulated world (default: config/scenarios/kitchen.txt)")
        skills_file = declare(self, "skills_file", "", "PDDL action -> skill action mapping (default: config/skills.yaml)")
        self.time_scale = declare(self, "time_scale", 1.0, "multiplies every skill's duration (0 = instant)")
        require(self.time_scale >= 0, "time_scale must be >= 0")
        path = config_file("scenarios/kitchen.txt", scenario)
        try:
            self.world = SimWorld(load_scene(path))
            self.skill_map = SkillMap.from_file(config_file("skills.yaml", skills_file))
        except (OSError, SceneFormatError, SkillMapError) as exc:
            raise ValueError(f"cannot load the simulated world: {exc}") from exc
        self.parameters = parameter_names(self.world.task.capabilities)
        types = interface_types("action")
        group = ReentrantCallbackGroup()
        self._skill_servers = [
            ActionServer(self, types[skill], self.skill_map.server(skill),
                         execute_callback=partial(self._execute, skill, types[skill]),
                         cancel_callback=lambda _g: CancelResponse.ACCEPT, callback_group=group)
            for skill in self.skill_map.skill_types()
        ]
        self.get_logger().info(f"simulated world from {path}: {len(self.world.task.object_types)} objects, "
                               f"{len(self._skill_servers)} skill servers, time_scale {self.time_scale}")

    def _execute(self, skill: str, action_type, goal_handle):
        fields = message_fields(goal_handle.request)
        candidates = self.skill_map.candidates(skill, fields, self.parameters)
        # The plan step named in the goal (if any) is the variant meant: try it first.
        intended = goal_handle.request.step.action
        candidates.sort(key=lambda c: c[0] != intended)
        started = time.monotonic()
        duration = DURATIONS.get(skill, 3.0) * self.time_scale
        # Move "in real time" first; the effect happens at the end, so a cancel leaves no trace.
        while time.monotonic() - started < duration:
            if goal_handle.is_cancel_requested:
                goal_handle.canceled()
                return self._result(action_type, False, started, Failure(
                    FailureCode.CANCELED, skill, f"{skill.lower()} was canceled", "cancel requested"))
            progress = (time.monotonic() - started) / duration if duration else 1.0
            goal_handle.publish_feedback(action_type.Feedback(phase="moving", progress=float(progress)))
            time.sleep(min(0.1, duration / 10))
        outcome = self.world.execute(candidates)
        if outcome.success:
            goal_handle.succeed()
            self.get_logger().info(f"{skill}: applied {outcome.action} {fields}")
        else:
            goal_handle.abort()
            self.get_logger().warn(f"{skill} failed: {outcome.failure.feedback()}")
        return self._result(action_type, outcome.success, started, outcome.failure)

    @staticmethod
    def _result(action_type, success: bool, started: float, failure: Failure | None):
        return action_type.Result(success=success, failure=failure_to_msg(failure),
                                  duration_s=time.monotonic() - started)


def main(args=None) -> int:
    return run_node(SimWorldNode, args)


if __name__ == "__main__":
    raise SystemExit(main())
