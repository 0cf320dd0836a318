"""Assemble README.md from docs/ (the per-command pages, capture, agents, design notes).

Run: python tools/build_readme.py   (make readme)
"""
import re, pathlib
docs = pathlib.Path("docs")
order = ["learn","add","recall","stats","promote","resolve","export","import","prune","graph","show","forget","restore","context","doctor","capture","hooks","ingest","flush"]
def section(text, title):
    m = re.search(rf"^## {title}[^\n]*\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    return m.group(1) if m else ""
def first_block(text, maxlines=24):
    m = re.search(r"```[a-z]*\n(.*?)```", text, re.S)
    if not m: return None
    lines = m.group(1).rstrip("\n").splitlines()
    if len(lines) > maxlines: lines = lines[:maxlines] + ["…"]
    return "\n".join(lines)
out = []
for name in order:
    p = docs / f"cmd-{name}.md"
    if not p.exists():
        print("missing", name); continue
    t = p.read_text()
    title = "learn" if name == "learn" else f"learn {name}"
    syn = first_block(section(t, "Synopsis"), 12)
    ex = first_block(section(t, "Example") or section(t, "Examples") or section(t, "`learn` \\(interactive\\)"), 26)
    out.append(f"### `{title}`\n")
    if syn: out.append(f"```\n{syn}\n```\n")
    if ex: out.append(f"Example:\n\n```console\n{ex}\n```\n")
    js = section(t, "JSON") or section(t, "Output \\(JSON\\)") or section(t, "JSON report")
    extra = " (including its `--json` schema)" if js else ""
    out.append(f"Every option, exit codes and edge cases{extra}: [docs/cmd-{name}.md](docs/cmd-{name}.md).\n")

root = pathlib.Path(".")
commands = "\n".join(out)
capture = (root / "docs/capture.md").read_text().replace("## Automatic capture with Claude Code", "## Connect Claude Code")
capture = re.sub(r"^### ", "### ", capture, flags=re.M)
agents = (root / "docs/agents.md").read_text() if (root / "docs/agents.md").exists() else ""
agents = re.sub(r"^# ", "## ", agents, flags=re.M)
design = (root / "docs/design-notes.md").read_text()
head = (root / "docs/readme-head.md").read_text()
layout = """## Data layout

Everything lives under `$SELF_LEARNING_HOME` (default `~/.openclaw/self-learning`; `--home`
overrides both). Nothing is written into your repositories except by `learn flush` and
`learn hooks install --scope project|local`.

```
<home>/
├── config.json                 global settings (auto-capture default, budget, thresholds, …)
├── global/
│   ├── errors.jsonl            global error learnings          (JSONL logs: a later line with
│   ├── patterns.jsonl          global patterns and workflows    the same id supersedes an
│   ├── preferences.json        global preferences               earlier one)
│   ├── archive.jsonl           archived global learnings
│   ├── index.json              small summary of the index
│   └── index.db                derived SQLite index (FTS5); rebuilt from the files when needed
├── projects/<project-id>/      id = hash of the origin URL (two clones are one project), else of the path
│   ├── project.json            {id, name, root, remote, created}
│   ├── learnings.jsonl         this project's learnings (all types)
│   ├── overrides.json          settings that override config.json (auto on/off, …)
│   └── archive.jsonl           archived learnings
├── sessions/<session-id>.jsonl the last events of one agent session (redacted, bounded)
├── analytics/stats.json        counters (captures, pairs, suggestions, helped, …)
└── learn.log                   one-line warnings (bounded)
```

Files are `0600`, folders `0700`. A record is one JSON object per line: `id`
(`learn-<UTC yyyymmddTHHMMSSZ>-<6 hex>`), `type`, `category`, `context`, `error`, `fix`,
`project`, `projects`, `frequency`, `impact`, `created`, `last_used`, `status`
(`pending`·`active`·`global`·`archived`·`conflicted`), `source`, `key`, and for captured ones
`tool`, `command`, `fix_command`, `exit_code`, `env`, `evidence`, plus `low_since`, `helped`,
`not_helped`, `updated`, `schema`. Unknown fields are kept on every rewrite.

Settings (`config.json`): `auto_capture` (true), `budget` (2000 tokens), `min_evidence` (2),
`promote_min_projects` (2), `archive_days` (30), `hard_delete_days` (90),
`session_max_events` (50), `session_max_age_days` (14), `lookback` (5),
`search_timeout_s` (5).

## Exit codes and output conventions

| code | meaning |
|---|---|
| 0 | success — and always for hook calls (`learn capture`, `learn context --hook`) |
| 1 | user error: one line on stderr (`learn: error: …`), never a traceback |
| 2 | usage error (unknown option, bad value, `learn` without a terminal) |
| 130 | interrupted |

Read commands take `--json` (stable keys, documented per command in `docs/cmd-*.md`). Colour,
emoji and boxes appear only on a terminal; piped output is plain, stable text; `NO_COLOR` is
respected. Long work (import, promote, prune, ingest over many projects) shows a progress bar
on a terminal. `man ./man/learn.1` (installed by `make install`) documents every command and
option; `make man` regenerates it from the CLI.
"""
perf = """## Speed and reliability

`make bench` generates homes of 1,000 / 10,000 / 100,000 learnings and times every operation
against the bare interpreter and ripgrep in the same run: [BENCHMARKS.md](BENCHMARKS.md).

![latency against store size](bench/latency.svg)

[RELIABILITY.md](RELIABILITY.md) lists the tests that try to break `learn` — 64 concurrent
writers, `kill -9` at random moments, corrupt files, fuzzed payloads and imports, a full disk,
a read-only home, 30+ secret formats — and their results.
"""
text = head + capture + "\n" + (agents + "\n" if agents else "") + "## Commands\n\n" + commands + "\n" + layout + "\n" + perf + "\n" + design
(root / "README.md").write_text(text.rstrip() + "\n")
print(len(text.splitlines()))
