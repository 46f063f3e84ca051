"""robot_skills: a real robot's skill action servers (Tiago++, ARMAR-style); see robots/skills.py."""
from affplan_ros.robots.skills import RobotSkillsNode, main

__all__ = ["RobotSkillsNode", "main"]

if __name__ == "__main__":
    raise SystemExit(main())
