"""The spool: hook events that could not be learned in time, kept to be learned later.

A hook that runs out of time (its deadline; a file lock or the SQLite index held by another
process; a transient disk error) does not drop its event: it appends it, redacted, to
`<home>/spool/events.jsonl` (one JSON line, one O_APPEND write, 0600; files in
learn_cli.store.spool) and returns. The next capture hook that finds the spool non-empty,
`learn promote` or `learn doctor` replays it through the learner's own entry points
(on_failure, on_success, on_prompt).

- Order: a session's events must reach the learner in order (a success pairs with the failure
  before it), so a hook whose session still has events in the spool replays them first or,
  when it cannot, spools its own event behind them.
- Exactly once: a replayer takes the live file away whole, then notes each event it finished
  in the batch's progress file. A replayer killed between finishing an event and noting it
  replays it again: the learner ignores an event already in its session buffer (same id), and
  sightings and credits are keyed by (session, event).
- An event whose replay fails for a reason that is not transient is tried MAX_TRIES times,
  then dropped; a line that does not parse is dropped at once. Counters in
  analytics/stats.json: `deferred`, `replayed`, `dropped` (doctor and stats report them).

Unused, it costs one `listdir` per hook. Stdlib only (hot path).
"""

from __future__ import annotations

import os
import time

from learn_cli.store import deadline
from learn_cli.store import spool as files
from learn_cli.store.spool import is_transient  # the hook judges its own failures with it

MAX_TRIES = 3
MAX_TEXT = 64 * 1024  # of each text field, after redaction (the learner keeps far less)
WAIT_FOR_REPLAYER_S = 60.0  # a command waits this long for a hook that is replaying
TEXT_FIELDS = ("command", "path", "error", "prompt", "cwd", "folder")
PLAIN_FIELDS = ("kind", "agent", "session_id", "tool", "tool_use_id", "prompt_id")
KINDS = ("failure", "success", "prompt")
# The counters of the events being replayed now: a hook's hard stop saves those of an event
# already recorded, which a replay again would not count (hook._bump_replayed).
IN_FLIGHT: list[dict] = []


class Replayed:
    """What one replay did."""

    def __init__(self):
        self.replayed = 0
        self.dropped = 0
        self.waiting: dict[str, int] = {}  # session name -> events of it still in the spool (finish)
        self.busy = False  # another replayer, or a busy store, left events waiting

    @property
    def left(self) -> int:
        return sum(self.waiting.values())


class Spool(files.SpoolFiles):
    def defer(self, event, project, why: str) -> None:
        """Append one event (redacted) to its session's file; OSError when it cannot be written."""
        self.append(event.session_id or "unknown", {
            "id": os.urandom(8).hex(), "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "why": str(why)[:200], "project": [str(p) if p is not None else None for p in project[:4]],
            "event": _event_fields(event)})

    def replay(self, store, until: float | None = None, first: str | None = None, only: str | None = None,
               wait: bool = False, out: Replayed | None = None) -> Replayed:
        """Learn the spooled events of every session (`first`'s first; with `only`, of that
        session alone: names as store.paths.session_file_stem gives them) until `until` (time.monotonic()).

        A transient failure (files.is_transient, or the hook's own deadline) stops the replay
        and propagates: the event stays for next time. A session another replayer is working
        on is skipped, or with `wait` waited for."""
        out = Replayed() if out is None else out
        names = self.sessions()
        order = [only] if only is not None else sorted(names, key=lambda n: n != first)
        for name in order:
            if name not in names or (until is not None and time.monotonic() >= until):
                continue
            with self.replaying(name, WAIT_FOR_REPLAYER_S if wait else 0.0) as mine:
                if not mine:
                    out.busy = True
                    continue
                self.take_live(name)
                for batch in self.batches(name):
                    if not self._replay_batch(store, batch, until, out):
                        break  # out of time, or events to try again: the later ones wait behind
        return out

    def _replay_batch(self, store, batch, until, out: Replayed) -> bool:
        """Replay one batch in order; True when it is finished (and removed)."""
        state = files.progress(batch)
        for key, item in files.items(batch):
            if key in state.finished:
                continue
            if until is not None and time.monotonic() >= until:
                return False
            if item is None:
                _drop(store, batch, key, "the line does not parse", out)
                continue
            try:
                _learn(store, item)
            except Exception as exc:  # judged below; BaseException (deadline) propagates
                if is_transient(exc):
                    raise
                tries = state.tries.get(key, 0) + 1
                why = f"{type(exc).__name__}: {exc}"[:300]
                if tries < MAX_TRIES:
                    files.note(batch, key, "failed", why)
                    return False  # tried again next time, before the session's later events
                _drop(store, batch, key, f"{why} ({tries} tries)", out)
                continue
            with deadline.held():  # noted and counted together, or neither
                files.note(batch, key, "done")
                _count(store, "replayed")
            out.replayed += 1
        self.remove(batch)
        return True


def finish(store) -> Replayed:
    """For commands (`learn promote`, `learn doctor`): learn every spooled event, waiting for a
    hook that is replaying; a busy store leaves the rest for later (`busy`)."""
    queue = Spool(store.home)
    out = Replayed()
    if store.writable():
        try:
            if queue.sessions():
                queue.replay(store, wait=True, out=out)
        except Exception as exc:  # judged here: only a busy store leaves events waiting
            if not is_transient(exc):
                raise
            out.busy = True
        queue.tidy()
    out.waiting = queue.waiting()
    return out


def _drop(store, batch, key: str, why: str, out: Replayed) -> None:
    with deadline.held():
        files.note(batch, key, "dropped", why)
        _count(store, "dropped")
    out.dropped += 1
    store.note(f"a spooled event was dropped: {why}")


def _count(store, name: str) -> None:
    from learn_cli.store import analytics

    analytics.bump(store.layout.stats, {name: 1})


# -- events --------------------------------------------------------------------------------

def _event_fields(event) -> dict:
    from learn_cli.text.redact import redact

    fields = {name: getattr(event, name) or "" for name in PLAIN_FIELDS}
    for name in TEXT_FIELDS:
        text = getattr(event, name) or ""
        fields[name] = _cap(redact(text)) if text else ""
    fields["exit_code"] = event.exit_code if isinstance(event.exit_code, int) else None
    fields["is_interrupt"] = bool(event.is_interrupt)
    return fields


def _cap(text: str) -> str:
    """Head and tail of a long text (the error that matters is often at the end)."""
    if len(text) <= MAX_TEXT:
        return text
    half = MAX_TEXT // 2
    return text[:half] + "\n" + text[-half:]


def _event(fields: dict):
    from learn_cli.capture import events as ev

    kind = fields.get("kind")
    if kind not in KINDS:
        raise ValueError(f"not an event the spool keeps: {str(kind)[:40]!r}")
    event = ev.Event(kind, str(fields.get("agent") or "claude-code"))
    for name in PLAIN_FIELDS[2:] + TEXT_FIELDS:
        value = fields.get(name)
        setattr(event, name, value if isinstance(value, str) else "")
    code = fields.get("exit_code")
    event.exit_code = code if isinstance(code, int) and not isinstance(code, bool) else None
    event.is_interrupt = fields.get("is_interrupt") is True
    return event


def _learn(store, item: dict) -> None:
    """Feed one spooled event to the learner, as the hook would have."""
    from learn_cli.capture import learner
    from learn_cli.store.project import Project

    event = _event(item.get("event") if isinstance(item.get("event"), dict) else {})
    proj = item.get("project")
    if not (isinstance(proj, list) and len(proj) == 4 and all(isinstance(p, str) and p for p in proj[:3])):
        raise ValueError("the spooled event names no project")
    project = Project(proj[0], proj[1], proj[2], proj[3] if isinstance(proj[3], str) else None)
    if not os.path.isdir(store.layout.project_dir(project.id)):
        store.register_project(project)
    if not store.setting("auto_capture", project.id):
        return  # capture was turned off for the project meanwhile: nothing to learn
    cap = learner.Capture(store, project, event.session_id)
    IN_FLIGHT.append(cap.counters)
    try:
        {"failure": learner.on_failure, "success": learner.on_success, "prompt": learner.on_prompt}[event.kind](
            cap, event)
    finally:
        from learn_cli.store import analytics

        with deadline.held():
            IN_FLIGHT[:] = [counts for counts in IN_FLIGHT if counts is not cap.counters]
            if cap.counters:
                analytics.bump(store.layout.stats, cap.counters)
