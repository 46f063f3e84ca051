"""The whole simulated suite in ONE process (the nodes composed on one MultiThreadedExecutor).

``python -m affplan_ros.nodes.all --ros-args -r __ns:=/affplan --params-file config/sim.yaml``
or ``affplan up --single-process``. Each node keeps its own name, parameters and callback
groups; only the process is shared (less memory and start-up time, one place to debug).
``--nodes memory,planning`` composes a subset.
"""
from __future__ import annotations

import sys

NODE_CLASSES = {
    "sim_world": ("affplan_ros.nodes.sim_world", "SimWorldNode"),
    "executor": ("affplan_ros.nodes.executor", "ExecutorNode"),
    "memory": ("affplan_ros.nodes.memory", "MemoryNode"),
    "planning": ("affplan_ros.nodes.planning", "PlanningNode"),
    "tool_selection": ("affplan_ros.nodes.tool_selection", "ToolSelectionNode"),
}


def factories(names):
    import importlib

    out = []
    for name in names:
        if name not in NODE_CLASSES:
            raise SystemExit(f"unknown node {name!r}; known: {', '.join(NODE_CLASSES)}")
        module, cls = NODE_CLASSES[name]
        out.append(getattr(importlib.import_module(module), cls))
    return out


def main(argv=None) -> int:
    from affplan_ros.nodes.base import run_node

    argv = list(sys.argv if argv is None else argv)
    names = list(NODE_CLASSES)
    if "--nodes" in argv:
        i = argv.index("--nodes")
        names = [n for n in argv[i + 1].split(",") if n]
        del argv[i:i + 2]
    return run_node(factories(names), argv, threads=12)


if __name__ == "__main__":
    raise SystemExit(main())
