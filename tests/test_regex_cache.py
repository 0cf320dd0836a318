"""The hooks' disk cache of compiled regular expressions (capture/regex_cache.py): patterns
built from cached code behave exactly as `re` compiles them, a later process parses nothing,
and a damaged, foreign or tampered cache only falls back to `re`."""

from __future__ import annotations

import marshal
import os
import re
import stat

import pytest

from learn_cli.capture import regex_cache
from learn_cli.text import failure as classify
from learn_cli.text import keys

SAMPLES = ["Exit code 127\nbash: pytest: command not found", "ModuleNotFoundError: No module named 'jose'",
           "npm ERR! code ELIFECYCLE", "Error: EACCES: permission denied, open '/etc/x'", "",
           "  File \"app.py\", line 3\n    x = (\nSyntaxError: '(' was never closed", "Ünïcödé FAIL ✗ done"]


@pytest.fixture
def cache_file(tmp_path):
    path = str(tmp_path / regex_cache.FILE_NAME)
    regex_cache.uninstall()  # hooks run in this process by other tests install it too
    yield path
    regex_cache.uninstall()


def _read(path: str) -> dict:
    with open(path, "rb") as fh:
        return marshal.loads(fh.read())


def _compile_everything() -> None:
    """What a capture compiles: classification and keys of a few failures."""
    for text in SAMPLES:
        classify.parse_exit_code(text)
        classify.meaningful_lines(text)
        classify.categorize(text, "pytest -q", "Bash")
        keys.error_key(text, "pytest -q")


def _clear_caches() -> None:
    re.purge()
    for module in (classify, keys):
        for value in vars(module).values():
            if callable(value) and hasattr(value, "cache_clear"):
                value.cache_clear()


def test_patterns_from_cached_code_behave_as_re_compiles_them(cache_file):
    _clear_caches()
    regex_cache.install(cache_file)
    _compile_everything()
    regex_cache.save()
    assert len(_read(cache_file)["entries"]) >= 10
    compiled = list(regex_cache._state["compiled"])
    regex_cache.uninstall()
    regex_cache.install(cache_file)
    for (pattern, flags) in compiled:
        cached, fresh = re.compile(pattern, flags), regex_cache._state["original"](pattern, flags)
        assert (cached.pattern, cached.flags, cached.groups, cached.groupindex) == \
            (fresh.pattern, fresh.flags, fresh.groups, fresh.groupindex)
        for text in SAMPLES:
            a, b = cached.search(text), fresh.search(text)
            assert (a and (a.span(), a.groups())) == (b and (b.span(), b.groups())), pattern[:60]


def test_a_later_process_parses_no_pattern_it_has_cached(cache_file, monkeypatch):
    _clear_caches()
    regex_cache.install(cache_file)
    _compile_everything()
    regex_cache.save()
    regex_cache.uninstall()
    _clear_caches()
    regex_cache.install(cache_file)

    def no_parsing(*args, **kwargs):
        raise AssertionError("parsed a cached pattern")

    monkeypatch.setattr(regex_cache._parser, "parse", no_parsing)
    _compile_everything()
    assert not regex_cache._state["added"]


@pytest.mark.parametrize(
    "content",
    [b"", b"not marshal at all", marshal.dumps({"tag": "another python", "entries": {}}), marshal.dumps([1, 2, 3])],
)
def test_a_damaged_or_foreign_cache_is_ignored_and_replaced(cache_file, content):
    with open(cache_file, "wb") as fh:
        fh.write(content)
    _clear_caches()
    regex_cache.install(cache_file)
    _compile_everything()
    regex_cache.save()
    data = _read(cache_file)
    assert data["tag"] == regex_cache._TAG and data["entries"]
    assert stat.S_IMODE(os.stat(cache_file).st_mode) == 0o600


def test_the_file_holds_no_pattern_text(cache_file):
    """The redactor's patterns name the markers of secrets: only digests reach the disk."""
    _clear_caches()
    regex_cache.install(cache_file)
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----|github_pat_\w+")
    regex_cache.save()
    with open(cache_file, "rb") as fh:
        blob = fh.read()
    assert b"BEGIN" not in blob and b"github_pat" not in blob and b"PRIVATE" not in blob


def test_tampered_code_falls_back_to_re(cache_file):
    from learn_cli.text.hashes import sha1_hex

    pattern, flags = r"b(a+)r", 0
    digest = sha1_hex(f"{flags}:{pattern}".encode())
    with open(cache_file, "wb") as fh:  # code that SRE's validator rejects
        fh.write(marshal.dumps({"tag": regex_cache._TAG, "entries": {digest: (32, [999, 1, 2], 1, {}, (None, None))}}))
    regex_cache.install(cache_file)
    assert re.compile(pattern, flags).search("xbaar").group(1) == "aa"


def test_the_capture_hook_writes_the_cache_once(learn, tmp_path):
    payload = {"session_id": "s1", "cwd": str(learn.cwd), "hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
               "tool_input": {"command": "pytest -q"}, "tool_use_id": "toolu_1",
               "error": "Exit code 127\nbash: pytest: command not found"}
    assert learn("capture", input=payload).returncode == 0
    path = learn.home / "global" / regex_cache.FILE_NAME
    first = path.stat()
    assert stat.S_IMODE(first.st_mode) == 0o600
    payload["tool_use_id"] = "toolu_2"
    assert learn("capture", input=payload).returncode == 0
    assert path.stat().st_mtime_ns == first.st_mtime_ns  # nothing new to add: not rewritten


def test_a_missing_pattern_is_parsed_where_the_hard_stop_waits(cache_file, monkeypatch):
    """Parsing imports `re` in a hook (text.rx serves the rest without it); the hard stop's own
    spooling may need `re`, so it must not interrupt that import: the parse runs in
    deadline.held()."""
    from learn_cli.store import deadline
    from learn_cli.text import rx

    held_depths = []
    generate = regex_cache._generate

    def watched(pattern, flags):
        held_depths.append(deadline._holding)
        return generate(pattern, flags)

    monkeypatch.setattr(regex_cache, "_generate", watched)
    regex_cache.install(cache_file, patch=False)
    assert rx.search(r"held-(\d+)-test", "a held-42-test").group(1) == "42"
    assert held_depths == [1] and deadline._holding == 0
