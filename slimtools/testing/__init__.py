"""Helpers for tests of code that uses slimtools, and the conformance suite for handle stores.

``reset_defaults()`` gives each test a clean default toolkit (call it from a fixture). The
store suite is shipped the way cachetools ships its test mixins: subclass
:class:`StoreConformance` in a test module, say how to build your store, and pytest (or
unittest) runs every check a ``HandleStore`` must pass::

    from slimtools.testing import AsyncStoreConformance, StoreConformance, fail

    class TestMyStore(StoreConformance):
        def make_store(self, *, ttl=None, max_record_bytes=None, **bounds):
            return MyStore(ttl=ttl, max_record_bytes=max_record_bytes)

        def break_store(self, store):
            store._client = fail  # every later access fails inside the store

A store that can drop one toolkit's entries (``forget``, for ``Toolkit.reset``) also mixes in
:class:`ForgettingStoreConformance`; bounded and async stores, :class:`BoundedStoreConformance`
and :class:`AsyncStoreConformance`.

The checks are plain methods with no test-framework import: pytest collects them from a
class named ``Test*``; with unittest, also inherit ``unittest.TestCase``.
"""

from __future__ import annotations

from slimtools.testing._store_variants import (
    AsyncStoreConformance,
    BoundedStoreConformance,
    ForgettingStoreConformance,
)
from slimtools.testing._stores import InnerFailureError, StoreConformance, afail, fail
from slimtools.toolkit import default_toolkit

__all__ = [
    "AsyncStoreConformance",
    "BoundedStoreConformance",
    "ForgettingStoreConformance",
    "InnerFailureError",
    "StoreConformance",
    "afail",
    "fail",
    "reset_defaults",
]


def reset_defaults() -> None:
    """Forget what tools outside any toolkit stored: ``default_toolkit.reset()``.

    Unregistered decorated tools keep their handles and page-1 snapshots in
    ``slimtools.default_toolkit``, shared by the whole process. Tests that reuse tool names
    and arguments would read each other's snapshots; call this between tests (an autouse
    fixture that calls it after ``yield``). Registered tools stay registered.
    """
    default_toolkit.reset()
