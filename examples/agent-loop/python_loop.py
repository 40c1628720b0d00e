"""An agent loop in Python over a raw Chat Completions HTTP API, with toolport's Python client.

    PYTHONPATH=clients/python MODEL_URL=https://api.openai.com/v1 MODEL_KEY=… python3 examples/agent-loop/python_loop.py
"""

from __future__ import annotations

import json
import os
import sys
import urllib.request
from typing import Any, Dict, List

from toolport_client import Failure, ToolportClient


def complete(model_url: str, model_key: str, body: Dict[str, Any]) -> Dict[str, Any]:
    request = urllib.request.Request(
        model_url.rstrip("/") + "/chat/completions",
        data=json.dumps(body).encode("utf-8"),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {model_key}"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.loads(response.read())


def chat_loop(toolport: ToolportClient, model_url: str, model_key: str, model: str, prompt: str, max_turns: int = 8) -> str:
    listed = toolport.list_tools(format="openai")
    if isinstance(listed, Failure):
        raise RuntimeError(f"toolport: {listed.detail}")
    messages: List[Dict[str, Any]] = [{"role": "user", "content": prompt}]
    for _ in range(max_turns):
        message = complete(model_url, model_key, {"model": model, "messages": messages, "tools": listed["tools"]})["choices"][0]["message"]
        messages.append(message)
        if not message.get("tool_calls"):
            return message.get("content") or ""
        answer = toolport.invoke_turn(message, format="openai")
        if isinstance(answer, Failure):
            raise RuntimeError(f"toolport: {answer.detail}")
        messages.extend(answer["messages"])
    raise RuntimeError(f"no answer after {max_turns} turns")


if __name__ == "__main__":
    client = ToolportClient(os.environ.get("TOOLPORT_URL", "http://127.0.0.1:8080"), api_key=os.environ.get("TOOLPORT_API_KEY"))
    print(chat_loop(client, os.environ.get("MODEL_URL", "https://api.openai.com/v1"), os.environ.get("MODEL_KEY", ""), os.environ.get("MODEL", "gpt-4.1-mini"), " ".join(sys.argv[1:]) or "What is 2 + 3? Use the add tool."))
