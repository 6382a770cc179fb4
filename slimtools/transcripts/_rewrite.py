"""Copy a transcript file unit by unit, replacing JSON values at given locations.

A unit is what one location's ``line`` or first path key names: a JSONL line, an element
of a top-level list, or the whole of any other document. Units are copied in file order,
each as soon as the edits before it are known, so a file of many runs is rewritten while
its runs are cleared one by one; every byte outside a replaced value is copied as it was.
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from slimtools.errors import TranscriptError
from slimtools.transcripts._jsonio import BOM, Element, Layout, iter_array, open_text, sniff
from slimtools.transcripts._model import JsonPath, Location, MalformedError
from slimtools.transcripts._spans import replace_values

Edit = Callable[[str], str]
"""Old JSON text of a value in, new JSON text out."""


def layout_of(path: Path) -> Layout:
    """The file's layout, or a :class:`TranscriptError` when it cannot be read or is not JSON."""
    try:
        layout = sniff(path)
    except OSError as exc:
        raise TranscriptError(path, f"cannot be read ({exc.strerror or exc})") from None
    if layout is None:
        raise TranscriptError(path, "not a transcript slimtools recognises (not JSON)")
    return layout


def unit_of(layout: Layout, location: Location) -> tuple[int, JsonPath]:
    """(the unit holding a location, the path inside that unit)."""
    if layout == "jsonl":
        if location.line is None:
            raise MalformedError("a location without a line in a JSON Lines file")
        return location.line, location.path
    if layout == "array":
        if not location.path or not isinstance(location.path[0], int):
            raise MalformedError("a location outside the top-level list")
        return location.path[0], location.path[1:]
    return 0, location.path


def guarded(path: Path, step: Callable[[], None], audit: Path | None = None) -> None:
    """Run ``step``, turning a fault into a :class:`TranscriptError` naming ``path``."""
    try:
        step()
    except MalformedError as exc:
        reason = exc.reason if audit is None else f"does not match the audit {audit}: {exc.reason}"
        raise TranscriptError(path, reason, line=exc.line) from None
    except UnicodeDecodeError as exc:
        raise TranscriptError(path, f"not UTF-8 text (byte {exc.start})") from None


class Rewriter:
    """Copies ``path`` to ``sink``, replacing values where :meth:`apply` says.

    Edits must come in file order: each call copies up to the last unit it edits.
    """

    def __init__(self, path: Path, layout: Layout, sink: IO[bytes]) -> None:
        self.path, self.layout, self.sink = path, layout, sink
        self.pending: dict[int, dict[JsonPath, Edit]] = {}
        self._lines: Iterator[tuple[int, bytes]] | None = None
        self._elements: Iterator[Element] | None = None
        self._text: IO[str] | None = None
        self.done: int | None = None  # the last unit copied

    def apply(self, edits: Mapping[Location, Edit]) -> None:
        """Queue ``edits`` and copy the file up to the last unit they touch."""
        last = None
        for location, edit in edits.items():
            unit, inner = unit_of(self.layout, location)
            if self.layout != "object" and self.done is not None and unit <= self.done:
                raise RuntimeError("write-back edits must come in file order")
            self.pending.setdefault(unit, {})[inner] = edit
            last = unit if last is None or unit > last else last
        if last is not None and self.layout != "object":
            self._copy(last)

    def finish(self) -> None:
        """Copy the rest of the file."""
        self._copy(None)
        if self._text is not None:
            self._text.close()
        if self.pending:
            raise MalformedError(f"no unit {min(self.pending)} to replace values in")

    def _copy(self, until: int | None) -> None:
        if self.layout == "jsonl":
            self._copy_lines(until)
        elif self.layout == "array":
            self._copy_elements(until)
        else:
            self._copy_document()

    def _copy_lines(self, until: int | None) -> None:
        if self._lines is None:
            self._lines = _numbered(self.path)
        for number, raw in self._lines:
            edits = self.pending.pop(number, None)
            line = raw
            if edits:
                body = raw.rstrip(b"\r\n")
                text = body.decode("utf-8")
                start = 1 if number == 1 and text.startswith(BOM) else 0
                line = replace_values(text, edits, start).encode("utf-8") + raw[len(body) :]
            self.sink.write(line)
            self.done = number
            if until is not None and number >= until:
                return

    def _copy_elements(self, until: int | None) -> None:
        if self._elements is None:
            self._text = open_text(self.path)
            self._elements = iter_array(self._text, keep_text=True)
        for element in self._elements:
            self.sink.write(element.gap.encode("utf-8"))
            if element.position is None:
                return
            edits = self.pending.pop(element.position, None)
            text = replace_values(element.text, edits) if edits else element.text
            self.sink.write(text.encode("utf-8"))
            self.done = element.position
            if until is not None and element.position >= until:
                return

    def _copy_document(self) -> None:
        with open_text(self.path) as fh:
            text = fh.read()
        edits = self.pending.pop(0, None)
        if edits:
            text = replace_values(text, edits, 1 if text.startswith(BOM) else 0)
        self.sink.write(text.encode("utf-8"))


def _numbered(path: Path) -> Iterator[tuple[int, bytes]]:
    with path.open("rb") as fh:
        yield from enumerate(fh, 1)


TEMP_MARK = ".slimtools-"
TEMP_SUFFIX = ".tmp"
"""A temporary file beside ``target`` is ``.{target name}.slimtools-{pid}-{random}.tmp``: a
later run recognises the ones of processes that died (``kill -9``) and removes them."""


@contextmanager
def replacing(
    target: Path | None, *, append: bool = False, like: Path | None = None
) -> Iterator[Any]:
    """A temporary file beside ``target`` that replaces it (or is appended to it) only if the
    block succeeds; nothing happens to ``target`` otherwise. None: no file at all.

    A replaced file takes the permissions of the file it replaces, else those of ``like``.
    A symlink is written through: its target is replaced and the link stays a link. The
    temporary files that runs killed mid-write left beside the file are removed first.

    Raises:
        OSError: ``target`` cannot be written (a directory, no permission); its
            ``filename`` is ``target``, never the temporary file's name.
    """
    if target is None:
        yield None
        return
    real = Path(os.path.realpath(target)) if target.is_symlink() else target
    if real.is_dir():
        raise IsADirectoryError(errno.EISDIR, "is a directory, not a file", str(target))
    with _named(target):
        real.parent.mkdir(parents=True, exist_ok=True)
        remove_stale(real)
        prefix = f".{real.name}{TEMP_MARK}{os.getpid()}-"
        fd, name = tempfile.mkstemp(prefix=prefix, suffix=TEMP_SUFFIX, dir=real.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
        with _named(target):
            _settle(name, real, append=append, like=like)
    finally:
        if os.path.exists(name):
            os.unlink(name)


def _settle(name: str, real: Path, *, append: bool, like: Path | None) -> None:
    """Move the finished temporary file into place, or append it to ``real``."""
    model = real if real.exists() else like
    if model is not None:
        shutil.copymode(model, name)
    if append and real.exists():
        with real.open("ab") as dst, open(name, "rb") as src:
            if _ends_open(real):  # a torn last line: keep it a line of its own
                dst.write(b"\n")
            shutil.copyfileobj(src, dst, 1 << 20)
    else:
        os.replace(name, real)


def _ends_open(path: Path) -> bool:
    """Whether a non-empty file's last byte is not a line end."""
    with path.open("rb") as fh:
        if fh.seek(0, os.SEEK_END) == 0:
            return False
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) != b"\n"


@contextmanager
def _named(target: Path) -> Iterator[None]:
    """Re-raise an OSError of the block as the same error about ``target``."""
    try:
        yield
    except OSError as exc:
        if exc.errno is None:
            raise
        raise type(exc)(exc.errno, exc.strerror or str(exc), str(target)) from None


def remove_stale(target: Path) -> list[Path]:
    """Remove the temporary files of ``target`` left by slimtools processes that are gone.

    Returns:
        The files removed (a warning names them too).
    """
    stem = f".{target.name}{TEMP_MARK}"
    removed: list[Path] = []
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return removed
    for entry in entries:
        pid = _owner(entry.name, stem)
        if pid is None or _alive(pid):
            continue
        try:
            os.unlink(entry.path)
        except OSError:
            continue
        removed.append(Path(entry.path))
    if removed:
        names = ", ".join(p.name for p in removed)
        warnings.warn(
            f"{target.parent}: removed {len(removed)} temporary file(s) an interrupted "
            f"slimtools run left: {names}",
            stacklevel=4,
        )
    return removed


def _owner(name: str, stem: str) -> int | None:
    """The pid in a temporary file's name made for ``stem``, else None."""
    if not (name.startswith(stem) and name.endswith(TEMP_SUFFIX)):
        return None
    pid, dash, _ = name[len(stem) :].partition("-")
    return int(pid) if dash and pid.isdigit() else None


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists (on Windows, where it cannot be asked safely: yes)."""
    if pid == os.getpid() or os.name == "nt":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: it exists, another user's
        return True
    return True
