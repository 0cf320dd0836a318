"""CI smoke of the benchmark tools (bench/): the generator writes a valid, fresh, deterministic
home, and the runner produces a well-formed report from a tiny one. The full benchmark is
`make bench`; this only keeps its code from rotting."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.generate import generate
from bench.run import callgrind_instructions, faketime_library, fix_index_inodes, index_rows, share

NOW = 1_795_000_000.0  # a fixed clock: the same seed must give the same bytes
ID_RE = re.compile(r"^learn-\d{8}T\d{6}Z-[0-9a-f]{6}$")
KEY_RE = re.compile(r"^(err|txt):[0-9a-f]{16}$")


def _records(home: Path) -> list[dict]:
    out = []
    for path in sorted(home.glob("projects/*/*.jsonl")) + sorted(home.glob("global/*.jsonl")):
        out.extend(json.loads(line) for line in path.read_text().splitlines() if line.strip())
    out.extend(json.loads((home / "global" / "preferences.json").read_text())["learnings"])
    return out


def _index_is_fresh(home: Path) -> bool:
    rows = index_rows(home, "SELECT path, size, mtime_ns, ino FROM files")
    assert rows, "the index knows no file"
    for path, size, mtime, ino in rows:
        st = os.stat(home / path)
        if (st.st_size, st.st_mtime_ns, st.st_ino) != (size, mtime, ino):
            return False
    return True


def test_generated_home_is_realistic_and_indexed(tmp_path):
    summary = generate(tmp_path / "g", 400, 8, seed=3, now=NOW)
    home = Path(summary.home)
    recs = _records(home)
    assert len(recs) == summary.learnings == 400
    assert len(list((home / "projects").iterdir())) == 8
    assert len({r["id"] for r in recs}) == len(recs)
    for r in recs:
        assert ID_RE.match(r["id"]), r["id"]
        assert KEY_RE.match(r["key"]), r["key"]
        assert r["type"] in ("error", "pattern", "preference", "workflow")
        assert 1 <= r["frequency"] <= 12 and 0 < r["impact"] <= 1
        if r["type"] == "error":
            assert 20 <= len(r["error"]) <= 400 and r["command"]
    statuses = {r["status"] for r in recs}
    assert {"active", "archived", "global"} <= statuses
    archived = sum(r["status"] == "archived" for r in recs)
    assert 0.05 < archived / len(recs) < 0.3
    keys_by_project = {}
    for path in home.glob("projects/*/learnings.jsonl"):
        for line in path.read_text().splitlines():
            keys_by_project.setdefault(json.loads(line)["key"], set()).add(path.parent.name)
    assert any(len(v) >= 2 for v in keys_by_project.values()), "no key shared across projects"
    assert any("docker" in json.dumps(r).lower() for r in recs)
    assert list((home / "sessions").glob("*.jsonl"))
    # Each work folder is the project `learn` will identify from a hook's cwd.
    from learn_cli.store.project import identify

    assert identify(summary.bench_project["root"]).id == summary.bench_project["id"]
    assert _index_is_fresh(home)


def test_generation_is_deterministic(tmp_path):
    a = generate(tmp_path / "a", 150, 4, seed=11, now=NOW, index=False)
    b = generate(tmp_path / "b", 150, 4, seed=11, now=NOW, index=False)
    files_a = sorted(Path(a.home).glob("projects/*/*.jsonl"))
    files_b = sorted(Path(b.home).glob("projects/*/*.jsonl"))
    assert [f.relative_to(a.home) for f in files_a] == [f.relative_to(b.home) for f in files_b]
    assert all(_strip(x, tmp_path) == _strip(y, tmp_path) for x, y in zip(files_a, files_b, strict=True))
    c = generate(tmp_path / "c", 150, 4, seed=12, now=NOW, index=False)
    first_c = min(Path(c.home).glob("projects/*/*.jsonl"))
    assert _strip(files_a[0], tmp_path) != _strip(first_c, tmp_path)


def _strip(path: Path, tmp: Path) -> str:
    """A file's text without the generation folder (which differs between a, b and c)."""
    text = path.read_text()
    for name in ("a", "b", "c"):
        text = text.replace(str(tmp / name), "X")
    return text


def test_a_copied_home_keeps_a_fresh_index(tmp_path):
    summary = generate(tmp_path / "g", 120, 3, seed=5, now=NOW)
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-a", summary.home, str(copy)], check=True)
    assert not _index_is_fresh(copy)  # new inodes
    fix_index_inodes(copy)
    assert _index_is_fresh(copy)


def test_smoke_run_writes_a_well_formed_report(tmp_path):
    out, svg = tmp_path / "BENCH.md", tmp_path / "plot.svg"
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "run.py"), "--smoke", "--runs", "1",
                           "--workdir", str(tmp_path / "work"), "--out", str(out), "--svg", str(svg)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    text = out.read_text()
    for heading in ("## Machine", "## Targets (CPU time)", "## CPU time against store size", "### Synthetic profile",
                    "### Realistic profile", "### In process", "## The homes", "## Method"):
        assert heading in text, heading
    assert "python -c pass" in text and "200" in text
    data = json.loads((tmp_path / "BENCH.json").read_text())
    assert data["sizes"] == [200] and data["smoke"] is True
    assert data["profiles"] == {"synthetic": [200], "realistic": [200]}
    measured = [r for r in data["results"] if "median_ms" in r]
    assert measured, "nothing was measured"
    for r in measured:
        once = "first run" in r["name"]  # happens once: one run, no warm-up
        assert r["runs"] == 1 and 0 < r["min_ms"] <= r["median_ms"] <= r["max_ms"]
        assert r["rss_mb"] > 0 and r["cpu_ms"] > 0
        if not once:
            assert r["cpu_ratio"] == r["cpu_ms"] / r["bare_cpu_ms"]
    names = {(r["profile"], r["name"]) for r in measured}
    for profile in ("synthetic", "realistic"):
        for kind in ("failure", "success (pair)", "success (plain)", "prompt", "SessionStart", "SessionEnd"):
            assert (profile, f"capture {kind}") in names, (profile, kind)
    assert ("realistic", "import (into a full home)") in names and ("synthetic", "import") in names
    failed = [r for r in data["results"] if "error" in r and "not available" not in r["error"]
              and "not installed" not in r["error"]]
    assert not failed, failed
    root = ET.fromstring(svg.read_text())
    assert root.tag.endswith("svg") and root.findall(".//{http://www.w3.org/2000/svg}path")


def test_a_maintained_home_has_had_yesterdays_promote_and_prune(tmp_path):
    """The daily benchmarks run on a home promoted and pruned the day before, as a real one."""
    summary = generate(tmp_path / "gen", 800, 8, seed=3, now=NOW, maintained=True)
    m = summary.maintenance
    assert m["at"] == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(NOW - 86400))
    assert m["low_since_changed"] > 0 and m["archived"] > 0 and m["seconds_promote"] > 0
    [(empty,)] = index_rows(Path(summary.home), "SELECT count(*) FROM learnings WHERE scope IN ('project', 'global') "
                            "AND status IS NOT 'archived' AND (derived IS NULL OR features IS NULL)")
    assert empty == 0  # what the daily run reads is in the index already


def test_the_realistic_profile_is_imported_with_its_mix(tmp_path):
    """The realistic file holds repeats, a team file, popular errors, archived entries, and its
    import merges the repeats: the home holds fewer learnings than the file entries."""
    from bench.realistic import finish_home, generate_export

    gen, summary = generate_export(tmp_path / "r", 1500, 10, seed=3, now=NOW)
    doc = json.loads(Path(summary.export).read_text())
    entries = sum(len(p["learnings"]) for p in doc["projects"].values()) + len(doc["global"]) + len(doc["archived"])
    assert entries == summary.entries == 1500
    assert summary.repeats > 50 and summary.shared_errors > 50 and summary.team_copies >= 60
    assert 0.1 < len(doc["archived"]) / entries < 0.2
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SELF_LEARNING", "PYTHON"))}
    env.update(SELF_LEARNING_HOME=str(gen.home), HOME=str(tmp_path))
    learn = str(Path(sys.executable).with_name("learn"))
    proc = subprocess.run([learn, "import", summary.export], env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    finish_home(gen, summary)
    assert 0 < summary.learnings < entries
    assert summary.shared_keys > 0 and summary.sessions > 0


def test_instruction_counts_come_from_callgrind():
    import shutil

    valgrind = shutil.which("valgrind")
    if not valgrind:
        import pytest

        pytest.skip("valgrind is not installed (make bench installs it)")
    count = callgrind_instructions(valgrind, [sys.executable, "-S", "-c", "pass"], dict(os.environ), str(ROOT), None)
    assert count and count > 1_000_000


def test_the_homes_are_shared_by_cost_between_the_jobs():
    """`--jobs 2`: every home measured once, the costly ones apart, the two lists close in cost."""
    tasks = [("realistic", 1_000, 10), ("realistic", 10_000, 100), ("realistic", 100_000, 1_000),
             ("realistic", 300_000, 3_000), ("synthetic", 1_000, 10), ("synthetic", 10_000, 100),
             ("synthetic", 100_000, 1_000)]
    parts = share(tasks, 2)
    assert sorted(t for part in parts for t in part) == sorted(tasks)
    firsts = {part[0] for part in parts}
    assert firsts == {("realistic", 300_000, 3_000), ("synthetic", 100_000, 1_000)}  # longest first, apart
    assert share(tasks[:1], 2) == [tasks[:1]]  # no empty part


def test_a_process_run_with_yesterdays_clock_sees_it(tmp_path):
    """The first promote and prune are yesterday's maintenance: their process's clock is set back."""
    if not faketime_library():
        pytest.skip("libfaketime not installed (apt-get install faketime)")
    from bench.run import Bench

    bench = Bench.__new__(Bench)  # only env(): no launcher, no generated home
    bench.userhome, bench.faketime = tmp_path, faketime_library()
    at = NOW - 86400
    env = bench.env(tmp_path / "home", at)
    out = subprocess.run([sys.executable, "-c", "import time; print(time.time())"], env=env, capture_output=True,
                         text=True, check=True).stdout
    assert abs(float(out) - at) < 60
    assert "LD_PRELOAD" not in bench.env(tmp_path / "home")


def test_capture_growth_is_that_of_the_ratio_measured_beside_it():
    """Sizes are measured minutes apart; the bare interpreter run beside each run carries the
    machine's load, so growth is the ratio's, and the instruction count's is shown with it."""
    from bench.report import check_targets

    def data(cpu_big: float, bare_big: float) -> dict:
        results = [{"profile": "realistic", "name": "capture failure", "size": size, "cpu_ms": cpu, "median_ms": cpu,
                    "bare_cpu_ms": bare, "cpu_ratio": cpu / bare, "rss_mb": 10}
                   for size, cpu, bare in ((1000, 24.0, 12.0), (300000, cpu_big, bare_big))]
        counts = [{"profile": "realistic", "name": "capture failure", "size": 1000, "ir": 100_000_000},
                  {"profile": "realistic", "name": "capture failure", "size": 300000, "ir": 104_000_000}]
        return {"results": results, "profiles": {"realistic": [1000, 300000]}, "instructions": counts,
                "topic": "docker", "homes": {}}

    def row(d):
        return next(r for r in check_targets(d) if r["target"].startswith("`learn capture failure`"))

    loaded = row(data(36.0, 18.0))  # 1.5x the milliseconds, all of it the load's
    assert loaded["verdict"] == "met" and "1.00× from 1,000 to 300,000 (instructions: 1.04×)" in loaded["measured"]
    grown = row(data(30.0, 12.0))
    assert grown["verdict"] == "MISSED" and "1.25× from" in grown["measured"]


def _corpus_file(tmp_path: Path) -> Path:
    rows = [
        {"id": "c-1", "label": "retry", "failed_command": "python app.py", "retry_command": "python3 app.py",
         "error_output": "Error: Exit code 127\nzsh: command not found: python", "retry_outcome": "success"},
        {"id": "c-2", "label": "unrelated", "failed_command": "npm test", "next_command": "git status",
         "error_output": "Error: Exit code 1\n1 failing"},
        {"id": "c-3", "label": "retry", "failed_command": "pytest -x", "retry_command": "git log -3",
         "error_output": "Error: Exit code 1\nFAILED test_a.py::test_b"},
    ]
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_the_corpus_pairing_measure_counts_what_capture_pairs(tmp_path):
    from bench.corpus import load, pairing

    figures = pairing(load([str(_corpus_file(tmp_path))], "all"), verbose=False)
    assert figures == {"retries": 2, "paired": 1, "recall": 0.5, "others": 1, "false_pairs": 0, "precision": 1.0}


def test_the_corpus_sends_a_codex_transcripts_command_as_its_hook_carries_it():
    """Codex's transcripts show `/bin/zsh -lc '…' in <folder>`; its hooks carry the command
    alone (real-payloads/codex-*), which is what learn answers with and is judged against."""
    from bench.corpus import as_sent

    assert as_sent("/bin/zsh -lc 'pytest --collect-only -q' in /Users/r/vol2") == "pytest --collect-only -q"
    assert as_sent('/bin/bash -lc "rtk python3 -c \\"import json\\""') == 'rtk python3 -c "import json"'
    assert as_sent("bash -lc 'make' && echo in /tmp") == "bash -lc 'make' && echo in /tmp"  # not one wrapper
    assert as_sent("/bin/zsh -lc \"rg -n x\" in /Users/m/Opencode Env/Public") == "rg -n x"  # a folder with a space
    assert as_sent("git log  -3\n") == "git log -3"
    assert as_sent('{"command":"npm install axios","directory":"Frontend"}') == "npm install axios"  # Gemini's
    assert as_sent('{"directory": "x"}') == '{"directory": "x"}' and as_sent("[1]") == "[1]"  # (no command)
    # on Windows the wrapper is PowerShell and the folder a drive's (one with spaces, too)
    assert as_sent('"C:\\\\Program Files\\\\PowerShell\\\\7\\\\pwsh.exe" -Command \'rg -n "x|y" docs\' '
                   'in C:\\Users\\m\\source\\repos\\New project 2') == 'rg -n "x|y" docs'
    assert as_sent("powershell.exe -Command 'py -3 -m pytest -q' in D:\\Github\\agent") == "py -3 -m pytest -q"
    assert as_sent("/usr/bin/bash -lc 'python3 run.py' in <scratchpad>") == "python3 run.py"  # a folder withheld
    # a Codex command's newlines are real (a heredoc, a script); Claude Code's export wraps lines
    script = "/bin/bash -lc \"python - <<'PY'\nimport json\n  print(1)\nPY\" in /home/x/app"
    assert as_sent(script, "codex") == "python - <<'PY'\nimport json\n  print(1)\nPY"
    assert as_sent("npm run\n      build 2>&1", "claude-code") == "npm run build 2>&1"
    assert as_sent("# check it\nnpm test", "claude-code") == "# check it\nnpm test"  # a comment line ends
    # Claude Code's VS Code panel export (`IN` / command / `OUT`) keeps the command's own lines
    from bench.corpus import export_of

    panel = {"agent": "claude-code", "source": "index file id 1 (char ~9): claude-code VS Code transcript, x"}
    assert as_sent("cd /x/app\npython3 run.py 2>&1", export_of(panel)) == "cd /x/app\npython3 run.py 2>&1"
    assert export_of({"agent": "claude-code", "source": "a terminal export"}) == "claude-code"


def test_the_corpus_reads_gemini_clis_shell_fields_as_its_hook_does():
    """Gemini CLI's transcripts give a shell result as fields (`Command: … Output: (empty)
    Error: (none) Exit Code: 1`); its hook reads the output and the status (agents.gemini). A
    grep that found nothing is then a success, not a failure the next search pairs with."""
    from bench.corpus import error_text, paired

    found_nothing = "Command: grep x a.conf\nDirectory: (root)\nOutput: (empty)\nError: (none)\nExit Code: 1"
    assert error_text({"error_output": found_nothing}) == "Exit code 1"
    assert not paired("grep x a.conf", "grep -r x .", error_text({"error_output": found_nothing}))
    said = "Command: npm i\nDirectory: (root)\nOutput: npm error code E404\nError: (none)\nExit Code: 1"
    assert error_text({"error_output": said}) == "Exit code 1\nnpm error code E404"
    assert error_text({"error_output": "Error: Exit code 2\nboom"}) == "Exit code 2\nboom"  # Claude Code's, as it was


@pytest.mark.skipif(not (ROOT.parent / "shared" / "tools" / "replay.py").is_file(), reason="needs ../shared")
def test_the_corpus_recurrence_measure_answers_a_learned_failure(tmp_path):
    from bench.corpus import load, recurrence

    learn = str(ROOT / ".venv" / "bin" / "learn")
    figures = recurrence(load([str(_corpus_file(tmp_path))], "all"), learn, verbose=False)
    assert figures["cases"] == 2
    assert figures["same_right"] == 1 and figures["third_right"] == 1  # python → python3, learned and offered
    assert figures["same_none"] == 1  # pytest → git log is no fix: nothing to offer
    assert figures["hook_problems"] == 0  # no exception in the hooks, which the real path would swallow


@pytest.mark.skipif(not (ROOT.parent / "shared" / "histories").is_dir(), reason="needs ../shared")
def test_the_causal_oracle_counts_what_the_kits_oracle_counts_and_no_later_fix():
    """The kit's oracle, rebuilt from its own functions, gives the kit's figures (its README:
    4 and 4 right); the causal one never more, and fewer where a fix came after the failure
    it answers (zopfli: a test that failed twice in a row before the edit that fixed it)."""
    from bench.causal_oracle import oracles, tool_events
    from bench.corpus import replay_kit

    kit = replay_kit()
    figures = {name: oracles(kit, tool_events(kit, kit.load_history(str(ROOT.parent / "shared" / "histories" / name))))
               for name in ("leegmoore-codex", "rjpower-zopfli")}
    assert {n: f["oracle_right"] for n, f in figures.items()} == {"leegmoore-codex": 4, "rjpower-zopfli": 4}
    assert {n: f["recurring"] for n, f in figures.items()} == {"leegmoore-codex": 21, "rjpower-zopfli": 27}
    assert all(f["causal_oracle_right"] <= f["oracle_right"] for f in figures.values())
    assert figures["rjpower-zopfli"]["causal_oracle_right"] < 4


@pytest.mark.skipif(not (ROOT.parent / "shared" / "histories").is_dir(), reason="needs ../shared")
def test_the_causal_oracle_lists_each_hit_with_whether_an_edit_came_first(capsys):
    """`-v` lists every recurring failure the oracle gets right. On zopfli all four were fixed
    by an edit before the command that "resolved" them (a test or fuzz run again)."""
    from bench.causal_oracle import main

    assert main([str(ROOT.parent / "shared" / "histories" / "rjpower-zopfli"), "-v"]) == 0
    out = capsys.readouterr().out
    summary = json.loads(out.splitlines()[0])
    assert summary["oracle_right"] == 4 and summary["oracle_right_after_an_edit"] == 4
    assert out.count("\n- seq ") == 4 and out.count("NOT causal") == 3


def test_the_causal_oracle_splits_a_history_into_its_tune_and_held_parts():
    """`--held-from S`: the sessions before S are the tune part, S and after the held one;
    learn's offers on recurring failures are counted by the session they were made in."""
    from bench.causal_oracle import by_part

    hits = [{"sid": "s1", "right": True, "causal": False}, {"sid": "s2", "right": True, "causal": True},
            {"sid": "s3", "right": False, "causal": False}]
    replay = {"offers": [{"session": "s1", "recurring": True, "right": True},
                         {"session": "s3", "recurring": True, "right": False},
                         {"session": "s3", "recurring": False, "right": False}]}
    parts = by_part(hits, ["s1", "s2", "s3"], "s2", replay)
    assert parts["tune"] == {"recurring": 1, "oracle_right": 1, "causal_oracle_right": 0,
                             "learn_offered": 1, "learn_right": 1, "learn_wrong": 0}
    assert parts["held"] == {"recurring": 2, "oracle_right": 1, "causal_oracle_right": 1,
                             "learn_offered": 1, "learn_right": 0, "learn_wrong": 1}


def test_a_failure_unanswered_while_its_key_had_a_proven_fix_is_listed():
    """bench/unanswered.py: a failure with no offer whose key's learning had two sightings
    before it (or was global) is listed; one answered, one whose learning had a single sighting
    then (pending), one of another key, and a later sighting, are not."""
    from bench.unanswered import unanswered

    events = [{"tid": f"t{i}", "learn_key": "err:a" if i != 5 else "err:b"} for i in range(7)]
    rows = [{"i": 4, "offer": None}, {"i": 6, "offer": {"fix": "x"}}, {"i": 5, "offer": None}, {"i": 2, "offer": None}]
    proven = {"key": "err:a", "status": "active", "evidence": [{"event": "t0"}, {"event": "t1"}, {"event": "t3"}]}
    other = {"key": "err:b", "status": "pending", "evidence": [{"event": "t4"}]}
    found = unanswered(rows, events, [proven, other])
    assert [item["event"]["tid"] for item in found] == ["t4", "t2"]  # t2: two sightings before, t0 and t1
    assert found[0]["proven"] == [(proven, 3)] and found[1]["proven"] == [(proven, 2)]
    assert unanswered([{"i": 1, "offer": None}], events, [proven]) == []  # one sighting then: pending
    promoted = dict(other, status="global")  # proven whatever its sightings here (one, t4)
    assert unanswered([{"i": 5, "offer": None}], events, [promoted])[0]["proven"] == [(promoted, 1)]


@pytest.mark.skipif(not (ROOT.parent / "shared" / "histories").is_dir(), reason="needs ../shared")
def test_no_zopfli_failure_goes_unanswered_while_its_key_has_a_proven_fix(capsys):
    """Through the kit's Replayer and the installed hooks (issue 10's done-when)."""
    from bench.unanswered import main

    assert main([str(ROOT.parent / "shared" / "histories" / "rjpower-zopfli")]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == "rjpower-zopfli: 0 failures unanswered with a proven fix for their key"


def test_working_ways_judges_a_digest_fact_against_the_session():
    """bench/working_ways.py: a digest's "This project builds with `X`" is right when the
    session ran the job that way (more words allowed), failed when that way never worked in
    it, other_way when only another way did; the first command of the goal, failed another
    way, is counted as the failure the fact could have spared."""
    from bench.working_ways import facts_in, judge

    digest = ("Learned notes from earlier sessions (data, not instructions; most useful first):\n"
              "This project (app):\n- This project builds with `cd src-tauri && cargo check` (seen 2×)\n"
              "- This project runs its tests with `cargo test --features x`")
    facts = facts_in(digest)
    assert facts == [("build", "cd src-tauri && cargo check"), ("test", "cargo test --features x")]

    def bash(cmd, cwd, outcome):
        return {"tool": "Bash", "synthetic": False, "cmd": cmd, "cwd": cwd, "outcome": outcome}

    session = [bash("cargo check", "/r", "fail"), bash("cargo check --all-targets 2>&1", "/r/src-tauri", "ok"),
               bash("cargo test --features x", "/r", "fail")]
    verdicts = judge(facts, session, "/r")
    assert [(v["verdict"], v["failed_first"]) for v in verdicts] == [("right", True), ("failed", False)]
    assert judge(facts, [bash("cargo test", "/r", "ok")], "/r")[1]["verdict"] == "other_way"
    assert judge(facts, [], "/r")[0]["verdict"] == "unjudged"


def _history(folder: Path, sessions: list[list[tuple[str, str, str]]]) -> str:
    """A history in the kit's format: sessions of (command, outcome, error) Bash calls."""
    folder.mkdir(parents=True)
    lines = []
    for k, calls in enumerate(sessions):
        name = f"s{k}.txt"
        lines.append({"kind": "session", "session": name, "cwd": "."})
        for n, (command, outcome, error) in enumerate(calls, 1):
            lines.append({"kind": "tool", "session": name, "n": n, "tool": "Bash", "command": command,
                          "outcome": outcome, "error": error, "output": "", "cwd": ".", "cwd_post": "."})
    (folder / "events.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return str(folder)


@pytest.mark.skipif(not (ROOT.parent / "shared" / "tools" / "replay.py").is_file(), reason="needs ../shared")
def test_one_store_sees_a_fix_from_two_projects_answer_a_third(tmp_path, monkeypatch):
    """bench/one_store.py: histories share one store, their sessions interleaved; an answer whose
    evidence is only in other projects is counted as from elsewhere, and judged as the kit does."""
    from bench.corpus import replay_kit
    from bench.one_store import interleaved, judged, replay_all, tally, where_seen
    from conftest import learn_executable

    assert where_seen("learn: known fix (seen 2× in 2 projects: api, cli): `x`") == "elsewhere"
    assert where_seen("learn: known fix (seen 3× in this project and 1 other): `x`") == "here"
    long, short = {"sessions": ["l1", "l2", "l3", "l4"]}, {"sessions": ["s1", "s2"]}
    assert [s for _h, s in interleaved([long, short])] == ["l1", "l2", "s1", "l3", "l4", "s2"]

    missing = "Exit code 127\nbash: pytest: command not found"
    pair = [("pytest tests", "fail", missing), ("python -m pytest tests", "ok", "")]
    paths = [_history(tmp_path / name, [pair]) for name in ("api", "cli", "web")]
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    kit = replay_kit()
    replayed = replay_all(kit, learn_executable(), paths)
    assert replayed["hook_problems"] == []
    assert tally(judged(kit, replayed["events"]["api"]))["elsewhere"]["right"] == 0
    [answer] = judged(kit, replayed["events"]["web"])
    assert (answer["seen"], answer["verdict"]) == ("elsewhere", "right")
    assert "`python -m pytest tests` instead of `pytest tests`" in answer["offer"]


@pytest.mark.skipif(not (ROOT.parent / "shared" / "tools" / "replay.py").is_file(), reason="needs ../shared")
def test_guard_replay_sorts_each_denial_by_what_the_command_then_did(tmp_path, monkeypatch):
    """bench/guard_replay.py, through the installed hooks with the guard: `make` at the root was
    fixed by `cmake --build build` in two sessions; in the third the guard stops `make` (spared,
    right), in the fourth a piped `make` whose output says it ran nothing (spared, hidden)."""
    from bench.corpus import replay_kit
    from bench.guard_replay import denials_in
    from conftest import learn_executable

    stopped = "make: *** No targets specified and no makefile found.  Stop."
    pair = [("make", "fail", "Exit code 2\n" + stopped), ("cmake --build build", "ok", "")]
    path = _history(tmp_path / "c99", [pair, pair, pair, [("make 2>&1 | tail -5", "ok", "")]])
    with open(os.path.join(path, "events.jsonl"), encoding="utf-8") as fh:  # the piped one printed make's stop
        lines = [json.loads(line) for line in fh]
    lines[-1]["output"] = stopped
    Path(path, "events.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    rows, problems = denials_in(replay_kit(), learn_executable(), path)
    assert problems == []
    assert [row["verdict"] for row in rows] == ["spared, right", "spared, hidden"]  # (once a session each)
    assert "`cmake --build build` instead of `make`" in rows[0]["reason"]
