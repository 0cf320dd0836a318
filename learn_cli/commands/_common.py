"""What every command shares: global state, the store, the project, errors, output mode.

Exit codes (documented in the README and the man page): 0 ok, 1 user error (one line on
stderr), 2 usage error, 130 interrupted.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms of every start)

if TYPE_CHECKING:
    import typer  # imported where needed: the fast path of `learn recall` runs without it

EXIT_OK = 0
EXIT_USER = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class State:  # not a dataclass: `dataclasses` costs ~5 ms of import, and recall's fast path builds one
    """The global options, and the store and project once opened."""

    def __init__(self, home: str | None = None, project_path: str | None = None, plain: bool = False):
        self.home = home
        self.project_path = project_path
        self.plain = plain  # the store's paths as strings: the fast paths never import pathlib
        self._store = None
        self._project = None

    def close(self) -> None:
        """Close the store's index connection, when the command opened one."""
        if self._store is not None:
            self._store.close()


class UserError(Exception):
    def __init__(self, message: str, code: int = EXIT_USER):
        super().__init__(message)
        self.code = code


def fail(message: str, code: int = EXIT_USER):
    """Stop the command with one clear line on stderr."""
    raise UserError(message, code)


def state(ctx: typer.Context) -> State:
    obj = ctx.find_root().obj
    return obj if isinstance(obj, State) else State()


def open_store(st: State, create: bool = True):
    """The store, created on first use (announced once on stderr). Commands that only read
    pass `create=False`: no store there is one line and exit 1, never a new empty store."""
    if st._store is None:
        from learn_cli.store.api import Store

        if not create:
            require_store(st)
        store = Store(st.home, plain=st.plain)
        if store.first_run:
            sys.stderr.write(f"learn: created a new store at {store.home}\n")
        st._store = store
    return st._store


def current_project(st: State, register: bool = True):
    """The project of `--project` (default: the current directory), registered in the store."""
    if st._project is None:
        from learn_cli.store.project import identify

        path = st.project_path or os.getcwd()
        if st.project_path and not os.path.isdir(os.path.expanduser(path)):
            fail(f"--project {path}: no such folder")
        st._project = _fit_to_store(identify(path))
    if register:
        from learn_cli.text.redact import redact_project

        open_store(st).register_project(redact_project(st._project))
    return st._project


def require_store(st: State) -> None:
    from learn_cli.store.paths import Layout, home_dir

    layout = Layout(home_dir(st.home), plain=True)  # strings: no pathlib for a check
    if os.path.isfile(layout.config) or os.path.isdir(layout.projects_dir):
        return
    if st.home or os.environ.get("SELF_LEARNING_HOME"):
        where = "--home" if st.home else "SELF_LEARNING_HOME"
        fail(f"no store at {layout.home} (check {where}; nothing was created)")
    fail(f"no store yet at {layout.home}: nothing learned so far "
         "(`learn hooks install` connects Claude Code; `learn add TEXT` stores a learning)")


def read_project(st: State, anywhere: bool = False):
    """The project a read command answers for, never registered. A folder outside any git
    repository that the store has never seen is not a project: one line, exit 1; or, for a
    command that answers for the whole store too (`anywhere`: recall, stats), None when the
    folder is the working one (`learn recall docker` from ~), an error still when it was
    named by --project."""
    from learn_cli.store.project import in_repository

    project = current_project(st, register=False)
    if not in_repository(project) and not os.path.exists(open_store(st, create=False).layout.project_json(project.id)):
        if anywhere and not st.project_path:
            return None
        fail(f"{project.root} is not a project: no git repository and nothing learned there "
             "(run this inside a project, or pass --project DIR)")
    return project


def _fit_to_store(project):
    """Name and remote redacted (they are written into learnings); the root stays real, for
    the files a command reads or writes there (`learn flush`), and is redacted when stored."""
    from learn_cli.text.redact import redact_project

    safe = redact_project(project)
    return safe._replace(root=project.root)


def is_terminal() -> bool:
    return sys.stdout.isatty()


def json_out(obj) -> None:
    """Stable JSON for scripts: sorted keys, UTF-8, one document; by orjson when the command
    has imported it for its work (a large document), by the standard library otherwise: the
    import of orjson costs more than encoding a report (store/jsonl.bulk_loads)."""
    fast = sys.modules.get("orjson")
    if fast is not None:
        text = fast.dumps(obj, option=fast.OPT_INDENT_2 | fast.OPT_SORT_KEYS).decode()
    else:
        import json

        text = json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False)
    sys.stdout.write(text + "\n")


def run_guarded(call) -> int:
    """Run the click/typer app; turn every user-facing error into one line and an exit code."""
    return guarded(call, _typer_exit)


def _typer_exit(exc: Exception) -> int | None:
    """The exit code of typer's own exceptions (after their message), None for any other."""
    import typer
    from typer.exceptions import TyperException

    if isinstance(exc, typer.Exit):
        return exc.exit_code
    if isinstance(exc, TyperException):  # usage errors (typer vendors click): usage line + message
        _tidy_usage_error(exc)
        show = getattr(exc, "show", None)
        show() if show else _error_line(exc.format_message())
        return getattr(exc, "exit_code", EXIT_USAGE)
    if isinstance(exc, typer.Abort):
        _error_line("aborted")
        return EXIT_INTERRUPTED
    return None


def _tidy_usage_error(exc) -> None:
    """Say it in the user's terms: no "Value error, " from the parser's validation, and no
    "Possible options: --version" for an option that merely shares letters with another."""
    import difflib

    if isinstance(getattr(exc, "message", None), str):
        exc.message = exc.message.replace("Value error, ", "")
    wrong, offered = getattr(exc, "option_name", None), getattr(exc, "possibilities", None)
    if wrong and offered:
        exc.possibilities = [p for p in offered if difflib.SequenceMatcher(None, wrong, p).ratio() >= 0.75]


def guarded(call, other_exit=lambda exc: None) -> int:
    """Run a command; turn every user-facing error into one line and an exit code. Without
    typer: the fast path of `learn recall` runs here too. `other_exit(exc)` gives the code of
    exceptions only the caller knows (None: a bug of ours)."""
    from learn_cli.store.api import StoreError
    from learn_cli.store.paths import HomeError

    try:
        result = call()
        return result if isinstance(result, int) else EXIT_OK
    except UserError as exc:
        _error_line(str(exc))
        return exc.code
    except (StoreError, HomeError) as exc:
        _error_line(str(exc))
        return EXIT_USER
    except KeyboardInterrupt:
        _error_line("interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        quiet_broken_pipe()
        return EXIT_OK
    except PermissionError as exc:
        _error_line(f"permission denied: {exc.filename or exc}")
        return EXIT_USER
    except OSError as exc:
        _error_line(f"{exc.strerror or exc}{': ' + str(exc.filename) if exc.filename else ''}")
        return EXIT_USER
    except Exception as exc:  # a bug of ours: one line for the user, the traceback to a file
        code = other_exit(exc)
        if code is not None:
            return code
        if os.environ.get("LEARN_DEBUG"):
            raise
        where = _save_traceback()
        _error_line(f"internal error: {type(exc).__name__}: {exc} (details in {where})")
        return EXIT_USER


def _save_traceback() -> str:
    import tempfile
    import traceback

    path = os.path.join(tempfile.gettempdir(), f"learn-crash-{os.getpid()}.txt")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(traceback.format_exc())
    except OSError:
        return "nowhere: could not write the report"
    return path


def _error_line(message: str) -> None:
    sys.stderr.write(f"learn: error: {' '.join(message.split())}\n")


def quiet_broken_pipe() -> None:
    # stdout was closed early (`learn recall x | head -1`): silence the interpreter's flush error.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass
