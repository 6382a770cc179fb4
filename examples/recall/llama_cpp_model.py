"""A local GGUF model as the model under test of ``slimtools recall`` (llama-cpp-python).

Point ``SLIMTOOLS_GGUF`` at a chat model whose GGUF carries a tool-calling chat template in
the Hermes/Qwen style (tool calls as ``<tool_call>{"name": ..., "arguments": ...}</tool_call>``),
then::

    pip install llama-cpp-python
    SLIMTOOLS_GGUF=qwen2.5-coder-0.5b-instruct-q4_k_m.gguf \\
        slimtools recall --model examples.recall.llama_cpp_model:model --repeats 10

The prompt is rendered with the model's own chat template (tools included) and decoded
greedily; this file is the whole adapter, and a template for wrapping any other local runtime.
"""

from __future__ import annotations

import json
import os
import re
from functools import cache
from typing import Any

_CALL = re.compile(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", re.DOTALL)


@cache
def _load() -> tuple[Any, Any]:
    from llama_cpp import Llama
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    path = os.environ.get("SLIMTOOLS_GGUF")
    if not path:
        raise RuntimeError("set SLIMTOOLS_GGUF to the path of a .gguf chat model")
    llm = Llama(
        model_path=path,
        n_ctx=int(os.environ.get("SLIMTOOLS_GGUF_CTX", "16384")),
        n_threads=int(os.environ.get("SLIMTOOLS_GGUF_THREADS", "2")),
        verbose=False,
    )
    meta = llm.metadata
    formatter = Jinja2ChatFormatter(
        template=meta["tokenizer.chat_template"],
        eos_token=llm.detokenize([llm.token_eos()]).decode(),
        bos_token=llm.detokenize([llm.token_bos()]).decode(),
    )
    return llm, formatter


def _for_template(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Hermes-style templates expect call arguments as objects and content as text."""
    out = []
    for message in messages:
        m = {**message, "content": message.get("content") or ""}
        if m.get("tool_calls"):
            m["tool_calls"] = [
                {
                    **c,
                    "function": {
                        **c["function"],
                        "arguments": json.loads(c["function"]["arguments"]),
                    },
                }
                for c in m["tool_calls"]
            ]
        out.append(m)
    return out


def model(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    """``(messages, tools) -> assistant message`` for slimtools.eval.recall."""
    llm, formatter = _load()
    prompt = formatter(messages=_for_template(messages), tools=tools).prompt
    done = llm.create_completion(
        prompt, max_tokens=256, temperature=0.0, stop=["<|im_end|>", "<|endoftext|>"]
    )
    text = done["choices"][0]["text"]
    calls = []
    for n, raw in enumerate(_CALL.findall(text)):
        try:
            call = json.loads(raw)
        except ValueError:
            continue
        arguments = call.get("arguments", {})
        calls.append(
            {
                "id": f"local_{n}",
                "type": "function",
                "function": {"name": str(call.get("name", "")), "arguments": json.dumps(arguments)},
            }
        )
    content = _CALL.sub("", text).strip()
    return {"role": "assistant", "content": content, "tool_calls": calls}
