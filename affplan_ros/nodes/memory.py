"""memory: what the robot knows, shared by every node (AutoGPT+P memory, core/model/memory.py).

Holds the memory; merges what perception (or the simulated camera) publishes on
``observation``; serves ``get_memory`` (GetMemory), ``reset_memory`` (ResetMemory) and
``update_memory`` (UpdateMemory: incremental fields, or the whole memory as JSON, which
tool selection pushes after every round); publishes a latched ``memory`` (MemorySnapshot)
and RViz ``markers`` (MarkerArray) after every change.

The initial memory comes from the scenario (sim: the explored part of the scene) or is empty
apart from the configured locations (a robot). With ``persist_file`` every change is written
to disk (atomically, with fsync) and reloaded when the node restarts; other nodes may restart at
any time without losing anything, since they keep no memory of their own between tasks.

State never goes back in time (core/model/memory.py): an observation is stamped with the time it was
taken (``header.stamp``; a zero stamp counts as the time it arrived), and it changes nothing
about an object whose belief was set later (a plan step executed after the view was taken).
Every input is checked before anything changes: a bad observation is logged and dropped, a bad
update answered ``success: false`` with the reason, and the memory stays as it was.
"""
from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path

from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node
from visualization_msgs.msg import MarkerArray

from affplan_ros.core.files.state_files import write_atomic
from affplan_ros.core.knowledge.oam import load_oam
from affplan_ros.core.model.limits import (
    CLOCK_SKEW_S,
    MAX_JSON_BYTES,
    MAX_PLAN_STEPS,
    MAX_TASK_CHARS,
    MAX_TEXT_CHARS,
)
from affplan_ros.core.model.memory import Memory
from affplan_ros.core.model.records import ObjectRecord, PlanRecord, Source, Stamp, relation_problem
from affplan_ros.core.model.scene import class_of
from affplan_ros.msg import MemorySnapshot, SceneObservation
from affplan_ros.nodes.base import (
    LATCHED_QOS,
    LOCATION_PARAMS,
    parse_locations,
    run_node,
    serve,
    subscribe,
)
from affplan_ros.nodes.convert_memory import (
    memory_to_msg,
    observation_from_msg,
    plan_step_problem,
    relation_from_msg,
)
from affplan_ros.nodes.markers import memory_markers
from affplan_ros.nodes.params import Param, declare_params
from affplan_ros.sim.world_scenario import ScenarioError, load_scenario
from affplan_ros.srv import GetMemory, ResetMemory, UpdateMemory

PARAMS = (
    Param("scenario", "", "scenario whose explored part is the initial memory (sim); "
          "'' = only the configured locations (a robot)"),
    Param("oam_file", "", "object-affordance mapping (default: the built-in kitchen OAM)"),
    Param("persist_file", "", "JSON file the memory is saved to on every change and "
          "reloaded from at start ('' = keep it in this process only)"),
    Param("frame_id", "map", "frame of the RViz markers and location poses", nonempty=True),
    Param("robot_agent", "robot0", "the robot's name in the plans"),
    Param("robot_start", "", "location the robot starts at when no scenario says ('' = unknown)"),
    Param("human_agent", "human0", "the person's name in the plans ('' = nobody to help)"),
    Param("human_start", "", "where the person is when no scenario says ('' = unknown)"),
)


class MemoryNode(Node):
    def __init__(self) -> None:
        super().__init__("memory")
        p = declare_params(self, PARAMS + LOCATION_PARAMS)
        self.persist_file, self.frame_id, self.robot = p.persist_file, p.frame_id, p.robot_agent
        self._human, self._human_start = p.human_agent, p.human_start
        self.poses = parse_locations(p.locations)
        try:
            self.oam = load_oam(p.oam_file or None)
            self._scenario = load_scenario(p.scenario) if p.scenario else None
        except (OSError, ScenarioError, ValueError) as exc:
            raise ValueError(f"cannot build the initial memory: {exc}") from exc
        self._robot_start = p.robot_start
        self._rejected_logged: dict[str, float] = {}
        self._saved_at = 0.0        # when the file was last written
        self._unsaved = False       # a change not on disk yet (observations are saved at most every 2 s)
        # The configuration is the weakest belief: any observation, even one taken before the
        # node started (latched on the topic), may correct it.
        self.memory = self._initial(Stamp(0.0, Source.INITIAL))
        source = "initial"
        if self.persist_file and Path(self.persist_file).is_file():
            source = self._reload(Path(self.persist_file)) or source

        self.snapshot_pub = self.create_publisher(MemorySnapshot, "memory", LATCHED_QOS)
        self.markers_pub = self.create_publisher(MarkerArray, "markers", LATCHED_QOS)
        group = MutuallyExclusiveCallbackGroup()  # one change at a time, in arrival order
        subscribe(self, SceneObservation, "observation", self._on_observation, LATCHED_QOS, group)
        serve(self, GetMemory, "get_memory", self._on_get, group)
        serve(self, ResetMemory, "reset_memory", self._on_reset, group)
        serve(self, UpdateMemory, "update_memory", self._on_update, group)
        if self.persist_file:
            self.create_timer(1.0, self._flush, callback_group=group)
        self._changed()
        m = self.memory
        self.get_logger().info(f"memory ({source}): {len(m.objects)} objects, {len(m.locations)} locations "
                               f"({len(m.explored())} explored)")

    def _reload(self, path: Path) -> str:
        """Load the persisted memory ("" when it cannot be used: it is moved aside, never lost)."""
        try:
            if path.stat().st_size > MAX_JSON_BYTES:
                raise ValueError(f"{path.stat().st_size} bytes; the limit is {MAX_JSON_BYTES}")
            self.memory = Memory.from_dict(json.loads(path.read_text(encoding="utf-8")))
            return f"reloaded from {path}"
        except (OSError, ValueError) as exc:
            aside = path.with_name(f"{path.name}.bad-{time.strftime('%Y%m%d-%H%M%S')}")
            try:
                os.replace(path, aside)
            except OSError:
                aside = path
            self.get_logger().error(f"cannot reload {path} ({exc}); starting from the initial memory, "
                                    f"the file is kept as {aside}")
            return ""

    def _initial(self, stamp: Stamp) -> Memory:
        memory = self._configured()
        memory.stamp_all(stamp)
        return memory

    def _configured(self) -> Memory:
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

    def _changed(self, urgent: bool = True) -> None:
        """Publish the memory; save it now (``urgent``) or within 2 s (an observation: the
        camera repeats it, and a file written and synced twice a second wears the disk)."""
        snapshot = self._snapshot()
        stamp = snapshot.header.stamp
        self.snapshot_pub.publish(snapshot)
        self.markers_pub.publish(memory_markers(self.memory, self.poses, self.frame_id, stamp))
        if self.persist_file:
            self._unsaved = True
            if urgent or time.monotonic() - self._saved_at >= 2.0:
                self._save()

    def _flush(self) -> None:
        if self._unsaved:
            self._save()

    def _save(self) -> None:
        path = Path(self.persist_file)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, json.dumps(self.memory.to_dict(), indent=1))  # never a half-written file
            self._saved_at, self._unsaved = time.monotonic(), False
        except OSError as exc:
            self.get_logger().error(f"cannot save the memory to {path}: {exc}")

    def _reject(self, text: str) -> None:
        """A dropped message, logged once per kind of problem every 30 s (a camera repeats it)."""
        now = time.monotonic()
        if now - self._rejected_logged.get(text[:80], -1e9) >= 30.0:
            self._rejected_logged[text[:80]] = now
            self.get_logger().warn(text)

    # -- checking what arrives ---------------------------------------------------------------
    def _stamp_of(self, header_stamp) -> float:
        """An observation's time (a zero stamp: now); ValueError when it lies in the future."""
        now = time.time()
        taken = header_stamp.sec + header_stamp.nanosec * 1e-9
        if taken == 0:
            return now
        if taken > now + CLOCK_SKEW_S:
            raise ValueError(f"it is stamped {taken - now:.1f} s in the future (check the clocks)")
        return taken

    def _observation(self, msg: SceneObservation):
        """The message as a checked, stamped core Observation; ValueError naming what is wrong."""
        taken = self._stamp_of(msg.header.stamp)
        observation = observation_from_msg(msg, stamp=taken)
        problems = observation.problems()
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise ValueError(problems[0] + more)
        return observation

    # -- callbacks -------------------------------------------------------------------------
    def _on_observation(self, msg: SceneObservation) -> None:
        try:
            observation = self._observation(msg)
        except ValueError as exc:
            self._reject(f"observation on {self.resolve_topic_name('observation')} rejected: {exc}")
            return
        kept = self.memory.merge(observation)
        if kept:
            self.get_logger().debug(f"an observation older than what is known about {', '.join(kept)}: "
                                    "those stay as they are")
        self._changed(urgent=False)

    def _on_get(self, _request, response):
        response.memory = self._snapshot()
        response.json = json.dumps(self.memory.to_dict())
        return response

    def _on_reset(self, request, response):
        instructions = list(self.memory.instructions)
        # Stamped now: nothing observed before the reset comes back through a late message.
        self.memory = self._initial(Stamp.now(Source.INITIAL))
        if request.keep_instructions:
            self.memory.instructions = instructions
        self._changed()
        response.success, response.message = True, "memory reset to the initial memory"
        self.get_logger().info(response.message)
        return response

    def _on_update(self, request, response):
        try:
            memory = self._apply(request)
        except ValueError as exc:  # nothing is changed by a bad update
            response.success, response.message = False, f"update rejected: {exc}"
            self.get_logger().warn(response.message[:500])
            return response
        self.memory = memory
        self._changed()
        response.success, response.message = True, "memory updated"
        return response

    def _apply(self, request) -> Memory:
        """The memory after ``request``, built on a copy (ValueError leaves the memory as it was)."""
        now = Stamp.now(Source.UPDATE)
        if request.memory_json:
            if len(request.memory_json) > MAX_JSON_BYTES:
                raise ValueError(f"memory_json is {len(request.memory_json)} characters; the limit is {MAX_JSON_BYTES}")
            try:
                data = json.loads(request.memory_json)
            except (json.JSONDecodeError, RecursionError) as exc:
                raise ValueError(f"memory_json is not JSON: {exc}") from None
            incoming = Memory.from_dict(data, default=now)
            if incoming.newest() > now.time + CLOCK_SKEW_S:
                raise ValueError("memory_json holds beliefs stamped in the future (check the clocks)")
            memory = self.memory.reconcile(incoming)
        else:
            memory = Memory.from_dict(self.memory.to_dict())
        observation = request.observation
        if observation.objects or observation.relations or observation.location:
            memory.merge(self._observation(observation))
        if request.explored_location:
            from affplan_ros.core.model.limits import check_name

            memory.add_location(check_name(request.explored_location, "explored_location"), explored=True)
        removed = [relation_from_msg(r) for r in request.remove_relations]
        added = [relation_from_msg(r) for r in request.add_relations]
        for rel in (*removed, *added):
            problem = relation_problem(rel)
            if problem:
                raise ValueError(f"relation {' '.join((rel.predicate, *rel.args))[:100]!r}: {problem}")
        for rel in removed:
            memory.remove_relation(rel, now)
        for rel in added:
            memory.add_relation(rel, now)
        # a relation added as a fact is no assumption; one added as assumed is
        memory.assumed = ({*memory.assumed, *(relation_from_msg(r) for r in request.add_relations if r.assumed)}
                          - {relation_from_msg(r) for r in request.add_relations if not r.assumed}) \
            & set(memory.relations)
        for sub in request.substitutions:
            from affplan_ros.core.model.limits import name_problem

            problem = name_problem(sub.missing_class, "missing_class") or name_problem(sub.replacement, "replacement")
            if problem:
                raise ValueError(f"a substitution needs missing_class and replacement: {problem}")
            memory.accept_substitution(sub.missing_class, sub.replacement)
        if request.instruction:
            text = " ".join(request.instruction.split())
            if not text or len(text) > MAX_TASK_CHARS:
                raise ValueError(f"instruction must be text of 1 to {MAX_TASK_CHARS} characters")
            memory.record_instruction(text)
        if len(request.result) > MAX_TEXT_CHARS:
            raise ValueError(f"result is {len(request.result)} characters; the limit is {MAX_TEXT_CHARS}")
        if request.plan:
            plan = request.plan[0]
            if len(plan.steps) > MAX_PLAN_STEPS:
                raise ValueError(f"the plan has {len(plan.steps)} steps; the limit is {MAX_PLAN_STEPS}")
            if not math.isfinite(plan.cost) or len(plan.goal) > MAX_TEXT_CHARS:
                raise ValueError("the plan's cost must be a finite number and its goal at most "
                                 f"{MAX_TEXT_CHARS} characters")
            for step in plan.steps:
                problem = plan_step_problem(step)
                if problem:
                    raise ValueError(f"plan step {step.index}: {problem}")
            steps = [" ".join([s.action, *([s.agent] if s.agent else []), *s.arguments]) for s in plan.steps]
            memory.last_plan = PlanRecord("partial plan" if plan.partial else "plan", "", plan.goal or None, steps,
                                          plan.cost, executed=bool(request.result), message=request.result)
        return memory


def main(args=None) -> int:
    return run_node(MemoryNode, args)


if __name__ == "__main__":
    raise SystemExit(main())
