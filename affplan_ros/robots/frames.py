"""Where the robot's frames are: the latest transforms of ``/tf`` and ``/tf_static``, composed
along the tree by pytransform3d's TransformManager (tf2_ros's Python buffer is not among the
ROS 2 wheels this project installs; on a robot with tf2_ros the same lookups work the same).

Only the newest transform of each frame is kept: the skills ask where the base is now, not where
it was at a past stamp.
"""
from __future__ import annotations

import threading
from typing import Optional

import numpy as np
from pytransform3d.transform_manager import TransformManager
from pytransform3d.transformations import transform_from_pq
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

TF_QUEUE = 5
TF_STATIC_QOS = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                           durability=DurabilityPolicy.TRANSIENT_LOCAL)


class FrameBuffer:
    """Listens to /tf and /tf_static on ``node``; ``transform(target, source)`` maps points of
    ``source`` into ``target`` (a 4x4 matrix), or None while a frame of the chain is unknown."""

    def __init__(self, node, callback_group=None):
        from tf2_msgs.msg import TFMessage

        self._lock = threading.Lock()
        self._frames = TransformManager(strict_check=False, check=False)
        self._known: set[str] = set()
        # A short queue: where the robot is now is what counts, and a long one falls behind when
        # the transforms come faster than they are read (a simulation faster than real time).
        node.create_subscription(TFMessage, "/tf", self._on_tf, TF_QUEUE, callback_group=callback_group)
        node.create_subscription(TFMessage, "/tf_static", self._on_tf, TF_STATIC_QOS, callback_group=callback_group)

    def _on_tf(self, msg) -> None:
        with self._lock:
            for t in msg.transforms:
                p, q = t.transform.translation, t.transform.rotation
                # A transform of /tf is the child's pose in its parent: child -> parent.
                self._frames.add_transform(t.child_frame_id, t.header.frame_id,
                                           transform_from_pq([p.x, p.y, p.z, q.w, q.x, q.y, q.z]))
                self._known.update((t.child_frame_id, t.header.frame_id))

    def transform(self, target: str, source: str) -> Optional[np.ndarray]:
        if target == source:
            return np.eye(4)
        with self._lock:
            if not {target, source} <= self._known:
                return None
            try:
                return self._frames.get_transform(source, target)
            except KeyError:   # not connected (yet)
                return None
