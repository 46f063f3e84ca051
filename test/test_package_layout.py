"""The repository is a ROS 2 package a robotics user can build and launch: check its files."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
LAUNCH_FILES = sorted((ROOT / "launch").glob("*.launch.xml"))


def test_package_xml_names_the_package_and_interface_group():
    pkg = ET.parse(ROOT / "package.xml").getroot()
    assert pkg.findtext("name") == "affplan_ros"
    assert pkg.findtext("member_of_group") == "rosidl_interface_packages"
    assert pkg.find("export/build_type").text == "ament_cmake"
    # catkin_pkg (used by colcon) rejects an invalid maintainer e-mail.
    assert re.fullmatch(r"[^@\s]+@[^@\s]+\.[a-z]+", pkg.find("maintainer").get("email"))


@pytest.mark.parametrize("launch_file", LAUNCH_FILES, ids=lambda p: p.name)
def test_launch_file_nodes_exist_and_have_parameters(launch_file):
    root = ET.parse(launch_file).getroot()
    defaults = {a.get("name"): a.get("default", "") for a in root.iter("arg")}
    nodes = list(root.iter("node"))
    assert nodes, "a launch file without nodes"
    for node in nodes:
        assert node.get("pkg") == "affplan_ros"
        executable = node.get("exec")
        script = ROOT / "scripts" / "nodes" / executable
        assert script.is_file() and script.stat().st_mode & 0o111, f"{executable}: no executable in scripts/nodes"
        assert (ROOT / "affplan_ros" / "nodes" / f"{executable}.py").is_file()
        files = [p.get("from") for p in node.iter("param") if p.get("from")]
        for i, source in enumerate(files):
            source = re.sub(r"\$\(var (\w+)\)", lambda m: defaults[m.group(1)], source)
            path = ROOT / source.replace("$(find-pkg-share affplan_ros)/", "")
            assert path.is_file(), f"{launch_file.name}: parameter file {path} missing"
            sections = yaml.safe_load(path.read_text())
            # The node's own file has its section; a file read after it (what differs in
            # simulation) may change only what every node shares.
            names = {node.get("name")} | ({"**"} if i > 0 else set())
            assert any(key.rsplit("/", 1)[-1] in names for key in sections), \
                f"{path.name} has no section for node {node.get('name')}"


def test_every_node_script_is_launched_somewhere():
    launched = {n.get("exec") for f in LAUNCH_FILES for n in ET.parse(f).getroot().iter("node")}
    scripts = {p.name for p in (ROOT / "scripts" / "nodes").iterdir()}
    assert scripts == launched


def test_rviz_layout_watches_topics_the_nodes_publish_with_their_qos():
    """The shipped RViz layout subscribes what memory/perception publish, latched (a display
    with volatile durability would miss the markers published before RViz started)."""
    layout = yaml.safe_load((ROOT / "config" / "rviz" / "affplan.rviz").read_text())
    displays = {d["Class"]: d for d in layout["Visualization Manager"]["Displays"]}
    published = {
        m.group(2): m.group(3)
        for path in (ROOT / "affplan_ros" / "nodes").glob("*.py")
        for m in re.finditer(r'create_publisher\((\w+), "([\w/]+)", (\w+)', path.read_text())
    }
    for cls in ("rviz_default_plugins/MarkerArray", "rviz_default_plugins/Image"):
        topic = displays[cls]["Topic"]
        name = topic["Value"].removeprefix("/affplan/")
        assert published.get(name) == "LATCHED_QOS", (name, published)
        assert topic["Durability Policy"] == "Transient Local"
    assert layout["Visualization Manager"]["Global Options"]["Fixed Frame"] == "map"


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, at the top or inside a function."""
    import ast

    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def test_the_robot_software_never_imports_the_simulated_world():
    """robots/ runs on a real robot: the simulator (its world, its truth) is not there."""
    offenders = {f"{path.relative_to(ROOT)}: {module}" for path in (ROOT / "affplan_ros" / "robots").rglob("*.py")
                 for module in _imports(path) if module.startswith("affplan_ros.sim")}
    assert not offenders
