"""A node (run through nodes/base.run_node) whose timer callback never returns once it has
started: for test_processes.py, a teardown that would wait for that callback for ever."""
import sys
import time

from rclpy.node import Node

from affplan_ros.nodes.base import run_node


class StuckNode(Node):
    def __init__(self) -> None:
        super().__init__("stuck_callback")
        self._timer = self.create_timer(0.05, self._never_returns)

    def _never_returns(self) -> None:
        self._timer.cancel()
        print("STUCK", flush=True)
        while True:
            time.sleep(3600)


if __name__ == "__main__":
    run_node(StuckNode, sys.argv)
