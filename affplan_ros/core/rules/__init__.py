"""Prolog rule files (package data; see affplan_ros.core.semantic_check)."""
