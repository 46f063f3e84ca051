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


@pytest.mark.parametrize("content, said", [("objects: [unclosed\n", "oam.yaml: not valid YAML"),
                                           (None, "No such file or directory")])
def test_sim_world_names_an_oam_file_it_cannot_read(tmp_path, content, said):
    from affplan_ros.launch_xml import find_executable
    from affplan_ros.launcher import NodeProcess, NodeStartError

    oam = tmp_path / "oam.yaml"
    if content is not None:
        oam.write_text(content)
    proc = NodeProcess([sys.executable, str(find_executable("affplan_ros", "sim_world")), "--ros-args",
                        "-r", "__ns:=/sim_params_test", "-p", f"oam_file:={oam}"], name="sim_world", wait=False)
    with pytest.raises(NodeStartError) as caught:
        proc.wait_ready(30.0)
    text = str(caught.value)
    assert "exited with code 2" in text and said in text and str(oam) in text and "Traceback" not in text, text
