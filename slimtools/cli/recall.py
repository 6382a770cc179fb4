"""``slimtools recall``: the recall harness from the command line.

``slimtools recall [SCENARIO ...] --model SPEC`` runs the built-in scenarios (or the named
ones, or scenario files) under clearing off and ``keep_head`` 0/200/500 and prints the rate
of each behaviour with its 95% Wilson interval (``--json`` for everything, trials included).

``--model`` takes ``openai:NAME`` (any Chat Completions server: ``--base-url``, key from
``--api-key`` or ``OPENAI_API_KEY``), ``anthropic:NAME`` (any Messages server: key from
``--api-key`` or ``ANTHROPIC_API_KEY``), or ``module:attribute``, a callable
``(messages, tools) -> assistant message`` or a LangChain chat model importable from the
current directory.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import operator
import os
import sys
from collections.abc import Callable
from typing import Any

from slimtools.cli._options import Formatter
from slimtools.errors import ConfigurationError, SlimtoolsError
from slimtools.eval import BUILTIN_SCENARIOS
from slimtools.eval.models import ChatModel, anthropic_model, openai_model
from slimtools.eval.recall import TURN_END, as_model, heads_sweep, run_recall
from slimtools.eval.report import Trial

RECALL_EXAMPLE = """\
examples:
  slimtools recall --model openai:gpt-4o-mini --repeats 10
  slimtools recall log_search --model anthropic:claude-haiku-4-5 --keep-heads 0 200 --by scenario
  slimtools recall my_scenario.toml --model mymodels:chat --keep-heads 0 80 --json

exit status: 0 reported, 1 the model or a scenario failed (one line on stderr), 2 bad usage
"""


def add_commands(sub: Any) -> None:
    """Register ``recall`` on the ``slimtools`` command's subparsers."""
    rec = sub.add_parser(
        "recall",
        formatter_class=Formatter,
        help="does clearing make your model refetch, read the placeholder, or invent?",
        description="Play each scenario for ROUNDS rounds of tool calls, clear the history, "
        "then ask about the result of round TARGET; classify every answer (refetched, read "
        "the placeholder, from memory, fabricated, declined) and print each rate with its "
        "95% Wilson interval, under clearing off and turn-end clearing with each "
        "--keep-heads head.",
        epilog=RECALL_EXAMPLE,
    )
    rec.add_argument(
        "scenarios",
        nargs="*",
        metavar="SCENARIO",
        help="built-in names (log_search, file_reading, api_listing, code_task; default: all) "
        "or .json/.toml scenario files",
    )
    rec.add_argument("--model", required=True, metavar="SPEC", help=_MODEL_HELP)
    rec.add_argument(
        "--base-url",
        default=None,
        metavar="URL",
        help="the endpoint for openai:/anthropic: models, e.g. http://localhost:8000/v1",
    )
    rec.add_argument(
        "--api-key",
        default=None,
        metavar="KEY",
        help="the key for openai:/anthropic: (default: OPENAI_API_KEY or ANTHROPIC_API_KEY), "
        "e.g. --api-key sk-local",
    )
    _add_episode_options(rec.add_argument_group("episodes"))
    _add_setting_options(rec.add_argument_group("settings (clearing off, then turn-end clearing)"))
    _add_output_options(rec.add_argument_group("output"))
    rec.set_defaults(run=run)


def _add_episode_options(episode: Any) -> None:
    """How many episodes, how long, and how many model calls each may take."""
    episode.add_argument(
        "--repeats",
        type=_positive,
        default=20,
        metavar="K",
        help="episodes per scenario and setting, seeds SEED to SEED+K-1 (default: 20; "
        "e.g. --repeats 5 for a quick look, wider intervals)",
    )
    episode.add_argument(
        "--rounds",
        type=_positive,
        default=10,
        metavar="N",
        help="tool-call rounds played before the question, in generated scenarios "
        "(default: 10; e.g. --rounds 30 for a longer history)",
    )
    episode.add_argument(
        "--target",
        type=_positive,
        default=3,
        metavar="M",
        help="the round whose result holds the answer, in generated scenarios (default: 3, "
        "old enough to be cleared; e.g. --target 1)",
    )
    episode.add_argument(
        "--seed",
        type=int,
        default=0,
        metavar="S",
        help="the first episode's seed: the same seed replays the same scenarios (default: "
        "0; e.g. --seed 100 for fresh ones)",
    )
    episode.add_argument(
        "--max-steps",
        type=_positive,
        default=4,
        metavar="STEPS",
        help="model calls allowed after the question, refetches included (default: 4; "
        "e.g. --max-steps 1 forbids a refetch round trip)",
    )


def _add_setting_options(settings: Any) -> None:
    """The clearing settings compared: the heads, the turns kept, the baseline."""
    settings.add_argument(
        "--keep-heads",
        type=_natural,
        nargs="+",
        default=[0, 200, 500],
        metavar="CHARS",
        help="placeholder heads to try, one setting each (default: 0 200 500; "
        "e.g. --keep-heads 0 1000)",
    )
    settings.add_argument(
        "--keep-turns",
        type=_natural,
        default=None,
        metavar="N",
        help="never clear the results of the last N turns (default: 2, as ClearingPolicy; "
        "e.g. --keep-turns 0 lets even the latest results go)",
    )
    settings.add_argument(
        "--no-off", action="store_true", help="leave out the clearing-off baseline"
    )


def _add_output_options(output: Any) -> None:
    """How the report is printed and where the trials go."""
    output.add_argument(
        "--by",
        choices=("setting", "scenario"),
        default="setting",
        help="one row per setting (default), or per setting and scenario, e.g. --by scenario",
    )
    output.add_argument("--json", action="store_true", help="print the report (and trials) as JSON")
    output.add_argument(
        "--trials-jsonl",
        default=None,
        metavar="PATH",
        help="append each trial to PATH as it finishes (a long run keeps what it measured), "
        "e.g. trials.jsonl",
    )


_MODEL_HELP = (
    "openai:NAME, anthropic:NAME, or module:callable (a (messages, tools) -> message "
    "callable or a LangChain chat model), e.g. openai:gpt-4o-mini or mymodels:chat"
)


def _natural(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def resolve_model(
    spec: str, *, base_url: str | None = None, api_key: str | None = None
) -> ChatModel:
    """The model a ``--model`` spec names (see the module docstring).

    Raises:
        ConfigurationError: the spec is malformed or names nothing usable.
    """
    kind, _, rest = spec.partition(":")
    if not rest:
        raise ConfigurationError(
            f"--model {spec!r}: expected openai:NAME, anthropic:NAME or module:callable"
        )
    if kind == "openai":
        return openai_model(rest, base_url=base_url, api_key=api_key)
    if kind == "anthropic":
        return anthropic_model(rest, base_url=base_url, api_key=api_key)
    if os.getcwd() not in sys.path:  # as `python -m` would, so local modules import
        sys.path.insert(0, os.getcwd())
    try:
        found: Any = importlib.import_module(kind)
    except ImportError as exc:
        raise ConfigurationError(f"--model {spec!r}: cannot import {kind!r}: {exc}") from None
    try:
        found = operator.attrgetter(rest)(found)
    except AttributeError:
        raise ConfigurationError(f"--model {spec!r}: {kind!r} has no attribute {rest!r}") from None
    return as_model(found)


def run(args: argparse.Namespace) -> int:
    """Run ``slimtools recall``."""
    try:
        model = resolve_model(args.model, base_url=args.base_url, api_key=args.api_key)
        base = TURN_END if args.keep_turns is None else TURN_END.replace(keep_turns=args.keep_turns)
        settings = heads_sweep(args.keep_heads, base=base, clearing_off=not args.no_off)
        report = run_recall(
            args.scenarios or list(BUILTIN_SCENARIOS),
            model,
            settings,
            repeats=args.repeats,
            rounds=args.rounds,
            target=args.target,
            seed=args.seed,
            max_steps=args.max_steps,
            progress=_reporter(args.trials_jsonl, show=sys.stderr.isatty()),
        )
    except (SlimtoolsError, OSError) as exc:
        print(f"slimtools recall: {exc}", file=sys.stderr)
        return 1
    if args.json:
        config = {
            "model": args.model,
            "base_url": args.base_url,
            "repeats": args.repeats,
            "rounds": args.rounds,
            "target": args.target,
            "seed": args.seed,
            "max_steps": args.max_steps,
            "keep_turns": base.keep_turns,
        }
        print(json.dumps({"config": config, **report.to_json()}, indent=2, ensure_ascii=False))
    else:
        print(report.table(by_scenario=args.by == "scenario"))
    return 0


def _reporter(path: str | None, *, show: bool) -> Callable[[Trial, int, int], None]:
    """After each trial: append it to ``path`` (if given), show progress (on a terminal)."""

    def report(trial: Trial, done: int, total: int) -> None:
        if path is not None:
            with open(path, "a", encoding="utf-8") as out:
                out.write(json.dumps(dataclasses.asdict(trial), ensure_ascii=False) + "\n")
        if show:
            _progress(trial, done, total)

    return report


def _progress(trial: Trial, done: int, total: int) -> None:
    end = "\n" if done == total else ""
    print(
        f"\rrecall: {done}/{total} trials ({trial.scenario}, {trial.setting})",
        end=end,
        file=sys.stderr,
    )
