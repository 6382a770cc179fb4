"""SQLiteStore beyond the conformance suite: WAL, transactions, threads, processes, crashes."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sqlite3
import time
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slimtools import Toolkit, paginate, session, summarize_with_handle
from slimtools.errors import ConfigurationError, StoreUnavailableError
from slimtools.stores import SQLiteStore
from slimtools.typing import Scope
from tests._profile import examples
from tests.stores.store_fixtures import (
    SPAWN,
    logs_toolkit,
    misplaced,
    run_processes,
    run_threads,
    written_keys,
)

SCOPE = Scope("kit")


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


CONTENDED = 60.0
"""The busy timeout of stores that contend for one file on purpose: a loaded machine may hold
a writer's lock past the 5 s default, and these tests are about correctness, not waiting."""


def _raw(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


def test_database_runs_in_wal_mode(tmp_path: Path) -> None:
    """The file is switched to write-ahead logging, so readers never block the writer."""
    SQLiteStore(tmp_path / "h.db").close()
    assert _raw(tmp_path / "h.db").execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_put_many_is_one_transaction(tmp_path: Path) -> None:
    """A 100-record tool call commits once, not once per record."""
    store = SQLiteStore(tmp_path / "h.db")
    statements: list[str] = []
    store._connection().set_trace_callback(statements.append)
    store.put_many(SCOPE, {f"r:t:{i}": {"id": i} for i in range(100)})
    assert [s for s in statements if s.split()[0] in ("BEGIN", "COMMIT")] == [
        "BEGIN IMMEDIATE",
        "COMMIT",
    ]


def test_records_survive_reopening(tmp_path: Path) -> None:
    """A new store on the same file reads what an earlier one wrote."""
    first = SQLiteStore(tmp_path / "h.db")
    first.put_many(SCOPE, {"a": {"v": 1}})
    first.close()
    assert SQLiteStore(tmp_path / "h.db").get_many(SCOPE, ["a"]) == {"a": {"v": 1}}


def test_eviction_is_oldest_written_first_even_if_read(tmp_path: Path) -> None:
    """Eviction is FIFO by write (documented): reading a record does not keep it longer."""
    store = SQLiteStore(tmp_path / "h.db", max_items=2)
    store.put_many(SCOPE, {"a": 1})
    store.put_many(SCOPE, {"b": 2})
    store.get_many(SCOPE, ["a"])
    store.put_many(SCOPE, {"c": 3})
    assert store.get_many(SCOPE, ["a", "b", "c"]) == {"b": 2, "c": 3}


def test_rewriting_a_record_makes_it_newest(tmp_path: Path) -> None:
    """A record written again moves to the back of the eviction queue."""
    store = SQLiteStore(tmp_path / "h.db", max_items=2)
    store.put_many(SCOPE, {"a": 1, "b": 2})
    store.put_many(SCOPE, {"a": 10})
    store.put_many(SCOPE, {"c": 3})
    assert store.get_many(SCOPE, ["a", "b", "c"]) == {"a": 10, "c": 3}


def test_expired_rows_are_deleted_by_the_next_write(tmp_path: Path) -> None:
    """Expired records stop counting once any later write runs."""
    clock = FakeClock()
    store = SQLiteStore(tmp_path / "h.db", ttl=10, clock=clock)
    store.put_many(SCOPE, {"a": 1, "b": 2})
    clock.now += 11
    store.put_many(SCOPE, {"c": 3})
    assert (len(store), store.get_many(SCOPE, ["a", "b", "c"])) == (1, {"c": 3})


def test_ttl_is_shared_by_stores_on_one_file(tmp_path: Path) -> None:
    """Expiry is stored as wall-clock time, so another process's store honours it."""
    clock = FakeClock()
    SQLiteStore(tmp_path / "h.db", ttl=5, clock=clock).put_many(SCOPE, {"a": 1})
    later = FakeClock()
    later.now = clock.now + 6
    assert SQLiteStore(tmp_path / "h.db", clock=later).get_many(SCOPE, ["a"]) == {}


@settings(
    max_examples=examples(40),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    ops=st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "c", "d", "e", "f", "g"]),
            st.integers(min_value=0, max_value=900),
            st.integers(min_value=0, max_value=3),
        ),
        min_size=1,
        max_size=40,
    )
)
def test_totals_match_the_rows_through_overwrites_evictions_and_expiry(
    tmp_path: Path, ops: list[tuple[str, int, int]]
) -> None:
    """Property: the trigger-kept totals always equal count(*) and sum(size) of the table."""
    clock = FakeClock()
    path = tmp_path / f"{time.monotonic_ns()}.db"
    store = SQLiteStore(path, max_items=4, max_bytes=2_000, ttl=3, clock=clock)
    raw = _raw(path)
    for key, size, wait in ops:
        clock.now += wait
        store.put_many(SCOPE, {key: "z" * size})
        count, total = raw.execute("SELECT count(*), total(size) FROM slimtools_handles").fetchone()
        assert (len(store), store.nbytes) == (count, int(total))
        assert count <= 4
        assert total <= 2_000
    store.close()


def test_a_locked_database_raises_store_unavailable(tmp_path: Path) -> None:
    """A write lock held past busy_timeout gives StoreUnavailableError, not sqlite3 errors."""
    store = SQLiteStore(tmp_path / "h.db", busy_timeout=0.05)
    store.put_many(SCOPE, {"a": 1})
    other = _raw(tmp_path / "h.db")
    other.execute("BEGIN IMMEDIATE")
    with pytest.raises(StoreUnavailableError, match="locked"):
        store.put_many(SCOPE, {"b": 2})
    assert store.get_many(SCOPE, ["a"]) == {"a": 1}  # WAL readers go on
    other.execute("ROLLBACK")
    store.put_many(SCOPE, {"b": 2})  # the connection is usable again
    assert store.get_many(SCOPE, ["b"]) == {"b": 2}


def test_an_unopenable_path_raises_store_unavailable_on_use(tmp_path: Path) -> None:
    """A file in a missing directory opens nothing, and each use says the store is unavailable."""
    store = SQLiteStore(tmp_path / "missing" / "h.db")
    with pytest.raises(StoreUnavailableError, match="missing"):
        store.put_many(SCOPE, {"a": 1})
    with pytest.raises(StoreUnavailableError, match="missing"):
        store.get_many(SCOPE, ["a"])


def test_a_corrupt_file_degrades_tools_like_an_unreachable_redis(tmp_path: Path, caplog) -> None:
    """``Toolkit(...)`` on a corrupt file starts; tools answer and say the store is down."""
    path = tmp_path / "corrupt.db"
    path.write_bytes(b"this is not a database, just junk " * 200)
    kit = logs_toolkit(f"sqlite:///{path}")
    assert "corrupt.db" in caplog.text
    result = kit.call("search_logs", {"query": "q"})
    assert not result.is_error
    assert "handle store is unavailable" in result.text
    assert "unavailable" in kit.get_record(0)


def test_a_store_that_could_not_open_recovers_once_the_file_can_be(tmp_path: Path) -> None:
    """Opening is retried on use: a directory created later makes the store work."""
    store = SQLiteStore(tmp_path / "later" / "h.db")
    with pytest.raises(StoreUnavailableError):
        store.get_many(SCOPE, ["a"])
    (tmp_path / "later").mkdir()
    store.put_many(SCOPE, {"a": 1})
    assert store.get_many(SCOPE, ["a"]) == {"a": 1}


# -- defaults, expiry and file size -------------------------------------------------------


def test_defaults_match_the_other_stores(tmp_path: Path) -> None:
    """One hour TTL, 100,000 records, 256 MiB, 16 MiB a record: as memory and Redis."""
    store = SQLiteStore(tmp_path / "h.db")
    assert (store.ttl, store.max_items, store.max_bytes, store.max_record_bytes) == (
        3600.0,
        100_000,
        256 * 1024 * 1024,
        16 * 1024 * 1024,
    )


def test_a_page_snapshot_is_never_served_past_its_ttl(tmp_path: Path) -> None:
    """An hour after page 1, page 2 is fetched again rather than read from a stale snapshot."""
    clock = FakeClock()
    kit = logs_toolkit(SQLiteStore(tmp_path / "h.db", clock=clock))
    kit.call("search_logs", {"query": "q"})
    assert "fetched again" not in kit.call("search_logs", {"query": "q", "page": 2}).text
    clock.now += 3601
    assert "fetched again" in kit.call("search_logs", {"query": "q", "page": 2}).text


def _file_bytes(path: Path) -> int:
    """The database file and its WAL and shared-memory files."""
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def test_new_files_reuse_and_return_freed_pages(tmp_path: Path) -> None:
    """New files are created with incremental auto-vacuum."""
    SQLiteStore(tmp_path / "h.db").put_many(SCOPE, {"a": 1})
    assert _raw(tmp_path / "h.db").execute("PRAGMA auto_vacuum").fetchone()[0] == 2


def test_the_file_stops_growing_as_records_expire(tmp_path: Path) -> None:
    """Hour after hour of writes keep the file at about one hour's worth of records."""
    clock = FakeClock()
    path = tmp_path / "h.db"
    store = SQLiteStore(path, clock=clock)
    blob = "x" * 50_000
    sizes = []
    for hour in range(6):
        for i in range(40):
            store.put_many(SCOPE, {f"{hour}:{i}": blob})
        sizes.append(_file_bytes(path))
        clock.now += 3601
    written = 6 * 40 * len(blob)
    assert max(sizes[1:]) == sizes[1], sizes  # a plateau from the second hour on
    assert sizes[-1] < written / 2, sizes  # far below everything ever written


def test_the_file_shrinks_once_its_records_are_gone(tmp_path: Path) -> None:
    """Space freed by expiry goes back to the file system, not only to later writes."""
    clock = FakeClock()
    path = tmp_path / "h.db"
    store = SQLiteStore(path, clock=clock)
    store.put_many(SCOPE, {f"k{i}": "x" * 50_000 for i in range(200)})
    full = _file_bytes(path)
    clock.now += 3601
    store.put_many(SCOPE, {"small": 1})
    store.close()  # the last connection checkpoints the WAL into the database file
    assert _file_bytes(path) < full / 4


def test_a_closed_store_raises_store_unavailable(tmp_path: Path) -> None:
    """Using a store after close() is reported, not a crash on a closed connection."""
    store = SQLiteStore(tmp_path / "h.db")
    store.close()
    with pytest.raises(StoreUnavailableError, match="closed"):
        store.get_many(SCOPE, ["a"])


def test_an_undecodable_row_reads_as_absent(tmp_path: Path) -> None:
    """A damaged value is treated as missing (and logged), never returned or raised."""
    store = SQLiteStore(tmp_path / "h.db")
    store.put_many(SCOPE, {"a": 1, "b": 2})
    _raw(tmp_path / "h.db").execute(
        "UPDATE slimtools_handles SET value = x'ff00' WHERE key = CAST('a' AS BLOB)"
    )
    assert store.get_many(SCOPE, ["a", "b"]) == {"b": 2}


def test_a_newer_schema_is_refused_clearly(tmp_path: Path) -> None:
    """A file written by a future schema version raises ConfigurationError on open."""
    _raw(tmp_path / "h.db").execute("PRAGMA user_version = 99")
    with pytest.raises(ConfigurationError, match="v99"):
        SQLiteStore(tmp_path / "h.db")


def test_negative_limits_are_rejected() -> None:
    """Limits must be positive or None."""
    with pytest.raises(ValueError, match="max_items"):
        SQLiteStore("unused.db", max_items=0)


def test_more_keys_than_one_select_takes(tmp_path: Path) -> None:
    """get_many with thousands of keys (more than one SELECT's parameters) finds them all."""
    store = SQLiteStore(tmp_path / "h.db")
    batch = {f"r:t:{i}": i for i in range(2_345)}
    store.put_many(SCOPE, batch)
    assert store.get_many(SCOPE, [*batch, "nope"]) == batch


def test_threads_write_and_read_without_losing_or_mixing_records(tmp_path: Path) -> None:
    """Eight threads writing and reading at once: every record lands under its own key."""
    store = SQLiteStore(tmp_path / "h.db", busy_timeout=CONTENDED)
    assert run_threads(store, SCOPE, batches=30, size=20) == []
    assert misplaced(store, SCOPE, written_keys("t", 8, 30, 20)) == []


@pytest.mark.subprocess
def test_processes_share_one_file_without_losing_or_mixing_records(tmp_path: Path) -> None:
    """Four spawned processes writing and reading one file: no lost or crossed records."""
    path = str(tmp_path / "h.db")
    SQLiteStore(path).close()
    writers = partial(SQLiteStore, path, busy_timeout=CONTENDED)
    assert run_processes(writers, SCOPE, batches=40, size=25) == []
    assert misplaced(SQLiteStore(path), SCOPE, written_keys("p", 4, 40, 25)) == []


def test_a_forked_child_opens_its_own_connection(tmp_path: Path) -> None:
    """After fork (gunicorn-style) the child writes through a fresh connection."""
    store = SQLiteStore(tmp_path / "h.db")
    store.put_many(SCOPE, {"parent": 1})
    child = multiprocessing.get_context("fork").Process(
        target=store.put_many, args=(SCOPE, {"child": 2})
    )
    child.start()
    child.join()
    assert child.exitcode == 0
    assert store.get_many(SCOPE, ["parent", "child"]) == {"parent": 1, "child": 2}


def _crash_writer(path: str, log: str) -> None:
    """Write batches forever, logging each batch number after its put_many returned."""
    store = SQLiteStore(path)
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    n = 0
    while True:
        batch = {f"b{n}:{j}": {"n": n, "j": j, "pad": "x" * 300} for j in range(50)}
        batch[f"s{n}"] = [{"row": i} for i in range(500)]
        store.put_many(SCOPE, batch)
        os.write(fd, f"{n}\n".encode())
        n += 1


def _batch_state(store: SQLiteStore, n: int) -> str:
    keys = [f"b{n}:{j}" for j in range(50)] + [f"s{n}"]
    got = store.get_many(SCOPE, keys)
    if not got:
        return "absent"
    whole = len(got) == 51 and all(got[f"b{n}:{j}"]["j"] == j for j in range(50))
    return "whole" if whole else "partial"


def _wait_for_lines(log: Path, count: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log.exists() and log.read_text().count("\n") >= count:
            return
        time.sleep(0.01)
    raise AssertionError(f"the writer did not log {count} batches in {timeout} s")


@pytest.mark.subprocess
@pytest.mark.parametrize("round_", range(3))
def test_sigkill_mid_write_leaves_every_returned_batch_readable(
    tmp_path: Path, round_: int
) -> None:
    """Kill a writer with SIGKILL mid-stream: no corruption, every returned batch reads whole."""
    path, log = tmp_path / "h.db", tmp_path / "returned.log"
    writer = SPAWN.Process(target=_crash_writer, args=(str(path), str(log)))
    writer.start()
    _wait_for_lines(log, 10 + 7 * round_)
    assert writer.pid is not None
    os.kill(writer.pid, signal.SIGKILL)
    writer.join()
    returned = [int(line) for line in log.read_text().split()]
    assert _raw(path).execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    store = SQLiteStore(path)
    states: dict[int, Any] = {n: _batch_state(store, n) for n in returned}
    assert set(states.values()) == {"whole"}
    assert _batch_state(store, max(returned) + 1) in ("whole", "absent")  # never partial
    store.put_many(SCOPE, {"after": 1})  # the file takes writes again
    assert store.get_many(SCOPE, ["after"]) == {"after": 1}


def test_toolkits_sharing_a_file_resolve_each_others_handles(tmp_path: Path) -> None:
    """A handle surfaced by one worker's Toolkit resolves in another's (same name and file)."""

    url = f"sqlite:///{tmp_path}/shared.db"
    writer, reader = logs_toolkit(url), logs_toolkit(url)
    writer.call("search_logs", '{"query": "boom"}')
    assert '"tenant":"t-9"' in reader.get_record(1)
    with session("someone-else"):
        assert '"tenant"' not in reader.get_record(1)


def test_an_id_beyond_64_bits_stays_exact_in_get_record_and_page_two(tmp_path: Path) -> None:
    """A snowflake id read back from the file is the same integer, not a rounded float."""
    kit = Toolkit("snowflakes", store=SQLiteStore(tmp_path / "h.db"))
    big = 2**70 + 1

    @kit.tool
    @summarize_with_handle(key="id")
    @paginate(limit=1)
    def search(query: str) -> list[dict[str, Any]]:
        """Search."""
        return [{"id": big}, {"id": 5, "parent": big}]

    kit.call("search", {"query": "q"})
    assert kit.get_record(big) == f'{{"id":{big}}}'
    assert f'"parent":{big}' in kit.call("search", {"query": "q", "page": 2}).text
