"""`affplan bench recovery --through suite`: the LASP cases through the running node suite.

Each case starts the sim suite as ``affplan up`` does (one process per node of
launch/sim.launch.xml) with the scenario as the simulated world and as the robot's model
(``capabilities_file``: the robot lacks the hidden preconditions; its world's measured
quantities and known properties are the environment's), a fresh knowledge file, and the
case's scripted answers on the local chat-completions server (the same answers as the core
run, plus the tool choice ``PLAN``). The task goes in through the ExecuteTask action: the
tool-selection node plans through the planning node, executes step by step, and learns
(LASP) when a step fails although the robot's model says it should work. Then the whole
suite is stopped and started again on the same knowledge file, as after a restart, and the
task is sent again: the planning node must plan with what was learned, without a failure.

A case succeeds when the task succeeded and the scenario's goal holds in the memory the
executed steps left. Nothing here reaches into a node: only actions, services and files.
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Optional

import yaml

RESTART_SAY = "restart"


def _count_failures(seen: list[str]) -> int:
    return sum(1 for m in seen if m.startswith("step ") and "failed: Error:" in m)


def _goal_holds(client, scenario) -> tuple[bool, str]:
    """Does the scenario's goal hold in the memory the suite keeps now?"""

    from affplan_ros.core.model.memory import Memory
    from affplan_ros.core.planning.simulate import goal_holds
    from affplan_ros.srv import GetMemory

    got, error = client.call(GetMemory, "get_memory", GetMemory.Request(), timeout=20.0)
    if got is None:
        return False, f"memory not readable: {error}"
    scene = Memory.from_dict(json.loads(got.json)).scene()
    try:
        return goal_holds(scenario.robot_domain().build(scene), scenario.goal_dnf), ""
    except Exception as exc:  # noqa: BLE001 - an object the memory lost: the goal does not hold
        return False, f"goal not checkable on memory: {exc}"


class SuiteCases:
    """Runs LASP cases through freshly started suites, one case after the other."""

    def __init__(self, script: dict, out: Path, *, time_scale: float = 0.02, task_timeout: float = 180.0,
                 log_level: str = "error"):
        from affplan_ros.bench.recovery import ScriptedRecoveryEndpoint

        self.script, self.out = script, out
        self.time_scale, self.task_timeout, self.log_level = time_scale, task_timeout, log_level
        self.endpoint = ScriptedRecoveryEndpoint()

    def close(self) -> None:
        self.endpoint.close()

    def _answers(self, case: str) -> dict:
        answers = dict(self.script.get(case) or {})
        answers.setdefault("tool", ["SELECTED TOOL: PLAN"])
        return answers

    def _params(self, folder: Path, scenario_path: str, knowledge: Path) -> Path:
        from affplan_ros.env import share_dir

        params = yaml.safe_load((share_dir() / "config" / "sim.yaml").read_text())
        shared = {"knowledge_file": str(knowledge), "capabilities_file": str(scenario_path)}
        params["/**"]["ros__parameters"].update(shared)
        for section, values in params.items():  # the bench's values win over a node's own section
            if section != "/**":
                for key in shared:
                    values["ros__parameters"].pop(key, None)
        path = folder / "params.yaml"
        path.write_text(yaml.safe_dump(params))
        return path

    def _one_suite(self, scenario, folder: Path, knowledge: Path) -> dict:
        """Start a suite, send the task, read the outcome, stop the suite."""
        from affplan_ros.env import dds_defaults
        from affplan_ros.suite import start_suite
        from affplan_ros.task_client import SuiteClient

        dds_defaults()
        folder.mkdir(parents=True, exist_ok=True)
        self.endpoint.use(scenario.id, self._answers(scenario.id))
        env = {"AFFPLAN_LLM_BASE_URL": self.endpoint.server.base_url, "AFFPLAN_LLM_MODEL": "scripted",
               "AFFPLAN_LLM_API_KEY_ENV": "", "AFFPLAN_FAST_PATH": "0"}
        params = self._params(folder, scenario.path, knowledge)
        t0 = time.monotonic()
        suite = start_suite("sim", {"scenario": str(scenario.path), "params": str(params),
                                    "time_scale": str(self.time_scale), "log_level": self.log_level}, env=env)
        started = time.monotonic() - t0
        seen: list[str] = []
        rec = {"success": False, "task_success": False, "goal_reached": False, "failures": 0, "learned": [],
               "llm_calls": 0, "tokens": 0, "stop_reason": "", "message": "", "plan": [], "start_seconds":
               round(started, 2), "task_seconds": 0.0, "note": ""}
        try:
            with SuiteClient("/affplan", f"bench_recovery_{scenario.id}") as client:
                t1 = time.monotonic()
                outcome = client.run_task(scenario.task, lambda _tag, text: seen.append(text),
                                          timeout=self.task_timeout, wait_s=30.0)
                rec["task_seconds"] = round(time.monotonic() - t1, 2)
                res = outcome.result if outcome is not None else None
                if res is None:
                    rec["message"] = seen[-1] if seen else "no answer from the suite"
                else:
                    rec.update(task_success=bool(res.success), stop_reason=res.stop_reason, message=res.message,
                               learned=list(res.learned), llm_calls=int(res.llm_calls),
                               tokens=int(res.prompt_tokens) + int(res.completion_tokens),
                               plan=[" ".join([s.action, s.agent, *s.arguments]) for s in res.final_plan.steps])
                    rec["goal_reached"], rec["note"] = _goal_holds(client, scenario)
        finally:
            codes = suite.stop()
            for proc in suite.processes:
                (folder / f"{proc.name}.log").write_text("".join(proc.output))
        rec["failures"] = _count_failures(seen)
        rec["success"] = rec["task_success"] and rec["goal_reached"]
        rec["transcript"] = [m[:300] for m in (seen if len(seen) <= 60 else seen[:40] + ["..."] + seen[-20:])]
        bad = {n: c for n, c in codes.items() if c not in (0, -9)}
        if bad:
            rec["note"] = (rec["note"] + "; " if rec["note"] else "") + f"nodes exited with {bad}"
        return rec

    def run_case(self, case: dict) -> dict:
        """One case: a suite learns, a restarted suite uses what was learned."""
        from affplan_ros.bench.recovery import empty_result
        from affplan_ros.core.recovery.knowledge import KnowledgeStore
        from affplan_ros.sim.scenario import load_scenario

        r = empty_result(case)
        r["via"] = "suite"
        t0 = time.monotonic()
        folder = self.out / "suite" / case["scenario"]
        knowledge = folder / "knowledge.json"
        knowledge.unlink(missing_ok=True)
        try:
            scenario = load_scenario(case["path"])
            first = self._one_suite(scenario, folder / "first", knowledge)
            kept = KnowledgeStore.open(knowledge) if knowledge.exists() else KnowledgeStore(None)
            r.update(success=first["success"], executable=first["task_success"], learned=first["learned"],
                     llm_calls=first["llm_calls"], tokens=first["tokens"], stop_reason=first["stop_reason"],
                     stop_message=first["message"], executed=first["plan"], knowledge=kept.render(),
                     first_plan_executable=first["failures"] == 0, refinements=1 if first["learned"] else 0,
                     failures=[m for m in first["transcript"] if m.startswith("step ") and "failed" in m],
                     suite=first)
            if first["note"]:
                r["notes"].append(first["note"])
            if first["success"] and (kept.preconditions or kept.properties):
                again = self._one_suite(scenario, folder / RESTART_SAY, knowledge)
                r["repeat"] = {"success": again["success"], "failures": again["failures"],
                               "refinements": 1 if again["learned"] else 0, "seconds":
                               round(again["start_seconds"] + again["task_seconds"], 2),
                               "llm_calls": again["llm_calls"], "stop_reason": again["stop_reason"],
                               "plans": [again["plan"]], "objects_added": [], "learned": again["learned"],
                               "start_seconds": again["start_seconds"], "task_seconds": again["task_seconds"]}
                if again["note"]:
                    r["notes"].append(f"after the restart: {again['note']}")
        except Exception as exc:  # noqa: BLE001 - one case's trouble is its result, the bench goes on
            r["error"] = f"{type(exc).__name__}: {exc}"
            r["stop_message"] = r["stop_message"] or r["error"]
            r["success"] = False
        r["seconds"] = round(time.monotonic() - t0, 3)
        return r


def run_suite_cases(cases: list[dict], script: dict, out: Path, *, time_scale: float = 0.02,
                    task_timeout: float = 180.0, say=print) -> list[dict]:
    """The LASP cases (one per scenario) through the node suite, one after the other."""
    runner = SuiteCases(script, out, time_scale=time_scale, task_timeout=task_timeout)
    results: list[dict] = []
    try:
        for i, case in enumerate(cases, 1):
            r = runner.run_case(case)
            rep: Optional[dict] = r.get("repeat")
            say(f"[{i:3d}/{len(cases)}] {'ok  ' if r['success'] else 'FAIL'} {r['id']:44s} "
                f"learned {len(r['learned'])} llm {r['llm_calls']} {r['seconds']:.1f}s"
                + (f" | restart: {'ok' if rep['success'] else 'FAIL'}, {rep['failures']} failures, "
                   f"{rep['llm_calls']} llm" if rep else "")
                + (f" | {r['error'] or r['stop_message']}"[:200] if not r["success"] else ""))
            results.append(r)
    finally:
        runner.close()
    return results
