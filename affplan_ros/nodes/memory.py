"""memory: what the robot knows, shared by every node (AutoGPT+P memory, core/memory.py).

Holds the memory; merges what perception (or the simulated camera) publishes on
``observation``; serves ``get_memory`` (GetMemory), ``reset_memory`` (ResetMemory) and
``update_memory`` (UpdateMemory: incremental fields, or the whole memory as JSON, which
tool selection pushes after every round); publishes a latched ``memory`` (MemorySnapshot)
and RViz ``markers`` (MarkerArray) after every change.

The initial memory comes from the scenario (sim: the explored part of the scene) or is empty
apart from the configured locations (a robot). With ``persist_file`` every change is written
to disk and reloaded when the node restarts; other nodes may restart at any time without
losing anything, since they keep no memory of their own between tasks.
"""
from __future__ import annotations

import json
import math
import os
import threading
from pathlib import Path

from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node
from visualization_msgs.msg import MarkerArray

from affplan_ros.core.memory import Memory, ObjectRecord, PlanRecord
from affplan_ros.core.oam import load_oam
from affplan_ros.sim.world_scenario import ScenarioError, load_scenario
from affplan_ros.msg import MemorySnapshot, SceneObservation
from affplan_ros.nodes.base import LATCHED_QOS, declare, declare_locations, require, run_node
from affplan_ros.nodes.convert_memory import class_of, memory_to_msg, observation_from_msg, relation_from_msg
from affplan_ros.nodes.markers import memory_markers
from affplan_ros.srv import GetMemory, ResetMemory, UpdateMemory


class MemoryNode(Node):
    def __init__(self) -> None:
        super().__init__("memory")
        scenario = declare(self, "scenario", "", "scenario whose explored part is the initial memory (sim); "
                           "'' = only the configured locations (a robot)")
        oam_file = declare(self, "oam_file", "", "object-affordance mapping (default: the built-in kitchen OAM)")
        self.persist_file = declare(self, "persist_file", "", "JSON file the memory is saved to on every change and "
                                    "reloaded from at start ('' = keep it in this process only)")
        self.frame_id = declare(self, "frame_id", "map", "frame of the RViz markers and location poses")
        self.robot = declare(self, "robot_agent", "robot0", "the robot's name in the plans")
        start = declare(self, "robot_start", "", "location the robot starts at when no scenario says ('' = unknown)")
        self._human = declare(self, "human_agent", "human0", "the person's name in the plans ('' = nobody to help)")
        self._human_start = declare(self, "human_start", "", "where the person is when no scenario says ('' = unknown)")
        self.poses = declare_locations(self)
        require(bool(self.frame_id), "frame_id must not be empty")
        try:
            self.oam = load_oam(oam_file or None)
            self._scenario = load_scenario(scenario) if scenario else None
        except (OSError, ScenarioError, ValueError) as exc:
            raise ValueError(f"cannot build the initial memory: {exc}") from exc
        self._robot_start = start
        self._lock = threading.Lock()
        self._pending: list = []   # perception views merged since tool selection's last push
        self.memory = self._initial()
        source = "initial"
        if self.persist_file and Path(self.persist_file).is_file():
            try:
                self.memory = Memory.from_dict(json.loads(Path(self.persist_file).read_text(encoding="utf-8")))
                source = f"reloaded from {self.persist_file}"
            except (OSError, ValueError) as exc:
                self.get_logger().error(f"cannot reload {self.persist_file} ({exc}); starting from the initial memory")

        self.snapshot_pub = self.create_publisher(MemorySnapshot, "memory", LATCHED_QOS)
        self.markers_pub = self.create_publisher(MarkerArray, "markers", LATCHED_QOS)
        group = MutuallyExclusiveCallbackGroup()  # one change at a time, in arrival order
        self.create_subscription(SceneObservation, "observation", self._on_observation, LATCHED_QOS, callback_group=group)
        self.create_service(GetMemory, "get_memory", self._on_get, callback_group=group)
        self.create_service(ResetMemory, "reset_memory", self._on_reset, callback_group=group)
        self.create_service(UpdateMemory, "update_memory", self._on_update, callback_group=group)
        self._changed()
        m = self.memory
        self.get_logger().info(f"memory ({source}): {len(m.objects)} objects, {len(m.locations)} locations "
                               f"({len(m.explored())} explored)")

    def _initial(self) -> Memory:
        if self._scenario is not None:
            from affplan_ros.sim.executor import SimulatedExecutor

            recovery = self._scenario.recovery  # a recovery scenario: its belief and its classes
            sim = SimulatedExecutor(self._scenario.memory_scene(), oam=recovery.oam if recovery else self.oam,
                                    robot=self.robot)
            return sim.initial_memory(self._scenario.explored_locations())
        # A robot: the agents and the configured places (named class + number, e.g. table0);
        # what is at each place is unknown until it is explored.
        memory = Memory()
        for name in [self.robot, self._human, *self.poses]:
            if name:
                cls = class_of(name)
                affordances = sorted(self.oam.affordances_of(cls)) if cls in self.oam else []
                memory.objects[name] = ObjectRecord(name, cls, int(name[len(cls):] or 0), tuple(affordances))
        for name in self.poses:
            memory.add_location(name)
        for agent, start in ((self.robot, self._robot_start), (self._human, self._human_start)):
            if agent and start:
                memory.add_location(start)
                memory.set_agent_location(agent, start)
        return memory

    # -- publishing ------------------------------------------------------------------------
    def _snapshot(self) -> MemorySnapshot:
        from geometry_msgs.msg import PoseStamped

        stamp = self.get_clock().now().to_msg()
        poses = {}
        for name, (x, y, yaw) in self.poses.items():
            p = PoseStamped()
            p.header.frame_id, p.header.stamp = self.frame_id, stamp
            p.pose.position.x, p.pose.position.y = x, y
            p.pose.orientation.z, p.pose.orientation.w = math.sin(yaw / 2), math.cos(yaw / 2)
            poses[name] = p
        snapshot = memory_to_msg(self.memory, poses)
        snapshot.header.stamp, snapshot.header.frame_id = stamp, self.frame_id
        return snapshot

    def _changed(self) -> None:
        snapshot = self._snapshot()
        stamp = snapshot.header.stamp
        self.snapshot_pub.publish(snapshot)
        self.markers_pub.publish(memory_markers(self.memory, self.poses, self.frame_id, stamp))
        if self.persist_file:
            self._save()

    def _save(self) -> None:
        path = Path(self.persist_file)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(path.suffix + ".tmp")
            tmp.write_text(json.dumps(self.memory.to_dict(), indent=1), encoding="utf-8")
            os.replace(tmp, path)  # never a half-written file
        except OSError as exc:
            self.get_logger().error(f"cannot save the memory to {path}: {exc}")

    # -- callbacks -------------------------------------------------------------------------
    def _on_observation(self, msg: SceneObservation) -> None:
        observation = observation_from_msg(msg)
        self.memory.merge(observation)
        self._pending.append(observation)
        self._changed()

    def _on_get(self, _request, response):
        response.memory = self._snapshot()
        response.json = json.dumps(self.memory.to_dict())
        return response

    def _on_reset(self, request, response):
        instructions = list(self.memory.instructions)
        self.memory = self._initial()
        if request.keep_instructions:
            self.memory.instructions = instructions
        self._pending.clear()
        self._changed()
        response.success, response.message = True, "memory reset to the initial memory"
        self.get_logger().info(response.message)
        return response

    def _on_update(self, request, response):
        try:
            memory = self._apply(request)
        except ValueError as exc:  # nothing is changed by a bad update
            response.success, response.message = False, f"update rejected: {exc}"
            self.get_logger().warn(response.message)
            return response
        self.memory = memory
        self._changed()
        response.success, response.message = True, "memory updated"
        return response

    def _apply(self, request) -> Memory:
        """The memory after ``request``, built on a copy (ValueError leaves the memory as it was)."""
        if request.memory_json:
            try:
                memory = Memory.from_dict(json.loads(request.memory_json))
            except json.JSONDecodeError as exc:
                raise ValueError(f"memory_json is not JSON: {exc}") from exc
            for observation in self._pending:  # what perception saw meanwhile is kept
                memory.merge(observation)
            self._pending.clear()
        else:
            memory = Memory.from_dict(self.memory.to_dict())
        if request.observation.objects or request.observation.relations or request.observation.location:
            memory.merge(observation_from_msg(request.observation))
        if request.explored_location:
            memory.add_location(request.explored_location, explored=True)
        for r in request.remove_relations:
            memory.relations = [x for x in memory.relations if x != relation_from_msg(r)]
        for r in request.add_relations:
            memory.add_relation(relation_from_msg(r))
        # a relation added as a fact is no assumption; one added as assumed is
        memory.assumed = ({*memory.assumed, *(relation_from_msg(r) for r in request.add_relations if r.assumed)}
                          - {relation_from_msg(r) for r in request.add_relations if not r.assumed}) & set(memory.relations)
        for sub in request.substitutions:
            if not sub.missing_class or not sub.replacement:
                raise ValueError("a substitution needs missing_class and replacement")
            memory.accept_substitution(sub.missing_class, sub.replacement)
        if request.instruction:
            memory.record_instruction(request.instruction)
        if request.plan:
            plan = request.plan[0]
            steps = [" ".join([s.action, *([s.agent] if s.agent else []), *s.arguments]) for s in plan.steps]
            memory.last_plan = PlanRecord("partial plan" if plan.partial else "plan", "", plan.goal or None, steps,
                                          plan.cost, executed=bool(request.result), message=request.result)
        return memory


def main(args=None) -> int:
    return run_node(MemoryNode, args)


if __name__ == "__main__":
    raise SystemExit(main())
