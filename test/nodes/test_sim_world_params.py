"""The simulated world refuses a combination of parameters it cannot serve, at start-up, with
one line that says what to set (no traceback, exit code 2), before it builds any world."""
from __future__ import annotations

import sys

import pytest

pytestmark = pytest.mark.ros


@pytest.mark.parametrize("args, said", [
    (["perception:=true"], "perception: the perception node needs the physics world's camera "
                           "(physics:=true, camera_rate_hz > 0)"),
    (["perception:=true", "physics:=true", "camera_rate_hz:=0.0"], "perception: the perception node needs"),
    (["video:=/tmp/never.mp4"], "video '/tmp/never.mp4': only the physics world is recorded (physics:=true)"),
])
def test_sim_world_refuses_what_it_cannot_serve(args, said):
    from affplan_ros.launch_xml import find_executable
    from affplan_ros.launcher import NodeProcess, NodeStartError

    proc = NodeProcess([sys.executable, str(find_executable("affplan_ros", "sim_world")), "--ros-args",
                        "-r", "__ns:=/sim_params_test", *(a for o in args for a in ("-p", o))],
                       name="sim_world", wait=False)
    with pytest.raises(NodeStartError) as caught:
        proc.wait_ready(30.0)
    text = str(caught.value)
    assert "exited with code 2" in text and said in text and "Traceback" not in text, text
