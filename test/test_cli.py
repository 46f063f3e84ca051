"""The `affplan` command line: every subcommand explains itself; unfinished ones say so."""
from __future__ import annotations

import subprocess
import sys

import pytest

from affplan_ros.cli import build_parser, main


def _subcommand_paths(parser, prefix=()):
    for action in parser._actions:
        if action.__class__.__name__ == "_SubParsersAction":
            for name, sub in action.choices.items():
                yield (*prefix, name)
                yield from _subcommand_paths(sub, (*prefix, name))


SUBCOMMANDS = list(_subcommand_paths(build_parser()))


def test_the_documented_subcommands_exist():
    top = {path[0] for path in SUBCOMMANDS}
    assert {"up", "ask", "memory", "oam", "bench", "demo", "interfaces"} <= top


@pytest.mark.parametrize("path", SUBCOMMANDS, ids=" ".join)
def test_every_subcommand_has_help(path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([*path, "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: affplan " + " ".join(path))
    assert len(out.splitlines()) >= 3


def test_unfinished_subcommand_exits_2_with_a_message(capsys, monkeypatch):
    import affplan_ros.cli as cli

    monkeypatch.setattr(cli, "_bench_module", lambda name: None)   # as if no benchmark had landed yet
    assert main(["bench", "tokens"]) == 2
    assert "not available in this version yet (issue 8)" in capsys.readouterr().err


def test_help_is_fast_and_imports_nothing_heavy():
    code = ("import sys, affplan_ros.cli as c; c.build_parser(); "
            "heavy = [m for m in ('rclpy', 'unified_planning', 'openai', 'torch', 'pyswip') if m in sys.modules]; "
            "print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60).stdout
    assert out.strip() == "[]"
