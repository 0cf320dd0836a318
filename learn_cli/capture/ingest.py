"""`learn ingest`: past Claude Code transcripts replayed through live capture's pipeline
(and Codex CLI and Gemini CLI session logs, read by capture.ingest_logs: each line becomes the
payload that agent's hook would have sent, turned into an Event by that agent's adapter).

Each transcript (`~/.claude/projects/<project>/<session>.jsonl`, subagent ones under
`<session>/subagents/`) is read line by line (reference/agent-hooks.md §2): a `tool_use` block
of an assistant line is joined by id with the `tool_result` of a later user line, and the pair
becomes the hook payload Claude Code would have sent (`PostToolUse` / `PostToolUseFailure`),
turned into an Event by the Claude Code adapter and handed to the same learner functions as
live capture. User text messages go through the same correction finder as `UserPromptSubmit`.

What counts as a failure (reference §2.2): a Bash result whose text starts with `Exit code N`,
and an error of a path tool (Read, Edit, Write, Glob, Grep…). `<tool_use_error>` validation
errors of Bash, permission denials and user rejections are not learnings.

Idempotent, twice over:
- `<home>/ingest.json` remembers, per transcript (absolute path; identity = hash of its first
  line), the byte offset read to the end of a complete line and the tool calls still waiting
  for their result. An unchanged file is skipped; a grown one resumes at its offset.
- the learner keys evidence by (session, tool_use_id), so even a replay without that state
  (or of a session live capture already saw) adds no sighting twice.

Replayed events differ from live ones in three ways only: their time is the transcript's, the
records they create have source `ingest`, and no known fix is looked up (nobody would read it,
and "helped"/"did not help" must not be credited to a suggestion that was never made).
Stdlib only (the command passes orjson.loads for speed).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from learn_cli.capture import events as ev
from learn_cli.capture import ingest_logs
from learn_cli.store.api import Store
from learn_cli.store.paths import number

STATE_FILE = "ingest.json"
STATE_VERSION = 1
MAX_LINE = 64 * 1024 * 1024  # a longer line is not a transcript entry
MAX_PENDING = 2000  # tool calls of one file still waiting for their result
SAVE_EVERY_S = 5.0
INGEST_BUFFER = 16  # events a replayed session's buffer keeps (live capture: session_max_events)
PROGRESS_EVERY = 1 << 20  # bytes between progress callbacks
INPUT_KEYS = ("command", "file_path", "notebook_path", "path", "pattern", "url")
MAX_INPUT = 4000
NOT_LEARNINGS = (
    "InputValidationError", "Permission to use", "has been denied", "doesn't want to proceed",
    "doesn't want to take this action", "User rejected", "was rejected by the user", "[Request interrupted",
    "requires approval", "permission denied by the user",
)
PROMPT_SKIP_PREFIXES = ("<", "[Request interrupted", "Caveat:", "This session is being continued")

COUNTERS = ("files", "files_skipped", "lines", "malformed", "bytes", "tool_calls", "failures",
            "ignored_errors", "unmatched_results", "prompts", "capture_off")
LEARNER_COUNTS = ("pairs", "corrections", "learnings_new", "learnings_activated")


def default_root(environ=os.environ) -> Path:
    """Where Claude Code keeps transcripts: `$CLAUDE_CONFIG_DIR/projects` or `~/.claude/projects`."""
    config = environ.get("CLAUDE_CONFIG_DIR")
    if config:
        return Path(config).expanduser() / "projects"
    home = environ.get("HOME") or os.path.expanduser("~")
    return Path(home) / ".claude" / "projects"


def default_roots(environ=os.environ) -> list[Path]:
    """Every agent's session logs that exist: Claude Code's transcripts, Codex's rollouts
    (`$CODEX_HOME/sessions` or `~/.codex/sessions`), Gemini CLI's chats (`~/.gemini/tmp`).
    Claude Code's folder is always listed (the summary names it even when it is missing)."""
    home = Path(environ.get("HOME") or os.path.expanduser("~"))
    codex = Path(environ["CODEX_HOME"]).expanduser() if environ.get("CODEX_HOME") else home / ".codex"
    others = [codex / "sessions", home / ".gemini" / "tmp"]
    return [default_root(environ)] + [p for p in others if p.is_dir()]


def find_transcripts(paths: Iterable[Path]) -> list[Path]:
    """Every `*.jsonl` under the given folders (subagent transcripts included) and the given
    files; oldest first, so later sessions see what earlier ones taught."""
    found: dict[str, tuple[float, Path]] = {}
    for path in paths:
        path = Path(path)
        candidates = [path] if path.is_file() else sorted(path.rglob("*.jsonl")) if path.is_dir() else []
        for file in candidates:
            try:
                stat = file.stat()
            except OSError:
                continue
            if file.is_file():
                found[os.path.abspath(file)] = (stat.st_mtime, file)
    return [f for _m, f in sorted(found.values(), key=lambda item: (item[0], str(item[1])))]


class IngestBusy(Exception):
    """Another ingest holds the store's ingest state."""


class Ingest:
    """One ingest run: one store, one state file, counters for the summary."""

    def __init__(self, store, loads: Callable = json.loads, progress: Callable[[int], None] | None = None):
        self.home_store = store  # as it is: end-of-session work sees the settings unchanged
        self.store = _IngestStore(store)
        self.loads = loads
        self.progress = progress or (lambda _n: None)
        self.counts = dict.fromkeys(COUNTERS, 0)
        self.state_path = Path(store.home) / STATE_FILE
        self.state = _load_state(self.state_path)
        self._projects: dict[str, object] = {}
        self._capture_on: dict[str, bool] = {}
        self._lookback: dict[str, int] = {}
        self._since_failure: dict[str, int] = {}
        self.learned: dict[str, int] = {}  # the learner's counters, shared by every Capture
        self._saved_at = time.monotonic()

    # -- the run -----------------------------------------------------------------------------
    def run(self, files: list[Path]) -> dict:
        """Ingest the files; returns the summary (see docs/cmd-ingest.md)."""
        from learn_cli.capture import learner
        from learn_cli.store.locks import file_lock

        started = time.monotonic()
        with contextlib.ExitStack() as stack:
            try:
                stack.enter_context(file_lock(self.state_path, timeout=2.0))
            except TimeoutError:
                raise IngestBusy("another `learn ingest` is running on this store") from None
            try:
                for path in files:
                    self.ingest_file(path)
                self._finish(learner)
            finally:
                self.save()
        self._bump_stats()
        return self.summary(time.monotonic() - started)

    def _finish(self, learner) -> None:
        """End-of-session work (promotion check, compaction) of every replayed session."""
        from learn_cli.capture.session import todo_dir

        if os.path.isdir(todo_dir(self.store.layout.sessions_dir)):  # finish_pending needs it to exist
            learner.finish_pending(self.home_store)

    def summary(self, seconds: float) -> dict:
        c = dict(self.counts, **{k: self.learned.get(k, 0) for k in LEARNER_COUNTS})
        sightings = c["pairs"] + c["corrections"]
        out = dict(c, learnings_merged=max(0, sightings - c["learnings_new"]), seconds=round(seconds, 3))
        out["lines_per_s"] = int(c["lines"] / seconds) if seconds > 0 else 0
        return out

    def ingest_file(self, path: Path) -> None:
        key = os.path.abspath(path)
        try:
            fd = os.open(key, os.O_RDONLY)
        except OSError:
            return
        with os.fdopen(fd, "rb") as fh:
            stat = os.fstat(fh.fileno())
            head = _head_hash(fh)
            known = self.state["files"].get(key)
            same = isinstance(known, dict) and known.get("head") == head and _int(known.get("offset")) <= stat.st_size
            start = _int(known.get("offset")) if same else 0
            if same and start == stat.st_size:
                self.counts["files_skipped"] += 1
                self.progress(stat.st_size)
                return
            self.counts["files"] += 1
            pending = dict(known.get("pending") or {}) if same else {}
            self.progress(start)
            fctx = _FileContext(pending, "subagents" in Path(key).parts, _first_line(fh),
                                dict(known.get("meta") or {}) if same else {})
            if fctx.fmt == ingest_logs.GEMINI and not fctx.meta.get("cwd"):
                fctx.meta["cwd"] = ingest_logs.gemini_project_root(Path(key))
            offset = self._read(fh, start, fctx)
            self.state["files"][key] = {"head": head, "offset": offset,
                                        "pending": dict(list(pending.items())[-MAX_PENDING:])}
            if fctx.meta:
                self.state["files"][key]["meta"] = fctx.meta
        if time.monotonic() - self._saved_at > SAVE_EVERY_S:
            self.save()

    def _read(self, fh, start: int, fctx: _FileContext) -> int:
        """Process complete lines from `start`; returns the offset after the last one."""
        fh.seek(start)
        offset, unreported = start, 0
        for raw in fh:
            if not raw.endswith(b"\n"):
                if self._parse(raw) is None:
                    break  # being written right now: read it next time
            offset += len(raw)
            unreported += len(raw)
            self.counts["lines"] += 1
            self.counts["bytes"] += len(raw)
            self._line(raw, fctx)
            if unreported >= PROGRESS_EVERY:
                self.progress(unreported)
                unreported = 0
        self.progress(unreported)
        return offset

    # -- one line ----------------------------------------------------------------------------
    def _parse(self, raw: bytes):
        if len(raw) > MAX_LINE:
            return None
        try:
            obj = self.loads(raw)
        except (ValueError, UnicodeDecodeError, RecursionError):
            try:  # invalid UTF-8 inside: keep what can be read
                obj = self.loads(raw.decode("utf-8", "replace"))
            except (ValueError, RecursionError):
                return None
        return obj if isinstance(obj, dict) else None

    def _line(self, raw: bytes, fctx: _FileContext) -> None:
        if not raw.strip():
            return
        obj = self._parse(raw)
        if obj is None:
            self.counts["malformed"] += 1
            return
        if fctx.fmt != ingest_logs.CLAUDE:
            return self._other_agent(obj, fctx)
        kind = obj.get("type")
        message = obj.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if kind == "assistant" and isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                    fctx.pending[block["id"][:200]] = [_text(block.get("name"), 100), _slim(block.get("input"))]
            if len(fctx.pending) > 2 * MAX_PENDING:  # results that never came (interrupted calls)
                for stale in list(fctx.pending)[:-MAX_PENDING]:
                    del fctx.pending[stale]
        elif kind == "user":
            self._user(obj, content, fctx)

    def _user(self, obj: dict, content, fctx: _FileContext) -> None:
        results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"] \
            if isinstance(content, list) else []
        for block in results:
            self._result(obj, block, fctx)
        if results or _sidechain(obj, fctx) or obj.get("isMeta") is True or obj.get("isCompactSummary") is True:
            return  # a subagent's "user" is the agent that started it, not a person
        text = content if isinstance(content, str) else "\n".join(
            b["text"] for b in content or () if isinstance(b, dict) and b.get("type") == "text"
            and isinstance(b.get("text"), str))
        text = text.strip()
        if not text or text.startswith(PROMPT_SKIP_PREFIXES):
            return
        prompt_id = _text(obj.get("promptId"), 200) or _text(obj.get("uuid"), 200)
        payload = {"hook_event_name": "UserPromptSubmit", "prompt": text, "prompt_id": prompt_id}
        self._feed(payload, obj, fctx)

    def _result(self, obj: dict, block: dict, fctx: _FileContext) -> None:
        use = fctx.pending.pop(block.get("tool_use_id"), None)
        if use is None:
            self.counts["unmatched_results"] += 1
            return
        name, tool_input = use
        self.counts["tool_calls"] += 1
        payload = {"tool_name": name, "tool_input": tool_input, "tool_use_id": block.get("tool_use_id")}
        text = ingest_logs.content_text(block.get("content"))
        if block.get("is_error") is True:
            error = failure_text(name, text)
            if error is None:
                self.counts["ignored_errors"] += 1
                return
            payload.update(hook_event_name="PostToolUseFailure", error=error, is_interrupt=False)
        else:
            payload.update(hook_event_name="PostToolUse", tool_response=_response(obj.get("toolUseResult"), text))
        self._feed(payload, obj, fctx)

    def _other_agent(self, obj: dict, fctx: _FileContext) -> None:
        """A line of a Codex or Gemini CLI log, fed as the payloads its hooks would have sent."""
        if fctx.fmt == ingest_logs.CODEX:
            payloads = ingest_logs.codex_payloads(obj, fctx.meta)
        else:
            payloads = ingest_logs.gemini_payloads(obj, fctx.meta, fctx.pending)
        where = {"sessionId": fctx.meta.get("session"), "cwd": fctx.meta.get("cwd"), "timestamp": obj.get("timestamp")}
        for payload in payloads:
            if payload.get("tool_name"):
                self.counts["tool_calls"] += 1
            self._feed(payload, where, fctx, fctx.fmt)

    # -- into the learner --------------------------------------------------------------------
    def _feed(self, payload: dict, obj: dict, fctx: _FileContext, agent: str = ingest_logs.CLAUDE) -> None:
        from learn_cli import agents
        from learn_cli.capture import learner

        adapter = agents.module(agent)
        session = _text(obj.get("sessionId") or obj.get("session_id"), 200) or "unknown"
        payload.update(session_id=session, cwd=_text(obj.get("cwd"), MAX_INPUT))
        event = ev.as_observed(adapter.to_event(payload))
        if event is None or event.kind == ev.OTHER or not event.cwd:
            return
        project = self._project(event.cwd)
        if project.id not in self._capture_on:
            self._capture_on[project.id] = bool(self.store.setting("auto_capture", project.id))
        if not self._capture_on[project.id]:
            self.counts["capture_off"] += 1
            return
        # A subagent works in a buffer of its own (pairing must not mix its calls with the
        # parent's); its evidence keeps the parent's session id, as live capture records it.
        # Older Claude Code wrote subagent lines into the parent's file, marked isSidechain.
        agent = _text(obj.get("agentId"), 100) or "sidechain"
        buffer_id = f"{session}.agent-{agent}" if _sidechain(obj, fctx) else session
        if event.kind == ev.SUCCESS and self._since_failure.get(buffer_id, 0) >= self._window(project.id):
            return  # no failure in the lookback window: nothing to pair, and nothing to keep
        event.session_id = buffer_id
        cap = learner.Capture(self.store, project, buffer_id, self.learned)
        cap.session_id = session  # the buffer is chosen; evidence names the session
        cap.suggest = False  # replayed failures look up no known fix (see the module docstring)
        cap.now = _iso(obj.get("timestamp")) or cap.now
        if event.kind == ev.FAILURE:
            self.counts["failures"] += 1
            learner.on_failure(cap, event)
            self._since_failure[buffer_id] = 0
        elif event.kind == ev.SUCCESS:
            learner.on_success(cap, event)
            self._since_failure[buffer_id] = self._since_failure.get(buffer_id, 0) + 1
        elif event.kind == ev.PROMPT:
            self.counts["prompts"] += 1
            learner.on_prompt(cap, event)

    def _project(self, cwd: str):
        project = self._projects.get(cwd)
        if project is None:
            from learn_cli.text.redact import redact_project

            project = redact_project(_identify(cwd))
            self.store.register_project(project)
            self._projects[cwd] = project
        return project

    def _window(self, pid: str) -> int:
        """The learner's lookback for this project."""
        if pid not in self._lookback:
            self._lookback[pid] = self.store.number("lookback", pid)
        return self._lookback[pid]

    # -- state and stats ---------------------------------------------------------------------
    def save(self) -> None:
        from learn_cli.store.jsonl import atomic_write

        data = json.dumps(self.state, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "replace")
        atomic_write(self.state_path, data, durable=False)
        self._saved_at = time.monotonic()

    def _bump_stats(self) -> None:
        from learn_cli.store import analytics

        counts = self.summary(1.0)
        counters = {f"ingest_{k}": counts[k] for k in ("files", "tool_calls", "failures", "pairs", "learnings_new")
                    if counts[k]}
        if counters:
            analytics.bump(self.store.layout.stats, counters)


def _sidechain(obj: dict, fctx: _FileContext) -> bool:
    return fctx.subagent or obj.get("isSidechain") is True


class _FileContext:
    """One log file being read: its tool calls waiting for a result (Claude Code) or already
    read (Gemini), whether it is a subagent's, which agent wrote it, and what its first lines
    said that later ones need (Codex's session id and folder), kept in the state to resume."""

    __slots__ = ("pending", "subagent", "fmt", "meta")

    def __init__(self, pending: dict, subagent: bool, first_line: bytes = b"", meta: dict | None = None):
        self.pending = pending
        self.subagent = subagent
        self.fmt = ingest_logs.log_format(first_line)
        self.meta = meta if meta is not None else {}


class _IngestStore(Store):
    """The store as the learner sees it during ingest: records it creates get source `ingest`,
    a project's overrides are read once per run, not once per event, and session buffers are
    kept short (every event reads its buffer back; the learner needs only `lookback` events).
    A Store of the same home, so that every other call is the Store's own."""

    def __init__(self, store: Store):
        super().__init__(store.home, create=False, warn_stderr=store.warn_stderr)
        self._project_overrides: dict[str, dict] = {}
        cfg = dict(super().config())
        lookback = number(cfg.get("lookback"), "lookback")
        current = cfg.get("session_max_events")
        if isinstance(current, int) and not isinstance(current, bool):
            cfg["session_max_events"] = min(current, max(INGEST_BUFFER, 2 * lookback))
        self._config = cfg

    def overrides(self, pid: str) -> dict:
        if pid not in self._project_overrides:
            self._project_overrides[pid] = super().overrides(pid)
        return self._project_overrides[pid]

    def put(self, path, rec: dict) -> dict:
        if rec.get("source") == "auto":
            rec["source"] = "ingest"
        return super().put(path, rec)


# ---------------------------------------------------------------------------------------------
# Transcript pieces


def failure_text(tool: str, text: str) -> str | None:
    """The error of a failed call when it is a learning (reference §2.2), else None."""
    from learn_cli.text.failure import parse_exit_code, strip_ansi

    clean = strip_ansi(text)
    if tool in ev.SHELL_TOOLS:
        return clean if parse_exit_code(clean) not in (None, 0) else None
    if tool not in ev.PATH_TOOLS:
        return None
    inner = _unwrap_tool_error(clean).strip()
    if not inner or any(marker in inner[:400] for marker in NOT_LEARNINGS):
        return None
    return inner


def _unwrap_tool_error(text: str) -> str:
    match = re.fullmatch(r"\s*<tool_use_error>(.*?)</tool_use_error>\s*", text, re.DOTALL)
    return match.group(1) if match else text


def _response(tool_use_result, text: str):
    """What PostToolUse would have carried as tool_response (only the fields the adapter reads)."""
    if isinstance(tool_use_result, dict):
        slim = {k: tool_use_result[k] for k in ("stdout", "stderr", "interrupted") if k in tool_use_result}
        if slim:
            return slim
    return text


def _slim(tool_input) -> dict:
    """The parts of a tool's input that capture reads (a Write's content is not one of them)."""
    if not isinstance(tool_input, dict):
        return {}
    return {k: tool_input[k][:MAX_INPUT] for k in INPUT_KEYS if isinstance(tool_input.get(k), str)}


def _text(value, cap: int) -> str:
    return value[:cap] if isinstance(value, str) else ""


def _int(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _iso(value) -> str | None:
    """`2026-08-23T13:07:01.166Z` -> `2026-08-23T13:07:01Z` (never later than now)."""
    from learn_cli.store.record import now_iso, parse_iso

    moment = parse_iso(value) if isinstance(value, str) else None
    if moment is None:
        return None
    stamp = moment.timestamp()
    return now_iso(min(stamp, time.time()))


def _first_line(fh) -> bytes:
    fh.seek(0)
    return fh.readline(64 * 1024)


def _head_hash(fh) -> str:
    """Identity of a transcript: its first line (a rewritten file starts differently)."""
    fh.seek(0)
    first = fh.readline(4096)
    return hashlib.sha1(first).hexdigest()[:16]


def _identify(cwd: str):
    """The project of a transcript's cwd; a folder that is gone keeps its own identity
    (identify() would climb to the parent of a missing folder)."""
    from learn_cli.store.project import Project, identify

    if os.path.isdir(cwd):
        return identify(cwd)
    root = os.path.abspath(os.path.expanduser(cwd))
    pid = hashlib.sha256(root.encode("utf-8", "replace")).hexdigest()[:12]
    return Project(id=pid, name=os.path.basename(root.rstrip("/")) or root, root=root, remote=None)


def _load_state(path: Path) -> dict:
    try:
        doc = json.loads(path.read_bytes())
    except (OSError, ValueError):
        doc = None
    if not isinstance(doc, dict) or doc.get("version") != STATE_VERSION or not isinstance(doc.get("files"), dict):
        return {"version": STATE_VERSION, "files": {}}
    return doc
