"""``mcp-server-sqlite`` behind the proxy: ``read_query`` answers with the ``str()`` of its rows.

5,000 rows with long texts make a one-line Python repr of over 2,000,000 characters. With
no config it comes back as records (automatic briefs, each reachable by ``get_record``);
with ``fields``/``deny`` the repr is read as records and the denied column is never shown.
The server needs ``mcp<2``, so it runs from its own venv (``.cache/sqlite-venv``).
"""

from __future__ import annotations

import ast
import json
import sqlite3

import pytest

from slimtools.tokens import count_tokens
from tests.proxy.proxy_fixtures import envelope, text_of
from tests.proxy.real_servers import SQLITE_SERVER, connected, follow, notes_database, require

pytestmark = pytest.mark.subprocess

QUERY = {"query": "SELECT * FROM notes"}


@pytest.fixture(scope="module")
def database(tmp_path_factory) -> str:
    """A 5,000-row notes table (the server's venv is required)."""
    require(SQLITE_SERVER.exists(), f"mcp-server-sqlite is not installed at {SQLITE_SERVER}")
    return str(notes_database(tmp_path_factory.mktemp("sqlite") / "notes.db"))


def _server(database: str) -> list[str]:
    return [str(SQLITE_SERVER), "--db-path", database]


async def _direct(database: str) -> str:
    async with connected(_server(database), "--direct") as client:
        return text_of(await client.call_tool("read_query", QUERY))


async def test_a_huge_repr_becomes_briefs_and_every_row_is_reachable(database):
    """No config: a 2,000,000-character repr pages as briefs; get_record gives each row."""
    raw = await _direct(database)
    rows = ast.literal_eval(raw)
    async with connected(_server(database)) as client:
        pages = await follow(client, "read_query", QUERY)
        briefs = [b for page in pages for b in page["briefs"]]
        sample = briefs[:: len(briefs) // 25]
        fetched = [
            json.loads(text_of(await client.call_tool("get_record", {"handle": b["handle"]})))
            for b in sample
        ]
    assert len(raw) > 2_000_000
    assert [b["id"] for b in briefs] == [r["id"] for r in rows]
    assert fetched == [rows[b["id"] - 1] for b in sample]
    assert count_tokens(raw) >= 5 * count_tokens(json.dumps(pages[0]))


async def test_a_denied_column_is_never_shown_and_the_rest_is_records(database, tmp_path):
    """fields/deny: the repr is read as records, and no page or record shows the email."""
    config = tmp_path / "slim.toml"
    config.write_text(
        '[tools.read_query]\nfields = ["id", "title", "body:60"]\ndeny = ["email"]\nkey = "id"\n'
    )
    async with connected(_server(database), "--config", str(config)) as client:
        pages = await follow(client, "read_query", QUERY)
        record = text_of(await client.call_tool("get_record", {"handle": 4_321}))
    shown = json.dumps(pages, ensure_ascii=False) + record
    assert sum(len(page["briefs"]) for page in pages) == 5_000
    assert json.loads(record)["title"] == "note 4321"
    assert "@example.com" not in shown
    assert "email" not in shown


async def test_a_deny_only_config_keeps_every_other_column(database, tmp_path):
    """deny alone: every row is a record with every column but the denied one."""
    config = tmp_path / "slim.toml"
    config.write_text('[tools.read_query]\ndeny = ["email"]\n')
    async with connected(_server(database), "--config", str(config)) as client:
        first = await follow(client, "read_query", {**QUERY, "limit": 100})
    briefs = [b for page in first for b in page["briefs"]]
    assert len(briefs) == 5_000
    assert {k for k in briefs[0] if k != "handle"} == {"id", "title", "body"}


@pytest.fixture(scope="module")
def two_tables(tmp_path_factory) -> str:
    """The notes table and a 400-row ``orders`` table of short columns."""
    require(SQLITE_SERVER.exists(), f"mcp-server-sqlite is not installed at {SQLITE_SERVER}")
    path = notes_database(tmp_path_factory.mktemp("sqlite2") / "shop.db", rows=300)
    con = sqlite3.connect(path)
    con.execute(
        "create table orders (order_id integer primary key, sku text, price real, "
        "stock integer, status text, placed_at text, note text)"
    )
    con.executemany(
        "insert into orders values (?, ?, ?, ?, ?, ?, ?)",
        (
            (
                i,
                f"SKU-{i:05d}",
                9.5 + i,
                i % 13,
                ["open", "paid", "sent"][i % 3],
                f"2024-02-{1 + i % 28:02d}T12:00:00",
                "handle with care, " * 12,
            )
            for i in range(1, 401)
        ),
    )
    con.commit()
    con.close()
    return str(path)


async def test_the_second_tables_rows_show_their_own_columns(two_tables):
    """No config, on the real server: after a query over notes, one over orders shows the
    orders' short columns (never bare handles), and only the head of their long note."""
    async with connected(_server(two_tables)) as client:
        await client.call_tool("read_query", QUERY)
        orders = await client.call_tool("read_query", {"query": "SELECT * FROM orders"})
    env = envelope(orders)
    assert {"order_id", "sku", "price", "stock", "status", "placed_at"} <= set(env["briefs"][0])
    assert len(env["briefs"][0]["note"]) <= 81
