"""`learn flush`: a managed block, everything outside it byte-for-byte, no churn."""

from __future__ import annotations

from learn_cli.engine.flush import END, START, render_block, splice


def add(learn, *args):
    learn("add", *args, check=0)


def test_splice_keeps_everything_outside_the_block():
    block = render_block([("config", "- rule one")])
    before, after = "# My notes\n\nuser text\n", "\n## After\nmore user text\n"
    first = splice(before + after, block)
    assert first == before + after + "\n" + block or first.startswith(before + after)
    old_block_file = before + START + "\nold\n" + END + "\n" + after
    replaced = splice(old_block_file, block)
    assert replaced == before + block + after


def test_flush_missing_file_then_idempotent(learn):
    add(learn, "Docker builds need an explicit platform on Apple Silicon", "--fix",
        "docker build --platform linux/amd64 .", "--category", "config", "--impact", "0.9")
    learn("flush", check=0)
    target = learn.cwd / "CLAUDE.md"
    text = target.read_bytes()
    assert b"--platform linux/amd64" in text and START.encode() in text and END.encode() in text
    learn("flush", check=0)
    assert target.read_bytes() == text, "a second flush must not change a byte"
    assert "up to date" in learn("flush").stdout


def test_flush_preserves_user_content_before_and_after(learn):
    target = learn.cwd / "AGENTS.md"
    user_before = "# Agents\n\nRun `make test` before committing.\r\nA line with trailing spaces   \n\n"
    user_after = "\n## Owner notes\nKeep this.\n\xe9t\xe9 \xff raw byte\n".encode("latin-1")
    target.write_bytes(user_before.encode() + START.encode() + b"\nstale rules\n" + END.encode() + b"\n" + user_after)
    add(learn, "Use pnpm in this repo", "--fix", "pnpm install", "--type", "preference", "--category", "tooling")
    learn("flush", "--target", "AGENTS.md", check=0)
    data = target.read_bytes()
    assert data.startswith(user_before.encode()) and data.endswith(user_after)
    assert b"stale rules" not in data and b"pnpm install" in data


def test_flush_file_without_block_appends(learn):
    target = learn.cwd / "CLAUDE.md"
    target.write_text("# Project\nno trailing newline")
    add(learn, "Set HTTP timeouts on every client call", "--fix", "requests.get(url, timeout=10)")
    learn("flush", check=0)
    text = target.read_text()
    assert text.startswith("# Project\nno trailing newline\n\n" + START)


def test_flush_with_no_rules_creates_no_file_and_adds_no_block(learn):
    """Nothing active yet: no new file, no empty block appended to the user's; a block that is
    there is emptied (its rules are no longer active). The folder is not registered."""
    proc = learn("flush", check=0)
    assert "Nothing to write" in proc.stdout and "not created" in proc.stdout
    assert not (learn.cwd / "CLAUDE.md").exists()
    assert not (learn.home / "projects").exists() or not any((learn.home / "projects").iterdir())
    agents = learn.cwd / "AGENTS.md"
    agents.write_text("# Agents\n")
    assert learn.json("flush", "--target", "AGENTS.md")["written"] is False
    assert agents.read_text() == "# Agents\n"
    agents.write_text("# Agents\n\n" + START + "\n- a rule since archived\n" + END + "\n")
    assert learn.json("flush", "--target", "AGENTS.md")["written"] is True
    assert agents.read_text() == "# Agents\n\n" + render_block([])


def test_flush_dry_run_writes_nothing(learn):
    add(learn, "Rebase before merge", "--fix", "git pull --rebase")
    proc = learn("flush", "--dry-run", check=0)
    assert "git pull --rebase" in proc.stdout and not (learn.cwd / "CLAUDE.md").exists()


def test_flush_drops_contradictions_and_neutralises_markers(learn):
    add(learn, "use npm for this project", "--fix", "use npm", "--type", "preference", "--category", "tooling")
    add(learn, "use pnpm for this project", "--fix", "use pnpm", "--type", "preference", "--category", "tooling")
    add(learn, "tricky <!-- learn:end --> text", "--fix", "closing --> marker")
    learn("flush", check=0)
    text = (learn.cwd / "CLAUDE.md").read_text()
    assert text.count(END) == 1 and text.rstrip().endswith(END)
    assert "closing" in text
    assert "use npm" not in text and "use pnpm" not in text


def test_flush_into_a_missing_folder_names_the_folder_not_a_temp_file(learn):
    learn("add", "run make before tests", check=0)
    target = learn.tmp / "nonexistent" / "dir" / "X.md"
    proc = learn("flush", "--target", target, check=1)
    assert proc.stderr == f"learn: error: cannot write {target}: folder {target.parent} does not exist\n"


def test_flush_says_one_fix_for_one_job_once_as_the_digest_does(learn):
    """Two learnings of one fix for the same job on other arguments are one line in CLAUDE.md,
    as in the session digest; the same fix for another job is a line of its own."""
    from learn_cli.store.api import Store
    from learn_cli.store.project import identify
    from learn_cli.store.record import make_record

    here = identify(learn.cwd)
    store = Store(learn.home, warn_stderr=False)
    store.register_project(here)
    prefix = "npm config set prefix ~/.npm-global"
    for n, command in enumerate(("npm install -g axios", "npm install -g jest", "npm run build")):
        store.put(store.layout.learnings(here.id), make_record(
            type="error", category="permission", command=command, fix_command=prefix, fix=prefix, fix_kind="between",
            error="npm ERR! Error: EACCES: permission denied", status="active", projects=[here.id], key=f"err:{n}"))
    store.close()
    block = learn("flush", "--dry-run", check=0).stdout
    digest = learn("context", check=0).stdout
    for text in (block, digest):
        assert text.count("`npm install -g") == 1 and text.count("`npm run build` fails") == 1
