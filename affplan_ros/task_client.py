"""``affplan ask`` and ``affplan memory``: talk to a running suite over the ROS graph.

``ask`` sends the task through the ExecuteTask action and prints every round, goal, plan and
step as the feedback comes, then the result. While the task runs it also serves ``ask_human``
(AskHuman): when the plan needs the person, or an alternative needs their consent, the question
appears here and the answer typed (or ``--yes``) goes back. Ctrl-C cancels the task.
"""
from __future__ import annotations

import argparse
import os
import queue
import sys
import threading
import time
from dataclasses import dataclass
from typing import Callable, Optional


class Transcript:
    """Timestamped, tagged lines: ``[  1.2s] plan   ...``."""

    def __init__(self, out=None) -> None:
        self.t0 = time.monotonic()
        self.out = out or sys.stdout

    def __call__(self, tag: str, text: str) -> None:
        lines = str(text).splitlines() or [""]
        print(f"[{time.monotonic() - self.t0:5.1f}s] {tag:<7} {lines[0]}", file=self.out, flush=True)
        for line in lines[1:]:
            self.more(line)

    def more(self, text: str) -> None:
        print(f"{'':16}{text}", file=self.out, flush=True)


def feedback_tag(message: str) -> str:
    for prefix, tag in (("round", "round"), ("goal rejected", "goal"), ("goal", "plan"), ("step", "step"),
                        ("asking the person", "person"), ("the person", "person")):
        if message.startswith(prefix):
            return tag
    return "result" if message else ""


@dataclass
class TaskOutcome:
    status: int            # action_msgs GoalStatus
    result: object         # ExecuteTask.Result
    canceled_by_user: bool = False


class Person:
    """Answers AskHuman: automatically (``answer``) or by reading the terminal."""

    def __init__(self, say: Transcript, answer: Optional[str] = None):
        self.say, self.answer = say, answer
        self._lines: "queue.Queue[str]" = queue.Queue()
        if answer is None:
            threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in sys.stdin:
            self._lines.put(line.strip())

    def __call__(self, request, response):
        options = f" [{'/'.join(request.options)}]" if request.options else ""
        self.say("person", f"QUESTION: {request.question}{options}")
        if self.answer is not None:
            response.answered, response.answer = True, self.answer
            self.say("person", f"answered {self.answer!r} (automatic answer)")
            return response
        try:
            response.answer = self._lines.get(timeout=request.timeout_s or 120.0)
            response.answered = True
        except queue.Empty:
            response.answered = False
            self.say("person", "no answer in time")
        return response


class SuiteClient:
    """A node of its own (own context, executor thread) that talks to the suite."""

    def __init__(self, namespace: str = "/affplan", name: str = "affplan_cli"):
        import rclpy
        from rclpy.context import Context
        from rclpy.executors import MultiThreadedExecutor

        from affplan_ros.env import dds_defaults

        # Imported here, not in the spin thread: two threads importing the same modules at once
        # can meet Python's import deadlock detection (_DeadlockError), and the spin would end.
        from affplan_ros.nodes.base import spin

        dds_defaults()
        self.namespace = "/" + namespace.strip("/")
        self.context = Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node(f"{name}_{os.getpid()}", context=self.context)
        self.executor = MultiThreadedExecutor(num_threads=4, context=self.context)
        self.executor.add_node(self.node)
        self._clients: dict = {}
        self._ready: set = set()
        self._spin = threading.Thread(target=self._spin_forever, args=(spin,), daemon=True)
        self._spin.start()

    def _spin_forever(self, spin) -> None:
        from rclpy.executors import ExternalShutdownException  # loaded already, by __init__

        try:
            spin(self.executor)
        except ExternalShutdownException:
            pass
        except Exception as exc:  # noqa: BLE001 - said: a client that stops spinning hears nothing more
            if self.context.ok():
                print(f"affplan: the ROS client stopped: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)

    def name(self, relative: str) -> str:
        return f"{self.namespace}/{relative}"

    def close(self) -> None:
        import rclpy

        # Stop spinning and wait for the spin thread before anything it uses is destroyed.
        self.executor.shutdown(timeout_sec=5.0)
        self._spin.join(5.0)
        self.node.destroy_node()
        if self.context.ok():
            rclpy.shutdown(context=self.context)

    def __enter__(self) -> "SuiteClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _client(self, kind: str, iface, relative: str, wait_s: float):
        """One client per service/action for the life of this node, or None if no server answers.

        Reused because a request is volatile: a response sent before the server has discovered
        a brand-new client is lost. A new client therefore waits a moment after it sees the
        server, so that the server sees it too."""
        from affplan_ros.nodes.base import ActionClient, wait_for_action

        key = (kind, relative)
        client = self._clients.get(key)
        if client is None:
            name = self.name(relative)
            client = ActionClient(self.node, iface, name) if kind == "action" else self.node.create_client(iface, name)
            self._clients[key] = client
        if key not in self._ready:
            found = (wait_for_action(self.node, client, self.name(relative), wait_s) if kind == "action"
                     else client.wait_for_service(timeout_sec=wait_s))
            if not found:
                return None
            time.sleep(0.3)
            self._ready.add(key)
        return client

    # How long a new command-line client waits to discover a server. A fresh DDS participant on a
    # loaded 2-core computer (a suite just started, its nodes still loading) found the memory
    # node's service only after more than 5 s once; found sooner, nothing waits.
    DISCOVERY_S = 15.0

    # Requests that only read, so they may go out again: a fresh client's first request can reach
    # a server that has not discovered the client yet, and its response is then lost (seen once
    # in CI: the perception node's get_parameters unanswered for 10 s on a loaded machine).
    READ_ONLY = frozenset({"GetParameters", "ListParameters", "DescribeParameters", "GetMemory"})

    def call(self, srv_type, relative: str, request, timeout: float = 10.0):
        """(response, "") or (None, why)."""
        from affplan_ros.nodes.base import call_service

        client = self._client("service", srv_type, relative, max(timeout, self.DISCOVERY_S))
        if client is None:
            return None, f"no service answers at {self.name(relative)}"
        resend = 2.0 if srv_type.__name__ in self.READ_ONLY else None
        return call_service(client, request, timeout, wait_s=max(timeout, self.DISCOVERY_S), node=self.node,
                            resend_silent_s=resend)

    def run_task(self, task: str, say: Transcript, *, person: Optional[Person] = None, plan_only: bool = False,
                 max_rounds: int = 0, timeout: float = 600.0, wait_s: float = DISCOVERY_S,
                 interrupted: Callable[[], bool] = lambda: False) -> Optional[TaskOutcome]:
        """Send ``task`` and print its progress; None (after saying why) when no suite answers."""
        from affplan_ros.action import ExecuteTask
        from affplan_ros.nodes.base import FutureWait, ServerWatch, send_goal
        from affplan_ros.srv import AskHuman

        name = self.name("execute_task")
        client = self._client("action", ExecuteTask, "execute_task", wait_s)
        if client is None:
            say("error", f"no suite answers at {name} (ROS_DOMAIN_ID={os.environ.get('ROS_DOMAIN_ID', '0')}): "
                         "start one with `affplan up`, or check --namespace and ROS_DOMAIN_ID")
            return None
        service = self.node.create_service(AskHuman, self.name("ask_human"), person) if person else None
        last = {"message": None}

        def on_feedback(msg) -> None:
            fb = msg.feedback
            if fb.message and fb.message != last["message"]:
                last["message"] = fb.message
                say(feedback_tag(fb.message) or "info", fb.message)

        try:
            say("task", repr(task))
            goal = ExecuteTask.Goal(task=task, plan_only=plan_only, max_rounds=max_rounds)
            handle, _ = send_goal(client, goal, feedback_callback=on_feedback, timeout=15.0)
            if handle is None:
                say("error", f"no answer from {name} within 15 s")
                return None
            if not handle.accepted:
                say("error", "the suite refused the task: it is busy with another one")
                return None
            finished = FutureWait(handle.get_result_async())
            suite = ServerWatch(self.node, name)
            outcome = finished.until(time.monotonic() + timeout, lambda: interrupted() or suite.gone())
            if outcome == "stopped" and not interrupted():
                from action_msgs.msg import GoalStatus

                why = (f"the suite's task server at {name} stopped during the task (its node exited or was "
                       "restarted): how far the task got is unknown; `affplan memory` shows what the robot knows")
                say("error", why)
                return TaskOutcome(GoalStatus.STATUS_ABORTED,
                                   ExecuteTask.Result(stop_reason=ExecuteTask.Result.STOP_ERROR, message=why))
            by_user = outcome == "stopped"
            if outcome != "done":
                say("cancel", "canceling the task ..." if by_user else f"no result within {timeout:g} s; canceling")
                FutureWait(handle.cancel_goal_async()).until(time.monotonic() + 5.0)
                if finished.until(time.monotonic() + 30.0) != "done":
                    say("error", "the suite did not confirm the cancel within 30 s")
                    return None
            got = finished.future.result()
            return TaskOutcome(got.status, got.result, by_user)
        finally:
            if service is not None:
                self.node.destroy_service(service)


def print_result(say: Transcript, outcome: TaskOutcome) -> None:
    from affplan_ros.nodes.convert import step_text

    res = outcome.result
    answered = f" (answered by: {', '.join(res.answered_by)})" if res.answered_by else ""
    if res.answer:  # a question: the reply is what the person wants to read
        say("answer", res.answer)
        say.more(f"{res.rounds} round(s), {res.llm_calls} language backend call(s), {res.seconds:.1f} s{answered}")
        return
    say("result", f"{'SUCCESS' if res.success else 'FAILED'} ({res.stop_reason}): {res.message}{answered}")
    if res.final_plan.steps:
        say.more("final plan: " + "; ".join(step_text(s) for s in res.final_plan.steps))
    say.more(f"{res.rounds} round(s), {res.llm_calls} language backend call(s), {res.prompt_tokens} prompt + "
             f"{res.completion_tokens} completion tokens, {res.seconds:.1f} s")


def run_ask(args: argparse.Namespace) -> int:
    import signal

    say = Transcript()
    stop = threading.Event()
    # Ctrl-C cancels the task (and waits for the suite to confirm) instead of leaving it running.
    previous = signal.signal(signal.SIGINT, lambda *_: stop.set())
    try:
        with SuiteClient(args.namespace, "affplan_ask") as client:
            person = Person(say, "yes" if args.yes else "no" if args.no else None)
            outcome = client.run_task(args.task, say, person=person, plan_only=args.plan_only, timeout=args.timeout,
                                      interrupted=stop.is_set)
            if outcome is None:
                return 2
            print_result(say, outcome)
            return 130 if outcome.canceled_by_user else 0 if outcome.result.success else 1
    finally:
        signal.signal(signal.SIGINT, previous)


def run_memory(args: argparse.Namespace) -> int:
    import json

    from affplan_ros.core.model.memory import Memory
    from affplan_ros.srv import GetMemory, ResetMemory

    with SuiteClient(args.namespace, "affplan_memory") as client:
        if args.reset:
            got, error = client.call(ResetMemory, "reset_memory", ResetMemory.Request())
            if got is None:
                print(f"affplan memory: {error}: is the suite running (`affplan up`)?", file=sys.stderr)
                return 2
            print(got.message)
            if not args.json:
                return 0 if got.success else 1
        got, error = client.call(GetMemory, "get_memory", GetMemory.Request())
        if got is None:
            print(f"affplan memory: {error}: is the suite running (`affplan up`)?", file=sys.stderr)
            return 2
        if args.json:
            print(json.dumps(json.loads(got.json), indent=2))
        else:
            memory = Memory.from_dict(json.loads(got.json))
            print(memory.render(affordances=True))
            if memory.instructions:
                print("Requests: " + "; ".join(repr(t) for t in memory.instructions))
        return 0
