"""The whole sim suite for end-to-end tests, with a scripted language backend. No ROS import
at module level: test modules import this at collection time, also where ROS is missing."""
from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Optional

# A small kitchen (a scenario file's content): banana and cup on the table, an empty counter,
# an apple on the stove the robot has not looked at yet.
STOVE_KITCHEN = {
    "description": "A kitchen: banana and cup on the table, an empty counter, an apple on the unexplored stove.",
    "objects": ["table:0", "counter:0", "stove:0", "cup:0", "banana:0", "apple:0", "human:0", "robot:0"],
    "relations": ["on cup:0 table:0", "on banana:0 table:0", "on apple:0 stove:0", "at robot:0 table:0",
                  "at human:0 table:0"],
    "locations": {"table0": ["table:0", "cup:0", "banana:0"], "counter0": ["counter:0"],
                  "stove0": ["stove:0", "apple:0"]},
    "explored": ["table0", "counter0"],
}


# Lines of a failed node's log in a test's failure message: a Python stack of every thread fits.
LOG_TAIL_LINES = 80


@contextmanager
def scripted_suite(tmp: Path, scenario: Path, script: dict, *, parameters: Optional[dict] = None,
                   time_scale: str = "0.25", log_level: str = "warn", physics: bool = False,
                   launch_args: Optional[dict] = None):
    """The sim suite as separate processes from launch/sim.launch.xml on ``scenario``, its
    language backend the scripted answers ``script`` (per task and kind of question) on the
    local chat-completions server. ``parameters``: values for every node (``/**``) over
    config/sim.yaml; ``physics``: the simulated robot is the MuJoCo world; ``launch_args``: more
    arguments of launch/sim.launch.xml (e.g. perception). Yields (suite, env);
    on the way out the suite stops, each node's log is kept in ``tmp``, and every node must have
    exited cleanly."""
    import yaml
    from scripted_llm import ScriptedTasks

    from affplan_ros.env import share_dir
    from affplan_ros.llm.fake_server import FakeChatServer
    from affplan_ros.suite import start_suite

    tmp.mkdir(parents=True, exist_ok=True)
    params = yaml.safe_load((share_dir() / "config" / "sim.yaml").read_text())
    # Nothing learned is kept unless a test names a knowledge file (never the user's own).
    params["/**"]["ros__parameters"].update({"knowledge_file": "", **(parameters or {})})
    for section, values in params.items():  # the test's values win over a node's own section too
        if section != "/**":
            for key in parameters or {}:
                values["ros__parameters"].pop(key, None)
    (tmp / "params.yaml").write_text(yaml.safe_dump(params))
    server = FakeChatServer(ScriptedTasks.from_mapping(script, "test script"), model="scripted").start()
    # Every answer from the script: no offline fast path in between.
    env = {"AFFPLAN_LLM_BASE_URL": server.base_url, "AFFPLAN_LLM_MODEL": "scripted", "AFFPLAN_LLM_API_KEY_ENV": "",
           "AFFPLAN_FAST_PATH": "0"}
    try:
        started = start_suite("sim", {"scenario": str(scenario), "params": str(tmp / "params.yaml"),
                                      "time_scale": time_scale, "log_level": log_level,
                                      "physics": "true" if physics else "false", **(launch_args or {})}, env=env)
    except BaseException:
        server.stop()
        raise
    try:
        yield started, env
    finally:
        codes = started.stop()   # returns once each node's last line is read
        server.stop()
        for proc in started.processes:  # kept for a failed run: what each node logged
            (tmp / f"{proc.name}.log").write_text("".join(proc.output))
    # A node that had to be killed hung, one that crashed left its stack (faulthandler): the end
    # of each failed node's log is in the message, as CI keeps nothing else of a run.
    failed = [proc for proc in started.processes if codes.get(proc.name) != 0]
    assert not failed, (codes, f"node logs in {tmp}",
                        *(f"--- {proc.name} (exit {codes.get(proc.name)}), its log's end:\n"
                          + "".join(proc.output[-LOG_TAIL_LINES:]) for proc in failed))


def reset_suite(client, suite) -> None:
    """The scenario's world and memory again, through the suite's own services (the suite keeps
    running). A node that does not answer is asked for every thread's stack (SIGUSR1), and its
    log's end is the failure's message: a hang is shown, not guessed."""
    from std_srvs.srv import Trigger

    from affplan_ros.srv import ResetMemory

    for srv, service, node in ((Trigger, "reset_world", "sim_world"), (ResetMemory, "reset_memory", "memory")):
        got, error = client.call(srv, service, srv.Request())
        if got is None:
            proc = next(p for p in suite.processes if p.name == node)
            proc.dump_stacks()
            error += f"\n--- the last lines of {node}'s log ---\n" + "".join(proc.output[-120:])
        assert got is not None and got.success, error


def served_client(namespace: str, name: str, timeout: float = 60.0):
    """A SuiteClient that has discovered every service and action the sim suite serves (right
    after start-up, on a loaded machine, discovery can take longer than a client's first wait)."""
    from std_srvs.srv import Trigger

    from affplan_ros.action import ExecutePlan, ExecuteTask
    from affplan_ros.srv import GetMemory, Observe, PlanTask, ResetMemory, UpdateMemory
    from affplan_ros.task_client import SuiteClient

    client = SuiteClient(namespace, name)
    try:
        for kind, iface, what in (("service", GetMemory, "get_memory"), ("service", UpdateMemory, "update_memory"),
                                  ("service", ResetMemory, "reset_memory"), ("service", Trigger, "reset_world"),
                                  ("service", Observe, "observe"), ("service", PlanTask, "plan_task"),
                                  ("action", ExecuteTask, "execute_task"), ("action", ExecutePlan, "execute_plan")):
            assert client._client(kind, iface, what, timeout) is not None, f"{what} is not served"
    except BaseException:
        client.close()
        raise
    return client


def run_task(client, task, person=None, cancel_when=None, timeout=120.0, plan_only=False):
    """(outcome, feedback messages) of ``task`` sent through the ExecuteTask action."""
    seen: list[str] = []
    say = lambda _tag, text: seen.append(text)  # noqa: E731
    stop = (lambda: any(cancel_when(m) for m in seen)) if cancel_when else (lambda: False)
    outcome = client.run_task(task, say, person=person, timeout=timeout, interrupted=stop, plan_only=plan_only)
    assert outcome is not None, seen
    return outcome, seen
