"""Read a ROS 2 XML launch file without the ROS 2 launch package, and run it the same way.

``ros2 launch`` is not installable here, so ``affplan up`` and the tests read the suite's
launch files themselves: this module understands the subset they use and refuses anything
else by name (so a launch file cannot silently mean more than what is started):

* ``<arg name default description>`` (overridable), ``<let name value>``;
* ``<group>`` with ``<push-ros-namespace namespace>``;
* ``<node pkg exec name namespace output args>`` with ``<param from>``, ``<param name value>``
  and ``<remap from to>`` inside;
* ``if`` / ``unless`` on ``<group>`` and ``<node>``: a boolean (true/false, 1/0, any case),
  usually ``$(var NAME)``; anything else is an error, as in ROS 2 launch;
* substitutions ``$(var NAME)``, ``$(env NAME [DEFAULT])``, ``$(find-pkg-share affplan_ros)``.

:meth:`LaunchNode.argv` is the command line ``ros2 launch`` would run for a node: the
package's executable with ``--ros-args`` naming the node, its namespace, parameter files,
parameters and remappings.
"""
from __future__ import annotations

import os
import re
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Optional

from affplan_ros.core.errors import ConfigError

PACKAGE = "affplan_ros"
_SUBST = re.compile(r"\$\(([\w-]+)((?:\s+[^)\s]+)*)\s*\)")


class LaunchError(ConfigError):
    """The launch file cannot be read, or uses something this reader does not support."""


@dataclass
class LaunchNode:
    package: str
    executable: str
    name: str
    namespace: str = "/"
    params_files: list[str] = field(default_factory=list)
    params: dict[str, str] = field(default_factory=dict)
    remaps: list[tuple[str, str]] = field(default_factory=list)
    args: list[str] = field(default_factory=list)

    @property
    def full_name(self) -> str:
        return f"{self.namespace.rstrip('/')}/{self.name}"

    def ros_args(self) -> list[str]:
        out = [*self.args, "--ros-args", "-r", f"__node:={self.name}", "-r", f"__ns:={self.namespace}"]
        for f in self.params_files:
            out += ["--params-file", f]
        if self.params:  # after the files, node-specific: wins as <param name value> does in ros2 launch
            from affplan_ros.launcher import params_file_for

            out += ["--params-file", params_file_for(self.full_name, self.params)]
        for src, dst in self.remaps:
            out += ["-r", f"{src}:={dst}"]
        return out

    def argv(self) -> list[str]:
        """What ``ros2 launch`` runs: the package's executable with the node's ROS arguments."""
        return [sys.executable, str(find_executable(self.package, self.executable)), *self.ros_args()]


@dataclass
class LaunchDescription:
    path: str
    args: dict[str, tuple[str, str]]   # name -> (value used, description)
    nodes: list[LaunchNode]

    def node(self, name: str) -> LaunchNode:
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(f"{self.path} launches no node named {name!r}")


def single_process_argv(description: LaunchDescription) -> list[str]:
    """One process for every node of ``description`` (``affplan_ros.nodes.all``): the same
    parameter files, each node's own parameters in a section for it alone, remappings scoped
    to their node."""
    from affplan_ros.launcher import params_file_for

    namespaces = {n.namespace for n in description.nodes}
    if len(namespaces) != 1:
        raise LaunchError(f"{description.path}: nodes in several namespaces ({', '.join(sorted(namespaces))}) "
                          "cannot share one process here")
    files: list[str] = []
    for node in description.nodes:
        if node.package != PACKAGE:
            raise LaunchError(f"{node.package}/{node.executable} cannot be composed")
        files += [f for f in node.params_files if f not in files]
    files += [params_file_for(n.full_name, n.params) for n in description.nodes if n.params]
    argv = [sys.executable, "-m", "affplan_ros.nodes.all", "--nodes", ",".join(n.executable for n in description.nodes),
            *description.nodes[0].args, "--ros-args", "-r", f"__ns:={namespaces.pop()}"]
    for f in files:
        argv += ["--params-file", f]
    for node in description.nodes:
        for src, dst in node.remaps:
            argv += ["-r", f"{node.name}:{src}:={dst}"]
    return argv


def find_executable(package: str, executable: str) -> Path:
    """``scripts/nodes/<exec>`` in a checkout, else ``<prefix>/lib/<package>/<exec>`` (colcon)."""
    from affplan_ros.env import repo_root

    if package != PACKAGE:
        raise LaunchError(f"package {package!r}: only {PACKAGE} nodes can be started without ROS 2 launch")
    candidates = [repo_root() / "scripts" / "nodes" / executable]
    for prefix in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep):
        if prefix:
            candidates.append(Path(prefix) / "lib" / package / executable)
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return path
    raise LaunchError(f"{package} has no executable {executable!r} (looked in {', '.join(map(str, candidates))})")


def _share(package: str) -> str:
    from affplan_ros.env import share_dir

    if package != PACKAGE:
        raise LaunchError(f"$(find-pkg-share {package}): only {PACKAGE} is known here")
    return str(share_dir())


def _substitute(text: str, variables: Mapping[str, str], where: str) -> str:
    def one(m: re.Match) -> str:
        kind, rest = m.group(1), m.group(2).split()
        if kind == "var" and len(rest) == 1:
            if rest[0] not in variables:
                raise LaunchError(f"{where}: $(var {rest[0]}) is not a declared argument")
            return variables[rest[0]]
        if kind == "env" and 1 <= len(rest) <= 2:
            value = os.environ.get(rest[0], rest[1] if len(rest) == 2 else None)
            if value is None:
                raise LaunchError(f"{where}: environment variable {rest[0]} is not set and has no default")
            return value
        if kind == "find-pkg-share" and len(rest) == 1:
            return _share(rest[0])
        raise LaunchError(f"{where}: unsupported substitution {m.group(0)!r}")

    previous = None
    while previous != text:  # a value may itself hold a substitution
        previous, text = text, _SUBST.sub(one, text)
    return text


def _boolean(value: str, where: str) -> bool:
    text = value.strip().lower()
    if text in ("true", "1"):
        return True
    if text in ("false", "0"):
        return False
    raise LaunchError(f"{where}: {value!r} is not a boolean (true/false, 1/0)")


def _condition(attr: Mapping[str, str], where: str, conditional: bool) -> bool:
    """Whether an element with ``if`` / ``unless`` applies (elements without them always do)."""
    if not conditional:
        if {"if", "unless"} & set(attr):
            raise LaunchError(f"{where}: if/unless is supported on <group> and <node> only")
        return True
    applies = True
    if "if" in attr:
        applies = _boolean(attr["if"], f"{where} if=")
    if "unless" in attr:
        applies = applies and not _boolean(attr["unless"], f"{where} unless=")
    return applies


def _join_ns(base: str, ns: str) -> str:
    if ns.startswith("/"):
        return "/" + ns.strip("/")
    parts = [p for p in (base.strip("/"), ns.strip("/")) if p]
    return "/" + "/".join(parts)


def parse_launch(path: Path | str, overrides: Optional[Mapping[str, str]] = None) -> LaunchDescription:
    """The nodes ``path`` starts with ``overrides`` for its arguments (LaunchError if unknown)."""
    path = Path(path)
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as exc:
        raise LaunchError(f"cannot read the launch file {path}: {exc}") from exc
    if root.tag != "launch":
        raise LaunchError(f"{path}: the root element must be <launch>, not <{root.tag}>")
    overrides = dict(overrides or {})
    variables: dict[str, str] = {}
    args: dict[str, tuple[str, str]] = {}
    nodes: list[LaunchNode] = []

    def walk(element: ET.Element, namespace: str) -> None:
        for child in element:
            where = f"{path.name}:<{child.tag}>"
            attr = {k: _substitute(v, variables, where) for k, v in child.attrib.items()
                    if k not in ("name",) or child.tag != "arg"}
            if not _condition(attr, where, conditional=child.tag in ("group", "node")):
                continue
            if child.tag == "arg":
                name = child.get("name", "")
                if name in overrides:
                    value = str(overrides.pop(name))
                elif "default" in child.attrib:
                    value = _substitute(child.get("default", ""), variables, where)
                else:
                    raise LaunchError(f"{path.name}: argument {name!r} has no default and was not given")
                variables[name] = value
                args[name] = (value, child.get("description", ""))
            elif child.tag == "let":
                variables[child.get("name", "")] = attr.get("value", "")
            elif child.tag == "group":
                walk(child, namespace)  # a namespace pushed inside stays inside
            elif child.tag == "push-ros-namespace":
                namespace = _join_ns(namespace, attr.get("namespace", attr.get("ns", "")))
            elif child.tag == "node":
                nodes.append(_node(child, attr, namespace, variables, path))
            else:
                raise LaunchError(f"{path.name}: <{child.tag}> is not supported without ROS 2 launch")

    walk(root, "/")
    if overrides:
        raise LaunchError(f"{path.name} has no argument(s) {', '.join(sorted(overrides))}; "
                          f"it takes: {', '.join(args) or 'none'}")
    return LaunchDescription(str(path), args, nodes)


def _node(element: ET.Element, attr: dict, namespace: str, variables: Mapping[str, str], path: Path) -> LaunchNode:
    for required in ("pkg", "exec"):
        if not attr.get(required):
            raise LaunchError(f"{path.name}: a <node> needs {required}=")
    node = LaunchNode(attr["pkg"], attr["exec"], attr.get("name", attr["exec"]),
                      _join_ns(namespace, attr.get("namespace", "")), args=attr.get("args", "").split())
    for child in element:
        where = f"{path.name}:<node {node.name}>/<{child.tag}>"
        c = {k: _substitute(v, variables, where) for k, v in child.attrib.items()}
        if child.tag == "param" and "from" in c:
            node.params_files.append(c["from"])
        elif child.tag == "param" and "name" in c and "value" in c:
            node.params[c["name"]] = c["value"]
        elif child.tag == "remap" and "from" in c and "to" in c:
            node.remaps.append((c["from"], c["to"]))
        else:
            raise LaunchError(f"{where}: not supported (use <param from>, <param name value> or <remap from to>)")
    return node
