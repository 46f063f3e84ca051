"""affplan_ros/env.py dds_defaults: the Fast DDS profile that lets a service server wait for a
caller it has not matched yet (config/fastdds_profiles.xml) is used unless the user names one or
runs another middleware, and Fast DDS reads it: a node started with it prints no XML error,
while a broken profile in its place is reported."""
from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from affplan_ros.env import FASTDDS_PROFILE, config_file, dds_defaults

KEYS = ("FASTDDS_DEFAULT_PROFILES_FILE", "FASTRTPS_DEFAULT_PROFILES_FILE", "RMW_IMPLEMENTATION")


@pytest.fixture
def clean_env(monkeypatch):
    for key in KEYS:
        monkeypatch.delenv(key, raising=False)
    return monkeypatch


def test_the_project_profile_is_the_default(clean_env):
    dds_defaults()
    assert os.environ["FASTDDS_DEFAULT_PROFILES_FILE"] == str(config_file(FASTDDS_PROFILE))


@pytest.mark.parametrize("key, value", [("FASTDDS_DEFAULT_PROFILES_FILE", "/robot/dds.xml"),
                                        ("FASTRTPS_DEFAULT_PROFILES_FILE", "/robot/legacy.xml"),
                                        ("RMW_IMPLEMENTATION", "rmw_cyclonedds_cpp")])
def test_a_users_own_dds_setting_wins(clean_env, key, value):
    clean_env.setenv(key, value)
    dds_defaults()
    assert os.environ.get("FASTDDS_DEFAULT_PROFILES_FILE", "") == (value if key.startswith("FASTDDS") else "")


def test_the_profile_lets_response_writers_wait_five_seconds():
    ns = {"d": "http://www.eprosima.com"}
    root = ET.parse(config_file(FASTDDS_PROFILE)).getroot()
    writer = root.find("d:profiles/d:data_writer[@is_default_profile='true']", ns)
    wait = writer.find("d:qos/d:reliability/d:max_blocking_time", ns)
    assert (wait.find("d:sec", ns).text, wait.find("d:nanosec", ns).text) == ("5", "0")


PARTICIPANT = "import rclpy; rclpy.init(); n = rclpy.create_node('profile_probe'); print('MADE', flush=True)"


@pytest.mark.ros
def test_fast_dds_reads_the_profile(tmp_path, clean_env):
    def run(profile) -> str:
        env = {**os.environ, "FASTDDS_DEFAULT_PROFILES_FILE": str(profile)}
        done = subprocess.run([sys.executable, "-c", PARTICIPANT], env=env, capture_output=True, text=True,
                              timeout=60)
        return done.stdout + done.stderr

    good = run(config_file(FASTDDS_PROFILE))
    assert "MADE" in good and "XMLPARSER" not in good and "Error" not in good, good
    broken = tmp_path / "broken.xml"
    broken.write_text(config_file(FASTDDS_PROFILE).read_text().replace("</max_blocking_time>", ""))
    said = run(broken)
    assert "XMLPARSER" in said, said
