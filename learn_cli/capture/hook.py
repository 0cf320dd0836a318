"""`learn capture` and `learn context --hook`: the processes the agent starts (SPEC §3).

Whatever happens they exit 0, never print a traceback, never print anything on stdout but one
valid hook JSON object, and stop by themselves within a few seconds:
- a top-level guard catches everything (BaseException included) and turns it into one warning
  line on stderr and in learn.log (each kind at most once an hour in the log);
- sys.stdout points at stderr while the work runs, so a stray print cannot corrupt the JSON;
- stdin is read up to MAX_PAYLOAD bytes (a bigger payload is drained and ignored);
- the work stops by itself SPOOL_RESERVE before the event's deadline (store.deadline): every
  wait of the store ends there (file locks are polled, SQLite's busy timeout is the time left
  and a progress handler stops a statement), and the work looks at the clock between its
  phases (deadline.check); a tool event that could not be learned by then is put in the spool
  (capture.spool) and learned later: it is deferred, never dropped;
- a process that still runs HARD_GRACE past its deadline (starved of CPU, a hung disk) is
  ended by SIGALRM: its event spooled if it was not learned yet, then os._exit(0), which the
  store survives as it survives a kill -9. The alarm never raises into the work: an exception
  thrown at a random point lands in import locks and callbacks, where Python prints it and
  carries on past the deadline.

Only the stdlib and our hot-path modules are imported here (no typer, rich, orjson).
"""

from __future__ import annotations

import os
import sys
import time

from learn_cli.text import jsonlite  # json's C half: `learn context --hook` imports no `re` (text/jsonlite.py)

MAX_PAYLOAD = 8 * 1024 * 1024
CONTEXT_MAX_CHARS = 9500  # Claude Code keeps hook output up to 10,000 characters
# Hard stops (seconds) per event. A capture takes tens of milliseconds; the bound is for a
# machine under load (32 parallel hook processes on 2 cores) and a hung file system, and stays
# below the 10 s timeout `learn hooks install` registers. SessionEnd hooks share Claude Code's
# 1.5 s budget.
DEADLINES = {"session_end": 1.2, "stop": 3.0, "session_start": 8.0, "pre_tool": 4.0}
DEFAULT_DEADLINE = 8.0
FINALIZE_SHARE = 0.8  # of the deadline, for end-of-session work that can be resumed later
# Seconds kept back from each deadline: the work stops there (SIGALRM, store.deadline), leaving
# time to put an unfinished event in the spool and to unwind, on a machine so loaded that the
# process gets a tenth of a core.
SPOOL_RESERVE = 0.5
REPLAY_SHARE = 0.25  # of the deadline a hook may spend learning events earlier hooks spooled
REPLAY_MAX_S = 1.0
START_AGE_MAX_S = 120.0  # the oldest believable start of this process (/proc/self/stat)
IN_PROCESS_AGE_MAX_S = 5.0  # the same, in a process that is not the hook's own (tests, ingest workers)
HARD_GRACE = 0.3  # past the deadline: the hard stop (an agent waits this much longer at worst)
# The hard stop ends the process (os._exit); set by the `learn` executable's entry point
# (__main__). In process (tests, ingest) the alarm raises _Deadline into the work instead.
HARD_EXIT = False
# What the hard stop finds: "stage" is "start" (the payload is not read yet: it waits, a while),
# "parsing" (the payload is here, the event not known yet: it waits), "event" (a tool event or
# prompt not learned yet: spooled first, with "home", "event", "project", "limit", and "ready"
# once what spooling needs is imported) or "free" (nothing to lose).
_pending: dict = {"stage": "free"}
_stopping = False  # the hard stop is spooling and ending the process: later alarms do nothing
WARN_EVERY_S = 3600
SPOOLED = ("failure", "success", "prompt")  # the events a hook defers rather than lose

USAGE = """usage: learn capture [--agent NAME] [--guard]

Hook entry point: reads one agent hook payload (JSON) on stdin and learns from it.
Register it with `learn hooks install`; it always exits 0 and prints nothing on stdout
but valid hook JSON. Agents: {agents}.
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
        from learn_cli import agents

        names = [f"{name} (default)" if name == agents.DEFAULT else name for name in agents.NAMES]
        sys.stdout.write(USAGE.format(agents=", ".join(names)))
        return 0
    started = _process_started()
    _free("start")  # the hard stop waits until the event is known
    out = _guarded(lambda: _capture(argv, started), argv)
    code = _emit(out)
    cache = sys.modules.get("learn_cli.capture.regex_cache")  # installed by _capture unless a SessionEnd needed none
    if cache is not None:
        cache.save()  # after the answer: the agent does not wait for it
    return code


def context_main(argv: list[str]) -> int:
    """`learn context --hook [--budget N] [--agent NAME] [--home PATH] [--project PATH]`."""
    if "--help" in argv or "-h" in argv:
        sys.stdout.write(CONTEXT_USAGE)
        return 0
    started = _process_started()
    soft = started + DEADLINES["session_start"] - SPOOL_RESERVE
    out = _guarded(lambda: _store_deadline(soft) or _context(argv), argv,
                   deadline=max(0.01, started + DEADLINES["session_start"] + HARD_GRACE - time.monotonic()))
    code = _emit(out)
    cache = sys.modules.get("learn_cli.capture.regex_cache")  # installed only if the Store's way ran
    if cache is not None:
        cache.save()
    return code


def _process_started() -> float:
    """When this process was started (time.monotonic()): the agent has been waiting since then,
    and on a loaded machine the interpreter's own start can take a good part of a second."""
    now = time.monotonic()
    try:
        with open("/proc/self/stat", "rb") as fh:
            ticks = int(fh.read().rsplit(b")", 1)[1].split()[19])  # field 22: start time since boot
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):  # not Linux
        return now
    # A starved machine can take a minute to start an interpreter: that minute counts (the event
    # then goes straight to the spool). Beyond START_AGE_MAX_S the clock is not believed, nor
    # beyond IN_PROCESS_AGE_MAX_S in a process that is not the hook's own (tests and workers
    # call main() in a process that may have run for minutes).
    return now - age if 0 <= age < (START_AGE_MAX_S if HARD_EXIT else IN_PROCESS_AGE_MAX_S) else now


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
        _warn(_home_arg(argv), "deadline", "a hook stopped at its time limit before it was done "
              "(no tool event was lost: end-of-session work resumes later)")
        return None
    except BaseException as exc:  # noqa: BLE001 - the agent must never see our failure
        _warn(_home_arg(argv), type(exc).__name__, f"capture failed ({type(exc).__name__}: {exc}); "
              "nothing was recorded for this event")
        return None
    finally:
        _disarm(previous)
        _free()
        _store_deadline(None)
        sys.stdout = real_stdout


def _arm(seconds: float | None):
    """Start the hard stop; returns what to restore."""
    try:
        from learn_cli.store import deadline

        signal = deadline.signals()

        def on_alarm(_signum, _frame):
            if deadline.must_wait():
                return  # inside deadline.held(): raised again when the block ends
            if HARD_EXIT:
                return _hard_stop()
            raise _Deadline()

        previous = signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, seconds or DEFAULT_DEADLINE)
        return previous
    except (ImportError, AttributeError, ValueError, OSError):  # no SIGALRM (Windows), not main thread
        return None


HARD_RETRY_S = 0.05
HARD_RETRIES = 40  # for the agent's payload (2 s): its stdin may never close
# Once the payload is here, only CPU is missing (a starved process: 256 hooks on 2 cores waited
# 10 s for a CPU, median): the hard stop waits for the event rather than lose it; the bound is
# for a hung disk.
HARD_RETRIES_WORKING = 600


def _hard_stop() -> None:
    """The process is past its deadline and HARD_GRACE: spool the event it has not learned
    yet, then end at once, as a kill -9 would (every write of the store survives that).

    This runs wherever the process happened to be, an import included: it imports nothing
    but `select` (see _payload_waiting). While the payload waits unread on stdin, or the
    modules spooling needs are still being imported (`ready` not set yet: a starved start), it
    looks again HARD_RETRY_S later rather than lose the event; a payload that has not come
    after HARD_RETRIES looks is given up (an agent that never writes must not hold us)."""
    global _stopping
    if _stopping:
        return  # an alarm inside the hard stop itself: the first one ends the process
    stage = _pending.get("stage")
    working = (stage == "parsing" or (stage == "event" and not _pending.get("ready"))
               or (stage == "start" and _payload_waiting()))
    waiting = working or stage == "start"
    if waiting and _pending.setdefault("retries", 0) < (HARD_RETRIES_WORKING if working else HARD_RETRIES):
        _pending["retries"] += 1
        _set_deadline(HARD_RETRY_S)
        return
    _stopping = True
    try:
        pending = dict(_pending)
        counts = pending.get("counters") or {}
        _bump_replayed(pending.get("home"))
        if stage == "event" and _recorded(counts):
            _bump_home(pending["home"], counts)  # in the session buffer already: only its counts were in memory
        elif stage == "event":
            _defer(pending["home"], pending["event"], pending["project"],
                   f"its {pending['limit']:g} s time limit (hard stop)")
        sys.stderr.flush()
    finally:
        os._exit(0)


def _payload_waiting() -> bool:
    """The agent's payload (or the end of it) is on stdin, not read yet: a start starved of CPU,
    not an agent that never writes. (Imported here, in the rare stop of a slow start: `select`
    costs the hook half a millisecond, and no other module is half imported by it.)"""
    try:
        import select

        return bool(select.select([0], [], [], 0)[0])
    except (ImportError, OSError, ValueError):
        return False


def _recorded(counts: dict) -> bool:
    """learner.recorded(counts), for counts a learner.Capture made: the module is loaded by
    then (the hard stop imports nothing: an import inside another one fails half-way)."""
    return bool(counts) and sys.modules["learn_cli.capture.learner"].recorded(counts)


def _bump_replayed(home: str | None) -> None:
    """The counts of a spooled event this hook was replaying when stopped, once it is recorded
    (its replay again finds it in the session buffer and counts nothing)."""
    spool = sys.modules.get("learn_cli.capture.spool")
    for counts in getattr(spool, "IN_FLIGHT", ()):
        if _recorded(counts):
            _bump_home(home, counts)


def _free(stage: str = "free") -> None:
    _pending.clear()
    _pending["stage"] = stage


def _ready_to_spool() -> None:
    """Import now what the hard stop needs to spool an event (see _hard_stop)."""
    from learn_cli.capture import spool  # noqa: F401
    from learn_cli.store import analytics, log, paths, project  # noqa: F401
    from learn_cli.text import redact  # noqa: F401

    _pending["ready"] = True


def _set_deadline(seconds: float) -> None:
    try:
        from learn_cli.store.deadline import signals

        signal = signals()
        signal.setitimer(signal.ITIMER_REAL, seconds)
    except (ImportError, AttributeError, ValueError, OSError):
        pass


def _store_deadline(at: float | None) -> None:
    from learn_cli.store import deadline

    deadline.set_deadline(at)


def _disarm(previous) -> None:
    try:
        from learn_cli.store.deadline import signals

        signal = signals()
        signal.setitimer(signal.ITIMER_REAL, 0)
        if previous is not None:
            signal.signal(signal.SIGALRM, previous)
    except (ImportError, AttributeError, ValueError, OSError):
        pass


def _emit(out) -> int:
    if not out:
        return 0
    try:
        text = jsonlite.dumps(out, ensure_ascii=True, separators=(",", ":"))
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except (OSError, ValueError, TypeError):
        pass  # the agent closed the pipe: nothing to do
    return 0


def _warn(home, kind: str, message: str, failure: bool = True) -> None:
    """One line on stderr; in learn.log at most once an hour per kind (a full disk or a broken
    home must not fill the log with one line per tool call). Counts are kept by counters
    (`capture_errors` when `failure`; the spool's own), never by these lines."""
    from learn_cli.store import log
    from learn_cli.store.paths import ANALYTICS_DIR, LOG_FILE, HomeError, home_dir

    try:
        try:
            base = home_dir(home)
        except HomeError as exc:  # no home to log to: the reason, on stderr
            return log.warn(f"{exc}; nothing was recorded", None, stderr=True)
        stamp = os.path.join(base, ANALYTICS_DIR, f".warned-{''.join(c for c in kind if c.isalnum())[:40]}")
        log_path = os.path.join(base, LOG_FILE)
        try:
            fresh = time.time() - os.stat(stamp).st_mtime < WARN_EVERY_S
        except OSError:
            fresh = False
        if fresh or not os.path.isdir(base):
            log_path = None
        else:
            try:
                from learn_cli.store.paths import open_private

                fd = open_private(stamp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
                os.close(fd)
                os.utime(stamp)
            except OSError:
                pass
        log.warn(_redacted(message), log_path, stderr=True)
        if failure:
            _count_error(base)
    except BaseException:  # noqa: BLE001 - even warning must not fail
        try:
            sys.stderr.write(f"learn: capture warning ({kind[:40]})\n")
        except BaseException:  # noqa: BLE001
            pass


def _count_error(base: str) -> None:
    """Capture health for `learn stats`/`learn doctor`: how often capture itself failed."""
    try:
        from learn_cli.store.paths import ANALYTICS_DIR, STATS_FILE

        if os.path.isdir(os.path.join(base, ANALYTICS_DIR)):
            from learn_cli.store import analytics

            analytics.bump(os.path.join(base, ANALYTICS_DIR, STATS_FILE), {"capture_errors": 1})
    except BaseException:  # noqa: BLE001 - a full disk: the warning line is all we can do
        pass


def _redacted(message: str) -> str:
    """An exception message may quote the payload: no secret reaches the log through it."""
    try:
        from learn_cli.text.redact import redact

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


def _install_regex_cache(home: str | None, patch: bool = True):
    """Compiled regular expressions from the store's cache file (see capture.regex_cache);
    without `patch`, for text.rx alone: a tool event's modules compile through it and import
    no `re` (~13 M instructions, 0.35x a bare interpreter) unless a pattern is missing."""
    from learn_cli.capture import regex_cache

    regex_cache.install_for_home(home, patch)
    return regex_cache


def _patch_regex_cache() -> None:
    """Work beyond the tool events (end of session, guard, the Store's digest) uses `re`
    itself: its compilations from the cache file too, when _capture installed it."""
    cache = sys.modules.get("learn_cli.capture.regex_cache")
    if cache is not None:
        cache.patch()


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
        return jsonlite.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None


def _to_event(agent: str, payload):
    from learn_cli.capture.events import as_observed

    return as_observed(_adapter(agent).to_event(payload))


def _adapter(agent: str | None):
    """The module of an agent named by `--agent` (or by an Event's `agent`): learn_cli.agents."""
    from learn_cli import agents

    try:
        return agents.module(agent)
    except KeyError:
        raise _Usage(f"unknown agent {agent[:40]!r} (known: {', '.join(agents.NAMES)})") from None


# ---------------------------------------------------------------------------------------------
# Work


def _capture(argv: list[str], started: float):
    opts = _options(argv, ("--agent", "--home", "--project"))
    if _stdin_is_terminal():
        sys.stderr.write("learn capture: reads one hook payload (JSON) on stdin; "
                         "register it with `learn hooks install`\n")
        return None
    data = read_stdin()
    if _pending.get("stage") == "start":
        _pending["stage"] = "parsing"  # the payload is here: a hard stop now waits for its event
    if data is None:
        _warn(opts.get("home"), "payload-size", f"ignored a hook payload over {MAX_PAYLOAD} bytes")
        return None
    payload, adapter = _parse(data), _adapter(opts.get("agent", "claude-code"))
    if not _end_before_stop(adapter, payload):  # such a SessionEnd mostly needs no regex (_quick_end)
        _install_regex_cache(opts.get("home"), patch=False)  # `re` too, for other work: _dispatch
    event = _to_event(opts.get("agent", "claude-code"), payload)
    if event is None:
        return None
    if "project" in opts and not event.cwd:  # the payload's cwd decides; --project is a fallback
        event.cwd = os.path.abspath(os.path.expanduser(opts["project"]))
    limit = DEADLINES.get(event.kind, DEFAULT_DEADLINE)
    soft = started + limit - SPOOL_RESERVE
    _store_deadline(soft)
    _set_deadline(max(0.01, started + limit + HARD_GRACE - time.monotonic()))
    if event.kind in SPOOLED and not event.is_interrupt:
        return _learn_or_defer(event, opts.get("home"), started, limit)
    _free()  # Stop, SessionEnd, pre-tool: nothing a hard stop could lose (their work resumes later)
    if time.monotonic() > soft:
        return None  # started too late (a starved machine): Stop's work resumes later, others are not kept
    return _dispatch(event, opts.get("home"), started, limit, defer=True, guard="guard" in opts)


def _dispatch(event, home: str | None, started: float, limit: float = DEFAULT_DEADLINE, defer: bool = False,
              guard: bool = False):
    """Learn from one event (in process, errors propagate). With `defer` (the hook process,
    which sends tool events and prompts to _learn_or_defer), Stop and SessionEnd also learn
    what earlier hooks spooled."""
    from learn_cli.capture import events as ev

    if event.kind == ev.OTHER or (event.kind == ev.FAILURE and event.is_interrupt):
        return None  # events we do not learn from; a user interrupt is not a failure
    if event.kind == ev.PRE_TOOL and not guard:
        return None  # a pre-tool hook left by an older install: only the guard answers these
    if event.kind == ev.SESSION_START:
        return _session_start(event, home, None)
    if event.kind == ev.SESSION_END and _stop_follows(event.agent):
        return _quick_end(event, home, started, limit, defer)
    if event.kind not in SPOOLED:
        _patch_regex_cache()
    store, project = _open(event, home)
    try:
        if event.kind in (ev.SESSION_END, ev.STOP):
            return _end_of_session(store, event, started, limit, defer)
        if not store.setting("auto_capture", project.id):
            return None  # `learn --auto` turned capture off for this project: record nothing
        return _learn(store, project, event)
    finally:
        store.close()


def _end_of_session(store, event, started: float, limit: float, defer: bool, check: bool = True):
    """Stop and SessionEnd: learn what earlier hooks spooled (with `defer`), then the session's
    end-of-session work (without `check`, only the store work its buffer owes: see
    _quick_end), each phase only while time is left. Everything here can be resumed by a
    later hook or command, so running out of time (a wait that ended at the deadline, a
    statement stopped there) is not a failure."""
    from learn_cli.capture import spool
    from learn_cli.store import deadline

    try:
        if defer:
            _replay(store, event.session_id, started + limit * REPLAY_SHARE, others=True)
        deadline.check("end-of-session work")
        return _session_end(store, event, started + (limit - SPOOL_RESERVE) * FINALIZE_SHARE, check)
    except Exception as exc:  # judged here
        if not spool.is_transient(exc):
            raise
        _warn(str(store.home), "deadline", "a hook stopped at its time limit before it was done "
              f"({type(exc).__name__}; no tool event was lost: end-of-session work resumes later)", failure=False)
        return None


def _learn_or_defer(event, home: str | None, started: float, limit: float):
    """Learn from a tool event or prompt now, or put it in the spool to be learned later (the
    deadline may already have passed here, on a machine where the interpreter took its time)."""
    from learn_cli.store import deadline

    project = None
    if not event.tool_use_id and event.kind != "prompt":
        event.tool_use_id = f"ev-{os.urandom(6).hex()}"  # one identity, the same in the spool
    _pending.update(stage="event", home=home, event=event, project=None, limit=limit)  # for the hard stop
    try:
        _ready_to_spool()
        deadline.check("opening the store")  # started late (a starved machine): straight to the spool
        store, project = _open(event, home)
        if _pending.get("stage") == "event":
            _pending["project"] = project
        try:
            if not store.setting("auto_capture", project.id):
                _free()
                return None  # `learn --auto` turned capture off for this project: record nothing
            if not store.writable():
                _free()
                return _answer_only(store, project, event)
            behind = _replay(store, event.session_id, started + min(REPLAY_MAX_S, limit * REPLAY_SHARE))
            if not behind:
                deadline.check("learning the event")
                try:
                    return _learn(store, project, event)
                finally:
                    _free()  # learned; or failed, and judged below
        finally:
            store.close()
    except BaseException as exc:
        from learn_cli.capture import spool

        if not (isinstance(exc, _Deadline) or spool.is_transient(exc)):
            _free()
            _bump_home(home, {"dropped": 1})
            raise  # not a matter of time: the guard reports it (counted as dropped)
        late = isinstance(exc, (_Deadline, deadline.Reached))
        why = f"its {limit:g} s time limit" if late else f"{type(exc).__name__}: {exc}"
        _defer(home, event, project, why)
        return None
    _defer(home, event, project, "behind earlier events of its session")  # keeps the session's order
    return None


def _spool_waits(home: str) -> bool:
    """Does the spool hold events (the usual answer, no: one system call, not even an import)?"""
    try:
        return any(n.endswith((".jsonl", ".batch")) for n in os.listdir(os.path.join(home, "spool")))
    except OSError:
        return False


def _replay(store, session_id: str, until: float, others: bool = False) -> bool:
    """Learn what earlier hooks of this session spooled (with `others`, other sessions' too)
    until `until`, every wait included; True when events of this session still wait there."""
    if not _spool_waits(os.fspath(store.home)):
        return False
    from learn_cli.capture import spool
    from learn_cli.store import deadline
    from learn_cli.store.paths import session_file_stem

    queue = spool.Spool(store.home)
    waiting = queue.sessions()
    mine = session_file_stem(session_id or "unknown")
    if not (mine in waiting or (others and waiting)):
        return False
    soft = deadline.current()
    deadline.set_deadline(until if soft is None else min(soft, until))
    try:
        queue.replay(store, until=until, first=mine, only=None if others else mine)
    except Exception as exc:  # a busy index or lock: the events wait for a later hook
        if not spool.is_transient(exc):
            raise
    finally:
        deadline.set_deadline(soft)
    return mine in queue.sessions()


def _defer(home: str | None, event, project, why: str) -> None:
    """Put the event in the spool, counted first: a deferral whose line is then not written is
    counted as dropped as well, so the counters add up (deferred = learned later + dropped +
    waiting). No alarm while spooling: its only wait is bounded (the spool's lock,
    SHARE_WAIT_S) and the rest is CPU; a hard stop there lost 224 of 1,024 events when 256
    hooks ran at once on a machine already at load 40 (a starved process took seconds)."""
    from learn_cli.store import deadline

    with deadline.held():  # the hard stop (SIGALRM) waits: the event is spooled once, by one of us
        _free()
        _defer_now(home, event, project, why)


def _defer_now(home: str | None, event, project, why: str) -> None:
    counted = False
    for attempt in (1, 2):
        try:
            _set_deadline(0)
            if not counted:
                _bump_home(home, {"deferred": 1})
                counted = True
            _spool(home, event, project, why)
            break
        except _Deadline as exc:
            if attempt == 1:
                continue  # the soft stop, already due as spooling began: once more
            return _lost(home, event, why, exc)
        except BaseException as exc:  # noqa: BLE001 - not even the spool: count the loss, say it once
            return _lost(home, event, why, exc)
    _warn(home, "deferred", f"a {event.kind} event was put in the spool ({why}); a later hook or "
          "`learn promote` learns it", failure=False)


def _spool(home: str | None, event, project, why: str) -> None:
    from learn_cli.capture import spool
    from learn_cli.store.paths import home_dir

    if project is None:
        from learn_cli.store.project import identify

        project = identify(_project_dir(event))
    spool.Spool(home_dir(home)).defer(event, project, why)


def _lost(home: str | None, event, why: str, exc: BaseException) -> None:
    _set_deadline(0)  # counting the loss must not be cut short in its turn
    _bump_home(home, {"dropped": 1})
    _warn(home, "dropped", f"a {event.kind} event could not be learned nor spooled ({why}; "
          f"{type(exc).__name__}: {exc}); it is lost")


def _answer_only(store, project, event):
    """A home we may not write to: nothing can be learned, but a failure still gets its known fix."""
    from learn_cli.capture import events as ev
    from learn_cli.capture import learner, offers

    cap = learner.Capture(store, project, event.session_id)
    if event.kind != ev.FAILURE:
        return None
    entry = learner.tool_entry(cap, event)
    hit = offers.known_fix(cap, entry, set())
    text = offers.describe_fix(cap, hit[1], hit[2], entry.get("cmd") or "", event.command) if hit else None
    return _hook_json(event, "PostToolUseFailure", text)


def _learn(store, project, event):
    from learn_cli.capture import events as ev
    from learn_cli.capture import learner

    cap = learner.Capture(store, project, event.session_id)
    if _pending.get("stage") == "event":
        _pending["counters"] = cap.counters  # once learner.recorded(): the event is in the session buffer
    try:
        if event.kind == ev.FAILURE:  # (or a success whose pipe hid the failure: its own hook answers)
            name = "PostToolUse" if event.hook_event == "PostToolUse" else "PostToolUseFailure"
            return _hook_json(event, name, learner.on_failure(cap, event))
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


def _open(event, home: str | None, plain: bool = True):
    """The Store and the event's project (registered). `plain`: the Store's paths are strings
    (store.paths.Layout: no pathlib), for every event but a SessionStart without a kept digest
    (engine.digest takes `Path`s)."""
    from learn_cli.store.api import Store
    from learn_cli.store.project import identify

    store = Store(home, warn_stderr=False, plain=plain)
    from learn_cli.text.redact import redact_project

    project = redact_project(identify(_project_dir(event)))  # as stored: no secret in a name or root
    try:
        store.register_project(project)
    except OSError:
        if store.writable():
            store.close()
            raise
        # a read-only home: a project it does not know yet still gets the global answers
    return store, project


def _project_dir(event) -> str:
    cwd = event.cwd if event is not None else ""
    if cwd and os.path.isabs(cwd) and os.path.isdir(cwd):
        return cwd
    return os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()


def _bump(store, counters: dict, values: dict | None = None) -> None:
    _bump_at(str(store.home), counters, values)


def _bump_at(home: str, counters: dict, values: dict | None = None) -> None:
    """Counters for `learn stats`; skipped where the home cannot be written (a read-only home
    still answers), and never a reason to lose the answer."""
    if (not counters and not values) or not os.access(home, os.W_OK):  # Store.writable
        return
    from learn_cli.store import analytics, deadline
    from learn_cli.store.paths import ANALYTICS_DIR, LOG_FILE, STATS_FILE

    stats = os.path.join(home, ANALYTICS_DIR, STATS_FILE)
    try:
        with deadline.held():  # counts cut short by the alarm were counts lost
            if deadline.active() and not deadline.remaining(1.0) and not values:
                analytics.bump_later(stats, counters)  # out of time: no fold, one small write
            else:
                analytics.bump(stats, counters, values=values)
            if _pending.get("counters") is counters:
                _free()  # learned and counted: nothing left for the hard stop to do
    except OSError as exc:
        from learn_cli.store import log

        log.warn(f"capture counters not saved ({exc})", os.path.join(home, LOG_FILE), stderr=False)  # Store.note


def _bump_home(home: str | None, counters: dict) -> None:
    """The spool's counters, with no store open (it may be what failed), as a pending note:
    one small write that the hard stop does not cut short (see analytics.bump_later)."""
    try:
        from learn_cli.store import analytics
        from learn_cli.store.paths import ANALYTICS_DIR, STATS_FILE, home_dir

        folder = os.path.join(home_dir(home), ANALYTICS_DIR)
        if os.path.isdir(folder):
            analytics.bump_later(os.path.join(folder, STATS_FILE), counters)
    except Exception:  # noqa: BLE001 - the warning line is all that is left (a deadline propagates)
        pass


def _hook_json(event, event_name: str, text: str | None):
    """The output in the shape the event's agent reads (Claude Code's unless the adapter says)."""
    if not text or event.agent == "claude-code":
        return _context_json(event_name, text)
    return _adapter(event.agent).hook_output(event, text)


def _context_json(event_name: str, text: str | None):
    if not text:
        return None
    return {"hookSpecificOutput": {"hookEventName": event_name, "additionalContext": text}}


def _session_end(store, event, deadline: float, check: bool = True):
    from learn_cli.capture import learner

    counters: dict = {}
    try:
        learner.finalize(store, event.session_id, deadline, counters=counters, check=check)
    finally:
        _bump(store, counters)
    return None  # SessionEnd output is discarded; Stop must not block the agent


def _stop_follows(agent: str) -> bool:
    """Does this agent send a Stop hook at the end of every turn (its install registers one)?"""
    from learn_cli import agents

    return agents.sends_stop(_adapter(agent))


def _end_before_stop(adapter, payload) -> bool:
    """A raw payload that is the SessionEnd of an agent that also sends Stop (_quick_end)."""
    from learn_cli import agents

    return agents.names_session_end(adapter, payload) and agents.sends_stop(adapter)


def _quick_end(event, home: str | None, started: float, limit: float, defer: bool):
    """The SessionEnd of an agent whose hooks include Stop (Claude Code: one after every turn).
    The promotion check of what the session wrote is left to the next Stop hook (this home's,
    any session's: it checks every marker left over, within its 3 s) or to `learn promote` /
    `learn prune`; the session's marker stays until then, so nothing is lost. Checking here
    imported the promotion stack and read every copy of the session's keys in the store: its
    cost grew with the store (5.9x the bare interpreter at 300,000 learnings), inside Claude
    Code's 1.5 s exit budget. Done here is only what the session's hooks left undone, when
    there is some: events in the spool (any session's, as before) and store work its buffer
    owes (its marker says so too: a Stop would pay it as well). Without either it opens no
    Store, index or regex: a few system calls, whatever the store's size."""
    from learn_cli.store.paths import CONFIG_FILE, SESSIONS_DIR, home_dir

    base = home_dir(home)
    if not os.path.isfile(os.path.join(base, CONFIG_FILE)):
        return None  # no store: nothing to finish
    if not (_spool_waits(base) or _owes_work(os.path.join(base, SESSIONS_DIR), event.session_id or "unknown")):
        return None
    if defer:  # the hook's process: _capture did not install the regex cache for this event
        _install_regex_cache(home)
    store, _project = _open(event, home)
    try:
        return _end_of_session(store, event, started, limit, defer, check=False)
    finally:
        store.close()


def _owes_work(sessions_dir: str, session_id: str) -> bool:
    """Does this session's buffer hold an entry that still owes store work (a `todo`)? Read
    without its lock: recover_session looks again under it."""
    from learn_cli.capture.session import SessionBuffer

    try:
        return any(isinstance(e.get("todo"), dict) for e in SessionBuffer(sessions_dir, session_id).events())
    except (OSError, ValueError):
        return True  # unreadable here: the Store's way says why


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
        agent = _adapter(opts.get("agent")).AGENT
        event = ev.Event(ev.SESSION_START, agent, cwd=os.path.abspath(opts["project"]) if "project" in opts else "")
    return _session_start(event, opts.get("home"), budget)


def _session_start(event, home: str | None, budget: int | None):
    """The digest's answer: the kept digest, which needs no `re`, or the Store's way, which
    installs the regex cache for `re` first."""
    project = _known_project(event, home)
    if project is None:
        return None
    kept = _kept_start(event, home, project, budget)
    if kept is not None:
        return kept[0]
    _install_regex_cache(home)
    from learn_cli.engine.digest import session_digest

    store, project = _open(event, home, plain=False)
    try:
        result = session_digest(store, project, budget)
        gauges = _start_gauges(result.tokens, budget or store.setting("budget", project.id))
        _bump(store, {"sessions": 1}, values=gauges)
        return _hook_json(event, "SessionStart", _fit(result.text, CONTEXT_MAX_CHARS))
    finally:
        store.close()


def _kept_start(event, home: str | None, project, budget: int | None) -> tuple | None:
    """The SessionStart answer from the project's kept digest (engine.digest.cached), with no
    Store, index, pathlib or redaction: `(answer,)`, or None when the Store's way must run
    (the digest is stale or missing; the project is not registered yet, which writes; the
    home lacks its analytics folder, which the Store makes; a settings file is unreadable,
    which the Store reports; or the project's name or root holds what redaction replaces:
    the kept stamp holds them redacted, so it never matches the raw ones)."""
    from learn_cli.engine import digest
    from learn_cli.store import paths

    base = paths.home_dir(home)
    if not (os.path.isdir(os.path.join(base, paths.ANALYTICS_DIR))
            and os.path.isfile(os.path.join(base, paths.PROJECTS_DIR, project.id, paths.PROJECT_FILE))):
        return None
    try:
        setting = paths.setting_from_files(base, project.id, "budget")
    except (OSError, ValueError):
        return None
    doc = digest.cached(base, project, budget or paths.number(setting, "budget"))
    if doc is None:
        return None
    _bump_at(base, {"sessions": 1}, values=_start_gauges(doc["tokens"], budget or setting))
    return (_hook_json(event, "SessionStart", _fit(doc["text"], CONTEXT_MAX_CHARS)),)


def _start_gauges(tokens: int, used_budget) -> dict:
    gauges = {"context_tokens": int(tokens)}
    if isinstance(used_budget, int) and not isinstance(used_budget, bool):
        gauges["context_budget"] = used_budget
    return gauges


def _known_project(event, home: str | None):
    """The session's project (store.project.identify, not redacted), or None: the session start
    only reads, so no store yet, or a folder outside git the store never saw, is an empty
    answer and creates nothing (captures create the store and projects)."""
    from learn_cli.store.paths import CONFIG_FILE, PROJECT_FILE, PROJECTS_DIR, home_dir
    from learn_cli.store.project import identify, in_repository

    base = home_dir(home)
    if not os.path.isfile(os.path.join(base, CONFIG_FILE)):
        return None
    project = identify(_project_dir(event))
    if in_repository(project) or os.path.exists(os.path.join(base, PROJECTS_DIR, project.id, PROJECT_FILE)):
        return project
    return None


def _fit(text: str, limit: int) -> str:
    """Text cut at a line boundary to `limit` characters (the digest already respects it)."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    return cut[: cut.rfind("\n")] if "\n" in cut else cut
