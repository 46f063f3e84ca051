"""State files (issue 13): atomic, synced replacement and a lock for read-modify-write cycles
of several processes - the learned-knowledge file and the OAM cache."""
from __future__ import annotations

import json
import multiprocessing
import os
import time
from pathlib import Path

import pytest

from affplan_ros.core.files import state_files
from affplan_ros.core.files.state_files import (
    StateLockTimeout,
    lock_path,
    locked,
    write_atomic,
)

N = 25   # entries each process adds, one save each


def _temp_files(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


# -- write_atomic ----------------------------------------------------------------------------

def test_write_atomic_replaces_and_syncs(tmp_path, monkeypatch) -> None:
    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(state_files.os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    target = tmp_path / "state.json"
    target.write_text("old", encoding="utf-8")
    target.chmod(0o640)
    write_atomic(target, "new ü")
    assert target.read_text(encoding="utf-8") == "new ü"
    assert len(synced) == 2                      # the file, then the directory
    assert (target.stat().st_mode & 0o777) == 0o640    # the file's mode is kept
    assert _temp_files(tmp_path) == []


@pytest.mark.parametrize("where", ["write", "fsync", "replace"])
def test_a_failed_write_leaves_the_old_file_and_no_temporary_file(tmp_path, monkeypatch, where) -> None:
    target = tmp_path / "state.json"
    target.write_text("old content", encoding="utf-8")

    def fail(*_a, **_k):
        raise OSError(28, "No space left on device")

    if where == "write":
        real_fdopen = os.fdopen

        class Half:
            def __init__(self, fh):
                self.fh = fh

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                self.fh.close()

            def fileno(self):
                return self.fh.fileno()

            def write(self, text):
                self.fh.write(text[:3])
                self.fh.flush()
                fail()

        monkeypatch.setattr(state_files.os, "fdopen", lambda *a, **k: Half(real_fdopen(*a, **k)))
    else:
        monkeypatch.setattr(state_files.os, where, fail)
    with pytest.raises(OSError, match="No space left"):
        write_atomic(target, "new content that never lands")
    monkeypatch.undo()
    assert target.read_text(encoding="utf-8") == "old content"
    assert _temp_files(tmp_path) == []


def test_temporary_names_are_unique(tmp_path, monkeypatch) -> None:
    # a fixed "<file>.tmp" name would let two writers write into one temporary file
    seen = []
    real = state_files.tempfile.mkstemp
    monkeypatch.setattr(state_files.tempfile, "mkstemp",
                        lambda **kw: (lambda r: (seen.append(r[1]), r)[1])(real(**kw)))
    write_atomic(tmp_path / "a.yaml", "1")
    write_atomic(tmp_path / "a.yaml", "2")
    assert len(set(seen)) == 2 and all(Path(p).parent == tmp_path for p in seen)


# -- locked ----------------------------------------------------------------------------------

def _hold_lock(path: str, ready, release) -> None:
    with locked(path):
        ready.set()
        release.wait(30)


def test_lock_timeout_names_the_file(tmp_path) -> None:
    target = tmp_path / "knowledge.json"
    ctx = multiprocessing.get_context("spawn")
    ready, release = ctx.Event(), ctx.Event()
    holder = ctx.Process(target=_hold_lock, args=(str(target), ready, release))
    holder.start()
    try:
        assert ready.wait(60)
        t0 = time.monotonic()
        with pytest.raises(StateLockTimeout) as exc:
            with locked(target, timeout=0.3):
                pass
        assert 0.3 <= time.monotonic() - t0 < 5
        assert str(target) in str(exc.value) and isinstance(exc.value, OSError)
    finally:
        release.set()
        holder.join(30)
    with locked(target, timeout=5):             # free again once the holder is done
        assert lock_path(target).is_file()


# -- two processes writing one file ----------------------------------------------------------

def _learn(path: str, tag: str, start) -> None:
    from affplan_ros.core.recovery.knowledge import KnowledgeStore, LearnedPrecondition

    start.wait(60)   # both imported: they start writing at once
    store = KnowledgeStore.open(path)
    for i in range(N):
        store.add_precondition(LearnedPrecondition("putin", f"(open_{tag}{i} ?o)"))


def _generate(path: str, tag: str, start) -> None:
    from affplan_ros.core.knowledge.oam_generation import ClassResult, OamCache

    start.wait(60)
    cache = OamCache(path)
    for i in range(N):
        cache.store([ClassResult(f"{tag}{i}", "list", "fake", ["grasp"])])


def _race(worker, path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Barrier(2)
    procs = [ctx.Process(target=worker, args=(str(path), tag, start)) for tag in ("a", "b")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0]


def test_two_processes_learning_at_once_keep_every_entry(tmp_path) -> None:
    path = tmp_path / "knowledge.json"
    _race(_learn, path)
    data = json.loads(path.read_text(encoding="utf-8"))
    got = {p["condition"] for p in data["preconditions"]}
    assert got == {f"(open_{t}{i} ?o)" for t in "ab" for i in range(N)}
    assert _temp_files(tmp_path) == []


def test_two_processes_generating_at_once_keep_every_oam_entry(tmp_path) -> None:
    from affplan_ros.core.knowledge.oam import load_oam
    from affplan_ros.core.knowledge.oam_generation import OamCache

    path = tmp_path / "generated.yaml"
    _race(_generate, path)
    classes, prov = OamCache(path).load()
    assert set(classes) == set(prov) == {f"{t}{i}" for t in "ab" for i in range(N)}
    assert load_oam(path).affordances_of("a0") == frozenset({"grasp"})
    assert _temp_files(tmp_path) == []
