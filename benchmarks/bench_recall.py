"""What the recall guide quotes about the built-in scenarios and its intervals, from the harness.

1. How often round M's answer is readable in what the model is sent (the placeholder's kept
   head), per built-in scenario, 20 seeds each at the defaults (10 rounds, the question on
   round 3, turn-end clearing), at heads of 0, 80, 200 and 500 characters; against clearing
   off, where the result itself is sent.
2. What a head costs: the token counter's count of round M's placeholder at each head, against
   the 0-character head, per cleared result and per 1,000.
3. The 95% Wilson bounds the guide reads at n = 20 (a behaviour never seen; 5 of 20), against
   the textbook normal interval, which collapses to nothing at 0 of n.

No model is called: a stand-in that declines records round M's result as it was sent. Every
figure is exact (no timing); ``tests/project/test_recall_figures.py`` recomputes them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from benchmarks.results import record
from slimtools.eval import heads_sweep, run_recall, wilson_interval
from slimtools.eval.report import Z95
from slimtools.tokens import count_tokens

SCENARIOS = ("log_search", "file_reading", "api_listing", "code_task")
"""The built-in scenarios, in the guide's column order."""
HEADS = (0, 80, 200, 500)
"""The ``keep_head`` sizes of the guide's table."""
REPEATS = 20
"""Seeds per scenario (``slimtools recall``'s default K)."""
TARGET = 3
"""Round M, the run's default (the question is asked after the default 10 rounds)."""
WILSON_N, WILSON_K = 20, 5
"""The guide's interval examples: none of 20, and 5 of 20."""


class _Sent:
    """A model that declines and keeps round M's result as each trial sent it."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def __call__(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
        call_id = f"call_{TARGET}"  # run_trial numbers round n's call call_n
        found = [m for m in messages if m.get("role") == "tool" and m["tool_call_id"] == call_id]
        if len(found) != 1:
            raise RuntimeError(f"expected one tool result answering {call_id}, got {len(found)}")
        self.texts.append(str(found[0]["content"]))
        return "I do not know."


def heads(
    scenarios: Sequence[str] = SCENARIOS,
    sizes: Sequence[int] = HEADS,
    repeats: int = REPEATS,
) -> dict[str, float]:
    """Readable counts and mean placeholder tokens of round M, per scenario and head.

    Keys: ``n`` (trials a cell), ``off_<scenario>`` (readable with clearing off),
    ``<scenario>_<head>`` (readable at that head) and ``tokens_<head>`` (mean tokens of round
    M as sent, over every scenario's trials; ``tokens_off`` with clearing off).
    """
    values: dict[str, float] = {"n": repeats}
    for label, policy in heads_sweep(sizes):
        key = "off" if policy is None else str(policy.keep_head)
        sent = _Sent()
        report = run_recall(
            list(scenarios), sent, [(label, policy)], repeats=repeats, target=TARGET
        )
        for scenario in scenarios:
            readable = sum(t.visible for t in report.trials if t.scenario == scenario)
            values[f"off_{scenario}" if policy is None else f"{scenario}_{key}"] = readable
        values[f"tokens_{key}"] = sum(map(count_tokens, sent.texts)) / len(sent.texts)
    return values


def head_costs(values: dict[str, float], sizes: Sequence[int] = HEADS) -> dict[str, float]:
    """Tokens a head adds to a placeholder over none: per result, and per 1,000 results
    (rounded to the hundred, as the guide quotes it)."""
    out: dict[str, float] = {}
    for size in sizes[1:]:
        extra = values[f"tokens_{size}"] - values[f"tokens_{sizes[0]}"]
        out[f"extra_{size}"] = extra
        out[f"extra_{size}_per_1000"] = round(extra * 1000, -2)
    return out


def normal_interval(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """The textbook ``p ± z·sqrt(p(1-p)/n)``, clipped to [0, 1] (the baseline Wilson beats)."""
    p = successes / trials
    half = z * math.sqrt(p * (1 - p) / trials)
    return max(0.0, p - half), min(1.0, p + half)


def wilson(n: int = WILSON_N, k: int = WILSON_K) -> dict[str, float]:
    """The Wilson bounds of none of ``n`` and ``k`` of ``n``, and the normal ones beside them."""
    none_low, none_high = wilson_interval(0, n)
    k_low, k_high = wilson_interval(k, n)
    normal_low, normal_high = normal_interval(k, n)
    return {
        "n": n,
        "k": k,
        "none_low": none_low,
        "none_high": none_high,
        "k_low": k_low,
        "k_high": k_high,
        "normal_k_low": normal_low,
        "normal_k_high": normal_high,
    }


def _record_heads(values: dict[str, float]) -> None:
    n = int(values["n"])
    total = n * len(SCENARIOS)
    per_head = [sum(int(values[f"{s}_{h}"]) for s in SCENARIOS) for h in HEADS]
    off = sum(int(values[f"off_{s}"]) for s in SCENARIOS)
    print(f"1. round {TARGET}'s answer readable in what the model is sent, of {n} seeds")
    print(f"   {'head':>12} " + " ".join(f"{s:>12}" for s in SCENARIOS))
    print(f"   {'off':>12} " + " ".join(f"{int(values[f'off_{s}']):>12}" for s in SCENARIOS))
    for h in HEADS:
        print(f"   {h:>12} " + " ".join(f"{int(values[f'{s}_{h}']):>12}" for s in SCENARIOS))
    record(
        f"recall, answer readable in round {TARGET}'s placeholder ({len(SCENARIOS)} built-in "
        f"scenarios x {n} seeds): heads " + " / ".join(map(str, HEADS)),
        baseline=f"clearing off: {off}/{total}",
        measured=" / ".join(map(str, per_head)) + f" of {total}",
        ratio=f"{per_head[-1] / total:.0%} readable at a {HEADS[-1]}-character head",
        **values,
    )


def _record_costs(values: dict[str, float]) -> None:
    costs = head_costs(values)
    sizes = HEADS[1:]
    print(f"2. round {TARGET}'s placeholder, mean tokens (token counter)")
    for key in ("off", *map(str, HEADS)):
        print(f"   {key:>12} {values[f'tokens_{key}']:8.1f}")
    record(
        f"recall, round {TARGET}'s placeholder tokens at heads " + " / ".join(map(str, sizes)),
        baseline=f"head {HEADS[0]}: {values[f'tokens_{HEADS[0]}']:.1f} tokens",
        measured=" / ".join(f"{values[f'tokens_{h}']:.1f}" for h in sizes) + " tokens",
        ratio=" / ".join(f"+{costs[f'extra_{h}']:.1f}" for h in sizes)
        + f" a result; +{costs['extra_200_per_1000']:,.0f} on 1,000 results at 200",
        **{f"tokens_{h}": values[f"tokens_{h}"] for h in HEADS},
        **costs,
    )


def _span(low: float, high: float) -> str:
    """``11-47%``: an interval in whole percents."""
    return f"{low * 100:.0f}-{high:.0%}"


def _record_wilson() -> None:
    v = wilson()
    n, k = int(v["n"]), int(v["k"])
    print(f"3. 95% intervals at n = {n}")
    print(f"   0 of {n}: Wilson {v['none_low']:.1%}-{v['none_high']:.1%}, normal 0.0%-0.0%")
    print(
        f"   {k} of {n}: Wilson {v['k_low']:.1%}-{v['k_high']:.1%}, "
        f"normal {v['normal_k_low']:.1%}-{v['normal_k_high']:.1%}"
    )
    record(
        f"Wilson 95% interval at n = {n}: none seen / {k} seen",
        baseline=f"normal approximation: 0-0% / {_span(v['normal_k_low'], v['normal_k_high'])}",
        measured=f"0-{v['none_high']:.0%} / {_span(v['k_low'], v['k_high'])}",
        ratio=f"a behaviour never seen keeps an upper bound of {v['none_high']:.0%}",
        **v,
    )


def main() -> None:
    values = heads()
    _record_heads(values)
    _record_costs(values)
    _record_wilson()


if __name__ == "__main__":
    main()
