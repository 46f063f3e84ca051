"""What every affplan_ros node shares: QoS profiles, parameter declaration, the run loop."""
from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any, Callable, NoReturn, Optional, Sequence

import rclpy
import rclpy.action
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.node import Node
from rclpy.qos import (
    DurabilityPolicy,
    HistoryPolicy,
    QoSProfile,
    ReliabilityPolicy,
    qos_profile_sensor_data,
)

from affplan_ros.env import dds_defaults
from affplan_ros.launcher import READY_LINE
from affplan_ros.nodes.params import Param

# How long an action server keeps a finished goal's result, in seconds of the node's clock.
# rclpy's default (10 s) runs on that clock: in a simulation faster than real time it ran out
# between a goal's end and rclpy storing its result, and the server's node died on a KeyError
# (ros2/rclpy#1236). rclcpp keeps results 15 minutes.
RESULT_KEEP_S = 900
# State topics (memory snapshot, scene objects): late joiners get the last value.
LATCHED_QOS = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)
# Camera images and detections: newest wins, losing one is fine.
SENSOR_QOS = qos_profile_sensor_data
# The same, resent when lost: what the simulated camera publishes (any subscriber takes it; one
# that asks for reliable gets every frame, which a 2 MB frame over UDP often is not otherwise).
RELIABLE_SENSOR_QOS = QoSProfile(depth=qos_profile_sensor_data.depth, history=HistoryPolicy.KEEP_LAST,
                                 reliability=ReliabilityPolicy.RELIABLE)


def spin(executor) -> None:
    """``executor.spin()`` until shutdown, surviving an entity destroyed by another thread while
    the executor builds its wait set. rclpy (kilted) then raises InvalidHandle out of spin
    (ros2/rclpy#1284, #1206; fixed upstream by ros2/rclpy#1629): the subscription's QoS event
    handler was torn down between being listed and being waited on. By then the node has
    dropped it, so the next wait leaves it out. Unhandled, the thread that spun a client died
    quietly and every later call of that client went unanswered (a test module's resets)."""
    from collections import deque

    from rclpy.exceptions import InvalidHandle

    recent: deque = deque(maxlen=50)   # a handle that stays broken is raised, not spun on for ever
    while True:
        try:
            executor.spin()
            return
        except InvalidHandle:
            recent.append(time.monotonic())
            if len(recent) == recent.maxlen and recent[-1] - recent[0] < 1.0:
                raise


class ActionClient(rclpy.action.ActionClient):
    """rclpy's ActionClient, safe to make while an executor spins its node in another thread.
    rclpy (kilted, action/client.py) adds the client to the node before it makes its lock and
    logger; an executor that takes it in between raises AttributeError ('_lock') and its thread
    ends, and the client making it hears nothing more (seen: a bench's command-line client whose
    restarted suite got no task through). Both are made first here."""

    def __init__(self, node: Node, *args, **kwargs):
        self._lock = threading.Lock()
        self._logger = node.get_logger().get_child("action_client")
        super().__init__(node, *args, **kwargs)


def watch_parent(poll_s: float = 0.5, grace_s: float = 5.0) -> None:
    """Stop this node when the process that started it is gone (even SIGKILLed, so it could not
    stop us): the launcher names its pid in AFFPLAN_PARENT_PID. A daemon thread polls
    ``os.getppid()`` (not PR_SET_PDEATHSIG: that fires when the forking *thread* ends) and sends
    us SIGINT, the parent's own way of stopping a node; ``grace_s`` later it ends the process."""
    import signal

    from affplan_ros.launcher import PARENT_PID_ENV

    value = os.environ.pop(PARENT_PID_ENV, "")  # not for processes this node starts
    if not value.isdigit():
        return
    parent = int(value)
    if os.getppid() != parent:
        try:
            os.kill(parent, 0)
            return  # alive but not our parent: a stale value, not ours to watch
        except ProcessLookupError:
            pass    # it died while we started
        except PermissionError:
            return

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_s)
        try:
            print(f"parent process {parent} is gone: shutting down", file=sys.stderr, flush=True)
        except (OSError, ValueError):
            pass  # its pipe is closed with it
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(grace_s)
        os._exit(1)  # a callback or thread that does not end must not keep an orphan running

    threading.Thread(target=watch, name="parent-watchdog", daemon=True).start()


def run_node(factory: Callable[[], Node] | Sequence[Callable[[], Node]], args: Sequence[str] | None = None,
             threads: int = 4) -> NoReturn:
    """Create the node(s), spin them on one multi-threaded executor, shut down cleanly on
    Ctrl-C/SIGTERM, and end the process with the node's exit code. Several factories compose
    nodes into one process (``nodes/all.py``). The process's entry point: it does not return.

    Prints ``READY`` on stdout once every node is constructed, so a parent (``affplan up``,
    tests) knows when it can talk to them. Started by the launcher, the node also stops when
    that parent dies (:func:`watch_parent`).
    """
    # The nodes are shut down and every state file was written (and synced) when it changed.
    # What is left is the interpreter's own teardown, where native libraries loaded in worker
    # threads (SWI-Prolog through pyswip) now and then crash the process (SIGSEGV, seen when a
    # suite stopped); the exit code must be the node's, not theirs.
    _exit_now(_run_nodes(factory, args, threads))


def _exit_now(code: int) -> NoReturn:
    """End the process with ``code`` after flushing what it printed, without the interpreter's
    teardown."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def _run_nodes(factory, args, threads: int) -> int:
    import faulthandler
    import signal

    faulthandler.enable()  # a crash in native code (DDS, Prolog, torch) leaves its Python stack in the log
    # A node that does not stop in time is sent SIGUSR1 before it is killed (launcher.stop_all):
    # every thread's stack goes to the log, so the hang can be read, not guessed.
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    factories = list(factory) if isinstance(factory, (list, tuple)) else [factory]
    dds_defaults()  # started by ros2 launch too, not only by our launcher
    rclpy.init(args=list(args) if args is not None else sys.argv)
    watch_parent()  # after init: rclpy's SIGINT handler turns its signal into a clean shutdown
    nodes: list[Node] = []
    executor = None
    try:
        try:
            for make in factories:
                nodes.append(make())
        except ValueError as exc:  # invalid parameters: a clear message, not a traceback
            print(f"error: {exc}", file=sys.stderr)
            # The process ends here, before any teardown: rclpy's shutdown destroys the half-made
            # node too, and destroying its DDS entities while Fast DDS's threads still serve them
            # crashed (SIGSEGV) or hung holding the GIL (so no watchdog thread could run), under
            # load. Nothing was started that needs stopping; the OS frees the rest.
            _exit_now(2)
        executor = MultiThreadedExecutor(num_threads=threads)  # shut down in the finally below
        for node in nodes:
            node.add_on_set_parameters_callback(_refuse_nameless)
            executor.add_node(node)
        # One write: the ROS logger writes to the same pipe from its own threads, and a READY
        # glued to a log line ("READY[ERROR] ...") is not seen by the parent.
        sys.stdout.write(READY_LINE + "\n")
        sys.stdout.flush()
        try:
            spin(executor)
        except (KeyboardInterrupt, ExternalShutdownException):
            pass
        except Exception as exc:  # noqa: BLE001 - see below
            # A callback that finishes while the stop signal shuts the context down (a canceled
            # goal ending) can make spin raise on a handle that is gone: the node was stopping
            # anyway, so that is said, not turned into a failed exit.
            if rclpy.ok():
                raise
            _teardown_note("spin", exc)
        return 0
    finally:
        _ignore_stop_signals()
        _teardown(executor, nodes)


# A stopping node ends within this long even when a step of its teardown hangs (a callback that
# never returns keeps executor.shutdown waiting for its thread for ever): the stuck step and
# every thread's stack go to the log, and the process ends. Below the launcher's 10 s before
# SIGKILL. Seen once in CI (November 2026, robot_skills, killed after 10 s), cause not known.
_TEARDOWN_S = 8.0
_teardown_at = "start"   # the teardown step running now (one teardown per process)


def _teardown(executor, nodes: list[Node]) -> None:
    import faulthandler

    def run() -> None:
        if executor is not None:
            _step("executor shutdown", executor.shutdown)
        _step("wait for a warm-up", lambda: WarmUp.join_all(_WARM_UP_JOIN_S))
        from rclpy.action import ActionServer

        for node in nodes:
            # destroy_node leaves action servers alone: destroyed here, so that they leave the
            # graph now and nobody sends goals to a node that is gone. Action clients are not:
            # nobody sends them anything, the process ends next, and rclpy's ActionClient.destroy
            # crashed the executor node (SIGSEGV) once after a canceled goal, under load.
            for waitable in list(node.waitables):
                if isinstance(waitable, ActionServer):
                    _step("destroy an action server", waitable.destroy)
            _step("destroy_node", node.destroy_node)
        # rclpy's signal handler may have shut the context down meanwhile
        _step("rclpy shutdown", rclpy.try_shutdown)

    done = threading.Thread(target=run, name="teardown", daemon=True)
    done.start()
    done.join(_TEARDOWN_S)
    if done.is_alive():
        _teardown_note(_teardown_at, TimeoutError(f"still running after {_TEARDOWN_S:g} s: the node ends "
                                                  "without waiting for it; every thread's stack follows"))
        try:
            faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
        except (OSError, ValueError):
            pass


# How long a stopping node waits for a warm-up still loading (it logs when it ends, and a log
# call after rclpy finalized its logging can crash the process).
_WARM_UP_JOIN_S = 5.0


def _teardown_note(step: str, exc: BaseException) -> None:
    try:
        print(f"while stopping ({step}): {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass  # the parent closed our pipe


def _step(what: str, action: Callable[[], Any]) -> None:
    """One step of the teardown: a step that fails is said, and the next ones still run."""
    global _teardown_at
    _teardown_at = what
    try:
        action()
    except Exception as exc:  # noqa: BLE001 - teardown goes on
        _teardown_note(what, exc)


def _ignore_stop_signals() -> None:
    """A node that is stopping ignores a second SIGINT (``affplan up`` forwards every signal it
    gets; a KeyboardInterrupt in the middle of the teardown ended a node with -2). SIGTERM keeps
    its handler, so a supervisor can still end a teardown that hangs."""
    import signal

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _refuse_nameless(params):
    """rclpy would add a parameter with an empty name (it counts as declared): refused."""
    from rcl_interfaces.msg import SetParametersResult

    if any(not p.name for p in params):
        return SetParametersResult(successful=False, reason="a parameter needs a name")
    return SetParametersResult(successful=True)


def absolute_name(node: Node, name: str) -> str:
    """A relative topic/service/action name as the graph sees it (``skills/grasp`` -> ``/affplan/skills/grasp``)."""
    ns = node.get_namespace().rstrip("/")
    return name if name.startswith("/") else f"{ns}/{name}"


class FutureWait:
    """Wait for an rclpy future from a worker thread (never spinning), polling a stop condition.

    The future's node must be spun by another thread: clients live in a callback group of their
    own on a MultiThreadedExecutor, so their responses arrive while a callback waits here."""

    def __init__(self, future):
        self.future = future
        self._done = threading.Event()
        future.add_done_callback(lambda _f: self._done.set())

    def until(self, deadline: float, stop: Callable[[], bool] = lambda: False) -> str:
        """"done", "stopped" (``stop()`` said so) or "timeout"."""
        while not self._done.wait(0.05):
            if stop():
                # What came while stop() was asked wins: a server that answered and then went.
                return "done" if self._done.is_set() else "stopped"
            if time.monotonic() > deadline:
                return "timeout"
        return "done"


# When this process first saw each server (request reader) of a service, by service name.
_SERVERS_SEEN: dict[str, dict[bytes, float]] = {}
# When each client (by id; a client lives as long as its node) first sent a request.
_CLIENTS_FIRST_USED: dict[int, float] = {}
YOUNG_SERVER_S = 10.0   # a server seen (or a client used) for less long may not be discovered yet
MAX_SENDS = 3           # a request goes out at most this often


def _servers(node: Optional[Node], name: str, unknown: Optional[frozenset] = frozenset()) -> Optional[set]:
    """The request readers of service ``name`` in the graph (a killed server stays listed until
    its DDS lease runs out; a restarted one appears beside it); ``unknown`` where the graph
    cannot be asked."""
    if node is None:
        return set(unknown) if unknown is not None else None
    try:
        infos = node.get_subscriptions_info_by_topic(f"rq{name}Request", no_mangle=True)
    except Exception:  # noqa: BLE001 - another RMW naming scheme: no restart detection
        return set(unknown) if unknown is not None else None
    return {bytes(i.endpoint_gid) for i in infos}


class ServerWatch:
    """Tells whether the action server a goal went to has died (SIGKILL, a crash): its endpoints
    leave the graph when DDS notices (the participant's lease, seconds), and a restarted server
    has new ones, so a result that will never come is not waited for until the timeout.

    Which endpoints are the goal's server's is learnt over its first ``LEARN_S``: a server that
    has just started may be discovered after the goal went out, beside a killed one's endpoints
    that are still listed (the step then ended as interrupted when those left). And the graph
    answers without a live server's endpoints now and then, so it must miss them
    ``MISSED_LOOKS`` times in a row."""

    MISSED_LOOKS = 2
    LEARN_S = 5.0

    def __init__(self, node: Node, action_name: str, every_s: float = 1.0):
        self._node, self._name = node, f"{action_name.rstrip('/')}/_action/get_result"
        self._endpoints = _servers(node, self._name)   # the goal's server's, as learnt
        self._learn_until = time.monotonic() + self.LEARN_S
        self._every, self._next, self._missed = every_s, time.monotonic() + every_s, 0

    def gone(self) -> bool:
        """Polled often: the graph is asked at most every ``every_s``."""
        if self._missed < self.MISSED_LOOKS and self._endpoints and time.monotonic() >= self._next:
            self._next = time.monotonic() + self._every
            now = _servers(self._node, self._name, unknown=None)
            # A graph that could not be asked this time says nothing of the server.
            if now is not None:
                if time.monotonic() < self._learn_until:
                    self._endpoints |= now
                self._missed = 0 if self._endpoints & now else self._missed + 1
        return self._missed >= self.MISSED_LOOKS


def call_service(client, request, timeout: float, *, stop: Callable[[], bool] = lambda: False,
                 wait_s: float = 2.0, node: Optional[Node] = None,
                 resend_silent_s: Optional[float] = None) -> tuple[Optional[Any], str]:
    """Call a service from a callback thread: (response, "") or (None, why not).

    With ``node``, a restarted server is handled. A request that reaches a server before that
    server has discovered our client is lost (service requests are volatile), and a dead server
    still looks available until DDS notices. So a server that just appeared gets a moment for
    discovery first, and the request goes out again (at most MAX_SENDS times in all) to a server
    that appears while we wait; the first answer wins. ``resend_silent_s``: for a quick request
    that may be repeated (reading or pushing the memory), also send again after that long
    without an answer while the server or our client is young (seen, or first used, less than
    YOUNG_SERVER_S ago): either side may not have discovered the other yet, and a server that
    has not seen our client loses its response."""
    if not client.wait_for_service(timeout_sec=wait_s):
        return None, f"no service answers at {client.srv_name}"
    name = node.resolve_service_name(client.srv_name) if node is not None else client.srv_name
    seen = _SERVERS_SEEN.setdefault(name, {})
    first_call, now = not seen, time.monotonic()
    client_since = _CLIENTS_FIRST_USED.setdefault(id(client), now)
    servers = _servers(node, name)
    for gid in servers:  # on our first call we cannot tell: count them as old
        seen.setdefault(gid, now - YOUNG_SERVER_S if first_call else now)
    if any(seen[g] == now for g in servers):
        time.sleep(1.0)
    answered = threading.Event()
    futures = []

    def send() -> None:
        future = client.call_async(request)
        future.add_done_callback(lambda _f: answered.set())
        futures.append(future)

    deadline = time.monotonic() + timeout
    send()
    last_send = time.monotonic()
    outcome = "timeout"
    while True:
        if answered.wait(min(0.5, max(0.0, deadline - time.monotonic()))):
            return next(f.result() for f in futures if f.done()), ""
        if stop():
            outcome = "stopped"
            break
        if time.monotonic() > deadline:
            break
        current, t = _servers(node, name), time.monotonic()
        for gid in current:
            seen.setdefault(gid, t)
        young = t - client_since < YOUNG_SERVER_S or any(t - seen[g] < YOUNG_SERVER_S for g in current)
        silent = resend_silent_s is not None and young and t - last_send > resend_silent_s
        if len(futures) < MAX_SENDS and (current - servers or silent):
            if current - servers:
                time.sleep(0.5)  # the new one: a moment to discover us
            servers = current
            send()
            last_send = time.monotonic()
    return None, ("canceled while waiting for " if outcome == "stopped" else
                  f"no answer within {timeout:g} s from ") + client.srv_name


# A goal unanswered this long goes out again, at most MAX_GOAL_SENDS times in all. Longer than a
# server's hold on a goal whose acceptance could not be delivered (nodes/goal_gate.py PENDING_S).
RESEND_GOAL_S = 7.0
MAX_GOAL_SENDS = 3


def send_goal(client, goal, *, feedback_callback=None, timeout: float = 30.0, stop: Callable[[], bool] = lambda: False,
              resend_after_s: float = RESEND_GOAL_S) -> tuple[Optional[Any], str]:
    """(goal handle, "done"), or (None, "stopped" | "timeout"). A goal that reaches a server
    before the server has discovered us (just restarted), or whose acceptance the server could
    not send back to us yet, is lost without a word: while no copy is accepted, one more goes out
    after each ``resend_after_s``. The servers here accept one goal at a time from its acceptance
    on, so a copy that arrives beside the original is rejected; the first accepted handle wins
    (else the first answer, once every copy is answered)."""
    waits = [FutureWait(client.send_goal_async(goal, feedback_callback=feedback_callback))]
    start = last_send = time.monotonic()
    deadline = start + timeout
    while True:
        done = [w.future.result() for w in waits if w.future.done()]
        accepted = [h for h in done if h is not None and h.accepted]
        if accepted or (done and len(done) == len(waits)):
            winner = (accepted or done)[0]
            # A copy accepted as well (the first goal ended before its acceptance reached us, so
            # the server took the copy too) would run unobserved: canceled as soon as it is.
            for w in waits:
                w.future.add_done_callback(lambda f, winner=winner: _cancel_if_accepted(f, winner))
            return winner, "done"
        if stop():
            outcome = "stopped"
            break
        if time.monotonic() > deadline:
            outcome = "timeout"
            break
        if len(waits) < MAX_GOAL_SENDS and time.monotonic() - last_send > resend_after_s:
            waits.append(FutureWait(client.send_goal_async(goal, feedback_callback=feedback_callback)))
            last_send = time.monotonic()
        time.sleep(0.05)
    # Given up on: a goal still accepted later is canceled at once (it would run unobserved).
    for w in waits:
        w.future.add_done_callback(lambda f: _cancel_if_accepted(f, None))
    return None, outcome


def _cancel_if_accepted(future, keep) -> None:
    handle = future.result()
    if handle is not None and handle is not keep and handle.accepted:
        handle.cancel_goal_async()


def wait_for_action(node: Node, client, action_name: str, timeout: float) -> bool:
    """Wait until an action server answers AND its feedback publisher has been discovered.

    ``ActionClient.wait_for_server`` only covers the goal services; feedback is a volatile
    topic, so feedback published before discovery completes would be lost.
    """
    deadline = time.monotonic() + timeout
    if not client.wait_for_server(timeout_sec=timeout):
        return False
    topic = f"{action_name.rstrip('/')}/_action/feedback"
    while node.count_publishers(topic) == 0:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


# -- parameter groups several nodes share: a table to add to the node's own, and what builds on it --

# The robot's and the person's capabilities and costs (the planner's agents).
AGENT_PARAMS = tuple(param for cls, cost in (("robot", 1), ("human", 100)) for param in (
    Param(f"{cls}_capabilities", ["all"], f"what the {cls} can do: ['all'] or capability names"),
    Param(f"{cls}_cost", cost, f"cost of one action of the {cls} (the planner minimises the sum)", minimum=0),
))


def agent_profiles(p) -> dict:
    """The planner's agents from the AGENT_PARAMS values: ``<class>_capabilities`` (["all"] or
    capability names) and ``<class>_cost`` per action."""
    from affplan_ros.core.knowledge.capabilities import AgentProfile

    profiles = {}
    for cls in ("robot", "human"):
        caps, cost = getattr(p, f"{cls}_capabilities"), getattr(p, f"{cls}_cost")
        profiles[cls] = AgentProfile(int(cost), None if list(caps) == ["all"] else frozenset(caps))
    return profiles


def background_log(node: Node, level: str, text: str) -> None:
    """Log from a thread of our own (warm-up, detector loading) only while the node's context is
    up: a stop signal shuts the context down at once and rclpy then finalizes its logging; a log
    call after that crashed a node (SIGSEGV when `affplan up` was stopped 0.2 s after READY)."""
    if node.context.ok():
        getattr(node.get_logger(), level)(text)


class WarmUp:
    """Heavy imports and loading in a thread of their own, so a node is READY at once; requests
    wait for it (:meth:`wait`). What failed is kept and reported with every request."""

    _running: set[threading.Thread] = set()
    _lock = threading.Lock()

    def __init__(self, node: Node, work: Callable[[], None]):
        self.error = ""
        self._node, self._done = node, threading.Event()
        thread = threading.Thread(target=self._run, args=(work,), name=f"{node.get_name()}-warm-up", daemon=True)
        with WarmUp._lock:
            WarmUp._running.add(thread)
        thread.start()

    def _run(self, work: Callable[[], None]) -> None:
        try:
            work()
        except Exception as exc:  # noqa: BLE001 - reported with every request
            self.error = f"{type(exc).__name__}: {exc}"
            background_log(self._node, "error", f"{self._node.get_name()} cannot work: {self.error}")
        finally:
            self._done.set()
            with WarmUp._lock:
                WarmUp._running.discard(threading.current_thread())

    @classmethod
    def join_all(cls, timeout: float) -> None:
        """Wait (at most ``timeout`` in all) for warm-ups still running: called by a stopping node."""
        deadline = time.monotonic() + timeout
        with cls._lock:
            threads = list(cls._running)
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    def wait(self, timeout: float = 60.0) -> str:
        """Wait until the warm-up ended (at most ``timeout``); why the node cannot work yet (it
        failed, or is still starting after ``timeout``), or "" when it can."""
        if not self._done.wait(timeout):
            return f"{self._node.get_name()} is still starting after {timeout:g} s; try again shortly"
        return self.error


def load_robot_model(oam_file: str, capabilities: dict):
    """(OAM, the robot's planning model before learned knowledge) as the nodes' parameters name them."""
    from affplan_ros.core.knowledge.oam import load_oam
    from affplan_ros.core.recovery.belief import Domain

    oam = load_oam(oam_file or None)
    return oam, Domain.default(oam, capabilities)


# The robot's planning model. The executor, planning and tool-selection nodes must share it (config: ``/**``).
CAPABILITY_PARAMS = (
    Param("capabilities_file", "", "the robot's capability schemas: a capabilities file or a recovery "
          "scenario (its robot model, without the hidden preconditions); '' = the built-in set"),
)


def load_capabilities(path: str) -> dict:
    """The robot's planning model (``capabilities_file``): a capabilities file, or a recovery
    scenario whose robot lacks the scenario's hidden preconditions; "" = the built-in set."""
    from affplan_ros.sim.scenario import ScenarioError, robot_capabilities

    try:
        return robot_capabilities(os.path.expanduser(path) if path else None)
    except (OSError, ScenarioError, ValueError, KeyError) as exc:
        raise ValueError(f"capabilities_file {path!r}: {exc}") from exc


# The knowledge file of learned preconditions and properties (LASP, issue 7).
KNOWLEDGE_PARAMS = (
    Param("knowledge_file", "", "learned preconditions and properties (JSON), read at start-up and "
          "whenever it changes; written when the suite learns; '' = learn nothing, keep nothing"),
)


def watch_knowledge(node: Node, path: str):
    """The knowledge file (``knowledge_file``), watched for changes; "" = nothing learned is
    kept. A malformed file is logged and the node goes on without learned knowledge (the file
    is never overwritten)."""
    from affplan_ros.core.recovery.session import WatchedKnowledge, knowledge_path

    watched = WatchedKnowledge(knowledge_path(path))
    if watched.error:
        node.get_logger().error(f"knowledge file not used, planning without learned knowledge: {watched.error}")
    elif watched.path is not None:
        node.get_logger().info(f"knowledge file {watched.path}: {watched.store.render()}")
    return watched


# What the robot knows of its environment beyond memory (LASP: numeric conditions over static
# quantities, the values of new properties).
ENVIRONMENT_PARAMS = (
    Param("robot_lift_capacity_kg", 2.0, "the heaviest thing the robot lifts, kg: the quantity "
          "lift_capacity that learned preconditions may compare (Tiago++: 2 kg per arm)", above=0),
    Param("quantities_file", "", "static quantities per class (mass, temperature, max_temperature, ...; YAML); "
          "'' = the built-in table"),
    Param("environment_properties_file", "", "object properties the robot's knowledge base evaluates, per object "
          "or class (YAML: properties: {name: {description, objects, classes}}); LASP takes a new property's "
          "values from the most similar; '' = none (affordances, memory and the object table still count)"),
)


def environment_knowledge(p):
    """The ENVIRONMENT_PARAMS values (and a recovery scenario as ``capabilities_file``: what its
    simulated world measures and the properties it knows) -> EnvironmentKnowledge."""
    from affplan_ros.core.errors import ConfigError
    from affplan_ros.core.recovery.environment import EnvironmentKnowledge, load_declared_properties
    from affplan_ros.core.recovery.quantities import load_quantities
    from affplan_ros.sim.scenario import ScenarioError, scenario_environment

    try:
        quantities = load_quantities(os.path.expanduser(p.quantities_file) if p.quantities_file else None)
    except ConfigError as exc:
        raise ValueError(f"quantities_file: {exc}") from None
    try:
        declared = (load_declared_properties(os.path.expanduser(p.environment_properties_file))
                    if p.environment_properties_file else {})
    except ConfigError as exc:
        raise ValueError(f"environment_properties_file: {exc}") from None
    path = getattr(p, "capabilities_file", "")
    try:
        world_props, measured = scenario_environment(os.path.expanduser(path) if path else None)
        quantities = quantities.with_values(measured, "capabilities_file")
    except (OSError, ScenarioError, ConfigError) as exc:
        raise ValueError(f"capabilities_file {path!r}: {exc}") from None
    if "lift_capacity" in quantities.defs:
        quantities = quantities.with_class_value("lift_capacity", "robot", float(p.robot_lift_capacity_kg))
    return EnvironmentKnowledge(quantities, {**world_props, **declared})


# Known locations with base poses.
LOCATION_PARAMS = (
    Param("locations", [], "known locations and their base poses, each 'name x y yaw' in the map frame"),
)


def parse_locations(entries) -> dict[str, tuple[float, float, float]]:
    """``locations`` entries "name x y yaw" (map frame) -> {name: (x, y, yaw)}."""
    poses = {}
    for entry in entries:
        words = str(entry).split()
        if not words:
            continue
        try:
            if len(words) != 4:
                raise ValueError
            poses[words[0]] = (float(words[1]), float(words[2]), float(words[3]))
        except ValueError:
            raise ValueError(f"locations: {entry!r} is not 'name x y yaw' (e.g. 'table0 1.5 0.0 3.14')") from None
    return poses


# IALP in the suite (docs/recovery.md): how a checked goal becomes a plan, and whether the
# robot's grounding (which objects it can reach, grasp, see, put things on) constrains it.
MAX_STEPWISE_CANDIDATES = 20
STEPWISE_PARAMS = (
    Param("planning_mode", "planner", "how a checked goal becomes a plan: planner (Fast Downward) or stepwise "
          "(IALP: one step at a time, the best applicable one of the model's candidates by log-probability)",
          choices=("planner", "stepwise")),
    Param("stepwise_candidates", 5, f"stepwise: K candidate next actions asked of the model per step "
          f"(at most {MAX_STEPWISE_CANDIDATES})", minimum=1),
    Param("stepwise_max_steps", 30, "stepwise: bound on the steps chosen for one goal", minimum=1),
    Param("stepwise_fallback", "planner", "stepwise: when the step planner stops short of the goal (no "
          "log-probabilities, no applicable candidate, alert, a bound): planner (Fast Downward plans the same "
          "goal) or none (no plan; the reason is in the answer)", choices=("planner", "none")),
)
GROUNDING_PARAMS = (
    Param("grounding", "off", "on: ask the robot's grounding (reachable, graspable, detected, placeable) before "
          "planning; a plan never contains a step it says is infeasible. off: plan on the symbolic model alone",
          choices=("off", "on"), bool_words=("off", "on")),
    Param("grounding_service", "grounding", "the robot's grounding service (Ground: the facts that hold and those "
          "that do not; served by sim_world or a robot backend)"),
    Param("grounding_timeout_s", 10.0, "how long to wait for the robot's grounding, seconds", above=0),
)
IALP_PARAMS = STEPWISE_PARAMS + GROUNDING_PARAMS


def check_ialp_params(p) -> None:
    """The check on IALP_PARAMS a table cannot state (an upper bound)."""
    if p.stepwise_candidates > MAX_STEPWISE_CANDIDATES:
        raise ValueError(f"invalid parameters: stepwise_candidates must be <= {MAX_STEPWISE_CANDIDATES} "
                         f"(got {p.stepwise_candidates})")


# The language backend every LLM-using node shares.
LLM_PARAMS = (
    Param("llm_base_url", "", "OpenAI-compatible endpoint ('' = AFFPLAN_LLM_BASE_URL; "
          "none configured = the offline instruction interpreter)"),
    Param("llm_model", "", "model name ('' = AFFPLAN_LLM_MODEL)"),
    Param("llm_api_key_env", "", "NAME of the environment variable holding the API key "
          "('' = AFFPLAN_LLM_API_KEY_ENV or OPENAI_API_KEY; 'none' = no key); never the key itself"),
    Param("llm_timeout_s", 60.0, "time limit of one LLM request, seconds", above=0),
)


def llm_config(p):
    """The LLM_PARAMS values -> LLMConfig, or None when no endpoint is configured (then the
    offline instruction interpreter answers)."""
    from affplan_ros.llm.config import config_from_settings

    try:
        return config_from_settings(p.llm_base_url, p.llm_model, p.llm_api_key_env, p.llm_timeout_s)
    except ValueError as exc:
        raise ValueError(f"LLM settings: {exc}") from exc


def make_language_backend(conf, oam):
    """(the language backend of ``llm/backends.py``'s one factory, "") or (None, why not: the
    endpoint's API key variable is not set)."""
    from affplan_ros.llm.backends import make_backend
    from affplan_ros.llm.client import MissingAPIKeyError

    try:
        return make_backend(conf, oam=oam, offline=conf is None), ""
    except MissingAPIKeyError as exc:
        return None, str(exc)


# -- entry points that never raise into the executor -----------------------------------------------
# An exception out of a callback ends rclpy's executor and with it the node (and everything it
# knew). Each entry point validates what it receives and answers a clear error; these wrappers
# are the last line: an unexpected error is logged with its traceback and answered as a failure.

def failure_response(response, text: str):
    """``response`` marked failed with ``text`` in the fields its type has."""
    for flag in ("success", "accepted", "answered"):
        if hasattr(response, flag):
            setattr(response, flag, False)
    if hasattr(response, "message"):
        response.message = text
    return response


def _log_unexpected(node: Node, where: str, exc: BaseException) -> str:
    import traceback

    text = f"{where}: unexpected {type(exc).__name__}: {str(exc)[:300]}"
    node.get_logger().error(text + "\n" + "".join(traceback.format_exception(exc))[-2000:])
    return text


def serve(node: Node, srv_type, name: str, callback: Callable, group=None):
    """``node.create_service`` whose callback cannot raise: an unexpected error is answered
    ``success: false`` with what happened. Each request's arrival and answer are logged at debug
    level (``log_level:=debug``): a request that never arrived is told from one that hung."""
    logger = node.get_logger()

    def guarded(request, response):
        logger.debug(f"service {name}: request arrived")
        try:
            answer = callback(request, response)
            logger.debug(f"service {name}: answered")
            return answer
        except Exception as exc:  # noqa: BLE001 - the node stays up; the caller learns why
            return failure_response(srv_type.Response(), _log_unexpected(node, f"service {name}", exc))
    return node.create_service(srv_type, name, guarded, callback_group=group)


def subscribe(node: Node, msg_type, topic: str, callback: Callable, qos, group=None):
    """``node.create_subscription`` whose callback cannot raise: an unexpected error is logged."""
    def guarded(msg) -> None:
        try:
            callback(msg)
        except Exception as exc:  # noqa: BLE001 - one bad message must not end the node
            _log_unexpected(node, f"message on {topic}", exc)
    return node.create_subscription(msg_type, topic, guarded, qos, callback_group=group)


def guarded_execute(node: Node, action_type, name: str, callback: Callable) -> Callable:
    """An action's execute callback that cannot raise: an unexpected error aborts the goal with
    a result saying what happened."""
    def guarded(goal_handle):
        try:
            return callback(goal_handle)
        except Exception as exc:  # noqa: BLE001 - the goal ends with the reason; the node stays up
            text = _log_unexpected(node, f"action {name}", exc)
            try:
                if goal_handle.is_active:
                    goal_handle.abort()
            except Exception:  # noqa: BLE001 - already ended: nothing more to say
                pass
            result = failure_response(action_type.Result(), text)
            if hasattr(result, "stop_reason"):
                result.stop_reason = "error"  # ExecuteTask.Result.STOP_ERROR (the only action with one)
            return result
    return guarded
