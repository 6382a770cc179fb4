"""Shared fixtures: the callable-kind matrix, a sync caller, and a clean default toolkit."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from slimtools.instrumentation import REGISTRY
from slimtools.testing import reset_defaults
from tests._profile import FULL, examples
from tests.core_helpers import KINDS, build_tool, call_sync

# No per-example deadline: a deadline is a timing assertion, and unit tests make none (speed
# is measured in benchmarks/). Slow CI machines would otherwise fail at random. The light
# profile (the default outside ``make test``) tries fewer examples: see tests/_profile.py.
# The too_slow health check times data generation, so a loaded machine fails it by chance.
_UNTIMED = [HealthCheck.too_slow]
settings.register_profile("full", deadline=None, suppress_health_check=_UNTIMED)
settings.register_profile(
    "light", deadline=None, max_examples=examples(100), suppress_health_check=_UNTIMED
)
settings.load_profile("full" if FULL else "light")


@pytest.fixture(params=KINDS, scope="session")
def kind(request: pytest.FixtureRequest) -> str:
    """Each callable kind in turn: sync and async function, method, classmethod, staticmethod.

    Session-scoped (it is a constant string) so that hypothesis tests may use it.
    """
    return str(request.param)


@pytest.fixture(scope="session")
def make_tool(kind: str) -> Callable[..., Any]:
    """Build ``search(query)`` of the current kind: ``make_tool([decorators], body)``."""

    def make(decorators: Sequence[Any], body: Callable[[str], Any], *, name: str = "search") -> Any:
        return build_tool(kind, decorators, body, name=name)

    return make


@pytest.fixture(scope="session")
def call() -> Callable[..., Any]:
    """Call a tool synchronously whatever its kind (``asyncio.run`` for async tools)."""
    return call_sync


@pytest.fixture(autouse=True)
def _fresh_default_toolkit() -> Iterator[None]:
    """Forget the default toolkit's handles and snapshots after each test.

    Unregistered decorated tools keep their handles and page-1 snapshots in
    ``slimtools.default_toolkit``, shared by the whole process; tests reuse tool names and
    arguments, so without this one test could read another's snapshot.
    """
    yield
    reset_defaults()


@pytest.fixture(autouse=True)
def _no_leftover_listeners() -> Iterator[None]:
    """Unsubscribe what a test left subscribed with ``observe`` (a test that fails before
    its ``unsubscribe`` would otherwise make every later test emit to its listener)."""
    before = set(REGISTRY.listeners)
    yield
    for subscription in REGISTRY.listeners:
        if subscription not in before:
            subscription.unsubscribe()
