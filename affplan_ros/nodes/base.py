"""What every affplan_ros node shares: QoS profiles, parameter declaration, the run loop."""
from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any, Callable, Optional, Sequence

import rclpy
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data

# State topics (memory snapshot, scene objects): late joiners get the last value.
LATCHED_QOS = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)
# Camera images and detections: newest wins, losing one is fine.
SENSOR_QOS = qos_profile_sensor_data

from affplan_ros.launcher import READY_LINE


def declare(node: Node, name: str, default: Any, description: str, *, read_only: bool = False) -> Any:
    """Declare a parameter with a description (shown by `ros2 param describe`) and return its value.

    An empty list default declares a string array (a list of numbers must not be empty)."""
    from rclpy.parameter import Parameter

    descriptor = ParameterDescriptor(description=description, read_only=read_only)
    if isinstance(default, list) and not default:
        # rclpy would type an empty list as a byte array: declare the type, unset means empty.
        value = node.declare_parameter(name, Parameter.Type.STRING_ARRAY, descriptor).value
        return list(value or [])
    if isinstance(default, float):
        # `-p time_scale:=0` arrives as an integer: accept any number where a float is meant.
        descriptor.dynamic_typing = True
        value = node.declare_parameter(name, default, descriptor).value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"parameter {name} must be a number, not {value!r}")
        return float(value)
    return node.declare_parameter(name, default, descriptor).value


def require(condition: bool, message: str) -> None:
    """Validate a parameter at start-up with a message that names it."""
    if not condition:
        raise ValueError(message)


def run_node(factory: Callable[[], Node] | Sequence[Callable[[], Node]], args: Sequence[str] | None = None,
             threads: int = 4) -> int:
    """Create the node(s), spin them on one multi-threaded executor, shut down cleanly on
    Ctrl-C/SIGTERM. Several factories compose nodes into one process (``nodes/all.py``).

    Prints ``READY`` on stdout once every node is constructed, so a parent (``affplan up``,
    tests) knows when it can talk to them.
    """
    factories = list(factory) if isinstance(factory, (list, tuple)) else [factory]
    rclpy.init(args=list(args) if args is not None else sys.argv)
    nodes: list[Node] = []
    try:
        try:
            for make in factories:
                nodes.append(make())
        except ValueError as exc:  # invalid parameters: a clear message, not a traceback
            print(f"error: {exc}", file=sys.stderr)
            return 2
        executor = MultiThreadedExecutor(num_threads=threads)
        for node in nodes:
            executor.add_node(node)
        # One write: the ROS logger writes to the same pipe from its own threads, and a READY
        # glued to a log line ("READY[ERROR] ...") is not seen by the parent.
        sys.stdout.write(READY_LINE + "\n")
        sys.stdout.flush()
        try:
            executor.spin()
        except (KeyboardInterrupt, ExternalShutdownException):
            pass
        finally:
            executor.shutdown()
        return 0
    finally:
        for node in nodes:
            node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()


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
                return "stopped"
            if time.monotonic() > deadline:
                return "timeout"
        return "done"


# Servers (request readers) each service had at our last call, by service name.
_SERVERS_SEEN: dict[str, set] = {}


def _servers(node: Optional[Node], name: str) -> set:
    """The request readers of service ``name`` in the graph (a killed server stays listed until
    its DDS lease runs out; a restarted one appears beside it)."""
    if node is None:
        return set()
    try:
        infos = node.get_subscriptions_info_by_topic(f"rq{name}Request", no_mangle=True)
    except Exception:  # noqa: BLE001 - another RMW naming scheme: no restart detection
        return set()
    return {bytes(i.endpoint_gid) for i in infos}


def call_service(client, request, timeout: float, *, stop: Callable[[], bool] = lambda: False,
                 wait_s: float = 2.0, node: Optional[Node] = None) -> tuple[Optional[Any], str]:
    """Call a service from a callback thread: (response, "") or (None, why not).

    With ``node``, a restarted server is handled: a request sent while the new server is not
    yet matched would be lost (service requests are volatile) and the dead one still looks
    available, so a server we have not talked to gets a moment for discovery first, and one
    that appears while we wait gets the request again."""
    if not client.wait_for_service(timeout_sec=wait_s):
        return None, f"no service answers at {client.srv_name}"
    name = node.resolve_service_name(client.srv_name) if node is not None else client.srv_name
    servers = _servers(node, name)
    if servers - _SERVERS_SEEN.get(name, servers):
        time.sleep(1.0)
    _SERVERS_SEEN[name] = servers
    deadline = time.monotonic() + timeout
    waiting = FutureWait(client.call_async(request))
    resent = False
    while True:
        outcome = waiting.until(min(deadline, time.monotonic() + 0.5), stop)
        if outcome == "done":
            return waiting.future.result(), ""
        if outcome == "stopped" or time.monotonic() > deadline:
            break
        now = _servers(node, name)
        if not resent and now - servers:
            time.sleep(0.5)
            waiting, resent = FutureWait(client.call_async(request)), True
            _SERVERS_SEEN[name] = now
    return None, ("canceled while waiting for " if outcome == "stopped" else
                  f"no answer within {timeout:g} s from ") + client.srv_name


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


def declare_agents(node: Node) -> dict:
    """The robot's and the person's capabilities and costs (the planner's agents) as parameters:
    ``<class>_capabilities`` (["all"] or capability names) and ``<class>_cost`` per action."""
    from affplan_ros.core.capabilities import AgentProfile

    profiles = {}
    for cls, cost in (("robot", 1), ("human", 100)):
        caps = declare(node, f"{cls}_capabilities", ["all"], f"what the {cls} can do: ['all'] or capability names")
        value = declare(node, f"{cls}_cost", cost, f"cost of one action of the {cls} (the planner minimises the sum)")
        require(value >= 0, f"{cls}_cost must be >= 0")
        profiles[cls] = AgentProfile(int(value), None if list(caps) == ["all"] else frozenset(caps))
    return profiles


class WarmUp:
    """Heavy imports and loading in a thread of their own, so a node is READY at once; requests
    wait for it (:meth:`wait`). What failed is kept and reported with every request."""

    def __init__(self, node: Node, work: Callable[[], None]):
        self.error = ""
        self._node, self._done = node, threading.Event()
        threading.Thread(target=self._run, args=(work,), name=f"{node.get_name()}-warm-up", daemon=True).start()

    def _run(self, work: Callable[[], None]) -> None:
        try:
            work()
        except Exception as exc:  # noqa: BLE001 - reported with every request
            self.error = f"{type(exc).__name__}: {exc}"
            self._node.get_logger().error(f"{self._node.get_name()} cannot work: {self.error}")
        finally:
            self._done.set()

    def wait(self, timeout: float = 60.0) -> str:
        """Wait until the warm-up ended (at most ``timeout``); why it failed, or ""."""
        self._done.wait(timeout)
        return self.error


def load_robot_model(oam_file: str, capabilities: dict):
    """(OAM, the robot's planning model before learned knowledge) as the nodes' parameters name them."""
    from affplan_ros.core.oam import load_oam
    from affplan_ros.core.recovery.belief import Domain

    oam = load_oam(oam_file or None)
    return oam, Domain.default(oam, capabilities)


def declare_capabilities(node: Node) -> dict:
    """The robot's planning model (``capabilities_file``): a capabilities file, or a recovery
    scenario whose robot lacks the scenario's hidden preconditions; "" = the built-in set.
    The executor, planning and tool-selection nodes must share it (config: ``/**``)."""
    from affplan_ros.sim.scenario import ScenarioError, robot_capabilities

    path = declare(node, "capabilities_file", "", "the robot's capability schemas: a capabilities file or a recovery "
                   "scenario (its robot model, without the hidden preconditions); '' = the built-in set")
    try:
        return robot_capabilities(os.path.expanduser(path) if path else None)
    except (OSError, ScenarioError, ValueError, KeyError) as exc:
        raise ValueError(f"capabilities_file {path!r}: {exc}") from exc


def declare_knowledge(node: Node):
    """The knowledge file of learned preconditions and properties (``knowledge_file``; LASP,
    issue 7), watched for changes; "" = nothing learned is kept. A malformed file is logged and
    the node goes on without learned knowledge (the file is never overwritten)."""
    from affplan_ros.core.recovery.session import WatchedKnowledge, knowledge_path

    path = declare(node, "knowledge_file", "", "learned preconditions and properties (JSON), read at start-up and "
                   "whenever it changes; written when the suite learns; '' = learn nothing, keep nothing")
    watched = WatchedKnowledge(knowledge_path(path))
    if watched.error:
        node.get_logger().error(f"knowledge file not used, planning without learned knowledge: {watched.error}")
    elif watched.path is not None:
        node.get_logger().info(f"knowledge file {watched.path}: {watched.store.render()}")
    return watched


def declare_locations(node: Node) -> dict[str, tuple[float, float, float]]:
    """Known locations with base poses: ``locations`` entries "name x y yaw" (map frame)."""
    entries = declare(node, "locations", [], "known locations and their base poses, each 'name x y yaw' in the map frame")
    poses = {}
    for entry in entries:
        words = str(entry).split()
        if not words:
            continue
        try:
            require(len(words) == 4, "")
            poses[words[0]] = (float(words[1]), float(words[2]), float(words[3]))
        except ValueError:
            raise ValueError(f"locations: {entry!r} is not 'name x y yaw' (e.g. 'table0 1.5 0.0 3.14')") from None
    return poses


def declare_llm(node: Node):
    """The language backend parameters every LLM-using node shares -> LLMConfig, or None when no
    endpoint is configured (then the offline instruction interpreter answers)."""
    base_url = declare(node, "llm_base_url", "", "OpenAI-compatible endpoint ('' = AFFPLAN_LLM_BASE_URL; "
                       "none configured = the offline instruction interpreter)")
    model = declare(node, "llm_model", "", "model name ('' = AFFPLAN_LLM_MODEL)")
    key_env = declare(node, "llm_api_key_env", "", "NAME of the environment variable holding the API key "
                      "('' = AFFPLAN_LLM_API_KEY_ENV or OPENAI_API_KEY; 'none' = no key); never the key itself")
    timeout = declare(node, "llm_timeout_s", 60.0, "time limit of one LLM request, seconds")
    require(timeout > 0, "llm_timeout_s must be > 0")
    from affplan_ros.llm.config import config_from_settings

    try:
        return config_from_settings(base_url, model, key_env, timeout)
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
