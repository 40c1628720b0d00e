"""The Python client against a running toolport (TOOLPORT_URL, TOOLPORT_API_KEY), as CI runs it:

    TOOLPORT_URL=http://127.0.0.1:8080 TOOLPORT_API_KEY=… python3 -m unittest discover clients/python

The service must serve the test tools `echo`, `fails` and `charge_global` (test/integration/python-client.test.ts starts one).
"""

from __future__ import annotations

import http.server
import os
import threading
import unittest
import urllib.request
import uuid
from typing import List, Optional

from toolport_client import Failure, ToolportClient

URL = os.environ.get("TOOLPORT_URL", "http://127.0.0.1:8080")
KEY = os.environ.get("TOOLPORT_API_KEY")


class DroppingProxy:
    """Forwards to toolport, but drops the connection of the first POST after toolport answered it."""

    def __init__(self) -> None:
        self.keys: List[Optional[str]] = []
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                proxy.keys.append(self.headers.get("Idempotency-Key"))
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length", "connection")}
                request = urllib.request.Request(URL + self.path, data=body, headers=headers, method="POST")
                with urllib.request.urlopen(request) as answer:
                    payload = answer.read()
                if len(proxy.keys) == 1:
                    self.connection.close()  # the effect happened; the client never hears of it
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()


class ToolportClientTest(unittest.TestCase):
    def setUp(self) -> None:
        self.client = ToolportClient(URL, api_key=KEY)

    def test_lists_tools_in_a_provider_format(self) -> None:
        listed = self.client.list_tools(format="anthropic")
        assert not isinstance(listed, Failure), listed
        self.assertIn("echo", [tool["name"] for tool in listed["tools"]])
        self.assertIn("input_schema", listed["tools"][0])

    def test_invokes_a_call_and_a_tool_level_failure_is_a_result(self) -> None:
        echoed = self.client.invoke("echo", {"text": "hi"})
        assert not isinstance(echoed, Failure), echoed
        self.assertTrue(echoed["success"])
        self.assertEqual(echoed["value"], {"text": "hi"})
        failed = self.client.invoke("fails")
        assert not isinstance(failed, Failure), failed
        self.assertFalse(failed["success"])
        self.assertEqual(failed["message"], "Nothing found: try another query.")

    def test_invokes_a_turn_and_answers_the_messages_to_append(self) -> None:
        turn = {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "echo", "arguments": '{"text": "a"}'}}]}
        answer = self.client.invoke_turn(turn, format="openai")
        assert not isinstance(answer, Failure), answer
        self.assertEqual(answer["messages"][0]["role"], "tool")
        self.assertEqual(answer["messages"][0]["tool_call_id"], "call_1")

    def test_starts_a_task_and_waits_for_it(self) -> None:
        task = self.client.start_task("echo", {"text": "later"})
        assert not isinstance(task, Failure), task
        done = self.client.wait_task(task["task_id"], timeout_ms=10_000)
        assert not isinstance(done, Failure), done
        self.assertEqual(done["status"], "completed")
        self.assertTrue(done["result"]["success"])

    def test_a_refused_key_and_no_service_are_failures_not_exceptions(self) -> None:
        refused = ToolportClient(URL, api_key="sk-nobody").invoke("echo", {"text": "x"})
        self.assertIsInstance(refused, Failure)
        assert isinstance(refused, Failure)
        self.assertEqual(refused.status, 401)
        down = ToolportClient("http://127.0.0.1:9", retries=0).list_tools()
        self.assertIsInstance(down, Failure)
        assert isinstance(down, Failure)
        self.assertIsNone(down.status)
        missing = self.client.read_result("toolport://results/" + str(uuid.uuid4()))
        self.assertIsInstance(missing, Failure)
        assert isinstance(missing, Failure)
        self.assertEqual(missing.status, 404)

    def test_retries_a_dropped_post_with_the_same_idempotency_key_so_the_effect_runs_once(self) -> None:
        proxy = DroppingProxy()
        try:
            tag = f"python-{uuid.uuid4()}"
            result = ToolportClient(proxy.url, api_key=KEY).invoke("charge_global", {"tag": tag})
            assert not isinstance(result, Failure), result
            self.assertTrue(result["success"])
            self.assertTrue(result["replayed"])
            self.assertEqual(len(proxy.keys), 2)
            self.assertEqual(proxy.keys[0], proxy.keys[1])
        finally:
            proxy.close()


if __name__ == "__main__":
    unittest.main()
