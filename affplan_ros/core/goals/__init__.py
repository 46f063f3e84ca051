"""The LLM's goal: s-expressions and goal formulas (DNF), extraction from LLM text, syntax checks,
semantic checks in Prolog (semantic_rules.pl), and the bounded correction loop."""
