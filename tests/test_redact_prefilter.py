"""The redaction prefilter (`may_hold_secret`) is conservative: whenever `redact` changes a text,
the prefilter said "maybe". Checked over every secret corpus of the project (each value alone
and in its line, cut short, among look-alikes), the error corpus, the real payloads, texts
composed from all of their pieces and random text; and the prefilter must let ordinary text
through (else it buys nothing)."""

from __future__ import annotations

import importlib.util
import json
import random
import re
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from learn_cli.text.redact import MAX_SCAN_CHARS, changed_texts, may_hold_secret, redact

DATA = Path(__file__).resolve().parent / "data"
SHARED_CORPORA = Path(__file__).resolve().parents[2] / "shared" / "corpora"


def _module(name: str):
    spec = importlib.util.spec_from_file_location(name, DATA / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SECRETS = _module("secrets_corpus")
LEAKS = _module("leaks_corpus")


def _secret_texts() -> list[str]:
    texts = []
    for _kind, value, template in SECRETS.SECRETS:
        texts += [value, template.format(s=value), f"x{value}y", f"KEY_{value}", f'"{value}"']
    for _kind, value, template, _standalone in LEAKS.FORMATS:
        texts += [value, template.format(s=value), f"{value}\n", f"-{value}-"]
    for value, template in LEAKS.CUT:
        texts += [value, template.format(s=value)]
    return texts


SECRET_TEXTS = _secret_texts()
LOOKALIKES = list(SECRETS.LOOKALIKES) + list(LEAKS.LOOKALIKES)


def _real_texts() -> list[str]:
    """Every string of the error corpus, the real payloads and agent logs, and the shared
    corpora when present."""
    texts: list[str] = []

    def walk(value):
        if isinstance(value, str):
            texts.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    files = [DATA / "error_corpus.jsonl", *sorted((DATA / "real-payloads").rglob("*.json*")),
             *sorted((DATA / "agent-logs").rglob("*.json*")), *sorted(SHARED_CORPORA.glob("*.jsonl"))]
    for path in files:
        raw = path.read_text(encoding="utf-8", errors="replace")
        for line in raw.splitlines() if path.suffix == ".jsonl" else [raw]:
            try:
                walk(json.loads(line))
            except ValueError:
                texts.append(line)
    return texts


REAL_TEXTS = _real_texts()


def _missed(texts) -> list[str]:
    """Texts that redaction changes and the prefilter let through."""
    return [t for t in texts if redact(t) != t and not may_hold_secret(t)]


def test_every_secret_of_the_corpora_is_a_maybe():
    changed = [t for t in SECRET_TEXTS if redact(t) != t]
    assert len(changed) > 0.8 * len(SECRET_TEXTS)  # the corpus is what it says
    assert _missed(SECRET_TEXTS) == []


def test_look_alikes_and_real_texts_never_slip_through():
    assert _missed(LOOKALIKES) == []
    assert len(REAL_TEXTS) > 500
    assert _missed(REAL_TEXTS) == []


def test_secrets_among_real_text():
    """A secret in the middle of real text, with each kind of neighbour."""
    neighbours = [t[:300] for t in REAL_TEXTS[::25]]
    texts = [f"{n}\n{s}\n{n}" for n, s in zip(neighbours * 4, SECRET_TEXTS[::3], strict=False)]
    assert _missed(texts) == []


def test_ordinary_text_passes_the_prefilter():
    """Without this the prefilter buys nothing: most real failure texts are let through."""
    clean = [t for t in REAL_TEXTS if redact(t) == t]
    passed = sum(not may_hold_secret(t) for t in clean)
    assert passed > 0.6 * len(clean), f"{passed} of {len(clean)}"
    assert not may_hold_secret("Traceback (most recent call last):\n  File \"/home/dev/app/main.py\", line 3")
    assert not may_hold_secret("npm ERR! ERESOLVE unable to resolve dependency tree: peer react@^18")


def test_long_text_is_a_maybe():
    """`redact` cuts it and adds a note: changed, whatever it holds."""
    assert may_hold_secret("a" * (MAX_SCAN_CHARS + 1))


def test_case_folds_are_all_known():
    """The rules that ignore case match `İ`, `ı` and `ſ` as ASCII letters although their lower
    case is not one: the prefilter, which reads the lower case, says maybe for them. No other
    character does that."""
    letter = re.compile(r"(?i)[a-z]").fullmatch
    odd = [chr(cp) for cp in range(128, sys.maxunicode + 1)
           if not 0xD800 <= cp < 0xE000 and letter(chr(cp)) and not (
               len(chr(cp).lower()) == 1 and "a" <= chr(cp).lower() <= "z")]
    assert odd == ["\u0130", "\u0131", "\u017f"]
    header = "x-amz-\u017fecurity-token: AbC123dEf456"  # the header rule reads `ſ` as `s`
    assert redact(header) != header
    assert may_hold_secret(header)


PIECES = [t for t in SECRET_TEXTS[::7]] + LOOKALIKES[::3] + [
    "password=", "PASSWORD: ", '"token": "', "'", '"', "://u:", "@host/", "Authorization: Bearer ",
    "-----BEGIN RSA PRIVATE KEY-----", "\n", " ", "\t", "--password ", "--db_password=", "mysql -p",
    "docker login -p ", "redis-cli -a ", "curl -u a:", "machine h login u password ", "export ", "=",
    ":", "[REDACTED:", "]", "\\n", "eyJ", ".", "/", "_", "-", "sha512-", "h1:", "0x", "AKIA", "ghp_",
    "sk-", "xoxb-", "the password is ", "my api key was ", "Cookie: ", "x-api-key: ", "İ", "ſ", "K",
    "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", "0123456789", "abcdefghijklmnop", "ABCDEFGHIJKLMNOP",
]


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES) | st.text(max_size=16), max_size=12).map("".join))
def test_composed_texts(text):
    if redact(text) != text:
        assert may_hold_secret(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=300))
def test_random_printable_texts(text):
    if redact(text) != text:
        assert may_hold_secret(text)


@pytest.mark.parametrize("text", [
    "word A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7",     # a random run after a word
    "/home/a/A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r/x",  # a random path segment
    "github_pat_" + "A1b2C3d4E5f6" * 7,             # a prefix with separators inside
    "MY_TOKEN_ghp_" + "A1b2C3d4E5f6" * 3,           # a prefix after a separator of the word
    "postgres://user:s3cr3t-Pw@db:5432/app",
    "https://user:s3cr3tpw",                         # cut before the host
])
def test_each_kind_of_place(text):
    assert redact(text) != text
    assert may_hold_secret(text)


def test_texts_asked_about_in_groups_get_the_answers_of_one_by_one():
    """`changed_texts` asks the prefilter about texts joined by line breaks first."""
    texts = SECRET_TEXTS + LOOKALIKES + REAL_TEXTS[::2]
    random.Random(4).shuffle(texts)
    assert changed_texts(texts) == [n for n, t in enumerate(texts) if redact(t) != t]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.sampled_from(PIECES) | st.text(max_size=16), max_size=6).map("".join), max_size=40))
def test_composed_groups(texts):
    assert changed_texts(texts) == [n for n, t in enumerate(texts) if t and redact(t) != t]
