"""Prompt template text files (package data; see affplan_ros.llm.prompting)."""
