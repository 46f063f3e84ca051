"""The base of every error the project raises on purpose.

``AffplanError`` lets a caller (a node's service callback, the command line) tell "this input or
file is wrong, here is why" from a bug; ``ConfigError`` is the kind for a file or parameter the
user wrote. Each concrete error also keeps the builtin it always derived from (``ValueError``,
``RuntimeError``, ``KeyError``), so existing ``except ValueError`` handlers keep working.
"""
from __future__ import annotations


class AffplanError(Exception):
    """An error raised on purpose, with a message meant for the person who reads it."""


class ConfigError(AffplanError, ValueError):
    """A configuration, data or scenario file, or a parameter, that cannot be used."""
