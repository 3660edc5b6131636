"""The chat example, run as a user runs it, against a scripted OpenAI-compatible model server on
loopback: the second session's first request to the model carries what the first was told."""

from __future__ import annotations

import http.server
import json
import os
import pathlib
import subprocess
import sys
import threading
from typing import Any, List

EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "examples" / "chat.py"


class Model(http.server.BaseHTTPRequestHandler):
    """Answers every chat completion with "Noted.", keeping the requests."""

    requests: List[Any] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        Model.requests.append((self.path, body))
        answer = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "Noted."}}]}
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


def test_a_second_session_is_told_what_the_first_was(tmp_path: pathlib.Path) -> None:
    model = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Model)
    threading.Thread(target=model.serve_forever, daemon=True).start()
    Model.requests = []
    env = dict(os.environ, OPENAI_BASE_URL=f"http://127.0.0.1:{model.server_address[1]}/v1",
               OPENAI_MODEL="scripted", OPENAI_API_KEY="none")
    db = str(tmp_path / "chat.db")
    try:
        for session, line in [("s1", "My sister Ana moved to Porto last spring.\n"),
                              ("s2", "Where does my sister live now?\n")]:
            run = subprocess.run([sys.executable, str(EXAMPLE), db, session], input=line,
                                 capture_output=True, text=True, env=env, timeout=120)
            assert run.returncode == 0, run.stderr
            assert run.stdout.strip() == "Noted."
    finally:
        model.shutdown()
    (path, first), (_, second) = Model.requests
    assert path == "/v1/chat/completions" and first["model"] == "scripted"
    assert "Porto" not in first["messages"][0]["content"]
    assert "Ana moved to Porto" in second["messages"][0]["content"], second
    assert second["messages"][1] == {"role": "user", "content": "Where does my sister live now?"}
