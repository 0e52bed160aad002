"""Writing a generated module to a file: atomically, exclusively, with an ordinary file's mode.

* **Atomic**: the text goes to a temporary file in the target's directory
  first, so a reader never sees half a module, and a failed write leaves the
  target as it was and no temporary file behind.
* **Exclusive** without ``overwrite``: the temporary file is hard-linked to
  the target, which fails if the target exists, so of two exports racing to
  the same new path exactly one wins (checking first and then replacing let
  both win).  Where the file system has no hard links the target is created
  with ``O_EXCL`` instead: still exclusive, no longer atomic.
* **Mode**: the temporary file is created with ``0o666`` and the process's
  umask applies, as for any new file (0644 under umask 022; ``mkstemp``'s
  0600 made exported modules private whatever the umask).
"""

from __future__ import annotations

import errno
import os
import secrets

from coarsen_nb.error_kinds import coarsen_error_as
from coarsen_nb.errors import CoarsenError

_NO_HARD_LINKS = {errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.ENOSYS, errno.EMLINK}
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)


def write_module(path: str, text: str, overwrite: bool = False) -> str:
    """Write ``text`` to ``path``; refuse an existing ``path`` unless ``overwrite``."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise coarsen_error_as(FileNotFoundError)(
            path, message=f"cannot export to {path}: its directory {directory} does not exist",
            hint="create the directory first (os.makedirs), or export to a path in an existing one")
    if not overwrite and os.path.lexists(path):
        raise _exists(path)
    tmp = _new_temporary(directory, path)
    try:
        with os.fdopen(os.open(tmp, os.O_WRONLY), "w", encoding="utf-8") as fh:
            fh.write(text)
        if overwrite:
            os.replace(tmp, path)
        else:
            _link_exclusively(tmp, path, text)
    except CoarsenError:
        raise
    except OSError as exc:      # a full disk, a read-only file system, no permission: named, not raw
        raise coarsen_error_as(type(exc))(
            path, message=f"cannot export to {path}: {exc.strerror or exc}",
            hint="export to a directory you can write to, with room on its disk") from exc
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)
    return path


def _new_temporary(directory: str, path: str) -> str:
    """An empty new file beside ``path``, created with 0666 so that the umask sets its mode."""
    while True:
        tmp = os.path.join(directory, f".coarsen_nb_{secrets.token_hex(6)}.py")
        try:
            os.close(os.open(tmp, _NEW, 0o666))
            return tmp
        except FileExistsError:
            continue
        except OSError as exc:
            raise coarsen_error_as(type(exc))(
                path, message=f"cannot export to {path}: cannot write in {directory} ({exc.strerror})",
                hint="export to a directory you can write to") from exc


def _link_exclusively(tmp: str, path: str, text: str) -> None:
    try:
        os.link(tmp, path)
        return
    except FileExistsError:
        raise _exists(path) from None
    except OSError as exc:
        if exc.errno not in _NO_HARD_LINKS:
            raise
    # No hard links on this file system (FAT, some network and FUSE ones): create the target with O_EXCL.
    try:
        fd = os.open(path, _NEW, 0o666)
    except FileExistsError:
        raise _exists(path) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
    except BaseException:
        os.unlink(path)         # ours (O_EXCL): leave no half-written target behind
        raise


def _exists(path: str):
    return coarsen_error_as(FileExistsError)(
        path, message=f"cannot export to {path}: the file exists", hint="pass overwrite=True to replace it")
