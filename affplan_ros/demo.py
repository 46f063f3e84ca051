"""``affplan demo``: the main job end to end on the simulated robot, printed as a transcript.

task -> language backend writes a PDDL goal -> syntax + Prolog checks with self-correction ->
Fast Downward plans -> the executor node runs each step through the simulated robot's skill
action servers (separate processes, talking over DDS).
"""
from __future__ import annotations

import argparse
import os
import random
import time
from pathlib import Path

import yaml

from affplan_ros.env import config_file

BACKEND_HELP = ("configure a real endpoint with AFFPLAN_LLM_BASE_URL, AFFPLAN_LLM_MODEL and "
                "AFFPLAN_LLM_API_KEY_ENV (the name of the variable holding the key)")


class Transcript:
    def __init__(self) -> None:
        self.t0 = time.monotonic()

    def __call__(self, tag: str, text: str) -> None:
        print(f"[{time.monotonic() - self.t0:5.1f}s] {tag:<6} {text}", flush=True)

    def more(self, text: str) -> None:
        print(f"{'':15}{text}", flush=True)


def _load_demo_config() -> tuple[dict, Path]:
    path = config_file("demo.yaml")
    return yaml.safe_load(path.read_text()), path


def run_demo(args: argparse.Namespace) -> int:
    # Heavy imports here, not at module level: `affplan --help` stays instant.
    from affplan_ros.core.domain import build_task
    from affplan_ros.core.goal_loop import GoalLoop, GoalRequest, StopReason
    from affplan_ros.core.planner import plan_for_goal
    from affplan_ros.core.scene_io import load_scene
    from affplan_ros.core.semantic_check import SemanticChecker
    from affplan_ros.launcher import NodeProcess, node_argv
    from affplan_ros.core.oam import load_oam
    from affplan_ros.llm import GoalPromptBuilder
    from affplan_ros.llm.backends import make_backend

    say = Transcript()
    config, config_path = _load_demo_config()
    scenario = config_path.parent / config["scenario"]
    task_text = args.task or config["task"]
    scene = load_scene(scenario)
    planning_task = build_task(scene)

    # One factory picks the language backend (issue 8): the offline instruction interpreter when
    # no endpoint is configured, else the endpoint (with the interpreter as fast path).
    oam = load_oam()
    backend = make_backend(oam=oam)
    # The demo's nodes get a DDS domain of their own so they never meet a running suite.
    domain = str(random.randint(102, 199) if "ROS_DOMAIN_ID" not in os.environ else os.environ["ROS_DOMAIN_ID"])
    os.environ["ROS_DOMAIN_ID"] = domain
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    namespace = "/affplan"
    processes: list = []
    try:
        say("scene", f"{scenario.name}: {len(scene.objects)} objects, {len(scene.relations)} relations, "
                     f"locations {', '.join(sorted(scene.locations))}")
        say("llm", backend.label)
        if backend.kind == "offline":
            say.more(BACKEND_HELP)
        started = time.monotonic()
        time_scale = config.get("time_scale", 1.0)
        processes.append(NodeProcess(node_argv("sim_world", namespace, {"scenario": str(scenario), "time_scale": time_scale}),
                                     name="sim_world"))
        processes.append(NodeProcess(node_argv("executor", namespace), name="executor"))
        say("nodes", f"sim_world (skill servers) and executor up in {time.monotonic() - started:.1f} s "
                     f"(separate processes, ROS_DOMAIN_ID={domain})")

        say("task", repr(task_text))
        loop = GoalLoop(backend.model, GoalPromptBuilder(), SemanticChecker(), max_rounds=config.get("max_rounds", 5))
        scene_text = "\n".join(f"({r.predicate} {' '.join(r.args)})" for r in scene.relations)
        result = loop.run(GoalRequest(task=task_text, signature=planning_task.signature, scene_text=scene_text,
                                      scene=scene, names=dict(planning_task.names)))
        for fb in result.feedback:
            say("goal", f"round {fb.round}: answer {fb.answer.strip()!r}")
            say.more(f"rejected ({fb.stage}): {fb.message.strip()}")
            say.more("-> fed back to the language backend")
        if result.stop_reason is StopReason.DECLINED:
            say("goal", f"the {', '.join(dict.fromkeys(result.answered_by)) or 'language'} backend declined: "
                        f"{result.error}")
            say.more("nothing was planned or executed; " + BACKEND_HELP + " for requests it does not understand")
            return 2
        if result.stop_reason is not StopReason.ACCEPTED:
            say("goal", f"no goal accepted: {result.stop_reason.value} {result.error or ''}")
            return 1
        answered = ", ".join(dict.fromkeys(b for b in result.answered_by if b)) or "language backend"
        say("goal", f"round {result.rounds}: accepted {result.goal_text}  (answered by: {answered}; syntax, "
                    f"types and Prolog semantics ok)")

        plan = plan_for_goal(scene, result.dnf)
        if not plan.solved:
            say("plan", f"no plan: {plan.status} {plan.message}")
            return 1
        t = plan.timings
        say("plan", f"Fast Downward ({'optimal' if plan.optimal else 'not proven optimal'}): {len(plan.plan)} steps, cost "
                    f"{plan.cost:g}; translate {t.translate_s:.2f} s, search {t.search_s:.3f} s, "
                    f"{plan.objects_used}/{plan.objects_total} objects after pruning; validated")
        for i, step in enumerate(plan.plan, 1):
            say.more(f"{i}. {step}")

        ok, message = _execute(plan, result.goal_text, namespace, say)
        say("result", ("SUCCESS: " if ok else "FAILED: ") + message)
        say.more(f"language backend ({answered}): {result.rounds} call(s), {result.prompt_tokens} prompt + "
                 f"{result.completion_tokens} completion tokens")
        return 0 if ok else 1
    finally:
        backend.close()
        for proc in reversed(processes):
            proc.stop()


def _execute(plan, goal_text: str, namespace: str, say: Transcript) -> tuple[bool, str]:
    """Send the plan to the executor node (ExecutePlan action) and print its feedback live."""
    import rclpy
    from rclpy.action import ActionClient
    from rclpy.context import Context
    from rclpy.executors import SingleThreadedExecutor

    from affplan_ros.action import ExecutePlan
    from affplan_ros.nodes.base import wait_for_action
    from affplan_ros.nodes.convert import plan_to_msg

    context = Context()
    rclpy.init(context=context)
    node = rclpy.create_node("affplan_demo", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    try:
        client = ActionClient(node, ExecutePlan, f"{namespace}/execute_plan")
        if not wait_for_action(node, client, f"{namespace}/execute_plan", 20.0):
            return False, "the executor node did not answer"
        total = len(plan.plan)

        def on_feedback(msg) -> None:
            fb = msg.feedback
            if fb.status != "running":
                say("exec", f"step {fb.current_step + 1}/{total} {fb.status}: {fb.message}")

        goal = ExecutePlan.Goal(plan=plan_to_msg(plan.plan, goal=goal_text, cost=plan.cost, planner="fast-downward"))
        send = client.send_goal_async(goal, feedback_callback=on_feedback)
        deadline = time.monotonic() + 300.0
        while not send.done() and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.1)
        if not send.done() or not send.result().accepted:
            return False, "the executor refused the plan"
        result = send.result().get_result_async()
        while not result.done() and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.1)
        if not result.done():
            return False, "the plan did not finish within 300 s"
        res = result.result().result
        return res.success, res.message
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=context)
