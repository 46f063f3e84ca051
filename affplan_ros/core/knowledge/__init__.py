"""What objects are for and who can do what: affordances, the object-affordance mapping (OAM) and
its generation by an LLM, capabilities of the agents, the PDDL action -> skill map."""
