"""Headless Chromium for the tests and the docs: render a page, dump its DOM, take a picture.

Chromium comes from Debian's package (``.ci/run`` installs it). It runs with the flags that
keep it off the network (no background requests, no component updates), so a request seen
while a page loads is the page's own. :func:`requests_while_loading` routes every request
through a recording proxy on loopback, the proof that a report loads nothing.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests._ports import run

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--hide-scrollbars",
)


def chromium() -> str:
    """The Chromium binary, or skip (fail where ``SLIMTOOLS_REQUIRE_BROWSER=1``, as in CI)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    reason = "chromium not found (Debian's package chromium; .ci/run installs it)"
    if os.environ.get("SLIMTOOLS_REQUIRE_BROWSER") == "1":
        pytest.fail(reason + "; SLIMTOOLS_REQUIRE_BROWSER=1 requires it")
    pytest.skip(reason)


def _chromium(args: Sequence[str], timeout: float = 90) -> str:
    with tempfile.TemporaryDirectory(prefix="slimtools-chromium-") as profile:
        done = run(
            [chromium(), *FLAGS, f"--user-data-dir={profile}", *args],
            timeout=timeout,
        )
    if done.returncode != 0:
        raise RuntimeError(f"chromium exited {done.returncode}: {done.stderr[-2000:]}")
    return done.stdout


def dump_dom(page: Path) -> str:
    """The page's DOM after its scripts ran, as HTML."""
    return _chromium(["--virtual-time-budget=5000", "--dump-dom", page.resolve().as_uri()])


def screenshot(page: Path, picture: Path, *, width: int = 1300, height: int = 1500) -> None:
    """A PNG of the page's top ``width`` x ``height`` pixels."""
    _chromium(
        [
            f"--window-size={width},{height}",
            "--virtual-time-budget=5000",
            f"--screenshot={picture.resolve()}",
            page.resolve().as_uri(),
        ]
    )


CHROMIUM_OWN = ("google.com", "googleapis.com", "gstatic.com")
"""Hosts Chromium itself calls at start (time, updates, accounts) whatever the flags; a
page that names none of them cannot be the one asking."""


def _host(request: bytes) -> str:
    """The host a proxied request is for (``CONNECT host:443`` or ``GET http://host/...``)."""
    words = request.split(b" ", 2)
    target = words[1].decode("latin-1") if len(words) > 1 else ""
    target = target.split("://", 1)[-1]
    return target.split("/", 1)[0].rsplit(":", 1)[0].lower()


def requests_while_loading(page: Path) -> list[bytes]:
    """The first bytes of every connection the page opened while loading: Chromium is told
    to send everything, loopback included, through a proxy that records and refuses it.
    Chromium's own calls to its vendor's hosts (:data:`CHROMIUM_OWN`) are left out."""
    seen: list[bytes] = []
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    server.settimeout(0.2)
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(2)
                try:
                    seen.append(conn.recv(200))
                except OSError:
                    seen.append(b"")

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        port = server.getsockname()[1]
        _chromium(
            [
                f"--proxy-server=http://127.0.0.1:{port}",
                "--proxy-bypass-list=<-loopback>",
                "--virtual-time-budget=5000",
                "--dump-dom",
                page.resolve().as_uri(),
            ]
        )
    finally:
        stop.set()
        thread.join(5)
        server.close()
    return [r for r in seen if not _host(r).endswith(CHROMIUM_OWN)]
