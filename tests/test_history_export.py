"""bench/history_export.py: a Claude Code `/export` transcript parsed into replay events, and a file copied in
pages (savepart) joined back (assemble, merge), with a missing page found."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# imported after the root is on sys.path (as tests/test_bench_smoke.py does), by name: no import below the code
history_export = importlib.import_module("bench.history_export")

SCRIPT = ROOT / "bench" / "history_export.py"

CONF = {
    "repo": "someone/demo",
    "remote": "https://github.com/someone/demo.git",
    "roots": ["/home/me/demo", "~/demo"],
    "home": "/home/me",
    "paths": ["sessions"],
    "include": r"-export\.md$",
    "order": "by name",
}

EXPORT = """\
 ▐▛███▜▌   Claude Code v2.1.126
▝▜█████▛▘  Sonnet 4.6 · Claude Pro
  ▘▘ ▝▝    ~/demo

❯ fix the build

● I'll read the sources first.

  Read 2 files (ctrl+o to expand)

● Bash(cd /home/me/demo/build && make)
  ⎿  [100%] Built target demo

● Bash(./demo --check)
  ⎿  Error: Exit code 1
     demo: unknown option --check

● Update(src/main.c)
  ⎿  Added 1 line, removed 1 line

❯ /export
  ⎿  Conversation exported to: sessions/one-export.md
"""


def _build(tmp_path: Path) -> tuple[list[dict], dict]:
    raw = tmp_path / "raw"
    (raw / "files" / "sessions").mkdir(parents=True)
    (raw / "files" / "sessions" / "one-export.md").write_text(EXPORT, encoding="utf-8")
    (raw / "files" / "sessions" / "notes.md").write_text("● Bash(ls)\n  ⎿  x\n", encoding="utf-8")  # not included
    manifest = {"sessions/one-export.md": {"total": len(EXPORT), "commit": "c1"},
                "sessions/notes.md": {"total": 18, "commit": "c1"}}
    (raw / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    meta = history_export.build(str(raw), str(tmp_path / "out"), "demo", CONF)
    lines = (tmp_path / "out" / "events.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads((tmp_path / "out" / "meta.json").read_text(encoding="utf-8")) == meta
    return [json.loads(line) for line in lines], meta


def test_an_export_gives_its_prompt_and_tool_events(tmp_path):
    events, meta = _build(tmp_path)
    assert [(e["kind"], e.get("tool")) for e in events] == [
        ("session", None), ("prompt", None), ("tool", "Read"), ("tool", "Read"),
        ("tool", "Bash"), ("tool", "Bash"), ("tool", "Edit")]
    session, prompt, read, _, make, check, edit = events
    assert session == {"kind": "session", "session": "sessions/one-export.md", "time": None, "cwd": "."}
    assert prompt["text"] == "fix the build"  # `/export` is a local command: no prompt
    assert read["synthetic"] is True and read["path"] == "" and read["outcome"] == "ok"

    assert make["command"] == "cd <ROOT>/build && make"
    assert (make["outcome"], make["exit"], make["output"]) == ("ok", None, "[100%] Built target demo")
    assert (make["cwd"], make["cwd_post"]) == (".", "build")

    assert check["command"] == "./demo --check"
    assert (check["outcome"], check["exit"]) == ("fail", 1)
    assert check["error"] == "Exit code 1\ndemo: unknown option --check"
    assert (check["cwd"], check["cwd_post"]) == ("build", "build")
    assert [e["seq"] for e in (read, make, check, edit)] == [1, 3, 4, 5]

    assert (edit["path"], edit["outcome"]) == ("<ROOT>/src/main.c", "ok")
    assert edit["output"] == "Added 1 line, removed 1 line"

    assert [s["name"] for s in meta["sessions"]] == ["sessions/one-export.md"]
    assert meta["sessions"][0]["complete"] is True and meta["sessions"][0]["bash_failures"] == 1
    stats = meta["stats"]
    assert (stats["tool_events"], stats["synthetic_events"], stats["bash_events"]) == (3, 2, 2)
    assert (stats["prompts"], stats["failures_bash"], stats["outcomes"]) == (1, 1, {"ok": 4, "fail": 1})


def _savepart(folder: Path, name: str, offset: int, total: int, text: str) -> subprocess.CompletedProcess:
    """The CLI, fed the page as the index shows it: JSON-escaped, plus the newline a file-creation tool adds."""
    page = json.dumps(text)[1:-1] + "\n"
    return subprocess.run([sys.executable, str(SCRIPT), "savepart", str(folder), name, str(offset), str(total), "c9"],
                          input=page, capture_output=True, text=True, encoding="utf-8", check=False)


def test_pages_saved_join_back_and_a_missing_page_is_a_gap(tmp_path):
    pages = tmp_path / "pages"
    first = "● Bash(echo \"hi\")\n  ⎿  hi\n" + "x" * (history_export.PAGE_CHARS - 26)
    assert len(first) == history_export.PAGE_CHARS
    for offset, text in [(0, first), (16_000, "tail\n")]:
        done = _savepart(pages, "docs/a-export.md", offset, 16_005, text)
        assert done.returncode == 0, done.stderr
    assert _savepart(pages, "docs/b-export.md", 0, 40_000, "y" * 16_000).returncode == 0
    assert _savepart(pages, "docs/b-export.md", 32_000, 40_000, "z" * 8_000).returncode == 0  # 16000 missing

    assert (pages / "parts" / "docs__a-export.md@00016000").read_text(encoding="utf-8") == "tail\n"
    assert json.loads((pages / "manifest.json").read_text()) == {
        "docs/a-export.md": {"commit": "c9", "total": 16_005}, "docs/b-export.md": {"commit": "c9", "total": 40_000}}
    assert history_export.assemble(str(pages)) == [
        "docs/a-export.md: complete",
        "GAP docs/b-export.md: part at 32000, have 16000",
        "docs/b-export.md: partial 16000/40000",
    ]
    assert (pages / "files" / "docs" / "a-export.md").read_text(encoding="utf-8") == first + "tail\n"
    assert (pages / "files" / "docs" / "b-export.md").read_text(encoding="utf-8") == "y" * 16_000

    merged = tmp_path / "merged"
    assert history_export.merge(str(merged), [str(pages)]) == [
        "skip (partial 16000/40000): docs/b-export.md from pages", "1 files"]
    assert json.loads((merged / "manifest.json").read_text()) == {"docs/a-export.md": {"commit": "c9", "total": 16_005}}
    assert (merged / "files" / "docs" / "a-export.md").read_text(encoding="utf-8") == first + "tail\n"
    with pytest.raises(ValueError, match="would delete the pages"):
        history_export.merge(str(pages), [str(merged), str(pages)])
    assert (pages / "parts" / "docs__a-export.md@00016000").is_file()


def test_a_page_of_the_wrong_length_is_flagged(tmp_path):
    done = _savepart(tmp_path, "docs/c-export.md", 0, 20_000, "w" * 15_999)  # a dropped character
    assert done.returncode == 1
    assert "expected 16000 chars, got 15999" in done.stderr
    assert history_export.decode_page('a\\n\\"b\\" \\u23fa\n') == 'a\n"b" ⏺'


@pytest.mark.parametrize(("second", "third", "command"), [
    # the source's space fell on the hard break: the next line is one column deeper
    ('      && bash test/print_ast/run_tests.sh 2>&1 | grep -E "(FAIL|Results)" | tail', "       -5)",
     "&& bash test/print_ast/run_tests.sh 2>&1 | grep -E \"(FAIL|Results)\" | tail -5"),
    # the wrap ate the space between a program and its option: nothing shows it but the words
    ('      && bash test/print_ast/run_tests.sh 2>&1 | grep -E "(FAIL|Results)" | tail', "      -5)",
     "&& bash test/print_ast/run_tests.sh 2>&1 | grep -E \"(FAIL|Results)\" | tail -5"),
    # a word broken in the middle joins back whole
    ("      && cmake --build cmake-build-debug --target all --parallel 4 && ls cmake-b", "      uild-debug)",
     "&& cmake --build cmake-build-debug --target all --parallel 4 && ls cmake-build-debug"),
])
def test_a_space_at_a_wrap_point_is_kept(second, third, command):
    first = "● Bash(bash test/invalid/run_tests.sh 2>&1 | grep -E \"(FAIL|Results)\" | tail -5"
    lines = [first, second, third, "  ⎿  Results: 13 passed"]
    assert len(first) == 79 and len(second) == 80  # (a soft wrap after the first: `&&` would not fit)
    header, _inline, _next = history_export._read_header(lines, 0, 80)
    assert header.endswith(command + ")")


def test_files_named_first_come_before_the_natural_order(tmp_path):
    """A session whose file name has no time (`2026-04-23-caveat…`) sorts after that day's timed ones;
    a history's `first` puts it where it belongs."""
    raw = tmp_path / "raw"
    names = ["logs/2026-04-23-1503-a.txt", "logs/2026-04-23-caveat.txt", "logs/2026-04-24-0051-b.txt"]
    for name in names:
        (raw / "files" / "logs").mkdir(parents=True, exist_ok=True)
        (raw / "files" / name).write_text("x", encoding="utf-8")
    (raw / "manifest.json").write_text(json.dumps({n: {"total": 1, "commit": "c1"} for n in names}), encoding="utf-8")
    natural = [f["name"] for f in history_export.list_exports(str(raw), r"\.txt$")]
    assert natural == names
    pinned = [f["name"] for f in history_export.list_exports(str(raw), r"\.txt$", first=["logs/2026-04-23-caveat.txt"])]
    assert pinned == [names[1], names[0], names[2]]


def test_a_session_exported_again_after_it_went_on_is_replayed_once():
    """niiniyare/erp: the 07-18 export begins with the whole 07-16 one (the session went on and
    was exported again). Replayed both, every failure of 07-16 would come back as recurring. A
    file that is all in another one adds nothing, however short."""
    first = {"name": "2025-07-16-a.txt", "text": "welcome\n⏺ Bash(go test ./...)\n  ⎿  Error: x\n"}
    later = {"name": "2025-07-18-b.txt", "text": first["text"] + "⏺ Bash(go build)\n"}
    other = {"name": "2025-07-21-c.txt", "text": "welcome\n⏺ Bash(make)\n"}
    kept, superseded = history_export.without_earlier_copies([first, later, other])
    assert [e["name"] for e in kept] == ["2025-07-18-b.txt", "2025-07-21-c.txt"]
    assert superseded == {"2025-07-16-a.txt": "2025-07-18-b.txt"}


@pytest.mark.parametrize(("lines", "command"), [
    # the label's column as far right as it goes: the arguments wrap two columns before it
    (["⏺ Bash(cd /Users/a1/Codes/VidSum/.worktrees/input-task-creation/sr  timeout: 5m ",
      "      c-tauri && cargo check 2>&1)                                  0s"],
     "cd /Users/a1/Codes/VidSum/.worktrees/input-task-creation/src-tauri && cargo check 2>&1"),
    (["⏺ Bash(cargo check --manifest-path                                  timeout: ",
      "      /Users/a1/Codes/VidSum/src-tauri/Cargo.toml 2>&1)             5m 0s"],
     "cargo check --manifest-path /Users/a1/Codes/VidSum/src-tauri/Cargo.toml 2>&1"),
    (["⏺ Bash(cd /Users/a1/Codes/VidSum/src-tauri && cargo check 2>&1 |   timeout: 3m ",
      "      head -100)                                                   0s"],
     "cd /Users/a1/Codes/VidSum/src-tauri && cargo check 2>&1 | head -100"),
    # just right of a short line: the lines are the command's own
    (["⏺ Bash(pnpm tauri dev 2>&1 & timeout: 3m 0s", "      sleep 60)"], "pnpm tauri dev 2>&1 &\nsleep 60"),
    (["⏺ Bash(cargo check 2>&1) timeout: 3m 0s"], "cargo check 2>&1"),
])
def test_a_timeout_label_in_a_column_of_its_own_is_not_part_of_the_command(lines, command):
    """Claude Code 2.0 sets a long header's ` timeout: 3m 0s` in a column at the right (Sticky-Finger/VIDSUM)."""
    prose = "⏺ " + "w" * 78  # an assistant line as wide as the terminal: the export's width is 80
    export = [prose, "", *lines, "  ⎿  Error: Exit code 101", "     error: x", ""]
    items, _ = history_export.parse_export("\n".join(export))
    bash = [(item["tool"], item["command"], item["outcome"]) for item in items if item.get("kind") == "tool"]
    assert bash == [("Bash", command, "fail")]


def test_a_history_s_terminal_width_holds_for_a_session_of_short_headers():
    """A short session whose headers are all short (Sticky-Finger/VIDSUM) is read at its history's
    terminal width: a short output line ends where the command's own line ended."""
    export = "\n".join([
        "⏺ Bash(cd /Users/a1/app && cargo check 2>&1)",
        "  ⎿  Error: Exit code 101",
        "         Checking app v0.1.0 (/Users/a1/app)",
        "     error[E0432]: unresolved import `reqwest::multipart`",
        "",
        "⏺ The import needs a feature of reqwest.",
        ""])
    assert history_export.parse_export(export)[1]["width"] == 44  # its longest header
    items, stats = history_export.parse_export(export, terminal_width=80)
    assert stats["width"] == 80
    bash = next(item for item in items if item.get("tool") == "Bash")
    assert bash["error"].splitlines()[1:] == ["    Checking app v0.1.0 (/Users/a1/app)",
                                              "error[E0432]: unresolved import `reqwest::multipart`"]


def test_an_export_from_before_exit_codes_reads_error_as_a_failure():
    """Claude Code before 2.0 showed a failed command as `Error: <its stderr>` (sandahltim/RFID3,
    TomShtern/client-server-encrypted-backup-framework-clean); `ctrl+r` then opened a result."""
    export = "\n".join([
        "● Bash(Get-ChildItem -Path . -Filter *.py)",
        "  ⎿  Error: /usr/bin/bash: line 1: Get-ChildItem: command not found",
        "",
        "● Bash(find . -name '*.py')",
        "  ⎿  ./server.py",
        "     ./client.py",
        "     … +7 lines (ctrl+r to expand)",
        ""])
    items, _ = history_export.parse_export(export)
    failed, found = items
    assert (failed["outcome"], failed["exit"]) == ("fail", None)
    assert failed["error"] == "/usr/bin/bash: line 1: Get-ChildItem: command not found"
    assert (found["outcome"], found["elided"], found["output"]) == ("ok", 7, "./server.py\n./client.py")


def test_signed_urls_and_mysql_passwords_are_redacted():
    signed = 'curl -sL "https://x.example/a.png?UCloudPublicKey=TOKEN_e15ba47a-d098&Signature=abcDEF123%3D&Expires=1779"'
    assert history_export.redact(signed) == (
        'curl -sL "https://x.example/a.png?UCloudPublicKey=<REDACTED>&Signature=<REDACTED>&Expires=1779"', 2)
    assert history_export.redact("mysql -u app -p'hunter22' -D inv -e 'SHOW TABLES'")[0] == (
        "mysql -u app -p'<REDACTED>' -D inv -e 'SHOW TABLES'")
    assert history_export.redact("mkdir -p build && mysql -u root -p -e 'SHOW'") == (
        "mkdir -p build && mysql -u root -p -e 'SHOW'", 0)
    header_payload = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZSIsInJlZiI6InJtb21i"
    wrapped = f"   6 +  VITE_SUPABASE_ANON_KEY={header_payload}\n     + MjA3MDI5Mzg2NX0.{'S' * 43}\n   7"
    assert history_export.redact(wrapped)[0] == (
        "   6 +  VITE_SUPABASE_ANON_KEY=<REDACTED>\n     + <REDACTED>\n   7")
    assert history_export.redact("see docs.example.com/a.b and v1.2.3")[1] == 0


@pytest.mark.parametrize(("cwd_resets", "second_cwd"), [(False, "sub"), (True, ".")])
def test_a_windows_cd_is_followed_and_a_history_may_start_each_call_at_its_root(tmp_path, cwd_resets, second_cwd):
    """TomShtern/client-server-encrypted-backup-framework-clean: Git Bash on Windows, `cd "C:\\…\\proj\\sub"`;
    its calls start at the root (`cd FletV2 && python x.py` works call after call)."""
    export = "\n".join(["● Bash(cd \"C:\\Users\\me\\proj\\sub\" && python x.py)", "  ⎿  ok", "",
                        "● Bash(python y.py)", "  ⎿  ok", ""])
    raw = tmp_path / "raw"
    (raw / "files").mkdir(parents=True)
    (raw / "files" / "2025-08-01-a.txt").write_text(export, encoding="utf-8")
    (raw / "manifest.json").write_text(json.dumps({"2025-08-01-a.txt": {"total": len(export), "commit": "c"}}))
    conf = dict(CONF, roots=["C:\\Users\\me\\proj", "/c/Users/me/proj"], home="/c/Users/me", include=r"\.txt$",
                cwd_resets=cwd_resets)
    history_export.build(str(raw), str(tmp_path / "out"), "demo", conf)
    events = [json.loads(line) for line in (tmp_path / "out" / "events.jsonl").read_text(encoding="utf-8").splitlines()]
    first, second = [e for e in events if e["kind"] == "tool"]
    assert (first["cwd"], first["cwd_post"], first["command"]) == (".", "sub", 'cd "<ROOT>\\sub" && python x.py')
    assert second["cwd"] == second_cwd


@pytest.mark.parametrize("error", ["(eval):cd:1: no such file or directory: tests/taster",
                                   "bash: line 1: cd: tests/taster: No such file or directory"])
def test_a_cd_that_failed_does_not_move_the_shell(error):
    """provide-io/flavorpack (zsh on macOS): `cd tests/taster && …` failed at its `cd`, the
    shell being there already; read as moved, the folder became tests/taster/tests/taster."""
    root = history_export.ProjectRoot(["/src/app"], "/home/me")
    cwd = "/src/app/tests/taster"
    assert history_export.apply_cd(cwd, "cd tests/taster && ./dist/taster.psp env", root, False, error) == cwd
    assert history_export.apply_cd("/src/app", "cd tests/taster && make", root, False, "make: *** [all] Error 2") == cwd
