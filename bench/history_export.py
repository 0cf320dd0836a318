"""Replay histories from the Claude Code `/export` transcripts that a project commits to its repository.

Some projects commit the text of their agent sessions, saved with Claude Code's `/export` (e.g.
github:sflicker/claudec99, `docs/sessions/stage-*-export.md`). This module copies such files out of a search index
that serves them in pages of at most 16,000 characters, and parses them into a replay history: `events.jsonl` and
`meta.json` in the format of `../shared/histories/README.md`, which `../shared/tools/replay.py` replays through
`learn`'s hooks. Stdlib only, Python 3.11.

    python bench/history_export.py savepart DIR NAME OFFSET TOTAL COMMIT < page
    python bench/history_export.py assemble DIR
    python bench/history_export.py merge OUT DIR [DIR ...]
    python bench/history_export.py build RAW_DIR OUT_DIR --history NAME

- `savepart`: decodes one page, its JSON-escaped text exactly as the index's read_file shows it between the
  quotes of "text" (escapes such as \\n \\" \\u23fa left as they are), and stores it as
  `DIR/parts/<NAME, / written __>@<OFFSET, 8 digits>`. `DIR/manifest.json` records each file's total length and
  the commit of the stored version (the index keeps one version per file). The decoded length must be 16,000, or
  TOTAL - OFFSET for the last page: anything else is a copying slip, and the command says so (exit 1).
- `assemble`: joins each file's parts into `DIR/files/<NAME>` and reports it `complete` or `partial N/TOTAL`
  (after a `GAP` line when a part does not start where the text before it ends).
- `merge`: the complete files of several such folders (a file in more than one is taken from the first) into OUT,
  which is emptied first, then assembled. Files left partial are reported and left out.
- `build`: RAW_DIR (manifest.json and files/) -> OUT_DIR/events.jsonl and meta.json. NAME picks the entry of
  HISTORIES below that says which files are sessions, in which order, and where the project root was.

Events (see `../shared/histories/README.md`): `session`, `prompt` and `tool` lines; tool events with `tool`,
`command`/`path`/`input`, `outcome`, `exit`, `error` (`Exit code N` first for Bash), `output` (≤ 2,000 chars),
`cwd`/`cwd_post` relative to the project root, `<ROOT>` for the root, flags `trunc`, `elided`, `synthetic`,
`background`, `interrupted_after`.

What the parser does: it undoes the export's 80-column wrapping (hard breaks in words, soft word wraps and real
newlines told apart by line length and by whether the next word would have fitted; successful output is wrapped at
75 columns, errors at 80), tracks `cd` as replay.py does (and `Shell cwd was reset to …`), maps `Update` to Edit,
`Search` to Grep, custom agent types (`haiku-stage-artifact-writer(…)`) to Task, turns collapsed read/search groups
into synthetic Read / Grep / `ls` events, and redacts API keys, tokens and `password=` values.

What it cannot see: output hidden by `… +N lines` (an error is only its shown head); failures hidden by pipes
(`./test/run_all_tests.sh 2>&1 | tail -20` exits 0); commands the export cut (`…`, e.g. every heredoc); what the
collapsed read/search groups did (synthetic events have no path, and "listed N directories" may be Bash `ls` or
another tool); tool calls shown only by their result; real timings and git add times (null).
"""

from __future__ import annotations

import argparse
import collections
import glob
import io
import json
import os
import re
import shlex
import shutil
import sys

PARSER_VERSION = "hist-build 1"
PAGE_CHARS = 16_000  # the most text the search index's read_file returns at once

# ---------------------------------------------------------------------------------------------
# Sources. `files` are in replay order (see `order` in each entry); commit = the commit of the
# stored version that was read (the search index keeps one version per file).
#
# repo, remote: where the transcripts come from. roots: the project root as the transcripts write it (replaced by
# <ROOT>; the first absolute one is where sessions start). home: for `cd`, `cd ~/x`. paths, include: the folders
# read and the regex a file's path must match to be a session; first (optional): files that come before all others
# whatever their names; width (optional): the terminal's, when a session's own lines may not show it; cwd_resets
# (optional): every shell call starts in the project root, a `cd` lasting for its own call only. order,
# selection, transcription: copied into meta.json, to say how the sessions were ordered, chosen and copied.

HISTORIES: dict[str, dict] = {
    "sflicker-claudec99": {
        "repo": "sflicker/claudec99",
        "remote": "https://github.com/sflicker/claudec99.git",
        "roots": ["/home/scott/code/claude/claudec99", "~/code/claude/claudec99"],
        "home": "/home/scott",
        "paths": ["docs/sessions"],
        "include": r"stage-[0-9-]+-export\.md$",
        "order": "natural order of the stage number in the file name (stage-09-05 < stage-10-01 < ... < "
                 "stage-172); the search index holds no commit times (`time`/`added` are null); the dates "
                 "the transcripts themselves show (`date_seen`) and their git log output agree with that order",
        "selection": "Every `docs/sessions/stage-*-export.md` /export transcript found in the index (the folder "
                     "holds 776 files: exports, `-transcript.md` summaries and `-usage.md` files; only exports are "
                     "used). Session 37 copied 11, picked for their failing Bash calls (stages 17-03, 28-04, 61, "
                     "70-01, 100, 101, 124, 136, 147, 163, 167); session 38's helpers copied runs of stages in order "
                     "from eleven starting points, whatever the sessions held, until no stage was left or their "
                     "budget ran out: the files not found under the names tried, and those left partial, are not "
                     "in it (see meta.json's sessions).",
        "transcription": "No network here: each file was read from the search index's stored copy in 16,000-char "
                         "pages (read_file) and written to raw/ by hand from the JSON-escaped page text; every page "
                         "was checked against the index's offsets/total_chars, and 7 slips caught that way "
                         "(dropped, duplicated or misplaced lines, one missing space) were corrected. A "
                         "length-neutral slip (one character for another) would not be caught. Session 38's helpers "
                         "copied the same way, each page's decoded length checked against the stored one; long runs "
                         "of one character (spaces, box lines) were filled by a script to the lines' known width.",
    },
    "sticky-finger-ankihelper-pc": {
        "repo": "Sticky-Finger/ankihelper-pc",
        "remote": "https://github.com/Sticky-Finger/ankihelper-pc.git",
        "roots": ["/Users/a1/Codes/ankihelper-pc", "~/Codes/ankihelper-pc"],
        "home": "/Users/a1",
        "paths": ["chat-logs-sanitized"],
        "include": r"chat-logs-sanitized/2026-[0-9-]+-.*\.txt$",
        "width": 80,
        "order": "the date and time in each file name (`/export`'s default name, YYYY-MM-DD-HHMM[SS]-<slug>.txt)",
        "selection": "Every /export transcript under `chat-logs-sanitized/` that the index lists (27 files, "
                     "2026-05-15 .. 2026-08-02); found by session 50's scout, copied blind (not read before "
                     "the first measurement). Claude Code 2.1.x driving GLM, MiMo and Qwen models (its `/model`); "
                     "a Flutter desktop app; prose mostly Chinese.",
        "transcription": "As sflicker-claudec99's: 16,000-char pages read from the search index's stored copy, "
                         "copied by helpers from the JSON-escaped page text, each page's decoded length checked "
                         "against the stored one (`savepart`).",
    },
    "sticky-finger-vidsum": {
        "repo": "Sticky-Finger/VIDSUM",
        "remote": "https://github.com/Sticky-Finger/VIDSUM.git",
        "roots": ["/Users/a1/Codes/VidSum", "~/Codes/VidSum"],
        "home": "/Users/a1",
        "paths": ["chat-logs-sanitized"],
        "include": r"chat-logs-sanitized/2026-[0-9-]+-.*\.txt$",
        "width": 80,
        "first": ["chat-logs-sanitized/2026-04-23-caveat-the-messages-below-were-generated-by-the-u.txt"],
        "order": "the date and time in each file name (YYYY-MM-DD-HHMM-<slug>.txt); the one name without a time, "
                 "2026-04-23-caveat-…, is the first session (the project's docs/tutorial/Tutorial.md tells the "
                 "sessions in order), so it is put first",
        "selection": "Every /export transcript under `chat-logs-sanitized/` that the index lists (24 files, "
                     "2026-04-23 .. 2026-05-02); found by session 50's scout, copied blind. Claude Code 2.0.x "
                     "driving Qwen, DeepSeek and GLM models; a Tauri app (Rust back end, React front end); prose "
                     "mostly Chinese. Same author as sticky-finger-ankihelper-pc, another project.",
        "transcription": "As sticky-finger-ankihelper-pc's.",
    },
    "tomshtern-backup-framework": {
        "repo": "TomShtern/client-server-encrypted-backup-framework-clean",
        "remote": "https://github.com/TomShtern/client-server-encrypted-backup-framework-clean.git",
        "roots": ["C:\\Users\\tom7s\\Desktopp\\Claude_Folder_2\\Client_Server_Encrypted_Backup_Framework",
                  "C:/Users/tom7s/Desktopp/Claude_Folder_2/Client_Server_Encrypted_Backup_Framework",
                  "/c/Users/tom7s/Desktopp/Claude_Folder_2/Client_Server_Encrypted_Backup_Framework"],
        "home": "/c/Users/tom7s",
        "paths": [".", "FletV2"],
        # its calls start in the root: `cd FletV2 && python x.py` works call after call in one session
        "cwd_resets": True,
        "include": r"^(?:FletV2/)?2025-[0-9-]+-.*\.txt$",
        "order": "the date in each file name (`/export`'s YYYY-MM-DD-<slug>.txt, some slugs the user's own); two "
                 "sessions of one day in the natural order of their names",
        "selection": "The /export transcripts at the repository's root and in FletV2/ that session 50's scout listed "
                     "(23 files, 2025-08-01 .. 2025-10-03; a 407-character one of 2025-10-10 left out), copied blind "
                     "less two left out for the copying budget (2025-08-03, 694,000 characters; "
                     "2025-09-28-trying_to_fix_dashboard, 382,000). "
                     "Claude Code 1.0.x (Claude models) on Windows, its commands run by Git Bash; a C++ client and "
                     "a Python server, later a Flet GUI; English.",
        "transcription": "As sflicker-claudec99's.",
    },
    "sandahltim-rfid3": {
        "repo": "sandahltim/RFID3",
        "remote": "https://github.com/sandahltim/RFID3.git",
        "roots": ["/home/tim/RFID3", "~/RFID3"],
        "home": "/home/tim",
        "paths": [".", "operations_ui"],
        "include": r"^(?:operations_ui/)?2025-09-.*\.txt$",
        "order": "the date in each file name (YYYY-MM-DD-<slug>.txt); two sessions of 2025-09-12 in the natural "
                 "order of their names",
        "selection": "The /export transcripts that session 50's scout listed (15 files, 2025-09-02 .. 2025-09-23), "
                     "copied blind, less two left out for the copying budget (2025-09-18, 334,000 characters; "
                     "2025-09-23, 583,000). Claude Code 1.0.x (Claude models) on a Raspberry Pi; a Flask "
                     "inventory dashboard with MariaDB and systemd services; English.",
        "transcription": "As sflicker-claudec99's.",
    },
    "selecto-elixir-selecto-test": {
        "repo": "selecto-elixir/selecto_test",
        "remote": "https://github.com/selecto-elixir/selecto_test.git",
        "roots": ["/data/chris/projects/selecto_test", "/Users/chris/es/selecto_test"],
        "home": "/data/chris",
        "paths": ["."],
        "include": r"^2025-[0-9-]+-.*\.txt$",
        "order": "the date in each file name (YYYY-MM-DD-<slug>.txt); sessions of one day in the natural order of "
                 "their names (the index keeps one version of a name that several sessions were saved under)",
        "selection": "The /export transcripts at the repository's root that session 50's scout listed (12 files, "
                     "2025-08-10 .. 2025-09-03), copied blind. Claude Code 1.0.x (Claude models) on two machines "
                     "(the project at /data/chris/projects and at /Users/chris/es); an Elixir/Phoenix test app of a "
                     "query builder; English.",
        "transcription": "As sflicker-claudec99's.",
    },
    "ikigaiina-sembalun-mind": {
        "repo": "ikigaiina/Sembalun-Mind",
        "remote": "https://github.com/ikigaiina/Sembalun-Mind.git",
        "roots": ["D:\\pengembangan siy\\4\\sembalun", "D:/pengembangan siy/4/sembalun",
                  "/d/pengembangan siy/4/sembalun"],
        "home": "/c/Users/user",
        "paths": ["."],
        "include": r"^2025-[0-9-]+-.*\.txt$",
        "cwd_resets": True,  # (Claude Code 1.0 on Windows, as tomshtern-backup-framework)
        "order": "the date in each file name (YYYY-MM-DD-<slug>.txt); sessions of one day in the natural order of "
                 "their names (the index keeps one version of a name that several sessions were saved under: the "
                 "one the scout listed is read)",
        "selection": "The /export transcripts at the repository's root that session 50's scout listed (15 files, "
                     "2025-08-01 .. 2025-08-10), copied blind. Claude Code 1.0.x (Claude models) on Windows with "
                     "claude-flow hooks that fail after every tool call (their lines are not tool calls and are "
                     "skipped); a React, Vite and Supabase app.",
        "transcription": "As sflicker-claudec99's.",
    },
    "niiniyare-erp": {
        "repo": "niiniyare/erp",
        "remote": "https://github.com/niiniyare/erp.git",
        "roots": ["/data/data/com.termux/files/home/project/erp", "~/project/erp"],
        "home": "/data/data/com.termux/files/home",
        "paths": ["."],
        "include": r"^2025-[0-9-]+-.*\.txt$",
        "order": "the date in each file name (YYYY-MM-DD-<slug>.txt); a file whose whole text begins a later one "
                 "(the same session exported again after it went on) is replayed once, as the later file",
        "selection": "The eight /export transcripts at the repository's root that session 51's scout listed "
                     "(2025-07-16 .. 2025-09-14), copied and replayed blind. Claude Code 1.0.x in Termux on "
                     "Android; a Go ERP back end (go test, sqlc, Goa, Redis).",
        "transcription": "As sflicker-claudec99's.",
    },
    "provide-io-flavorpack": {
        "repo": "provide-io/flavorpack",
        "remote": "https://github.com/provide-io/flavorpack.git",
        "roots": ["/Users/tim/code/gh/provide-io/flavorpack", "~/code/gh/provide-io/flavorpack", "/REDACTED_ABS_PATH"],
        "home": "/Users/tim",
        "paths": [".", "scraps", "helpers", "ingredients", "src"],
        "include": r"(^|/)(2025-[0-9-]+-.*|2025[0-9]{4}-[0-9]{4}-.*)\.txt$",
        "order": "the date and time in each file name (YYYYMMDD-HHMM-<title>.txt, one YYYY-MM-DD-<slug>.txt), "
                 "whatever its folder; a file whose whole text begins another one is replayed once, as that one",
        "selection": "The 17 /export transcripts in the repository's root, scraps/, helpers/, ingredients/ and "
                     "src/ that session 51's scout listed (2025-08-10 .. 2025-11-01), copied and replayed blind. "
                     "Claude Code 1.0.x on macOS; a packaging tool in Python, Rust and Go (make, cargo, go, "
                     "pytest). The project committed them with most absolute paths replaced by "
                     "`/REDACTED_ABS_PATH`, read here as the project root.",
        "transcription": "As sflicker-claudec99's.",
    },
}

# ---------------------------------------------------------------------------------------------
# Pages of a file: DIR/parts/<name>@<offset>, DIR/manifest.json, DIR/files/<name>


def part_path(folder: str, name: str, offset: int) -> str:
    """Where the page of file `name` that starts at `offset` is stored (8-digit offsets sort as text)."""
    return os.path.join(folder, "parts", f"{name.replace('/', '__')}@{offset:08d}")


def part_paths(folder: str, name: str) -> list[str]:
    """The stored pages of file `name`, by offset."""
    prefix = os.path.join(folder, "parts", name.replace("/", "__"))
    return sorted(glob.glob(glob.escape(prefix) + "@*"))


def read_manifest(folder: str) -> dict:
    """DIR/manifest.json: {file name: {"total": its length in characters, "commit": ...}}; {} when there is none."""
    path = os.path.join(folder, "manifest.json")
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def write_manifest(folder: str, manifest: dict) -> None:
    with open(os.path.join(folder, "manifest.json"), "w", encoding="utf-8") as fh:
        json.dump(manifest, fh, indent=1, sort_keys=True)


def decode_page(escaped: str) -> str:
    """A page's text from its JSON-escaped form; one newline at the end (the file-creation tool's) is dropped.
    Raises json.JSONDecodeError when the form is not a valid JSON string body (a copying slip)."""
    if escaped.endswith("\n"):
        escaped = escaped[:-1]
    return json.loads('"' + escaped + '"')


def save_part(folder: str, name: str, offset: int, total: int, commit: str, text: str) -> str:
    """Store one page of file `name`, and its total length and commit in the manifest when it has none yet."""
    path = part_path(folder, name, offset)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    manifest = read_manifest(folder)
    manifest.setdefault(name, {"total": total, "commit": commit})
    write_manifest(folder, manifest)
    return path


def join_parts(paths: list[str]) -> tuple[str, int | None]:
    """The pages' text joined from offset 0 up to the first page that does not start where the text before it ends,
    and that page's offset (None when there is no gap)."""
    text = ""
    for path in paths:
        offset = int(path.rsplit("@", 1)[1])
        if offset != len(text):
            return text, offset
        with open(path, encoding="utf-8") as fh:
            text += fh.read()
    return text, None


def assemble(folder: str) -> list[str]:
    """Join the pages of every file in DIR's manifest into DIR/files/<name> (as far as they join); one report line
    per file, `<name>: complete` or `<name>: partial N/TOTAL`, after a `GAP` line when pages are missing."""
    report = []
    for name, info in sorted(read_manifest(folder).items()):
        text, gap = join_parts(part_paths(folder, name))
        if gap is not None:
            report.append(f"GAP {name}: part at {gap}, have {len(text)}")
        complete = gap is None and len(text) == info["total"]
        out = os.path.join(folder, "files", name)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "w", encoding="utf-8") as fh:
            fh.write(text)
        report.append(f"{name}: " + ("complete" if complete else f"partial {len(text)}/{info['total']}"))
    return report


def merge(out: str, sources: list[str]) -> list[str]:
    """Copy the pages of the files that are complete in `sources` (their pages join without gap to the stored
    length) into `out`, emptied first, and assemble it. A file complete in several sources is taken from the first.
    Returns the report: files skipped as partial, files seen twice, and the count."""
    _refuse_overlap(out, sources)
    report = []
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(os.path.join(out, "parts"))
    manifest: dict[str, dict] = {}
    for source in sources:
        for name, info in read_manifest(source).items():
            paths = part_paths(source, name)
            text, _gap = join_parts(paths)
            if len(text) != info["total"]:
                source_name = os.path.basename(os.path.normpath(source))
                report.append(f"skip (partial {len(text)}/{info['total']}): {name} from {source_name}")
                continue
            if name in manifest:
                report.append(f"twice: {name}")
                continue
            manifest[name] = info
            for path in paths:
                shutil.copy(path, os.path.join(out, "parts"))
    write_manifest(out, manifest)
    assemble(out)
    report.append(f"{len(manifest)} files")
    return report


def _refuse_overlap(out: str, sources: list[str]) -> None:
    """`merge` empties OUT first: it must not be a source, hold one, or be (inside) a source's parts/ or files/."""
    out_real = os.path.realpath(out)
    for source in sources:
        source_real = os.path.realpath(source)
        if _within(source_real, out_real) or any(_within(out_real, os.path.join(source_real, sub))
                                                 for sub in ("parts", "files")):
            raise ValueError(f"the output folder {out} would delete the pages of {source}")


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


# ---------------------------------------------------------------------------------------------
# The export format
#
# The transcripts are the newer export format (Claude Code 2.x): `● Tool(args)` / `⏺ Tool(args)`
# headers, `  ⎿  ` result lines, output indented five spaces, 80-column hard wrapping, collapsed
# read/search groups ("Read 3 files, searched for 2 patterns (ctrl+o to expand)"). A prompt is
# `❯ text` (or `> text`), padded with spaces to the width of its box; a local command's output
# follows it on `⎿` lines. A header may carry ` timeout: 1m 0s` after its `)`, and ends in `…)`
# when the export cut it; `… +N lines (ctrl+o to expand)` hides N lines of a result.

LOCAL_COMMANDS = {"/clear", "/export", "/model", "/usage", "/status", "/compact", "/config", "/cost",
                  "/help", "/rename", "/resume", "/context", "/mcp", "/login", "/logout", "/doctor",
                  "/permissions", "/memory", "/exit", "/quit", "/vim", "/theme", "/terminal-setup",
                  "/ide", "/agents", "/hooks", "/bashes", "/todos", "/add-dir", "/release-notes",
                  "/upgrade", "/privacy-settings", "/statusline", "/output-style", "/rewind", "/stats",
                  "/plugin", "/feedback", "/bug", "/fast", "/effort", "/recap"}

TOOL_ALIASES = {"Update": "Edit", "Search": "Grep", "Web Search": "WebSearch", "Fetch": "WebFetch",
                "Update Todos": "TodoWrite", "Kill Shell": "KillShell", "Bash Output": "BashOutput",
                "List": "LS", "Agent": "Task", "Explore": "Task", "Plan": "Task"}
KNOWN_TOOLS = {"Bash", "Read", "Write", "Edit", "MultiEdit", "Grep", "Glob", "LS", "WebSearch",
               "WebFetch", "Task", "TodoWrite", "Skill", "NotebookEdit", "BashOutput", "KillShell",
               "ExitPlanMode", "AskUserQuestion", "SlashCommand", "TaskOutput", "TaskStop"}
# Tools whose errors are input validation (no hook fires for them): outcome `tool_error`, not `fail`.
VALIDATION_TOOLS = {"Edit", "MultiEdit", "Write", "Read", "NotebookEdit", "Grep", "Glob", "LS",
                    "KillShell", "BashOutput", "Skill", "TodoWrite"}

VALIDATION_RE = (r"^(File must be read first|File has not been read yet|String to replace not found|"
                 r"No changes to make|File does not exist|Found \d+ matches of the string|<tool_use_error>|"
                 r"Old string not found|File content has changed|Invalid (?:tool )?parameters?)")

BULLET = ("● ", "⏺ ")
HEAD_RE = re.compile(r"^[●⏺] (?P<name>[A-Za-z][A-Za-z0-9 _.:-]*?)(?: \((?P<mcp>MCP)\))?\((?P<args>.*)$")
HEAD_RE_S = re.compile(HEAD_RE.pattern, re.S)
GROUP_RE = re.compile(r"^  ((?:Read|Searched for|Listed|read|searched for|listed) .*?) \(ctrl\+[or] to expand\)\s*$")
GROUP_PART_RE = re.compile(r"(read|searched for|listed)\s+(\d+)\s+(files?|patterns?|director(?:y|ies))", re.I)
# what each part of a collapsed group stands for: (tool, command) of its synthetic events
GROUP_TOOLS = {"read": ("Read", ""), "searched for": ("Grep", ""), "listed": ("Bash", "ls")}
EXIT_CODE_RE = re.compile(r"⎿  Error: Exit code \d+")
ELIDED_RE = re.compile(r"…\s*\+(\d+) lines? \(ctrl\+[or] to (?:expand|see all)\)")  # ctrl+r before 2.0
PROMPT_RE = re.compile(r"^(?:❯|>) ?(.*)$")
CUSTOM_AGENT_RE = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)+$")
PROGRESS_RE = re.compile(r"^(Initializing…|Running…|Waiting…)\s*$")
FLAGS = ("trunc", "elided", "synthetic", "background", "interrupted_after")

SECRET_RES = [
    re.compile(r"\b(sk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,})"),
    re.compile(r"\b(gh[pousr]_[A-Za-z0-9]{20,})"),
    re.compile(r"\b(github_pat_[A-Za-z0-9_]{20,})"),
    re.compile(r"\b(AKIA[0-9A-Z]{16})\b"),
    re.compile(r"\b(xox[abpr]-[A-Za-z0-9-]{10,})"),
    re.compile(r"\b(AIza[0-9A-Za-z_-]{30,})"),
    re.compile(r"\b((?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{10,})"),
    re.compile(r"\b(whsec_[A-Za-z0-9]{10,})"),
    re.compile(r"(?i)\bBearer\s+([A-Za-z0-9._~+/=-]{16,})"),
    re.compile(r"(?i)\b(?:password|passwd|pwd|token|secret|api[_-]?key|access[_-]?key)\s*[=:]\s*"
               r"[\"']?([^\s\"'&;]{6,})"),
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----"),
    # a signed URL's credentials (Sticky-Finger/ankihelper-pc: `?UCloudPublicKey=TOKEN_…&Signature=…`)
    re.compile(r"(?i)[?&](?:[a-z]*publickey|signature|x-amz-[a-z-]+|sig|access_token|token|key)=([^&\s\"'<>]{6,})"),
    # a JWT (ikigaiina/Sembalun-Mind: a Supabase key), whole or its header and payload, and the rest
    # of one an export's wrap put on the next line (`MjA3…NX0.64GZ…`: payload's end, signature)
    re.compile(r"\b(eyJ[A-Za-z0-9_-]{16,}(?:\.[A-Za-z0-9_-]+){0,2})"),
    re.compile(r"(?m)^[\s+|>-]{0,12}([A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{40,})\b"),
    # a MySQL password given with its flag (sandahltim/RFID3: `mysql -u user -p'…'`)
    re.compile(r"\b(?:mysql|mysqldump|mariadb)\b[^\n|;&]*?\s-p'?([^\s']{3,})"),
]


def natural_key(name: str) -> list:
    """Sort key that orders the numbers in a name by value (stage-9 < stage-10)."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


def redact(text: str) -> tuple[str, int]:
    """The text with secrets replaced by <REDACTED> (only the value when the pattern has a group), and their count.

    Deliberately not `learn_cli.text.redact`: a history is data that `learn` is measured on, so it must not change
    with the code under test (learn redacts what the replay sends it anyway). These few shapes keep a published
    credential out of the repository."""
    count = 0
    if not text:
        return text, 0

    def replace(m: re.Match) -> str:
        nonlocal count
        count += 1
        if m.groups():
            s, e = m.span(1)
            return m.group(0)[: s - m.start()] + "<REDACTED>" + m.group(0)[e - m.start():]
        return "<REDACTED>"

    for secret_re in SECRET_RES:
        text = secret_re.sub(replace, text)
    return text, count


# ---------------------------------------------------------------------------------------------
# Text helpers


def width_of(lines: list[str], at_least: int = 0) -> int:
    """Terminal width the export was wrapped at: the longest tool/assistant header line, or the
    history's terminal width when that is more. (A short session's headers can be far short of it:
    in one of Sticky-Finger/VIDSUM's, 70 of 80 columns, and `Checking vidsum (…)` and the
    `error[E0432]` below it were read as one wrapped line. Its longest line is no measure either:
    Claude Code 2.1 does not wrap its `※ recap:` lines.)"""
    cand = [len(line) for line in lines if line.startswith(BULLET) and "⎿" not in line]
    return max([*cand, at_least]) if cand or at_least else 80


def output_width(lines: list[str], width: int) -> int:
    """Successful tool output is wrapped narrower than headers and errors (75 vs 80 columns in
    Claude Code 2.1): the most common length of long result lines."""
    c = collections.Counter(len(line) for line in lines
                            if (line.startswith("  ⎿") or (line.startswith("     ") and not line.startswith("      ")))
                            and width - 12 <= len(line) <= width)
    return c.most_common(1)[0][0] if c else width - 5


# Programs whose name, last on a full line, is followed by an option on the next: the export
# wrapped at the space between them (`| grep` / `-n "X"`), which no indentation shows.
_OPTION_TAKERS = frozenset("tail head grep egrep sed nasm xargs sort uniq wc cut ls gcc cc ld diff".split())


def _option_after_program(line: str, text: str) -> bool:
    words = line.split()
    return bool(words) and words[-1] in _OPTION_TAKERS and len(words) > 1 and text.startswith("-")


def join_lines(parts: list[tuple[str, int]], width: int, padded: bool = False) -> str:
    """Undo the export's wrapping. parts: (line text with its indent removed, trailing spaces kept;
    raw length of the source line). Three cases between two display lines:
      - the line filled the terminal (raw length >= width, not a padded prompt line): a hard break
        inside a word -> join directly (a trailing space kept in the text stays);
      - the next line's first word would not have fitted after it: a soft word wrap -> one space;
      - otherwise the source had a real newline there -> keep it.
    Always a real newline after `Exit code N`, a trailing `\\` and a heredoc's `<< 'EOF'`.
    `padded`: lines padded with spaces to the width (prompts): use the stripped length only.
    A part may carry a third field, True when its line was indented one column deeper than a
    continuation is: the source's space fell on the break (`| tail` / ` -5)`), and is kept."""
    out = ""
    prev_text, prev_len = None, 0
    for text, raw_len, *spaced in parts:
        if prev_text is None:
            out = text
        else:
            stripped = prev_text.rstrip()
            first = (text.strip().split() or [""])[0]
            full_len = prev_len - (len(prev_text) - len(stripped))
            if (re.match(r"^(Error: )?Exit code \d+$", stripped) or stripped.endswith("\\")
                    or re.search(r"<<-?\s*['\"]?\w+['\"]?$", stripped)):
                out = out.rstrip(" ") + "\n" + text
            elif not padded and prev_len >= width:
                space = spaced and (spaced[0] or _option_after_program(stripped, text))
                out += (" " if space and not out.endswith(" ") else "") + text
            elif first and full_len + 1 + len(first) > width:
                out = out.rstrip(" ") + " " + text.lstrip()
            else:
                out = out.rstrip(" ") + "\n" + text
        prev_text, prev_len = text, raw_len
    return "\n".join(line.rstrip() for line in out.split("\n"))


# ---------------------------------------------------------------------------------------------
# Paths: the project root, `cd`


class ProjectRoot:
    """The project root as the transcripts write it (several spellings), and the home `cd` and `~` go to."""

    def __init__(self, roots: list[str], home: str):
        self.roots = sorted(roots, key=len, reverse=True)
        self.home = home
        self.abs_root = next((r for r in roots if r.startswith("/")), roots[0])

    def sub_root(self, text: str) -> str:
        """Every spelling of the root replaced by <ROOT>."""
        if not text:
            return text
        for r in self.roots:
            text = re.sub(re.escape(r) + r"(?=/|\b|$)", "<ROOT>", text)
        return text

    def in_posix(self, path: str) -> str:
        """A path under a Windows spelling of the root (`C:\\Users\\…\\proj\\FletV2`) as one under the absolute root."""
        for spelling in self.roots:
            if spelling != self.abs_root and path.startswith(spelling) and ":" in spelling[:3]:
                return self.abs_root + path[len(spelling):].replace("\\", "/")
        return path

    def rel_cwd(self, absdir: str) -> str:
        """A folder relative to the root (`.`, `src/x`), or `@outside/<path with / as _>` outside it."""
        absdir = os.path.normpath(absdir)
        if absdir == self.abs_root:
            return "."
        if absdir.startswith(self.abs_root + "/"):
            return os.path.relpath(absdir, self.abs_root)
        flat = absdir.strip("/").replace("/", "_") or "root"
        return "@outside/" + flat


def _words(seg: str) -> list[str]:
    try:
        return shlex.split(seg, posix=True)
    except ValueError:
        return seg.split()


def apply_cd(cwd_abs: str, cmd: str, root: ProjectRoot, ok: bool, error: str) -> str:
    """cwd after a Bash command: top-level `cd X` segments in order (as replay.py's apply_cd);
    on failure stop at the first real command, or at a cd the error says failed."""
    if not re.search(r"(^|[;&|\n(]\s*)cd(\s|$)", cmd):
        return cwd_abs
    for seg in re.split(r"&&|;|\n", cmd):
        w = _words(seg.strip())
        if not w:
            continue
        if w[0] != "cd":
            if not ok:
                break
            continue
        target = w[1] if len(w) > 1 else root.home
        if target == "-":
            continue
        if target.startswith("~"):
            target = root.home + target[1:]
        target = root.in_posix(target)
        new = os.path.normpath(target if target.startswith("/") else os.path.join(cwd_abs, target))
        if not ok and re.search(r"cd(?::\d+)?: .*(no such file|not a directory)", error or "", re.IGNORECASE):
            break  # (bash `cd: x: No such file or directory`, zsh `(eval):cd:1: no such file or directory: x`)
        cwd_abs = new
    return cwd_abs


# ---------------------------------------------------------------------------------------------
# One transcript -> items


def parse_header_args(raw: str) -> tuple[str, bool]:
    """`args)` possibly followed by ` timeout: 1m 0s`, `…)` when the export cut it."""
    s = raw.rstrip()
    s = re.sub(r"\)\s+timeout: [0-9hms ]+$", ")", s)
    s = re.sub(r"\)\s+\(timeout [0-9hms ]+\)$", ")", s)
    if s.endswith(")"):
        s = s[:-1]
    trunc = False
    if s.endswith("…"):
        s = s[:-1]
        trunc = True
    return s, trunc


def kv_args(args: str) -> dict:
    """`pattern: "x", path: "y"` -> dict (older Search/Read display)."""
    out = {}
    for m in re.finditer(r'(\w+): "((?:[^"\\]|\\.)*)"', args):
        out[m.group(1)] = m.group(2)
    if not out:
        m = re.match(r'^"((?:[^"\\]|\\.)*)"', args.strip())
        if m:
            out["_"] = m.group(1)
    return out


def is_item_start(line: str) -> bool:
    """A line that starts something new: a tool call or assistant text (bullet), a prompt, a status line
    (`✻ `, `※ `), a collapsed read/search group, a `═` rule."""
    return (line.startswith(BULLET) or line.startswith("❯") or line.startswith("> ") or line.startswith("✻ ")
            or line.startswith("※ ") or bool(GROUP_RE.match(line)) or line.startswith("═"))


def parse_export(text: str, terminal_width: int = 0) -> tuple[list[dict], dict]:
    """One export -> items (prompt/tool dicts without session/seq) and per-file stats (`width`: the terminal's;
    `terminal_width`: the history's, when its entry says). Lines that are none of prompt, collapsed group or tool
    call (assistant prose, banners) are skipped."""
    lines = text.split("\n")
    width = width_of(lines, terminal_width)
    ok_width = output_width(lines, width)
    # Before Claude Code 2.0 a failed command's result was `Error: <its stderr>`, with no `Exit code N`
    # line; since, `Error: …` without one is a command's own output (exit 0, e.g. piped to tail).
    exit_codes = bool(EXIT_CODE_RE.search(text))
    items: list[dict] = []
    stats: collections.Counter = collections.Counter()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith(("❯", "> ")) and (prompt := PROMPT_RE.match(line)):
            item, i = _read_prompt(lines, i, prompt.group(1), width)
            if item is None:
                stats["local_commands"] += 1
            else:
                items.append(item)
        elif group := GROUP_RE.match(line):
            synthetic = _group_items(group.group(1), i + 1)
            items.extend(synthetic)
            stats["synthetic"] += len(synthetic)
            i += 1
        elif line.startswith(BULLET) and (head := HEAD_RE.match(line)):
            item, i = _read_tool_call(lines, i, head, (width, ok_width), exit_codes)
            if item is not None:
                items.append(item)
        else:
            i += 1
    return items, dict(stats, width=width)


def _continues_result(lines: list[str], i: int) -> bool:
    """Line i is a `⎿` line, or an indented non-blank line right after one (or after its continuation)."""
    line = lines[i]
    return line.startswith("  ⎿") or (line.startswith("     ") and lines[i - 1].startswith(("  ⎿", "     "))
                                      and bool(line.strip()))


def _read_prompt(lines: list[str], i: int, first_text: str, width: int) -> tuple[dict | None, int]:
    """The prompt that starts on line i (its text after `❯ `: first_text), continued up to a blank line or the next
    item, and the index of the line after it and after a local command's output. None for an empty prompt or a
    local command (`/clear`, `/export`, ...): they never reach the agent."""
    start = i
    parts = [(first_text.rstrip(), len(lines[i].rstrip()))]
    i += 1
    while i < len(lines) and lines[i].strip() and not is_item_start(lines[i]) and not lines[i].startswith("  ⎿"):
        parts.append((lines[i].strip(), len(lines[i].rstrip())))
        i += 1
    text = join_lines(parts, width - 2, padded=True).strip()  # the prompt box is 2 columns narrower
    first_word = text.split()[0] if text.split() else ""
    # a local command's own output (⎿ lines) follows it
    while i < len(lines) and _continues_result(lines, i):
        i += 1
    if not text or first_word in LOCAL_COMMANDS:
        return None, i
    return {"kind": "prompt", "line": start + 1, "text": text[:4000]}, i


def _group_items(summary: str, line_no: int) -> list[dict]:
    """A collapsed group ("Read 3 files, searched for 2 patterns") -> one synthetic event per file, pattern or
    directory, with no path or pattern (the export does not show them)."""
    items = []
    for m in GROUP_PART_RE.finditer(summary):
        tool, cmd = GROUP_TOOLS[m.group(1).lower()]
        items += [{"kind": "tool", "line": line_no, "tool": tool, "command": cmd, "path": "", "outcome": "ok",
                   "exit": None, "error": "", "output": "", "synthetic": True, "_group": summary}
                  for _ in range(int(m.group(2)))]
    return items


def _read_tool_call(lines: list[str], i: int, head: re.Match, widths: tuple[int, int],
                    exit_codes: bool) -> tuple[dict | None, int]:
    """The tool call whose header starts on line i (head: HEAD_RE's match of that line): its header, result blocks
    and outcome; and the index of the line after it. None when the bullet line was assistant prose that happens to
    contain "(" (those lines are consumed all the same)."""
    start = i
    name = head.group("name").strip()
    header, inline_result, i = _read_header(lines, i, widths[0])
    full_header = HEAD_RE_S.match("● " + header)
    args_raw = full_header.group("args") if full_header else ""
    tool = _tool_name(name, bool(head.group("mcp")))
    blocks, i = _read_result_blocks(lines, i, inline_result)
    if tool is None:
        # custom agent type (e.g. `haiku-stage-artifact-writer(...)`) -> Task; otherwise text
        if not _is_custom_agent(name, blocks):
            return None, i
        tool = "Task"
    args, trunc = parse_header_args(args_raw)
    item = {"kind": "tool", "line": start + 1, "tool": tool, "command": "", "path": "", "outcome": "ok",
            "exit": None, "error": "", "output": ""}
    if trunc:
        item["trunc"] = True
    _set_arguments(item, tool, name, args)
    elided = _elided_lines(blocks)
    if elided:
        item["elided"] = elided
    # progress lines ("Initializing…", "Running…") come before the real result block
    while len(blocks) > 1 and PROGRESS_RE.match(blocks[0][0][0]):
        blocks = blocks[1:]
    item.update(_judge_result(tool, blocks, widths, exit_codes))
    for block in blocks:
        m = re.match(r"^Shell cwd was reset to (\S+)", block[0][0])
        if m:
            item["_cwd_reset"] = m.group(1)
    return item, i


def _read_header(lines: list[str], i: int, width: int) -> tuple[str, str | None, int]:
    """The header from line i on, without its bullet, joined from its display lines (until a result, a blank line
    or the next item); the start of the result when the export put it on a header line; the next line's index."""
    first = lines[i]
    inline_result = None
    if "  ⎿  " in first:  # export glitch: result on the header line
        first, inline_result = first.split("  ⎿  ", 1)
    rest = []
    i += 1
    if inline_result is None:
        while i < len(lines) and lines[i].strip() and not lines[i].startswith("  ⎿") and not is_item_start(lines[i]):
            line = lines[i]
            i += 1
            if "  ⎿  " in line:
                line, inline_result = line.split("  ⎿  ", 1)
                rest.append(line)
                break
            rest.append(line)
    # Continuation lines start one column left of the arguments (`● Bash(` is 7 wide: column 6);
    # one deeper, the source's space fell on a hard break (`| tail` / ` -5)`) and is kept.
    indents = [len(line) - len(line.lstrip()) for line in rest]
    base = min([first.find("(") if "(" in first else 6, *indents])
    first, rest, width = _without_label_column(first, rest, width)
    parts = [(first[2:], len(first))] + [(line.lstrip(), len(line), indent == base + 1)
                                         for line, indent in zip(rest, indents, strict=True)]
    return join_lines(parts, width), inline_result, i


# Claude Code 2.0 sets a header's ` timeout: 3m 0s` in a column of its own at the right when the
# header takes several lines: `⏺ Bash(cd app && cargo check 2>&1 |   timeout: 3m ` over
# `      head -100)                                  0s`. The arguments then wrap at that column,
# two spaces before the label (`…/input-task-creation/sr  timeout: 5m ` over `      c-tauri && …`
# is one word). A one-line header's label follows its `)` and is left to parse_header_args.
LABEL_START_RE = re.compile(r"^(.*?\S)(\s+)timeout: ([0-9hms ]*?)\s*$")
LABEL_REST_RE = re.compile(r"^(.*?\S)\s{2,}([0-9]+[hms](?: [0-9]+[hms])*)\s*$")
LABEL_WIDTH = len("timeout: 10m 0s")


def _without_label_column(first: str, rest: list[str], width: int) -> tuple[str, list[str], int]:
    """The header's lines without the label column's words, and the width the arguments wrap at."""
    start = LABEL_START_RE.match(first) if rest else None
    if start is None:
        return first, rest, width
    lines, label = [], start.group(3).split()
    for line in rest:
        more = LABEL_REST_RE.match(line) if len(label) < 2 else None
        if more:
            line, label = more.group(1), label + more.group(2).split()
        lines.append(line.rstrip())
    column = start.end(2)
    # The label stands just right of the widest line; only when that is as far right as it goes did
    # the arguments wrap there (`pnpm tauri dev 2>&1 & timeout: 3m 0s` over `sleep 60…)` is two lines).
    return start.group(1), lines, column - 2 if column >= width - LABEL_WIDTH else width


def _tool_name(name: str, is_mcp: bool) -> str | None:
    """The hook's tool_name for a header's name (`Update` -> Edit, `srv - tool (MCP)` -> mcp__srv__tool); None for a
    name that is no known tool."""
    if is_mcp:
        srv_tool = name.split(" - ", 1)
        return "mcp__" + "__".join(re.sub(r"\W+", "_", x.strip()) for x in srv_tool)
    if name in TOOL_ALIASES:
        return TOOL_ALIASES[name]
    if name in KNOWN_TOOLS:
        return name
    return None


def _read_result_blocks(lines: list[str], i: int, inline_result: str | None) -> tuple[list[list], int]:
    """The result blocks from line i on: each starts at a `  ⎿  ` line and goes on with the lines indented five
    spaces (and blank lines when the output goes on after them). A block is a list of (text without its indent,
    raw length of the line); the next line's index."""
    blocks: list[list[tuple[str, int]]] = []
    if inline_result is not None:
        blocks.append([(inline_result, 0)])
    while i < len(lines):
        line = lines[i]
        if line.startswith("  ⎿"):
            blocks.append([(line[3:].lstrip(" "), len(line))])
        elif line.startswith("     ") and blocks:
            blocks[-1].append((line[5:], len(line)))
        elif not line.strip() and blocks and _output_goes_on(lines, i):
            blocks[-1].append(("", 0))
        else:
            break
        i += 1
    return blocks, i


def _output_goes_on(lines: list[str], i: int) -> bool:
    """After the blank line i, is there more indented output (before the next item)?"""
    j = i + 1
    while j < len(lines) and not lines[j].strip():
        j += 1
    return j < len(lines) and lines[j].startswith("     ") and not is_item_start(lines[j])


def _is_custom_agent(name: str, blocks: list[list]) -> bool:
    """`haiku-stage-artifact-writer(…)`: a dashed lower-case name whose result reads like an agent's (or none)."""
    first_res = blocks[0][0][0] if blocks else ""
    return bool(CUSTOM_AGENT_RE.match(name)) and (
        bool(re.search(r"Done \(|tool uses|Backgrounded agent|Agent", first_res)) or not blocks)


def _set_arguments(item: dict, tool: str, name: str, args: str) -> None:
    """The header's arguments as the hook shows them: `command` (Bash), `path` (file tools) or `input`."""
    if tool == "Bash":
        item["command"] = args
    elif tool in ("Read", "Write", "Edit", "MultiEdit", "NotebookEdit"):
        kv = kv_args(args)
        item["path"] = kv.get("file_path") or kv.get("notebook_path") or kv.get("_") or args
    elif tool == "Grep":
        kv = kv_args(args)
        inp = {k: v for k, v in kv.items() if k != "_"}
        if not inp:
            inp = {"pattern": args}
        item["input"] = inp
    elif tool == "WebSearch":
        kv = kv_args(args)
        item["input"] = {"query": kv.get("_") or kv.get("query") or args.strip('"')}
    elif tool == "WebFetch":
        item["input"] = {"url": args.strip('"')}
    elif tool == "Task":
        item["input"] = {"description": args, "subagent_type": name if name not in TOOL_ALIASES else ""}
    elif tool == "Skill":
        item["input"] = {"skill": args}
    elif args:
        item["input"] = {"args": args}


def _elided_lines(blocks: list[list]) -> int:
    """How many result lines `… +N lines (ctrl+o to expand)` hid, in all blocks."""
    elided = 0
    for block in blocks:
        for text, _ in block:
            m = ELIDED_RE.search(text)
            if m:
                elided += int(m.group(1))
    return elided


def _judge_result(tool: str, blocks: list[list], widths: tuple[int, int], exit_codes: bool) -> dict:
    """Outcome, exit, error, output and flags from the result blocks (the first one says the outcome)."""
    if not blocks:
        return {"outcome": "noresult"}
    first_text = blocks[0][0][0]
    body = [(t, ln) for t, ln in blocks[0] if not ELIDED_RE.search(t)]
    is_err = bool(re.match(r"^(Error|Exit code \d+)", first_text))
    full = join_lines(body, widths[0] if is_err else widths[1])
    fields = _outcome_fields(tool, first_text, full, exit_codes)
    extra = [b for b in blocks[1:] if not re.match(r"^\((?:timeout [0-9hms ]+)\)$", b[0][0])]
    if any(re.search(r"Interrupted", b[0][0]) for b in extra) and fields["outcome"] == "ok":
        fields["interrupted_after"] = True
    return fields


def _outcome_fields(tool: str, first_text: str, full: str, exit_codes: bool = True) -> dict:
    """The fields the first result block sets; first_text: its first line, full: its text unwrapped."""
    if re.match(r"^Interrupted", first_text):
        return {"outcome": "interrupted"}
    if re.match(r"^Cancelled", first_text):
        return {"outcome": "cancelled", "error": full}
    if re.match(r"^(User rejected|No \(tell Claude|Tool use rejected)", first_text):
        return {"outcome": "rejected"}
    if re.match(r"^(Error: )?Permission to use .* (has been )?denied", full.replace("\n", " ")):
        return {"outcome": "denied", "error": re.sub(r"^Error:\s*", "", full, count=1)}
    if tool == "Bash" and exit_codes and re.match(
            r"^Error: (?!Exit code \d+|Command timed out|Command failed|.*(?:interrupted|killed|blocked))", first_text):
        # a Bash command whose own output starts with "Error:" (exit 0, e.g. piped to tail)
        return {"outcome": "ok", "output": full}
    if re.match(r"^Error", first_text) or re.match(r"^(Exit code \d+)", first_text) or (
            tool in VALIDATION_TOOLS and re.match(VALIDATION_RE, first_text)):
        return _error_fields(tool, re.sub(r"^Error:\s*", "", full, count=1))
    fields = {"outcome": "ok", "output": full}
    if re.match(r"^Running in the background", first_text) or re.search(r"Backgrounded agent", first_text):
        fields["background"] = True
    return fields


def _error_fields(tool: str, err: str) -> dict:
    """An error result: `fail` for Bash and other tools with hooks, `tool_error` for input validation."""
    fields: dict = {}
    em = re.match(r"^Exit code (\d+)", err)
    if em:
        fields["exit"] = int(em.group(1))
    if tool == "Bash":
        interrupted = re.search(r"Interrupted|interrupted by user", err) and not em
        fields["outcome"] = "interrupted" if interrupted else "fail"
    elif tool in VALIDATION_TOOLS:
        fields["outcome"] = "tool_error"
    else:
        fields["outcome"] = "fail"
    fields["error"] = err
    return fields


# ---------------------------------------------------------------------------------------------
# A history


def list_exports(raw_dir: str, include: str, first=()) -> list[dict]:
    """The files of RAW_DIR's manifest that are stored under RAW_DIR/files and match `include`, in natural order of
    their file names, whatever their folders (those named in `first` before all others), with their text and whether
    it has the stored length."""
    with open(os.path.join(raw_dir, "manifest.json"), encoding="utf-8") as fh:
        manifest = json.load(fh)
    include_re = re.compile(include)
    files = []
    for path, info in manifest.items():
        full = os.path.join(raw_dir, "files", path)
        if not include_re.search(path) or not os.path.isfile(full):
            continue
        with open(full, encoding="utf-8") as fh:
            text = fh.read()
        files.append({"name": path, "commit": info["commit"], "chars": len(text), "total": info["total"],
                      "complete": len(text) == info["total"], "text": text})
    files.sort(key=lambda f: (f["name"] not in first, natural_key(os.path.basename(f["name"])), natural_key(f["name"])))
    return files


def without_earlier_copies(exports: list[dict]) -> tuple[list[dict], dict[str, str]]:
    """The exports without those whose whole text begins another one: a session exported, then
    continued and exported again under another name, is in the second file whole (niiniyare/erp,
    provide-io/flavorpack). Replayed twice, its failures would all come back as recurring.
    Returns (the exports kept, {name dropped: name of the file that holds it})."""
    superseded = {}
    for export in exports:
        text = export["text"].rstrip()
        holder = next((other["name"] for other in exports if other is not export and len(other["text"]) > len(text)
                       and other["text"].startswith(text)), None)
        if text and holder is not None:
            superseded[export["name"]] = holder
    return [e for e in exports if e["name"] not in superseded], superseded


class HistoryBuilder:
    """The events of a history as its sessions are added, and what meta.json counts of them."""

    def __init__(self, root: ProjectRoot, terminal_width: int = 0, cwd_resets: bool = False):
        self.root = root
        self.terminal_width = terminal_width
        self.cwd_resets = cwd_resets
        self.events: list[dict] = []
        self.sessions: list[dict] = []
        self.stats: collections.Counter = collections.Counter()
        self.seq = 0
        self.redacted = 0

    def _redact(self, text: str) -> str:
        text, count = redact(text)
        self.redacted += count
        return text

    def add_session(self, export: dict) -> None:
        """One transcript (an entry of list_exports) -> a `session` event and its prompt and tool events."""
        items, file_stats = parse_export(export["text"], self.terminal_width)
        session = export["name"]
        self.events.append({"kind": "session", "session": session, "time": None, "cwd": "."})
        cwd = self.root.abs_root
        tool_events = bash_failures = 0
        for n, item in enumerate(items):
            if item["kind"] == "prompt":
                text = self._redact(self.root.sub_root(item["text"]))
                self.events.append({"kind": "prompt", "session": session, "line": item["line"], "text": text})
                self.stats["prompts"] += 1
                continue
            self.seq += 1
            tool_events += 1
            if self.cwd_resets and item["tool"] == "Bash":
                cwd = self.root.abs_root
            event, cwd = self._tool_event(item, session, n, cwd)
            self.events.append(event)
            self._count(item)
            if item["outcome"] == "fail" and item["tool"] == "Bash":
                bash_failures += 1
        self.stats["sessions"] += 1
        if bash_failures:
            self.stats["sessions_with_bash_failures"] += 1
        date = re.search(r"\*\*Date:\*\* (\d{4}-\d{2}-\d{2})", export["text"]) or re.search(
            r"Date: +\w{3} (\w{3} \d+ [\d:]+ \d{4})", export["text"])
        self.sessions.append({"name": session, "added": None, "date_seen": date.group(1) if date else None,
                              "commit": export["commit"], "chars": export["chars"],
                              "complete": export["complete"], "tool_events": tool_events,
                              "bash_failures": bash_failures, "width": file_stats.get("width")})

    def _tool_event(self, item: dict, session: str, n: int, cwd: str) -> tuple[dict, str]:
        """The event of a tool item (n: its index among the session's items; cwd: the absolute folder before it),
        and the folder after it."""
        root = self.root
        event = {"kind": "tool", "session": session, "seq": self.seq, "n": n, "line": item["line"],
                 "tool": item["tool"], "command": "", "path": "", "outcome": item["outcome"], "exit": item["exit"],
                 "error": "", "output": "", "cwd": root.rel_cwd(cwd), "cwd_post": root.rel_cwd(cwd)}
        cmd = item.get("command", "")
        if item["tool"] == "Bash" and not item.get("synthetic"):
            cwd = apply_cd(cwd, cmd, root, item["outcome"] == "ok", item.get("error", ""))
            # "Shell cwd was reset to X" in the output wins
            if item.get("_cwd_reset"):
                cwd = os.path.normpath(item["_cwd_reset"])
            event["cwd_post"] = root.rel_cwd(cwd)
        path = item.get("path", "")
        if path:
            if path.startswith("~/") or path.startswith("/"):
                path = root.sub_root(path)
            else:
                path = "<ROOT>/" + path  # the export shows paths relative to the project root
        texts = {"command": root.sub_root(cmd), "path": path, "error": root.sub_root(item.get("error", "")),
                 "output": root.sub_root(item.get("output", ""))[:2000]}
        for key, value in texts.items():
            event[key] = self._redact(value)
        if "input" in item:
            event["input"] = {key: self._redact(root.sub_root(value)) if isinstance(value, str) else value
                              for key, value in item["input"].items()}
        for flag in FLAGS:
            if item.get(flag):
                event[flag] = item[flag]
        return event, cwd

    def _count(self, item: dict) -> None:
        stats = self.stats
        is_bash = item["tool"] == "Bash" and not item.get("synthetic")
        stats["tool_events"] += 1
        stats["outcome_" + item["outcome"]] += 1
        if item.get("synthetic"):
            stats["synthetic"] += 1
        if is_bash:
            stats["bash"] += 1
        if item["outcome"] == "fail":
            stats["failures"] += 1
            if item["tool"] == "Bash":
                stats["failures_bash"] += 1
            if item.get("trunc"):
                stats["truncated_failures"] += 1
        if item["outcome"] == "tool_error":
            stats["tool_errors"] += 1
        if item.get("trunc"):
            stats["truncated_commands"] += 1

    def meta(self, name: str, conf: dict) -> dict:
        """meta.json of history `name` (conf: its HISTORIES entry)."""
        stats = self.stats
        sessions = self.sessions
        outcomes = {k[len("outcome_"):]: v for k, v in stats.items() if k.startswith("outcome_")}
        return {
            "project": name,
            "repo": conf["repo"],
            "commit": max(sessions, key=lambda s: natural_key(s["name"]))["commit"] if sessions else None,
            "commit_note": "the search index stores one version per file; each session lists the commit of the "
                           "version read; `commit` is the one of the last session's file",
            "paths": conf["paths"],
            "include": conf["include"],
            "remote": conf["remote"],
            "parser": PARSER_VERSION + " (bench/history_export.py)",
            "order": conf["order"],
            "selection": conf.get("selection", ""),
            "transcription": conf.get("transcription", ""),
            "sessions": sessions,
            "duplicates_dropped": [],
            "secrets_redacted": self.redacted,
            "stats": {
                "sessions": stats["sessions"],
                "sessions_with_bash_failures": stats["sessions_with_bash_failures"],
                "tool_events": stats["tool_events"] - stats["synthetic"],
                "synthetic_events": stats["synthetic"],
                "bash_events": stats["bash"],
                "prompts": stats["prompts"],
                "failures": stats["failures"],
                "failures_bash": stats["failures_bash"],
                "tool_errors": stats["tool_errors"],
                "truncated_commands": stats["truncated_commands"],
                "truncated_failures": stats["truncated_failures"],
                "outcomes": outcomes,
            },
        }


def build(raw_dir: str, out_dir: str, name: str, conf: dict) -> dict:
    """RAW_DIR (manifest.json, files/) -> OUT_DIR/events.jsonl and meta.json of history `name`; returns the meta."""
    builder = HistoryBuilder(ProjectRoot(conf["roots"], conf["home"]), conf.get("width", 0),
                             conf.get("cwd_resets", False))
    exports, superseded = without_earlier_copies(list_exports(raw_dir, conf["include"], conf.get("first", ())))
    for export in exports:
        builder.add_session(export)
    meta = builder.meta(name, conf)
    if superseded:
        meta["superseded"] = superseded
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "events.jsonl"), "w", encoding="utf-8") as fh:
        for event in builder.events:
            fh.write(json.dumps(event, ensure_ascii=False) + "\n")
    with open(os.path.join(out_dir, "meta.json"), "w", encoding="utf-8") as fh:
        json.dump(meta, fh, indent=1, ensure_ascii=False)
        fh.write("\n")
    return meta


# ---------------------------------------------------------------------------------------------
# Command line


def _cmd_savepart(args: argparse.Namespace) -> int:
    if isinstance(sys.stdin, io.TextIOWrapper):
        sys.stdin.reconfigure(encoding="utf-8")  # the page holds non-ASCII text whatever the locale
    try:
        text = decode_page(sys.stdin.read())
    except json.JSONDecodeError as exc:
        print(f"savepart: the page is not a JSON-escaped string (a copying slip?): {exc}", file=sys.stderr)
        return 1
    save_part(args.dir, args.name, args.offset, args.total, args.commit, text)
    print(f"{args.name}@{args.offset}: {len(text)} chars (total {args.total})")
    expected = min(PAGE_CHARS, args.total - args.offset)
    if len(text) != expected:
        print(f"savepart: expected {expected} chars, got {len(text)}: copy this page again", file=sys.stderr)
        return 1
    return 0


def _cmd_assemble(args: argparse.Namespace) -> int:
    if not os.path.isfile(os.path.join(args.dir, "manifest.json")):
        print(f"assemble: no manifest.json in {args.dir}", file=sys.stderr)
        return 2
    print("\n".join(assemble(args.dir)))
    return 0


def _cmd_merge(args: argparse.Namespace) -> int:
    try:
        report = merge(args.out, args.dirs)
    except ValueError as exc:
        print(f"merge: {exc}", file=sys.stderr)
        return 2
    print("\n".join(report))
    return 0


def _cmd_build(args: argparse.Namespace) -> int:
    if not os.path.isfile(os.path.join(args.raw_dir, "manifest.json")):
        print(f"build: no manifest.json in {args.raw_dir}", file=sys.stderr)
        return 2
    meta = build(args.raw_dir, args.out_dir, args.history, HISTORIES[args.history])
    print(f"{args.history}: {json.dumps(meta['stats'])}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    savepart = commands.add_parser("savepart", help="decode one JSON-escaped page (stdin) and store it as a part")
    savepart.add_argument("dir", help="the folder of parts/ and manifest.json")
    savepart.add_argument("name", help="the file's path in its repository")
    savepart.add_argument("offset", type=int, help="where the page starts in the file (characters)")
    savepart.add_argument("total", type=int, help="the file's length (total_chars)")
    savepart.add_argument("commit", help="the commit of the stored version")
    savepart.set_defaults(run=_cmd_savepart)
    assemble_cmd = commands.add_parser("assemble", help="join the parts into files/ and report gaps")
    assemble_cmd.add_argument("dir")
    assemble_cmd.set_defaults(run=_cmd_assemble)
    merge_cmd = commands.add_parser("merge", help="the complete files of several part folders into one")
    merge_cmd.add_argument("out", help="the folder to write (emptied first)")
    merge_cmd.add_argument("dirs", nargs="+", help="the part folders, the first one preferred")
    merge_cmd.set_defaults(run=_cmd_merge)
    build_cmd = commands.add_parser("build", help="parse the transcripts into events.jsonl and meta.json")
    build_cmd.add_argument("raw_dir", help="the folder of manifest.json and files/")
    build_cmd.add_argument("out_dir", help="where events.jsonl and meta.json go")
    build_cmd.add_argument("--history", required=True, choices=sorted(HISTORIES), help="the HISTORIES entry")
    build_cmd.set_defaults(run=_cmd_build)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
