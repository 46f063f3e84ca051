"""State files that survive crashes and concurrent writers (ROS-free).

:func:`write_atomic` replaces a file so that a reader, or the file after a crash or power
loss, sees either the old or the new content, never a mix or a truncated file: the text is
written to a uniquely named temporary file in the same directory, synced, renamed onto the
target, and the directory is synced so that the rename itself is durable.

:func:`locked` serialises read-modify-write cycles of several processes on one file (two
nodes learning at once) with an advisory lock on a sibling ``<file>.lock``. It waits a
bounded time and then raises :class:`StateLockTimeout` naming the file; it never blocks
forever and uses no signals.
"""
from __future__ import annotations

import errno
import fcntl
import os
import stat
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Union

LOCK_TIMEOUT_S = 10.0
_POLL_S = 0.02


class StateLockTimeout(TimeoutError):
    """Another process held the lock of a state file for longer than the timeout."""


def lock_path(path: Union[str, Path]) -> Path:
    path = Path(path)
    return path.with_name(path.name + ".lock")


def write_atomic(path: Union[str, Path], text: str, encoding: str = "utf-8") -> None:
    """Replace ``path`` with ``text`` atomically and durably; on failure the old file is left
    as it was, no temporary file stays behind and the OSError is raised."""
    path = Path(path)
    directory = path.parent
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=str(directory))
    try:
        with os.fdopen(fd, "w", encoding=encoding) as fh:
            os.fchmod(fh.fileno(), _mode_for(path))  # mkstemp makes 0600: keep the file's (new: open()'s)
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_directory(directory)


def _mode_for(path: Path) -> int:
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return 0o666 & ~_umask()


def _umask() -> int:
    try:  # read, not set: os.umask() changes it for every thread for a moment
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


def _fsync_directory(directory: Path) -> None:
    try:
        dfd = os.open(str(directory), os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return  # a platform or file system without directory handles: the rename is done anyway
    try:
        os.fsync(dfd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):  # not syncable here
            raise
    finally:
        os.close(dfd)


@contextmanager
def locked(path: Union[str, Path], timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold an exclusive advisory lock for ``path`` (on ``<path>.lock``) inside the block.

    Advisory: only writers that use :func:`locked` too are kept out. Not reentrant: a process
    that takes it twice for the same file waits for itself until the timeout.
    """
    lock = lock_path(path)
    lock.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(str(lock), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise StateLockTimeout(
                        f"cannot lock {path}: another process has held {lock} for more than {timeout:g} s "
                        f"(another node writing the same file?)") from None
                time.sleep(_POLL_S)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
