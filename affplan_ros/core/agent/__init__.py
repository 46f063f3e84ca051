"""The AutoGPT+P loop (Algorithm 1): tool selection, the Plan / Partial Plan tool, alternatives
(Algorithm 2), execution results and the approval gate."""
