"""tau-bench trajectory lists: ``[{task_id, trial, reward, info, traj}, ...]``, one run each.

``traj`` is an OpenAI Chat history; ``tool_calls: null`` keys are dropped and nothing else
changes. A file holds many runs, and the loader reads them one at a time.
"""

from __future__ import annotations

from typing import Any

from slimtools.transcripts._api import content_path, origins_for
from slimtools.transcripts._model import Location, MalformedError, Run
from slimtools.transcripts._reader import Reader


def is_tau_bench_run(value: Any) -> bool:
    """One run of a tau-bench trajectory list."""
    return isinstance(value, dict) and isinstance(value.get("traj"), list)


def tau_bench_run(run: Any, base: Location) -> Run:
    """One tau-bench run as an OpenAI Chat history, labelled ``#<task_id>-<trial>``."""
    if not is_tau_bench_run(run):
        raise MalformedError("a tau-bench run needs a 'traj' list of messages")
    messages = []
    for i, m in enumerate(run["traj"]):
        if not isinstance(m, dict):
            raise MalformedError(f"traj[{i}] is a {type(m).__name__}, not a message object")
        messages.append({k: v for k, v in m.items() if not (k == "tool_calls" and not v)})
    ats = [base.child("traj", i) for i in range(len(messages))]
    origins = origins_for(messages, ats, "openai_chat", lambda s: content_path("openai_chat", s))
    label = f"#{run.get('task_id', '?')}-{run.get('trial', 0)}"
    return Run(messages, origins, "openai_chat", label=label)


TAU_BENCH = Reader(
    "tau_bench",
    "tau_bench",
    "runs",
    read_run=lambda doc, base, _forced: tau_bench_run(doc, base),
    is_run=is_tau_bench_run,
)
"""A list (or JSON Lines) of tau-bench runs."""
