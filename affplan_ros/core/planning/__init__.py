"""PDDL and Fast Downward: the planning task (domain and problem from the scene), pruning, the
planner with plan validation, and symbolic simulation."""
