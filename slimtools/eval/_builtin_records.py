"""Built-in scenarios over records: a slimmed log search and a raw API listing.

``log_search`` plays a real slimtools tool (``@summarize_with_handle`` over ``@paginate`` over
``@project_fields``) in a :class:`Toolkit`, so its results are envelopes whose handles a
cleared placeholder lists and ``get_record`` expands; it asks for a log entry's timestamp.
``api_listing`` plays an unslimmed REST-style JSON listing (the kind clearing meets most) and
asks for a deployment's id. In both the record asked about sits anywhere in its result, so
how often a 200- or 500-character head still shows it varies from run to run.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Annotated, Any

import orjson
from pydantic import BaseModel, Field

from slimtools import Clip, Toolkit
from slimtools.decorators import paginate, project_fields, summarize_with_handle
from slimtools.eval._generated import Candidate, Draft, GeneratedScenario, hex_id, spread
from slimtools.eval.checks import AnswerCheck

SERVICES = (
    "auth-service", "billing-api", "checkout-web", "inventory", "search-indexer", "notifier",
    "gateway", "payments", "profile-api", "scheduler", "shipping", "catalog", "reports",
    "media-proxy",
)  # fmt: skip
_LEVELS = ("ERROR", "ERROR", "WARN", "WARN", "INFO")
_LOG_TOPICS: dict[str, tuple[str, ...]] = {
    "timeout": ("upstream timeout calling {dep} after {ms} ms", "timeout waiting for {dep}"),
    "connection reset": ("connection reset by {dep} while reading the response body",),
    "bad gateway": ("bad gateway from {dep} for {path}", "proxy: bad gateway, {dep} hung up"),
    "deadlock": ("deadlock detected on table {table}; transaction rolled back",),
    "out of memory": ("worker killed: out of memory while serialising {table} rows",),
    "rate limit": ("rate limit hit for tenant {tenant} on {path}",),
    "certificate": ("certificate verify failed for {dep}: unable to get issuer",),
    "retry": ("retry scheduled for {path} against {dep} with backoff",),
    "cache miss": ("cache miss storm on {table} keys, falling back to {dep}",),
    "queue full": ("queue full: dropping events for {dep}",),
    "dns": ("dns lookup for {dep}.internal failed: SERVFAIL",),
    "disk": ("disk almost full on the volume backing {table}",),
}
_TABLES = ("orders", "carts", "invoices", "sessions", "payments", "stock_levels", "coupons")
_PATHS = ("/api/checkout", "/api/cart/items", "/api/orders", "/api/payments/capture", "/login")
_TENANTS = ("acme-prod", "globex", "initech", "umbrella", "hooli", "stark-retail")
_AGENTS = ("Mozilla/5.0 (X11; Linux x86_64)", "okhttp/4.12", "python-requests/2.32", "curl/8.5")


class LogBrief(BaseModel):
    """What the model sees of a log entry."""

    id: int
    time: str
    level: str
    service: str
    summary: Annotated[str, Clip(140)] = Field(validation_alias="message")


def _log_kit(records: list[dict[str, Any]]) -> Toolkit:
    kit = Toolkit("recall-logs")

    @kit.tool(category="search")
    @summarize_with_handle(key="id")
    @paginate(limit=15)
    @project_fields(LogBrief)
    def search_logs(query: str, service: str | None = None) -> list[dict[str, Any]]:
        """Search the application logs for a phrase, optionally in one service."""
        needle = query.casefold()
        return [
            r
            for r in records
            if needle in r["message"].casefold() and (service is None or r["service"] == service)
        ]

    return kit


def _log_record(
    rng: random.Random, ident: int, when: datetime, topic: str, service: str
) -> dict[str, Any]:
    dep = rng.choice([s for s in SERVICES if s != service])
    fill = {
        "dep": dep, "ms": rng.choice((500, 1000, 2500, 5000, 30000)), "path": rng.choice(_PATHS),
        "table": rng.choice(_TABLES), "tenant": rng.choice(_TENANTS),
    }  # fmt: skip
    head = rng.choice(_LOG_TOPICS[topic]).format(**fill)
    detail = (
        f"; trace_id={hex_id(rng, 32)} request_id=req-{hex_id(rng)} tenant={fill['tenant']} "
        f"route={fill['path']} client={rng.choice(_AGENTS)} pool=primary"
    )
    return {
        "id": ident,
        "time": when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z",
        "level": rng.choice(_LEVELS),
        "service": service,
        "message": head + detail,
        "host": f"ip-10-0-{rng.randint(0, 63)}-{rng.randint(2, 250)}.ec2.internal",
        "stack": "Traceback (most recent call last):\n" + "  File ...\n" * rng.randint(3, 12),
    }


def build_log_search(rng: random.Random, rounds: int, target: int) -> Draft:
    """Search the logs ``rounds`` times (topic and service); ask for an entry's timestamp."""
    pairs = spread(rng, [(t, s) for t in _LOG_TOPICS for s in SERVICES], rounds)
    clock = datetime(2024, rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 20))
    ids = iter(rng.sample(range(1000, 9999), 20 * rounds))
    records: list[dict[str, Any]] = []
    for topic, service in pairs:
        for _ in range(rng.randint(10, 15)):
            clock += timedelta(seconds=rng.randint(1, 90), milliseconds=rng.randint(1, 999))
            records.append(_log_record(rng, next(ids), clock, topic, service))
    draft = Draft(
        task="Checkout has been failing on and off since last night. Search the logs and "
        "work out what is going on.",
        kit=_log_kit(records),
        rounds=[],
        candidates=[],
        handles=True,
    )
    for i, (topic, service) in enumerate(pairs, 1):
        args = {"query": topic, "service": service}
        text = draft.play("search_logs", args, f'Searching the {service} logs for "{topic}".')
        if i == target:
            briefs = orjson.loads(text)["briefs"]
            for brief in rng.sample(briefs, len(briefs)):
                question = (
                    f'Earlier you searched the {service} logs for "{topic}". What is the exact '
                    f"timestamp of log entry {brief['id']}? Give it as the log shows it."
                )
                draft.candidates.append(
                    Candidate(question, AnswerCheck("timestamp", brief["time"]))
                )
    return draft


_ENVS = ("production", "staging", "canary", "preview")
_AUTHORS = ("mchen", "aokafor", "jrivera", "spatel", "lnguyen", "tkowalski", "ebrown", "hsato")
_COMMITS = (
    "fix rounding in invoice totals", "bump payment client", "add retry to stock reservation",
    "feature flag for new checkout", "revert cache warmup", "tune connection pool",
    "log request ids", "drop legacy coupon path", "upgrade base image", "faster cart merge",
)  # fmt: skip
_STATUSES = ("succeeded", "succeeded", "succeeded", "failed", "rolled_back")
_REGIONS = ("eu-west-1", "us-east-1", "ap-southeast-2")


def _deployments(rng: random.Random, service: str, env: str) -> dict[str, Any]:
    major, minor = rng.randint(1, 4), rng.randint(0, 30)
    start = datetime(2024, rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 12))
    count = rng.randint(10, 16)
    items = []
    for patch in range(count):
        start += timedelta(hours=rng.randint(2, 40), minutes=rng.randint(0, 59))
        author = rng.choice(_AUTHORS)
        items.append(
            {
                "id": f"dep-{hex_id(rng)}",
                "service": service,
                "env": env,
                "version": f"{major}.{minor}.{patch}",
                "status": rng.choice(_STATUSES),
                "region": rng.choice(_REGIONS),
                "created_at": start.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "author": {"login": author, "email": f"{author}@example.com"},
                "commit": {"sha": hex_id(rng, 40), "message": rng.choice(_COMMITS)},
                "links": {"logs": f"https://deploy.example.com/{service}/{env}/logs"},
            }
        )
    items.reverse()  # newest first, as deployment APIs list them
    return {"total_count": count, "page": 1, "per_page": 50, "items": items}


def build_api_listing(rng: random.Random, rounds: int, target: int) -> Draft:
    """List deployments ``rounds`` times (service and environment); ask for one's id."""
    pairs = spread(rng, [(s, e) for s in SERVICES for e in _ENVS], rounds)
    listings = {pair: _deployments(rng, *pair) for pair in pairs}
    kit = Toolkit("recall-deployments")

    @kit.tool(category="search")
    def list_deployments(service: str, env: str = "production") -> dict[str, Any]:
        """List a service's deployments to an environment, newest first (JSON)."""
        found = listings.get((service, env))
        if found is None:
            return {"total_count": 0, "page": 1, "per_page": 50, "items": []}
        return found

    draft = Draft(
        task="Payments errors went up this week. Check the recent deployments of the services "
        "involved.",
        kit=kit,
        rounds=[],
        candidates=[],
    )
    for i, (service, env) in enumerate(pairs, 1):
        draft.play(
            "list_deployments", {"service": service, "env": env}, f"Listing {service} in {env}."
        )
        if i == target:
            items = listings[(service, env)]["items"]
            for item in rng.sample(items, len(items)):
                question = (
                    f"Earlier you listed the deployments of {service} to {env}. What is the id "
                    f"of the deployment of version {item['version']}?"
                )
                draft.candidates.append(Candidate(question, AnswerCheck("id", item["id"])))
    return draft


LOG_SEARCH = GeneratedScenario(
    "log_search",
    "slimmed log search (envelopes with handles); asks a log entry's timestamp",
    build_log_search,
)
API_LISTING = GeneratedScenario(
    "api_listing",
    "raw JSON listing of deployments; asks the id of the deployment of one version",
    build_api_listing,
)
