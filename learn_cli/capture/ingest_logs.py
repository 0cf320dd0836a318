"""Codex CLI and Gemini CLI session logs -> the hook payloads their agent would have sent.

`learn ingest` (capture.ingest) replays Claude Code transcripts; this module lets it replay
the other two agents' logs through the same learner, each line turned into the payload that
agent's hook would have carried, then into an Event by that agent's own adapter. Formats, as
written by Codex 0.171.0 and Gemini CLI 0.61.0 (tests/data/agent-logs):

- Codex `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`: a `session_meta` line (session id,
  cwd), `turn_context` lines (cwd), and `event_msg` lines; `item_completed` with a
  `CommandExecution` item (command argv, `aggregated_output`, `exit_code`) is a finished shell
  call, with a `UserMessage` item a prompt. Older releases wrote `exec_command_end` and
  `user_message` events instead; both are read.
- Gemini `~/.gemini/tmp/<project>/chats/session-*.jsonl`: a first line with `sessionId` and
  `projectHash`, then message lines: `type: "user"` (the prompt), `type: "gemini"` with
  `toolCalls` (name, args, and the `functionResponse` the model got: `output` or `error`). A
  message is written again as it grows: a tool call is read once, by its id. The project's
  folder is in `<project>/.project_root` beside `chats/`.

Stdlib only.
"""

from __future__ import annotations

from pathlib import Path

CLAUDE, CODEX, GEMINI = "claude-code", "codex", "gemini"
MAX_TEXT = 20_000


def log_format(first_line: bytes) -> str:
    """Which agent wrote a session log, from its first line."""
    if b'"session_meta"' in first_line:
        return CODEX
    if b'"projectHash"' in first_line and b'"sessionId"' in first_line:
        return GEMINI
    return CLAUDE


def gemini_project_root(log: Path) -> str:
    """The folder a Gemini chat log belongs to (`<project>/.project_root`), or ""."""
    try:
        return (Path(log).parent.parent / ".project_root").read_text(encoding="utf-8").strip()[:4000]
    except (OSError, UnicodeDecodeError):
        return ""


def codex_payloads(obj: dict, meta: dict) -> list[dict]:
    """The hook payloads one rollout line stands for; updates `meta` (session, cwd)."""
    kind, payload = obj.get("type"), obj.get("payload")
    if not isinstance(payload, dict):
        return []
    if kind in ("session_meta", "turn_context"):
        session = payload.get("id") or payload.get("session_id")
        if kind == "session_meta" and isinstance(session, str):
            meta["session"] = session[:200]
        if isinstance(payload.get("cwd"), str):
            meta["cwd"] = payload["cwd"][:4000]
        return []
    if kind != "event_msg":
        return []
    event = payload.get("type")
    item = payload.get("item") if event == "item_completed" and isinstance(payload.get("item"), dict) else payload
    item_type = item.get("type") if event == "item_completed" else event
    if item_type in ("CommandExecution", "exec_command_end"):
        return [_codex_shell(item)]
    if item_type in ("UserMessage", "user_message"):
        text = item.get("message") if isinstance(item.get("message"), str) else content_text(item.get("content"))
        if text.strip() and not text.lstrip().startswith("<"):
            return [{"hook_event_name": "UserPromptSubmit", "prompt": text[:MAX_TEXT],
                     "turn_id": str(payload.get("turn_id") or item.get("id") or "")[:200]}]
    return []


def _codex_shell(item: dict) -> dict:
    output = item.get("aggregated_output")
    if not isinstance(output, str):
        output = "\n".join(p for p in (item.get("stdout"), item.get("stderr")) if isinstance(p, str) and p)
    response = {"output": output[-MAX_TEXT:]}
    if isinstance(item.get("exit_code"), int) and not isinstance(item.get("exit_code"), bool):
        response["exit_code"] = item["exit_code"]
    return {"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": item.get("command")},
            "tool_response": response, "tool_use_id": str(item.get("id") or item.get("call_id") or "")[:200]}


def gemini_payloads(obj: dict, meta: dict, seen: dict) -> list[dict]:
    """The hook payloads one chat-log line stands for (`seen`: tool call ids already read)."""
    if isinstance(obj.get("sessionId"), str) and "projectHash" in obj:
        meta["session"] = obj["sessionId"][:200]
        return []
    kind = obj.get("type")
    if kind == "user":
        text = content_text(obj.get("content"))
        if text.strip() and not text.lstrip().startswith("<"):
            return [{"hook_event_name": "BeforeAgent", "prompt": text[:MAX_TEXT]}]
        return []
    if kind != "gemini" or not isinstance(obj.get("toolCalls"), list):
        return []
    out = []
    for call in obj["toolCalls"][:100]:
        if not isinstance(call, dict) or not isinstance(call.get("id"), str) or call["id"] in seen:
            continue
        response = _function_response(call.get("result"))
        if response is None:
            continue  # not finished yet: read when the line is written again
        seen[call["id"][:200]] = 1
        tool_response = {"llmContent": response.get("output") if isinstance(response.get("output"), str) else ""}
        if isinstance(response.get("error"), str):
            tool_response["error"] = response["error"]
        out.append({"hook_event_name": "AfterTool", "tool_name": str(call.get("name") or "")[:100],
                    "tool_input": call.get("args") if isinstance(call.get("args"), dict) else {},
                    "tool_response": tool_response, "tool_use_id": call["id"][:200]})
    return out


def _function_response(result) -> dict | None:
    for part in result if isinstance(result, list) else []:
        response = part.get("functionResponse", {}).get("response") if isinstance(part, dict) else None
        if isinstance(response, dict):
            return response
    return None


def content_text(content) -> str:
    """A message's content: a string or a list of `{"text": …}` parts (Claude Code's tool
    results, Gemini's and Codex's messages)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b["text"] for b in content[:500] if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""
