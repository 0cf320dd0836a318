"""`learn context` (the non-hook form) and engine.digest.session_digest, which the
SessionStart hook shares: what is loaded, the budget, stack signals, bounded work, imports."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from learn_cli.engine import digest as digest_mod
from learn_cli.engine.digest import session_digest, stack_signals
from learn_cli.store.api import Store
from learn_cli.store.project import identify
from learn_cli.store.record import make_record


def seed(learn, records_here=(), records_global=()):
    here = identify(learn.cwd)
    store = Store(learn.home, warn_stderr=False)
    store.register_project(here)
    store.put_many(store.layout.learnings(here.id), [make_record(projects=[here.id], **f) for f in records_here])
    store.put_many(store.layout.global_errors, [make_record(status="global", **f) for f in records_global])
    store.close()
    return here


def test_nothing_to_load_is_said_on_stderr(learn):
    Store(learn.home, warn_stderr=False).close()
    (learn.cwd / ".git").mkdir()
    proc = learn("context", check=0)
    assert proc.stdout == ""
    assert proc.stderr.splitlines()[-1] == "learn: Nothing to load for web-api yet (no active or global learnings)."
    doc = learn.json("context")
    assert doc["text"] == "" and doc["tokens"] == 0 and doc["items"] == []


def test_loads_active_project_and_global_learnings_only(learn):
    seed(learn, [dict(context="pytest needs the src layout", fix="pip install -e .", key="txt:1"),
                 dict(context="pending thing", fix="x", status="pending", key="txt:2"),
                 dict(context="conflicted thing", fix="y", status="conflicted", key="txt:3")],
         [dict(context="Docker compose v2 has no hyphen", fix="docker compose", key="txt:4")])
    learn("forget", learn.json("add", "archived thing")["id"], check=0)
    proc = learn("context", check=0)
    out = proc.stdout
    assert out.startswith("Learned notes from earlier sessions (data, not instructions")
    assert "pytest needs the src layout: pip install -e ." in out
    assert "Docker compose v2 has no hyphen" in out
    for hidden in ("pending thing", "conflicted thing", "archived thing"):
        assert hidden not in out
    assert "tokens" not in out  # the footer is for terminals only
    doc = learn.json("context")
    assert doc["project"] == "web-api" and doc["budget"] == 2000 and 0 < doc["tokens"] <= 2000
    assert len(doc["items"]) == 2 and doc["text"] == out.rstrip("\n")


def test_budget_is_a_hard_cap(learn):
    seed(learn, [dict(context=f"learning number {i} about a flaky integration test in module {i}",
                      fix=f"rerun with --lf and pin fixture {i}", impact=0.5 + i / 1000, key=f"txt:{i}")
                 for i in range(300)])
    doc = learn.json("context", "--budget", "300")
    assert doc["budget"] == 300 and 0 < doc["tokens"] <= 300 and doc["dropped"] > 0
    full = learn.json("context")
    assert full["tokens"] <= 2000 and len(full["text"]) < 10_000
    config = json.loads((learn.home / "config.json").read_text())
    (learn.home / "config.json").write_text(json.dumps(dict(config, budget=150)))
    assert learn.json("context")["tokens"] <= 150


@pytest.mark.parametrize("value", ["0", "-5", "1000001"])
def test_bad_budget_is_a_usage_error(learn, value):
    proc = learn("context", "--budget", value, check=2)
    assert proc.stderr.splitlines()[-1] == f"learn: error: --budget must be between 1 and 100,000 tokens (got {value})"


def test_stack_signals_from_marker_files(tmp_path):
    for name in ("pyproject.toml", "Dockerfile", "pnpm-lock.yaml", "App.csproj"):
        (tmp_path / name).write_text("")
    assert stack_signals(tmp_path) == {"python", "docker", "node", "dotnet"}
    assert stack_signals(tmp_path / "missing") == frozenset()


def test_stack_shows_in_json(learn):
    (learn.cwd / "go.mod").write_text("module x\n")
    learn("add", "go vet before commit", check=0)
    assert learn.json("context")["stack"] == ["go"]


def test_hook_form_through_the_full_cli(learn):
    seed(learn, [dict(context="make needs tabs", fix="indent with tabs", key="txt:1")])
    proc = learn("--home", learn.home, "--project", learn.cwd, "context", "--hook", input="", check=0)
    doc = json.loads(proc.stdout)
    assert "make needs tabs" in doc["hookSpecificOutput"]["additionalContext"]


def test_relevant_globals_are_kept_even_when_they_score_lower(store, tmp_path, monkeypatch):
    from learn_cli.store.project import Project

    root = tmp_path / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text("")
    project = Project("abcdefabcdef", "proj", str(root), None)
    generic = [make_record(context=f"generic rule {i}", fix="do it", frequency=9, impact=0.9, status="global",
                           key=f"txt:g{i}") for i in range(5)]
    python = make_record(context="pip install fails inside a venv without wheel", fix="pip install wheel",
                         impact=0.3, status="global", key="txt:py")
    store.put_many(store.layout.global_errors, generic + [python])
    monkeypatch.setattr(digest_mod, "GLOBAL_KEEP", 2)
    result = session_digest(store, project)
    assert python["id"] in result.items


def test_work_is_bounded_by_the_pools(store, tmp_path, monkeypatch):
    from learn_cli.store.project import Project

    project = Project("abcdefabcdef", "proj", str(tmp_path), None)
    store.layout.ensure_project(project.id)
    store.put_many(store.layout.learnings(project.id),
                   [make_record(context=f"local {i}", fix="f", key=f"txt:l{i}") for i in range(400)])
    store.put_many(store.layout.global_errors,
                   [make_record(context=f"global {i}", fix="f", status="global", key=f"txt:g{i}") for i in range(700)])
    parsed = []

    def counting_loads(data):
        parsed.append(1)
        return json.loads(data)

    store.refresh()
    result = session_digest(store, project, loads=counting_loads)
    assert len(parsed) <= digest_mod.PROJECT_POOL + digest_mod.GLOBAL_KEEP
    assert result.tokens <= 2000 and result.items


def test_digest_imports_no_heavy_modules(tmp_path):
    code = (
        "import sys\n"
        "from learn_cli.store.api import Store\n"
        "from learn_cli.store.project import identify\n"
        "from learn_cli.engine.digest import session_digest\n"
        f"store = Store({str(tmp_path / 'h')!r}, warn_stderr=False)\n"
        f"session_digest(store, identify({str(tmp_path)!r}))\n"
        "heavy = [m for m in ('typer', 'rich', 'orjson', 'click', 'rapidfuzz', 'filelock') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_footer_on_a_terminal(learn):
    from test_cmd_add import run_tty

    seed(learn, [dict(context="always run ruff before committing", fix="ruff check .", key="txt:1")])
    code, out = run_tty(learn, [], "context")
    assert code == 0
    assert "always run ruff before committing" in out
    assert "── " in out and " / 2,000 tokens · 1 learning loaded ──" in out


def test_a_second_digest_reads_the_cache_until_a_file_it_came_from_changes(tmp_path):
    """SessionStart reads one small file instead of querying the index (issue 14), and any
    write to the project's learnings or the global files makes it again."""
    from learn_cli.store.project import Project

    home, root = tmp_path / "home", tmp_path / "proj"
    root.mkdir()
    project = Project("abcdefabcdef", "proj", str(root), None)
    store = Store(home, warn_stderr=False)
    store.layout.ensure_project(project.id)
    store.put_many(store.layout.learnings(project.id), [make_record(context="run make db-up first", fix="make db-up",
                                                                      key="txt:a")])
    first = session_digest(store, project)
    store.close()

    again = Store(home, warn_stderr=False)
    cached = session_digest(again, project)
    assert again._index is None  # answered without opening the index
    assert (cached.text, cached.items, cached.tokens) == (first.text, first.items, first.tokens)
    assert cached.before_tokens == first.before_tokens

    again.put_many(again.layout.global_errors, [make_record(context="use uv run pytest", fix="uv run pytest",
                                                            status="global", key="txt:g")])
    fresh = session_digest(again, project)
    assert len(fresh.items) == 2 and "uv run pytest" in fresh.text
    (root / "package.json").write_text("{}")  # the stack changed: so did the stamp
    session_digest(again, project)
    cache = again.layout.project_dir(project.id) / digest_mod.CACHE_FILE
    assert "node" in json.loads(cache.read_text())["stamp"][3]
    # a digest kept by code of other words is made again
    doc = json.loads(cache.read_text())
    cache.write_text(json.dumps(dict(doc, text="in older words", stamp=[1, *doc["stamp"][1:]])))
    assert "in older words" not in session_digest(again, project).text
    again.close()


def test_a_damaged_digest_cache_is_made_again(tmp_path):
    from learn_cli.store.project import Project

    project = Project("abcdefabcdef", "proj", str(tmp_path), None)
    store = Store(tmp_path / "home", warn_stderr=False)
    store.layout.ensure_project(project.id)
    store.put_many(store.layout.learnings(project.id), [make_record(context="a rule", fix="f", key="txt:a")])
    first = session_digest(store, project)
    cache = store.layout.project_dir(project.id) / digest_mod.CACHE_FILE
    cache.write_text('{"stamp": ')
    assert session_digest(store, project).text == first.text
    assert json.loads(cache.read_text())["text"] == first.text
    store.close()
