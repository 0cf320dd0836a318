"""text.rx: `re`'s names for the hook path, served by the regex cache without importing `re`
(text/rx.py). Whatever serves it, a pattern behaves as `re` compiles it."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from learn_cli.capture import regex_cache
from learn_cli.text import rx

CASES = [(r"(\w+)-(\d+)", 0, "abc-12 de-3"), (r"^error:\s*(.*)$", rx.IGNORECASE | rx.MULTILINE, "x\nERROR: boom\ny"),
         (r"a.b", rx.DOTALL, "a\nb"), (r"""\d+  # digits""", rx.VERBOSE, "n 42"), (r"\w+", rx.ASCII, "été x"),
         (r"[\\/]+", 0, "a//b\\c")]


def test_the_flags_are_re_s():
    for name in ("TEMPLATE", "IGNORECASE", "LOCALE", "MULTILINE", "DOTALL", "UNICODE", "VERBOSE", "DEBUG", "ASCII",
                 "T", "I", "L", "M", "S", "U", "X", "A"):
        assert getattr(rx, name) == int(getattr(re, name)), name


def test_escape_is_re_s():
    text = "".join(map(chr, range(0x300))) + "€✓"
    assert rx.escape(text) == re.escape(text)
    assert rx.escape(text.encode("latin1", "ignore")) == re.escape(text.encode("latin1", "ignore"))


@pytest.fixture(params=["re", "cache"])
def served(request, tmp_path):
    regex_cache.uninstall()
    if request.param == "cache":
        regex_cache.install(str(tmp_path / regex_cache.FILE_NAME), patch=False)
    yield request.param
    regex_cache.uninstall()


@pytest.mark.parametrize("pattern, flags, text", CASES)
def test_the_module_functions_answer_as_re_s(served, pattern, flags, text):
    compiled = rx.compile(pattern, flags)
    assert (compiled.pattern, compiled.flags, compiled.groups) == (re.compile(pattern, flags).pattern,
                                                                  re.compile(pattern, flags).flags,
                                                                  re.compile(pattern, flags).groups)
    assert rx.findall(pattern, text, flags) == re.findall(pattern, text, flags)
    assert rx.split(pattern, text, flags=flags) == re.split(pattern, text, flags=flags)
    assert rx.sub(pattern, "<\\g<0>>", text, flags=flags) == re.sub(pattern, "<\\g<0>>", text, flags=flags)
    assert rx.subn(pattern, "-", text, count=1, flags=flags) == re.subn(pattern, "-", text, count=1, flags=flags)
    for name in ("search", "match", "fullmatch"):
        a, b = getattr(rx, name)(pattern, text, flags), getattr(re, name)(pattern, text, flags)
        assert (a and (a.span(), a.groups())) == (b and (b.span(), b.groups())), name
    spans = [m.span() for m in rx.finditer(pattern, text, flags)]
    assert spans == [m.span() for m in re.finditer(pattern, text, flags)]
    assert rx.compile(pattern, flags) is compiled  # compiled once per process
    assert rx.Pattern is re.Pattern and rx.error is re.error


def test_a_bad_pattern_raises_re_s_error(served):
    with pytest.raises(re.error):
        rx.compile("(unclosed")


def test_cached_patterns_are_served_without_importing_re(tmp_path):
    """A first process parses (importing `re`) and saves; the next imports no `re` for the same
    patterns, and a pattern the cache lacks still compiles (through `re`, imported then)."""
    cache = str(tmp_path / regex_cache.FILE_NAME)
    probe = ("import sys; from learn_cli.capture import regex_cache; from learn_cli.text import rx; "
             f"regex_cache.install({cache!r}, patch=False); "
             "m = rx.search(r'(\\w+)-(\\d+)', 'abc-12', rx.I); before = 're' in sys.modules; "
             "n = rx.search(sys.argv[1], 'abc-12'); regex_cache.save(); "
             "print(m.groups(), before, n and n.group(0), 're' in sys.modules)")
    run = [sys.executable, "-S", "-c", probe]
    env = {"PYTHONPATH": str(__import__("pathlib").Path(rx.__file__).parents[2])}
    first = subprocess.run(run + ["c-1"], capture_output=True, text=True, check=True, env=env).stdout.split()
    assert first[-3:] == ["True", "c-1", "True"]
    again = subprocess.run(run + ["c-1"], capture_output=True, text=True, check=True, env=env).stdout.split()
    assert again[-3:] == ["False", "c-1", "False"]
    missing = subprocess.run(run + ["[a-c]+"], capture_output=True, text=True, check=True, env=env).stdout.split()
    assert missing[-3:] == ["False", "abc", "True"]
