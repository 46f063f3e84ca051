"""What every affplan_ros node shares: QoS profiles, parameter declaration, the run loop."""
from __future__ import annotations

import sys
import time
from typing import Any, Callable, Sequence

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
    """Declare a parameter with a description (shown by `ros2 param describe`) and return its value."""
    descriptor = ParameterDescriptor(description=description, read_only=read_only)
    return node.declare_parameter(name, default, descriptor).value


def require(condition: bool, message: str) -> None:
    """Validate a parameter at start-up with a message that names it."""
    if not condition:
        raise ValueError(message)


def run_node(factory: Callable[[], Node], args: Sequence[str] | None = None, threads: int = 4) -> int:
    """Create the node, spin it on a multi-threaded executor, shut down cleanly on Ctrl-C/SIGTERM.

    Prints ``READY`` on stdout once the node is constructed, so a parent (``affplan up``, tests)
    knows when it can talk to it.
    """
    rclpy.init(args=list(args) if args is not None else sys.argv)
    node = None
    try:
        try:
            node = factory()
        except ValueError as exc:  # invalid parameters: a clear message, not a traceback
            print(f"error: {exc}", file=sys.stderr)
            return 2
        executor = MultiThreadedExecutor(num_threads=threads)
        executor.add_node(node)
        print(READY_LINE, flush=True)
        try:
            executor.spin()
        except (KeyboardInterrupt, ExternalShutdownException):
            pass
        finally:
            executor.shutdown()
        return 0
    finally:
        if node is not None:
            node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()


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
