"""A tool's exception reaches the model as its type and a redacted message, and is logged."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from slimtools import ConfigurationError, Toolkit, summarize_with_handle
from slimtools.redaction import describe_error, redact

SECRETS = {
    "url credentials": "postgres://admin:hunter2@db.internal:5432/app",
    "openai key": "sk-live-51HqLyjWDarjtT1zdp7dcXYZ",
    "openai project key": "sk-proj-AbCdEf0123456789_xyz-QRSTuv",
    "anthropic key": "sk-ant-api03-AbCdEf0123456789AbCdEf",
    "github token": "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
    "github fine-grained": "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
    "slack token": "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOp",
    "aws access key": "AKIAIOSFODNN7EXAMPLE",
    "aws secret key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "bearer token": "Authorization: Bearer abc.def-ghi_jkl012345",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlMTIzNDU2",
    "long hex": "token 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "password assignment": "password=CorrectHorseBattery",
}


def _fail_with(message: str, **kit_options: Any) -> str:
    kit = Toolkit("errors", **kit_options)

    @kit.tool
    def backend(query: str) -> str:
        """Query the backend."""
        raise ConnectionError(message)

    return kit.call("backend", {"query": "x"}).text


@pytest.mark.parametrize("secret", list(SECRETS.values()), ids=list(SECRETS))
def test_token_like_strings_never_reach_the_model(secret):
    """The default wording strips credentials and tokens from the exception message."""
    text = _fail_with(f"could not connect using {secret} (retrying)")
    hidden = secret.split("@")[0].split("=")[-1].split()[-1]
    assert hidden not in text
    assert text.startswith("backend failed: ConnectionError: could not connect using")
    assert text.endswith("(retrying)")


def test_url_credentials_are_replaced_and_the_host_kept():
    """``scheme://user:pass@host`` keeps its scheme and host, so the message stays useful."""
    text = _fail_with("could not connect to postgres://admin:hunter2@db.internal:5432/app")
    assert text == (
        "backend failed: ConnectionError: could not connect to "
        "postgres://[redacted]@db.internal:5432/app"
    )


@pytest.mark.parametrize(
    "message",
    [
        "KeyError in /usr/local/lib/python3.11/site-packages/backend/client.py line 10",
        "no row with id 550e8400-e29b-41d4-a716-446655440000",
        "commit deadbeef not found; timeout after 30s",
        "https://api.example.com/v1/search?q=timeout returned 503",
    ],
)
def test_ordinary_messages_stay_readable(message):
    """Paths, UUIDs, short hashes and URLs without credentials are left as they are."""
    assert redact(message) == message


def test_an_on_error_hook_words_the_message():
    """``Toolkit(on_error=...)`` turns the exception into the text the model reads."""
    text = _fail_with("secret detail", on_error=lambda exc: "the backend is down; try later")
    assert text == "backend failed: the backend is down; try later"


def test_a_failing_on_error_hook_falls_back_to_the_exception_type(caplog):
    """A hook that raises (or returns no text) never crashes dispatch; the type is shown."""

    def broken(exc: BaseException) -> str:
        raise RuntimeError("hook bug")

    with caplog.at_level(logging.WARNING, logger="slimtools"):
        assert _fail_with("secret detail", on_error=broken) == "backend failed: ConnectionError"
    assert _fail_with("secret detail", on_error=lambda exc: None) == (
        "backend failed: ConnectionError"
    )
    assert "on_error" in caplog.text


def test_on_error_must_be_callable():
    """A non-callable hook is a configuration error at construction."""
    with pytest.raises(ConfigurationError, match="on_error"):
        Toolkit("k", on_error="redact")  # type: ignore[arg-type]


def test_every_tool_exception_is_logged_with_its_traceback(caplog):
    """The developer sees, at WARNING on ``slimtools``, the failure the model saw."""
    with caplog.at_level(logging.WARNING, logger="slimtools"):
        _fail_with("index offline")
    (record,) = [r for r in caplog.records if r.name == "slimtools"]
    assert record.levelno == logging.WARNING
    assert record.exc_info is not None
    assert record.exc_info[0] is ConnectionError
    assert "backend" in record.getMessage()


async def test_async_dispatch_words_and_logs_errors_the_same_way(caplog):
    """``acall`` redacts and logs exactly like ``call``."""
    kit = Toolkit("errors")

    @kit.tool
    async def backend(query: str) -> str:
        """Query the backend."""
        raise ConnectionError("could not connect to redis://:pw@cache:6379")

    with caplog.at_level(logging.WARNING, logger="slimtools"):
        result = await kit.acall("backend", {"query": "x"})
    assert result.is_error
    assert "pw" not in result.text
    assert any(r.exc_info for r in caplog.records)


def test_live_fetch_errors_are_worded_by_the_same_hook():
    """get_record's live fetch failures pass through on_error too."""
    kit = Toolkit("live", on_error=lambda exc: "lookup service unavailable")

    def fetch(handle: str) -> Any:
        raise ConnectionError("mysql://root:toor@10.0.0.5/crm")

    @kit.tool
    @summarize_with_handle(key="id", fetch=fetch)
    def search() -> list[dict[str, int]]:
        return [{"id": 1}]

    message = kit.get_record(1)
    assert "toor" not in message
    assert "lookup service unavailable" in message


def test_describe_error_is_the_default_wording():
    """The public default hook gives the type and the redacted message."""
    assert describe_error(ValueError("bad key sk-live-51HqLyjWDarjtT1zdp7dcXYZ")) == (
        "ValueError: bad key [redacted]"
    )
    assert describe_error(KeyError()) == "KeyError"


words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz ,.:/-", max_size=40)


@given(before=words, after=words, secret=st.sampled_from(list(SECRETS.values())))
def test_redaction_removes_secrets_wherever_they_stand(before, after, secret):
    """A token embedded in any text is removed, and redacting again changes nothing."""
    once = redact(f"{before} {secret} {after}")
    hidden = secret.split("@")[0].split("=")[-1].split()[-1]
    assert hidden not in once
    assert redact(once) == once


def test_remove_masks_exact_values_but_not_tiny_ones():
    """``redaction.remove`` masks each given value; values under four characters are left."""
    from slimtools.redaction import MASK, remove

    assert remove("user bob logged in with hunter2", ["hunter2", "bob"]) == (
        f"user bob logged in with {MASK}"
    )
