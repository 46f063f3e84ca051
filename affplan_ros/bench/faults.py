"""``affplan bench faults``: tasks on the running sim suite while nodes die and input goes bad.

The simulated suite runs as ``affplan up`` runs it (one process per node, the offline
instruction interpreter as the language backend, memory persisted to a file, a knowledge file
seeded with learned preconditions). ``--tasks`` requests from a fixed cycle are sent through the
ExecuteTask action, and a seeded random schedule of faults is injected:

* between tasks: a node of the robot (memory, planning, tool_selection, executor) is killed
  with SIGKILL and started again; malformed requests and messages are sent to every kind of
  entry point; the observations the camera published earlier are delivered again, late and
  twice (what a slow network or a restarted camera driver does);
* during a task: planning, tool_selection or the executor is killed at a random moment and
  started again.

The simulated world itself (sim_world) is not killed: it stands for the world, which does not
go back to its start when a robot's process dies.

Measured: tasks completed, failed (each with the reason the suite gave), hung (no result within
``--task-timeout``); facts lost from memory (a fact the memory held before a fault and not
after it, when no task ran in between; and a fact a finished task left that a late observation
took away); learned knowledge entries lost; nodes that died without being killed; the time
from a kill until the node serves again. Writes results.json, summary.md and faults.png.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Optional

from affplan_ros.bench.frame import BenchSetupError, command, output_option, save

# One session in the simulated kitchen (config/scenarios/kitchen.yaml): each request the
# offline interpreter understands; the cycle starts from the scenario again after its last one.
TASKS = ("put the plate on the counter", "bring me the apple from the fridge", "give me the cup",
         "put the banana on the counter", "put the plate on the table")
ROBOT_NODES = ("memory", "planning", "tool_selection", "executor")
DURING_TASK = ("planning", "tool_selection", "executor")   # the memory is killed between tasks only
# What each node serves once it is back (how recovery is timed).
READY = {"memory": ("service", "get_memory"), "planning": ("service", "plan_task"),
         "tool_selection": ("action", "execute_task"), "executor": ("action", "execute_plan")}
SEEDED_KNOWLEDGE = {"version": 1, "preconditions": [
    {"action": "grasp", "condition": "(at ?actor ?at)", "text": "the robot stands where it grasps", "cause": "",
     "task": "seeded by bench faults", "failure": "", "learned_at": "2026-11-01T00:00:00", "confirmed": True},
    {"action": "place", "condition": "(at ?actor ?at)", "text": "the robot stands where it places", "cause": "",
     "task": "seeded by bench faults", "failure": "", "learned_at": "2026-11-01T00:00:00", "confirmed": True}],
    "properties": []}


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Run tasks on the simulated suite while killing and restarting its nodes, sending "
                          "malformed input and delivering old observations late; count what completed, failed "
                          "(and why), hung, and what memory and learned knowledge lost.")
    parser.epilog = "example: affplan bench faults --tasks 30 --seed 1 --out results/faults"
    parser.add_argument("--tasks", type=int, default=30, help="how many tasks (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the fault schedule (default: %(default)s)")
    parser.add_argument("--kill-rate", type=float, default=0.5,
                        help="probability of a kill before a task, and again during it (default: %(default)s)")
    parser.add_argument("--task-timeout", type=float, default=180.0,
                        help="a task with no result after this many seconds counts as hung (default: %(default)s)")
    parser.add_argument("--time-scale", type=float, default=0.1,
                        help="the simulated skills' speed (default: %(default)s: 10x real time)")
    output_option(parser, "faults")


@dataclass
class Fault:
    kind: str                      # kill, kill_during_task, malformed, late_observations
    target: str                    # the node, or the entry point
    task: int                      # index of the task it came before or during
    facts_lost: list[str] = field(default_factory=list)
    facts_gained: list[str] = field(default_factory=list)
    recovery_s: Optional[float] = None
    note: str = ""


@dataclass
class TaskRecord:
    index: int
    task: str
    outcome: str                   # completed, failed, hung
    stop_reason: str = ""
    message: str = ""
    seconds: float = 0.0
    killed_during: str = ""
    transcript: list[str] = field(default_factory=list)   # the task's last feedback messages


@command
def run(args: argparse.Namespace) -> int:
    if args.tasks < 1 or not 0 <= args.kill_rate <= 1 or args.task_timeout <= 0 or args.time_scale < 0:
        raise BenchSetupError("--tasks >= 1, --kill-rate in [0, 1], --task-timeout > 0, --time-scale >= 0")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report = FaultBench(out, args.tasks, args.seed, args.kill_rate, args.task_timeout, args.time_scale).run()
    print(summary_markdown(report), flush=True)
    write_report(out, report)
    bad = report["totals"]
    return 0 if bad["hung"] == 0 and bad["facts_lost"] == 0 and bad["knowledge_lost"] == 0 and \
        bad["unexplained_failures"] == 0 and bad["died_unasked"] == 0 else 1


class FaultBench:
    def __init__(self, out: Path, tasks: int, seed: int, kill_rate: float, task_timeout: float, time_scale: float):
        self.out, self.n, self.rng = out, tasks, random.Random(seed)
        self.seed, self.kill_rate, self.task_timeout, self.time_scale = seed, kill_rate, task_timeout, time_scale
        self.state = out / "state"
        self.faults: list[Fault] = []
        self.tasks: list[TaskRecord] = []
        self.died_unasked: list[str] = []
        self.observations: list = []           # what the camera published, oldest first
        self._lock = threading.Lock()

    # -- the suite ---------------------------------------------------------------------------
    def _start(self):
        from affplan_ros.env import config_file, dds_defaults
        from affplan_ros.suite import start_suite

        dds_defaults()
        self.state.mkdir(parents=True, exist_ok=True)
        for name in ("memory.json", "knowledge.json"):
            (self.state / name).unlink(missing_ok=True)
        (self.state / "knowledge.json").write_text(json.dumps(SEEDED_KNOWLEDGE, indent=1), encoding="utf-8")
        # The offline interpreter answers (no endpoint): the same answers every run.
        self.env = {k: "" for k in ("AFFPLAN_LLM_BASE_URL", "AFFPLAN_LLM_MODEL", "AFFPLAN_LLM_API_KEY_ENV")}
        params = {"knowledge_file": str(self.state / "knowledge.json"), "persist_file": str(self.state / "memory.json"),
                  "execute_timeout_s": "120.0", "plan_timeout_s": "60.0", "approval": "none"}
        self.suite = start_suite("sim", {"scenario": str(config_file("scenarios/kitchen.yaml")),
                                         "time_scale": str(self.time_scale), "log_level": "error"},
                                 env=self.env, shared_params=params)

    def _process(self, name: str):
        return next(p for p in self.suite.processes if p.name == name)

    def _kill(self, name: str) -> float:
        """SIGKILL ``name``, start it again; seconds until the new node serves (its endpoint is in
        the graph, beside the dead one's, which lingers until DDS notices)."""
        from affplan_ros.launcher import NodeProcess
        from affplan_ros.nodes.base import _servers

        kind, what = READY[name]
        endpoint = self.client.name(what) + ("/_action/send_goal" if kind == "action" else "")
        before = _servers(self.client.node, endpoint)
        index = [p.name for p in self.suite.processes].index(name)
        old = self.suite.processes[index]
        old.proc.send_signal(signal.SIGKILL)
        old.proc.wait(10)
        t0 = time.monotonic()
        node = self.suite.description.node(name)
        self.suite.processes[index] = NodeProcess(node.argv(), env=self.env, name=name, wait=False)
        self.suite.processes[index].wait_ready(60.0)
        while not _servers(self.client.node, endpoint) - before:
            if time.monotonic() - t0 > 60.0:
                raise RuntimeError(f"{name} did not serve {endpoint} within 60 s of its restart")
            time.sleep(0.05)
        return time.monotonic() - t0

    def _check_alive(self, expected_dead: str = "") -> None:
        for p in self.suite.processes:
            if p.proc.poll() is not None and p.name != expected_dead:
                self.died_unasked.append(f"{p.name} exit {p.proc.returncode}: {''.join(p.output[-5:])[-300:]}")
                from affplan_ros.launcher import NodeProcess

                index = self.suite.processes.index(p)
                self.suite.processes[index] = NodeProcess(self.suite.description.node(p.name).argv(), env=self.env,
                                                          name=p.name)

    # -- memory ------------------------------------------------------------------------------
    def _facts(self) -> set[str]:
        """What the memory holds, as comparable lines (stamps left out: a re-seen fact is the same fact)."""
        from affplan_ros.srv import GetMemory

        for _ in range(3):
            got, _error = self.client.call(GetMemory, "get_memory", GetMemory.Request(), timeout=20.0)
            if got is not None:
                data = json.loads(got.json)
                facts = {"rel " + " ".join(r) for r in data["relations"]}
                facts |= {"obj " + o["name"] for o in data["objects"]}
                facts |= {f"loc {loc['name']} explored={loc['explored']} " + ",".join(sorted(loc["objects"]))
                          for loc in data["locations"]}
                facts |= {f"instr {i} {t}" for i, t in enumerate(data["instructions"])}
                return facts
            time.sleep(1.0)
        memory = self._process("memory")
        raise RuntimeError(f"the memory node does not answer GetMemory (exit code {memory.proc.poll()}): "
                           + "".join(memory.output[-10:])[-1500:])

    def _knowledge_entries(self) -> int:
        data = json.loads((self.state / "knowledge.json").read_text(encoding="utf-8"))
        return len(data["preconditions"]) + len(data["properties"])

    def _reset(self) -> None:
        from std_srvs.srv import Trigger

        from affplan_ros.srv import ResetMemory

        for srv, name, request in ((Trigger, "reset_world", Trigger.Request()),
                                   (ResetMemory, "reset_memory", ResetMemory.Request())):
            got, error = self.client.call(srv, name, request, timeout=20.0)
            if got is None or not got.success:
                raise RuntimeError(f"{name} failed: {error or got.message}")

    def _on_observation(self, msg) -> None:
        with self._lock:
            self.observations.append(msg)

    # -- faults ------------------------------------------------------------------------------
    def _measured(self, fault: Fault, inject: Callable[[], None]) -> Fault:
        before = self._facts()
        inject()
        time.sleep(0.5)
        after = self._facts()
        fault.facts_lost = sorted(before - after)
        fault.facts_gained = sorted(after - before)
        self.faults.append(fault)
        return fault

    def _kill_between(self, index: int) -> None:
        name = self.rng.choice(ROBOT_NODES)
        fault = Fault("kill", name, index)

        def inject() -> None:
            fault.recovery_s = round(self._kill(name), 2)
        self._measured(fault, inject)

    def _malformed(self, index: int) -> None:
        target, send = self.rng.choice(malformed_inputs())
        fault = Fault("malformed", target, index)

        def inject() -> None:
            fault.note = send(self.client)
            self._check_alive()
        self._measured(fault, inject)

    def _late_observations(self, index: int) -> None:
        """Observations published before now, delivered again: late, out of order and twice."""
        from affplan_ros.msg import SceneObservation
        from affplan_ros.nodes.base import LATCHED_QOS

        with self._lock:
            old = list(self.observations)
        if not old:
            return
        chosen = self.rng.sample(old, min(len(old), 3))
        fault = Fault("late_observations", "observation", index, note=f"{len(chosen)} old views, each twice")

        def inject() -> None:
            pub = self.client.node.create_publisher(SceneObservation, self.client.name("observation"), LATCHED_QOS)
            try:
                time.sleep(0.5)  # matched with the memory node before the first message
                for msg in chosen + chosen[::-1]:
                    pub.publish(msg)
                    time.sleep(0.3)  # depth 1: one at a time, each delivered
            finally:
                self.client.node.destroy_publisher(pub)
        self._measured(fault, inject)

    def _kill_during(self, name: str, delay: float, stop: threading.Event, record: dict) -> None:
        if stop.wait(delay):
            return
        record["killed"] = name
        try:
            record["recovery_s"] = self._kill(name)
        except Exception as exc:  # noqa: BLE001 - reported with the task
            record["error"] = f"{type(exc).__name__}: {exc}"

    # -- the run -----------------------------------------------------------------------------
    def run(self) -> dict:
        from affplan_ros.msg import SceneObservation
        from affplan_ros.nodes.base import LATCHED_QOS
        from affplan_ros.srv import AskHuman
        from affplan_ros.task_client import SuiteClient

        t_start = time.monotonic()
        self._start()
        knowledge_before = self._knowledge_entries()
        try:
            namespace = self.suite.description.args.get("namespace", ("affplan", ""))[0]
            with SuiteClient(namespace, "bench_faults") as client:
                self.client = client
                client.node.create_subscription(SceneObservation, client.name("observation"), self._on_observation,
                                                LATCHED_QOS)
                person = lambda _req, res: (setattr(res, "answered", True), setattr(res, "answer", "yes"), res)[-1]  # noqa: E731
                client.node.create_service(AskHuman, client.name("ask_human"),
                                           lambda req, res: person(req, res) if req.purpose != "step" else
                                           (setattr(res, "answered", True), setattr(res, "answer", "done"), res)[-1])
                for i in range(self.n):
                    self._one(i)
                knowledge_after = self._knowledge_entries()
        finally:
            self.suite.stop()
        return self._report(knowledge_before, knowledge_after, time.monotonic() - t_start)

    def _one(self, i: int) -> None:
        task = TASKS[i % len(TASKS)]
        if i % len(TASKS) == 0 or (self.tasks and self.tasks[-1].outcome != "completed"):
            self._reset()    # a new session, or a fresh start after a task that did not finish
        print(f"[{i + 1}/{self.n}] {task}", flush=True)
        # Between tasks: at most one kill, malformed input, old observations.
        if self.rng.random() < self.kill_rate:
            self._kill_between(i)
        if self.rng.random() < 0.5:
            self._malformed(i)
        # During the task: perhaps a kill at a random moment.
        stop, record = threading.Event(), {}
        killer = None
        if self.rng.random() < self.kill_rate:
            killer = threading.Thread(target=self._kill_during, daemon=True,
                                      args=(self.rng.choice(DURING_TASK), self.rng.uniform(0.2, 4.0), stop, record))
            killer.start()
        t0 = time.monotonic()
        messages: list[str] = []
        outcome = self.client.run_task(task, lambda _tag, text: messages.append(f"{time.monotonic() - t0:.1f}s {text}"),
                                       timeout=self.task_timeout, wait_s=30.0)
        stop.set()
        if killer is not None:
            killer.join(90.0)
        rec = TaskRecord(i, task, "hung", seconds=round(time.monotonic() - t0, 2),
                         killed_during=record.get("killed", ""),
                         transcript=[m[:200] for m in messages[:3] + messages[3:][-7:]])
        if outcome is None:
            rec.outcome, rec.message = "failed", (messages[-1] if messages else "no answer from the suite")
        elif outcome.result is None or (not outcome.result.stop_reason and time.monotonic() - t0 >= self.task_timeout):
            rec.outcome = "hung"
        else:
            res = outcome.result
            rec.outcome = "completed" if res.success else "failed"
            rec.stop_reason, rec.message = res.stop_reason, res.message
        if rec.outcome != "completed" and "no result within" in " ".join(messages[-2:]):
            rec.outcome = "hung"
        if record.get("killed"):
            self.faults.append(Fault("kill_during_task", record["killed"], i,
                                     recovery_s=round(record["recovery_s"], 2) if "recovery_s" in record else None,
                                     note=record.get("error", "")))
        self.tasks.append(rec)
        print(f"    {rec.outcome} ({rec.stop_reason or '-'}, {rec.seconds:.1f} s)"
              + (f", {record['killed']} killed during it" if record.get("killed") else "")
              + (f": {rec.message[:160]}" if rec.outcome != "completed" else ""), flush=True)
        self._check_alive()
        # A finished task's effects must survive its own observations arriving late.
        if rec.outcome == "completed":
            self._late_observations(i)

    def _report(self, knowledge_before: int, knowledge_after: int, seconds: float) -> dict:
        failed = [t for t in self.tasks if t.outcome == "failed"]
        unexplained = [t for t in failed if not t.message.strip() or "unexpected" in t.message]
        recovery = [f.recovery_s for f in self.faults if f.recovery_s is not None]
        by_node: dict[str, list[float]] = {}
        for f in self.faults:
            if f.recovery_s is not None:
                by_node.setdefault(f.target, []).append(f.recovery_s)
        totals = {
            "tasks": len(self.tasks), "completed": sum(t.outcome == "completed" for t in self.tasks),
            "failed": len(failed), "hung": sum(t.outcome == "hung" for t in self.tasks),
            "unexplained_failures": len(unexplained),
            "facts_lost": sum(len(f.facts_lost) for f in self.faults),
            "facts_gained_by_a_fault": sum(len(f.facts_gained) for f in self.faults),
            "knowledge_entries_before": knowledge_before, "knowledge_entries_after": knowledge_after,
            "knowledge_lost": max(0, knowledge_before - knowledge_after),
            "kills": sum(f.kind.startswith("kill") for f in self.faults),
            "kills_during_tasks": sum(f.kind == "kill_during_task" for f in self.faults),
            "malformed_inputs": sum(f.kind == "malformed" for f in self.faults),
            "late_observation_rounds": sum(f.kind == "late_observations" for f in self.faults),
            "died_unasked": len(self.died_unasked),
            "recovery_median_s": round(statistics.median(recovery), 2) if recovery else None,
            "recovery_max_s": round(max(recovery), 2) if recovery else None,
            "recovery_median_s_by_node": {n: round(statistics.median(v), 2) for n, v in sorted(by_node.items())},
            "seconds": round(seconds, 1),
        }
        return {"benchmark": "faults", "seed": self.seed, "kill_rate": self.kill_rate, "time_scale": self.time_scale,
                "task_timeout_s": self.task_timeout, "machine": f"{os.cpu_count()} cores", "totals": totals,
                "tasks": [asdict(t) for t in self.tasks], "faults": [asdict(f) for f in self.faults],
                "died_unasked": self.died_unasked}


# -- malformed input between tasks -------------------------------------------------------------------
def malformed_inputs() -> list[tuple[str, Callable]]:
    """(entry point, a function sending one malformed request and saying what came back)."""
    def update(json_text: str, **fields):
        def send(client) -> str:
            from affplan_ros.srv import UpdateMemory

            request = UpdateMemory.Request(memory_json=json_text, **fields)
            got, error = client.call(UpdateMemory, "update_memory", request)
            return error if got is None else f"success={got.success}: {got.message[:120]}"
        return send

    def observation(client) -> str:
        from affplan_ros.msg import Relation, SceneObject, SceneObservation
        from affplan_ros.nodes.base import LATCHED_QOS

        pub = client.node.create_publisher(SceneObservation, client.name("observation"), LATCHED_QOS)
        time.sleep(0.3)
        pub.publish(SceneObservation(location="table0", objects=[SceneObject(name="robot0", class_name="robot")],
                                     relations=[Relation(predicate="at", arguments=["robot0"])]))
        time.sleep(0.3)
        client.node.destroy_publisher(pub)
        return "published an observation with a one-argument at"

    def plan_task(client) -> str:
        from affplan_ros.srv import PlanTask

        got, error = client.call(PlanTask, "plan_task", PlanTask.Request(task="bring " * 200_000), timeout=30.0)
        return error if got is None else f"success={got.success}: {got.message[:120]}"

    def command(client) -> str:
        from affplan_ros.srv import Command

        got, error = client.call(Command, "command", Command.Request(task="\x01\x02 \t"))
        return error if got is None else f"accepted={got.accepted}: {got.message[:120]}"

    def execute_plan(client) -> str:
        from affplan_ros.action import ExecutePlan
        from affplan_ros.msg import Plan, PlanStep
        from affplan_ros.nodes.base import ActionClient, FutureWait

        ac = ActionClient(client.node, ExecutePlan, client.name("execute_plan"))
        try:
            if not ac.wait_for_server(timeout_sec=10.0):
                return "no executor"
            goal = ExecutePlan.Goal(plan=Plan(steps=[PlanStep(action="grasp", agent="robot0", arguments=["cúp0"])]))
            sent = FutureWait(ac.send_goal_async(goal))
            if sent.until(time.monotonic() + 10.0) != "done" or not sent.future.result().accepted:
                return "refused"
            done = FutureWait(sent.future.result().get_result_async())
            done.until(time.monotonic() + 10.0)
            return done.future.result().result.message[:120] if done.future.done() else "no result"
        finally:
            ac.destroy()

    return [("update_memory", update("[]")), ("update_memory", update('{"substitutions": [1]}')),
            ("update_memory", update("null")), ("update_memory", update("", instruction="x" * 100_000)),
            ("observation", observation), ("plan_task", plan_task), ("command", command),
            ("execute_plan", execute_plan)]


# -- the report --------------------------------------------------------------------------------------
def write_report(out: Path, report: dict) -> None:
    save(out, report, summary_markdown(report), plot=("faults.png", lambda path: _plot(path, report)))


def summary_markdown(report: dict) -> str:
    t = report["totals"]
    lines = [
        f"# bench faults: {t['tasks']} tasks, seed {report['seed']}, kill rate {report['kill_rate']}",
        "",
        f"On {report['machine']}, {t['seconds']} s. The sim suite as `affplan up` runs it (offline interpreter, "
        "memory persisted, knowledge file seeded); nodes killed with SIGKILL and restarted between and during "
        "tasks, malformed input between tasks, the camera's old views delivered again late and twice.",
        "",
        "| measure | value |", "|---|---|",
        f"| tasks completed | {t['completed']} |",
        f"| tasks failed, each with its reason | {t['failed']} (without a clear reason: {t['unexplained_failures']}) |",
        f"| tasks hung | **{t['hung']}** |",
        f"| facts lost from memory | **{t['facts_lost']}** |",
        f"| knowledge entries lost | **{t['knowledge_lost']}** ({t['knowledge_entries_before']} before, "
        f"{t['knowledge_entries_after']} after) |",
        f"| nodes that died without being killed | {t['died_unasked']} |",
        f"| kills (during tasks) | {t['kills']} ({t['kills_during_tasks']}) |",
        f"| malformed inputs / rounds of late observations | {t['malformed_inputs']} / "
        f"{t['late_observation_rounds']} |",
        f"| recovery after a kill, median (max) | {t['recovery_median_s']} s ({t['recovery_max_s']} s) |",
        "",
        "Recovery by node (median s): " + ", ".join(f"{n} {s}" for n, s in t["recovery_median_s_by_node"].items()),
        "",
    ]
    failed = [x for x in report["tasks"] if x["outcome"] != "completed"]
    if failed:
        lines += ["## Tasks that did not complete", "", "| # | task | outcome | killed during | reason |",
                  "|---|---|---|---|---|"]
        lines += [f"| {x['index'] + 1} | {x['task']} | {x['outcome']} ({x['stop_reason'] or '-'}) | "
                  f"{x['killed_during'] or '-'} | {x['message'][:200].replace('|', '/')} |" for x in failed]
        lines.append("")
    lost = [f for f in report["faults"] if f["facts_lost"]]
    if lost:
        lines += ["## Facts lost", ""] + [f"- {f['kind']} {f['target']} before task {f['task'] + 1}: "
                                          f"{', '.join(f['facts_lost'][:10])}" for f in lost] + [""]
    return "\n".join(lines)


def _plot(path: Path, report: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = report["totals"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.6))
    names = ["completed", "failed", "hung"]
    left.bar(names, [t[n] for n in names], color=["tab:green", "tab:orange", "tab:red"])
    left.set_title(f"{t['tasks']} tasks under faults")
    left.set_ylabel("tasks")
    by_node: dict[str, list[float]] = {}
    for f in report["faults"]:
        if f["recovery_s"] is not None:
            by_node.setdefault(f["target"], []).append(f["recovery_s"])
    if by_node:
        right.boxplot(list(by_node.values()), tick_labels=list(by_node))
    right.set_title("seconds from SIGKILL until serving again")
    right.set_ylabel("s")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
