"""The recall harness offline: two scripted "models", one careful and one careless.

Run it with ``python examples/recall_sweep.py``. Replace either function with a call to your
own model (``(messages, tools) -> assistant message``) to measure it; ``slimtools recall
--model module:function`` does the same from the command line.
"""

from __future__ import annotations

import re
from typing import Any

from slimtools.clearing import is_placeholder
from slimtools.eval import run_recall


def careful(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
    """Calls every cleared tool again before answering (here it then admits it cannot read)."""
    if messages[-1]["role"] == "tool":
        return "I fetched the results again but will not guess the exact value."
    calls = {c["id"]: c for m in messages for c in m.get("tool_calls") or ()}
    again = [
        {"id": f"again_{n}", "type": "function", "function": calls[m["tool_call_id"]]["function"]}
        for n, m in enumerate(x for x in messages if x["role"] == "tool")
        if is_placeholder(m["content"])
    ]
    return {"role": "assistant", "content": "", "tool_calls": again}


def careless(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
    """Answers the last value of the asked kind anywhere in its context: often a fabrication."""
    question = messages[-1]["content"]
    text = " ".join(str(m.get("content") or "") for m in messages[:-1])
    kind = (
        r"\d{2}:\d{2}:\d{2}(?:\.\d+)?" if "timestamp" in question else r"(?<![\w.:-])\d+(?![\w.:-])"
    )
    found = re.findall(kind, text)
    return f"It was {found[-1]}." if found else "I don't know."


def main() -> None:
    """A small sweep of both models over two built-in scenarios."""
    for model in (careful, careless):
        report = run_recall(["file_reading", "log_search"], model, repeats=5)
        print(f"== {model.__name__}")
        print(report.table())
        print()


if __name__ == "__main__":
    main()
