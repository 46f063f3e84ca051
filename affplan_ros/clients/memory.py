"""The memory node as a :class:`~affplan_ros.core.ports.MemoryStore`: GetMemory and UpdateMemory."""
from __future__ import annotations

import json
from typing import Optional

from affplan_ros.core.model.memory import Memory
from affplan_ros.nodes.base import call_service
from affplan_ros.srv import GetMemory, UpdateMemory


class MemoryClient:
    """Read and write the memory node's memory from a callback thread (the clients must live in a
    callback group that other executor threads serve). Both requests are safe to repeat, so a
    request lost to a just-restarted node goes out again (``resend_silent_s``)."""

    def __init__(self, node, get_client, update_client=None, server_wait: float = 10.0, timeout: float = 10.0):
        """``update_client`` None: a reader only (the planning node), :meth:`push` is refused."""
        self.node, self.get_client, self.update_client = node, get_client, update_client
        self.server_wait, self.timeout = server_wait, timeout

    def fetch(self) -> tuple[Optional[Memory], str]:
        """(the memory, "") or (None, why not)."""
        got, error = call_service(self.get_client, GetMemory.Request(), self.timeout, wait_s=self.server_wait,
                                  node=self.node, resend_silent_s=2.0)
        if got is None:
            return None, f"cannot read the memory: {error}"
        try:
            return Memory.from_dict(json.loads(got.json)), ""
        except ValueError as exc:
            return None, f"cannot read the memory: {exc}"

    def push(self, memory: Memory) -> str:
        """Send the whole working copy; the node merges it by stamps, so sending it twice changes
        nothing. "" or why it was not taken."""
        if self.update_client is None:
            return "this memory client only reads"
        request = UpdateMemory.Request(memory_json=json.dumps(memory.to_dict()))
        got, error = call_service(self.update_client, request, self.timeout, wait_s=self.server_wait,
                                  node=self.node, resend_silent_s=2.0)
        if got is None or not got.success:
            return error or got.message
        return ""
