"""A client for toolport with nothing beyond Python's standard library (3.9+).

    from toolport_client import ToolportClient, Failure

    client = ToolportClient("http://127.0.0.1:8080", api_key=None)
    result = client.invoke("add", {"a": 2, "b": 3})
    if isinstance(result, Failure):
        print("refused:", result.detail)
    elif not result["success"]:
        print("the tool failed:", result["message"])
    else:
        print(result["content"])

Failures are data, not exceptions: a request the service refuses (4xx) or cannot answer (no
connection, 5xx after the retries) comes back as a `Failure`; a tool's own failure is a result
with `success: false`, as over HTTP. A POST is retried after a connection failure or a 5xx with
the same made-up Idempotency-Key on every attempt, so a retry never doubles an effect.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Union

__all__ = ["ToolportClient", "Failure", "Json"]

Json = Dict[str, Any]

FORMATS = ("native", "openai", "openai-responses", "anthropic", "gemini", "mcp")
_TERMINAL = ("completed", "failed", "cancelled")
_MAX_WAIT_MS = 30_000


@dataclass(frozen=True)
class Failure:
    """A refused request (status 4xx), or no usable answer (status None: no connection; 5xx)."""

    status: Optional[int]
    title: str
    detail: str
    problem: Json = field(default_factory=dict)

    def __bool__(self) -> bool:  # `if result:` reads as "it worked"
        return False


class ToolportClient:
    """The service at `base_url`; `api_key` is sent as a bearer token; `retries` further attempts."""

    def __init__(self, base_url: str, api_key: Optional[str] = None, retries: int = 2, timeout_s: float = 60.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.retries = retries
        self.timeout_s = timeout_s

    def list_tools(self, format: Optional[str] = None) -> Union[Json, Failure]:
        """The tools this key may call, rendered for a provider (`format`, default native)."""
        return self._send("GET", "/tools", query={"format": format})

    def invoke(
        self,
        name: str,
        args: Optional[Mapping[str, Any]] = None,
        session_id: Optional[str] = None,
        idempotency_key: Optional[str] = None,
        timeout_ms: Optional[int] = None,
    ) -> Union[Json, Failure]:
        """Runs one call; the answer is the result (`success`, `message`, `value`, `content`, `tool_message`…)."""
        body = {"name": name, "arguments": dict(args or {})}
        return self._send("POST", "/tools/invoke", query={"format": "native"}, body=body, headers=_call_headers(session_id, idempotency_key, timeout_ms))

    def invoke_turn(self, turn: Any, format: str, session_id: Optional[str] = None) -> Union[Json, Failure]:
        """Runs a whole assistant turn as the provider produced it; `messages` is what to append."""
        if format not in FORMATS:
            raise ValueError(f"format must be one of {', '.join(FORMATS)}")
        return self._send("POST", "/tools/invoke", query={"format": format}, body=turn, headers=_call_headers(session_id, None, None))

    def start_task(self, name: str, args: Optional[Mapping[str, Any]] = None, session_id: Optional[str] = None) -> Union[Json, Failure]:
        """Starts the call as a task, answered at once; follow it with wait_task."""
        headers = {**_call_headers(session_id, None, None), "Prefer": "respond-async"}
        return self._send("POST", "/tools/invoke", query={"format": "native"}, body={"name": name, "arguments": dict(args or {})}, headers=headers)

    def wait_task(self, task_id: str, timeout_ms: int = 60_000) -> Union[Json, Failure]:
        """The task once it has ended, or as it stands when `timeout_ms` runs out."""
        until = time.monotonic() + timeout_ms / 1000
        while True:
            wait = max(0, min(_MAX_WAIT_MS, int((until - time.monotonic()) * 1000)))
            task = self._send("GET", f"/tasks/{urllib.parse.quote(task_id, safe='')}", query={"wait_ms": str(wait)})
            if isinstance(task, Failure) or task.get("status") in _TERMINAL or time.monotonic() >= until:
                return task

    def list_approvals(self, status: str = "pending") -> Union[List[Json], Failure]:
        """Approvals this key may decide, and its own requests."""
        answer = self._send("GET", "/approvals", query={"status": status})
        return answer if isinstance(answer, Failure) else list(answer.get("approvals", []))

    def decide(self, approval_id: str, decision: str, note: Optional[str] = None, arguments: Optional[Mapping[str, Any]] = None) -> Union[Json, Failure]:
        """`decision` is "approve" or "deny"; `arguments` (approve only) replaces the call's arguments."""
        body: Json = {"decision": decision}
        if note is not None:
            body["note"] = note
        if arguments is not None:
            body["arguments"] = dict(arguments)
        return self._send("POST", f"/approvals/{urllib.parse.quote(approval_id, safe='')}/decision", body=body)

    def read_result(self, result_id: str) -> Union[Json, Failure]:
        """The whole of a cut result: its id, or the toolport://results/<id> URI of a result_ref."""
        bare = result_id[len("toolport://results/"):] if result_id.startswith("toolport://results/") else result_id
        return self._send("GET", f"/results/{urllib.parse.quote(bare, safe='')}")

    def _send(
        self,
        method: str,
        path: str,
        query: Optional[Mapping[str, Optional[str]]] = None,
        body: Any = None,
        headers: Optional[Mapping[str, str]] = None,
    ) -> Any:
        params = {k: v for k, v in (query or {}).items() if v is not None}
        url = self.base_url + path + (f"?{urllib.parse.urlencode(params)}" if params else "")
        sent: Dict[str, str] = {"Accept": "application/json", **(headers or {})}
        if self.api_key:
            sent["Authorization"] = f"Bearer {self.api_key}"
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            sent["Content-Type"] = "application/json"
        # One key for every attempt: a retried POST that did reach the service replays, never runs twice.
        if method == "POST" and "Idempotency-Key" not in sent:
            sent["Idempotency-Key"] = str(uuid.uuid4())
        last = Failure(None, "unreachable", f"toolport at {self.base_url} did not answer")
        for attempt in range(self.retries + 1):
            if attempt > 0:
                time.sleep(0.1 * 2 ** (attempt - 1))
            request = urllib.request.Request(url, data=data, headers=sent, method=method)
            try:
                with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                    text = response.read().decode("utf-8")
                    return json.loads(text) if text else None
            except urllib.error.HTTPError as err:
                problem = _problem_of(err.code, err.read().decode("utf-8", "replace"))
                failure = Failure(err.code, str(problem.get("title", "refused")), str(problem.get("detail", "")), problem)
                if err.code < 500:
                    return failure
                last = failure
            except (urllib.error.URLError, ConnectionError, TimeoutError) as err:
                reason = getattr(err, "reason", err)
                last = Failure(None, "unreachable", f"toolport at {self.base_url} did not answer: {reason}")
        return last


def _call_headers(session_id: Optional[str], idempotency_key: Optional[str], timeout_ms: Optional[int]) -> Dict[str, str]:
    headers: Dict[str, str] = {}
    if session_id is not None:
        headers["X-Session-Id"] = session_id
    if idempotency_key is not None:
        headers["Idempotency-Key"] = idempotency_key
    if timeout_ms is not None:
        headers["X-Timeout-Ms"] = str(timeout_ms)
    return headers


def _problem_of(status: int, text: str) -> Json:
    try:
        parsed = json.loads(text)
        if isinstance(parsed, dict):
            return {**parsed, "status": status}
    except ValueError:
        pass
    return {"status": status, "title": "refused", "detail": text[:500]}
