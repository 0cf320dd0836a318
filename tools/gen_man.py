"""Generate man/learn.1 from the CLI itself, so the man page never drifts from `--help`;
commands in the order of learn_cli.commands.COMMANDS (the README's).

Run: python tools/gen_man.py > man/learn.1   (make man)
     python tools/gen_man.py --help-text > man/help.txt   (make man: what `learn --help`
     prints off a terminal, served without typer; tests/test_cli_help.py checks it is current)
"""

from __future__ import annotations

import datetime
import sys

from learn_cli import __version__
from learn_cli.cli import app
from learn_cli.commands import COMMANDS
from learn_cli.help import build

INTRO = r"""
.SH DESCRIPTION
.B learn
watches a coding agent's tool calls through hooks, notices a command that failed and the retry
that fixed it, remembers that per project and globally, offers the known fix the next time the
same failure shows up (in any project), and loads a small, budgeted digest of what matters at
the start of each session. Everything stays on this machine; nothing is ever sent anywhere.
.PP
Commands that read take
.B \-\-json
for scripts. Colour and boxes appear only on a terminal; piped output is plain, stable text;
.B NO_COLOR
turns colour off.
"""

OUTRO = r"""
.SH EXIT STATUS
.TP
.B 0
Success (also: every hook call of \fBlearn capture\fR, whatever happens).
.TP
.B 1
A user error (bad file, unknown id, unreadable store); one line on standard error.
.TP
.B 2
A usage error (unknown option, bad option value, interactive command without a terminal).
.TP
.B 130
Interrupted.
.SH ENVIRONMENT
.TP
.B SELF_LEARNING_HOME
The store folder (default \fI~/.openclaw/self\-learning\fR); \fB\-\-home\fR overrides it.
.TP
.B NO_COLOR
Disable colour.
.TP
.B LEARN_DEBUG
Show Python tracebacks of internal errors instead of a one\-line report.
.SH FILES
.TP
.I <home>/config.json
Global settings: auto\-capture default, context budget, evidence and promotion thresholds.
.TP
.I <home>/global/errors.jsonl, patterns.jsonl, preferences.json
Global learnings (promoted copies).
.TP
.I <home>/global/index.db
Derived SQLite index (rebuilt automatically from the JSONL files).
.TP
.I <home>/projects/<id>/learnings.jsonl, archive.jsonl, overrides.json, project.json
One project's learnings, archive and settings.
.TP
.I <home>/sessions/<session>.jsonl
Recent redacted tool events of one agent session (bounded).
.TP
.I <home>/analytics/stats.json
Capture counters.
.SH EXAMPLES
.nf
learn add "Always set --platform linux/amd64 on Apple Silicon" --fix "docker build --platform linux/amd64 ." --category config
learn recall docker
learn stats
learn hooks install
learn prune --quiet        # from cron
learn export \-o team.json && learn import team.json
.fi
.SH SEE ALSO
The README of the project, and \fBclaude\fR(1).
"""  # noqa: E501 - a man page example: one command a line


def esc(text: str) -> str:
    text = (text or "").replace("\\", "\\\\").replace("-", "\\-")
    return "\n".join(("\\&" + line) if line.startswith((".", "'")) else line for line in text.splitlines())


def options_of(cmd) -> list[str]:
    out = []
    for p in cmd.params:
        if getattr(p, "param_type_name", "") == "argument":
            continue
        if getattr(p, "hidden", False):
            continue
        names = ", ".join(f"\\fB{esc(o)}\\fR" for o in list(p.opts) + list(p.secondary_opts))
        metavar = f" \\fI{esc(p.metavar)}\\fR" if p.metavar else ""  # the placeholder --help shows
        out.append(f".TP\n{names}{metavar}\n{esc(getattr(p, 'help', '') or '')}")
    return out


def usage_of(path: str, cmd) -> str:
    args = " ".join(f"\\fI{esc(p.metavar)}\\fR" if p.required else f"[\\fI{esc(p.metavar)}\\fR]"
                    for p in cmd.params if getattr(p, "param_type_name", "") == "argument")
    return f"\\fB{esc(path)}\\fR [\\fIOPTIONS\\fR] {args}".rstrip()


def walk(path: str, cmd, out: list[str]) -> None:
    subs = getattr(cmd, "commands", None)
    if subs:
        for name in sorted(subs):
            walk(f"{path} {name}", subs[name], out)
        return
    out.append(f".SS {esc(path)}\n{usage_of(path, cmd)}\n.PP\n{esc(cmd.help or '')}")
    out.extend(options_of(cmd))


def help_text() -> None:
    """`learn --help` as typer prints it off a terminal at click's widest layout (80 columns)."""
    import os

    from learn_cli.cli import run

    os.environ["COLUMNS"] = "80"
    run(["--help"])


def main() -> None:
    if sys.argv[1:] == ["--help-text"]:
        return help_text()
    root = build(app)
    date = datetime.date.today().isoformat()
    out = [f'.TH LEARN 1 "{date}" "learn {__version__}" "User Commands"', ".SH NAME",
           "learn \\- a local, cross\\-project learning engine for coding agents", ".SH SYNOPSIS",
           "\\fBlearn\\fR [\\fIGLOBAL OPTIONS\\fR] [\\fICOMMAND\\fR] [\\fIOPTIONS\\fR]", INTRO.strip(),
           ".SH GLOBAL OPTIONS"]
    out.extend(options_of(root))
    out.append(".SH COMMANDS")
    out.append(".SS learn\nWith no command on a terminal: asks what you learned and stores it. "
               "Without a terminal: prints usage and exits 2.")
    names = [name for name, _module, _help in COMMANDS]  # the order of `learn --help` and the README
    if set(names) != set(root.commands):
        raise SystemExit(f"commands registered but not listed, or listed but not registered: "
                         f"{sorted(set(names) ^ set(root.commands))}")
    for name in names:
        walk(f"learn {name}", root.commands[name], out)
    out.append(OUTRO.strip())
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
