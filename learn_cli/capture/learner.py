"""What automatic capture learns from one event (SPEC §2.1 "Useful", §2.4).

- failure: kept in the session buffer; the known fix for its error key is looked up (this
  project → global → other projects) and returned as one or two lines for the agent; if the
  previous failure of this kind got a suggestion and failed the same way again, that
  suggestion "did not help" (the learning's impact drops).
- success: looked at against the newest unresolved failure of the same tool in the last
  `lookback` events. A retry (pairing.is_retry / paths_related) consumes that failure and
  becomes a learning, or one more sighting of it: `pending` with its evidence on disk, `active`
  once it has `min_evidence` distinct sightings. Evidence is keyed by (session, failure event),
  so a replayed or duplicated payload never counts twice. When the same command succeeds after
  other commands changed something, the fix is those commands ("fix in between"). A followed
  suggestion "helped" (frequency, last_used and impact rise).
- prompt: user corrections become `pending` preference learnings in the user's own words.
- session end / stop: end-of-session work (promotion check, compaction) within a deadline;
  what does not fit stays marked (`sessions/pending/`) and is done by a later hook, or, when
  too big for any hook, by `learn promote` / `learn prune` (finish_pending).

Every text is redacted before it is written anywhere. Stdlib only (hot path).
"""

from __future__ import annotations

import os
import sys
import time

from learn_cli.capture import events as ev
from learn_cli.capture.session import SessionBuffer, deferred_path, pending_todos, read_todo, todo_session_id
from learn_cli.store import deadline as store_deadline
from learn_cli.store.locks import file_lock
from learn_cli.store.paths import number
from learn_cli.store.record import LIVE_STATUSES, PROJECT_FACT_TAG, fix_steps, make_record, new_id, now_iso
from learn_cli.text import jsonlite

LIVE = LIVE_STATUSES
MAX_ERROR = 600  # meaningful lines of an error kept in the buffer and on the learning
MAX_COMMAND = 1000
MAX_EVIDENCE = 50  # evidence entries kept on one learning (activation needs far fewer)
MAX_CREDITS = 100  # (session, event) pairs that credited a learning helped / did not help
MAX_CORRECTIONS = 5  # per prompt
HELPED_IMPACT_STEP = 0.1
NOT_HELPED_IMPACT_STEP = 0.15
MIN_IMPACT = 0.05
LINE_WIDTH = 220
EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})
NOT_HELPED, IGNORED = "not_helped", "ignored"  # what became of a suggestion (an entry's `sug_done`)
# Repairs by file edit only make a learning for environment failures: for a failing test or a
# syntax error, editing the code is the ordinary work loop, not a reusable lesson.
EDIT_FIX_CATEGORIES = frozenset({"config", "dependency", "permission"})
# Failures of what surrounds the code: a step run in between may be their fix even when the
# agent also edited files.
ENVIRONMENT_CATEGORIES = EDIT_FIX_CATEGORIES | {"network"}


class Capture:
    """One capture process's view of the store: project, session, settings and counters."""

    def __init__(self, store, project, session_id: str, counters: dict | None = None):
        self.store = store
        self.project = project
        self.session_id = session_id or "unknown"
        self.now = now_iso()
        self.counters: dict[str, int] = {} if counters is None else counters
        self.suggest = True  # look up and offer known fixes on failures (not when replaying history)
        self._overrides: dict | None = None
        self.buffer = SessionBuffer(store.layout.sessions_dir, self.session_id,
                                    self.int_setting("session_max_events"))

    def for_project(self, project) -> Capture:
        """The same session and counters, working on another project's learnings."""
        if project.id == self.project.id:
            return self
        return Capture(self.store, project, self.session_id, self.counters)

    def int_setting(self, name: str) -> int:
        """A numeric setting of this project (store.paths.number: the default unless valid)."""
        if self._overrides is None:
            self._overrides = self.store.overrides(self.project.id)
        return number(self._overrides[name] if name in self._overrides else self.store.config().get(name), name)

    def count(self, name: str, n: int = 1) -> None:
        self.counters[name] = self.counters.get(name, 0) + n

    @property
    def learnings_path(self):
        return self.store.layout.learnings(self.project.id)


# ---------------------------------------------------------------------------------------------
# Turning an event into a buffer entry (redacted, capped)


def _capped(command: str) -> str:
    """At most MAX_COMMAND characters; a longer command ends in the cut mark (`…`), as an
    export's cut commands do, so that what was cut off is known not to be there: a failed
    commit and its retry with `git config …` first cut at different places of one long
    message are one commit (round 25)."""
    if len(command) <= MAX_COMMAND:
        return command
    from learn_cli.text.shell import TRUNCATION

    return command[:MAX_COMMAND - len(TRUNCATION)] + TRUNCATION


def tool_entry(cap: Capture, event: ev.Event) -> dict:
    from learn_cli.text.redact import redact

    entry = {"id": event.tool_use_id or f"ev-{new_id()}", "at": cap.now, "kind": event.kind,
             "tool": event.tool, "pid": cap.project.id}
    command = _capped(redact(event.command)) if event.command else ""
    if event.is_shell and "-" in command:
        from learn_cli.text.shell import inner_command

        command = inner_command(command)  # `bash -lc 'npm ci'` is `npm ci`
    if event.is_shell:
        entry["cmd"] = command
        if event.folder or event.cwd:
            entry["cwd"] = _relative(redact(event.folder or event.cwd), cap.project.root)[:MAX_COMMAND]
    elif event.path:
        entry["path"] = redact(event.path)[:MAX_COMMAND]
    if event.kind == ev.FAILURE:
        _describe_failure(entry, redact(event.error), event.exit_code)
    elif event.is_shell:
        from learn_cli.text.effects import is_mutating

        entry["mut"] = is_mutating(command)
    else:
        entry["mut"] = event.tool in EDIT_TOOLS
    return entry


def _describe_failure(entry: dict, error: str, exit_code) -> None:
    from learn_cli.text.failure import categorize, meaningful_lines, script_echo, suggested_commands, warning_lines
    from learn_cli.text.keys import error_key

    subject = entry.get("cmd") or entry.get("path") or ""
    text = meaningful_lines(error, max_chars=MAX_ERROR) or " ".join(error.split())[:MAX_ERROR]
    # the advice too, after the lines that state the error, the warnings that came with it, and
    # the line of the package.json script that failed
    script = script_echo(error) if _script_echoed(entry.get("cmd") or "", error) else []
    for line in suggested_commands(error) + warning_lines(error) + script:
        if line not in text and len(text) + len(line) < MAX_ERROR:
            text += "\n" + line
    entry["err"] = text
    entry["code"] = exit_code
    entry["cat"] = categorize(error, entry.get("cmd") or None, entry["tool"] or None)
    entry["key"] = error_key(error, subject or None, entry["tool"] or None)


def _tool_window(events: list[dict], lookback: int) -> list[dict]:
    return [e for e in events if e.get("kind") in (ev.FAILURE, ev.SUCCESS)][-lookback:]


# ---------------------------------------------------------------------------------------------
# Work owed to the store
#
# Under heavy load a hook can run out of time between deciding something (this success fixes
# that failure) and writing it into the learnings. So the decision is written first, into the
# session buffer, as an entry carrying a `todo`, together with the session's end-of-session
# marker; the store work follows, and then a copy of the entry without the `todo`. Whatever a
# hook could not finish is done by the next hook of the same session (before its own event,
# so the order is kept), by a later SessionEnd/Stop, or by `learn promote`/`learn prune`.
# Every piece of work can run twice without counting twice: sightings are keyed by
# (session, event), and so are the helped / did-not-help credits.


def _owing(cap: Capture, entry: dict, todo: dict) -> dict:
    """`entry` with the store work it owes; the session's marker is written first, with the
    keys of the learnings that work writes (the session's end checks those: _todo_keys)."""
    cap.buffer.add_todo(cap.project.id, _todo_keys(entry, todo))
    project = [cap.project.id, cap.project.name, cap.project.root]
    if todo.get("op") == "pair":
        entry = dict(entry, lesson=True)  # a failure a lesson is drawn from (settled_way leaves it to the lesson)
    return dict(entry, todo=dict(todo, proj=project))


def _pay(cap: Capture, owed: list[dict]) -> list[dict]:
    """Do the work these entries owe (caller holds the session lock); returns them settled.
    Past a hook's deadline the rest stays owed (the entries keep their `todo`): the session's
    next hook, its Stop or SessionEnd, or a command pays it."""
    settled = []
    for entry in owed:
        if isinstance(entry.get("todo"), dict) and not store_deadline.passed():
            entry = run_todo(cap, entry)
            cap.buffer.append([entry])
        settled.append(entry)
    return settled


def settle(cap: Capture, events: list[dict]) -> list[dict]:
    """Finish the work earlier hooks of this session left undone; the events as they are now."""
    owed = [e for e in events if isinstance(e.get("todo"), dict)]
    if not owed:
        return events
    done = {e["id"]: e for e in _pay(cap, owed)}
    return [done.get(e.get("id"), e) for e in events]


def run_todo(cap: Capture, entry: dict) -> dict:
    """Do the store work an entry owes; the entry without its `todo`."""
    todo = entry["todo"]
    work = cap.for_project(_project_of(todo) or cap.project)
    settled = {k: v for k, v in entry.items() if k != "todo"}
    op = todo.get("op")
    if isinstance(todo.get("settled"), list) and len(todo["settled"]) == 2:
        learn_working_command(work, *(str(x) for x in todo["settled"]), entry["id"])
    if op == "pair":
        steps = [str(s) for s in todo.get("steps") or [] if isinstance(s, str)]
        outcome = learn_pair(work, entry, steps, str(todo.get("kind") or ""))
        if outcome:
            settled["sug_done"] = outcome
    elif op == NOT_HELPED and isinstance(entry.get("sug"), dict):
        _not_helped(work, entry["sug"], entry["id"])
    elif op == "corrections":
        for item in (todo.get("items") or [])[:MAX_CORRECTIONS]:
            if isinstance(item, list) and len(item) >= 3:
                _learn_correction(work, item, str(todo.get("event") or entry["id"]))
    return settled


def _todo_keys(entry: dict, todo: dict) -> list[str] | None:
    """The keys of the learnings a piece of owed work writes (run_todo's ops), or None when
    that is not known (the session's end then checks the whole project)."""
    op, keys = todo.get("op"), []
    if op == "pair" or op == NOT_HELPED:
        sug = entry.get("sug") if op == NOT_HELPED else None
        keys.append((sug.get("key") if isinstance(sug, dict) else entry.get("key")) or "")
    elif op == "corrections":
        from learn_cli.text.keys import text_key

        keys += [text_key(str(item[0])[:300]) for item in todo.get("items") or [] if isinstance(item, list) and item]
    elif op is not None:
        return None
    settled, project = todo.get("settled"), _project_of(todo)
    if isinstance(settled, list) and len(settled) == 2:
        from learn_cli.engine.goals import project_fact_key

        keys.append(project_fact_key(str(settled[0]), project.id) if project else "")
    return keys if keys and all(keys) else None


def _project_of(todo: dict):
    from learn_cli.store.project import Project

    proj = todo.get("proj")
    if isinstance(proj, list) and len(proj) == 3 and all(isinstance(x, str) and x for x in proj):
        return Project(proj[0], proj[1], proj[2], None)
    return None


def recover_session(store, session_id: str, counters: dict) -> None:
    """Finish what the hooks of one session left undone (SessionEnd, Stop, commands)."""
    buffer = SessionBuffer(store.layout.sessions_dir, session_id)
    with buffer.lock():
        events = buffer.events()
        owed = [e for e in events if isinstance(e.get("todo"), dict)]
        project = next((p for p in (_project_of(e["todo"]) for e in owed) if p is not None), None)
        if project is not None:
            settle(Capture(store, project, session_id, counters), events)


# ---------------------------------------------------------------------------------------------
# Failure: buffer, did-not-help, known fix


def on_failure(cap: Capture, event: ev.Event) -> str | None:
    """Record a failure; return the known fix as text for the agent, if there is one."""
    entry = tool_entry(cap, event)
    text = None
    from learn_cli.capture import offers

    with cap.buffer.lock():
        events = cap.buffer.events()
        if any(e.get("id") == entry["id"] for e in events):
            return None  # the same payload again (hooks registered twice, a replay)
        events = settle(cap, events)
        window = _tool_window(events, cap.int_setting("lookback"))
        updates = []
        if any(e.get("kind") == ev.FAILURE and e.get("key") == entry["key"] for e in window):
            cap.count("repeated")
        answered, outcome = _unanswered_suggestion(window, entry)
        if outcome == NOT_HELPED:
            updates.append(_owing(cap, dict(answered, sug_done=NOT_HELPED), {"op": NOT_HELPED}))
        elif outcome == IGNORED:
            updates.append(dict(answered, sug_done=IGNORED))
            cap.count(IGNORED)
        skip = {e["sug"].get("id") for e in events + updates  # (an ignored one: the next best, in this session)
                if e.get("sug_done") in (NOT_HELPED, IGNORED) and isinstance(e.get("sug"), dict)}
        for pair, fix in _got_past(cap, window, entry):  # this failure is another one: the last got fixed
            updates.append(_owing(cap, dict(pair[0], done=True), {"op": "pair", "steps": fix[0], "kind": fix[1]}))
        hit = offers.known_fix(cap, entry, skip) if cap.suggest else None
        if hit is not None:
            rel, rec, fixes = hit
            entry["sug"] = {"id": rec["id"], "file": rel, "key": rec.get("key", ""),  # as offered: its
                            "fix": fixes[0].rewrite or _fix_of_record(rec)}  # change applied to this command
            text = offers.describe_fix(cap, rec, fixes, entry.get("cmd") or "", event.command)
            cap.count("suggestions")
        _append_counted(cap, updates + [entry], "events", "failures")
        _pay(cap, updates)
    return text


# The counters that say an event is recorded (in the session buffer, or a prompt that needs
# nothing more): a hook stopped after that only owes its counts, not a replay (hook._hard_stop).
RECORDED = ("events", "prompts")


def recorded(counters: dict) -> bool:
    return any(counters.get(name) for name in RECORDED)


def _append_counted(cap: Capture, entries: list[dict], *kinds: str) -> None:
    """The event into the session buffer and its counts, with the hook's alarm held between
    them: the hard stop reads "counted" as "in the buffer" (hook._hard_stop), so a stop that
    fell between the two lost the count (the replay finds the event already there)."""
    with store_deadline.held():
        cap.buffer.append(entries)
        for kind in kinds:
            cap.count(kind)


def _unanswered_suggestion(window: list[dict], entry: dict) -> tuple[dict | None, str]:
    """(the earlier failure whose suggestion this failure answers, how): NOT_HELPED when the
    same error came back, or the suggested fix itself failed, right after the suggestion;
    IGNORED when the agent ran the failed command again as it was, having tried nothing in
    between (Sticky-Finger/VIDSUM: `cargo check` 21 times in a row, under both of its fixes):
    the fix was not tried, so it did not fail. (None, "") otherwise."""
    for at in range(len(window) - 1, -1, -1):
        prev = window[at]
        sug = prev.get("sug")
        if prev.get("kind") != ev.FAILURE or not isinstance(sug, dict) or prev.get("sug_done") or prev.get("done"):
            continue
        if prev.get("tool") != entry["tool"]:
            continue
        if prev.get("key") == entry["key"]:
            return prev, IGNORED if _run_again_as_it_was(prev, window[at + 1:], entry) else NOT_HELPED
        command = _normalize(entry.get("cmd") or "", None)
        if command and any(_normalize(step, None) == command for step in _steps(sug.get("fix", ""))):
            return prev, NOT_HELPED
        return None, ""
    return None, ""


def _run_again_as_it_was(prev: dict, between: list[dict], entry: dict) -> bool:
    """The same command in the same folder, and no command run nor file edited between the two."""
    if not entry.get("cmd") or entry.get("cwd") != prev.get("cwd"):
        return False
    if any(e.get("tool") in ev.SHELL_TOOLS or e.get("tool") in EDIT_TOOLS for e in between):
        return False
    return _normalize(entry["cmd"], None) == _normalize(prev.get("cmd") or "", None)


def _fresh(store, *paths) -> None:
    """Bring the index up to date for these files only if they changed behind its back.

    A file that looks changed may just be in the middle of a writer's append (writers update
    the file, then the index, under the file's lock): wait for that lock before re-reading.
    """
    for path in paths:
        if store.index.expect_stat(path):
            continue
        with file_lock(path):
            current = store.index.expect_stat(path)
        if not current:
            store.refresh([path])


def _fix_of_record(rec: dict) -> str:
    value = rec.get("fix_command") or rec.get("fix") or ""
    return value if isinstance(value, str) else ""


def _not_helped(cap: Capture, sug: dict, event_id: str) -> None:
    def change(cur: dict) -> dict | None:
        if not _credit(cur, cap.session_id, event_id, "not_helped"):
            return None  # counted already (this is a redo of unfinished work)
        cur["not_helped"] = _int(cur.get("not_helped")) + 1
        cur["impact"] = round(max(MIN_IMPACT, _impact(cur) - NOT_HELPED_IMPACT_STEP), 4)
        cur["failed_at"] = _stamp()  # offered, and the failure came back: not offered again until it works
        return cur

    if _update_record(cap.store, sug, change) is not None:
        cap.count("not_helped")


def _update_record(store, ref: dict, change):
    """Apply `change` to the record a suggestion points at (wherever it lives now). None when
    the record is gone or `change` declined."""
    rel, rid = ref.get("file"), ref.get("id")
    if not isinstance(rid, str) or not rid:
        return None
    seen = []

    def tracked(cur: dict):
        seen.append(True)
        return change(cur)

    if isinstance(rel, str) and rel:
        done = store.update(store.path_of(rel), rid, tracked)
        if done is not None or seen:
            return done
    found = store.get(rid) if rid.startswith("learn-") else None  # moved (promoted, archived)
    return store.update(found[0], rid, change) if found else None


def _credit(rec: dict, session: str, event: str, outcome: str) -> bool:
    """Note that (session, event) credited this learning; False when it already had."""
    credits = [c for c in (rec.get("credits") or []) if isinstance(c, dict)]
    if any((c.get("session"), c.get("event")) == (session, event) for c in credits):
        return False
    rec["credits"] = (credits + [{"session": session, "event": event, "outcome": outcome}])[-MAX_CREDITS:]
    return True


# ---------------------------------------------------------------------------------------------
# Success: pairing, evidence, helped


def on_success(cap: Capture, event: ev.Event) -> None:
    entry = tool_entry(cap, event)
    with cap.buffer.lock():
        events = cap.buffer.events()
        if any(e.get("id") == entry["id"] for e in events):
            return
        events = settle(cap, events)
        window = _tool_window(events, cap.int_setting("lookback"))
        updates = []
        shows_nothing = _filtered_to_nothing(event)
        resolved = _resolved_by(cap, window, entry) if not shows_nothing else []
        if not resolved:
            pair, fix = _found_by_search(cap, window, event)
            resolved = [(pair, fix)] if fix is not None else []
        for pair, fix in resolved:  # `entry` resolves these failures: each is consumed by its fix
            consumed = dict(pair[0], done=True)
            if fix[0] and fix[1]:
                consumed = _owing(cap, consumed, {"op": "pair", "steps": fix[0], "kind": fix[1]})
            updates.append(consumed)
        if not shows_nothing and not any(fix[1] for _pair, fix in resolved):  # (a lesson drawn from
            settled = settled_way(events, entry, cap.project.root)  # this success says it)
            if settled is not None:
                entry = _owing(cap, dict(entry, works=settled), {"settled": settled})
        _append_counted(cap, updates + [entry], "events", "successes")
        _pay(cap, updates + [entry])


def _filtered_to_nothing(event: ev.Event) -> bool:
    """A shell call whose output went through `grep` and came out empty: nothing shows that its
    job worked (`bash test/run.sh 2>&1 | grep Results | head` "succeeds" when run.sh is not
    there, `head` giving the status), so it resolves no failure, and is no sighting of the way
    its job runs (settled_way). A later call that shows its output may be."""
    if not event.is_shell or "|" not in event.command or event.output.strip() not in ("", "(No output)"):
        return False
    from learn_cli.text.shell import strip_plumbing

    return "grep" in strip_plumbing(event.command).removed


def _got_past(cap: Capture, window: list[dict], entry: dict) -> list[tuple]:
    """[(pair, fix)] when this failure is the retry of the one before it, changed, that got past
    that error to another: `ccompiler --sysroot=. t.c` could not find <stdio.h>, `ccompiler -I
    test/include t.c` then failed on an undeclared variable. The change is the lesson of the
    first error, as a success would have made it (fix_for); the work that follows may be long
    (the compiler taught `extern`) and no success came in the window. Not when files were edited
    in between (the edit may be what changed the error), nor when the first error said nothing
    specific, nor when the retry itself could not run (an option refused, a program missing, a
    usage line): that is a wrong retry, not progress. A `cd` that failed (the shell was there
    already) and the same line without it is progress whatever the job then met: `cd
    tests/taster && ./dist/taster.psp env`, then `./dist/taster.psp env` "permission denied"
    (provide-io/flavorpack); the `chmod +x` that fixed that is the second error's lesson, not
    the first's."""
    if entry.get("tool") not in ev.SHELL_TOOLS or not entry.get("cmd"):
        return []
    candidate = next(unresolved_failures(window, entry), None)
    if candidate is None or candidate[0].get("key") == entry.get("key"):
        return []
    failed, between = candidate
    if any(e.get("tool") in EDIT_TOOLS for e in between):
        return []
    if not _ran_without_the_failed_cd(failed.get("cmd") or "", entry["cmd"], failed.get("err")) and \
            not _moved_past(failed.get("err") or "", entry.get("err") or ""):
        return []  # (a `cd` that failed, dropped, and the job then ran: past it, whatever the job met next)
    if not _same_program_or_file(failed.get("cmd") or "", entry["cmd"]):
        return []  # (checked before fix_for, whose modules a failure does not load otherwise: ~18 M
        # instructions for every failure that follows another)
    from learn_cli.text.effects import is_mutating

    fix = fix_for(cap, failed, between, dict(entry, mut=is_mutating(entry["cmd"])))
    return [(candidate, fix)] if fix is not None and fix[0] and fix[1] else []


def _same_program_or_file(first: str, then: str) -> bool:
    """Cheaply: do the two commands run the same program, or name the same file? (A retry does;
    another program for the same goal, `make` → `cmake --build build`, is left to a success.)"""
    from learn_cli.text.shell import program

    if program(first) and program(first) == program(then):
        return True
    files = {word for word in first.split() if "/" in word or "." in word.strip(".")}
    return bool(files & set(then.split()))


def _moved_past(first: str, then: str) -> bool:
    """Does the error `then` show that the run got past the error `first`: it says something
    specific, it no longer says `first`'s line nor names what that line named (`pytest: command
    not found`, then `No module named pytest`: one problem said twice), and it is no refusal of
    the command itself?"""
    from learn_cli.text.failure import meaningful_line, meaningful_lines
    from learn_cli.text.keys import is_subject_word, missing_program, names_what_is_wrong, rejects_option, tokens

    line = meaningful_line(first)
    if not line or not names_what_is_wrong(first) or line in then or not names_what_is_wrong(then):
        return False
    if rejects_option(then) or missing_program(then) or "usage:" in then.lower():
        return False
    quoted = _quoted_re().findall(line)  # what the line names, when it quotes it (`No module named 'flask'`:
    # `flask`, then `'sqlalchemy'` is the next missing module, progress), else its telling words
    named = {word for word in tokens(" ".join(quoted) if quoted else line) if is_subject_word(word)}
    return not named & set(tokens(meaningful_lines(then)))


def _quoted_re():
    from learn_cli.text import rx

    return rx.compile(r"['\"`<‘“]([^'\"`<>’”\n]{2,80})['\"`>’”]")


def _resolved_by(cap: Capture, window: list[dict], entry: dict) -> list[tuple]:
    """[(pair, fix)] of the unresolved failures this success resolves: the newest it retries,
    and older ones of other errors that it is a lesson for too (`pytest`: command not found,
    `python -m pytest`: no module named pytest, then `uv run pytest` fixed both). An older
    failure of the same error is a parallel copy: one fix, one sighting; one followed by an
    edit was fixed by the edit (the next run failed otherwise: an undeclared function
    declared, then the link failed)."""
    resolved: list[tuple] = []
    for candidate in unresolved_failures(window, entry):
        if resolved and any(e.get("tool") in EDIT_TOOLS for e in candidate[1]):
            continue
        fix = fix_for(cap, candidate[0], candidate[1], entry)
        if fix is None:
            continue
        if not resolved:
            resolved.append((candidate, fix))
        elif fix[0] and fix[1] and all(candidate[0].get("key") != pair[0].get("key") for pair, _fix in resolved):
            resolved.append((candidate, fix))
    return resolved


SEARCH_TOOLS = frozenset({"Glob", "Grep"})


def _found_by_search(cap: Capture, window: list[dict], event: ev.Event):
    """(pair, fix) when this search found the file that a failed Read or Edit could not open:
    the lesson is "use path X" (issue 10, cause 3); else (None, None)."""
    failed = next(((i, e) for i, e in reversed(list(enumerate(window)))
                   if e.get("kind") == ev.FAILURE and not e.get("done") and e.get("tool") in ev.PATH_TOOLS), None)
    if failed is None:
        return None, None  # the common case: nothing to find, no command parsed
    if not (event.tool in SEARCH_TOOLS or (event.is_shell and _searches(event.command))):
        return None, None
    from learn_cli.capture.pairing import found_by_search

    index, prev = failed
    found = found_by_search(prev.get("path") or "", event.input or event.command, event.output)
    if not found:
        return None, None
    return (prev, window[index + 1:]), ([redact_path(found)], "path")


def _searches(command: str) -> bool:
    from learn_cli.text.shell import program

    return program(command) in ("find", "ls", "fd", "rg", "grep")


def redact_path(path: str) -> str:
    from learn_cli.text.redact import redact

    return redact(path)[:MAX_COMMAND]


PAIR_CANDIDATES = 3  # unresolved failures a success is compared with, newest first


def unresolved_failures(window: list[dict], ok: dict):
    """The unresolved failures of the same tool in the window, newest first (at most
    PAIR_CANDIDATES), each with the events after it. Not only the newest: an agent often fires
    several commands that fail alike (parallel calls, or `cd x && …` three times before it sees
    it is already in x) and then fixes an earlier one; a success that retries none of them
    pairs with none."""
    found = 0
    for index in range(len(window) - 1, -1, -1):
        prev = window[index]
        if prev.get("kind") == ev.FAILURE and prev.get("tool") == ok.get("tool") and not prev.get("done"):
            yield prev, window[index + 1:]
            found += 1
            if found == PAIR_CANDIDATES:
                return


def fix_for(cap: Capture, failed: dict, between: list[dict], ok: dict) -> tuple[list[str], str] | None:
    """(fix steps, kind) when `ok` resolves `failed`; ([], "") resolves it without a lesson;
    None when `ok` is not a retry of it at all. kind: retry | between | edit | path | cwd.
    When `ok` retries only the step of a chain that the error names (text.keys.failing_step),
    that step is set as `failed["step"]`: the learning says it failed, not the whole chain."""
    if ok.get("tool") in ev.SHELL_TOOLS:
        return _shell_fix(cap, failed, between, ok)
    if ok.get("tool") in ev.PATH_TOOLS:
        from learn_cli.capture import pairing

        failed_path, ok_path = failed.get("path") or "", ok.get("path") or ""
        if pairing.same_path(failed_path, ok_path):
            return [], ""
        if pairing.paths_related(failed_path, ok_path):
            return [ok_path], "path"
    return None


def _shell_fix(cap: Capture, failed: dict, between: list[dict], ok: dict) -> tuple[list[str], str] | None:
    """fix_for of a shell command that worked after a failed one."""
    from learn_cli.capture import pairing

    failed_cmd, ok_cmd = failed.get("cmd") or "", ok.get("cmd") or ""
    retried = retried_step(failed_cmd, ok_cmd, failed.get("err"), failed.get("cat"))
    if retried is None:
        return None
    step = None  # the step the error names, worked out only when it is needed (~0.5 ms)
    if retried != failed_cmd:
        failed_cmd = failed["step"] = step = retried
    changed = [b for b in between if b.get("kind") == ev.SUCCESS and b.get("mut")]
    steps = [b["cmd"] for b in changed if b.get("tool") in ev.SHELL_TOOLS and b.get("cmd")
             and not _bookkeeping(b["cmd"], failed_cmd, failed.get("err") or "")]
    if teaches_nothing(failed_cmd, [*steps, ok_cmd], failed.get("err") or ""):
        return [], ""  # it worked, by a force push, a skipped hook, `kill -9 48213`: no lesson
    folder = _moved_to(cap, failed, ok_cmd)
    if folder is None and all(_only_moves(b.get("cmd") or "") for b in changed):
        folder = _ran_elsewhere(failed, ok, failed_cmd, ok_cmd, cap.project.root)
    if folder is not None:
        return [f"cd {folder}"], "cwd"
    root = cap.project.root  # `cd ROOT && X` after `X` failed at the root is X again
    # X again without the looking aid the failed run had (`RUST_BACKTRACE=1`, `-v`) is X
    # again too: dropping the aid fixed nothing, whatever happened in between did
    same = (_normalize(failed_cmd, root) == _normalize(ok_cmd, root) or pairing.only_looked(failed_cmd, ok_cmd)
            or _runs_on_after(failed_cmd, ok_cmd))
    if not same:
        return _changed_command_fix(failed, ok, (failed_cmd, ok_cmd), steps, changed, step, root)
    if "timeout" in failed_cmd and _failed_timeout(failed_cmd, ok_cmd, failed.get("err")):
        return [ok_cmd], "retry"  # `timeout` not installed: doing without it was the fix
    if _refused_aid(failed_cmd, ok_cmd, failed.get("err") or ""):
        return [ok_cmd], "retry"  # the program refused the `-v`: it never ran, dropping it was the fix
    return _fix_in_between(failed, changed, steps, root)


def _changed_command_fix(failed: dict, ok: dict, commands: tuple[str, str], steps: list[str], changed: list[dict],
                         step: str | None, root: str | None) -> tuple[list[str], str] | None:
    """fix_for when the agent changed the command itself (`commands`: the failed one, or the
    step of it that was retried, and the one that worked)."""
    from learn_cli.capture import pairing
    from learn_cli.capture.lesson import edit_did_it, is_lesson, run_first, with_setup
    from learn_cli.text.keys import failing_step

    failed_cmd, ok_cmd = commands
    if any(b.get("tool") in EDIT_TOOLS for b in changed) and edit_did_it(failed_cmd, ok_cmd, failed.get("err")):
        return [], ""  # the code was fixed, then run with other options
    if failed.get("cat") not in ENVIRONMENT_CATEGORIES:
        # the agent changed the command itself: that change is the lesson, and what it
        # ran in between (`git merge main` before `git fetch origin B && git checkout
        # B`) is other work, unless what failed was the environment (an install, a
        # config step may be needed besides the change). After several changes the
        # retry may have worked because of them (a conflicted pull resolved by hand,
        # committed, then pulled without `--no-rebase`): no lesson then.
        if len(steps) > 1:
            return [], ""
        steps = []
    setup = pairing.added_environment(failed_cmd, ok_cmd)
    if setup:  # another snippet ran in the set-up environment: the setup is the lesson
        return steps + [with_setup(failed_cmd, setup)], "retry"
    first = run_first(_normalize(failed_cmd, root), _normalize(ok_cmd, root))
    if not first and step is None:
        step = failing_step(failed_cmd, failed.get("err"))
        if step == failed_cmd:
            step = _last_step_retried(failed_cmd, ok_cmd, root) or step
        first = run_first(_normalize(step, root), _normalize(ok_cmd, root)) if step != failed_cmd else []
        if first:
            failed["step"] = step
    if first:  # `git stash && git checkout main` after `git checkout main`
        return steps + first, "between"
    if not is_lesson(failed_cmd, ok_cmd, failed.get("err") or ""):
        if ok.get("mut") and _installs_what_the_error_names(ok_cmd, failed.get("err") or ""):
            return None  # `pip install wheel` after `pip install -e .` failed "building wheel": a
            # step, for the same command again (the pair it makes then), not the work done
        if steps:  # the environment was missing something, and a step gave it: `pip install
            return steps, "between"  # flask`, then `python app.py --debug` (the words changed, not the lesson)
        return [], ""  # the agent moved on to the next piece of work: resolved, no lesson
    return steps + [ok_cmd], "retry"


def _fix_in_between(failed: dict, changed: list[dict], steps: list[str], root: str | None) -> tuple[list[str], str]:
    """fix_for when the same command worked again: what was done in between, if anything."""
    edits = [b["path"] for b in changed if b.get("tool") in EDIT_TOOLS and b.get("path")]
    if steps and (not edits or failed.get("cat") in ENVIRONMENT_CATEGORIES):
        return steps, "between"  # (after an edit, a test or a build that failed was fixed by
        # the edit: `cargo fmt` run on the way is not the lesson; an install still is)
    if edits and failed.get("cat") in EDIT_FIX_CATEGORIES:
        return [f"edit {_relative(p, root)}" for p in dict.fromkeys(edits)], "edit"
    from learn_cli.text.projectfiles import is_project_config

    if edits and all(is_project_config(p) for p in edits):
        # whatever the error looked like (a SyntaxError for an ESM import), only the
        # project's settings changed and the same command worked (with code edited too,
        # which of them fixed it is anyone's guess)
        return [f"edit {_relative(p, root)}" for p in dict.fromkeys(edits)], "edit"
    return [], ""  # the same command worked again by itself (flaky, or a code fix)


def _last_step_retried(failed_cmd: str, ok_cmd: str, root: str | None) -> str:
    """The last step of a failed chain, when `ok` is new steps and then that step alone (`git add
    -A && git commit -m x` failed "Please tell me who you are"; `git config user.email … && git
    config user.name … && git commit -m x` worked, round 15): a chain stops at the step that
    failed, and the steps before it, not run again, had worked. Asked when the error names no
    one step (text.keys.failing_step finds `npm ci` in "The `npm ci` command can only install…");
    not when a new step does the work of an earlier one (`python -m venv .venv && …` → `python3
    -m venv .venv && …`: the first step failed, and was corrected). "" otherwise."""
    from learn_cli.capture.pairing import same_program
    from learn_cli.text.shell import tokenize, unwrap_tokens

    steps = _normalize(failed_cmd, root).split(" && ")
    ok = _normalize(ok_cmd, root)
    if len(steps) < 2 or not ok.endswith(" && " + steps[-1]):
        return ""
    new = [unwrap_tokens(tokenize(s)) for s in ok[: -len(steps[-1]) - 4].split(" && ")]
    for step in steps[:-1]:
        words = unwrap_tokens(tokenize(step))
        if not words or any(n and same_program(words, n) for n in new):
            return ""  # (`sleep 5` → `sleep 2`, `python -m venv` → `python3 -m venv`: that step changed)
    return steps[-1]


def _runs_on_after(failed_cmd: str, ok_cmd: str) -> bool:
    """Is `ok_cmd` the failed command unchanged with more steps after it (`./build/ccompiler
    t.c`, then `./build/ccompiler t.c && nasm -f elf64 t.asm && ./t`)? Steps that run after
    the ones that failed cannot be what fixed them: the failed part worked again as it was (an
    edit between, or by itself), as if the same command had. (sflicker/claudec99: a compiler
    bug fixed in the parser was learned as "add `&& nasm …`" for its error.)"""
    from learn_cli.capture.lesson import working_steps

    failed, ok = working_steps(failed_cmd), working_steps(ok_cmd)
    return bool(failed) and len(ok) > len(failed) and ok[:len(failed)] == failed


def teaches_nothing(failed_cmd: str, commands: list[str], error: str) -> bool:
    from learn_cli.text.effects import teaches_nothing as rule  # (the hook imports it when a pair needs it)

    return rule(failed_cmd, commands, error)


def _bookkeeping(step: str, failed_cmd: str, error: str = "") -> bool:
    """A git step that records work (`git add -A`, `git commit`) changes nothing another
    program sees: never the fix of a failure that is not git's own, unless the error asks for
    it (`gh pr create`: "you must first push the current branch")."""
    from learn_cli.text.shell import program, unwrap

    words = unwrap(step)
    verb = words[1] if len(words) > 1 else ""
    if program(step) != "git" or program(failed_cmd) == "git" or verb not in ("add", "commit", "tag", "push", "notes"):
        return False
    said = "".join(ch if ch.isalnum() else " " for ch in error.lower()).split()  # words, not `address`
    return verb not in said


def _moved_to(cap: Capture, failed: dict, ok_cmd: str) -> str | None:
    """The folder, relative to the project, that the same command worked from, when it is not
    the folder it failed in: the lesson is "run it from there"."""
    from learn_cli.capture.lesson import moved_to

    # Normalised without the root: with it, `cd ROOT &&` is dropped as plumbing, and here it
    # is the lesson (the command failed in a subfolder).
    folder = moved_to(_normalize(failed.get("cmd") or "", None), _normalize(ok_cmd, None))
    where = os.path.normpath(failed.get("cwd") or ".")
    if folder is None:
        return _repathed_to(cap, failed, ok_cmd, where)
    if folder.startswith(("~", "$", "-")) or _foreign_drive(folder):
        return None
    if os.path.isabs(folder):
        folder = _relative(folder, cap.project.root)
    else:  # relative to the folder the command failed in
        folder = os.path.join(where, folder)
    folder = os.path.normpath(folder)
    if _outside_project(folder):
        return None  # no lesson for other sessions
    return folder if folder != where else None


# Failures that running the same command from another folder can fix: a file it looks for is
# not in this one (`make`: no makefile, `cargo`: no Cargo.toml, `npm`: no package.json). A test
# failing or the network failing may pass on a second run wherever it is made.
_WHERE_IT_RUNS = frozenset({"config", "runtime", "dependency"})


def _outside_project(folder: str) -> bool:
    """A folder as `_relative` writes it (`<abs>/x`, `../y`): not one of the project's."""
    return folder.startswith(("<", "/", ".."))


def _only_moves(command: str) -> bool:
    """`cd build`, alone: it changes the folder the next calls run in (Claude Code keeps it)."""
    from learn_cli.text.shell import tokenize

    words = tokenize(command)
    return len(words) <= 2 and words[:1] == ["cd"]


def _ran_elsewhere(failed: dict, ok: dict, failed_cmd: str, ok_cmd: str, root: str | None) -> str | None:
    """The project folder the same command worked in, when the agent did not write a `cd` but
    ran it from there: Gemini CLI's `dir_path`, or a `cd` of its own call that Claude Code
    keeps. Nothing but such a `cd` ran in between (the caller's condition): the folder is the fix."""
    before, after = os.path.normpath(failed.get("cwd") or "."), os.path.normpath(ok.get("cwd") or ".")
    if before == after or _outside_project(after) or failed.get("cat") not in _WHERE_IT_RUNS:
        return None
    return after if _normalize(failed_cmd, root) == _normalize(ok_cmd, root) else None


def _repathed_to(cap: Capture, failed: dict, ok_cmd: str, where: str) -> str | None:
    """The folder, above the one it failed in, that the failed command's paths were written
    for, when the agent got it to work by writing them from where it was (`./build.sh` failed in
    `test`, `bash /proj/build.sh` worked: run it from the root). A path corrected from the root
    down (`app.py` → `src/app.py`) is another file's path, not another folder: None."""
    from learn_cli.capture.lesson import repathed

    pairs = repathed(_normalize(failed.get("cmd") or "", None), _normalize(ok_cmd, None), failed.get("err") or "")
    if not pairs or where in (".", ""):
        return None
    folders = set()
    for was, works in pairs:
        if was.startswith(("/", "~", "$")) or works.startswith(("~", "$")) or _foreign_drive(works):
            return None
        works = _relative(works, cap.project.root) if os.path.isabs(works) else os.path.join(where, works)
        works, was = os.path.normpath(works), os.path.normpath(was)
        if works.startswith(("<", "/", "..")) or not (works == was or works.endswith("/" + was)):
            return None
        folders.add(works[: len(works) - len(was)].rstrip("/") or ".")
    folder = folders.pop() if len(folders) == 1 else None
    if folder is None or folder == where or not (folder == "." or where.startswith(folder + "/")):
        return None
    return folder


def _foreign_drive(folder: str) -> bool:
    """`C:/Users/x/app` (or `C:\\…`) where paths have no drives: absolute on the machine that
    ran it, and nothing this one can relate to its project (joined to the folder the command
    ran in, it made `/w/C:/Users/x/app`)."""
    return len(folder) > 2 and folder[1] == ":" and folder[0].isalpha() and folder[2] in "/\\" \
        and not os.path.isabs(folder)


def _refused_aid(failed_cmd: str, ok_cmd: str, error: str) -> bool:
    """`mix test t.exs:462 -v`: "-v : Unknown option"; `mix test t.exs:462` worked (round 13). The
    looking aid dropped is no look taken away: the program refused it and never ran, so dropping
    it was the fix, as for any option the program rejects."""
    if "-" not in failed_cmd:
        return False
    from learn_cli.text.keys import rejects_option
    from learn_cli.text.shell import tokenize

    if not rejects_option(error):
        return False
    was, now = tokenize(failed_cmd), tokenize(ok_cmd)
    dropped = [word for word in was if word not in now]
    said = set(error.replace("'", " ").replace('"', " ").replace("`", " ").replace(":", " ").split())
    return bool(dropped) and all(word.startswith("-") and word in said for word in dropped)


def _failed_timeout(failed_cmd: str, ok_cmd: str, error: str | None) -> bool:
    from learn_cli.capture.lesson import failed_timeout

    return failed_timeout(failed_cmd, ok_cmd, error or "")


def retried_step(failed_cmd: str, ok_cmd: str, error: str | None, category: str | None = None) -> str | None:
    """What of the failed command the successful `ok_cmd` retries: the command itself, or the
    step of its chain that the error names (`git add a && git commit -m x && git push`
    rejected, then `git pull --no-rebase && git push`); None when it retries neither. The one
    decision live capture (fix_for) and bench/corpus.py both ask; `category` is the error's
    (text.failure.categorize), worked out here when not given."""
    from learn_cli.capture import pairing
    from learn_cli.text.keys import failing_step

    if pairing.is_retry(failed_cmd, ok_cmd) or _platform_retry(failed_cmd, ok_cmd, error):
        return None if _narrowed_failing_tests(failed_cmd, ok_cmd, error, category) else failed_cmd
    step = failing_step(failed_cmd, error)
    if step != failed_cmd and pairing.is_retry(step, ok_cmd):
        return step
    producer = _before_a_missing_consumer(failed_cmd, ok_cmd, error)
    if producer and pairing.is_retry(producer, ok_cmd) or _package_chosen_again(failed_cmd, ok_cmd, error):
        return failed_cmd
    if _ran_without_the_failed_cd(failed_cmd, ok_cmd, error) or _ran_as_the_error_said(failed_cmd, ok_cmd, error):
        return failed_cmd
    if _replaced_what_was_missing(failed_cmd, ok_cmd, error):
        return failed_cmd
    return None


def _replaced_what_was_missing(failed_cmd: str, ok_cmd: str, error: str | None) -> bool:
    """The same command with the one argument the error named as missing replaced: `sudo
    systemctl restart rfid3.service` ("Unit rfid3.service not found"), then `sudo systemctl
    restart rfid_dash_dev.service` (sandahltim/RFID3), a name the text of the two shares
    nothing of. Not a look at another file (`cat a.txt`, then `cat b.txt`): that is looking; nor
    another goal (`npm run lint` after "eslint: not found", then `npm run build`: r32-d-026)."""
    before, after = failed_cmd.split(), ok_cmd.split()
    changed = [old for old, new in zip(before, after, strict=True) if old != new] if len(before) == len(after) else []
    if not error or len(changed) != 1 or changed[0].strip("'\"") not in error:
        return False  # (string tests first: one word replaced, and the error names it)
    from learn_cli.capture.lesson import replaced_target
    from learn_cli.engine.goals import goal
    from learn_cli.text.effects import only_reads
    from learn_cli.text.shell import tokenize, unwrap_tokens

    target = None if only_reads(failed_cmd) else replaced_target(failed_cmd, ok_cmd, error)
    if target is None or target[2].startswith("-"):
        return False  # (`codex auth status`, unrecognized, then `codex auth --help`: asking, r11-d-041)
    return goal(unwrap_tokens(tokenize(failed_cmd))) == goal(unwrap_tokens(tokenize(ok_cmd)))


def _ran_as_the_error_said(failed_cmd: str, ok_cmd: str, error: str | None) -> bool:
    """The error named the command to run instead, and the agent ran it: git's "To push the
    current branch and set the remote as upstream, use⏎⏎    git push --set-upstream origin main"
    after a chain the export cut short before its push (round 35); the Vercel CLI's hint
    `"command": "vercel list --all"` after `vercel ls app` (round 10). That is the retry, whatever
    the failed command looked like, when it runs the same program: a step the error names
    for another program, or an install ("run `npm install`"), is a step before a retry; a
    look it names (`git status`, `prisma db execute -h`) is no retry of work."""
    work = [step.split() for step in ok_cmd.split("&&") if not step.strip().startswith("cd ")]
    if not error or not work or len(work[0]) < 2 or " ".join(work[0][:2]) not in error:
        return False  # (a string test first: most errors name no command)
    from learn_cli.capture.lesson import told_to_run

    return told_to_run(error, ok_cmd, failed_cmd)


def _ran_without_the_failed_cd(failed_cmd: str, ok_cmd: str, error: str | None) -> bool:
    """`cd backend && uv run alembic history` failed at its `cd` (the shell was in backend
    already), then `uv run alembic history | grep -E …` worked (round 29). The job never ran, so
    the grep is no second look at its failure: the line without the `cd` is the retry."""
    if not failed_cmd.startswith("cd "):
        return False
    from learn_cli.capture.lesson import cd_failed, dropped_cd

    folder = dropped_cd(failed_cmd, ok_cmd)
    return folder is not None and cd_failed(error or "", folder)


def _package_chosen_again(failed_cmd: str, ok_cmd: str, error: str | None) -> bool:
    """`pnpm --filter @sitin/minerva-server lint`: "No projects matched the filters"; then `pnpm
    lint --filter=./packages/app-minerva-server` worked (round 21). Another package of a
    workspace is another job (engine.goals.other_packages), unless the error says the one
    chosen matched nothing: then the same job on a package chosen again is the retry."""
    from learn_cli.text.shell import PACKAGE_OPTIONS

    said = (error or "").lower()
    if not any(word in said for word in ("match", "found", "unknown", "no such")) or \
            not any(name in failed_cmd for name in PACKAGE_OPTIONS):
        return False  # (the texts first: most successes after a failure come here)
    from learn_cli.engine.goals import other_packages, without_packages
    from learn_cli.text.shell import shell_word, unwrap

    was, now = unwrap(failed_cmd), unwrap(ok_cmd)
    if not other_packages(was, now):
        return False
    from learn_cli.capture import pairing
    from learn_cli.capture.lesson import packages_none_matched

    if not packages_none_matched(was, error or ""):
        return False
    return pairing.is_retry(" ".join(map(shell_word, without_packages(was))),
                            " ".join(map(shell_word, without_packages(now))))


def _before_a_missing_consumer(failed_cmd: str, ok_cmd: str, error: str | None) -> str:
    """What the failed line ran before the program it piped into, when the error says that
    program is not installed and `ok_cmd` no longer runs it (`docker inspect img --format=… |
    python -m json.tool`, "command not found: python"; round 19): run without it, the job is
    the retry. (Dropped after it failed on its input, the consumer leaves a look at the
    producer's output: pairing._consumer_dropped.) Else ""."""
    if "|" not in failed_cmd:
        return ""  # (most successes after a failure come here: the text first, ~0.8 M instructions)
    from learn_cli.text.keys import dropped_missing_program
    from learn_cli.text.shell import canonical_program, segments_before, split_segments_ops, tokenize

    missing = dropped_missing_program(failed_cmd, ok_cmd, error)
    if not missing:
        return ""
    parts = split_segments_ops(failed_cmd)
    for at in range(1, len(parts)):
        words = tokenize(parts[at][0])
        if parts[at - 1][1] in ("|", "|&") and words and canonical_program(words[0]) == missing:
            return segments_before(failed_cmd, at)
    return ""


def _narrowed_failing_tests(failed_cmd: str, ok_cmd: str, error: str | None, category: str | None) -> bool:
    """`uv run pytest -q` failed on its tests ("3 failed, 20 passed"), then `uv run pytest -q
    tests/test_usage.py` passed: a part of the run, to look at it or to check the agent's own
    tests; the failures stand, and offered later it would hide them (round 12). After a
    failure that is not the tests' (a collection or config error), running part of them may
    be the fix."""
    from learn_cli.text.failure import categorize

    if (category or categorize(error or "", failed_cmd)) != "logic":
        return False
    from learn_cli.engine.goals import narrowed
    from learn_cli.text.shell import unwrap

    return narrowed(unwrap(failed_cmd), unwrap(ok_cmd))


def _platform_retry(failed_cmd: str, ok_cmd: str, error: str | None) -> bool:
    """capture.lesson.platform_retry, asked of most successes that follow a failure and retry
    nothing (`git status` after `pytest tests` was not found): what it needs is looked for in
    the texts first, so that those do not import the lesson module (~4 M instructions)."""
    from learn_cli.text.keys import rejects_option

    if _dropped_a_quoted_option(failed_cmd, ok_cmd, error or "") or _replaced_a_quoted_target(failed_cmd, ok_cmd,
                                                                                                  error or ""):
        return True
    if _script_echoed(failed_cmd, error or ""):
        from learn_cli.capture.lesson import ran_the_script

        if ran_the_script(failed_cmd, ok_cmd, error or ""):
            return True
    if not rejects_option(error):  # then only a program not installed, replaced on the same targets
        from learn_cli.text.shell import script_name, tokenize

        tokens = tokenize(failed_cmd)
        named = [word for word in tokens[1:] if not word.startswith("-")]
        job = script_name(tokens) or named[0] if named else ""
        if not named or not all(word in ok_cmd for word in named) and not _quoted(error or "", job):
            return False  # another program on the very same targets, another job, or nothing
    from learn_cli.capture.lesson import platform_retry

    return platform_retry(failed_cmd, ok_cmd, error or "")


def _script_echoed(failed_cmd: str, error: str) -> bool:
    """Might the error show the line of the package.json script the failed command ran? (A
    string test before capture.lesson.ran_the_script decides.)"""
    from learn_cli.text.shell import JS_PACKAGE_MANAGERS

    return ("> " in error or "$ " in error) and any(name in failed_cmd for name in JS_PACKAGE_MANAGERS)


def _dropped_a_quoted_option(failed_cmd: str, ok_cmd: str, error: str) -> bool:
    """`yarn install --frozen-lockfile`: "yarn was run with `--frozen-lockfile`"; `yarn install`
    worked. The command without options that the error quotes is a retry however short it is
    (a dropped option is no edit the text-distance rules see)."""
    if "-" not in failed_cmd or not any(mark in error for mark in "'\"`"):
        return False
    from learn_cli.text.shell import tokenize

    was, now = tokenize(failed_cmd), tokenize(ok_cmd)
    dropped = [word for word in was if word not in now]
    return (bool(dropped) and all(word.startswith("-") for word in dropped)
            and [word for word in was if word not in dropped] == now and any(_quoted(error, w) for w in dropped))


def _replaced_a_quoted_target(failed_cmd: str, ok_cmd: str, error: str) -> bool:
    """`npx tsc -p tsconfig.build.json`: "The specified path does not exist:
    'tsconfig.build.json'"; `npx tsc -p tsconfig.json` worked. One path replaced, the one the
    error quotes as missing, is a retry (another path is otherwise another job)."""
    from learn_cli.text.shell import tokenize

    was, now = tokenize(failed_cmd), tokenize(ok_cmd)
    changed = [(a, b) for a, b in zip(was[1:], now[1:], strict=False) if a != b] if len(was) == len(now) else []
    if len(changed) != 1 or changed[0][0].startswith("-") or not _quoted(error, changed[0][0]):
        return False
    from learn_cli.capture.pairing import path_like

    if not path_like(changed[0][0]):
        return False  # (a word that is no path, `test` → `run`, is for the retry rules to judge)
    from learn_cli.capture.lesson import replaced_target

    return replaced_target(failed_cmd, ok_cmd, error) is not None


def _installs_what_the_error_names(ok_cmd: str, error: str) -> bool:
    """Does `ok_cmd` (`pip install wheel`) act on a name the error speaks of ("invalid command
    'bdist_wheel'", "Failed building wheel")?"""
    from learn_cli.text.shell import unwrap

    said = error.lower()  # (past the program and its verb: `sudo apt-get install` names `install` too)
    return any(len(word) >= 3 and word.lower() in said for word in unwrap(ok_cmd)[2:] if not word.startswith("-"))


def _quoted(text: str, word: str) -> bool:
    """Does the text quote the word (`'test'`, `"test"`, `` `test' ``): an error naming the job?
    (A string test, so that a success after an unrelated failure does not import the lesson
    module; capture.lesson.missing_job decides.)"""
    return any(f"{a}{word}{b}" in text for a, b in (("'", "'"), ('"', '"'), ("`", "'"), ("`", "`")))


def failed_as_stored(entry: dict, root: str | None) -> str:
    """A failed call as learnings store it in `command`: the normalised command, or for a path
    tool its name and the path ("Read src/a.py"); what the lookup compares the next failure
    with (offers: the same failure again is answered at once)."""
    if entry.get("cmd"):
        return _normalize(entry["cmd"], root)
    if entry.get("path") and entry.get("tool") in ev.PATH_TOOLS:
        return f"{entry['tool']} {_relative(entry['path'], root)}"
    return ""


def learn_pair(cap: Capture, failed: dict, steps: list[str], kind: str) -> str | None:
    """Store the pair as a learning or as one more sighting of it. Returns the outcome of the
    suggestion the failure had ("helped", "ignored") or None."""
    if not steps or not kind:
        return None
    root = cap.project.root
    tool = failed.get("tool") or ""
    failed_cmd = _normalize(failed["step"], root) if failed.get("step") else failed_as_stored(failed, root)
    if kind == "retry" and "timeout" in (failed.get("cmd") or ""):
        from learn_cli.text.shell import normalize_command

        if _failed_timeout(failed["cmd"], steps[0], failed.get("err")):  # stored with what failed
            failed_cmd = normalize_command(failed.get("step") or failed["cmd"], root, keep_timeout=True)
    if kind == "path":
        fix_cmd = _relative(steps[0], root)
    else:
        fix_cmd = " && ".join(dict.fromkeys(_normalize(step, root) for step in steps))
    key = failed.get("key") or ""
    if not key or not fix_cmd or not failed_cmd:
        return None
    script = _script_of(steps, kind, root)
    sug = failed.get("sug") if isinstance(failed.get("sug"), dict) and not failed.get("sug_done") else None
    followed = sug is not None and sug.get("key") == key and _fix_matches(sug.get("fix", ""), fix_cmd)
    evidence = {"session": cap.session_id, "event": failed["id"], "at": cap.now}
    category = failed.get("cat") or "runtime"

    def new_record() -> dict:
        from learn_cli.engine import wording
        from learn_cli.engine.rekey import key_from_text
        from learn_cli.text.keys import shorten_paths

        rec = make_record(
            type="error", category=category, context=wording.rule_text(failed_cmd, category, fix_cmd, kind,
                                                                         error=failed.get("err") or ""),
            error=shorten_paths(failed.get("err") or "", root)[:MAX_ERROR], fix=fix_cmd,
            project=cap.project.name, projects=[cap.project.id], status="pending", source="auto",
            key=key, tool=tool, command=failed_cmd, fix_command=fix_cmd, fix_kind=kind, fix_script=script or None,
            exit_code=failed.get("code"), env=_env(), evidence=[], helped=0, not_helped=0, now=cap.now)
        rec["key_from_text"] = key_from_text(rec)  # how a prune tells that the key rules changed for it
        return rec

    own_suggestion = followed and cap.store.path_of(str(sug.get("file") or "")) == cap.learnings_path
    record = add_sighting(cap, key, lambda rec: _same_learning(rec, key, fix_cmd), new_record, evidence,
                          corroborated=followed, helped_id=sug.get("id") if own_suggestion else None)
    if record is not None:
        cap.count("pairs")
    if not followed:
        return "ignored" if sug is not None else None
    if not own_suggestion:
        _helped(cap, sug, failed["id"])  # credited once per failure event, even when redone
    elif record is not None and record.get("id") == sug.get("id"):
        cap.count("helped")  # this project's own learning: credited by add_sighting's update
    elif record is not None:
        _helped(cap, sug, failed["id"])  # its change, applied to this command, is a record of its own
    return "helped"


# ---------------------------------------------------------------------------------------------
# Learning from success: the command a project settled on (issue 10, cause 7)

_WAY_SETUP = frozenset({"source", ".", "export"})  # an environment the job runs in (`source venv/bin/activate`)
MAX_SETTLED_FAILURES = 100  # the session's latest failures a success is compared with (settled_way)
# Failures of the code, not of the way it was run: tests that ran and failed. (A compile error
# stays: `cargo test` without `--features c-fallback` does not compile, rjpower/zopfli.)
CODE_FAILURES = frozenset({"logic"})


def settled_way(events: list[dict], ok: dict, root: str | None = None) -> list[str] | None:
    """[goal, way] when a build, test or run command worked after one of the same goal failed,
    run another way, earlier in this session: the way the agent settled on is a fact about the
    project (a broken test is fixed by code, but `cargo test --features c-fallback` is how tests
    run here; `cargo check` fails at the root and works in `src-tauri`). Not after tests that
    ran and failed (CODE_FAILURES), nor after a failure a lesson was drawn from (`lesson`):
    "`pytest tests` fails: use `python -m pytest tests` instead" says it, and the digest would
    say it twice. Said once a session (the entry's `works`). None for other successes; a
    session with no failed shell command costs one pass over its events."""
    if ok.get("tool") not in ev.SHELL_TOOLS or not ok.get("cmd"):
        return None
    failed = [e for e in events if e.get("kind") == ev.FAILURE and e.get("tool") in ev.SHELL_TOOLS and e.get("cmd")
              and not e.get("lesson") and e.get("cat") not in CODE_FAILURES]
    if not failed:
        return None
    from learn_cli.engine.goals import WORKING_GOALS, goal
    from learn_cli.text.shell import unwrap

    ok_goal = goal(unwrap(ok["cmd"]))
    if ok_goal not in WORKING_GOALS:
        return None
    way = working_way(ok, root)
    if not way or any(e.get("works") == [ok_goal, way] for e in events):
        return None
    for bad in reversed(failed[-MAX_SETTLED_FAILURES:]):  # (each is parsed: a bound on a long session's cost)
        if goal(unwrap(bad["cmd"])) != ok_goal or working_way(bad, root) == way:
            continue  # another job, or the same way of running it: the fix was elsewhere (the code)
        if not teaches_nothing(bad["cmd"], [ok["cmd"]], bad.get("err") or ""):
            return [ok_goal, way]  # (not the tests that failed left out, a check skipped)
    return None


def working_way(entry: dict, root: str | None = None) -> str:
    """How a shell entry ran its job, from the project's root: its folder, its setup steps and
    the job without what it ran on (`_without_targets`), plumbing dropped. A command that
    starts with its own `cd` says where it ran; the hook's folder is then where the `cd` led
    (Claude Code's shell stays there), not where it started."""
    command = _without_targets(_normalize(entry.get("cmd") or "", root))  # (plumbing first: `-- 2>&1`)
    folder = _relative(entry.get("cwd") or ".", root) or "."
    if folder.startswith(("<abs>", "..")) or os.path.isabs(folder):
        return ""  # run outside the project: not how the project runs it
    if command and folder != "." and not command.startswith("cd "):
        from learn_cli.text.shell import shell_word

        command = f"cd {shell_word(folder)} && {command}"
    return _normalize(command, root) if command else ""


def _without_targets(command: str) -> str:
    """The way a job is run, without what it ran on or looked at: `cd web && cargo test
    --features x lz77::tests -- --nocapture` -> `cd web && cargo test --features x` (folders,
    setup steps such as `source .venv/bin/activate` and where it runs (engine.goals.PLACE_OPTIONS)
    kept; test names, selections (SELECTING_OPTIONS) and diagnostic flags dropped)."""
    from learn_cli.capture.pairing import is_diagnostic_flag
    from learn_cli.engine.goals import SELECTING_OPTIONS, WORKING_GOALS, goal, targets
    from learn_cli.text.shell import SETUP_PROGRAMS, path_name, split_segments_ops, tokenize, unwrap_tokens

    kept: list[str] = []
    for text, _op in split_segments_ops(command):
        written = tokenize(text)
        tokens = unwrap_tokens(written)
        if tokens and (tokens[0] == "cd" and len(tokens) == 2 or tokens[0] in _WAY_SETUP):
            kept.append(" ".join(text.split()))  # as written: a folder with a space keeps its quotes
        elif tokens and goal(tokens) in WORKING_GOALS:
            named = targets(tokens)
            dropped = [is_diagnostic_flag(t) or (path_name(t).lower() in named and not _option_value(tokens, i))
                       for i, t in enumerate(tokens)]
            words = [t for i, t in enumerate(tokens[1:], 1) if not dropped[i] and not (  # `-k slow`: both words
                t.startswith("-") and i + 1 < len(tokens) and dropped[i + 1] and t in SELECTING_OPTIONS)]
            while words and words[-1] == "--":
                words.pop()
            return " && ".join(kept + [" ".join(_wrapped_as_written(written, tokens) + words)])
        elif tokens and tokens[0] not in SETUP_PROGRAMS:
            kept = []  # a step that is not part of how the job runs
    return ""


def _wrapped_as_written(written: list[str], job: list[str]) -> list[str]:
    """The words of a segment up to its job's program, as written: how it runs the job is part
    of the way (`venv/bin/python3 -m uvicorn`, `sudo -u app npm test`, `uv run pytest`)."""
    start = len(written) - len(job)
    if start < 0 or written[start + 1:] != job[1:]:
        return job[:1]  # (not a plain suffix: say the job alone)
    return written[:start + 1]


def _option_value(tokens: list[str], i: int) -> bool:
    """Is tokens[i] the value of the long option before it (`--module CommonJS`), not a file or
    a test it ran on? Dropped, it would leave the option without its value."""
    from learn_cli.engine.goals import PLACE_OPTIONS, SELECTING_OPTIONS

    word, before = tokens[i], tokens[i - 1] if i > 1 else ""
    if before in PLACE_OPTIONS or before in SELECTING_OPTIONS:
        return before in PLACE_OPTIONS
    return (before.startswith("--") and "=" not in before and "/" not in word and "::" not in word
            and not ("." in word and word.rpartition(".")[2].isalpha()))  # (`a.ts` is a file)


def learn_working_command(cap: Capture, goal: str, command: str, event_id: str) -> None:
    """One more sighting of "this project <goal>s with `command`" (a workflow learning, active
    once seen in `min_evidence` sessions; then in the session-start digest)."""
    from learn_cli.engine.goals import WORKING_GOALS, project_fact_key

    command = _normalize(command, cap.project.root)
    if not command or goal not in WORKING_GOALS:
        return
    text = f"This project {WORKING_GOALS[goal]} with `{command[:200]}`"
    key = project_fact_key(goal, cap.project.id)
    evidence = {"session": cap.session_id, "event": f"{event_id}:works", "at": cap.now}

    def new_record() -> dict:
        return make_record(
            type="workflow", category="testing" if goal == "test" else "build", context=text,
            fix=command, project=cap.project.name, projects=[cap.project.id], status="pending",
            source="auto", key=key, tags=[PROJECT_FACT_TAG, goal],
            evidence=[], now=cap.now)

    same = lambda rec: rec.get("type") == "workflow" and _fix_matches(rec.get("fix") or "", command)  # noqa: E731
    if add_sighting(cap, key, same, new_record, evidence, distinct_sessions=True):
        cap.count("working_commands")


def _helped(cap: Capture, sug: dict, event_id: str) -> None:
    pid = cap.project.id

    def change(cur: dict) -> dict | None:
        if not _credit(cur, cap.session_id, event_id, "helped"):
            return None
        _credit_helped(cur, cap.now)
        if pid not in (cur.get("projects") or []):
            cur["projects"] = [p for p in (cur.get("projects") or []) if isinstance(p, str)] + [pid]
        return cur

    done = _update_record(cap.store, sug, change)
    if done is not None:
        cap.count("helped")
        owner = _owner_pid(sug.get("file"))
        if owner:
            cap.buffer.add_todo(owner, [sug["key"]] if isinstance(sug.get("key"), str) and sug["key"] else None)


def _credit_helped(rec: dict, now: str) -> None:
    rec["helped"] = _int(rec.get("helped")) + 1
    rec["frequency"] = max(1, _int(rec.get("frequency"))) + 1
    rec["last_used"] = now
    rec["worked_at"] = _stamp()
    rec["impact"] = round(min(1.0, _impact(rec) + HELPED_IMPACT_STEP), 4)


def add_sighting(cap: Capture, key: str, matches, new_record, evidence: dict, corroborated: bool = False,
                 helped_id: str | None = None, distinct_sessions: bool = False) -> dict | None:
    """One more distinct sighting of the learning `key` in this project (created on the first).

    Evidence is a set of (session, event): the same event never counts twice. A `pending`
    learning becomes `active` at `min_evidence` sightings, or at once when `corroborated` (an
    active learning from elsewhere was suggested, followed, and worked). Returns the record as
    stored, or None when this sighting was already known.
    """
    store = cap.store
    path = cap.learnings_path
    min_evidence = cap.int_setting("min_evidence")
    sighting = (evidence["session"], evidence["event"])
    # One writer at a time decides "new or existing" for this project: no duplicate records
    # when parallel sessions learn the same thing at the same moment.
    from learn_cli.engine.knowledge import find_same  # here: only a pair needs it

    with file_lock(os.path.join(os.path.dirname(path), "capture")):
        _fresh(store, path)
        found = find_same(store, key, path, matches)
        same = found[1] if found else None
        if same is None:
            rec = new_record()
            rec["evidence"] = [evidence]
            rec["worked_at"] = _stamp()
            if corroborated or min_evidence <= 1:
                rec["status"] = "active"
                cap.count("learnings_activated")
            store.put(path, rec)
            cap.count("learnings_new")
            return rec
        outcome: dict = {}

        def change(cur: dict) -> dict | None:
            listed = [e for e in (cur.get("evidence") or []) if isinstance(e, dict)]
            if any((e.get("session"), e.get("event")) == sighting for e in listed):
                return None
            cur["evidence"] = (listed + [evidence])[-MAX_EVIDENCE:]
            cur["frequency"] = max(1, _int(cur.get("frequency"))) + 1
            cur["last_used"] = cap.now
            cur["worked_at"] = _stamp()
            if cap.project.id not in (cur.get("projects") or []):
                cur["projects"] = list(cur.get("projects") or []) + [cap.project.id]
            if helped_id and cur.get("id") == helped_id:
                _credit_helped(cur, cap.now)
                cur["frequency"] -= 1  # one sighting, credited once
            seen = _sessions(cur["evidence"]) if distinct_sessions else _distinct(cur["evidence"])
            if cur.get("status") == "pending" and (corroborated or seen >= min_evidence):
                cur["status"] = "active"
                outcome["activated"] = True
            return cur

        updated = store.update(path, same["id"], change)
    if updated is None:
        return None
    if outcome.get("activated"):
        cap.count("learnings_activated")
    return updated


def _sessions(evidence: list) -> int:
    return len({e.get("session") for e in evidence if isinstance(e, dict)})


def _distinct(evidence: list) -> int:
    return len({(e.get("session"), e.get("event")) for e in evidence if isinstance(e, dict)})


def _same_fix(rec: dict, fix_cmd: str) -> bool:
    return _fix_matches(_fix_of_record(rec), fix_cmd)


def _same_learning(rec: dict, key: str, fix_cmd: str) -> bool:
    """Is the pair just seen one more sighting of `rec`? The rule import and prune apply too
    (engine.knowledge.same_learning: the same fix, or a refinement of it); the exact
    comparison first, so the common case imports nothing more."""
    if _same_fix(rec, fix_cmd):
        return True
    from learn_cli.engine.knowledge import same_learning

    return same_learning(rec, {"key": key, "fix": fix_cmd})


def _fix_matches(known: str, fix_cmd: str) -> bool:
    """Does a fix that was just used agree with a known one? The same commands, in any order.

    Exact text (whitespace and output plumbing aside), not pairing.is_same_command: the
    wrapper is often the whole lesson (`python -m pytest` vs `uv run pytest`).
    """
    if not known or not fix_cmd:
        return False
    return {_normalize(s, None) for s in _steps(known)} == {_normalize(s, None) for s in _steps(fix_cmd)}


def _steps(fix: str) -> list[str]:
    return fix_steps(fix)  # (not engine.wording's name for it: a pair never imports wording)


# ---------------------------------------------------------------------------------------------
# Prompts: user corrections


def on_prompt(cap: Capture, event: ev.Event) -> None:
    from learn_cli.capture.corrections import find_corrections
    from learn_cli.text.redact import redact

    prompt = redact(event.prompt)
    found = find_corrections(prompt)[:MAX_CORRECTIONS]
    if not found:
        cap.count("prompts")
        return
    event_id = event.prompt_id or "prompt-" + _digest(prompt)
    entry = {"id": f"prompt:{event_id}"[:200], "at": cap.now, "kind": "prompt", "pid": cap.project.id}
    items = [[c.text, c.polarity, c.category] for c in found]
    with cap.buffer.lock():
        events = cap.buffer.events()
        if any(e.get("id") == entry["id"] for e in events):
            return  # the same prompt again: a replay of a stopped hook's event, counted by it
        settle(cap, events)
        entry = _owing(cap, entry, {"op": "corrections", "items": items, "event": event_id})
        _append_counted(cap, [entry], "prompts")
        _pay(cap, [entry])


def _learn_correction(cap: Capture, item: list, event_id: str) -> None:
    from learn_cli.text.keys import text_key

    text, polarity, category = (str(x)[:300] for x in item[:3])
    key = text_key(text)
    evidence = {"session": cap.session_id, "event": f"{event_id}:{key}", "at": cap.now}

    def new_record() -> dict:
        return make_record(
            type="preference", category=category, context="User correction in a prompt",
            fix=text, project=cap.project.name, projects=[cap.project.id], status="pending",
            source="auto", key=key, tags=["correction", polarity], evidence=[], now=cap.now)

    if add_sighting(cap, key, lambda rec: rec.get("type") == "preference", new_record, evidence) is not None:
        cap.count("corrections")


def _digest(text: str) -> str:
    from learn_cli.text.hashes import sha1_hex

    return sha1_hex(text.encode("utf-8", "replace"))[:16]


# ---------------------------------------------------------------------------------------------
# End of session


INLINE_PROMOTION_LIMIT = 800  # records a hook may re-score at session end (≈ 0.3 s)


def finalize(store, session_id: str | None, deadline: float, limit: int | None = INLINE_PROMOTION_LIMIT,
             counters: dict | None = None, check: bool = True) -> bool:
    """End-of-session work for this session, then for any left over by earlier ones, until
    `deadline` (time.monotonic()): unfinished store work of the session's hooks first, then the
    promotion check of what the sessions wrote (the learnings of the keys their markers name;
    the whole project for a marker that names none). A project whose promotion check would
    touch more than `limit` records is deferred to `learn promote` / `learn prune` (see
    finish_pending). Without `check`: only this session's unfinished store work, every marker
    left for a later finalize (a SessionEnd before the next Stop: capture.hook._quick_end).
    Returns True when no session's work is left."""
    counters = {} if counters is None else counters
    if not check:
        recover_session(store, session_id or "unknown", counters)
        return not pending_todos(store.layout.sessions_dir, 1)
    buffer = SessionBuffer(store.layout.sessions_dir, session_id or "unknown")
    todos = [buffer.todo_path] if os.path.exists(buffer.todo_path) else []
    todos += [p for p in pending_todos(store.layout.sessions_dir) if p != buffer.todo_path]
    checked: dict[str, set | None] = {}  # pid -> keys checked in this call (None: the whole project)
    for todo in todos:
        if time.monotonic() > deadline:
            break
        recover_session(store, todo_session_id(todo), counters)
        if time.monotonic() > deadline or store_deadline.passed():
            break  # work may still be owed: the session's marker stays for the next one
        work = read_todo(todo)
        done, deferred = {}, []
        for pid in work["pids"]:
            if time.monotonic() > deadline:
                break
            keys = work["keys"].get(pid)
            if _checked_already(checked, pid, keys):
                done[pid] = keys
                continue
            if finalize_project(store, pid, deadline, limit, keys=keys):
                done[pid] = keys
                before = checked.get(pid, set())
                checked[pid] = None if keys is None or before is None else before | set(keys)
            else:
                deferred.append(pid)
        if deferred:
            _defer(store, deferred)
        _forget(store, todo, dict(done, **{pid: None for pid in deferred}))
    return not pending_todos(store.layout.sessions_dir, 1)


def _checked_already(checked: dict, pid: str, keys: list[str] | None) -> bool:
    """Did this finalize() check that project's learnings already (several sessions' markers
    name the same project)?"""
    if pid not in checked:
        return False
    return checked[pid] is None or (keys is not None and set(keys) <= checked[pid])


def finish_pending(store, promoted_everything: bool = False) -> int:
    """For commands (`learn promote`, `learn prune`): do every deferred and left-over piece of
    end-of-session work without a time limit, or, right after a promotion run over the whole
    store, just drop the markers. Returns the number of projects handled."""
    sessions_dir = store.layout.sessions_dir
    if not os.path.isdir(os.path.dirname(deferred_path(sessions_dir))):
        return 0  # no hook ever left work
    deferred = read_todo(deferred_path(sessions_dir))["pids"]
    todos = pending_todos(sessions_dir, limit=1_000_000)
    counters: dict = {}
    for todo in todos:
        recover_session(store, todo_session_id(todo), counters)
    if counters:
        from learn_cli.store import analytics

        analytics.bump(store.layout.stats, counters)
    pids = list(dict.fromkeys(deferred + [p for t in todos for p in read_todo(t)["pids"]]))
    if not promoted_everything:
        for pid in pids:
            finalize_project(store, pid, float("inf"), None)
    for todo in todos:
        _forget(store, todo, dict.fromkeys(read_todo(todo)["pids"]))
    with file_lock(deferred_path(sessions_dir)):
        left = [p for p in read_todo(deferred_path(sessions_dir))["pids"] if p not in deferred]
        _write_marker(deferred_path(sessions_dir), left)
    return len(pids)


def _defer(store, pids: list[str]) -> None:
    path = deferred_path(store.layout.sessions_dir)
    with file_lock(path):
        known = read_todo(path)["pids"]
        if any(p not in known for p in pids):
            _write_marker(path, list(dict.fromkeys(known + pids)))


def _forget(store, todo, handled: dict) -> None:
    """Remove handled projects from a session's marker, under that session's lock (one of its
    captures may be adding a project at this moment, or keys to one: a project stays when
    keys were added that were not checked). `handled`: pid -> the keys checked (None: all).

    The marker also says "this session's buffer owes store work": while an entry there still
    carries its `todo` (a capture added it after recover_session looked, then ran out of time),
    the marker stays whole for whoever pays it next (a hook of the session, a later end of
    session, `learn promote`). The 256-session attack lost a correction so."""
    buffer = SessionBuffer(store.layout.sessions_dir, todo_session_id(todo))
    with buffer.lock():
        if any(isinstance(e.get("todo"), dict) for e in buffer.events()):
            return
        now = read_todo(todo)
        _write_marker(todo, [p for p in now["pids"] if _still_owed(now, p, handled)])


def _still_owed(todo: dict, pid: str, handled: dict) -> bool:
    if pid not in handled:
        return True
    if handled[pid] is None:
        return False
    wanted = todo["keys"].get(pid)
    return wanted is None or not set(wanted) <= set(handled[pid])


def _write_marker(path, pids: list[str]) -> None:
    from learn_cli.store.jsonl import atomic_write

    try:
        if pids:
            todo = read_todo(path)  # keeps its sid, and the keys of the projects left
            todo.update(pids=pids, keys={p: keys for p, keys in todo["keys"].items() if p in pids})
            atomic_write(path, jsonlite.dumps(todo).encode(), durable=False)
        else:
            os.unlink(path)
    except FileNotFoundError:
        pass


def finalize_project(store, pid: str, deadline: float, limit: int | None = None,
                     keys: list[str] | None = None) -> bool:
    """Promotion check (re-scores, promotes, archives) and compaction of one project: of its
    learnings of `keys` (what a session wrote) and their copies elsewhere, or with None of all
    its learnings. False, doing nothing, when the check would touch more than `limit` records."""
    if pid == "global" or not os.path.isdir(store.layout.project_dir(pid)):
        return True
    if limit is not None and (store.index.promotion_size(pid, limit) if keys is None
                              else store.index.keys_size(keys, limit)) > limit:
        return False
    try:
        from learn_cli.engine.promotion import promote_project
    except ImportError:
        promote_project = None
    if time.monotonic() > deadline:
        return False  # the import took the time left (a starved process): promote does it
    if promote_project is not None:
        promote_project(store, pid, keys=keys)
    if time.monotonic() > deadline:
        return True
    path = store.layout.learnings(pid)
    rel = store.index.rel(path)
    lines, superseded, _bad = store.index.file_stats([rel]).get(rel, (0, 0, 0))
    # Fold the log when superseded lines are most of it; a huge log is left to `learn prune`.
    if lines and superseded * 2 > lines and lines <= 20_000:
        store.compact(path)
    return True


# ---------------------------------------------------------------------------------------------
# Small helpers


def _script_of(steps: list[str], kind: str, root: str | None) -> str:
    """The fix as it was run, its lines kept, when a step holds lines of its own (inline code, a
    heredoc): `fix_command` is its one-line form, which joins them and cannot be run (`python3 -c
    " import json print(1) "`). "" otherwise, and for a step capture cut short."""
    from learn_cli.text.shell import TRUNCATION, keeps_lines, relative_to_root

    if kind not in ("retry", "between") or not any(keeps_lines(step) for step in steps):
        return ""
    if any(step.endswith(TRUNCATION) for step in steps):
        return ""
    return relative_to_root("\n".join(step.strip() for step in steps), root)


def _normalize(command: str, root: str | None) -> str:
    from learn_cli.text.shell import normalize_command

    return normalize_command(command or "", root)


def _relative(path: str, root: str | None) -> str:
    from learn_cli.text.sanitize import normalize_path

    return normalize_path(path, root) if path else ""


def _owner_pid(rel) -> str | None:
    parts = str(rel or "").split("/")
    return parts[1] if len(parts) >= 3 and parts[0] == "projects" else None


def _env() -> dict:
    shell = os.path.basename(os.environ.get("SHELL", "") or "")
    return {"os": sys.platform, "shell": shell[:20]}


def _int(value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    return int(value) if value == value else 0


def _stamp() -> float:
    """When an offer failed or a fix worked, finer than `now` (seconds): both can happen in one."""
    return round(time.time(), 6)


def _number(value) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _impact(rec: dict) -> float:
    value = rec.get("impact")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return 0.5
    return min(1.0, max(0.0, float(value)))
