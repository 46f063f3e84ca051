"""What the robot believes: the scene (objects, relations, locations), the predicates a belief may
use, memory with stamped beliefs, failures, the goal signature and the input limits."""
