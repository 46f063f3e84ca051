"""ROS 2 clients of the suite's nodes, implementing the ports of the core (core/ports.py): the
planning node as a Planner, the executor node as an Executor, the memory node as a MemoryStore.
The tool-selection node's task run (nodes/task_run.py) and the planning node use them."""
