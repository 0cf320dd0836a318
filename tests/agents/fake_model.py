"""A scripted model server that the real coding agents talk to instead of their vendor's API.

It speaks, well enough for Claude Code, Codex CLI and Gemini CLI to accept it:
- Anthropic Messages (`POST /v1/messages`, SSE when `"stream": true`, plus `count_tokens`);
- OpenAI Responses (`POST /v1/responses` or `/responses`, SSE);
- Gemini (`POST /v1beta/models/<model>:generateContent` and `:streamGenerateContent?alt=sse`).

It plays a script: a list of steps, each a tool call (`("shell", "pytest -q")`,
`("read", "/abs/calc.py")`) or a final text (`("text", "Done.")`). Which step a request gets is
decided from the conversation itself, not from a counter: step N answers the request that
already carries N tool results. So an agent's retry of a request, or a side request of its own
(a title, a next-speaker check), never shifts the script. A request without tools is a side
request and gets a short text. Every request body is logged (`server.requests`) so a test can
assert what the model saw.

Stdlib only. Run it alone for manual work: `python3 fake_model.py --port 8765`.
"""

from __future__ import annotations

import itertools
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_ids = itertools.count(1)


def _next_id(prefix: str) -> str:
    return f"{prefix}{next(_ids):06d}"


# ---------------------------------------------------------------------------------------------
# What a request already holds


def tool_results(kind: str, body: dict) -> list[str]:
    """The text of every tool result in a request, oldest first."""
    out = []
    if kind == "anthropic":
        for message in body.get("messages") or []:
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    out.append(_flatten(block.get("content")))
    elif kind == "openai":
        for item in body.get("input") or []:
            if isinstance(item, dict) and item.get("type", "").endswith("_call_output"):
                out.append(_flatten(item.get("output")))
    else:
        for content in body.get("contents") or []:
            for part in content.get("parts") or []:
                if isinstance(part, dict) and "functionResponse" in part:
                    out.append(json.dumps(part["functionResponse"].get("response"), ensure_ascii=False))
    return out


def _flatten(value) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_flatten(v.get("text", v) if isinstance(v, dict) else v) for v in value)
    return json.dumps(value, ensure_ascii=False)


def tool_names(kind: str, body: dict) -> list[str]:
    tools = body.get("tools") or []
    if kind == "gemini":
        return [d.get("name", "") for t in tools for d in (t.get("functionDeclarations") or [])]
    return [t.get("name", "") for t in tools if isinstance(t, dict)]


def request_text(body: dict) -> str:
    """The whole request as text (what "the model saw")."""
    return json.dumps(body, ensure_ascii=False)


# ---------------------------------------------------------------------------------------------
# Steps -> each agent's tool calls


def tool_call(kind: str, step: tuple, names: list[str]) -> tuple[str, dict]:
    """(tool name, arguments) of a script step in the agent's own tools."""
    what, arg = step
    if kind == "anthropic":
        if what == "shell":
            return "Bash", {"command": arg, "description": "Run a command"}
        return "Read", {"file_path": arg}
    if kind == "gemini":
        if what == "shell":
            return "run_shell_command", {"command": arg, "description": "Run a command"}
        return "read_file", {"file_path": arg}
    if what == "read":  # Codex has no read tool: it reads with the shell
        what, arg = "shell", f"cat {arg}"
    if "exec_command" in names:
        return "exec_command", {"cmd": arg}
    if "shell_command" in names:
        return "shell_command", {"command": arg}
    return "shell", {"command": ["bash", "-lc", arg]}


# ---------------------------------------------------------------------------------------------
# Answers


def sse(events: list[tuple[str | None, dict]]) -> bytes:
    out = []
    for name, data in events:
        head = f"event: {name}\n" if name else ""
        out.append(f"{head}data: {json.dumps(data)}\n\n")
    return "".join(out).encode()


def anthropic_answer(step, names, body) -> tuple[list, dict]:
    """(SSE events, the same message as one JSON object)."""
    msg_id = _next_id("msg_fake")
    model = body.get("model", "claude-fake")
    usage = {"input_tokens": 100, "output_tokens": 20, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    start = {"id": msg_id, "type": "message", "role": "assistant", "model": model, "content": [],
             "stop_reason": None, "stop_sequence": None, "usage": usage}
    events = [("message_start", {"type": "message_start", "message": start})]
    if step[0] == "text":
        block = {"type": "text", "text": step[1]}
        events += [("content_block_start", {"type": "content_block_start", "index": 0,
                                            "content_block": {"type": "text", "text": ""}}),
                   ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                            "delta": {"type": "text_delta", "text": step[1]}})]
        stop = "end_turn"
    else:
        name, args = tool_call("anthropic", step, names)
        block = {"type": "tool_use", "id": _next_id("toolu_fake"), "name": name, "input": args}
        events += [("content_block_start", {"type": "content_block_start", "index": 0,
                                            "content_block": dict(block, input={})}),
                   ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                            "delta": {"type": "input_json_delta", "partial_json": json.dumps(args)}})]
        stop = "tool_use"
    events += [("content_block_stop", {"type": "content_block_stop", "index": 0}),
               ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                  "usage": {"output_tokens": 20}}),
               ("message_stop", {"type": "message_stop"})]
    whole = dict(start, content=[block], stop_reason=stop)
    return events, whole


def openai_answer(step, names, body) -> list:
    resp_id = _next_id("resp_fake")
    if step[0] == "text":
        item = {"type": "message", "role": "assistant", "id": _next_id("msg_fake"), "status": "completed",
                "content": [{"type": "output_text", "text": step[1], "annotations": []}]}
    else:
        name, args = tool_call("openai", step, names)
        item = {"type": "function_call", "id": _next_id("fc_fake"), "call_id": _next_id("call_fake"),
                "name": name, "arguments": json.dumps(args), "status": "completed"}
    usage = {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 20,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 120}
    base = {"id": resp_id, "object": "response", "model": body.get("model", "gpt-fake")}
    return [("response.created", {"type": "response.created", "response": dict(base, status="in_progress", output=[])}),
            ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item}),
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
            ("response.completed", {"type": "response.completed",
                                    "response": dict(base, status="completed", output=[item], usage=usage)})]


def gemini_answer(step, names, body) -> dict:
    if step[0] == "text":
        part = {"text": step[1]}
    else:
        name, args = tool_call("gemini", step, names)
        part = {"functionCall": {"name": name, "args": args}}
    return {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 20, "totalTokenCount": 120},
            "modelVersion": "gemini-fake"}


def gemini_side_answer(body: dict) -> dict:
    """Gemini CLI's own JSON side questions (next speaker, routing): a valid, dull answer."""
    config = body.get("generationConfig") or {}
    schema = json.dumps(config.get("responseJsonSchema") or config.get("responseSchema") or {})
    if "next_speaker" in schema:
        text = json.dumps({"reasoning": "The task is done.", "next_speaker": "user"})
    elif "complexity_score" in schema:
        text = json.dumps({"complexity_reasoning": "A simple task.", "complexity_score": 10})
    elif "model_choice" in schema:
        text = json.dumps({"reasoning": "A simple task.", "model_choice": "flash"})
    else:
        text = "{}"
    return gemini_answer(("text", text), [], body)


# ---------------------------------------------------------------------------------------------
# The server


class FakeModel:
    """`FakeModel().start()`; set `.script` before each agent run; read `.requests` after."""

    def __init__(self, script: list | None = None):
        self.script = list(script or [])
        self.requests: list[dict] = []  # {"kind", "path", "body", "step"}
        self.lock = threading.Lock()
        self.server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self, port: int = 0) -> FakeModel:
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_args):
                pass

            def do_GET(self):  # model lists and health checks: an empty, valid answer
                self._json(200, {"data": [], "models": []})

            def do_HEAD(self):
                self._send(200, "application/json", b"")

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                model.answer(self, body)

            def _send(self, code: int, ctype: str, data: bytes):
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _json(self, code: int, doc):
                self._send(code, "application/json", json.dumps(doc).encode())

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def reset(self, script: list) -> None:
        with self.lock:
            self.script = list(script)
            self.requests = []

    # -- one request

    def answer(self, handler, body: dict) -> None:
        path = handler.path
        kind = "anthropic" if "/messages" in path else "openai" if "responses" in path else \
            "gemini" if ":generateContent" in path or ":streamGenerateContent" in path else None
        if kind is None:
            return handler._json(200, {"input_tokens": 100, "totalTokens": 100} if "count" in path.lower() else {})
        if kind == "anthropic" and path.rstrip("/").endswith("count_tokens"):
            return handler._json(200, {"input_tokens": 100})
        names = tool_names(kind, body)
        step = self._step(kind, body, names)
        with self.lock:
            self.requests.append({"kind": kind, "path": path, "body": body, "step": step, "tools": bool(names)})
        if kind == "anthropic":
            events, whole = anthropic_answer(step, names, body)
            return self._stream(handler, events) if body.get("stream") else handler._json(200, whole)
        if kind == "openai":
            return self._stream(handler, openai_answer(step, names, body))
        side = not names
        doc = gemini_side_answer(body) if side else gemini_answer(step, names, body)
        if ":streamGenerateContent" in path:
            return self._stream(handler, [(None, doc)])
        return handler._json(200, doc)

    def _step(self, kind: str, body: dict, names: list[str]) -> tuple:
        if not names:
            return ("text", "OK")
        done = len(tool_results(kind, body))
        with self.lock:
            script = self.script
        return tuple(script[done]) if done < len(script) else ("text", "Done.")

    @staticmethod
    def _stream(handler, events) -> None:
        data = sse(events)
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Cache-Control", "no-cache")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
        handler.wfile.flush()

    # -- what the model saw

    def agent_requests(self) -> list[dict]:
        """The main-loop requests (the ones offering tools), in order."""
        return [r for r in self.requests if r["tools"]]

    def request_after(self, n_results: int) -> dict | None:
        """The first main-loop request that carries `n_results` tool results."""
        for r in self.agent_requests():
            if len(tool_results(r["kind"], r["body"])) == n_results:
                return r
        return None


if __name__ == "__main__":
    import argparse
    import time

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--script", help="a JSON list of [kind, arg] steps")
    parser.add_argument("--log", help="append every request body here (JSON lines)")
    args = parser.parse_args()
    fake = FakeModel(json.loads(args.script) if args.script else [["text", "Hello."]]).start(args.port)
    print(f"fake model on {fake.url}", flush=True)
    seen = 0
    while True:
        time.sleep(0.5)
        if args.log and len(fake.requests) > seen:
            with open(args.log, "a", encoding="utf-8") as fh:
                fh.writelines(json.dumps(r) + "\n" for r in fake.requests[seen:])
            seen = len(fake.requests)
