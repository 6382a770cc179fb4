"""The redaction table: each secret-scanner shape is masked, ordinary words are not."""

from __future__ import annotations

import re

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from slimtools import Toolkit
from slimtools.redaction import MASK, SECRET_PATTERNS, redact
from tests.strategies import SECRET_KEYS, prose_after_key, quoted_values, secret_values

PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n"
    "Zm9v==\n"
    "-----END RSA PRIVATE KEY-----"
)

EXAMPLES: dict[str, list[tuple[str, str]]] = {
    "pem private key": [
        (f"key:\n{PEM}\nend", "Zm9v=="),
        ("cut: -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nQUJD", "QUJD"),
    ],
    "authorization header": [
        ("Authorization: Bearer abcdefghijklmnop (retrying)", "abcdefghijklmnop"),
        ('{"Authorization": "Basic dXNlcjpwYXNz"}', "dXNlcjpwYXNz"),
    ],
    "cookie header": [
        ("Cookie: session=abc123; theme=dark", "session=abc123"),
        ("Set-Cookie: sid=s3cr3t; Path=/; HttpOnly", "s3cr3t"),
    ],
    "url credentials": [
        ("postgres://admin:hunter2@db.internal:5432/app", "hunter2"),
        ("redis://:pw@cache:6379/0", ":pw@"),
        ("postgres://app:p@ss-w0rd@db:5432/app", "ss-w0rd"),
    ],
    "bearer credential": [("sent Bearer abc.def-ghi_jkl012345 upstream", "abc.def-ghi_jkl012345")],
    "secret assignment": [
        ('error {"password": "hunter2", "user": "bob"}', "hunter2"),
        ("{'password': 'hunter2'}", "hunter2"),
        ('{"api_key": "k-1", "token": "t-2"}', "k-1"),
        ('{"access_token": "ya-not-google", "client_secret": "cs-9"}', "cs-9"),
        ("aws_secret_access_key=wJalrXUtnFEMI/K7MDENG", "wJalrXUtnFEMI"),
        ("password=CorrectHorseBattery", "CorrectHorse"),
        ("AccountName=x;AccountKey=c2VjcmV0a2V5;EndpointSuffix=core", "c2VjcmV0a2V5"),
        ("ssh passphrase=opensesame99", "opensesame99"),
        ("login failed, password: hunter2", "hunter2"),
        ('login failed, password: "S3cr3t!"', "S3cr3t!"),
        ("PASSWORD=abc123def in env", "abc123def"),
    ],
    "openai or anthropic key": [("key sk-ant-api03-AbCdEf0123456789AbCdEf", "AbCdEf0123")],
    "stripe key": [("stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyj")],
    "github token": [
        ("gh ghp_16C7e42F292c6912E7710c838347Ae178B4a", "16C7e42F"),
        ("github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "11ABCDEFG"),
    ],
    "slack token": [
        ("slack xoxb-123456789012-1234567890123-AbCdEfGh", "AbCdEfGh"),
        ("app xapp-1-A0123456789-1234567890123-abcdef0123456789", "abcdef0123456789"),
    ],
    "gitlab token": [("gl glpat-AbCdEf0123456789xYzW", "AbCdEf0123456789")],
    "hugging face token": [("hf hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345", "AbCdEfGhIjKlMn")],
    "slack webhook": [
        ("hook https://hooks.slack.com/services/T000/B000/XXXXXXXX", "T000/B000/XXXXXXXX")
    ],
    "aws access key id": [("id AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE")],
    "google api key": [("g AIzaSyD-abcdefghijklmnopqrstuvwxyz12345", "AIzaSyD")],
    "google oauth token": [
        ("t ya29.a0AfH6SMBabcdefghijklmnopqrst", "a0AfH6SMB"),
        ("c GOCSPX-abcdefghijklmnopqrstuvwx", "GOCSPX-abcdefghijklmnop"),
    ],
    "azure sas signature": [
        ("https://acct.blob.core.windows.net/c/b?sv=2021&sig=AbCdEf0123456789%3D", "AbCdEf0123")
    ],
    "package registry token": [
        ("npm npm_abcdefghijklmnopqrstuvwxyz0123456789", "npm_abcdefghij"),
    ],
    "jwt": [("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl", "eyJzdWIiOiIxMjM0In0")],
    "long hex": [("digest 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822c", "9f86d081884c")],
    "long base64": [("key wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY12 set", "wJalrXUtnFEMIK7MDENG")],
}


def test_every_row_of_the_table_has_examples():
    """A row added to the table without a test here fails this test."""
    assert sorted(row.name for row in SECRET_PATTERNS) == sorted(EXAMPLES)


@pytest.mark.parametrize(
    ("row", "text", "secret"),
    [(row, text, secret) for row, cases in EXAMPLES.items() for text, secret in cases],
    ids=[f"{row}-{i}" for row, cases in EXAMPLES.items() for i in range(len(cases))],
)
def test_each_row_masks_its_secret(row, text, secret):
    """The secret is gone, a mask stands in its place, and redacting again changes nothing."""
    once = redact(text)
    assert secret not in once
    assert MASK in once
    assert redact(once) == once


@pytest.mark.parametrize(
    "message",
    [
        "token exchange failed",
        "basic authentication failed for user bob",
        "the bearer of this message",
        "max_tokens=100 exceeded; limit=5",
        "timeout: 30s while reading /var/lib/app/config.toml",
        "password reset email sent",
        "the secret garden",
        "hf_hub download failed: 404",
        "pass: 10 of 12, signature: valid",
        "no row with id 550e8400-e29b-41d4-a716-446655440000",
        "password: required",
        "token: has expired, log in again",
        "api_key: missing (set SLIM_API_KEY)",
        "password: must be at least 8 characters.",
    ],
)
def test_ordinary_words_survive(message):
    """Words that name secrets, used in prose, are not mistaken for secrets."""
    assert redact(message) == message


def test_a_tool_error_is_redacted_before_the_model_reads_it():
    """``Toolkit.call`` words an exception carrying a JSON password and a cookie redacted."""
    kit = Toolkit("redacted-errors")

    @kit.tool
    def login(user: str) -> str:
        """Log in."""
        raise RuntimeError('auth failed {"password": "hunter2"}; Cookie: sid=abcdef123')

    text = kit.call("login", {"user": "bob"}).text
    assert "hunter2" not in text
    assert "abcdef123" not in text
    assert text.startswith("login failed: RuntimeError: auth failed")


def test_a_prose_word_after_a_secret_key_stays():
    """An error that says what is wrong with the password keeps saying it."""
    assert redact("ValidationError: password: required") == "ValidationError: password: required"


def test_a_value_meaning_no_value_stays():
    """``None`` and ``null`` after a secret's key, as a repr or JSON prints them, are no secret."""
    assert redact("{'password': None, 'user': 'bob'}") == "{'password': None, 'user': 'bob'}"
    assert redact('{"token": null}') == '{"token": null}'


def test_a_lowercase_word_outside_the_prose_list_is_masked():
    """A plain word such as ``letmein`` is a password as often as it is prose: masked."""
    assert redact("password: letmein") == f"password: {MASK}"


def test_a_quoted_prose_word_is_masked():
    """A quoted value is a value, whatever word it is."""
    assert redact('{"password": "required"}') == f'{{"password": "{MASK}"}}'


def test_a_prose_word_glued_to_more_text_is_masked():
    """Only the whole value being a prose word (with end punctuation) spares it."""
    assert redact("password=nonexistent99") == f"password={MASK}"
    assert redact("password: required.x") == f"password: {MASK}"


def test_a_dsn_after_a_prose_word_is_still_masked():
    """The prose exemption spares one word, not the credentials further on."""
    text = redact("password: required for postgres://admin:hunter2@db:5432/app")
    assert text == f"password: required for postgres://{MASK}@db:5432/app"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("password:" + " " * 100_000 + "required", "password:" + " " * 100_000 + "required"),
        ("password: required" + "." * 100_000 + "x", f"password: {MASK}"),
        ("password:required." * 20_000, f"password:{MASK}"),
        ("token" + ":" * 100_000, f"token:{MASK}"),
    ],
    ids=["spaces", "punctuation", "repeated", "colons"],
)
def test_adversarial_assignments_are_scanned_in_one_pass(text, expected):
    """Inputs built to make the prose check backtrack finish (a quadratic scan would not)."""
    assert redact(text) == expected


@given(prose_after_key)
def test_english_error_phrases_after_a_secret_key_survive(phrase):
    """A key followed by words of the prose list is an error message, left as it is."""
    assert redact(phrase) == phrase


@given(
    key=st.sampled_from(SECRET_KEYS),
    sep=st.sampled_from([": ", "=", '": ']),
    value=st.one_of(secret_values, quoted_values),
)
def test_a_secret_like_value_after_a_secret_key_never_survives(key, sep, value):
    """Any value that is not a prose word (any quoted value) after the key is masked; an
    unquoted one after a colon to the end of its line."""
    text = redact(f"login failed, {key}{sep}{value} (retrying)\nnext line")
    quote = '"' if value.startswith('"') else ""
    rest = "" if ":" in sep and not quote else " (retrying)"
    assert text == f"login failed, {key}{sep}{quote}{MASK}{quote}{rest}\nnext line"


@given(
    key=st.sampled_from(SECRET_KEYS),
    sep=st.sampled_from([": ", ":", ":\t", '": ']),
    words=st.lists(secret_values, min_size=2, max_size=5),
    after=st.sampled_from(["", "\nretry in 5s", "\r\nretry in 5s"]),
)
def test_an_unquoted_multi_word_secret_after_a_colon_is_masked_to_the_end_of_its_line(
    key, sep, words, after
):
    """``password: correct horse battery staple``: no word of the passphrase survives, and
    the next line is kept."""
    text = redact(f"login failed, {key}{sep}{' '.join(words)}{after}")
    assert text == f"login failed, {key}{sep}{MASK}{after}"


def test_a_passphrase_after_password_is_masked_whole():
    """The issue's case: ``password: horse battery staple`` once kept two of its words."""
    assert redact("password: horse battery staple") == f"password: {MASK}"


def test_pairs_after_an_equals_sign_end_at_a_space():
    """``key=value`` pairs of a query string or a config line are masked one by one."""
    assert redact("x=1&password=abc&user=bob") == f"x=1&password={MASK}&user=bob"


PATHS = [
    "FileNotFoundError: [Errno 2] No such file or directory: "
    "'/data/Reports2024/QuarterlySales2024Final.csv'",
    "FileNotFoundError: /home/User1/Projects/MyData2023/ExportFileV2.csv",
    "cannot open data/Exports2024/CustomerOrdersQ3Summary2024Final.parquet",
    "/srv/App2024/ReportsArchive/MonthlyRevenueByRegion2023/Index.html not found",
]


@pytest.mark.parametrize("message", PATHS)
def test_a_path_with_mixed_case_and_digits_is_not_eaten_as_base64(message):
    """An ordinary path (capitalised words and numbers) is no secret: kept whole."""
    assert redact(message) == message


_path_words = st.from_regex(r"[A-Z][a-z]{2,8}|[a-z]{2,8}|[0-9]{1,4}|[A-Z]{2,4}", fullmatch=True)
_segments = st.lists(_path_words, min_size=1, max_size=4).map("".join)


@given(st.lists(_segments, min_size=2, max_size=6), st.sampled_from(["", ".csv", ".json"]))
def test_paths_of_words_and_numbers_survive(segments, extension):
    """Any absolute path whose segments are words and numbers is kept as it is."""
    message = f"FileNotFoundError: /{'/'.join(segments)}{extension}"
    assert redact(message) == message


@given(st.binary(min_size=30, max_size=60))
def test_a_base64_key_outside_a_path_is_still_masked(raw):
    """A long base64 run mixing cases and digits, in no path, is masked as before."""
    import base64

    key = base64.b64encode(raw).decode()
    assume(re.search(r"[0-9]", key) and re.search(r"[a-z]", key) and re.search(r"[A-Z]", key))
    assume(not key.startswith("/"))
    assert key not in redact(f"key {key} set")


def test_a_huge_error_message_is_cut_before_it_is_redacted(monkeypatch):
    """A 10 MB message is redacted only as far as it can be shown, its secrets still masked."""
    from slimtools import redaction

    seen: list[int] = []
    real = redaction.redact

    def measuring(text: str, secrets=()):  # type: ignore[no-untyped-def]
        seen.append(len(text))
        return real(text, secrets)

    monkeypatch.setattr(redaction, "redact", measuring)
    message = "token ghp_" + "a1B2" * 9 + " then " + "y " * 5_000_000
    text = redaction.describe_error(ValueError(message))
    assert seen == [redaction.REDACT_MAX_CHARS]
    assert "ghp_a1B2" not in text
    assert text.startswith("ValueError: token ")
    assert text.endswith(f"({len(message) - redaction.REDACT_MAX_CHARS:,} more characters cut)")
