"""Live metrics: who hears which event, and listeners that misbehave (slimtools.instrumentation)."""

from __future__ import annotations

import json
import logging
import threading

import pytest

import slimtools
from slimtools import ConfigurationError, Toolkit, paginate, project_fields
from slimtools.clearing import Clearer, ClearingPolicy, clear_stale_results
from slimtools.instrumentation import (
    ClearingPass,
    ProviderCacheMiss,
    RecordLookup,
    SlimmedCall,
    Subscription,
    observe,
    tool_call_id,
)
from slimtools.ledger import TokenLedger
from tests.clearing.strategies_clearing import render, script

FLAT = ClearingPolicy(cache=None, retention={})
ROWS = [{"id": i, "level": "ERROR", "message": "upstream timeout " * 5} for i in range(10)]


def make_kit(name: str = "logs", **options):
    kit = Toolkit(name, **options)

    @kit.tool
    @paginate(limit=3)
    @project_fields(["id", "level"])
    def search(query: str) -> list[dict]:
        """Search the logs."""
        return ROWS

    return kit, search


def history():
    return render("openai_chat", script("t", "t", "t", "t"))


def test_observe_as_a_context_manager_hears_only_inside_the_block():
    """Events made inside the ``with`` block reach the listener; those after it do not."""
    _, search = make_kit()
    heard = []
    with observe(heard.append):
        search("timeout")
    search("timeout")
    assert [type(e) for e in heard] == [SlimmedCall]


def test_unsubscribe_stops_the_events():
    """After ``unsubscribe()`` the listener hears nothing more."""
    _, search = make_kit()
    heard = []
    subscription = observe(heard.append)
    search("a")
    subscription.unsubscribe()
    search("b")
    assert len(heard) == 1
    assert not subscription.active


def test_unsubscribing_twice_is_harmless():
    """A second ``unsubscribe()`` (or leaving a block after one) does nothing."""
    with observe(print) as subscription:
        subscription.unsubscribe()
    subscription.unsubscribe()
    assert "unsubscribed" in repr(subscription)


def test_slimtools_observe_is_the_registry():
    """``slimtools.observe`` is ``slimtools.instrumentation.observe``, returning a Subscription."""
    with slimtools.observe(print) as subscription:
        assert isinstance(subscription, Subscription)
        assert subscription.active
    assert slimtools.observe is observe


def test_a_listener_subscribed_twice_hears_each_event_twice():
    """Each ``observe`` call is its own subscription."""
    _, search = make_kit()
    heard = []
    with observe(heard.append), observe(heard.append):
        search("timeout")
    assert len(heard) == 2


@pytest.mark.parametrize(
    "make",
    [
        lambda: observe(42),
        lambda: Toolkit("x", on_event="print"),
        lambda: Clearer(on_event=3),
    ],
    ids=["observe", "Toolkit", "Clearer"],
)
def test_a_listener_that_is_not_callable_is_refused(make):
    """``observe``, ``Toolkit(on_event=)`` and ``Clearer(on_event=)`` say what they need."""
    with pytest.raises(ConfigurationError, match="must be callable"):
        make()


def test_a_toolkit_listener_hears_only_its_own_tools():
    """``Toolkit(on_event=)`` hears its tools and its get_record, not another toolkit's."""
    mine, theirs = [], []
    kit, search = make_kit("mine", on_event=mine.append)
    _, other = make_kit("theirs", on_event=theirs.append)
    search("a")
    kit.get_record(1)
    other("b")
    assert [type(e) for e in mine] == [SlimmedCall, RecordLookup]
    assert {e.toolkit for e in mine} == {"mine"}
    assert [e.toolkit for e in theirs] == ["theirs"]


def test_the_toolkit_tells_its_listener():
    """``Toolkit.on_event`` is the listener given (None by default)."""
    assert Toolkit("a").on_event is None
    assert Toolkit("b", on_event=print).on_event is print


def test_a_global_listener_hears_every_toolkit_and_unregistered_tools():
    """``observe`` hears every toolkit's calls, the default toolkit's and clearing passes."""
    _, search = make_kit("one")
    _, other = make_kit("two")
    loose = paginate(limit=2)(lambda: [1, 2, 3])
    heard = []
    with observe(heard.append):
        search("a")
        other("b")
        loose()
        clear_stale_results(history(), FLAT)
    assert [getattr(e, "toolkit", None) for e in heard] == ["one", "two", "default", None]
    assert isinstance(heard[-1], ClearingPass)


def test_a_clearer_listener_hears_only_its_own_passes():
    """``Clearer(on_event=)`` hears that clearer's passes, not another's."""
    heard = []
    Clearer(FLAT, on_event=heard.append).clear(history())
    clear_stale_results(history(), FLAT)
    assert [type(e) for e in heard] == [ClearingPass]


def test_the_own_listener_hears_before_the_global_ones():
    """A toolkit's listener gets the event first, then every subscription in order."""
    order = []
    _, search = make_kit(on_event=lambda e: order.append("toolkit"))
    with observe(lambda e: order.append("global")):
        search("a")
    assert order == ["toolkit", "global"]


def test_a_raising_listener_is_logged_once_per_error_type_and_the_call_is_unchanged(caplog):
    """The tool's result is the same; one WARNING with the traceback, later ones at DEBUG."""
    _, search = make_kit()
    expected = search("timeout").to_json()

    def broken(event):
        raise ValueError("listener bug")

    with caplog.at_level(logging.DEBUG, logger="slimtools"), observe(broken):
        results = [search("timeout").to_json() for _ in range(3)]
    assert results == [expected] * 3
    failures = [r for r in caplog.records if "event listener" in r.getMessage()]
    assert [r.levelname for r in failures] == ["WARNING", "DEBUG", "DEBUG"]
    assert failures[0].exc_info is not None
    assert "ValueError" in failures[0].getMessage()


def test_a_new_error_type_of_the_same_listener_warns_again(caplog):
    """Once per listener *and* exception type: a different exception warns once more."""
    _, search = make_kit()
    errors = iter([ValueError("a"), KeyError("b"), ValueError("c")])

    def flaky(event):
        raise next(errors)

    with caplog.at_level(logging.WARNING, logger="slimtools"), observe(flaky):
        for _ in range(3):
            search("q")
    warned = [r for r in caplog.records if "event listener" in r.getMessage()]
    assert ["ValueError" in r.getMessage() for r in warned] == [True, False]


def test_a_raising_listener_does_not_keep_the_others_from_hearing():
    """The listeners after a failing one still get the event."""
    _, search = make_kit(on_event=lambda e: 1 / 0)
    heard = []
    with observe(lambda e: {}["missing"]), observe(heard.append):
        search("q")
    assert len(heard) == 1


def test_a_raising_clearer_listener_leaves_the_clearing_unchanged():
    """The cleared history is the one a policy without a listener gives."""

    def broken(event):
        raise RuntimeError("no")

    expected = clear_stale_results(history(), FLAT)
    assert Clearer(FLAT, on_event=broken).clear(history()) == expected


def test_listeners_added_and_removed_from_many_threads_are_all_accounted():
    """Concurrent subscriptions and unsubscriptions lose none and leave none behind."""
    _, search = make_kit()
    kept: list[Subscription] = []
    lock = threading.Lock()

    def churn():
        for _ in range(200):
            observe(print).unsubscribe()
        subscription = observe(lambda e: None)
        with lock:
            kept.append(subscription)

    threads = [threading.Thread(target=churn) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    heard = []
    with observe(heard.append):
        assert all(s.active for s in kept)
        search("q")
    for subscription in kept:
        subscription.unsubscribe()
    assert len(heard) == 1
    assert not any(s.active for s in kept)


@pytest.mark.parametrize("method", ["clear", "clear_in_place", "clear_with_report"])
def test_every_clearer_call_is_reported(method):
    """``clear``, ``clear_in_place`` and ``clear_with_report`` each report one pass."""
    heard = []
    clearer = Clearer(FLAT, on_event=heard.append)
    getattr(clearer, method)(history())
    assert [type(e) for e in heard] == [ClearingPass]


def test_an_unobserved_clearer_reports_nothing():
    """``Clearer(observed=False)`` is heard by neither its policy's listener nor globally."""
    heard = []
    with observe(heard.append):
        Clearer(FLAT, on_event=heard.append, observed=False).clear(history())
    assert heard == []


def test_the_ledger_replays_are_not_reported():
    """A what-if replay (``TokenLedger.measure``) is not clearing the agent did."""
    heard = []
    with observe(heard.append):
        TokenLedger.measure(history(), FLAT)
    assert heard == []


def test_no_event_is_built_when_nobody_listens(monkeypatch):
    """Without a listener the measuring code is never reached (only a flag is checked)."""

    def unreachable(*args, **kwargs):
        raise AssertionError("an event was built with nobody listening")

    monkeypatch.setattr("slimtools._core.wrapper.observed_run", unreachable)
    monkeypatch.setattr("slimtools.toolkit.observed_lookup", unreachable)
    monkeypatch.setattr("slimtools.clearing._engine.report_pass", unreachable)
    kit, search = make_kit()
    search("timeout")
    kit.get_record(1)
    clear_stale_results(history(), FLAT)


def test_toolkit_call_binds_the_call_id():
    """``Toolkit.call(..., call_id=)`` puts the model's id in the call's event."""
    heard = []
    kit, _ = make_kit(on_event=heard.append)
    kit.call("search", {"query": "a"}, call_id="call_7")
    kit.call("get_record", {"handle": 1}, call_id="call_8")
    kit.call("search", {"query": "a"})
    assert [e.call_id for e in heard] == ["call_7", "call_8", None]


async def test_toolkit_acall_binds_the_call_id():
    """The asynchronous dispatcher binds it too."""
    heard = []
    kit, _ = make_kit(on_event=heard.append)
    await kit.acall("search", {"query": "a"}, call_id="toolu_1")
    assert [e.call_id for e in heard] == ["toolu_1"]


def test_tool_call_id_binds_the_id_for_direct_calls():
    """``with tool_call_id(...)`` names the call of a tool called directly."""
    heard = []
    _, search = make_kit(on_event=heard.append)
    with tool_call_id("call_9"):
        search("a")
    search("b")
    assert [e.call_id for e in heard] == ["call_9", None]


def test_every_event_is_plain_json():
    """``as_dict()`` of each event kind survives ``json.dumps`` and names its kind."""
    heard = []
    kit, search = make_kit(on_event=heard.append)
    with observe(heard.append):
        search("a")
        kit.get_record(2)
        clear_stale_results(history(), FLAT)
    kinds = [json.loads(json.dumps(e.as_dict()))["event"] for e in heard]
    twice = ["slimmed_call", "slimmed_call", "record_lookup", "record_lookup"]
    assert kinds == [*twice, "clearing_pass"]
    assert heard[0].as_dict()["tokens_saved"] == heard[0].tokens_saved


def test_a_provider_cache_miss_is_plain_json_data():
    """``ProviderCacheMiss.as_dict()`` names the event and holds every field."""
    event = ProviderCacheMiss("gateway:c-1", "anthropic", "messages_changed", 1200, True, 5)
    assert event.as_dict() == {
        "event": "provider_cache_miss",
        "session": "gateway:c-1",
        "provider": "anthropic",
        "reason": "messages_changed",
        "missed_tokens": 1200,
        "cleared": True,
        "at_ns": 5,
    }
