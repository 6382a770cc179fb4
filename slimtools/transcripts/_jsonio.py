"""Reading JSON transcript files without holding more of them than needed.

Three layouts: JSON Lines (read a line at a time), a document whose top level is a list
(its elements are parsed one at a time from a bounded buffer, so a file of many runs never
sits in memory whole) and any other JSON document (parsed whole: its one run is the history
anyway). Parsing uses orjson and falls back to the standard library for what orjson
refuses but real recordings contain (lone surrogate escapes, ``NaN``).

A JSON Lines file whose last line is cut short (a live session still being written, a
crash mid-append) is read up to that line, which is skipped with a :class:`TornLineWarning`.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Literal, NamedTuple

import orjson

from slimtools.errors import TranscriptError
from slimtools.transcripts._model import MalformedError

Layout = Literal["jsonl", "array", "object"]

JSONL_SUFFIXES = frozenset({".jsonl", ".ndjson"})
BOM = "\ufeff"
CHUNK = 1 << 20
_WS = re.compile(r"[ \t\n\r]*")
_SCALAR_END = re.compile(r"[,\]\s]")
_DECODER = json.JSONDecoder()
# What the parser may stop at when a value was cut: nothing left, or the start of a number,
# a literal or a \u escape (an "Extra data" or a misplaced character is not a cut).
_CUT_TOKEN = re.compile(
    r"|-|-?I(?:n(?:f(?:i(?:n(?:i(?:ty?)?)?)?)?)?)?|\.\d*(?:[eE][+-]?\d*)?|[eE][+-]?\d*"
    r"|t(?:ru?)?|f(?:a(?:ls?)?)?|n(?:ul?)?|Na?|u[0-9a-fA-F]{0,4}(?:\\(?:u[0-9a-fA-F]{0,4})?)?"
)


class TornLineWarning(UserWarning):
    """A JSON Lines file ends in an incomplete line, which was skipped.

    Attributes:
        path: the file.
        line: the number of the skipped line (None: the last line).
    """

    def __init__(self, path: Path, line: int | None, consequence: str = "") -> None:
        self.path, self.line = path, line
        which = "its last line" if line is None else f"line {line}"
        what = f"{path}: {which} is incomplete (still being written, or a crash mid-write)"
        super().__init__(f"{what}: skipped{consequence}")


def warn_torn(path: Path, line: int | None, consequence: str = "") -> None:
    """Warn that ``path`` ends in a torn ``line``, skipped (``consequence`` says what else)."""
    warnings.warn(TornLineWarning(path, line, consequence), stacklevel=3)


_TOO_DEEP = "nested too deep"


def loads(data: bytes | str) -> Any:
    """Parse JSON text (orjson first; the standard library for what orjson refuses).

    ``ValueError`` when it is not JSON, also when it nests past the interpreter's stack.
    """
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        try:
            return json.loads(data)
        except RecursionError:
            raise ValueError(_TOO_DEEP) from None


def describe(exc: ValueError) -> str:
    """What a JSON parse error says, in words, with its column (the caller adds the line)."""
    if isinstance(exc, json.JSONDecodeError):
        return f"not valid JSON ({fault(exc)}, column {exc.colno})"
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 text (byte {exc.start})"
    return f"not valid JSON ({exc})"


def sniff(path: Path) -> Layout | None:
    """The layout of a JSON file, or None when it is not JSON (a README, a binary).

    A ``.jsonl``/``.ndjson`` name means JSON Lines; otherwise a file starting with ``[`` is
    a list document, and one starting with ``{`` is JSON Lines when its first line is a
    complete value and more follows, a single document otherwise.

    Raises:
        OSError: the file cannot be read.
    """
    with path.open("rb") as fh:
        head = fh.read(4096).lstrip(BOM.encode()).lstrip()
        if not head or head[:1] not in b"{[":
            return None
        if path.suffix.lower() in JSONL_SUFFIXES:
            return "jsonl"
        if head[:1] == b"[":
            return "array"
        fh.seek(0)
        first = fh.readline()
        if not any(line.strip() for line in fh):
            return "object"  # one value (a one-line file reads the same either way)
    try:
        loads(first.lstrip(BOM.encode()))
    except ValueError:
        return "object"  # a value spread over several lines: a document
    return "jsonl"


def iter_jsonl(
    path: Path, *, progress: Callable[[int], None] | None = None
) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` for each non-blank line of a JSON Lines file.

    ``progress``, when given, is called with the size in bytes of each line read. A last
    line that is not JSON and has no line end after records that are is torn (a writer is
    still at it): it is skipped with a :class:`TornLineWarning`.

    Raises:
        MalformedError: a line that is not JSON (its number is given).
    """
    with path.open("rb") as fh:
        complete = False
        for number, raw in enumerate(fh, 1):
            if progress is not None:
                progress(len(raw))
            if not raw.strip():
                continue
            try:
                value = loads(raw.removeprefix(b"\xef\xbb\xbf") if number == 1 else raw)
            except ValueError as exc:
                if complete and not raw.endswith(b"\n"):
                    warn_torn(path, number)
                    return
                raise MalformedError(describe(exc), line=number) from None
            complete = True
            yield number, value


def last_line(path: Path, block: int = 1 << 16) -> bytes:
    """The file's last line (after its last line end; b"" when the file ends with one)."""
    with path.open("rb") as fh:
        end = fh.seek(0, 2)
        tail = b""
        while end > 0:
            start = max(0, end - block)
            fh.seek(start)
            tail = fh.read(end - start) + tail
            cut = tail.rfind(b"\n")
            if cut >= 0:
                return tail[cut + 1 :]
            end = start
        return tail


def torn_tail(path: Path) -> bool:
    """Whether a JSON Lines file ends in a line cut short (a writer is still at it)."""
    tail = last_line(path)
    return bool(tail.strip()) and truncated(tail)


def read_object(path: Path) -> Any:
    """Parse a whole JSON document.

    Raises:
        MalformedError: it is not JSON (with the line of the fault).
    """
    try:
        text = path.read_text(encoding="utf-8").removeprefix(BOM)
    except UnicodeDecodeError as exc:
        raise MalformedError(describe(exc)) from None
    try:
        return loads(text)
    except json.JSONDecodeError as exc:
        raise MalformedError(describe(exc), line=exc.lineno) from None
    except ValueError as exc:
        raise MalformedError(describe(exc)) from None


def fault(exc: json.JSONDecodeError) -> str:
    """The parser's message without its dangling "at" (``"Unterminated string starting"``)."""
    return exc.msg.removesuffix(" at")


class Element(NamedTuple):
    """One piece of a top-level JSON list as :func:`iter_array` reads it.

    ``gap`` is the text since the previous element (the opening ``[``, commas, spaces);
    ``position`` is the element's index, None for the closing piece, whose ``gap`` runs to
    the end of the file. ``text`` is the element's JSON text when asked for, else empty.
    """

    gap: str
    position: int | None
    text: str
    value: Any


class _Buffer:
    """A growing window on a text stream; consumed text is dropped from the front."""

    def __init__(self, fh: IO[str], chunk: int) -> None:
        self.fh, self.chunk = fh, chunk
        self.text = ""
        self.line = 1  # the line number of text[0]

    def more(self) -> bool:
        """Read more (at least as much as is buffered, so re-parsing stays linear)."""
        data = self.fh.read(max(self.chunk, len(self.text)))
        self.text += data
        return bool(data)

    def skip_ws(self, pos: int) -> int:
        """The first non-whitespace position from ``pos``, reading on as needed."""
        while True:
            pos = _WS.match(self.text, pos).end()  # type: ignore[union-attr]
            if pos < len(self.text) or not self.more():
                return pos

    def drop(self, end: int) -> None:
        """Forget everything before ``end``."""
        self.line += self.text.count("\n", 0, end)
        self.text = self.text[end:]

    def line_at(self, pos: int) -> int:
        return self.line + self.text.count("\n", 0, pos)


def truncated(line: bytes) -> bool:
    """Whether a line that is not JSON is the beginning of a JSON object or list cut short
    (a crash mid-write), rather than other text."""
    text = line.strip().decode("utf-8", "replace")
    if text[:1] not in ("{", "["):
        return False
    try:
        json.loads(text)
    except RecursionError:
        return False
    except json.JSONDecodeError as exc:
        if exc.msg.startswith("Unterminated string"):
            return True
        return _CUT_TOKEN.fullmatch(text, exc.pos) is not None
    return False


def _incomplete(exc: json.JSONDecodeError, buffered: int) -> bool:
    """Whether a parse error may only mean that the element goes on past the buffer."""
    return exc.pos >= buffered - 8 or exc.msg.startswith("Unterminated string")


def iter_array(fh: IO[str], *, keep_text: bool = False, chunk: int = CHUNK) -> Iterator[Element]:
    """The elements of the top-level JSON list in ``fh``, one at a time.

    Memory stays bounded by the largest element plus ``chunk`` characters. Every character
    of the file is in exactly one piece's ``gap`` or ``text`` (when ``keep_text``), so a
    writer can copy the file piece by piece.

    Raises:
        MalformedError: the file is not one well-formed JSON list (with the line of the fault).
    """
    buf = _Buffer(fh, chunk)
    buf.more()
    start = 1 if buf.text.startswith(BOM) else 0
    pos = buf.skip_ws(start)
    if buf.text[pos : pos + 1] != "[":
        raise MalformedError("not a JSON list", line=buf.line_at(pos))
    pos = buf.skip_ws(pos + 1)
    index = 0
    while True:
        if pos >= len(buf.text):
            raise MalformedError("the file ends inside the top-level list", line=buf.line_at(pos))
        if buf.text[pos] == "]":
            yield _closing(buf, pos)
            return
        if index:
            if buf.text[pos] != ",":
                raise MalformedError(
                    "expected ',' or ']' between list elements", line=buf.line_at(pos)
                )
            pos = buf.skip_ws(pos + 1)
        if buf.text[pos : pos + 1] not in ("{", "[", '"'):
            # A number or literal ends only where a delimiter follows ("0." may go on as
            # "0.5"); objects, lists and strings end at their closing character.
            while _SCALAR_END.search(buf.text, pos) is None and buf.more():
                pass
        while True:
            try:
                value, end = _DECODER.raw_decode(buf.text, pos)
            except RecursionError:
                reason = f"not valid JSON ({_TOO_DEEP}) in list element {index}"
                raise MalformedError(reason, line=buf.line_at(pos)) from None
            except json.JSONDecodeError as exc:
                if _incomplete(exc, len(buf.text)) and buf.more():
                    continue
                line = buf.line_at(exc.pos)
                reason = f"not valid JSON ({fault(exc)}) in list element {index}"
                raise MalformedError(reason, line=line) from None
            break
        text = buf.text[pos:end] if keep_text else ""
        yield Element(buf.text[:pos], index, text, value)
        buf.drop(end)
        pos = buf.skip_ws(0)
        index += 1


def _closing(buf: _Buffer, pos: int) -> Element:
    while buf.more():
        pass
    rest = buf.text[pos + 1 :]
    if rest.strip(" \t\n\r"):
        line = buf.line_at(pos + 1 + (len(rest) - len(rest.lstrip())))
        raise MalformedError("unexpected data after the top-level list", line=line)
    return Element(buf.text, None, "", None)


def open_text(path: Path) -> IO[str]:
    """Open a JSON file as text exactly as stored (UTF-8, no newline translation)."""
    return path.open(encoding="utf-8", newline="")


@contextmanager
def reading(path: Path) -> Iterator[None]:
    """Turn whatever reading ``path`` raises into one :class:`TranscriptError`."""
    try:
        yield
    except MalformedError as exc:
        raise TranscriptError(path, exc.reason, line=exc.line) from None
    except UnicodeDecodeError as exc:
        raise TranscriptError(path, f"not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise TranscriptError(path, f"cannot be read ({exc.strerror or exc})") from None
    except (KeyError, TypeError, AttributeError, IndexError, ValueError) as exc:
        if isinstance(exc, TranscriptError):
            raise
        reason = f"not a well-formed transcript ({type(exc).__name__}: {exc})"
        raise TranscriptError(path, reason) from None
