"""The offline instruction interpreter (ROS-free, no language model): commands in words -> goals.

``Interpreter.interpret(text, World)`` gives a goal or declines with a reason; ``OfflineModel``
(``backend.py``) puts it behind the language-backend interface of the planning loops; the
vocabulary and the command grammar are data (``vocabulary.yaml``, ``commands.lark``).
"""
from affplan_ros.core.interpreter.interpreter import (
    Interpretation,
    Interpreter,
    Missing,
)
from affplan_ros.core.interpreter.world import World

__all__ = ["Interpretation", "Interpreter", "Missing", "World"]
