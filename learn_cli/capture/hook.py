"""`learn capture` and `learn context --hook`: the processes the agent starts (SPEC §3).

Whatever happens they exit 0, never print a traceback, never print anything on stdout but one
valid hook JSON object, and stop by themselves within a few seconds:
- a top-level guard catches everything (BaseException included) and turns it into one warning
  line on stderr and in learn.log (each kind at most once an hour in the log);
- sys.stdout points at stderr while the work runs, so a stray print cannot corrupt the JSON;
- stdin is read up to MAX_PAYLOAD bytes (a bigger payload is drained and ignored);
- SIGALRM stops the work at the event's deadline (locks and transactions unwind cleanly).

Only the stdlib and our hot-path modules are imported here (no typer, rich, orjson).
"""

from __future__ import annotations

import json
import os
import sys
import time

MAX_PAYLOAD = 8 * 1024 * 1024
CONTEXT_MAX_CHARS = 9500  # Claude Code keeps hook output up to 10,000 characters
# Hard stops (seconds) per event. A capture takes tens of milliseconds; the bound is for a
# machine under load (32 parallel hook processes on 2 cores) and a hung file system, and stays
# below the 10 s timeout `learn hooks install` registers. SessionEnd hooks share Claude Code's
# 1.5 s budget.
DEADLINES = {"session_end": 1.2, "stop": 3.0, "session_start": 8.0, "pre_tool": 4.0}
DEFAULT_DEADLINE = 8.0
FINALIZE_SHARE = 0.8  # of the deadline, for end-of-session work that can be resumed later
WARN_EVERY_S = 3600
AGENTS = {"claude-code": "claude", "claude": "claude", "claude_code": "claude",
          "codex": "codex", "codex-cli": "codex", "gemini": "gemini", "gemini-cli": "gemini",
          "cursor": "cursor", "openclaw": "openclaw"}

USAGE = """usage: learn capture [--agent NAME] [--guard]

Hook entry point: reads one agent hook payload (JSON) on stdin and learns from it.
Register it with `learn hooks install`; it always exits 0 and prints nothing on stdout
but valid hook JSON. Agents: claude-code (default), codex, gemini, cursor, openclaw.
--guard: on a pre-tool event, deny a known-bad shell command once per session
(`learn hooks install --guard` registers it).
"""

CONTEXT_USAGE = """usage: learn context --hook [--budget N] [--agent NAME]

Prints the session-start digest wrapped in the agent's hook JSON
(hookSpecificOutput.additionalContext). Reads the hook payload on stdin when there is one.
"""


class _Deadline(BaseException):
    """Raised by SIGALRM: the hook's time is up."""


class _Usage(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# Entry points


def main(argv: list[str]) -> int:
    """`learn capture [--agent NAME] [--home PATH]`."""
    if "--help" in argv or "-h" in argv:
        sys.stdout.write(USAGE)
        return 0
    started = time.monotonic()
    cache = _regex_cache(argv)
    out = _guarded(lambda: _capture(argv, started), argv)
    code = _emit(out)
    cache.save()  # after the answer: the agent does not wait for it
    return code


def context_main(argv: list[str]) -> int:
    """`learn context --hook [--budget N] [--agent NAME] [--home PATH] [--project PATH]`."""
    if "--help" in argv or "-h" in argv:
        sys.stdout.write(CONTEXT_USAGE)
        return 0
    cache = _regex_cache(argv)
    out = _guarded(lambda: _context(argv), argv, deadline=DEADLINES["session_start"])
    code = _emit(out)
    cache.save()
    return code


def handle(payload: bytes | str | dict, agent: str = "claude-code", home: str | None = None,
           guard: bool = False) -> dict | None:
    """Process one payload in this process (tests, `learn ingest`): the hook JSON or None.

    Unlike main(), errors propagate: callers decide what to do with them.
    """
    if isinstance(payload, (bytes, str)):
        payload = _parse(payload.encode() if isinstance(payload, str) else payload)
    event = _to_event(agent, payload)
    if event is None:
        return None
    return _dispatch(event, home, time.monotonic(), guard=guard)


# ---------------------------------------------------------------------------------------------
# The guard


def _guarded(work, argv: list[str], deadline: float | None = None):
    real_stdout = sys.stdout
    sys.stdout = sys.stderr
    previous = _arm(deadline)
    try:
        return work()
    except (SystemExit, KeyboardInterrupt):
        return None
    except _Usage as exc:
        _warn(None, "usage", f"learn capture: {exc}")
        return None
    except _Deadline:
        _warn(_home_arg(argv), "deadline", "capture stopped at its time limit; the agent was not held up")
        return None
    except BaseException as exc:  # noqa: BLE001 - the agent must never see our failure
        _warn(_home_arg(argv), type(exc).__name__, f"capture failed ({type(exc).__name__}: {exc}); "
              "nothing was recorded for this event")
        return None
    finally:
        _disarm(previous)
        sys.stdout = real_stdout


def _arm(seconds: float | None):
    """Start the hard stop; returns what to restore."""
    try:
        import signal

        def on_alarm(_signum, _frame):
            raise _Deadline()

        previous = signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, seconds or DEFAULT_DEADLINE)
        return previous
    except (ImportError, AttributeError, ValueError, OSError):  # no SIGALRM (Windows), not main thread
        return None


def _set_deadline(seconds: float) -> None:
    try:
        import signal

        signal.setitimer(signal.ITIMER_REAL, seconds)
    except (ImportError, AttributeError, ValueError, OSError):
        pass


def _disarm(previous) -> None:
    try:
        import signal

        signal.setitimer(signal.ITIMER_REAL, 0)
        if previous is not None:
            signal.signal(signal.SIGALRM, previous)
    except (ImportError, AttributeError, ValueError, OSError):
        pass


def _emit(out) -> int:
    if not out:
        return 0
    try:
        text = json.dumps(out, ensure_ascii=True, separators=(",", ":"))
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except (OSError, ValueError, TypeError):
        pass  # the agent closed the pipe: nothing to do
    return 0


def _warn(home, kind: str, message: str) -> None:
    """One line on stderr; in learn.log at most once an hour per kind (a full disk or a broken
    home must not fill the log with one line per tool call)."""
    from learn_cli.store import log
    from learn_cli.store.paths import resolve_home

    try:
        base = resolve_home(home)
        stamp = base / "analytics" / f".warned-{''.join(c for c in kind if c.isalnum())[:40]}"
        log_path = base / "learn.log"
        try:
            fresh = time.time() - os.stat(stamp).st_mtime < WARN_EVERY_S
        except OSError:
            fresh = False
        if fresh or not base.is_dir():
            log_path = None
        else:
            try:
                fd = os.open(stamp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                os.close(fd)
                os.utime(stamp)
            except OSError:
                pass
        log.warn(_redacted(message), log_path, stderr=True)
        _count_error(base)
    except BaseException:  # noqa: BLE001 - even warning must not fail
        try:
            sys.stderr.write(f"learn: capture warning ({kind[:40]})\n")
        except BaseException:  # noqa: BLE001
            pass


def _count_error(base) -> None:
    """Capture health for `learn stats`/`learn doctor`: how often capture itself failed."""
    try:
        if (base / "analytics").is_dir():
            from learn_cli.store import analytics

            analytics.bump(base / "analytics" / "stats.json", {"capture_errors": 1})
    except BaseException:  # noqa: BLE001 - a full disk: the warning line is all we can do
        pass


def _redacted(message: str) -> str:
    """An exception message may quote the payload: no secret reaches the log through it."""
    try:
        from learn_cli.capture.redact import redact

        return redact(message[:2000])
    except Exception:  # noqa: BLE001 - a warning is still better than none
        return "capture failed (details withheld: the message could not be redacted)"


# ---------------------------------------------------------------------------------------------
# Arguments and payload


def _options(argv: list[str], allowed: tuple[str, ...]) -> dict:
    opts: dict = {}
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, value = arg.partition("=")
        if name in allowed:
            if not eq:
                if i + 1 >= len(argv):
                    raise _Usage(f"{name} needs a value")
                value = argv[i + 1]
                i += 1
            opts[name.lstrip("-")] = value
        elif arg in ("--hook", "--guard"):
            opts[arg.lstrip("-")] = True
        else:
            raise _Usage(f"unknown option {arg[:40]!r}")
        i += 1
    return opts


def _regex_cache(argv: list[str]):
    """Compiled regular expressions from the store's cache file (see capture.regex_cache)."""
    from learn_cli.capture import regex_cache
    from learn_cli.store.paths import resolve_home

    try:
        regex_cache.install(os.path.join(resolve_home(_home_arg(argv)), "global", regex_cache.FILE_NAME))
    except Exception:  # noqa: BLE001 - only a cache: the hook works without it
        pass
    return regex_cache


def _home_arg(argv: list[str]) -> str | None:
    for i, arg in enumerate(argv):
        if arg == "--home" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--home="):
            return arg.split("=", 1)[1]
    return None


def _stdin_is_terminal() -> bool:
    try:
        return os.isatty(sys.stdin.fileno())
    except (AttributeError, ValueError, OSError):
        return False


def read_stdin(limit: int = MAX_PAYLOAD) -> bytes | None:
    """The payload on stdin; None when it is over `limit` bytes (the rest is drained)."""
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, ValueError, OSError):
        return b""
    if os.isatty(fd):
        return b""
    chunks, total = [], 0
    while True:
        try:
            chunk = os.read(fd, 1 << 20)
        except InterruptedError:
            continue
        except OSError:
            break
        if not chunk:
            break
        total += len(chunk)
        if total <= limit:
            chunks.append(chunk)
        else:
            chunks = []  # too big to be a hook payload: drain the pipe, keep nothing
    return None if total > limit else b"".join(chunks)


def _parse(data: bytes | None):
    if not data or not data.strip():
        return None
    try:
        return json.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None


def _to_event(agent: str, payload):
    return _adapter(_agent_name(agent)).to_event(payload)


def _agent_name(agent: str | None) -> str:
    adapter = AGENTS.get((agent or "claude-code").lower())
    if adapter is None:
        raise _Usage(f"unknown agent {agent[:40]!r} (known: claude-code, codex, gemini, cursor, openclaw)")
    return adapter


def _adapter(name: str):
    """The adapter module of an AGENTS value (or of an Event's `agent`)."""
    import importlib

    return importlib.import_module(f"learn_cli.capture.adapters.{AGENTS.get(name, name)}")


# ---------------------------------------------------------------------------------------------
# Work


def _capture(argv: list[str], started: float):
    opts = _options(argv, ("--agent", "--home", "--project"))
    if _stdin_is_terminal():
        sys.stderr.write("learn capture: reads one hook payload (JSON) on stdin; "
                         "register it with `learn hooks install`\n")
        return None
    data = read_stdin()
    if data is None:
        _warn(opts.get("home"), "payload-size", f"ignored a hook payload over {MAX_PAYLOAD} bytes")
        return None
    event = _to_event(opts.get("agent", "claude-code"), _parse(data))
    if event is None:
        return None
    if "project" in opts and not event.cwd:  # the payload's cwd decides; --project is a fallback
        event.cwd = os.path.abspath(os.path.expanduser(opts["project"]))
    limit = DEADLINES.get(event.kind, DEFAULT_DEADLINE)
    _set_deadline(max(0.05, limit - (time.monotonic() - started)))
    return _dispatch(event, opts.get("home"), started, limit, guard="guard" in opts)


def _dispatch(event, home: str | None, started: float, limit: float = DEFAULT_DEADLINE, guard: bool = False):
    from learn_cli.capture import events as ev

    if event.kind == ev.OTHER or (event.kind == ev.FAILURE and event.is_interrupt):
        return None  # events we do not learn from; a user interrupt is not a failure
    if event.kind == ev.PRE_TOOL and not guard:
        return None  # a pre-tool hook left by an older install: only the guard answers these
    if event.kind == ev.SESSION_START:
        return _session_start(event, home, None)
    store, project = _open(event, home)
    try:
        if event.kind in (ev.SESSION_END, ev.STOP):
            return _session_end(store, event, started + limit * FINALIZE_SHARE)
        if not store.setting("auto_capture", project.id):
            return None  # `learn --auto` turned capture off for this project: record nothing
        return _learn(store, project, event)
    finally:
        store.close()


def _learn(store, project, event):
    from learn_cli.capture import events as ev
    from learn_cli.capture import learner

    cap = learner.Capture(store, project, event.session_id)
    try:
        if event.kind == ev.FAILURE:
            return _hook_json(event, "PostToolUseFailure", learner.on_failure(cap, event))
        if event.kind == ev.SUCCESS:
            learner.on_success(cap, event)
        elif event.kind == ev.PROMPT:
            learner.on_prompt(cap, event)
        elif event.kind == ev.PRE_TOOL:
            from learn_cli.capture import guard

            return guard.check(cap, event)
        return None
    finally:
        _bump(store, cap.counters)


def _open(event, home: str | None):
    from learn_cli.store.project import identify
    from learn_cli.store.repo import Store

    store = Store(home, warn_stderr=False)
    project = identify(_project_dir(event))
    store.register_project(project)
    return store, project


def _project_dir(event) -> str:
    cwd = event.cwd if event is not None else ""
    if cwd and os.path.isabs(cwd) and os.path.isdir(cwd):
        return cwd
    return os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()


def _bump(store, counters: dict, values: dict | None = None) -> None:
    if not counters and not values:
        return
    from learn_cli.store import analytics

    analytics.bump(store.layout.stats, counters, values=values)


def _hook_json(event, event_name: str, text: str | None):
    """The output in the shape the event's agent reads (Claude Code's unless the adapter says)."""
    if not text or event.agent == "claude-code":
        return _context_json(event_name, text)
    return _adapter(event.agent).hook_output(event, text)


def _context_json(event_name: str, text: str | None):
    if not text:
        return None
    return {"hookSpecificOutput": {"hookEventName": event_name, "additionalContext": text}}


def _session_end(store, event, deadline: float):
    from learn_cli.capture import learner

    counters: dict = {}
    try:
        learner.finalize(store, event.session_id, deadline, counters=counters)
    finally:
        _bump(store, counters)
    return None  # SessionEnd output is discarded; Stop must not block the agent


# ---------------------------------------------------------------------------------------------
# Session start: the digest


def _context(argv: list[str]):
    opts = _options(argv, ("--agent", "--home", "--budget", "--project"))
    budget = None
    if "budget" in opts:
        try:
            budget = int(opts["budget"])
        except ValueError:
            raise _Usage("--budget needs a whole number of tokens") from None
        if budget < 1:
            raise _Usage("--budget must be at least 1")
    from learn_cli.capture import events as ev

    data = read_stdin()
    event = _to_event(opts.get("agent", "claude-code"), _parse(data)) if data else None
    if event is None:
        agent = _adapter(_agent_name(opts.get("agent"))).AGENT
        event = ev.Event(ev.SESSION_START, agent, cwd=os.path.abspath(opts["project"]) if "project" in opts else "")
    return _session_start(event, opts.get("home"), budget)


def _session_start(event, home: str | None, budget: int | None):
    from learn_cli.engine.digest import session_digest

    store, project = _open(event, home)
    try:
        result = session_digest(store, project, budget)
        used_budget = budget or store.setting("budget", project.id)
        gauges = {"context_tokens": int(result.tokens)}
        if isinstance(used_budget, int) and not isinstance(used_budget, bool):
            gauges["context_budget"] = used_budget
        _bump(store, {"sessions": 1}, values=gauges)
        return _hook_json(event, "SessionStart", _fit(result.text, CONTEXT_MAX_CHARS))
    finally:
        store.close()


def _fit(text: str, limit: int) -> str:
    """Text cut at a line boundary to `limit` characters (the digest already respects it)."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    return cut[: cut.rfind("\n")] if "\n" in cut else cut
