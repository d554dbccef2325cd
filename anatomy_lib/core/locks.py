"""File locks and shared-mode writes: what lets two processes fill one cache or one results store at once.

Two chapters executing side by side (a book build beside a test run, a lab of students sharing one cache) can
ask for the same expensive thing at the same moment: the Gemma conversion, a stored result, a growth
checkpoint. Each such write takes ``exclusive(path)``, an advisory lock on a ``<path>.lock`` file beside it, so
the second process waits and then finds the first one's finished work instead of racing it. Locks are
``fcntl`` locks where the platform has them (Linux, macOS: released by the kernel if the holder dies) and
``msvcrt`` ones on Windows.

Files and folders written here follow the umask (0666 / 0777 less it), as any program's files do: a cache or a
results folder shared by a group stays readable to the group. ``tempfile`` creates private (0600 / 0700) ones,
so ``share`` widens them before they are published.
"""
from __future__ import annotations

import contextlib
import os
from pathlib import Path

try:  # POSIX
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None
    import msvcrt


def umask() -> int:
    """The process's umask (reading it means setting it: put straight back)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def share(path: str | Path) -> None:
    """Give ``path`` (and, for a folder, everything under it) the mode a plain write would give it: 0666 less the
    umask for files, 0777 less it for folders."""
    path = Path(path)
    mask = umask()
    if path.is_dir():
        for root, folders, files in os.walk(path):
            os.chmod(root, 0o777 & ~mask)
            for name in files:
                os.chmod(os.path.join(root, name), 0o666 & ~mask)
    else:
        os.chmod(path, 0o666 & ~mask)


def lock_path(path: str | Path) -> Path:
    path = Path(path)
    return path.with_name(path.name + ".lock")


def _open_lock(lock: Path) -> int:
    lock.parent.mkdir(parents=True, exist_ok=True)
    return os.open(lock, os.O_RDWR | os.O_CREAT, 0o666 & ~umask())


@contextlib.contextmanager
def exclusive(path: str | Path):
    """Hold the lock of ``path`` (a file or folder that may not exist yet) for the ``with`` block; another
    process asking for the same lock waits until it is released. The lock file stays behind (empty):
    removing it while a process waits on it would let a third one take a different lock."""
    lock = lock_path(path)
    fd = _open_lock(lock)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        else:  # pragma: no cover - Windows: lock the first byte, retrying until it is free
            while True:
                try:
                    msvcrt.locking(fd, msvcrt.LK_LOCK, 1)
                    break
                except OSError:
                    continue
        yield lock
    finally:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


@contextlib.contextmanager
def claimed(path: str | Path):
    """Try the lock of ``path`` without waiting: yields True while this process holds it, False if another
    process does (a worker of a sweep skips a job another worker is running). POSIX only; elsewhere every claim
    succeeds (one worker at a time)."""
    if fcntl is None:  # pragma: no cover - Windows
        yield True
        return
    fd = _open_lock(lock_path(path))
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
