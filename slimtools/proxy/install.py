"""``slimtools proxy install``: route a client's MCP servers through the proxy, with a backup.

Each stdio entry of a config's ``mcpServers`` (Claude Desktop, Cursor, Claude Code) is
rewritten in place, keeping its key and its ``env`` block::

    "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], ...}
    "github": {"command": "/path/to/slimtools",
               "args": ["proxy", "--config", "slim.toml", "--", "npx", "-y", "..."], ...}

Entries already proxied are left alone; HTTP entries (``url``) get ``--upstream-url``, and
their ``headers`` go into the entry's ``env`` as ``SLIMTOOLS_UPSTREAM_HEADERS`` (JSON), never
onto the command line, where ``ps`` shows every argument to every user; so does a URL that
holds a secret (credentials, a query, a token-shaped part), as ``SLIMTOOLS_UPSTREAM_URL``.
Before the file is first written it is copied to ``<file>.slimtools-backup``, and a later
install never overwrites that copy; ``--undo`` puts every proxied entry back, and restores the
backup byte for byte when nothing else changed in the file since.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

CLIENTS = ("claude-desktop", "cursor", "claude-code")
_CLIENTS = "claude-desktop, cursor or claude-code"
HEADERS_ENV = "SLIMTOOLS_UPSTREAM_HEADERS"
"""The variable an installed entry passes its upstream's HTTP headers in (a JSON object)."""
URL_ENV = "SLIMTOOLS_UPSTREAM_URL"
"""The variable an installed entry passes its upstream's URL in when the URL holds a secret."""
BACKUP_SUFFIX = ".slimtools-backup"

__all__ = ["client_config_paths", "main", "proxied_entry", "unproxied_entry"]


def client_config_paths(client: str, home: Path | None = None) -> list[Path]:
    """The config files a client reads, most specific first (existing or not)."""
    home = home or Path.home()
    if client == "claude-desktop":
        if sys.platform == "darwin":
            return [home / "Library/Application Support/Claude/claude_desktop_config.json"]
        if sys.platform == "win32":  # pragma: no cover - platform specific
            return [Path(os.environ.get("APPDATA", home)) / "Claude/claude_desktop_config.json"]
        return [home / ".config/Claude/claude_desktop_config.json"]
    if client == "cursor":
        return [Path.cwd() / ".cursor/mcp.json", home / ".cursor/mcp.json"]
    if client == "claude-code":
        return [Path.cwd() / ".mcp.json", home / ".claude.json"]
    raise ValueError(f"unknown client {client!r}: claude-desktop, cursor or claude-code")


def _launcher() -> list[str]:
    """How a client starts slimtools: the console script's absolute path, else -m."""
    found = shutil.which("slimtools")
    if found:
        return [str(Path(found).resolve())]
    return [sys.executable, "-m", "slimtools.cli"]


def _is_proxied(entry: dict[str, Any]) -> bool:
    args = entry.get("args") or []
    return ("proxy" in args[:3] and "--" in args) or "slimtools.cli" in args[:3]


def proxied_entry(
    entry: dict[str, Any], config: str | None, launcher: Sequence[str]
) -> dict[str, Any] | None:
    """The entry rewritten to go through the proxy, or None when it cannot or need not be
    (already proxied; an SSE server, since the proxy reaches URLs by streamable HTTP only).

    Raises:
        ValueError: an HTTP entry's ``headers`` is not a table of names and values.
    """
    if not isinstance(entry, dict) or _is_proxied(entry) or entry.get("type") == "sse":
        return None
    options = ["--config", config] if config else []
    out = {k: v for k, v in entry.items() if k not in ("command", "args", "url", "headers", "type")}
    if isinstance(entry.get("command"), str):
        upstream = [entry["command"], *[str(a) for a in entry.get("args") or []]]
        args = [*launcher[1:], "proxy", *options, "--", *upstream]
    elif isinstance(entry.get("url"), str):
        url: str = entry["url"]
        found = entry.get("env")
        env: dict[str, Any] = dict(found) if isinstance(found, dict) else {}
        headers = entry.get("headers") or {}
        if not isinstance(headers, dict):  # its value is not shown: it may hold a token
            raise ValueError(f"headers must be a table of names and values, not a {_kind(headers)}")
        if headers:
            env[HEADERS_ENV] = json.dumps({str(k): str(v) for k, v in headers.items()})
        if url_holds_secret(url):
            args = [*launcher[1:], "proxy", *options]
            env[URL_ENV] = url
        else:
            args = [*launcher[1:], "proxy", *options, "--upstream-url", url]
        if env:
            out["env"] = env
    else:
        return None
    out["command"] = launcher[0]
    out["args"] = args
    if "type" in entry:
        out["type"] = "stdio"
    out["x-slimtools-original"] = entry
    return out


def _kind(value: Any) -> str:
    return "string" if isinstance(value, str) else type(value).__name__


def url_holds_secret(url: str) -> bool:
    """True for a URL with credentials, a query or a fragment (``?api_key=...``), or a
    token-shaped part: such a URL is kept off the command line too."""
    from urllib.parse import urlsplit

    from slimtools.redaction import redact

    parts = urlsplit(url)
    return bool("@" in parts.netloc or parts.query or parts.fragment or redact(url) != url)


def unproxied_entry(entry: dict[str, Any]) -> dict[str, Any] | None:
    """The original entry of one the installer rewrote, or None."""
    original = entry.get("x-slimtools-original") if isinstance(entry, dict) else None
    return original if isinstance(original, dict) else None


def _server_tables(data: Any) -> Iterator[dict[str, Any]]:
    """Every ``mcpServers`` table: top level, and per project in ~/.claude.json."""
    if not isinstance(data, dict):
        return
    if isinstance(data.get("mcpServers"), dict):
        yield data["mcpServers"]
    for project in (data.get("projects") or {}).values():
        if isinstance(project, dict) and isinstance(project.get("mcpServers"), dict):
            yield project["mcpServers"]


def backup_path(path: Path) -> Path:
    """Where ``path``'s copy from before the first install is kept."""
    return path.with_name(path.name + BACKUP_SUFFIX)


def rewrite(
    path: Path, *, config: str | None, only: Sequence[str], undo: bool, dry_run: bool
) -> list[str]:
    """Rewrite one client config file; return what changed, one line per server."""
    data = json.loads(path.read_text(encoding="utf-8"))
    launcher = _launcher()
    changed = []
    for table in _server_tables(data):
        for name, entry in list(table.items()):
            if only and name not in only:
                continue
            try:
                new = unproxied_entry(entry) if undo else proxied_entry(entry, config, launcher)
            except ValueError as exc:
                raise ValueError(f"{name}: {exc}") from None
            if new is not None:
                table[name] = new
                changed.append(f"{path}: {name}: {'restored' if undo else 'now through the proxy'}")
    if changed and not dry_run:
        _write(path, data, undo=undo)
    return changed


def _write(path: Path, data: Any, *, undo: bool) -> None:
    """Write the rewritten config: the first install keeps a backup, never overwritten; an
    undo that leaves the file as the backup was puts the backup's very bytes back."""
    backup = backup_path(path)
    if undo and backup.is_file() and _same_data(backup, data):
        shutil.copy2(backup, path)
        backup.unlink()
        return
    if not undo and not backup.exists():
        shutil.copy2(path, backup)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _same_data(backup: Path, data: Any) -> bool:
    try:
        return bool(json.loads(backup.read_text(encoding="utf-8")) == data)
    except (OSError, ValueError):
        return False


EXAMPLE = """\
example:
  slimtools proxy install --config ~/slim.toml --dry-run
  slimtools proxy install --undo

exit status: 0 done, 1 a client's config file could not be read or written, 2 bad usage
(an unknown client, a --config that is missing or invalid)
"""


def main(argv: Sequence[str]) -> int:
    """Run ``slimtools proxy install``."""
    parser = argparse.ArgumentParser(
        prog="slimtools proxy install",
        description=__doc__,
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--client",
        action="append",
        default=[],
        metavar="NAME",
        help="claude-desktop, cursor or claude-code (default: all found)",
    )
    parser.add_argument(
        "--file",
        action="append",
        default=[],
        metavar="PATH",
        help="a config file to rewrite (instead of the clients' own)",
    )
    parser.add_argument(
        "--server",
        action="append",
        default=[],
        metavar="NAME",
        help="only these mcpServers entries (default: every one)",
    )
    parser.add_argument("--config", metavar="FILE", help="the proxy config the entries use")
    parser.add_argument("--undo", action="store_true", help="put proxied entries back")
    parser.add_argument("--dry-run", action="store_true", help="say what would change")
    args = parser.parse_args(list(argv))
    unknown = [c for c in args.client if c not in CLIENTS]
    if unknown:
        return _usage(f"unknown client {unknown[0]!r}: {_CLIENTS}")
    config = None
    if args.config:
        problem = _config_problem(Path(args.config))
        if problem:
            return _usage(problem)
        config = str(Path(args.config).resolve())
    paths = [Path(p) for p in args.file]
    clients = args.client or ([] if paths else list(CLIENTS))
    paths += [p for client in clients for p in client_config_paths(client) if p.is_file()]
    changed: list[str] = []
    path = None
    try:
        for path in paths:
            changed += rewrite(
                path, config=config, only=args.server, undo=args.undo, dry_run=args.dry_run
            )
    except (OSError, ValueError) as exc:  # unreadable, not JSON (or UTF-8), a bad entry
        print(f"slimtools proxy install: {path}: {exc}", file=sys.stderr)
        return 1
    print("\n".join(changed) if changed else "nothing to change")
    if changed and not args.dry_run:
        print(_closing(sorted({line.split(": ", 1)[0] for line in changed}), undo=args.undo))
    return 0


def _usage(message: str) -> int:
    print(f"slimtools proxy install: {message}", file=sys.stderr)
    return 2


def _config_problem(path: Path) -> str | None:
    """Why the proxy config the entries would use cannot serve, or None."""
    from slimtools.errors import ConfigurationError
    from slimtools.proxy.config import load_config

    if not path.is_file():
        return f"--config {path}: no such file (write it first, e.g. with slimtools suggest)"
    try:
        load_config(path)
    except ConfigurationError as exc:
        return str(exc)
    return None


def _closing(files: list[str], *, undo: bool) -> str:
    """What to do next, naming the backups kept."""
    if undo:
        return "restart the client to stop using the proxy"
    backups = ", ".join(str(backup_path(Path(f))) for f in files)
    return f"backups: {backups}; restart the client to use the proxy"
