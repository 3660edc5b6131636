"""A scripted OpenAI-compatible model on loopback: every chat completion answers "Noted." (or
calls the tool a test queued), and every request is kept, so a test reads what a framework
sent the model."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List

REPLY = "Noted."


class ScriptedModel:
    """The server, started on a free port; ``url`` ends in ``/v1``."""

    def __init__(self) -> None:
        self.requests: List[Dict[str, Any]] = []
        self.tool_calls: List[Dict[str, Any]] = []
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
                model.requests.append({"path": self.path, "body": body})
                if not self.path.endswith("/chat/completions"):
                    self.send_error(404, f"the scripted model answers chat completions, not {self.path}")
                    return
                if body.get("stream"):
                    self._stream(body)
                elif model.tool_calls:
                    self._answer(calling(body, model.tool_calls.pop(0)))
                else:
                    self._answer(completion(body))

            def _answer(self, payload: Dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, body: Dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                for chunk in chunks(body):
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def tool_call(self, name: str, arguments: Dict[str, Any]) -> None:
        """The next (non-streamed) completion calls this tool instead of answering."""
        self.tool_calls.append({"id": f"call_{len(self.requests)}", "type": "function",
                                "function": {"name": name, "arguments": json.dumps(arguments)}})

    def last(self) -> Dict[str, Any]:
        """The newest request's body."""
        assert self.requests, "the model was never called"
        return self.requests[-1]["body"]

    def system_of_last(self) -> str:
        """What the newest request told the model in system (or developer) messages."""
        return self.system_of(self.last())

    @staticmethod
    def system_of(body: Dict[str, Any]) -> str:
        """What a request told the model in system (or developer) messages."""
        told = []
        for message in body.get("messages", []):
            if message.get("role") in ("system", "developer"):
                told.append(text_of(message.get("content")))
        return "\n".join(told)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def text_of(content: Any) -> str:
    """A message's text: a string, or the text parts of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def completion(body: Dict[str, Any]) -> Dict[str, Any]:
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "scripted"),
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": REPLY}}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def calling(body: Dict[str, Any], call: Dict[str, Any]) -> Dict[str, Any]:
    answer = completion(body)
    answer["choices"] = [{"index": 0, "finish_reason": "tool_calls",
                          "message": {"role": "assistant", "content": None, "tool_calls": [call]}}]
    return answer


def chunks(body: Dict[str, Any]) -> List[Dict[str, Any]]:
    base = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": body.get("model", "scripted")}
    return [
        {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": REPLY},
                              "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
         "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}},
    ]
