"""The commands of `learn`: one module each, and the one list of them.

`COMMANDS` is the order everything shows them in: `learn --help` (cli.py registers them from
it), the README's table (tools/build_readme.py) and the man page (tools/gen_man.py). A row
names the command, its module here (which defines `app`, a typer app of sub-commands, or
`command`) and its one-line help. A row whose module does not exist or defines neither stops
`learn` at start-up (cli.register), so a typo cannot drop a command silently.

To add a command: its module, a row here, docs/cmd-NAME.md, tests (docs/ARCHITECTURE.md).
Stdlib only, nothing imported: `learn recall`'s fast path imports this package.
"""

from __future__ import annotations

# (command name, module under learn_cli.commands, help line)
COMMANDS = (
    ("add", "add", "Store a learning without questions."),
    ("recall", "recall", "Search project, global and other projects' learnings."),
    ("stats", "stats", "Learning analytics and capture health."),
    ("promote", "promote", "Re-score, promote to global, list candidates, archive, find conflicts."),
    ("resolve", "resolve", "Resolve a conflict without a terminal."),
    ("export", "export", "Write every learning to a portable JSON file."),
    ("import", "import_", "Merge learnings from an export file."),
    ("prune", "prune", "Archive stale, merge duplicates, re-score, compress, clean sessions."),
    ("graph", "graph", "Category tree, cross-project connections, hub nodes."),
    ("show", "show", "Show one learning."),
    ("forget", "forget", "Archive one learning (or delete it with --hard)."),
    ("restore", "restore", "Bring an archived learning back."),
    ("context", "context", "The session-start digest (what the agent sees)."),
    ("doctor", "doctor", "Check and repair the store, hooks and capture health."),
    ("capture", "capture", "Hook entry point: read one agent payload on stdin."),
    ("hooks", "hooks", "Install, remove or show the agent hooks."),
    ("ingest", "ingest", "Learn from past Claude Code transcripts."),
    ("flush", "flush", "Write this project's rules into CLAUDE.md / AGENTS.md / GEMINI.md."),
    ("auto", "auto", "Automatic capture here: on, off, or the default; without a value, which applies."),
    ("completion", "completion", "Print the shell completion script (bash, zsh, fish)."),
    ("help", "help_", "The full page of a command, or the man page."),
)

# Modules of this package that are not commands (helpers of the commands above).
HELPERS = ("_common", "interactive", "read_fast", "recall_fast")
