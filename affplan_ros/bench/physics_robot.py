"""`affplan bench physics --stack robot`: the cases carried out by the robot's own software.

The case's world becomes the simulated Tiago++'s hardware (``sim_hardware``, in this process so
that the referee can judge it afterwards), and the real robot's nodes run as processes with the
``tiago.launch.xml sim:=true`` parameters: ``robot_skills`` (built-in arm planner, Nav2 and
GripperCommand drivers, the oracle pose source) and ``executor``, which runs the plan through
them (ExecutePlan). Nothing of the simulator's own skills moves the robot; the referee
(the relations read from the physics state) judges the goal as for ``--stack sim``.

A step the plan gives a person is answered "not done": the simulated home has no person who
acts on a robot's request yet, so such a case fails with that cause.
"""
from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from typing import Optional, Sequence

ROBOT_NODES = ("robot_skills", "executor")
SUITE_NAMESPACE = "/affplan"
ROBOT = "robot0"          # the robot's name in the plans
DISCOVERY_SETTLE_S = 0.3  # after the executor is seen, so that it sees this client too (as task_client)
SETTLE_S = 0.5            # simulated seconds the world runs on after the plan, before the referee judges


@dataclass
class RobotRun:
    success: bool = False
    steps_done: int = 0
    failure: Optional[dict] = None
    cause: Optional[str] = None
    sim_seconds: float = 0.0
    log: list[str] = field(default_factory=list)


class RobotStack:
    """One per worker process: its own DDS domain, rclpy, a client node spun in a thread."""

    def __init__(self) -> None:
        import rclpy
        from rclpy.executors import MultiThreadedExecutor

        from affplan_ros.env import dds_defaults

        # Workers side by side must not see each other's robot (its topics are global, as a robot's).
        os.environ["ROS_DOMAIN_ID"] = str(120 + os.getpid() % 90)
        # The executor's acceptance of the plan must reach this client, which it has only just met.
        dds_defaults()
        if not rclpy.ok():
            rclpy.init()
        from affplan_ros.action import ExecutePlan
        from affplan_ros.nodes.base import ActionClient
        from affplan_ros.srv import AskHuman

        self.executor = MultiThreadedExecutor()
        self.node = rclpy.create_node("bench_physics_robot")
        # One client for every case, made before the node spins (a response to a client the
        # server has not discovered yet is lost).
        self.client = ActionClient(self.node, ExecutePlan, f"{SUITE_NAMESPACE}/execute_plan")
        self.node.create_service(AskHuman, f"{SUITE_NAMESPACE}/ask_human", self._person)
        self.executor.add_node(self.node)
        threading.Thread(target=self.executor.spin, name="bench_spin", daemon=True).start()

    @staticmethod
    def _person(request, response):
        response.answered, response.answer = True, "no"
        return response

    def run(self, world, oam, scene_path: str, steps: Sequence, timeout_s: float) -> RobotRun:
        from rclpy.parameter import Parameter

        from affplan_ros.nodes.sim_hardware import SimHardwareNode
        from affplan_ros.suite import start_suite

        out = RobotRun()
        hardware = SimHardwareNode(world=world, oam=oam, parameter_overrides=[
            Parameter("real_time_factor", value=0.0), Parameter("camera_rate_hz", value=0.0)])
        self.executor.add_node(hardware)
        sim0 = world.sim_seconds
        try:
            with start_suite("tiago", {"sim": "true", "scenario": scene_path}, nodes=ROBOT_NODES,
                             env=dict(os.environ), shared_params={"knowledge_file": ""},
                             on_line=lambda name, line: out.log.append(f"[{name}] {line.rstrip()}")):
                self._execute(steps, timeout_s, out)
            settle_until = world.sim_seconds + SETTLE_S
            deadline = time.monotonic() + 10.0
            while world.sim_seconds < settle_until and time.monotonic() < deadline:
                time.sleep(0.02)
        finally:
            self.executor.remove_node(hardware)
            hardware.destroy_node()
        out.sim_seconds = world.sim_seconds - sim0
        return out

    def _execute(self, steps: Sequence, timeout_s: float, out: RobotRun) -> None:
        from affplan_ros.action import ExecutePlan
        from affplan_ros.nodes.base import FutureWait, send_goal, wait_for_action
        from affplan_ros.nodes.convert import plan_to_msg

        client = self.client
        if not wait_for_action(self.node, client, f"{SUITE_NAMESPACE}/execute_plan", 20.0):
            out.cause, out.failure = "error", {"what": "the executor did not come up"}
            return
        time.sleep(DISCOVERY_SETTLE_S)
        handle, _ = send_goal(client, ExecutePlan.Goal(plan=plan_to_msg(steps)), timeout=15.0)
        if handle is None or not handle.accepted:
            out.cause, out.failure = "error", {"what": "the executor did not take the plan",
                                               "why": " | ".join(out.log[-6:])}
            return
        done = FutureWait(handle.get_result_async())
        if done.until(time.monotonic() + max(timeout_s, 1.0)) != "done":
            FutureWait(handle.cancel_goal_async()).until(time.monotonic() + 5.0)
            done.until(time.monotonic() + 30.0)
            out.cause, out.failure = "timeout", {"what": f"the plan did not finish within {timeout_s:.0f} s"}
            return
        result = done.future.result().result
        out.success, out.steps_done = result.success, int(result.steps_done)
        f = result.failure
        if not result.success:
            failed = steps[out.steps_done] if out.steps_done < len(steps) else None
            person_step = failed is not None and getattr(failed, "agent", ROBOT) != ROBOT
            out.cause = "person" if person_step else (f.cause or f"code {f.code}")
            out.failure = {"code": int(f.code), "what": f.what, "why": f.why, "suggestion": f.suggestion}

