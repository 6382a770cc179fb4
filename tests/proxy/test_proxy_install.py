"""``slimtools proxy install``: client configs rewritten through the proxy, with a backup."""

from __future__ import annotations

import json
from pathlib import Path

from slimtools.cli import main
from slimtools.proxy.install import (
    HEADERS_ENV,
    URL_ENV,
    client_config_paths,
    proxied_entry,
    unproxied_entry,
)

GITHUB = {
    "command": "npx",
    "args": ["-y", "@modelcontextprotocol/server-github"],
    "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_x"},
}
REMOTE = {
    "type": "http",
    "url": "https://mcp.example/mcp",
    "headers": {"Authorization": "Bearer t"},
}


def _write(path: Path, data: dict) -> Path:
    path.write_text(json.dumps(data))
    return path


def test_a_stdio_entry_goes_through_the_proxy_keeping_its_key_and_env(tmp_path, capsys):
    """The command becomes slimtools proxy -- <the old command>; env and key are kept."""
    path = _write(tmp_path / "claude_desktop_config.json", {"mcpServers": {"github": GITHUB}})
    config = tmp_path / "slim.toml"
    config.write_text("max_tokens = 5000\n")
    assert main(["proxy", "install", "--file", str(path), "--config", str(config)]) == 0
    entry = json.loads(path.read_text())["mcpServers"]["github"]
    args = entry["args"]
    assert args[args.index("--") + 1 :] == ["npx", "-y", "@modelcontextprotocol/server-github"]
    assert args[args.index("--config") + 1] == str(config.resolve())
    assert "proxy" in args
    assert entry["env"] == GITHUB["env"]
    assert "now through the proxy" in capsys.readouterr().out


def test_the_original_file_is_backed_up(tmp_path):
    """Before writing, the file is copied to <file>.slimtools-backup."""
    original = {"mcpServers": {"github": GITHUB}}
    path = _write(tmp_path / "mcp.json", original)
    main(["proxy", "install", "--file", str(path)])
    backup = tmp_path / "mcp.json.slimtools-backup"
    assert json.loads(backup.read_text()) == original


def test_installing_twice_changes_nothing_the_second_time(tmp_path, capsys):
    """An entry already through the proxy is left alone."""
    path = _write(tmp_path / "mcp.json", {"mcpServers": {"github": GITHUB}})
    main(["proxy", "install", "--file", str(path)])
    once = path.read_text()
    capsys.readouterr()
    main(["proxy", "install", "--file", str(path)])
    assert path.read_text() == once
    assert "nothing to change" in capsys.readouterr().out


def test_undo_restores_every_entry_as_it_was(tmp_path):
    """``--undo`` puts the original entries back."""
    original = {"mcpServers": {"github": GITHUB, "remote": REMOTE}}
    path = _write(tmp_path / "mcp.json", original)
    main(["proxy", "install", "--file", str(path)])
    main(["proxy", "install", "--file", str(path), "--undo"])
    assert json.loads(path.read_text()) == original


def test_an_http_entry_becomes_an_upstream_url_with_its_headers_in_env():
    """A remote server is proxied with --upstream-url; its headers ride in env, off argv."""
    entry = proxied_entry(REMOTE, None, ["/bin/slimtools"])
    assert entry is not None
    assert entry["command"] == "/bin/slimtools"
    assert entry["args"] == ["proxy", "--upstream-url", "https://mcp.example/mcp"]
    assert json.loads(entry["env"][HEADERS_ENV]) == {"Authorization": "Bearer t"}
    assert unproxied_entry(entry) == REMOTE


def test_no_secret_of_an_http_entry_reaches_the_command_line(tmp_path):
    """``ps`` shows argv to every user: the Authorization header is never in it."""
    path = _write(tmp_path / "mcp.json", {"mcpServers": {"remote": REMOTE}})
    main(["proxy", "install", "--file", str(path)])
    entry = json.loads(path.read_text())["mcpServers"]["remote"]
    assert not any("Bearer" in arg for arg in [entry["command"], *entry["args"]])


def test_the_proxy_reads_its_upstream_headers_from_env(monkeypatch):
    """``$SLIMTOOLS_UPSTREAM_HEADERS`` becomes the upstream's headers; --header adds to it."""
    import argparse

    from slimtools.cli.proxy import _upstream

    monkeypatch.setenv(HEADERS_ENV, json.dumps({"Authorization": "Bearer t"}))
    args = argparse.Namespace(header=["X-Extra: 1"], upstream_url="https://u", upstream=[])
    spec = _upstream(args)
    assert dict(spec.headers) == {"Authorization": "Bearer t", "X-Extra": "1"}


def test_undo_restores_the_file_byte_for_byte(tmp_path):
    """Install then ``--undo`` gives back the very bytes (spacing, key order, no newline)."""
    path = tmp_path / "mcp.json"
    servers = json.dumps({"github": GITHUB})
    original = '{ "mcpServers" : ' + servers + ',\n\t"theme": "dark"}'
    path.write_text(original)
    main(["proxy", "install", "--file", str(path)])
    main(["proxy", "install", "--file", str(path), "--undo"])
    assert path.read_text() == original


def test_a_second_install_keeps_the_first_backup(tmp_path):
    """Installing again after adding a server never overwrites the pre-proxy backup."""
    path = tmp_path / "mcp.json"
    original = json.dumps({"mcpServers": {"github": GITHUB}})
    path.write_text(original)
    main(["proxy", "install", "--file", str(path)])
    data = json.loads(path.read_text())
    data["mcpServers"]["other"] = {"command": "other-server"}
    path.write_text(json.dumps(data))
    main(["proxy", "install", "--file", str(path)])
    assert (tmp_path / "mcp.json.slimtools-backup").read_text() == original


def test_install_names_the_backup_file_and_undo_says_restart_to_stop(tmp_path, capsys):
    """The messages name the real backup path, and after --undo the restart stops the proxy."""
    path = _write(tmp_path / "mcp.json", {"mcpServers": {"github": GITHUB}})
    main(["proxy", "install", "--file", str(path)])
    out = capsys.readouterr().out
    assert f"backups: {path}.slimtools-backup;" in out
    assert "<file>" not in out
    main(["proxy", "install", "--file", str(path), "--undo"])
    assert "restart the client to stop using the proxy" in capsys.readouterr().out


def test_a_missing_proxy_config_is_refused(tmp_path, capsys):
    """``--config`` naming no file exits 2 and leaves the client's file alone."""
    path = _write(tmp_path / "mcp.json", {"mcpServers": {"github": GITHUB}})
    before = path.read_text()
    assert main(["proxy", "install", "--file", str(path), "--config", "nope.toml"]) == 2
    assert "no such file" in capsys.readouterr().err
    assert path.read_text() == before


def test_an_invalid_proxy_config_is_refused_with_its_message(tmp_path, capsys):
    """A config the proxy would refuse at start is refused at install, file:line:key."""
    config = tmp_path / "slim.toml"
    config.write_text("[tools.t]\nlimt = 3\n")
    path = _write(tmp_path / "mcp.json", {"mcpServers": {"github": GITHUB}})
    assert main(["proxy", "install", "--file", str(path), "--config", str(config)]) == 2
    assert "tools.t.limt: unknown option" in capsys.readouterr().err


def test_a_partial_client_name_is_an_unknown_client(capsys):
    """``--client code`` (a piece of claude-code) exits 2 with the valid names."""
    assert main(["proxy", "install", "--client", "code"]) == 2
    assert "claude-code" in capsys.readouterr().err


def test_claude_code_project_servers_are_rewritten_too(tmp_path):
    """~/.claude.json keeps servers per project: those are proxied as well."""
    data = {"projects": {"/repo": {"mcpServers": {"github": GITHUB}}}}
    path = _write(tmp_path / ".claude.json", data)
    main(["proxy", "install", "--file", str(path), "--server", "github"])
    entry = json.loads(path.read_text())["projects"]["/repo"]["mcpServers"]["github"]
    assert "--" in entry["args"]


def test_dry_run_writes_nothing(tmp_path):
    """``--dry-run`` reports the change and leaves the file as it was."""
    path = _write(tmp_path / "mcp.json", {"mcpServers": {"github": GITHUB}})
    before = path.read_text()
    main(["proxy", "install", "--file", str(path), "--dry-run"])
    assert path.read_text() == before


def test_client_config_paths_name_each_clients_files(tmp_path):
    """Claude Desktop, Cursor and Claude Code each have their known config locations."""
    assert client_config_paths("cursor", tmp_path)[-1] == tmp_path / ".cursor/mcp.json"
    assert client_config_paths("claude-code", tmp_path)[-1] == tmp_path / ".claude.json"
    assert client_config_paths("claude-desktop", tmp_path)[0].name == "claude_desktop_config.json"


def test_an_unknown_client_is_an_error(capsys):
    """A client name that is not known exits 2 with the valid names."""
    assert main(["proxy", "install", "--client", "vscode"]) == 2
    assert "claude-desktop" in capsys.readouterr().err


def test_a_url_holding_a_key_stays_off_the_command_line(tmp_path):
    """A remote URL with ``?api_key=`` (or credentials) rides in env, not in argv."""
    remote = {"type": "http", "url": "https://mcp.example/mcp?api_key=sk-live-abcdef123456"}
    path = _write(tmp_path / "mcp.json", {"mcpServers": {"remote": remote}})
    main(["proxy", "install", "--file", str(path)])
    entry = json.loads(path.read_text())["mcpServers"]["remote"]
    assert not any("api_key" in arg for arg in [entry["command"], *entry["args"]])
    assert entry["env"][URL_ENV] == remote["url"]
    assert unproxied_entry(entry) == remote


def test_the_proxy_reads_its_upstream_url_from_env(monkeypatch):
    """``$SLIMTOOLS_UPSTREAM_URL`` is the upstream when neither a URL nor a command is given."""
    import argparse

    from slimtools.cli.proxy import _upstream

    monkeypatch.setenv(URL_ENV, "https://u/mcp?token=abc123456789")
    spec = _upstream(argparse.Namespace(header=[], upstream_url=None, upstream=[]))
    assert spec.url == "https://u/mcp?token=abc123456789"
    assert "abc123456789" not in spec.describe()


def test_an_sse_entry_is_left_as_it_is(tmp_path, capsys):
    """The proxy speaks streamable HTTP only: an SSE server is not rewritten into one it
    cannot reach."""
    sse = {"type": "sse", "url": "https://mcp.example/sse"}
    path = _write(tmp_path / "mcp.json", {"mcpServers": {"old": sse}})
    assert main(["proxy", "install", "--file", str(path)]) == 0
    assert json.loads(path.read_text())["mcpServers"]["old"] == sse
    assert "nothing to change" in capsys.readouterr().out


def test_http_headers_that_are_not_a_table_are_a_clear_error(tmp_path, capsys):
    """``"headers": [...]`` names the file and the server, exit status 1, file unchanged."""
    entry = {"url": "https://mcp.example/mcp", "headers": ["Authorization: Bearer t"]}
    path = _write(tmp_path / "mcp.json", {"mcpServers": {"remote": entry}})
    before = path.read_text()
    assert main(["proxy", "install", "--file", str(path)]) == 1
    assert "remote" in capsys.readouterr().err
    assert path.read_text() == before
