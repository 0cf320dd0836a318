"""Secrets (SPEC §4): the corpus of tests/data/secrets_corpus.py (64 fake secrets of 35 kinds,
each in a realistic line) is planted in commands, tool outputs, file paths, prompts, manual
learnings (`learn add`) and import files. No fragment of any secret appears in any file under
the home (SQLite index and log included), in `export`, `context`, `recall`, `stats`, `graph`
or the knowledge file `learn flush` writes. The companion corpus of 60 look-alikes (paths, git
SHAs, UUIDs, base64 test data, hashes, ordinary long words) planted the same way comes back
intact."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import reliability_kit as kit

CORPUS = kit.secrets_corpus()
FRAGMENT = 10  # any run of this many characters of a secret counts as a leak
STEP = 4


def fragments(value: str) -> set[str]:
    """Overlapping pieces of a secret that stay within one line (JSON escapes line breaks)."""
    out = set()
    for part in value.replace("\\n", "\n").split("\n"):
        if len(part) < FRAGMENT:
            continue
        out.update(part[i:i + FRAGMENT] for i in range(0, len(part) - FRAGMENT + 1, STEP))
        out.add(part[-FRAGMENT:])
    return out


def leaks_in(blob: str, secrets) -> list[tuple[str, str]]:
    return [(kind, piece) for kind, value, _t in secrets for piece in fragments(value) if piece in blob]


exe = kit.learn_exe
here = kit.learn_here  # the commands' output, in this process


def cli(monkeypatch, home: Path, cwd: Path, *args) -> int:
    """`learn ARGS` in this process (the executable's entry point), output discarded."""
    import io

    import learn_cli.__main__ as entry

    monkeypatch.setenv("SELF_LEARNING_HOME", str(home))
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.chdir(cwd)
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    try:
        return entry.main(list(map(str, args)))
    finally:
        monkeypatch.undo()


def _plant_capture(home: Path, cwd: Path, n: int, line: str, value: str) -> None:
    sid = f"plant-{n}"
    payloads = [
        kit.prompt(cwd, sid, f"Don't use {line} in scripts, use the vault instead."),
        kit.failure(cwd, sid, f"f{n}", f"deploy push {line}", f"request failed: {line}\nError: unauthorized"),
        kit.success(cwd, sid, f"s{n}", f"deploy push --retry {line}", stdout=f"pushed with {line}"),
        {**kit.failure(cwd, sid, f"r{n}", "", f"Error: cannot read {line}"), "tool_name": "Read",
         "tool_input": {"file_path": f"/srv/app/{line}.env"}},
        {**kit.success(cwd, sid, f"q{n}", ""), "tool_name": "Read",
         "tool_input": {"file_path": f"/srv/app/{line}.envs"}},
        kit.session_end(cwd, sid),
    ]
    for payload in payloads:
        code, out, _ = kit.run_hook(payload, ["--home", str(home)])
        assert code == 0
        kit.check_hook_stdout(out)


def _import_doc(items: list[tuple[str, str]], pid: str) -> dict:
    """An export whose every text field (and project name, root and remote) carries the items."""
    entries = []
    for n, (line, _value) in enumerate(items):
        entries.append({"id": f"learn-20260101T000000Z-{n:06x}", "type": "error", "category": "config",
                        "context": f"imported {n}: {line}"[:480], "error": f"Error: {line}", "fix": f"rotate {line}",
                        "command": f"deploy {line}", "fix_command": f"deploy --fixed {line}",
                        "tags": [f"tag {line}"], "project": f"proj {n}"})
    return {"format": "self-learning-agent", "version": "1.0.0", "exported": "2026-11-01T00:00:00Z",
            "global": [dict(e, id=e["id"][:-6] + f"{n + 4096:06x}", status="global") for n, e in enumerate(entries)],
            "projects": {pid: {"name": "imported-app", "root": "/srv/imported",
                               "remote": f"https://deploy:{items[0][1]}@git.example.com/team/app.git",
                               "learnings": entries}},
            "archived": []}


@pytest.mark.slow
def test_no_secret_reaches_the_home_or_any_output(tmp_path, monkeypatch):
    secrets = CORPUS.SECRETS
    kinds = {kind for kind, _v, _t in secrets}
    assert len(kinds) >= 30 and len(secrets) >= 60
    home, cwd = tmp_path / "home", kit.project_dir(tmp_path / "work", "leaky-app")
    assert cli(monkeypatch, home, cwd, "add", "the first lesson of this store", "--fix", "nothing") == 0
    config = json.loads((home / "config.json").read_text())
    (home / "config.json").write_text(json.dumps(dict(config, min_evidence=1)))  # pairs are active at once

    lines = [(kind, template.format(s=value), value) for kind, value, template in secrets]
    for n, (_kind, line, value) in enumerate(lines):
        _plant_capture(home, cwd, n, line, value)
        assert cli(monkeypatch, home, cwd, "add", f"lesson {n}: {line}", "--type", "error", "--context",
                   f"while {line}", "--fix", f"rotate {line}", "--tag", f"t{n}") == 0
    from learn_cli.store.project import identify

    export_in = tmp_path / "export.json"
    export_in.write_text(json.dumps(_import_doc([(line, value) for _k, line, value in lines],
                                                identify(cwd).id)))
    imported = here(home, cwd, "import", export_in)
    assert imported.returncode == 0, imported.stderr
    for n, (_kind, line, _value) in enumerate(lines[::6]):  # and a sample through the executable
        for payload in (kit.failure(cwd, f"exe-{n}", f"xf{n}", f"publish {line}", f"denied: {line}"),
                        kit.success(cwd, f"exe-{n}", f"xs{n}", f"publish --token-file t {line}")):
            assert exe(home, cwd, "capture", input=payload).returncode == 0
        assert here(home, cwd, "add", f"exe lesson {n}: {line}", "--fix", f"rotate {line}").returncode == 0

    outputs = {
        "export": here(home, cwd, "export", "-o", "-"),
        "context": here(home, cwd, "context", "--budget", "8000"),
        "context --hook": here(home, cwd, "context", "--hook",
                              input={**kit.session_end(cwd, "ctx"), "hook_event_name": "SessionStart"}),
        "recall": here(home, cwd, "recall", "deploy", "lesson", "rotate", "--all", "--limit", "200"),
        "recall --json": here(home, cwd, "recall", "deploy", "--json", "--limit", "200"),
        "stats": here(home, cwd, "stats"),
        "graph": here(home, cwd, "graph", "--format", "json"),
        "flush": here(home, cwd, "flush", "--target", "CLAUDE.md"),
    }
    for name, proc in outputs.items():
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, (name, proc.stderr)
    exported = json.loads(outputs["export"].stdout)
    assert len(json.dumps(exported)) > 50_000  # the planted learnings are there, redacted
    redacted_kinds = {kind for kind in kinds if f"[REDACTED:{kind}]" in outputs["export"].stdout}
    assert len(redacted_kinds) >= 30, sorted(kinds - redacted_kinds)
    knowledge = cwd / "CLAUDE.md"
    assert knowledge.exists() and "[REDACTED:" in knowledge.read_text()

    found = []
    for path in sorted(p for p in home.rglob("*") if p.is_file()):
        blob = path.read_bytes().decode("utf-8", "replace")
        found += [(str(path.relative_to(home)), kind, piece) for kind, piece in leaks_in(blob, secrets)]
    for name, proc in outputs.items():
        found += [(name, kind, piece) for kind, piece in leaks_in(proc.stdout + proc.stderr, secrets)]
    found += [("CLAUDE.md", kind, piece) for kind, piece in leaks_in(knowledge.read_text(), secrets)]
    assert found == [], f"{len(found)} leaks, e.g. {found[:10]}"
    print(f"\nsecrets: {len(secrets)} secrets of {len(kinds)} kinds, {len(redacted_kinds)} kinds seen redacted "
          f"in the export; {sum(1 for p in home.rglob('*') if p.is_file())} files and {len(outputs) + 1} "
          "outputs searched")


@pytest.mark.slow
def test_lookalikes_are_left_intact(tmp_path, monkeypatch):
    lookalikes = CORPUS.LOOKALIKES
    assert len(lookalikes) >= 30
    home, cwd = tmp_path / "home", kit.project_dir(tmp_path / "work", "plain-app")
    for n, text in enumerate(lookalikes):
        assert cli(monkeypatch, home, cwd, "add", f"note {n}", "--type", "error", "--context", text,
                   "--fix", text) == 0
    from learn_cli.store.project import identify

    doc = {"format": "self-learning-agent", "version": "1.0.0", "global": [],
           "projects": {identify(cwd).id: {"name": "plain-app", "learnings": [
               {"id": f"learn-20260101T000000Z-{n:06x}", "type": "pattern", "context": f"imported {n}",
                "error": text, "fix": text} for n, text in enumerate(lookalikes)]}}}
    (tmp_path / "plain.json").write_text(json.dumps(doc))
    assert here(home, cwd, "import", tmp_path / "plain.json").returncode == 0
    for n, text in enumerate(lookalikes):
        payload = kit.failure(cwd, f"look-{n}", f"lf{n}", f"check item{n}", f"Error: {text}")
        assert kit.run_hook(payload, ["--home", str(home)])[0] == 0

    exported = json.loads(here(home, cwd, "export", "-o", "-").stdout)
    records = [r for p in exported["projects"].values() for r in p["learnings"]]
    changed = []
    for n, text in enumerate(lookalikes):
        added = [r for r in records if r.get("error") == f"note {n}"]
        assert added, (n, text)
        if not any(r.get("context") == text.strip() and r.get("fix") == text.strip() for r in added):
            changed.append(("add", text, added[0].get("context"), added[0].get("fix")))
        imported = [r for r in records if r.get("context") == f"imported {n}"]
        if not (imported and imported[0].get("error") == text and imported[0].get("fix") == text):
            changed.append(("import", text, imported[0].get("error") if imported else None))
    buffered = "\n".join(p.read_text(errors="replace") for p in (home / "sessions").glob("*.jsonl"))
    for text in lookalikes:
        if json.dumps(text)[1:-1] not in buffered:
            changed.append(("capture", text))
    assert changed == [], changed


def test_secret_straddling_a_length_cap_is_not_half_kept(tmp_path):
    """An imported text longer than its cap, with a secret right where the cap cuts: the cut
    must not leave half a token that redaction no longer recognises."""
    from learn_cli.engine.exchange import import_file
    from learn_cli.store.api import Store
    from learn_cli.store.record import FIELD_CAPS

    token = next(value for kind, value, _t in CORPUS.SECRETS if kind == "github-token")
    entries = []
    for shift in range(0, 40, 3):
        pad = "word " * ((FIELD_CAPS["context"] - 20 + shift) // 5)
        entries.append({"id": f"learn-20260101T000000Z-{shift:06x}", "type": "pattern",
                        "context": f"{pad}{token} more text", "fix": f"{pad}{token} and more"})
    doc = {"format": "self-learning-agent", "version": "1.0.0", "global": entries}
    (tmp_path / "capped.json").write_text(json.dumps(doc))
    store = Store(tmp_path / "home", warn_stderr=False)
    try:
        import_file(store, tmp_path / "capped.json")
    finally:
        store.close()
    blob = "".join(p.read_bytes().decode("utf-8", "replace") for p in (tmp_path / "home").rglob("*") if p.is_file())
    assert "word word" in blob
    assert leaks_in(blob, [("github-token", token, "")]) == []


def test_secret_in_imported_project_metadata_and_file_name(tmp_path):
    from learn_cli.engine.exchange import import_file
    from learn_cli.store.api import Store

    picked = [(kind, value, template) for kind, value, template in CORPUS.SECRETS
              if kind in ("github-token", "aws-access-key", "openai-key", "url-password")]
    projects = {}
    for n, (_kind, value, template) in enumerate(picked):
        line = template.format(s=value)
        projects[f"{n:012x}"] = {"name": f"app {line}", "root": f"/srv/{line}",
                                 "learnings": [{"id": f"learn-20260101T000000Z-{n:06x}", "type": "pattern",
                                                "context": f"lesson {n}", "fix": "nothing"}]}
    pem = next((kind, value, template) for kind, value, template in CORPUS.SECRETS if kind == "private-key")
    projects["0" * 12]["learnings"].append({"id": "learn-20260101T000000Z-ffffff", "type": "pattern",
                                            "context": "a key", "project": "p " * 85 + pem[1]})
    picked.append(pem)
    doc = {"format": "self-learning-agent", "version": "1.0.0", "projects": projects}
    path = tmp_path / f"export-{picked[0][1]}.json"
    path.write_text(json.dumps(doc))
    store = Store(tmp_path / "home", warn_stderr=False)
    try:
        import_file(store, path)
    finally:
        store.close()
    found = []
    for file in (p for p in (tmp_path / "home").rglob("*") if p.is_file()):
        found += [(file.name, kind) for kind, _ in leaks_in(file.read_bytes().decode("utf-8", "replace"), picked)]
    assert found == []
