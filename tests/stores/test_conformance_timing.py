"""The conformance suite on real time: a stalled machine does not fail its TTL check."""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping
from typing import Any

from slimtools.stores import MemoryStore
from slimtools.testing import StoreConformance
from slimtools.typing import HandleStore, Scope


class _StallingStore(MemoryStore):
    """A memory store on the real clock whose writes return after their TTL has passed."""

    def put_many(self, scope: Scope, items: Mapping[str, Any]) -> Collection[str]:
        refused = super().put_many(scope, items)
        time.sleep(0.1)  # the machine stalls between the write and the read
        return refused


class _RealTimeSuite(StoreConformance):
    short_ttl = 0.05

    def make_store(self, **options: Any) -> HandleStore:
        return _StallingStore(ttl=options.get("ttl"))


def test_a_stall_past_the_ttl_does_not_fail_the_expiry_check():
    """A read that comes after the TTL on real time expects nothing before it, and passes."""
    suite = _RealTimeSuite()
    try:
        suite.test_records_expire_after_ttl()
    finally:
        suite.teardown_method()
