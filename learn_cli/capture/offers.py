"""What the hook offers on a failure: every fix of its error key, gathered over the projects
and the global file, the best proven one chosen, and said in words (issue 10).

- `Fix`: one fix of a key over all the records that state it (sightings, projects, helped, and
  whether it failed after being offered since it last worked).
- `fixes_for_key`, `known_fix`: the lookup, and the offer rule (trusted, or `min_evidence`
  sightings anywhere; one for "run it from that folder", "drop the `cd` that failed", the same
  command (or the same step of a chain) failing the same way again in its project, or a step to
  run first for an error that names what was missing there; a rewrite only for the same job, or
  for any command that starts with the dropped `cd`).
- `describe_fix`: the answer's lines, worded by `engine.wording`.

Stdlib only (hot path).
"""

from __future__ import annotations

import os

from learn_cli.capture import events as ev
from learn_cli.capture.learner import (
    LINE_WIDTH,
    Capture,
    _fix_of_record,
    _fresh,
    _int,
    _normalize,
    _number,
    _owner_pid,
    _steps,
    failed_as_stored,
    teaches_nothing,
)
from learn_cli.store.index import fix_columns, fix_facts
from learn_cli.store.record import SHOWN_STATUSES
from learn_cli.text import jsonlite, lite

TYPE_CHECKING = False  # no typing import on the hook path
if TYPE_CHECKING:
    from collections.abc import Callable

# `step`: the failing step of the chain that just failed, asked for only when a fix needs it
# (~0.5 ms); the default `str` gives "" (no step known).


class Fix:
    """One fix of an error key, gathered over every live record that states it (this
    project's, other projects', the global copy): a key may hold several fixes (issue 10),
    and the evidence of one fix adds up across sessions and projects.

    It holds what the index's fix columns say of those records (store.index.fix_facts), not
    the records: their `shapes` (the fields that say the fix and how it reads; a popular
    failure's records share a few) and, per record, where it is and what ranks it. The record
    named in a suggestion is read whole (`representative`)."""

    __slots__ = ("steps", "change", "shapes", "rows", "sightings", "projects", "helped", "failed_at", "worked_at",
                 "trusted", "rewrite", "same_work", "_named")

    def __init__(self, steps: frozenset, change: tuple | None = None):
        self.steps = steps
        self.change = change  # a change that travels to other commands (see change_of), or None
        self.shapes: list[dict] = []  # the distinct shapes of its records, the first record's first
        self.rows: list[tuple] = []  # (file, rowid, id, status, projects, last_used) of each record
        self.sightings: set = set()
        self.projects: set = set()
        self.helped = 0
        self.failed_at = self.worked_at = 0.0  # _stamp() of the last offer that failed, of the last success
        self.trusted = False  # active or global somewhere: proven, or accepted by the user
        self.rewrite = ""  # the fix applied to the command that just failed (an option change)
        self.same_work = False  # the command that just failed does the job of one that failed before
        self._named: dict = {}  # pid -> representative(pid)

    def add(self, rel: str, rowid: int, rid: str, status: str, shape: dict, state: list) -> None:
        """One record: its row (file, rowid, id, status), its shape and its state (fix_facts)."""
        helped, failed_at, worked_at, frequency, last_used, projects, pairs = state
        if not any(known is shape for known in self.shapes):
            self.shapes.append(shape)
        self.rows.append((rel, rowid, rid, status, projects, last_used))
        self.sightings.update(tuple(pair) for pair in pairs)
        if not pairs and status in SHOWN_STATUSES:
            # added by hand, promoted, or an import the user trusted: its frequency is all there
            # is (a pending import is untrusted and counts for nothing until seen here)
            self.sightings.update(("frequency", rid, n) for n in range(min(_int(frequency), 10)))
        self.projects.update(p for p in projects or [] if isinstance(p, str))
        self.helped += _int(helped)
        self.trusted = self.trusted or status in SHOWN_STATUSES
        self.failed_at = max(self.failed_at, _number(failed_at))
        self.worked_at = max(self.worked_at, _number(worked_at))

    @property
    def failed_since_worked(self) -> bool:
        return self.failed_at > self.worked_at

    def offered_before(self, skip: set) -> bool:
        """Is one of its records a suggestion in `skip`?"""
        return any(rid in skip for _rel, _rowid, rid, *_rest in self.rows)

    def representative(self, index, pid: str) -> tuple[str, dict] | None:
        """The record to name in a suggestion: this project's, else the global copy, else the
        newest; read whole from the index (None if it was removed meanwhile)."""
        if pid not in self._named:
            def rank(row):
                rel, _rowid, _rid, status, projects, last_used = row
                own = _owner_pid(rel) == pid  # this project's own copy is credited when it helps
                return (own, status == "global", pid in (projects or []), str(last_used or ""))
            rel, rowid, rid, *_rest = max(self.rows, key=rank)
            rec = index.record_at(rowid, rid)
            self._named[pid] = (rel, rec) if rec is not None else None
        return self._named[pid]

    def unambiguous(self, pid: str) -> bool:
        """Nothing in the lesson is a guess, so one sighting is enough to offer it: the very
        command that failed worked unchanged from another folder; or, in the project where it
        was seen (another project's folders differ), without the `cd` that the error says
        failed."""
        from learn_cli.capture.lesson import cd_failed
        from learn_cli.engine.wording import fix_kind

        rec = self.shapes[0]
        if fix_kind(rec) == "cwd":
            return True
        change = self.change or ("",)
        return change[0] == "no cd" and pid in self.projects and cd_failed(rec.get("error") or "", change[1])

    def recurs(self, command: str, pid: str, step: Callable[[], str] = str) -> bool:
        """The same failure again in the project where it was fixed: the very command that
        failed before, or the same step of it (`git push` rejected, at the end of another
        chain), or, after an error that names what is wrong, one its lesson's change applies
        to (`python b.py` after `python a.py` → `python3 a.py`; set by applies_to) or the same
        work with other options (`uvicorn main:app --reload` after `uvicorn main:app` could not
        import "main"). What worked then is the best guess there is, so
        one sighting is enough (an exact memory of the earlier pair); another project needs
        `min_evidence`."""
        return bool(command) and pid in self.projects and (
            self._failed_as(command) or self._failed_at(step)
            or (bool(self.rewrite) or self.same_work or self._step_first() or self._option_refused())
            and self._specific())

    def _failed_as(self, command: str) -> bool:
        return any(_normalize(rec.get("command") or "", None) == command for rec in self.shapes)

    def _step_first(self) -> bool:
        """A step to run first (`npm install` before anything that failed with `jest: command
        not found`), or a project file to edit first (`"type": "module"` in package.json): after
        an error that names what is wrong (_specific), the environment was missing it, whichever
        command met it next."""
        from learn_cli.engine.wording import fix_kind

        kind = fix_kind(self.shapes[0])
        return kind == "between" or kind == "edit" and self._edits_project_config()

    def _option_refused(self) -> bool:
        """The program here refuses an option (`grep: invalid option -- P` on a Mac): what worked
        instead is the way for any command of it that uses the option, even where it cannot be
        rewritten (a PCRE pattern is not an ERE one): the earlier pair is shown as it was."""
        from learn_cli.text.keys import rejects_option

        return rejects_option(self.shapes[0].get("error") or "")

    def _edits_project_config(self) -> bool:
        from learn_cli.text.projectfiles import is_project_config

        return all(step.startswith("edit ") and is_project_config(step[5:]) for step in self.steps)

    def _specific(self) -> bool:
        """The error names what is wrong (not `Exit code 2`; a missing folder `cd` could not
        enter): the same error on the same work, or meeting a step to run first, is the same
        failure."""
        from learn_cli.text.keys import names_what_is_wrong

        # (a `cd` into a folder that is not there names it: `build`, made by a step run first;
        # so does a program that is not installed, `g++` too, whose name is no word)
        return names_what_is_wrong(self.shapes[0].get("error") or "")

    def _failed_at(self, step: Callable[[], str]) -> bool:
        """Some record failed at `step()` (failing_step_of), the step of a chain its error names
        (asked only here: ~0.5 ms, and most answers never need it)."""
        step = step()
        if not step:
            return False
        for rec in self.shapes:  # stored as that step, or as a chain that failed there
            command = rec.get("command") or ""
            if step in (_normalize(command, None), failing_step_of(command, rec.get("error") or "")):
                return True
        return False

    def teaches_nothing(self) -> bool:
        """learner.teaches_nothing of its first record: a store made by an older learn may hold
        a force push, a `kill -9 48213` (asked of the fixes about to be offered only)."""
        rec = self.shapes[0]
        return teaches_nothing(rec.get("command") or "", sorted(self.steps), rec.get("error") or "")

    def is_the_failed_command(self, command: str) -> bool:
        """Is this fix the very command that just failed (normalised)? Never offered then; but a
        `timeout N` dropped (not installed) is the same command without its plumbing."""
        return bool(command) and self.steps == {command} and not (self.change and self.change[0] == "no timeout")

    def applies_to(self, command: str, cwd: str, step: Callable[[], str] = str, raw: str = "",
                   error: str = "") -> bool:
        """A rewrite of a command fits only the same job (or the same failing step); "run it
        from D" only outside D. `raw` is the command as run, plumbing and all: a `timeout N`
        dropped applies to what `command` (normalised) no longer shows, and quoting keeps it.
        A command the error suggested is read again from this failure's `error` (git's `git
        push --set-upstream origin <this branch>`)."""
        from learn_cli.capture.lesson import same_work
        from learn_cli.engine.wording import fix_kind, shown_fix

        rec = self.shapes[0]
        kind = fix_kind(rec)
        if kind == "cwd":
            return bool(command) and os.path.normpath(shown_fix(_fix_of_record(rec), kind)) != os.path.normpath(
                cwd) and self._same_failed_cd(command)
        if kind == "edit" and self._edits_project_config():
            return bool(command)  # the project's settings, for whichever command meets the error
        if kind == "between" and rec.get("tool") in ev.SHELL_TOOLS:
            from learn_cli.capture.lesson import step_for_error, step_for_script

            # a step naming the script that was refused names this one (`chmod +x deploy.sh`);
            # one naming the container in use names the one in use now (`docker rm -f cache`)
            fix = _fix_of_record(rec)
            step = step_for_script(fix, rec.get("command") or "", command) or (
                step_for_error(fix, rec.get("error") or "", error) if error else fix)
            self.rewrite = step if step != fix else ""
            return step is not None  # (None: it names another subject than this error's)
        if kind in ("retry", "path", "edit") and rec.get("tool") in ev.SHELL_TOOLS:
            if not command:
                return False
            if self.change and self.change[0] == "no cd":  # the lesson is the `cd`: a command that has it
                self.rewrite = apply_change(self.change, command) or ""
                return bool(self.rewrite)
            # the lesson's change applied to this command: also for the same work (`python3
            # s.py --all` after `python3 s.py` worked with a venv active), where it is what
            # makes one sighting enough in the project (recurs)
            if self.change and self.change[0] == "suggested":
                from learn_cli.capture.lesson import suggested_again

                self.rewrite = suggested_again(error, _fix_of_record(rec))
                if self.rewrite:
                    return True  # this error suggests it too, for what failed this time
            changed = raw if self.change and self.change[0] in _AS_RUN else command
            self.rewrite = (apply_change(self.change, changed) or "") if kind == "retry" and self.change and \
                self.change[0] != "suggested" else ""
            if self.rewrite and self._failed_as(command) and _other_window(self.rewrite, _fix_of_record(rec)):
                self.rewrite = ""  # the very command again: what worked, as it worked (its own window)
            if any(same_work(failed, command) for failed in {r.get("command") or "" for r in self.shapes}):
                self.same_work = True
                if self.rewrite and any(_same_chain(r.get("command") or "", command) for r in self.shapes):
                    self.rewrite = ""  # a chain doing the same work, step for step: the chain as it
                    # worked (its change applied to another chain, `cmake --build build -q && ./t.sh`, stays)
                return True  # (each command once: a popular key's records repeat a few of them)
            if self._failed_at(step):
                return True  # the same step failed, at the end of another chain
            return bool(self.rewrite) or kind == "retry" and self._option_refused()
        return True

    def _same_failed_cd(self, command: str) -> bool:
        """Learned where a `cd D` failed ("no such file or directory: D"), "run it from E" fits a
        command whose `cd` is D: `cd api && go test` failing is another folder missing, not the
        `web` that lives in `frontend/web` (the key masks the folder: it is the error's shape)."""
        from learn_cli.capture.lesson import cd_failed, leading_cd

        rec = self.shapes[0]
        folder, _rest = leading_cd(rec.get("command") or "")
        if folder is None or not cd_failed(rec.get("error") or "", folder):
            return True
        return leading_cd(command)[0] == folder

    def analogize(self, command: str) -> None:
        """No rewrite for `command`, which failed as one of its records did on other targets:
        the fix with those targets in their place (lesson.by_analogy), so that it names this
        command's files, not the earlier one's (`pip install -r dev.txt` after the lesson of
        `… -r requirements.txt`). Said only of a fix about to be offered."""
        if self.rewrite or not command:
            return
        from learn_cli.capture.lesson import by_analogy
        from learn_cli.engine.wording import fix_kind

        for rec in self.shapes:
            if fix_kind(rec) in ("retry", "between") and rec.get("tool") in ev.SHELL_TOOLS:
                self.rewrite = by_analogy(rec.get("command") or "", command, _fix_of_record(rec)) or ""
                if self.rewrite:
                    return

    def runs_here(self, root: str | None, cwd: str, pid: str) -> bool:
        """Are the paths the fix needs here? The folder "run it from D" moves to, the program it
        runs by its path (`.venv/bin/pip`, `./gradlew`), the file it names in place of a missing
        one (`backend/requirements.txt`), the file a tool is pointed to instead, the
        package.json script it runs. Learned in another project, they may not be: then it
        cannot work here. (In the project that learned it they were, and are taken to be still.)"""
        from learn_cli.capture.lesson import program_path, script_run
        from learn_cli.engine.wording import fix_kind, shown_fix
        from learn_cli.text.projectfiles import has_script

        if not root or pid in self.projects:
            return True
        rec = self.shapes[0]
        kind, fix = fix_kind(rec), _fix_of_record(rec)
        if kind == "cwd":
            return os.path.isdir(os.path.join(root, shown_fix(fix, kind)))
        if kind == "path":
            return os.path.exists(os.path.join(root, fix))  # (an absolute path joins as itself)
        if rec.get("tool") not in ev.SHELL_TOOLS or kind not in ("retry", "between"):
            return True
        here = os.path.join(root, cwd)
        needed = [program_path(self.rewrite or fix)]
        if self.change and self.change[0] == "target" and "/" in self.change[3] and not _scoped_package(
                self.change[3], self.rewrite or fix):
            needed.append(self.change[3])
        script = script_run(self.rewrite or fix)  # `npm run start` for a missing `dev`: if this project has it
        return all(os.path.exists(os.path.join(here, os.path.expanduser(path))) for path in needed if path) and (
            not script or has_script(here, root, script))

    def rank(self, command: str, pid: str) -> tuple:
        """This project's own fix first (its folders, tools and versions are the ones in use),
        then one that helped, then the one for the very command that failed, then evidence."""
        exact = bool(command) and self._failed_as(command)
        return (pid in self.projects, self.helped > 0, exact, self.helped, len(self.sightings), len(self.projects))


def _scoped_package(target: str, command: str) -> bool:
    """`@mendable/firecrawl-js` in an install: an npm package of a scope, no file the fix needs
    here (`pip install -r backend/requirements.txt` names one)."""
    from learn_cli.engine.goals import INSTALL, goal
    from learn_cli.text.shell import unwrap

    return target.startswith("@") and target.count("/") == 1 and goal(unwrap(command)) == INSTALL


def _same_chain(stored: str, command: str) -> bool:
    """Are both chains of several steps, each step of one doing the work of the other's, in
    order (`cmake -S . -B build -q && cmake --build build -j8` and `… && cmake --build build
    -q`)? Then the stored fix is that chain as it worked, and is offered as it was."""
    from learn_cli.capture.lesson import same_work, working_steps

    ours, theirs = working_steps(stored), working_steps(command)
    return len(ours) > 1 and len(ours) == len(theirs) and all(
        same_work(" ".join(a), " ".join(b)) for a, b in zip(ours, theirs, strict=True))


# Changes applied to the command as it was run, plumbing and all: they are about the words
# plumbing leaves alone (a `timeout N` prefix, a glob's quoting).
_AS_RUN = ("no timeout", "quote", "semicolons")


def fixes_for_key(cap: Capture, key: str) -> list[Fix]:
    """Every fix stated for `key` by a live learning, wherever it lives (one indexed query of
    each row's fix columns: a popular failure's key has a row in every project that met it,
    and its records are neither decoded nor parsed one by one, only its few shapes)."""
    store = cap.store
    _fresh(store, cap.learnings_path, store.layout.global_errors)
    index = store.index
    rows = index.fix_rows(key, ("pending", *SHOWN_STATUSES), ("project", "global"), limit=200)
    fixes: dict[object, Fix] = {}
    shapes: dict[object, tuple] = {}  # shape text -> (shape, the fix it states or None)
    steps_of: dict[str, frozenset] = {}  # each fix parsed once: a popular key's records repeat a few
    derived = []  # the fix columns of rows written before they existed (index v11)
    for rel, rowid, rid, status, shape_text, state_text, data in rows:
        if state_text is None:  # read whole, as every row was before
            rec = jsonlite.loads(data)
            shape, state = fix_facts(rec)
            shape_text, state_text = fix_columns(rec)
            if state_text is not None:
                derived.append((shape_text, state_text, rowid, data))
            known = shapes.get(shape_text) if shape_text is not None else None
            if known is None:
                known = (shape, _fix_target(shape, steps_of))
                shapes[shape_text if shape_text is not None else ("row", rowid)] = known
        else:
            state = jsonlite.loads(state_text)
            known = shapes.get(shape_text)
            if known is None:
                shape = jsonlite.loads(shape_text)
                known = shapes[shape_text] = (shape, _fix_target(shape, steps_of))
        shape, target = known
        if target is not None:
            fixes.setdefault(target[0], Fix(target[1], target[2])).add(rel, rowid, rid, status, shape, state)
    index.store_fix_columns(derived)
    return list(fixes.values())


def _fix_target(shape: dict, steps_of: dict) -> tuple | None:
    """(what groups its records into one Fix, its steps, its change) of a record's shape, or
    None when it states no fix of an error."""
    fix = _fix_of_record(shape)
    if fix not in steps_of:
        steps_of[fix] = frozenset(_normalize(step, None) for step in _steps(fix))
    steps = steps_of[fix]
    if shape.get("type", "error") == "error" and steps:
        change = change_of(shape)
        return change or steps, steps, change
    return None


def change_of(rec: dict) -> tuple | None:
    """The change a retry lesson makes, when it travels to other commands that fail the same
    way; records with one such change are one fix (their sightings add up):
    - ("options", head, added, dropped, anchor): options added or dropped (`--no-rebase` added
      to `git pull origin main`, then to `… dev`), the added ones after `anchor` when the fix
      put them right after its program or subcommand (`deno run --allow-net x.ts`);
    - ("no cd", D): a `cd D` that failed dropped, whatever the command after it;
    - ("program", old, new): the same arguments run by another program (`python` → `python3`,
      `pytest` → `python -m pytest`);
    - ("prefix", words): the same command run as root or with variables set (`sudo`,
      `PYTHONPATH=.`), whatever its program;
    - ("setup", step, program): a setup step run first (`source .venv/bin/activate`) for any
      use of the program;
    - ("no timeout",): a `timeout N` prefix dropped after `command not found: timeout` (a Mac
      without coreutils), whatever the command behind it;
    - ("not piped", program): the output no longer piped into a shaper the error says is not
      installed (`curl -s URL | jq .` → `curl -s URL`, "jq: command not found"), whatever the
      command in front of it (sandahltim/RFID3: three times in one project);
    - ("quote",): the bare glob words quoted after zsh's `no matches found` (`pip install
      "fastapi[all]"`), whatever the command;
    - ("semicolons",): steps joined by `;`, not `&&` (Windows PowerShell 5 has no `&&`),
      whatever the chain;
    - ("interpreter", name, extension): a script run by its path, not executable, run by an
      interpreter (`./deploy.sh` → `bash deploy.sh`), for any script of that extension;
    - ("target", program, old, new, before): the argument the error named as missing replaced,
      in the program's next command that names it (`main:app` → `app.main:app`), where it
      follows `before` when it is named twice (`-U app -d app`: the role, not the database);
    - ("suggested", program, subcommand): the command the error suggested, with options
      (`git push --set-upstream origin feat/x`): read again from the next error, which names
      its own branch;
    - ("then", steps, change): steps run first, then one of these changes (`uv venv --python
      3.11 && uv pip install -e .` after `pip install -e .`)."""
    if rec.get("fix_kind") != "retry":
        return None
    return _change_of_lesson(rec.get("command") or "", _fix_of_record(rec), rec.get("error") or "")


@lite.lru_cache(maxsize=256)
def _change_of_lesson(failed: str, fix: str, error: str) -> tuple | None:
    """change_of for one (failed command, fix, error), worked out once per process (a popular
    key's records repeat a few): what the error suggested first, then what the pair says, then
    the argument the error named as missing. None when the change, applied to the command that
    failed, does not give the fix back (_gives_back)."""
    from learn_cli.capture.lesson import replaced_target, suggested_by

    if suggested_by(error, fix):
        return ("suggested", *fix.split()[:2])
    missing = _dropped_the_missing(failed, fix, error)
    if missing:  # `head -5 f | jq .` (jq not installed) -> `head -3 f`: "drop `| jq`", not "-5 -> -3" (round 17)
        return ("not piped", missing)
    change = _change_of_pair(failed, fix)
    if change is None:
        target = replaced_target(failed, fix, error)
        change = ("target", *target) if target else None
    if change is not None and change[0] not in ("suggested", "no timeout") and not _gives_back(change, failed, fix):
        return None
    return change


def _dropped_the_missing(failed: str, fix: str, error: str) -> str:
    """The program the error says is not installed, which the failed line piped its output into
    and the fix no longer runs (`| jq '.'`: the comparisons leave such shapers out), else "".
    That was the change, whatever else moved. (`timeout` has a change of its own, "no timeout".)"""
    from learn_cli.text.keys import dropped_missing_program
    from learn_cli.text.shell import OUTPUT_SHAPERS, drop_piped, pipes

    missing = dropped_missing_program(failed, fix, error)
    if missing not in OUTPUT_SHAPERS or not drop_piped(failed, missing):
        return ""
    return missing if pipes(fix) < pipes(failed) else ""  # (not `| python3 -m json.tool` in its place)


def _gives_back(change: tuple, failed: str, fix: str) -> bool:
    """Does the change, applied to the very command that failed, give the fix back (the same
    words, its arguments in the same order; options may move)? What the pair says must be what
    it did: read as "add `-b origin/x`", `git checkout x` → `git checkout -b x origin/x` was
    rewritten `git checkout -b origin/x x`, a branch of another name, the next time the same
    checkout failed; `cd test && ./run.sh` (no folder `test`), then `./test/run.sh`, read as
    the script's path changed, kept the `cd` that failed."""
    made = apply_change(change, failed)
    if made is None:
        return False
    got, wanted = _step_words(made), _step_words(fix)
    return sorted(got) == sorted(wanted) and [w for w in got if w[:1] != "-"] == [w for w in wanted if w[:1] != "-"]


def _other_window(command: str, fix: str) -> bool:
    """Is `command` the fix but for the lines a look shows (`sed -n '1,240p' d/f`, `… '1,220p' d/f`)?"""
    from learn_cli.text.shell import tokenize, windows_alike

    ours, theirs = tokenize(command), tokenize(fix)
    return len(ours) == len(theirs) and ours != theirs and all(
        a == b or windows_alike(a, b) for a, b in zip(ours, theirs, strict=True))


def _step_words(command: str) -> list[str]:
    """A command's steps' words, without plumbing and looks at the output (`| tr -d '\n'`);
    `./x.sh` and `x.sh` are one path; the lines a look shows are not what it looks at (`sed -n
    '1,240p' f`, then `… '1,220p' d/f`)."""
    from learn_cli.capture.lesson import working_steps
    from learn_cli.text.shell import print_window

    return ["p" if print_window(word) else word.removeprefix("./")
            for step in working_steps(command) for word in (*step, "&&")]


@lite.lru_cache(maxsize=256)
def failing_step_of(command: str, error: str) -> str:
    """The step of a chain that its error names (text.keys.failing_step), normalised, or ""
    when the error names none; once per (command, error) in a process: a popular key's records
    repeat a few of them."""
    from learn_cli.text.keys import failing_step

    step = failing_step(command, error)
    return _normalize(step, None) if step != command else ""


@lite.lru_cache(maxsize=256)
def _change_of_pair(failed: str, fix: str) -> tuple | None:
    """change_of for one (failed command, fix), parsed once per process: a popular failure's
    key holds a record in every project that met it (145 at 300,000 learnings) stating the
    same few pairs, and parsing each record's commands made the lookup grow with the home."""
    from learn_cli.capture.lesson import (
        added_setup,
        changed_segments,
        dropped_cd,
        dropped_timeout,
        option_change,
        program_change,
        quoted_words,
        run_prefix,
        script_interpreter,
    )
    from learn_cli.text.shell import semicolons_for_ands

    if dropped_timeout(failed, fix):
        return ("no timeout",)
    if quoted_words(failed, fix):
        return ("quote",)
    if semicolons_for_ands(failed, fix):
        return ("semicolons",)
    interpreter = script_interpreter(failed, fix)
    if interpreter:
        return ("interpreter", *interpreter)
    options = option_change(failed, fix)
    if options is not None:
        head = tuple(changed_segments(failed, fix)[0][0][:2])  # (the segment changed: `xargs -r`)
        return ("options", head, tuple(options[0]), tuple(options[1]), _anchor(fix, options[0], head))
    folder = dropped_cd(failed, fix)
    if folder:
        return ("no cd", folder)
    program = program_change(failed, fix)
    if program:
        prefix = run_prefix(*program)
        return ("prefix", prefix) if prefix else ("program", *program)
    setup = added_setup(failed, fix)
    return ("setup", *setup) if setup else _change_after_steps(failed, fix)


def _change_after_steps(failed: str, fix: str) -> tuple | None:
    """("then", steps, change) when `fix` runs steps first, then `failed` with a change of its
    own (`uv venv --python 3.11 && uv pip install -e .` after `pip install -e .` needed a newer
    Python): both travel to the next command that fails so (`pip install -e '.[dev]'`)."""
    from learn_cli.text.shell import split_segments_ops

    parts = split_segments_ops(fix)
    if len(parts) < 2 or any(op != "&&" for _text, op in parts[:-1]):
        return None
    change = _change_of_pair(failed, parts[-1][0])
    return ("then", tuple(text for text, _op in parts[:-1]), change) if change else None


def _anchor(fix: str, added: list[str], head: tuple) -> str:
    """The program or subcommand word the fix put its added options after, among the options
    that follow it (`deno run --allow-net main.ts`: `run`; `docker run --rm -it img`: `run`),
    so they go there in the next command too, before its script's or image's own arguments;
    "" when they came after an argument (then they go at the end)."""
    from learn_cli.text.shell import tokenize

    if not added:
        return ""
    words = tokenize(fix)
    at = words.index(added[0]) if added[0] in words else 0
    i = at - 1
    while i > 0 and words[i] not in head and words[i].startswith("-"):
        i -= 1  # past the options the fix kept before them (`--rm`), to their program or subcommand
    return words[i] if at > 0 and words[i] in head else ""


def apply_change(change: tuple, command: str) -> str | None:
    """A change of change_of applied to `command`, or None when it does not fit."""
    from learn_cli.capture.lesson import (
        apply_added_setup,
        apply_dropped_cd,
        apply_option_change,
        apply_program_change,
        apply_run_prefix,
    )

    if change[0] == "options":
        return apply_option_change(command, list(change[2]), list(change[3]), change[4], change[1])
    if change[0] == "no cd":
        return apply_dropped_cd(command, change[1])
    if change[0] == "setup":
        return apply_added_setup(command, change[1], change[2])
    if change[0] == "prefix":
        return apply_run_prefix(command, change[1])
    if change[0] == "no timeout":
        from learn_cli.text.shell import drop_timeout

        return drop_timeout(command)
    if change[0] == "not piped":
        from learn_cli.text.shell import drop_piped

        return drop_piped(command, change[1])
    if change[0] == "quote":
        from learn_cli.text.shell import quote_words

        return quote_words(command)
    if change[0] == "semicolons":
        from learn_cli.text.shell import semicolon_separated

        return semicolon_separated(command)
    if change[0] == "target":
        from learn_cli.capture.lesson import apply_replaced_target

        return apply_replaced_target(command, *change[1:])
    if change[0] == "interpreter":
        from learn_cli.capture.lesson import apply_script_interpreter

        return apply_script_interpreter(command, change[1], change[2])
    if change[0] == "then":
        changed = apply_change(change[2], command)
        return " && ".join([*change[1], changed]) if changed else None
    return apply_program_change(command, change[1], change[2])


def known_fix(cap: Capture, entry: dict, skip: set) -> tuple[str, dict, list] | None:
    """The best proven fix for this failure's key, and a close second if there is one.

    A fix is offered once it is trusted (active or global somewhere) or its sightings, counted
    across sessions and projects, reach `min_evidence` (one is enough for "run it from that
    folder" and "drop the `cd` that failed", which guess nothing, and when the same command or
    step fails the same way again in the project where it was fixed, or meets an error there
    that a step run first fixed); never when it failed after being
    offered and has not worked since, nor when it is the very command that just failed.
    Returns (file, representative record, [fixes offered]) or None.
    """
    key = entry.get("key")
    if not key:
        return None
    command = failed_as_stored(entry, cap.project.root)
    need = cap.int_setting("min_evidence")
    offered = []
    fixes = fixes_for_key(cap, key)
    def step() -> str:  # the step of a chain the error names (~0.5 ms): only when a fix asks
        return failing_step_of(entry.get("cmd") or "", entry.get("err") or "")

    # Best first (a stable sort, as the fixes offered were sorted before): only the first two
    # offered are named, so the others are not asked whether they apply (each question parses
    # their commands; a popular failure's key has a fix or two of its own in many projects).
    for fix in sorted(fixes, key=lambda f: f.rank(command, cap.project.id), reverse=True):
        if len(offered) == 2:
            break
        if not fix.trusted and not fix.sightings:
            continue  # offered only when trusted or seen (min_evidence is at least 1)
        if fix.failed_since_worked or fix.offered_before(skip):
            continue  # it was offered here and the failure came back: not again until it works
        if fix.teaches_nothing():
            continue  # stored before the rule that would not have learned it (a force push)
        if fix.is_the_failed_command(command) or not fix.applies_to(command, entry.get("cwd") or ".", step,
                                                                     entry.get("cmd") or "", entry.get("err") or ""):
            continue
        if not fix.runs_here(cap.project.root, entry.get("cwd") or ".", cap.project.id):
            continue  # a folder, program or file it names is not in this project
        one_is_enough = fix.unambiguous(cap.project.id) or fix.recurs(command, cap.project.id, step)
        if fix.trusted or len(fix.sightings) >= (1 if one_is_enough else need):
            fix.analogize(command)
            offered.append(fix)
    if not offered:
        return None
    best = offered[0]
    close = [f for f in offered[1:2] if len(f.sightings) * 2 >= len(best.sightings) and f.helped + 1 >= best.helped]
    named = [f.representative(cap.store.index, cap.project.id) for f in [best] + close]
    if None in named:
        return None  # removed since the rows were read (a concurrent promote or prune)
    rel, rec = named[0]
    return rel, rec, [best] + close


# A fix is shown whole up to this many characters: a command cut short cannot be run (the
# commands agents write run long: `cd /abs/dir && … --message "…"`); longer ones end in "…",
# after a whole word (half a path names a file that is not there).
FIX_WIDTH = 300


def describe_fix(cap: Capture, rec: dict, fixes: list | None = None, current: str = "", raw: str = "") -> str:
    """A few short lines: the fix, how often and where it was seen, the error it fixed, and a
    close second fix when there is one. Worded by kind (engine.wording), like every other
    place that shows a learning. `raw` is the command as the agent ran it, unredacted: a
    secret the fix shares with it is shown as the agent's own (text.redact.unmask)."""
    from learn_cli.engine import wording
    from learn_cli.engine.fixwords import essential_change
    from learn_cli.text.failure import meaningful_line
    from learn_cli.text.redact import unmask
    from learn_cli.text.sanitize import cut, sanitize

    def shown(text: str, width: int) -> str:  # as the agent would type it: its own secrets back in
        text = sanitize(unmask(text, raw))  # backticks kept (wording.code_span); too long, it ends on a whole word:
        return text if len(text) <= width else cut(text, width, reach=width // 2)  # no half a path)

    fix = shown(_fix_of_record(rec), FIX_WIDTH)
    failed = shown(rec.get("command") or "", 100)
    kind = wording.fix_kind(rec)
    best = fixes[0] if fixes else None
    run = ""
    if kind == "cwd":  # the lesson applied to the command that just failed, from the right folder
        from learn_cli.capture.lesson import leading_cd
        from learn_cli.text.shell import shell_word

        folder = os.path.normpath(os.path.join(cap.project.root or ".", wording.shown_fix(fix, kind)))
        fix, failed = shell_word(folder), shown(current or "", 600)
        run = leading_cd(failed)[1]  # (its own `cd` first would undo the fix's: `cd /w && node x`)
    elif best is not None and best.rewrite:  # its option change, applied to this command
        fix, failed = shown(best.rewrite, 600), shown(current or "", 600)
    elif kind == "between" and current:  # run the step first, then retry what just failed
        from learn_cli.text.keys import failing_step

        failed = shown(failing_step(current, rec.get("error") or ""), 100)
    head = f"learn: known fix ({_seen(cap, rec, best)}): "
    if kind in ("retry", "between") and failed:  # the failed command gives way, whole words in
        room = max(LINE_WIDTH - len(head) - len(wording.hook_body(kind, fix, "x")), 24)  # their
        failed = failed if len(failed) <= room else cut(failed, room)  # quotes, before the fix would
    body = wording.hook_body(kind, fix, failed, run) if kind != "advice" else fix
    lines = [f"{head}{body}."]
    said = (current, best.rewrite) if best is not None and best.rewrite and current else (
        rec.get("command") or "", _fix_of_record(rec))  # the change as made to this command
    rule_words = kind == "cwd" or kind == "retry" and wording.cd_dropped_of(rec)
    change = wording.action(rec) if rule_words else essential_change(*said, kind) if kind == "retry" else ""
    if change:  # (a `cwd` fix, a `cd` dropped, in the words the digest and recall use: "run it
        # from `web`", "drop `cd web` when the shell is in it")
        lines.append(f"learn: the change: {sanitize(change, 160)}.")
    if kind in ("retry", "between") and not (best is not None and best.rewrite):
        lines.extend(_script_lines(rec, raw))
    for other in (fixes or [])[1:]:
        orec = other.representative(cap.store.index, cap.project.id)[1]
        ofix = shown(other.rewrite or _fix_of_record(orec), FIX_WIDTH)
        lines.append(f"learn: another fix that worked ({_seen(cap, orec, other)}): {wording.code_span(ofix)}.")
    error = sanitize(meaningful_line(rec.get("error") or ""), 160)
    if error:
        category = rec.get("category") if isinstance(rec.get("category"), str) else ""
        lines.append(
            f"learn: it fixed this error before: {error}" + (f" ({sanitize(category, 20)})" if category else "")
        )
    # the first line is never cut: a cut fix, or a command cut without its closing quote, would
    # mislead (the failed command was shortened above, within its quotes); nor is a line of the
    # script (_script_lines cut it where it could)
    return "\n".join([lines[0], *(line if line.startswith(("learn: another fix", SCRIPT_MARK)) else line[:LINE_WIDTH]
                                   for line in lines[1:])])


# A fix whose steps hold lines of their own (inline code, a heredoc) is shown line by line below
# its one-line form, which joins them and cannot be run; each line after this mark, its
# indentation kept (Python's is syntax), at most SCRIPT_LINES of them.
SCRIPT_MARK = "learn: | "
SCRIPT_LINES = 12


def _script_lines(rec: dict, raw: str) -> list[str]:
    """The lines of the fix as it was run (the record's `fix_script`), each made inert as every
    line of the answer is (text.sanitize), or [] when it has none."""
    from learn_cli.text.redact import unmask
    from learn_cli.text.sanitize import sanitize

    script = rec.get("fix_script")
    if not isinstance(script, str) or "\n" not in script:
        return []
    rows = unmask(script, raw).split("\n")
    shown = ["learn: the fix as it was run, line by line:"]
    for row in rows[:SCRIPT_LINES]:
        text = row.rstrip().expandtabs(4)
        indent = len(text) - len(text.lstrip(" "))
        shown.append(SCRIPT_MARK + " " * indent + sanitize(text, LINE_WIDTH))
    if len(rows) > SCRIPT_LINES:
        more = len(rows) - SCRIPT_LINES
        shown.append(f"{SCRIPT_MARK}… ({more} more lines: `learn show {sanitize(rec.get('id'), 40)}`)")
    return shown


def _seen(cap: Capture, rec: dict, fix) -> str:
    """"seen 3× in 2 projects: a, b, helped 1×", from the fix's gathered evidence when known."""
    if fix is not None:
        count, helped = max(1, len(fix.sightings)), fix.helped
        rec = dict(rec, projects=sorted(fix.projects) or rec.get("projects"))
    else:
        count, helped = max(1, _int(rec.get("frequency"))), _int(rec.get("helped"))
    seen = f"seen {'once' if count == 1 else f'{count}×'} {_where(cap, rec)}"
    return seen + (f", helped {helped}×" if helped else "")


def _where(cap: Capture, rec: dict) -> str:
    pids = [p for p in (rec.get("projects") or []) if isinstance(p, str)]
    if not pids or pids == [cap.project.id]:
        return "in this project"
    names = _project_names(cap.store, [p for p in pids if p != cap.project.id][:3])
    if len(pids) == 1:
        return f"in {names[0]}" if names else "in another project"
    listed = ", ".join(names + (["this one"] if cap.project.id in pids else []))
    return f"in {len(pids)} projects" + (f": {listed}" if listed and len(pids) <= 4 else "")


def _project_names(store, pids: list[str]) -> list[str]:
    if not pids:
        return []
    from learn_cli.text.sanitize import sanitize

    found = store.index.names_of(pids)
    return [sanitize(found.get(p) or p, 40) for p in pids]
