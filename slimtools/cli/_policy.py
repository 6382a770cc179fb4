"""The policy options every command shares (``analyze``, ``report``, ``clear``): one list.

:func:`add_policy_options` adds ``--policy`` and the options that mirror
:class:`~slimtools.clearing.ClearingPolicy`; :func:`policies_from` turns what was given into
named policies. Named policies are presets a user can compare:

- ``default``: ``ClearingPolicy(cache=--cache)``, clearing only what pays under that cache;
- ``turn-end``: ``ClearingPolicy(cache=None)``, everything stale at every round end;
- ``anthropic``: Anthropic's server-side ``clear_tool_uses`` defaults;
- ``none``: no clearing.

The options given (``--keep-turns 3``, ...) apply to every named policy.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from slimtools.clearing import ClearingPolicy
from slimtools.clearing.pricing import PRESETS, pricing_of
from slimtools.errors import ConfigurationError

POLICIES = ("default", "turn-end", "anthropic", "none")
"""The named policies, in the order ``--help`` lists them."""

# option dest -> help; the type and metavar come from _KINDS
_OPTIONS: dict[str, str] = {
    "keep_turns": "never touch the results of the last N turns, e.g. 3",
    "keep_head": "characters of the original kept in each placeholder, e.g. 200",
    "clear_at_least": "clear nothing unless this many tokens go at once, e.g. 2000",
    "payback_horizon": "the most calls a clear may take to pay back under --cache "
    "(default 18), e.g. 10",
    "max_context_tokens": "clear whatever the cache says once the prompt exceeds this, e.g. 150000",
}
_KINDS: dict[str, tuple[int, str]] = {
    "keep_turns": (0, "N"),
    "keep_head": (0, "CHARS"),
    "clear_at_least": (0, "TOKENS"),
    "payback_horizon": (1, "N"),
    "max_context_tokens": (1, "TOKENS"),
}


def count(minimum: int) -> Callable[[str], int]:
    """An argparse type: a whole number of at least ``minimum``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {value}")
        return value

    return parse


def add_policy_options(
    parser: argparse.ArgumentParser,
    *,
    several: bool = False,
    default: str = "default",
    names: Sequence[str] = POLICIES,
) -> None:
    """Add ``--policy`` (repeatable, plus ``--compare``, when ``several``), ``--cache`` and
    the options that mirror :class:`~slimtools.clearing.ClearingPolicy`; ``names`` are the
    policies ``--policy`` accepts."""
    group = parser.add_argument_group(
        "policy",
        "named policies: default (clears what pays under --cache), turn-end (everything "
        "stale at every round end), anthropic (Anthropic's server-side defaults), none; the "
        "options below apply to each.",
    )
    _add_policy_choice(group, several=several, default=default, names=names)
    group.add_argument(
        "--cache",
        choices=sorted(PRESETS),
        default="anthropic",
        type=str.lower,
        help="prompt-cache prices to bill and decide with (default: anthropic, the 5-minute "
        "cache; none: no caching), e.g. --cache openai",
    )
    for dest, text in _OPTIONS.items():
        minimum, metavar = _KINDS[dest]
        flag = "--" + dest.replace("_", "-")
        group.add_argument(flag, type=count(minimum), default=None, metavar=metavar, help=text)
    group.add_argument(
        "--exclude-tool",
        action="append",
        default=[],
        metavar="NAME",
        help="never clear this tool's results (repeatable), e.g. --exclude-tool Read",
    )


def _add_policy_choice(group: Any, *, several: bool, default: str, names: Sequence[str]) -> None:
    """``--policy`` once, or (``several``) repeatable with ``--compare``."""
    if several:
        group.add_argument(
            "--policy",
            dest="policies",
            action="append",
            choices=names,
            metavar="NAME",
            help=f"a policy to replay (repeatable; default: {default}): "
            + ", ".join(names)
            + "; e.g. --policy turn-end --policy default",
        )
        group.add_argument(
            "--compare",
            type=_names,
            metavar="NAME,NAME",
            help="several policies at once, e.g. --compare turn-end,default",
        )
    else:
        group.add_argument(
            "--policy",
            choices=names,
            default=default,
            metavar="NAME",
            help=f"the policy (default: {default}): " + ", ".join(names) + "; e.g. turn-end",
        )


def _names(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in POLICIES]
    if not names or unknown:
        raise argparse.ArgumentTypeError(f"expected names from {', '.join(POLICIES)}, got {text!r}")
    return names


def options_of(args: argparse.Namespace) -> dict[str, Any]:
    """The :func:`build_policy` options given on the command line."""
    given: dict[str, Any] = {
        dest: getattr(args, dest) for dest in _OPTIONS if getattr(args, dest) is not None
    }
    if args.exclude_tool:
        given["exclude_tools"] = frozenset(args.exclude_tool)
    return given


def build_policy(
    name: str, *, cache: str | None = "anthropic", **options: Any
) -> ClearingPolicy | None:
    """The named policy with ``options`` (None values are ignored): ClearingPolicy fields,
    plus ``exclude_tools`` (names never cleared: ``retention`` None, over the preset's) and
    ``payback_horizon`` (the cache prices' ``horizon``; no effect without a cache).

    Raises:
        ConfigurationError: an unknown name or an invalid option.
    """
    given = {k: v for k, v in options.items() if v is not None}
    excluded = given.pop("exclude_tools", ())
    horizon = given.pop("payback_horizon", None)
    if name == "none":
        return None
    if name == "default":
        pricing = pricing_of(cache)
        if horizon is not None and pricing is not None:
            pricing = dataclasses.replace(pricing, horizon=horizon)
        policy = ClearingPolicy(cache=pricing, **given)
    elif name == "turn-end":
        policy = ClearingPolicy(**{"cache": None, **given})
    elif name == "anthropic":
        policy = ClearingPolicy.from_anthropic(**given)
    else:
        raise ConfigurationError(f"unknown policy {name!r}; expected one of {POLICIES}")
    if not excluded:
        return policy
    return policy.replace(retention={**policy.retention, **dict.fromkeys(excluded, None)})


def chosen_names(args: argparse.Namespace, default: str = "default") -> list[str]:
    """The policy names of ``--policy`` (repeated) and ``--compare``, in order, once each."""
    names = [*(args.policies or ()), *(args.compare or ())]
    return list(dict.fromkeys(names or [default]))


def policies_from(args: argparse.Namespace, names: Sequence[str]) -> dict[str, ClearingPolicy]:
    """Label -> policy for ``names`` (``none`` is the baseline every report has: skipped)."""
    options = options_of(args)
    out: dict[str, ClearingPolicy] = {}
    for name in names:
        policy = build_policy(name, cache=args.cache, **options)
        if policy is not None:
            out[name] = policy
    return out


def describe(name: str, args: argparse.Namespace) -> str:
    """A policy as given on the command line, e.g. ``default, keep_turns=3``."""
    parts = [name]
    for dest, value in options_of(args).items():
        shown = ",".join(sorted(value)) if isinstance(value, frozenset) else value
        parts.append(f"{dest}={shown}")
    return ", ".join(parts)
