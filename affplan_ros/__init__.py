"""affplan_ros: command a robot in natural language with affordance-based planning.

The generated ROS 2 interfaces (``affplan_ros.msg``, ``affplan_ros.srv``,
``affplan_ros.action``) may live in a different directory than this source tree
(``make setup`` builds them into the virtual environment; ``colcon build`` installs
both into one directory).  ``extend_path`` lets one package span both places.
"""
from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)
__version__ = "0.1.0"
