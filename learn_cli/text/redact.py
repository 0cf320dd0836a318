"""Secret redaction: every credential in captured text becomes `[REDACTED:<kind>]` (SPEC §4).

It runs on every tool call, so it is built for the common case of text with no secret in it:

- Importing costs only `re` (every pattern is compiled lazily, once, on first need).
- Provider tokens (about 170 prefixes) are found by three scans of the text, whatever their
  number: a separator followed by token characters, upper-case prefixes, and `str.find` for a
  few lower-case ones; the word at each hit is looked up in a table of prefixes.
- Other rules are guarded by cheap substring tests ("://", "-pass", "authorization", ...): a
  rule whose trigger is absent costs a few `in` checks and its pattern is never even compiled.
- Patterns start with a literal where they can (a leading look-behind or character class makes
  `re` try every position), and names in assignments are found with str.find from a keyword.

Rules run from the most specific to the most generic: private key blocks, provider tokens with a
known prefix (whole, or cut short by an agent's output), JWTs, then context rules (credentials
in URLs, auth headers, `--password x`, `redis-cli -a x`, a secret known by its place among the
arguments (`htpasswd -b f user pw`, `echo pw | sudo -S`), `SECRET_TOKEN=...` assignments, labels
in mid-line, "the password is x") and last a high-entropy sweep. Context rules never touch a value
that is (or holds) `[REDACTED:...]`, and `redact` repeats passes until one changes nothing, so
`redact(redact(x)) == redact(x)`.

Bounded work: repetitions are possessive or capped (values at 1 KB, names at 240 characters),
so each pass is linear, and text longer than MAX_SCAN_CHARS is cut at a line break before
scanning (what was not scanned is dropped, never returned). Measured: ~0.13 ms for 2 KB of
ordinary error text, ~60 ms for 1 MB, about 1 s for the worst hostile 1 MB found (so, for any
input size, including 50 MB).

Decisions on look-alikes (deliberately NOT redacted by the generic sweep):
- Pure hexadecimal strings of any length and case (git SHAs, sha256 digests in lockfiles,
  Docker image digests, UUIDs, cache keys, 0x addresses): checksums and identifiers far more
  often than secrets, and error keys need them stable. A hex secret is still caught in context
  (`API_KEY=<hex>`, `--token <hex>`, URL passwords, prefixes such as `dop_v1_`).
- Subresource-integrity hashes (`sha512-<base64>`, `sha256-...`) and Go checksums
  (`h1:<base64>`): public hashes of public packages, needed to diagnose EINTEGRITY errors.
- Base64 that decodes to ordinary printable text which itself holds no secret (test fixtures).
- Paths, identifiers, CamelCase class names and alphabet constants: few case/digit alternations.
"""

from __future__ import annotations

from learn_cli.text import rx
from learn_cli.text.lite import cache, lru_cache

MAX_SCAN_CHARS = 1_000_000
"""Longer input is cut (at a line boundary when one is near) before scanning."""

PLACEHOLDER_PREFIX = "[REDACTED:"
_MIN_ENTROPY_RUN = 32


def _mark(kind: str) -> str:
    return f"{PLACEHOLDER_PREFIX}{kind}]"


# ---------------------------------------------------------------------------------------------
# Provider tokens with a known prefix. Reference: the provider rules of gitleaks' default rule
# set (config/gitleaks.toml), plus the AI, CI and hosting providers agents meet most, whose
# tokens also carry a prefix. Each rule: (kind, prefixes, body characters, length of a whole
# body, whether a cut-short token counts, extra check of a whole token or None).
#
# A token is a prefix followed by body characters. Whole tokens (at least the body length)
# are secrets; so are tokens cut short by an agent's output or a cap (`ghp_` and 26 of its 36
# characters) when the rule allows it: at least CUT_MIN body characters mixing two classes of
# letters and digits. Short prefixes that also begin ordinary words (`key-`, `SK`, `API-`)
# need the whole length.

CUT_MIN = 12

_B62 = "A-Za-z0-9"
_URL = "A-Za-z0-9_\\-"
_HEX = "a-fA-F0-9"
_B64 = "A-Za-z0-9+/="

_PREFIXED = (
    ("aws-access-key", ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"), "A-Z0-9", 16, True, None),
    ("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), _B62, 36, True, None),
    ("github-token", ("github_pat_",), _B62 + "_", 82, True, None),
    ("gitlab-token", ("glpat-", "glptt-", "glcbt-", "gldt-", "glrt-", "glft-", "glimt-", "glagent-",
                      "gloas-", "glsoat-", "glffct-", "GR1348941"), _URL + ".", 20, True, None),
    ("slack-token", ("xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxe-", "xoxs-", "xoxo-", "xoxe.xox", "xapp-"),
     _URL, 10, True, "digit"),
    ("anthropic-key", ("sk-ant-",), _URL, 20, True, None),
    ("openrouter-key", ("sk-or-v1-",), _B62, 64, True, None),
    ("openai-key", ("sk-proj-", "sk-svcacct-", "sk-admin-"), _URL, 40, True, None),
    ("openai-key", ("sk-",), _URL, 20, False, "digit+upper-or-32"),
    ("google-api-key", ("AIza",), _URL, 35, True, None),
    ("google-oauth-token", ("ya29.",), _URL, 20, True, None),
    ("google-oauth-secret", ("GOCSPX-",), _URL, 28, True, None),
    ("stripe-key", ("sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_", "whsec_"),
     _B62, 16, True, None),
    ("npm-token", ("npm_",), _B62, 36, True, None),
    ("pypi-token", ("pypi-AgE",), _URL, 50, True, None),
    ("huggingface-token", ("hf_",), _B62, 30, False, "mixed"),
    ("huggingface-token", ("api_org_",), _B62, 34, True, "mixed"),
    ("sendgrid-key", ("SG.",), _URL + ".", 66, True, None),
    ("twilio-key", ("SK", "AC"), _HEX, 32, False, "digit"),
    ("digitalocean-token", ("dop_v1_", "doo_v1_", "dor_v1_"), _HEX, 64, True, None),
    ("shopify-token", ("shpat_", "shpca_", "shppa_", "shpss_"), _HEX, 32, True, None),
    ("doppler-token", ("dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."), _B62, 40, True, None),
    ("mailgun-key", ("key-", "pubkey-"), _B62, 32, False, "digit"),
    ("vault-token", ("hvs.", "hvb.", "hvr."), _URL, 24, True, None),
    ("age-secret-key", ("AGE-SECRET-KEY-1",), "0-9A-Z", 58, True, None),
    ("1password-token", ("ops_eyJ",), _B64, 250, True, None),
    ("adobe-client-secret", ("p8e-",), _B62, 32, True, None),
    ("alibaba-access-key", ("LTAI",), _B62, 20, True, None),
    ("atlassian-token", ("ATATT3",), _URL + "=", 186, True, None),
    ("bitbucket-token", ("ATBB",), _B62, 32, True, None),
    ("artifactory-token", ("AKCp",), _B62, 69, True, None),
    ("artifactory-token", ("cmVmdGtuOjAxOj",), _B62, 50, True, None),
    ("clickhouse-key", ("4b1d",), _B62, 38, False, None),
    ("clojars-token", ("CLOJARS_",), _B62, 60, True, None),
    ("cloudflare-ca-key", ("v1.0-",), _HEX + "-", 171, True, None),
    ("databricks-token", ("dapi",), _HEX, 32, False, None),
    ("dynatrace-token", ("dt0c01.",), _B62 + ".", 89, True, None),
    ("easypost-token", ("EZAK", "EZTK"), _B62, 54, True, None),
    ("facebook-token", ("EAAM", "EAAC"), _B62, 100, True, None),
    ("square-token", ("EAAA", "sq0atp-", "sq0csp-"), _URL, 22, True, None),
    ("flutterwave-key", ("FLWSECK_TEST-", "FLWSECK-", "FLWPUBK_TEST-"), _HEX + "X-", 12, True, None),
    ("flyio-token", ("fo1_", "fm1a_", "fm1r_", "fm2_"), _B64 + "_-", 43, True, None),
    ("frameio-token", ("fio-u-",), _URL + "=", 64, True, None),
    ("grafana-token", ("glc_", "glsa_", "eyJrIjoi"), _B64 + "_", 32, True, None),
    ("harness-token", ("pat.", "sat."), _URL + ".", 68, False, None),
    ("heroku-token", ("HRKU-",), _URL, 60, True, None),
    ("infracost-token", ("ico-",), _B62, 32, False, None),
    ("intra42-secret", ("s-s4t2ud-", "s-s4t2af-"), _HEX, 64, True, None),
    ("linear-key", ("lin_api_",), _B62, 40, True, None),
    ("new-relic-key", ("NRAK-", "NRJS-", "NRII-"), _URL, 19, True, None),
    ("octopus-key", ("API-",), "A-Z0-9", 26, False, "digit"),
    ("openshift-token", ("sha256~",), _URL, 43, True, None),
    ("planetscale-token", ("pscale_tkn_", "pscale_pw_", "pscale_oauth_"), _URL + ".=", 32, True, None),
    ("postman-key", ("PMAK-",), _HEX + "-", 59, True, None),
    ("prefect-token", ("pnu_",), _B62, 36, True, None),
    ("pulumi-token", ("pul-",), _HEX, 40, False, None),
    ("readme-token", ("rdme_",), _B62, 70, True, None),
    ("rubygems-token", ("rubygems_",), _HEX, 48, True, None),
    ("scalingo-token", ("tk-us-",), _URL, 48, True, None),
    ("sendinblue-key", ("xkeysib-",), _B62 + "-", 81, True, None),
    ("sentry-token", ("sntrys_", "sntryu_"), _B64 + "_", 64, True, None),
    ("settlemint-token", ("sm_pat_", "sm_aat_", "sm_sat_"), _B62, 16, True, None),
    ("shippo-token", ("shippo_live_", "shippo_test_"), _HEX, 40, True, None),
    ("typeform-token", ("tfp_",), _URL + ".=", 59, True, None),
    ("sourcegraph-token", ("sgp_",), _HEX + "_", 40, True, None),
    ("yandex-key", ("AQVN",), _URL, 35, True, None),
    ("duffel-token", ("duffel_test_", "duffel_live_"), _URL + "=", 43, True, None),
    ("dropbox-token", ("sl.u.",), _URL + ".", 100, True, None),
    ("mapbox-token", ("sk.eyJ",), _URL + ".", 80, True, None),
    ("plaid-token", ("access-production-", "access-sandbox-", "access-development-"), _HEX + "-", 36, True, None),
    ("contentful-token", ("CFPAT-",), _URL, 43, True, None),
    ("xai-key", ("xai-",), _B62, 80, True, None),
    ("groq-key", ("gsk_",), _B62, 52, True, None),
    ("replicate-token", ("r8_",), _B62, 37, False, "digit"),
    ("perplexity-key", ("pplx-",), _B62, 48, True, None),
    ("tavily-key", ("tvly-",), _URL, 32, True, None),
    ("nvidia-key", ("nvapi-",), _URL, 64, True, None),
    ("pinecone-key", ("pcsk_",), _URL, 60, True, None),
    ("langsmith-key", ("lsv2_pt_", "lsv2_sk_"), _HEX + "_", 43, True, None),
    ("supabase-key", ("sbp_", "sb_secret_"), _URL, 31, True, None),
    ("notion-token", ("ntn_",), _B62, 46, True, None),
    ("figma-token", ("figd_",), _URL, 40, True, None),
    ("docker-token", ("dckr_pat_", "dckr_oat_"), _URL, 27, True, None),
    ("circleci-token", ("CCIPAT_",), _URL, 40, True, None),
    ("buildkite-token", ("bkua_",), _HEX, 40, True, None),
    ("deno-token", ("ddp_", "ddw_"), _B62, 36, True, None),
    ("tailscale-key", ("tskey-auth-", "tskey-api-", "tskey-client-", "tskey-scim-", "tskey-webhook-"),
     _URL, 20, True, None),
    ("render-key", ("rnd_",), _B62, 32, True, None),
    ("netlify-token", ("nfp_",), _B62, 36, True, None),
    ("neon-key", ("napi_",), _B62, 60, True, None),
    ("nuget-key", ("oy2",), "a-z0-9", 43, False, "digit"),
    ("jwt", ("eyJ",), _URL + ".", 30, True, "jwt"),
)


def _head(prefix: str) -> str:
    return prefix[:4]


@cache
def _prefix_table() -> dict[str, list]:
    """First (up to) 4 characters of a prefix -> [(prefix, rule), ...], longest prefix first.
    The patterns are written and compiled when a token starts with their prefix (`_token_end`):
    a text holds few of them, and compiling all ~180 up front cost ~17 ms in every process that
    redacted anything (a hook call, a command naming its project); writing them, 2.3 M
    instructions (`re.escape`)."""
    table: dict[str, list] = {}
    for rule in _PREFIXED:
        for prefix in rule[1]:
            table.setdefault(_head(prefix), []).append((prefix, rule))
    for entries in table.values():
        entries.sort(key=lambda e: -len(e[0]))
    return table


# Where a prefixed token may start: after a separator followed by body characters (most
# prefixes end with `_`, `-`, `.` or `~`), at an upper-case prefix without separator, or at a
# few lower-case ones found with str.find. One scan of the text each, all in C.
_SEPARATED = r"[_.~-][A-Za-z0-9+/]{8}"
_UPPER_PREFIXES = (r"A(?:KIA|SIA|BIA|CCA|3T[A-Z0-9]|Iza|TATT3|TBB|KCp|QVN)|E(?:ZAK|ZTK|AA[ACM])|LTAI|GR1348941"
                   r"|SK[0-9a-fA-F]{8}|AC[0-9a-f]{8}")
_LOWER_PREFIXES = ("eyJ", "dapi", "4b1d", "oy2", "cmVmdGtu", "xox", "xapp-")
_WORD_STR = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.~-"


def _token_starts(text: str, table: dict) -> list[int]:
    starts = set()
    word_start = -1
    for m in _compiled(_SEPARATED).finditer(text):
        hit = m.start()
        if hit < word_start:
            continue
        floor = max(0, hit - 40)
        chunk = text[floor:hit]
        at = floor + len(chunk.rstrip(_WORD_STR))
        if at == word_start:
            continue  # another separator of the same word
        word_start = at
        if _known_head(text, at, table):
            starts.add(at)
        else:  # a prefix after a separator of the word (`MY_TOKEN_ghp_…`, `secret-sk-ant-…`)
            starts.update(i.end() for i in _compiled(r"[_.~-]").finditer(text, at, hit)
                          if _known_head(text, i.end(), table))
    for m in _compiled(_UPPER_PREFIXES).finditer(text):
        starts.add(m.start())
    for literal in _LOWER_PREFIXES:
        at = text.find(literal)
        while at >= 0:
            starts.add(at)
            at = text.find(literal, at + 1)
    return sorted(starts)


def _known_head(text: str, at: int, table: dict) -> bool:
    return text[at:at + 4] in table or text[at:at + 3] in table or text[at:at + 2] in table


def _redact_prefixed(text: str) -> str:
    table = _prefix_table()
    spans, pos = [], 0
    for start in _token_starts(text, table):
        if start < pos or (start and text[start - 1].isalnum()):
            continue
        for entry in (*table.get(text[start:start + 4], ()), *table.get(text[start:start + 3], ()),
                      *table.get(text[start:start + 2], ())):
            end = _token_end(text, start, entry)
            if end:
                spans.append((start, end, entry[1][0]))
                pos = end
                break
    return _splice(text, spans)


def _token_end(text: str, start: int, entry) -> int:
    """End of the token of this rule at `start`, or 0 when there is none."""
    prefix, (_kind, _p, chars, length, cut_ok, check) = entry
    m = _compiled(rx.escape(prefix) + f"([{chars}]{{1,1024}}+)").match(text, start)
    if m is None:
        return 0
    body = m.group(1)
    if _is_placeholder_body(body):
        return 0
    if len(body) >= length:
        return m.end() if check is None or _CHECKS[check](body) else 0
    if cut_ok and len(body) >= CUT_MIN and check != "jwt" and (
            _CHECKS[check](body) if check else _classes(body) >= 2):
        return m.end()
    return 0


def _classes(body: str) -> int:
    return (any(c.islower() for c in body) + any(c.isupper() for c in body)
            + any(c.isdigit() for c in body))


def _is_placeholder_body(body: str) -> bool:
    """`ghp_xxxxxxxx…`, `AKIA…EXAMPLE`, `sk-your-key-here`: documentation, not a credential."""
    core = body.strip("_-.=")
    return (len(set(core.lower())) <= 3 or core.endswith(("EXAMPLE", "example"))
            or "xxxxxx" in core.lower() or "your" in core.lower() and "here" in core.lower())


def _jwt_shaped(body: str) -> bool:
    """`eyJ<header>.eyJ<payload>.<signature>`: the header and payload decode to JSON."""
    parts = body.split(".")
    return len(parts) >= 2 and parts[1].startswith("eyJ") and len(parts[0]) >= 8 and len(parts[1]) >= 11


_CHECKS = {
    "digit": lambda b: any(c.isdigit() for c in b),
    "mixed": lambda b: b.lower() != b and b.upper() != b,
    "digit+upper-or-32": lambda b: any(c.isdigit() for c in b) and (b.lower() != b or len(b) >= 32),
    "jwt": _jwt_shaped,
}


# Tokens whose start is not a fixed prefix: (kind, substrings that must occur, pattern).
_SHAPED = (
    ("telegram-token", (":AA",), r"(?<![0-9])[0-9]{8,10}:AA[A-Za-z0-9_-]{20,40}(?![A-Za-z0-9_-])"),
    ("azure-ad-client-secret", ("Q~",),
     r"(?<![A-Za-z0-9_~.])[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])"),
    ("terraform-token", (".atlasv1.",), r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{20,70}"),
    ("maxmind-key", ("_mmk",), r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk"),
    ("braintree-token", ("$production$", "$sandbox$"),
     r"access_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32}"),
    ("facebook-token", ("|", "%7C"), r"(?<![0-9])[0-9]{15,16}(?:\||%7C)[0-9A-Za-z_-]{27,40}(?![A-Za-z0-9_-])"),
)

# Secrets that sit after a fixed label; the label stays, the value goes.
_LABELLED = (
    ("aws-secret-key", ("ecret", "ECRET"),
     r"(?i)(\b(?:aws_?secret_?(?:access_?)?key|secret_?access_?key)[\"']?[ \t]*"
     r"(?:=>|[:=])[ \t]*[\"']?)((?-i:[A-Za-z0-9/+]{40}))(?![A-Za-z0-9/+])"),
    ("azure-storage-key", ("AccountKey=", "SharedAccessKey="),
     r"((?:AccountKey|SharedAccessKey)=)([A-Za-z0-9+/]{20,}={0,2})"),
    ("azure-sas", ("sig=",),
     r"([?&]sig=)([A-Za-z0-9%+/]{20,}(?:=|%3[dD]){0,2})"),
    ("slack-webhook", ("hooks.slack.com",),
     r"(https?://hooks\.slack\.com/(?:services|workflows|triggers)/)"
     r"([A-Za-z0-9_-]+(?:/[A-Za-z0-9_-]+)*)"),
    ("discord-webhook", ("/api/webhooks/",),
     r"(https?://(?:[a-z]+\.)?discord(?:app)?\.com/api/webhooks/[0-9]+/)([A-Za-z0-9_-]{20,})"),
    ("teams-webhook", ("webhook.office.com",),
     r"(https://[A-Za-z0-9-]+\.webhook\.office\.com/webhookb2/)([^\s\"'<>]{20,})"),
    ("sidekiq-secret", ("CONTRIBSYS__COM",),
     r"(BUNDLE_(?:ENTERPRISE|GEMS)__CONTRIBSYS__COM[\"']?[ \t]*[=:][ \t]*[\"']?)([a-f0-9]{8}:[a-f0-9]{8})"),
    ("gitlab-session", ("_gitlab_session=",), r"(_gitlab_session=)([0-9a-z]{20,})"),
)


@cache
def _compiled(pattern: str, flags: int = 0) -> rx.Pattern[str]:
    return rx.compile(pattern, flags)


def _redact_providers(text: str) -> str:
    text = _redact_prefixed(text)
    for kind, triggers, pattern in _SHAPED:
        if any(t in text for t in triggers):
            text = _compiled(pattern).sub(_mark(kind), text)
    if "." in text:
        text = _redact_discord(text)
    for kind, triggers, pattern in _LABELLED:
        if any(t in text for t in triggers):
            text = _replace_values(text, _compiled(pattern), kind)
    return text


# A Discord bot token is <base64 of the bot's numeric id>.<6 chars>.<27-40 chars>. The search
# starts at the first dot (a pattern starting with [MNO] would be tried at every letter).
_DISCORD_TAIL = r"\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_-])"
_TOKEN_STR = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"


def _redact_discord(text: str) -> str:
    spans = []
    for m in _compiled(_DISCORD_TAIL).finditer(text):
        window = text[max(0, m.start() - 29):m.start()]
        head = window[len(window.rstrip(_TOKEN_STR)):]
        if 24 <= len(head) <= 28 and head[0] in "MNO" and _is_discord_token(head + m.group()):
            spans.append((m.start() - len(head), m.end(), "discord-token"))
    return _splice(text, spans)


def _is_discord_token(token: str) -> bool:
    """The first part decodes to digits (a user id); the last one mixes upper and lower case."""
    import binascii

    head = token.split(".", 1)[0]
    try:
        user_id = binascii.a2b_base64(head + "=" * (-len(head) % 4))
    except (binascii.Error, ValueError):
        return False
    signature = token.rsplit(".", 1)[-1]
    return user_id.isdigit() and signature.lower() != signature and signature.upper() != signature


def _splice(text: str, spans: list[tuple[int, int, str]]) -> str:
    """`text` with each (start, end, kind) span, in order and not overlapping, replaced."""
    if not spans:
        return text
    out, pos = [], 0
    for start, end, kind in spans:
        out.append(text[pos:start])
        out.append(_mark(kind))
        pos = end
    out.append(text[pos:])
    return "".join(out)


# ---------------------------------------------------------------------------------------------
# Private key blocks, including ones cut off before their END line.

_BEGIN_KEY = r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----"
_END_KEY = r"-----END[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----"
# Body of a truncated key: lines of base64 and armour headers, the line breaks real or
# JSON-escaped, the lines possibly prefixed by `cat -n` / Read-tool numbers. A line holding
# anything else ends the body. Possessive, so it cannot backtrack.
_LINE_BREAK = r"(?:\r?\n|(?:\\r)?\\n)"
_KEY_BODY = (
    # a whole line of base64 or an armour header (after an optional line-number prefix) ...
    r"(?:" + _LINE_BREAK + r"(?:[ \t]*+[0-9]++(?:→|\t))?[ \t]*+"
    r"(?:[A-Za-z0-9+/=]++|(?:Proc-Type|DEK-Info|Version|Comment|Hash|Charset):[^\n\\]*+)?"
    r"[ \t]*+(?=" + _LINE_BREAK + r"|-----|\Z|[\"'])"
    # ... or, for a key flattened onto one line, a long base64 chunk
    r"|[ \t]*+[A-Za-z0-9+/=]{16,}+(?=[ \t\r\n\"'\\]|-----|\Z))*+"
    # and the start of a last line that was cut off mid-way ("MIIEow…")
    r"(?:" + _LINE_BREAK + r"(?:[ \t]*+[0-9]++(?:→|\t))?[ \t]*+[A-Za-z0-9+/=]{16,}+)?"
)
_MAX_KEY_CHARS = 65_536


def _redact_private_keys(text: str) -> str:
    begin_re, end_re = _compiled(_BEGIN_KEY), _compiled(_END_KEY)
    body_re = _compiled(_KEY_BODY)
    out: list[str] = []
    pos = 0
    for begin in begin_re.finditer(text):
        if begin.start() < pos:
            continue
        next_begin = text.find("-----BEGIN", begin.end())
        limit = min(next_begin if next_begin >= 0 else len(text), begin.end() + _MAX_KEY_CHARS)
        end = end_re.search(text, begin.end(), limit)
        if end:
            stop = end.end()
        else:  # truncated: the body up to the first line that is not base64, minus trailing blanks
            stop = body_re.match(text, begin.end()).end()
            while stop > begin.end() and text[stop - 1] in " \t\r\n":
                stop -= 1
        out.append(text[pos:begin.start()])
        out.append(_mark("private-key"))
        pos = stop
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


# ---------------------------------------------------------------------------------------------
# Context rules: the label tells us the value is secret, whatever it looks like.

_PLACEHOLDER_WORDS = frozenset(
    "true false null none nil undefined yes no on off required optional string str "
    "int bool boolean number object include omit same-origin inherit".split()
)


_PLACEHOLDER_STARTS = ("your_", "your-", "<your", "insert_", "insert-", "replace_", "replace-", "changeme",
                       "change_me", "change-me")


def _is_placeholder(value: str) -> bool:
    """A value that is a reference or a blank, not a secret: `$VAR`, `<your-token>`, `***`."""
    v = value.strip().strip("\"'")
    if not v or v.startswith(("$", "%(", "%{", "{{", "<REDACTED", "***", "…")):
        return True
    if PLACEHOLDER_PREFIX in v:  # already redacted, wholly or by a later rule of an earlier pass
        return True
    if v[0] + v[-1] in ("<>", "[]", "{}"):  # <your-token>, [YOUR-PASSWORD], {password}
        return True
    if v in ("...", "-") or (len(v) >= 3 and set(v) <= {"x", "X", "*", "."}):
        return True
    low = v.lower()
    if "xxxxxxxx" in low or low.startswith(_PLACEHOLDER_STARTS):  # sk-xxxx…, YOUR_API_KEY
        return True
    return v.lower() in _PLACEHOLDER_WORDS


_URL_PASSWORD = (
    r"(://[^\s:/?#@\[\]\"'<>]*:)"
    r"([^\s/?#\"'<>]{1,512})(?=@[A-Za-z0-9\[][^\s@/?#\"'<>]*(?:[/?#\s\"'<>]|$))"
)


def _may_hold_url_password(text: str) -> bool:
    """Some `://` is followed, before any blank, by `:` and then `@`."""
    at = text.find("://")
    while at >= 0:
        end = text.find("@", at + 3, at + 1100)
        if end > 0 and ":" in text[at + 3:end] and len(text[at:end].split(None, 1)) == 1:
            return True
        at = text.find("://", at + 3)
    return False


# A URL cut short before its `@host` (`https://user:pass` at the end of an agent's output), and
# a token given as the user (`https://<token>@github.com`).
_URL_CUT_PASSWORD = r"(://[^\s:/?#@\[\]\"'<>]*:)([^\s/?#@\"'<>]{3,512})(?=$|[\s\"'<>]|\\n)"
_URL_TOKEN_USER = r"(://)([A-Za-z0-9_.~%-]{20,256})(?=@[A-Za-z0-9\[])"


def _redact_url_passwords(text: str) -> str:
    if _may_hold_url_password(text):
        text = _replace_values(text, _compiled(_URL_PASSWORD), "url-password")
    text = _replace_values(text, _compiled(_URL_CUT_PASSWORD), "url-password", accept=_not_a_port)
    if "@" in text:
        text = _replace_values(text, _compiled(_URL_TOKEN_USER), "url-password", accept=_token_like)
    return text


def _not_a_port(value: str) -> bool:
    """A port (3000), also where a sentence, an nginx `proxy_pass` line, parentheses, markup (a
    code span's closing backtick, `**`) or text in another script (`8080，服务`, `8787で起動`)
    follows it at once: no password."""
    digits = len(value) - len(value.lstrip("0123456789"))
    return not (0 < digits <= 5 and (digits == len(value) or value[digits] in ".,;:)]}!?`*"
                                     or not value[digits].isascii()))


_AUTH_LABEL = r"(?<![\w-])(?:proxy-)?authorization[\"']?[ \t]*[:=][ \t]*[\"']?"
_LONG_SCHEMES = r"(?:digest|negotiate|ntlm|hmac|aws4-hmac-sha256|gosign)[ \t]+"
# Schemes whose credentials run on with commas and blanks: the rest of the line goes ...
_AUTH_LONG = (
    r"(?i)(" + _AUTH_LABEL + _LONG_SCHEMES + r")([^\r\n']{1,4096}?)(?=[ \t]*(?:$|[\r\n']))"
)
# ... the others carry one token.
_AUTH_TOKEN = (
    r"(?i)(" + _AUTH_LABEL + r"(?!" + _LONG_SCHEMES + r")"
    r"(?:(?:bearer|basic|token|bot|apikey|api-key|sso-key|otp)[ \t]+)?)([^\s\"',;]{1,4096})"
)
_KEY_HEADER = (
    r"(?i)((?<![\w-])(?:x-)?(?:api-?key|api-token|auth-token|access-token|goog-api-key|"
    r"private-token|subscription-key|csrf-token|xsrf-token|amz-security-token)"
    r"[\"']?[ \t]*:[ \t]*[\"']?)"
    r"([^\s\"',;]{1,4096})"
)
_COOKIE_HEADER = r"(?i)((?<![\w-])(?:set-)?cookie[\"']?[ \t]*:[ \t]*[\"']?)([^\r\n\"']{1,8192})"


def _redact_headers(text: str, low: str) -> str:
    if "authorization" in low:
        if any(scheme in low for scheme in ("digest", "negotiate", "ntlm", "hmac", "gosign")):
            text = _replace_values(text, _compiled(_AUTH_LONG, rx.MULTILINE), "authorization")
        text = _replace_values(text, _compiled(_AUTH_TOKEN), "authorization")
    if "-key" in low or "apikey" in low or "-token" in low:
        text = _replace_values(text, _compiled(_KEY_HEADER), "authorization")
    if "cookie" in low:
        text = _replace_values(text, _compiled(_COOKIE_HEADER), "cookie")
    return text


def _replace_values(text: str, pattern: rx.Pattern[str], kind: str,
                    keep_quotes: bool = False, accept=None) -> str:
    """Replace group 2 (the value) of each match of `pattern`; group 1 is its label.

    Unlike re.sub, a match turned down (its value is `$VAR`, `<placeholder>`, already redacted)
    does not hide what follows its label: the search resumes at the value, which may hold the
    next label (`curl -u :[REDACTED:x]:curl -u :pw`). Same result on every pass, still linear.
    """
    out, pos, at = [], 0, 0
    while (m := pattern.search(text, at)) is not None:
        value_start, value = m.start(2), m.group(2)
        if _is_placeholder(value) or (accept is not None and not accept(value)):
            at = max(value_start, m.start() + 1)
            continue
        out.append(text[pos:value_start])
        out.append(_quoted_mark(value, kind) if keep_quotes else _mark(kind))
        pos = at = m.end(2)
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


_QUOTED_OR_WORD = r"(\"[^\"\n]{0,1024}\"|'[^'\n]{0,1024}'|[^\s\"'][^\s\"';&|]{0,1023})"
_SECRET_FLAG = (
    r"(--?(?!(?:no|ask|prompt|skip|use|show|print|with|require|reset|change|forgot|save|"
    r"store|remember)-)(?:[a-z0-9]+[-_]){0,3}"
    r"(password|passwd|pass|passphrase|token|secret|api[-_]?key|access[-_]?key|secret[-_]?key|"
    r"private[-_]?key|credentials?|auth|auth[-_]?key|auth[-_]?token|secret[-_]?string|requirepass|masterauth)"
    r"(?:=|[ \t]+))" + _QUOTED_OR_WORD
)
# Every flag the pattern accepts contains "-<word>", or "--" and "_<word>" (`--db_password`).
_FLAG_WORDS = ("pass", "token", "secret", "api", "access", "private", "credential", "auth", "requirepass",
               "masterauth")
_MYSQL_PASSWORD = (
    r"((?<![\w-])(?i:mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mysqlsh|mariadb|"
    r"mariadb-dump)(?![\w-])[^\n|;&]{0,400}?[ \t]-p)"
    r"(\"[^\"\n]{1,1024}\"|'[^'\n]{1,1024}'|[^\s\"']{1,1024})"
)
_SPACED_P_PASSWORD = (
    r"((?<![\w-])(?:sshpass|(?:docker|podman|buildah|nerdctl|skopeo|oras|az|oc|cf|argocd|helm(?:[ \t]+registry)?)"
    r"[ \t]+login)(?![\w-])[^\n|;&]{0,400}?[ \t]-p[ \t]+)" + _QUOTED_OR_WORD
)
# Programs whose password flag is a single letter: (programs, flag, what joins it to the value:
# blanks, or nothing for `7z a -pS3cret`, `openssl … pass:x`, `smbclient -U bob%x`).
_SPACED, _ATTACHED = "[ \\t]+", ""
_PROGRAM_FLAGS = (
    (("redis-cli", "keydb-cli", "valkey-cli"), r"(?:-a|--pass)", _SPACED),
    (("sqlcmd", "bcp", "osql"), r"-P", _SPACED),
    (("mongo", "mongosh", "mongodump", "mongorestore", "mongoexport", "mongoimport"), r"-p", _SPACED),
    (("ldapsearch", "ldapadd", "ldapmodify", "ldapdelete", "ldappasswd", "ldapwhoami", "ldapcompare"), r"-w",
     _SPACED),
    (("zip", "unzip"), r"-P", _SPACED),
    (("7z", "7za", "7zr"), r"-p", _ATTACHED),
    (("ssh-keygen",), r"-[NP]", _SPACED),  # the new and the old passphrase (`-N ''` is none)
    (("keytool",), r"-(?:src|dest)?(?:store|key)pass", _SPACED),
    (("openssl",), r"-pass(?:in|out)?[ \t]+pass:", _ATTACHED),
    (("openssl",), r"-k", _SPACED),  # `openssl enc -aes-256-cbc -k <passphrase>`
    (("smbclient", "rpcclient", "smbmap"), r"-U[ \t]+[^\s%]+%", _ATTACHED),
    (("pscp", "plink", "psftp", "putty"), r"-pw", _SPACED),
    (("mosquitto_pub", "mosquitto_sub", "mosquitto_rr"), r"-P", _SPACED),
    (("cqlsh", "twine", "rabbitmqadmin", "useradd", "usermod"), r"-p", _SPACED),
    (("security",), r"-w", _SPACED),  # macOS `security add-generic-password … -w pw`
    (("lftp",), r"-u[ \t]+[^\s,]+,", _ATTACHED),  # `lftp -u bob,pw host`
    (("expo", "influx", "beeline", "dotnet nuget", "nuget"), r"-p", _SPACED),  # (`dotnet run -p` is a project)
    (("dotnet nuget", "nuget"), r"-k", _SPACED),  # the API key of `nuget push -k`
    (("doctl",), r"-t", _SPACED),  # `doctl auth init -t <token>`
    (("altool",), r"-p", _SPACED),  # `xcrun altool --upload-app … -u bob@x.com -p <app-specific password>`
    (("etcdctl",), r"--user(?:[ \t]+|=)[^\s:]+:", _ATTACHED),  # `--user root:pw`
)


_PROGRAM_TRIGGERS = tuple(p for programs, _flag, _glue in _PROGRAM_FLAGS for p in programs)

# Secrets a command takes as a plain argument, where its place says what it is (each behind the
# substring of its trigger): the password after `htpasswd -b … user`; the token of `vault login
# <token>`; the value a `config set` gives a key named for a secret (`aws configure set
# aws_secret_access_key x`, `yarn config set npmAuthToken x`); a password echoed into a
# program that reads it from stdin (`echo 'pw' | sudo -S …`, `| docker login
# --password-stdin`, `| chpasswd`, `| passwd --stdin`, `| gh secret set NAME`, `| wrangler secret
# put NAME`, `| vercel env add NAME`); MinIO's keys in `mc alias set`.
_HTPASSWD = (
    r"((?<![\w-])(?:htpasswd|mosquitto_passwd)(?:[ \t]+-[A-Za-z]+){0,6}?[ \t]+-[A-Za-z]*b[A-Za-z]*"
    r"(?:[ \t]+-[A-Za-z]+){0,6}"
    r"(?:[ \t]+[^\s\"'-][^\s\"';&|]{0,1023}){1,2}[ \t]+)" + _QUOTED_OR_WORD
)
_VAULT_LOGIN = (
    r"((?<![\w-])vault[ \t]+login(?:[ \t]+-[^\s]{1,200}){0,6}[ \t]+)"
    r"([^\s\"'=-][^\s\"';&|=]{7,1023})(?![^\s;&|])"
)
_CONFIG_SET = (
    r"((?<![\w-])config(?:ure)?[ \t]+(?:set[ \t]+)?(?:--?[\w-]{1,40}[ \t]+){0,4}"
    r"[\w./:@-]{0,200}(?i:secret|token|password|passwd|access_key|api_?key|_auth)[\w./:@-]{0,200}[ \t]+)"
    + _QUOTED_OR_WORD
)
# Programs that read a password from stdin, by their own name.
_READS_A_PASSWORD = (r"sudo(?:[ \t]+-[\w-]{1,20}){0,6}?[ \t]+-[a-zA-Z]{0,6}S(?![\w-])"
                     r"|(?:sudo(?:[ \t]+-[\w-]{1,20}){0,4}[ \t]+)?(?:chpasswd|passwd|smbpasswd)(?![\w-])"
                     r"|su[ \t][^\n|;&]{0,100}?(?<![\w-])-c(?![\w-])")  # (`| sudo su` reads commands)
# What `echo` or `printf` gives: a word ends at the `)` of a subshell (`(…; echo pw) | …`).
_ECHOED = r"(\"[^\"\n]{0,1024}\"|'[^'\n]{0,1024}'|[^\s\"')][^\s\"';&|)]{0,1023})"
_STDIN_SECRET = (
    r"((?<![\w-])(?:echo|printf)(?:[ \t]+-[a-zA-Z]{1,3}){0,2}(?:[ \t]+(?:'%[^'\n]{0,20}'|\"%[^\"\n]{0,20}\"))?[ \t]+)"
    + _ECHOED
    + r"(?=[ \t]*\)?[ \t]*\|[ \t]*(?:" + _READS_A_PASSWORD + r"|[^\n|;&]{0,300}?--password-stdin(?![\w-])"
    r"|gh[ \t]+auth[ \t]+login[^\n|;&]{0,200}?--with-token(?![\w-])"
    r"|[^\n|;&]{0,200}?(?<![\w-])(?:secrets?[ \t:]+(?:create|set|put|add)|env[ \t]+add)(?![\w-])))"
)
# The first of two answers a subshell pipes into such a program (`(echo pw; echo pw) |
# smbpasswd -s -a bob`: the new password and its confirmation); the second is _STDIN_SECRET's.
_SUBSHELL_SECRET = (
    r"((?<![\w-])\([ \t]*(?:echo|printf)(?:[ \t]+-[a-zA-Z]{1,3}){0,2}[ \t]+)" + _ECHOED
    + r"(?=[ \t]*;[ \t]*(?:echo|printf)[ \t][^\n()|;&]{1,1100}\)[ \t]*\|[ \t]*(?:" + _READS_A_PASSWORD + r"))"
)
# An ftp script's login (`ftp -n host <<EOF` then `user bob pw`, or `quote PASS pw`).
_FTP_LOGIN = (
    r"((?:^|\n)[ \t]*(?:(?i:user)[ \t]+[^\s\"';&|]{1,200}|(?:(?i:quote)[ \t]+)?(?i:pass))[ \t]+)" + _QUOTED_OR_WORD
)
# Code that logs in with a user and a password given as two string literals: `smtp.login("bob",
# "pw")`, `auth=("bob", "pw")`, `HTTPBasicAuth("bob", "pw")`, `client.authenticate('u', 'pw')`.
_CODE_LOGIN = (
    r"((?<![\w])(?i:login|auth|authenticate|httpbasicauth|httpdigestauth|basicauth|basic_auth)"
    r"[ \t]*(?:=[ \t]*)?\([ \t]*"
    r"(?:\"[^\"\n]{0,200}\"|'[^'\n]{0,200}')[ \t]*,[ \t]*)"
    r"(\"[^\"\n]{1,1024}\"|'[^'\n]{1,1024}')"
)
# The same programs given the password as a here-string: `sudo -S apt update <<< 'pw'`.
_HERESTRING_SECRET = (
    r"((?<![\w-])(?:" + _READS_A_PASSWORD
    + r"|(?:docker|podman|helm|oras)[ \t][^\n|;&<]{0,200}?--password-stdin(?![\w-])"
    r"|secrets?(?:[ \t]+versions)?[ \t:]+(?:create|set|put|add)(?![\w-])|env[ \t]+add(?![\w-])"
    r"|pass[ \t]+insert(?![\w-]))"
    r"[^\n|;&<]{0,300}?<<<[ \t]*)" + _QUOTED_OR_WORD
)
# `rabbitmqctl add_user bob PW`, `rabbitmqctl change_password bob PW`.
_RABBITMQ_USER = (
    r"((?<![\w-])rabbitmqctl(?:[ \t]+-[^\s]{1,200}){0,4}[ \t]+(?:add_user|change_password)[ \t]+"
    r"[^\s\"'-][^\s;&|]{0,1023}[ \t]+)" + _QUOTED_OR_WORD
)
# SQL that sets a password: `ALTER USER bob WITH PASSWORD 'pw'`, `CREATE ROLE r LOGIN ENCRYPTED
# PASSWORD 'pw'`, `CREATE LOGIN bob WITH PASSWORD = 'pw'`, `SET PASSWORD FOR bob = 'pw'`, MySQL's
# `IDENTIFIED BY 'pw'` (`IDENTIFIED WITH caching_sha2_password BY 'pw'`). A string literal only,
# and after a user, role or login of the same statement: `grep -n password 'settings.py'` names a
# file, and `password authentication failed` is an error.
_SQL_PASSWORD = (
    r"((?<![\w-])(?i:(?:user|role|login)(?![\w-])[^\n;|&]{0,120}?(?<![\w-])password(?:[ \t]*=[ \t]*|[ \t]+)"
    r"|set[ \t]+password(?![\w-])[^\n;|&]{0,80}?=[ \t]*"
    r"|identified[ \t]+(?:with[ \t]+[\w-]{1,64}[ \t]+)?by[ \t]+))"
    r"('[^'\n]{1,1024}'|\"[^\"\n]{1,1024}\")"
)
# `mc alias set NAME URL ACCESS-KEY SECRET-KEY` (MinIO's client; `mc config host add` before it).
_MC_ALIAS = (
    r"((?<![\w-])mc[ \t]+(?:alias[ \t]+set|config[ \t]+host[ \t]+add)(?:[ \t]+--?[\w-]{1,40}){0,4}"
    r"(?:[ \t]+[^\s\"'-][^\s;&|]{0,1023}){3}[ \t]+)" + _QUOTED_OR_WORD
)


# `openssl passwd -6 -salt s PW` (the password hashed), `mysqladmin -u root password NEW`, the
# Windows `net user bob PW /add` (`*` asks for it), rclone's `config create NAME TYPE key value`
# for its secret keys, and the answer an `expect` script sends to a password prompt.
_OPENSSL_PASSWD = (
    r"((?<![\w-])openssl[ \t]+passwd(?:[ \t]+(?:-salt[ \t]+[^\s;&|]{1,200}|-[\w-]{1,20})){0,6}[ \t]+)"
    + _QUOTED_OR_WORD
)
_MYSQLADMIN_PASSWORD = r"((?<![\w-])mysqladmin(?![\w-])[^\n|;&]{0,400}?[ \t]password[ \t]+)" + _QUOTED_OR_WORD
_NET_USER = (
    r"((?<![\w-])(?i:net)[ \t]+(?i:user)[ \t]+(?:\"[^\"\n]{1,200}\"|[^\s/\"'][^\s;&|]{0,200})[ \t]+)" + _QUOTED_OR_WORD
)
_RCLONE_SECRET = (
    r"((?<![\w-])rclone[ \t]+config[ \t]+(?:create|update)(?![\w-])[^\n|;&]{0,400}?[ \t]"
    r"(?:secret_access_key|pass|password|password2|token|client_secret|key|account_key|sas_url|bearer_token)"
    r"(?:[ \t]+|=))" + _QUOTED_OR_WORD
)
_NMCLI_PASSWORD = (
    r"((?<![\w-])nmcli(?![\w-])[^\n|;&]{0,400}?[ \t](?:password|wifi-sec\.psk|802-11-wireless-security\.psk)[ \t]+)"
    + _QUOTED_OR_WORD
)
_WPA_PASSPHRASE = (
    r"((?<![\w-])wpa_passphrase[ \t]+(?:\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|[^\s;&|]{1,200})[ \t]+)" + _QUOTED_OR_WORD
)
_NEO4J_PASSWORD = (
    r"((?<![\w-])neo4j(?:-admin)?(?![\w-])[^\n|;&]{0,200}?[ \t]set-initial-password[ \t]+)" + _QUOTED_OR_WORD
)
# One argument within a shell segment: a word that is not an option, or a quoted string.
_WORD = r"[^\s\"';&|-][^\s;&|]{0,200}"
_ARGUMENT = r"(?:\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|" + _WORD + ")"
# Bitwarden's `bw unlock PW` and `bw login EMAIL PW`.
_BW_PASSWORD = r"((?<![\w-])bw[ \t]+(?:unlock|login[ \t]+" + _WORD + r")[ \t]+)" + _QUOTED_OR_WORD
# `redis-cli … AUTH [user] PW`: the last word of the command.
_REDIS_AUTH = (
    r"((?<![\w-])(?:redis-cli|keydb-cli|valkey-cli)(?![\w-])[^\n|;&]{0,400}?[ \t](?i:auth)"
    r"(?:[ \t]+" + _WORD + r"(?=[ \t]+[^\s;&|]))?[ \t]+)" + _QUOTED_OR_WORD
)
# A token given to a login command as its argument: `cargo login T`, `snyk auth T`, `ngrok
# authtoken T`, `nuget setapikey K`.
_LOGIN_TOKEN = (
    r"((?<![\w-])(?:cargo[ \t]+login|snyk[ \t]+auth|ngrok[ \t]+authtoken|nuget[ \t]+setapikey)[ \t]+)" + _QUOTED_OR_WORD
)
# `poetry config http-basic.REPO USER PW`, `composer config [--global] http-basic.HOST USER PW`;
# MinIO's `mc admin user add ALIAS USER PW`.
_USER_THEN_PASSWORD = (
    r"((?<![\w-])(?:(?:poetry|composer)[ \t]+config(?:[ \t]+--?[\w-]{1,20}){0,3}[ \t]+http-basic\.[^\s;&|]{1,200}"
    r"|mc[ \t]+admin[ \t]+user[ \t]+add[ \t]+" + _WORD + r")[ \t]+" + _WORD + r"[ \t]+)" + _QUOTED_OR_WORD
)
# A word that names a secret inside a key (`db/password`, `API_KEY`, `auth_token`).
_SECRET_WORD = r"(?i:secret|token|password|passwd|pwd|api_?key|access_?key|_key)"
# A key-value store's value under a key named for a secret: `consul kv put db/password x`,
# `etcdctl put /app/api_key x`; `netlify env:set API_KEY x`.
_KV_SECRET = (
    r"((?<![\w-])(?:kv[ \t]+put|etcdctl(?:[ \t]+--?[\w-]{1,40}(?:=[^\s;&|]{0,200})?){0,6}[ \t]+put|env:set)[ \t]+"
    r"[\w./:@-]{0,200}" + _SECRET_WORD + r"[\w./:@-]{0,200}[ \t]+)"
    + _QUOTED_OR_WORD
)
# Oracle's `user/password@db` (`sqlplus system/pw@XE`, `rman target sys/pw@db`).
_ORACLE_TOOLS = ("sqlplus", "rman", "expdp", "impdp", "exp", "imp", "sqlldr")
_ORACLE_LOGIN = (
    r"((?<![\w-])(?:" + "|".join(_ORACLE_TOOLS) + r")(?:[ \t]+-[\w]{1,20}){0,4}[ \t]+"
    r"(?:(?i:target|auxiliary|catalog)[ \t]+)?(?:userid=)?[\w$#]{1,128}/)([^\s@/\"']{1,200})"
)
# Every value `dotnet user-secrets set KEY VALUE` stores is a secret, whatever its key's name.
_USER_SECRETS = (
    r"((?<![\w-])user-secrets[ \t]+set(?:[ \t]+--?[\w-]{1,40}(?:[ \t]+" + _WORD + r")?){0,4}[ \t]+"
    + _ARGUMENT + r"[ \t]+)" + _QUOTED_OR_WORD
)
# PowerShell's password in plain text: `ConvertTo-SecureString "pw" -AsPlainText -Force`.
_PS_SECURE_STRING = r"((?<![\w-])(?i:ConvertTo-SecureString)(?:[ \t]+-(?i:String))?[ \t]+)" + _QUOTED_OR_WORD
# Windows' `net use Z: \\server\share PW /user:bob` (the password before or after `/user:`).
_NET_USE = (
    r"((?<![\w-])(?i:net)[ \t]+(?i:use)[ \t]+(?:[A-Za-z]:[ \t]+|\*[ \t]+)?\\\\[^\s]{1,300}[ \t]+"
    r"(?:/(?i:user):[^\s]{1,200}[ \t]+)?)" + _QUOTED_OR_WORD
)
# A build script's password given as a quoted argument on a line of its own (Gradle's
# `storePassword "pw"` and `keyPassword "pw"` in signingConfigs, a Ruby DSL's `password "pw"`).
_DSL_PASSWORD = (
    r"(?m)(^[ \t]*(?:store|key|keystore|signing)?(?i:password)[ \t]+)(\"[^\"\n]{1,512}\"|'[^'\n]{1,512}')[ \t]*$"
)
# Android's intent extras under a secret's name: `adb shell am start -n app/.Main --es token T`,
# `am broadcast -a x -e api_key K` (`--es`/`-e` string, `--esa` list: KEY then VALUE).
_INTENT_EXTRA = (
    r"((?<![\w-])am[ \t]+(?:start|startservice|start-service|start-foreground-service|broadcast)(?![\w-])"
    r"[^\n|;&]{0,400}?[ \t](?:--es|--esa|-e)[ \t]+"
    r"[\w.-]{0,100}" + _SECRET_WORD + r"[\w.-]{0,100}[ \t]+)"
    + _QUOTED_OR_WORD
)
_EXPECT_SEND = (
    r"((?i:assword|passphrase)[^\n]{0,80}?(?<![\w-])send[ \t]+(?:--[ \t]+)?)"
    r"(\"[^\"\n]{1,1024}\"|\{[^}\n]{1,1024}\}|[^\s\"'{][^\s;}]{0,1023})"
)


def _not_an_option(value: str) -> bool:
    return not value.startswith("-")  # `security find-generic-password -w -s svc`: -w asks for it


def _not_a_redirect(value: str) -> bool:
    return not value.startswith(("<", ">"))  # `openssl passwd -stdin < pw.txt`


def _not_a_switch(value: str) -> bool:
    return not value.startswith("/") and value != "*"  # `net user bob /delete`, `net user bob *`


def _not_a_format(value: str) -> bool:
    return not value.strip("\"'").startswith("%")  # `printf '%s\n' pw | sudo -S`: pw, not the format


# Each rule: (its gate, on the text and its lower case; pattern; kind; quotes kept; accept).
_POSITIONAL_RULES = (
    (lambda text, low: "htpasswd" in low or "mosquitto_passwd" in low, _HTPASSWD, "password-flag", True, None),
    (lambda text, low: "<<<" in text, _HERESTRING_SECRET, "password-flag", True, None),
    (lambda text, low: "rabbitmqctl" in low, _RABBITMQ_USER, "password-flag", True, None),
    (lambda text, low: "password" in low or "identified" in low, _SQL_PASSWORD, "password-flag", True, None),
    (lambda text, low: "vault" in low and "login" in low, _VAULT_LOGIN, "vault-token", False, None),
    (lambda text, low: "config" in low, _CONFIG_SET, "secret-assignment", True, None),
    (lambda text, low: "|" in text and ("echo" in low or "printf" in low), _STDIN_SECRET, "password-flag", True,
     _not_a_format),
    (lambda text, low: "(" in text and ("echo" in low or "printf" in low), _SUBSHELL_SECRET, "password-flag", True,
     _not_a_format),
    (lambda text, low: "ftp" in low and ("user" in low or "pass" in low), _FTP_LOGIN, "password-flag", True, None),
    (lambda text, low: "(" in text and ("login" in low or "auth" in low), _CODE_LOGIN,
     "password-flag", True, None),
    (lambda text, low: "mc " in low and (" alias" in low or " host" in low), _MC_ALIAS, "secret-flag", True, None),
    (lambda text, low: "passwd" in low and "openssl" in low, _OPENSSL_PASSWD, "password-flag", True,
     _not_a_redirect),
    (lambda text, low: "mysqladmin" in low, _MYSQLADMIN_PASSWORD, "password-flag", True, None),
    (lambda text, low: "net" in low and "user" in low, _NET_USER, "password-flag", True, _not_a_switch),
    (lambda text, low: "rclone" in low, _RCLONE_SECRET, "secret-flag", True, None),
    (lambda text, low: "send" in low and ("assword" in low or "passphrase" in low), _EXPECT_SEND, "password-flag",
     True, None),
    (lambda text, low: "nmcli" in low, _NMCLI_PASSWORD, "password-flag", True, None),
    (lambda text, low: "login" in low or "auth" in low or "setapikey" in low, _LOGIN_TOKEN, "secret-flag", True,
     _not_an_option),
    (lambda text, low: "http-basic." in low or "mc admin" in low, _USER_THEN_PASSWORD, "password-flag", True, None),
    (lambda text, low: "kv put" in low or "etcdctl" in low or "env:set" in low, _KV_SECRET, "secret-assignment", True,
     None),
    (lambda text, low: "/" in text and any(p in low for p in _ORACLE_TOOLS), _ORACLE_LOGIN, "password-flag", False,
     None),
    (lambda text, low: "wpa_passphrase" in low, _WPA_PASSPHRASE, "password-flag", True, None),
    (lambda text, low: "set-initial-password" in low, _NEO4J_PASSWORD, "password-flag", True, None),
    (lambda text, low: "bw " in low, _BW_PASSWORD, "password-flag", True, _not_an_option),
    (lambda text, low: "auth" in low and "-cli" in low, _REDIS_AUTH, "password-flag", True, None),
    (lambda text, low: "user-secrets" in low, _USER_SECRETS, "secret-assignment", True, None),
    (lambda text, low: "securestring" in low, _PS_SECURE_STRING, "password-flag", True, _not_an_option),
    (lambda text, low: "net" in low and "use" in low and "\\\\" in text, _NET_USE, "password-flag", True,
     _not_a_switch),
    (lambda text, low: "password" in low, _DSL_PASSWORD, "password-flag", True, None),
    (lambda text, low: "am " in low and "-e" in low, _INTENT_EXTRA, "secret-flag", True, _not_an_option),
)


def _redact_positional(text: str, low: str) -> str:
    for gate, pattern, kind, keep_quotes, accept in _POSITIONAL_RULES:
        if gate(text, low):
            text = _replace_values(text, _compiled(pattern), kind, keep_quotes, accept=accept)
    if _may_set_secrets(low):
        text = _redact_secret_settings(text)
    return text


# Commands whose every `NAME=value` (or `--body`/`--value`/`--from-literal`) is a secret, whatever
# the name: `supabase secrets set STRIPE=…`, `gh secret set NAME --body …`, `fly secrets set …`,
# `kubectl create secret generic db --from-literal=user=…`.
_SECRETS_COMMAND = (
    r"(?<![\w-])(?:secrets?[ \t:]+(?:set|put|create|add|import)|create[ \t]+secret[ \t]+generic"
    r"|(?:heroku|dokku)[ \t]+config:set|functions:config:set|variables(?:[ \t]+set|[ \t]+--set)"
    r"|ssm[ \t]+put-parameter)(?![\w-])"
)
_SECRET_SETTING = (
    r"((?:(?<=[\s=])[A-Za-z_][\w.-]{0,100}=|(?<![\w-])(?:--body|-b|--value|--data)(?:[ \t]+|=)"
    r"|(?<![\w-])-b(?=[\"'])))" + _QUOTED_OR_WORD
)


def _may_set_secrets(low: str) -> bool:
    return ("secret" in low and ("set" in low or "put" in low or "create" in low or "add" in low or "import" in low)
            or "config:set" in low or "variables" in low or "put-parameter" in low)


def _redact_secret_settings(text: str) -> str:
    """The values of a secrets command's settings, up to the end of its shell segment."""
    return _in_segments(text, _compiled(_SECRETS_COMMAND), _compiled(_SECRET_SETTING), "secret-assignment")


def _in_segments(text: str, command: rx.Pattern[str], value: rx.Pattern[str], kind: str, accept=None) -> str:
    """`value`'s values replaced (quotes kept) from each match of `command` to the end of its
    shell segment (a newline, `|`, `;` or `&`). A segment is read once, however many times the
    command's name stands in it."""
    out, pos = [], 0
    for m in command.finditer(text):
        if m.start() < pos:
            continue
        stop = _compiled(r"[\n|;&]").search(text, m.end())
        end = stop.start() if stop else len(text)
        out.append(text[pos:m.end()])
        out.append(_replace_values(text[m.end():end], value, kind, True, accept=accept))
        pos = end
    return "".join(out) + text[pos:] if out else text


_CURL_USER = (
    r"((?<![\w-])curl(?![\w-])[^\n|;&]{0,400}?[ \t](?:-u|--user)[ \t]+[\"']?[^\s:\"']*:)"
    r"([^\s\"']{1,1024})"
)
_NETRC = r"(\bmachine[ \t]+\S+[ \t]+login[ \t]+\S+[ \t]+password[ \t]+)(\S{1,1024})"


def _redact_flags(text: str, low: str) -> str:
    if any("-" + w in text for w in _FLAG_WORDS) or (
            "--" in text and any("_" + w in text for w in _FLAG_WORDS)):
        text = _redact_secret_flags(text)
    if "-p" in text:
        if "mysql" in low or "mariadb" in low:
            text = _replace_values(text, _compiled(_MYSQL_PASSWORD), "password-flag", True)
        if "sshpass" in low or " login" in low:
            text = _replace_values(text, _compiled(_SPACED_P_PASSWORD), "password-flag", True)
    if any(p in low for p in _PROGRAM_TRIGGERS):
        text = _redact_program_flags(text, low)
    if "curl" in low and ("-u" in text or "--user" in text):
        text = _replace_values(text, _compiled(_CURL_USER), "password-flag")
    if "machine" in low and "password" in low:
        text = _replace_values(text, _compiled(_NETRC), "password-flag")
    return text


def _redact_program_flags(text: str, low: str) -> str:
    """Every password flag of a _PROGRAM_FLAGS program in that program's shell segment, each of
    them (`keytool -srcstorepass a -deststorepass b`: one pattern from the program to its flag
    found only the first)."""
    for programs, flag, glue in _PROGRAM_FLAGS:
        if any(p in low for p in programs):
            names = "|".join(rx.escape(p) for p in programs)
            text = _in_segments(text, _compiled(f"(?<![\\w-])(?:{names})(?![\\w-])"),
                                _compiled(f"([ \\t]{flag}{glue})" + _QUOTED_OR_WORD), "password-flag", _not_an_option)
    return text


def _redact_secret_flags(text: str) -> str:
    """`--password x`, `--api-key=x`. A match that is turned down is not skipped whole (as
    re.sub would): its value may be the next flag (`x-password --password y`)."""
    pattern = _compiled(_SECRET_FLAG)
    out, pos, at = [], 0, 0
    while (m := pattern.search(text, at)) is not None:
        start, value = m.start(), m.group(3)
        at = m.end(1)
        if start and (text[start - 1].isalnum() or text[start - 1] in "_-"):
            continue  # the middle of a word, not a flag
        if value.startswith("-") or _is_placeholder(value) or m.group(2) == "auth" and _a_mode(value):
            continue
        kind = "password-flag" if "pass" in m.group(2) else "secret-flag"
        out.append(text[pos:at])
        out.append(_quoted_mark(value, kind))
        pos = at = m.end()
    out.append(text[pos:])
    return "".join(out)


def _a_mode(value: str) -> bool:
    """`code-server --auth none`, `--auth password`: a mode's name, not a credential (`http
    --auth bob:pw` is one)."""
    word = value.strip("\"'")
    return word.isalpha() and word.islower() and len(word) <= 12


def _quoted_mark(value: str, kind: str) -> str:
    """Keep the quotes around a redacted value so the command still reads as a command."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[0] + _mark(kind) + value[0]
    return _mark(kind)


# Assignments: NAME=value, NAME: value, "name": "value", name = 'value', name => "value", and
# markdown's bold label (`**Password:** x`, `**Password**: \`x\``: a summary an agent wrote). A `::`
# joins the parts of a path in code (`crate::auth::Store`, `std::token::Kind`): no assignment;
# LDIF's `userPassword:: <base64>` (a blank after it) is one.
# Found from the keyword outwards: str.find for each keyword, expand to the whole name, then one
# anchored match; a pattern that searched for names itself would run at every position.
_NAME_KEYWORDS = ("secret", "token", "pass", "pwd", "auth", "cred", "key", "signature", "psk")
_NAME_STR = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-"
_ASSIGNMENT_AT = (
    r"(?P<name>[A-Za-z0-9_.-]{1,240})(?P<q>[\"']?)(?P<sep>\*{0,2}[ \t]*(?:=>|:=|::(?=[ \t])|:(?!:)|=)\*{0,2}[ \t]*)"
    r"(?:\"(?P<dq>(?:[^\"\\\n]|\\.){0,1024}+)\"|'(?P<sq>[^'\n]{0,1024}+)'|`(?P<bq>[^`\n]{1,256}+)`"
    r"|(?P<bare>[^\s\"'`;&|(][^\s\"'`;&|]{0,1023}+)(?=(?P<tail>[^\n]{0,64}+)))"
)
_NAME_PARTS = r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])"
_NAME_META_SUFFIXES = frozenset(
    "file path dir directory name id arn url uri endpoint type length len min max count limit "
    "policy reset expiry expires expiration exp at in ttl rotation required enabled prompt field "
    "fields header label method mode scheme strategy provider domain user username email login "
    "env var command cmd store helper hint regex pattern format version size kind source "
    "salt template prefix suffix py js ts tsx jsx rb go rs java json yml yaml toml txt cfg ini "
    "md sh log lock".split()
)
_KEY_QUALIFIERS = frozenset(
    ("API", "ACCESS", "PRIVATE", "SECRET", "ENCRYPTION", "SIGNING", "MASTER", "APP", "ADMIN", "CLIENT",
     "LICENSE", "SERVICE", "ACCOUNT", "STORAGE", "SHARED", "DEPLOY", "INGEST", "INSERT", "WRITE",
     "SERVER", "SESSION", "WEBHOOK", "USER", "AUTH", "CONSUMER", "SUBSCRIPTION", "PERSONAL"))
_PATHY_NAMES = frozenset(("PWD", "OLDPWD", "CREDENTIALS", "CREDENTIAL", "CREDS"))
_VALUE_SUFFIXES = frozenset(
    "VALUE BASE STRING STR DATA PLAIN RAW B64 BASE64 ENC ENCODED PROD PRODUCTION DEV DEVELOPMENT "
    "TEST STAGING LIVE LOCAL OLD NEW CURRENT PRIMARY SECONDARY V1 V2".split()
)


def _secret_name_kind(name: str) -> str | None:
    """'password' when the name labels a password, 'secret' for another credential, else None.

    The credential word must end the name (`DB_PASSWORD`, `clientSecret`, `AWS_SECRET_ACCESS_KEY`),
    possibly followed by a number or a variant such as `_PROD` or `_BASE`; `SSH_AUTH_SOCK`,
    `TOKEN_URL` and `PASSWORD_FILE` name something else.
    """
    parts = [p.upper() for p in _compiled(_NAME_PARTS).split(name) if p]
    if not parts or parts[-1].lower() in _NAME_META_SUFFIXES:
        return None
    while len(parts) > 1 and (parts[-1].isdigit() or parts[-1] in _VALUE_SUFFIXES):
        parts.pop()
    last = parts[-1]
    if "PASSWORD" in last or "PASSWD" in last or last in ("PASS", "PASSPHRASE", "PSK") \
            or last.endswith("PWD"):
        return "password"
    if "SECRET" in last or last.endswith(("TOKEN", "AUTH")) or last.startswith("CREDENTIAL") \
            or last == "CREDS":
        return "secret"
    qualifier = last[:-3] or (parts[-2] if len(parts) > 1 else "")
    if last.endswith("KEY") and qualifier in _KEY_QUALIFIERS:
        return "secret"
    if last in ("KEY", "SIGNATURE", "SIG"):
        return "key"  # `ADAFRUIT_KEY`, `?key=`, `X-Amz-Signature=`: a secret when the value looks like one
    return None


_CODE_VALUE = r"[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*(?:\(.*|\[.*)?"
_CALL = r"[A-Za-z_$][\w.:$>-]*\(\)?"  # a function's name and its `(`: a call when `)` or a quote follows


def _assignment_value(m: rx.Match[str], at_line_start: bool) -> tuple[int, int] | None:
    """Span of the secret value in an assignment match, or None when it is not one."""
    name, sep = m.group("name"), m.group("sep")
    kind = _secret_name_kind(name)
    if kind is None:
        return None
    if _label_closed(m) or _go_test_verdict(m):
        return None
    if m.group("bq") is not None:  # markdown's code span (`- Password: \`admin123\``): a secret's shape, or a
        value = m.group("bq")  # name; after `=` the shell's command substitution (`PW=\`pwgen 12\``), no value
        if "=" in m.group("sep") or _is_placeholder(value) or _looks_pathy(name, value):
            return None
        return m.span("bq") if _secret_like(value, kind) else None
    for group in ("dq", "sq"):
        if m.group(group) is not None:
            value = m.group(group)
            if _is_placeholder(value) or _looks_pathy(name, value) or kind == "key" and not _token_like(value):
                return None  # (a bare `key` names a secret only by its value's shape: Vue's `:key="o.id"`,
            return m.span(group)  # `{"key": "Enter"}`, `sorted(xs, key="name")`, as `key=name` bare)
    value, tail = m.group("bare"), m.group("tail")
    stripped = value.rstrip(",;)}]")
    if not stripped or _is_placeholder(stripped) or _looks_pathy(name, stripped):
        return None
    if _compiled(_CALL).fullmatch(value) and (value.endswith("()") or tail[:1] in ("'", '"')):
        return _call_argument(m, value, tail, kind)  # `api_key=os.getenv("KEY")`, `get_token()`: code
    if m.string[max(0, m.start("name") - 2):m.start("name")] == "${" and value[0].isdigit():
        return None  # bash's substring of a variable (`${API_KEY:0:10}`): no value
    if not any(c.isalnum() for c in stripped):
        return None  # `key=)`, `auth=[…`: punctuation, no value (`auth=("bob", "pw")`: no bare value
        # starts with `(`, an expression's start; _CODE_LOGIN reads that one)
    if stripped.isdigit() and len(stripped) <= 10 and kind != "password":
        return None  # max_tokens: 4096, token_count=12
    if kind == "key" and not _token_like(stripped):
        return None  # sort_key=name, key: value
    json_value = bool(m.group("q")) and ":" in sep
    own_line = at_line_start and (not tail.strip(" \t,") or tail.lstrip().startswith("#"))
    if sep in ("=", ":="):
        pass  # shell, env file, logfmt, query string: the value is exactly this word
    elif json_value or own_line:
        # YAML / ini / code on its own line. Code refers to other names; configs hold values.
        if ":" not in sep and _compiled(_CODE_VALUE).fullmatch(stripped) and (
            "." in stripped or "(" in stripped or "[" in stripped or "_" in stripped
            or stripped.lower() in name.lower()
        ):
            return None
        if value.startswith(("(", "[", "{", "|", ">", "!", "&", "*")):
            return None
    elif kind == "key" or not _secret_like(stripped, kind):
        return None  # prose such as "invalid token: expected 3 parts", "restored from key: …"
    start = m.start("bare")
    return start, start + len(stripped)


def _call_argument(m: rx.Match[str], value: str, tail: str, kind: str) -> tuple[int, int] | None:
    """A call after the label is code; its quoted argument is the secret when it has a secret's
    shape (`'password' => bcrypt('pw')`, `Hash::make('pw')`), not when it names one
    (`os.getenv("API_KEY")`)."""
    end = tail.find(tail[0], 1) if not value.endswith("()") else -1
    literal = tail[1:end] if end > 0 else ""
    if not literal or _is_placeholder(literal) or not _secret_like(literal, kind):
        return None
    start = m.end("bare") + 1
    return start, start + len(literal)


def _label_closed(m: rx.Match[str]) -> bool:
    """Is the quote after the separator the end of a string that holds the label (`expect
    "password:"; send "pw"`), not the start of its value? Then what follows is other code."""
    start, quote = m.start("name"), m.string[m.end("sep"):m.end("sep") + 1]
    return (not m.group("q") and quote in ("\"", "'") and start > 0 and m.string[start - 1] == quote
            and not m.group("sep").endswith((" ", "\t")))


def _go_test_verdict(m: rx.Match[str]) -> bool:
    """`--- PASS: TestParse/empty (0.00s)`: go test's verdict on a test, not a password's label
    (every passing test of a verbose run printed one)."""
    start = m.start("name")
    return (m.group("name") == "PASS" and m.group("sep").strip() == ":"
            and m.string[max(0, start - 4):start] == "--- ")


def _token_like(value: str) -> bool:
    """Long, one word, and mixing letters with digits (or both cases): a credential's shape,
    not a name (`user-profile`), a path or a dotted identifier."""
    if len(value) < 16 or "://" in value or value.startswith(("/", "~", ".")):
        return False
    if _compiled(_CODE_VALUE).fullmatch(value) and ("." in value or "(" in value):
        return False
    words = sum(1 for part in _compiled(r"[-_.:]").split(value) if len(part) >= 3 and part.isalpha())
    if words >= 2:
        return False  # a slug (`node-cache-Linux-x64-npm`), not a random chunk
    has_digit = any(c.isdigit() for c in value)
    has_letter = any(c.isalpha() for c in value)
    mixed_case = value.lower() != value and value.upper() != value
    return (has_digit and has_letter) or (mixed_case and len(value) >= 20)


def _secret_like(value: str, kind: str) -> bool:
    """A value after a label in the middle of a line (`client_secret: x`, `invalid api_key: x`):
    secret when it has a password's or a token's shape, not when it is a word of prose."""
    if _compiled(_CODE_VALUE).fullmatch(value) and ("." in value or "(" in value or "[" in value):
        return False
    if "://" in value or value.startswith(("/", "~", "./")):
        return False
    if kind == "password":
        has_other = any(not c.isalpha() for c in value)
        return len(value) >= 6 and has_other
    return len(value) >= 8 and _classes(value) >= 2 and any(c.isdigit() for c in value) or _token_like(value)


def _looks_pathy(name: str, value: str) -> bool:
    """`PWD=/home/me` and `GOOGLE_APPLICATION_CREDENTIALS=~/key.json` hold paths, not secrets."""
    last = _compiled(_NAME_PARTS).split(name)[-1].upper() if name else ""
    return last in _PATHY_NAMES and value.startswith(("/", "~", "./", "../", "C:\\", "c:\\"))


def _name_starts(text: str, low: str) -> list[int]:
    """Start of every name-like word that contains a credential keyword, in order (`low` is
    `text` in lower case, offset for offset). A name is taken back at most 120 characters from
    its keyword: what decides is how the name ends, and the cap keeps the work linear."""
    starts = set()
    for keyword in _NAME_KEYWORDS:
        at = low.find(keyword)
        while at >= 0:
            window = text[max(0, at - 120):at]
            starts.add(at - (len(window) - len(window.rstrip(_NAME_STR))))
            at = low.find(keyword, at + len(keyword))
    return sorted(starts)


def _labels_a_value(text: str, start: int) -> bool:
    """The name at `start` labels a credential and is followed by `:` or `=` (cheap pre-check)."""
    chunk = text[start:start + 242]
    rest = chunk.lstrip(_NAME_STR)
    name = chunk[:len(chunk) - len(rest)]
    if not name or len(name) > 240:
        return False
    rest = rest[1:] if rest[:1] in ("'", '"') else rest.lstrip("*")  # (`**Password**: x`)
    return rest.lstrip(" \t")[:1] in (":", "=") and _secret_name_kind(name) is not None


def _starts_line(text: str, start: int) -> bool:
    """Only blanks, a YAML list dash or `export` between the line start and `start`."""
    line_start = text.rfind("\n", max(0, start - 201), start) + 1
    if start - line_start > 200 or (line_start == 0 and start > 200):
        return False
    lead = text[line_start:start].lstrip(" \t")
    if lead.startswith("- "):
        lead = lead[2:].lstrip(" \t")
    if lead.startswith("export "):
        lead = lead[7:].lstrip(" \t")
    return lead in ("", "'", '"')


def _ascii_lower(text: str) -> str:
    """Lower case with the same length and offsets as `text` (str.lower can grow 'İ')."""
    low = text.lower()
    return low if len(low) == len(text) else text.translate(_ASCII_LOWER)


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


# Prose: "the password is hunter2", "my api key was sk-…".
_PROSE_SECRET = (
    r"(?i)(\b(?:pass(?:word|phrase|wd)?|secret|token|api[ _-]?key)[ \t]+(?:is|was)[ \t]*[:=]?[ \t]*[\"'`]?)"
    r"([^\s\"'`,;]{3,255}[^\s\"'`,;.!?:])"
)


def _redact_prose(text: str, low: str) -> str:
    if (" is " in low or " was " in low) and any(w in low for w in ("pass", "secret", "token", "key")):
        text = _replace_values(text, _compiled(_PROSE_SECRET), "secret-assignment",
                               accept=lambda value: _secret_like(value, "password"))
    return text


def _redact_assignments(text: str) -> str:
    spans, pos = [], 0
    for start in _name_starts(text, _ascii_lower(text)):
        if start < pos or not _labels_a_value(text, start):
            continue
        m = _compiled(_ASSIGNMENT_AT).match(text, start)
        if m is None:
            continue
        open_quote = text[start - 1] if start and text[start - 1] in "\"'" else ""
        if m.group("q") and m.group("q") != open_quote:
            continue
        span = _assignment_value(m, _starts_line(text, start))
        if span is not None:
            spans.append((*span, "secret-assignment"))
            pos = span[1]
    return _splice(text, spans)


# ---------------------------------------------------------------------------------------------
# High-entropy sweep.

# No look-behind: scanning left to right, a long run is always found from its first character.
_RUN = rf"[A-Za-z0-9+/_-]{{{_MIN_ENTROPY_RUN},}}={{0,3}}"
_CLASS_RUNS = r"[a-z]+|[A-Z]+|[0-9]+"
_SEPARATORS = str.maketrans("", "", "+/_-=")
_HEX_CHARS = "0123456789abcdefABCDEF-"
_HASH_PREFIXES = ("sha1-", "sha256-", "sha384-", "sha512-", "md5-")
_HASH_LABELS = ("h1:", "sha1:", "sha256:", "sha384:", "sha512:", "md5:", "sha1=", "sha256=")
_WORDY_SEGMENT = r"[a-z][a-z0-9_-]{2,}|[A-Z][a-z]{2,}(?:[A-Z][a-z]+)*|[A-Z]{3,}"
_MIN_ENTROPY = 4.0          # bits per character; see tests/test_redact.py calibration notes
_MIN_ALTERNATION = 0.4      # share of adjacent letters/digits that switch class (a-z, A-Z, 0-9)


def _shannon_entropy(s: str) -> float:
    from math import log2

    n = len(s)
    counts: dict[str, int] = {}  # collections.Counter's counts, in its order (first seen), without collections
    for char in s:
        counts[char] = counts.get(char, 0) + 1
    return -sum(c / n * log2(c / n) for c in counts.values())


def _is_random_looking(s: str) -> bool:
    """Long, uses lower, upper and digits, switches class often, and has high entropy."""
    if len(s) < _MIN_ENTROPY_RUN:
        return False
    core = s.rstrip("=")
    if core.lower() == core or core.upper() == core or not any(c.isdigit() for c in core):
        return False
    alnum = core.translate(_SEPARATORS)
    alternations = len(_compiled(_CLASS_RUNS).findall(alnum)) - 1
    if alternations < _MIN_ALTERNATION * (len(alnum) - 1):
        return False
    return _shannon_entropy(core) >= _MIN_ENTROPY


def _decodes_to_plain_text(s: str, depth: int) -> bool:
    """Base64 of ordinary text (test fixtures, 'hello world') that itself holds no secret."""
    import binascii

    if depth > 0 or len(s) % 4 not in (0, 2, 3):
        return False
    try:
        raw = binascii.a2b_base64((s.replace("-", "+").replace("_", "/")) + "=" * (-len(s) % 4))
        decoded = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return False
    if len(decoded) < len(s) // 2 or not decoded.isprintable():
        return False
    letters = sum(c.isalpha() or c == " " for c in decoded)
    return letters >= 0.7 * len(decoded) and " " in decoded and not _contains(decoded, depth + 1)


def _run_is_secret(run: str, depth: int) -> bool:
    """A path is judged segment by segment (`/Users/Jane/<token>/x`): one random segment makes
    the whole run go, so what remains never changes the verdict of a second pass."""
    if run.startswith(_HASH_PREFIXES) or not run.removeprefix("0x").strip(_HEX_CHARS):
        return False
    segments = run.split("/")
    wordy = _compiled(_WORDY_SEGMENT)
    if len(segments) > 2 and sum(1 for s in segments if wordy.fullmatch(s)) >= 2:
        return any(_is_random_looking(s) and s.strip(_HEX_CHARS)
                   and not _decodes_to_plain_text(s, depth) for s in segments)
    return _is_random_looking(run) and not _decodes_to_plain_text(run, depth)


def _after_hash_label(text: str, start: int) -> bool:
    """`h1:<run>`, `sha256:<run>`: the label must be a word of its own, not the tail of a run."""
    before = text[max(0, start - 8):start]
    for label in _HASH_LABELS:
        if before.endswith(label):
            at = start - len(label)
            return at == 0 or not (text[at - 1].isalnum() or text[at - 1] in "+/_-")
    return False


# Claude Code on the web names its branches `claude/<task>-<session id>`
# (`claude/phase-4.7-web-search-tools-011CUuBbPDEvdZuCS6uCVqGn`): the id of a session, shown in
# the repository's branch list, not a credential; masked, every git command on the branch was.
_CLAUDE_BRANCH_TAIL = r"-011C[1-9A-HJ-NP-Za-km-z]{20}$"
_WORD_BREAKS = " \t\n\"'`=([{<,;"


def _claude_branch(text: str, run: rx.Match[str]) -> bool:
    if "011C" not in run.group() or not _compiled(_CLAUDE_BRANCH_TAIL).search(run.group()):
        return False
    lo = max(0, run.start() - 200)  # a branch's name is short: the look back stays bounded
    brk = max(text.rfind(c, lo, run.start()) for c in _WORD_BREAKS)
    if brk < 0 and lo > 0:
        return False  # a word longer than any branch name
    word = text[brk + 1:run.start()] + run.group()
    return word.startswith("claude/") or "/claude/" in word


def _redact_high_entropy(text: str, depth: int = 0) -> str:
    out: list[str] = []
    pos = 0
    for m in _compiled(_RUN).finditer(text):
        if _after_hash_label(text, m.start()) or _claude_branch(text, m):
            continue
        if _run_is_secret(m.group(), depth):
            out.append(text[pos:m.start()])
            out.append(_mark("high-entropy"))
            pos = m.end()
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


# ---------------------------------------------------------------------------------------------
# The prefilter: "this text cannot hold a secret", for the many texts that hold none.
#
# `redact` stops after a pass that changes nothing, and in a pass each rule changes a text only
# where its pattern matches; the first rule to change anything sees the text as it came. So a
# text on which no rule's pattern can match comes back unchanged. `may_hold_secret` asks each
# rule for that match, cheaply: behind the rule's own substring gate, with its pattern as it is
# or loosened (a look-behind dropped, a label without its value, the least body of a token), a
# search in C instead of the rule's work in Python. A rule added to `_redact_all` needs its
# check here: tests/test_redact_prefilter.py runs the corpora and look-alikes through both.


def may_hold_secret(text: str) -> bool:
    """False only when `redact(text) == text` is certain (~2x cheaper than `redact` on
    ordinary text, ~2.5x through `changed_texts`); True when a rule of the redactor may match."""
    if len(text) > MAX_SCAN_CHARS:
        return True  # cut, and a note added
    if not text.isascii() and ("\u0130" in text or "\u0131" in text or "\u017f" in text):
        return True  # matched by (?i) rules as i, I, s: their lower case is not
    low = text.lower()
    if len(low) != len(text):
        return True  # offsets in `low` are those of `text` below (only U+0130 grows, today)
    return _may_hold_token(text) or _may_match_a_rule(text, low) or _may_be_random(text)


_GROUP = 16  # texts asked about at once by `changed_texts`


def changed_texts(texts: list[str]) -> list[int]:
    """The positions of the texts that `redact` changes, for many texts at once. The prefilter
    is asked about a group of them joined by line breaks (no pattern it searches crosses a
    line break, and each treats one as the end of a text: the group may hold a secret when a
    text of it may), and only in a group that may about each text, then the redactor."""
    changed = []
    for first in range(0, len(texts), _GROUP):
        group = texts[first:first + _GROUP]
        if may_hold_secret("\n".join(group)):
            changed.extend(first + n for n, text in enumerate(group)
                           if text and may_hold_secret(text) and redact(text) != text)
    return changed


def _may_hold_token(text: str) -> bool:
    """A provider prefix followed by the least body its rule takes, at a place where
    `_token_starts` looks for one: its three scans, every place of a word it would try."""
    token_at = _compiled(_token_clause()).match
    if any(token_at(text, m.start()) for m in _compiled(_UPPER_PREFIXES).finditer(text)):
        return True
    for literal in _LOWER_PREFIXES:
        at = text.find(literal)
        while at >= 0:
            if token_at(text, at):
                return True
            at = text.find(literal, at + 1)
    for m in _compiled(_SEPARATED).finditer(text):
        hit = m.start()
        floor = max(0, hit - 40)
        at = floor + len(text[floor:hit].rstrip(_WORD_STR))  # the word's start
        if token_at(text, at) or any(token_at(text, i.end()) for i in _compiled(r"[_.~-]").finditer(text, at, hit)):
            return True
    return False


@cache
def _token_clause() -> str:
    """Every prefix followed by the fewest body characters a token of its rule can have
    (`_token_end`: the whole length, or CUT_MIN when a cut-short token counts), as a trie."""
    trie: dict = {}
    for _kind, prefixes, chars, length, cut_ok, check in _PREFIXED:
        least = min(length, CUT_MIN) if cut_ok and check != "jwt" else length
        for prefix in prefixes:
            node = trie
            for c in prefix:
                node = node.setdefault(c, {})
            node.setdefault(None, set()).add(f"[{chars}]{{{least}}}")
    return _trie_source(trie)


def _trie_source(node: dict) -> str:
    options = [rx.escape(c) + _trie_source(child) for c, child in sorted(node.items(), key=str) if c]
    options += sorted(node.get(None, ()))
    return options[0] if len(options) == 1 else "(?:" + "|".join(options) + ")"


@cache
def _triggered() -> tuple[tuple[str, str], ...]:
    """(trigger, pattern) of the rules `_redact_providers` runs behind substring tests; the AWS
    secret's label ignores case: it is looked for in lower case (`_AWS_SECRET_LOW`)."""
    return tuple((t, pattern) for kind, triggers, pattern in (*_SHAPED, *_LABELLED) for t in triggers
                 if kind != "aws-secret-key")


# The aws-secret-key rule of _LABELLED, in lower case: its label, then the 40 characters of a key.
_AWS_SECRET_LOW = (r"(?:aws_?secret_?(?:access_?)?key|secret_?access_?key)[\"']?[ \t]*(?:=>|[:=])[ \t]*[\"']?"
                   r"[a-z0-9/+]{40}")


# The rest of a name, then `:` or `=`. At most 240 characters (no longer name labels a value, see
# _labels_a_value): unbounded, each of a long run's keywords read the run to its end (a 750 KB
# `tokentoken…` took 216 s).
_ASSIGNED = r"[A-Za-z0-9_.-]{0,240}+(?:[\"']|\*{1,2})?[ \t]*[:=]"
_HEADER_END = r"[\"']?[ \t]*:"  # every name of _KEY_HEADER ends with `key` or `token`
# Every flag of _PROGRAM_FLAGS after the blank before it: -a, --pass, -P, -p, -pw, -w, -…pass, -U, -u, -k,
# -t, --user.
_PROGRAM_FLAG = r"[ \t]-(?:[aPpwUNkut]|-pass|-user|(?:src|dest)?(?:store|key)pass)"
# `_PROSE_SECRET` read in lower case: its label (`api key` ends with `key`), `is` or `was`, and
# the first four characters of a value.
_PROSE_LOW = r"(?:pass(?:word|phrase|wd)?|secret|token|key)[ \t]+(?:is|was)[ \t]*[:=]?[ \t]*[\"'`]?[^\s\"'`,;]{4}"


def _may_match_a_rule(text: str, low: str) -> bool:  # one check per rule, in order
    """Each rule of `_redact_all` after the tokens: its gate, then its pattern (or a looser one).
    A rule that ignores case is asked of `low` with its lower-case words (`may_hold_secret`
    has turned away the three characters for which that is not the same)."""
    if "-----BEGIN" in text and "PRIVATE KEY" in text:
        return True
    for trigger, pattern in _triggered():
        if trigger in text and _compiled(pattern).search(text):
            return True
    if "ecret" in low and _compiled(_AWS_SECRET_LOW).search(low):
        return True
    if "." in text and _compiled(_DISCORD_TAIL).search(text):
        return True
    if "://" in text and (_compiled(_URL_PASSWORD).search(text) or _compiled(_URL_CUT_PASSWORD).search(text)
                          or _compiled(_URL_TOKEN_USER).search(text)):
        return True
    if "authorization" in low or "cookie" in low:
        return True
    if "-" in text and _may_hold_flag(text, low) or _may_hold_positional(text, low):
        return True
    if (" is " in low or " was " in low) and _compiled(_PROSE_LOW).search(low):
        return True
    return _may_hold_assignment(text, low)


def _may_hold_flag(text: str, low: str) -> bool:
    """`_redact_flags`."""
    if _compiled(_SECRET_FLAG).search(text):
        return True
    if "-p" in text and ("mysql" in low or "mariadb" in low) and _compiled(_MYSQL_PASSWORD).search(text):
        return True
    if "-p" in text and ("sshpass" in low or " login" in low) and _compiled(_SPACED_P_PASSWORD).search(text):
        return True
    if _compiled(_PROGRAM_FLAG).search(text) and any(p in low for p in _PROGRAM_TRIGGERS) \
            and _redact_program_flags(text, low) != text:
        return True  # (their own work, read once a segment: a pattern with the gap unbounded is quadratic)
    return "curl" in low and ("-u" in text or "--user" in text)


def _may_hold_positional(text: str, low: str) -> bool:
    """`_redact_positional` (its own gates, then its patterns: few texts pass the gates)."""
    if _may_set_secrets(low) and _compiled(_SECRETS_COMMAND).search(text):
        return True
    return any(gate(text, low) and _compiled(pattern).search(text) for gate, pattern, *_rest in _POSITIONAL_RULES)


def _may_hold_assignment(text: str, low: str) -> bool:
    """`_redact_assignments` (a name that `_labels_a_value` takes), `_KEY_HEADER` and `_NETRC`."""
    if "machine" in low and "password" in low:
        return True
    assigned, header_end = _compiled(_ASSIGNED).match, _compiled(_HEADER_END).match
    for keyword in _NAME_KEYWORDS:
        at = low.find(keyword)
        while at >= 0:
            end = at + len(keyword)
            if assigned(low, end):
                if keyword in ("key", "token") and header_end(low, end):
                    return True
                window = text[max(0, at - 120):at]
                if _labels_a_value(text, at - (len(window) - len(window.rstrip(_NAME_STR)))):
                    return True
            at = low.find(keyword, at + 1)
    return False


def _may_be_random(text: str) -> bool:
    """`_redact_high_entropy`: a run of 32 whose segment or whole is random-looking. The runs
    are found in the text's bytes, each mapped to `a` when it is a run's character (a C table
    lookup a byte; a character outside ASCII is never part of a run, nor any of its bytes)."""
    if len(text) < _MIN_ENTROPY_RUN:
        return False
    marks = text.encode("utf-8", "surrogatepass").translate(_run_table())
    at = marks.find(_RUN_BYTES)
    if at < 0:
        return False
    if len(marks) != len(text):  # offsets differ: the runs from the pattern
        return any(_may_be_random_run(m.group()) for m in _compiled(_RUN).finditer(text))
    while at >= 0:  # `at` starts a run: the first 32 of them after the last run's end
        end = marks.find(b" ", at)
        end = len(text) if end < 0 else end
        equals = text[end:end + 3]
        if _may_be_random_run(text[at:end + len(equals) - len(equals.lstrip("="))]):  # `={0,3}`
            return True
        at = marks.find(_RUN_BYTES, end)
    return False


_RUN_BYTES = b"a" * _MIN_ENTROPY_RUN


@cache
def _run_table() -> bytes:
    """Bytes of a run's characters (`_RUN`) to `a`, every other byte to a space."""
    run = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-"
    return bytes(ord("a") if b in run else ord(" ") for b in range(256))


def _may_be_random_run(run: str) -> bool:
    """`_run_is_secret` needs the run, or one of its segments, random-looking."""
    if run.lower() == run or run.upper() == run or not any(c.isdigit() for c in run):
        return False
    return _is_random_looking(run) or "/" in run and any(_is_random_looking(s) for s in run.split("/"))

# ---------------------------------------------------------------------------------------------
# Public API


def _redact_all(text: str, depth: int = 0) -> str:
    if "PRIVATE KEY" in text and "-----BEGIN" in text:
        text = _redact_private_keys(text)
    text = _redact_providers(text)
    low = text.lower()
    if "://" in text:
        text = _redact_url_passwords(text)
    text = _redact_headers(text, low)
    text = _redact_flags(text, low)
    text = _redact_positional(text, low)
    text = _redact_prose(text, low)
    text = _redact_assignments(text)
    if len(text) >= _MIN_ENTROPY_RUN:
        text = _redact_high_entropy(text, depth)
    return text


def _contains(text: str, depth: int) -> bool:
    return _redact_all(text, depth) != text


_MAX_PASSES = 4
_FIT = MAX_SCAN_CHARS - 200  # room for the note saying the text was cut


def _cut_at_line(text: str, limit: int) -> str:
    """The first `limit` characters, ending at a line break when one is in the last 64 KB."""
    cut = text.rfind("\n", max(0, limit - 65_536), limit)
    return text[: cut if cut > 0 else limit]


def redact(text: str) -> str:
    """`text` with every secret replaced by `[REDACTED:<kind>]`. Never raises; idempotent.

    Passes run until one changes nothing: a redaction can reveal a label to an earlier rule (the
    sweep turns `-p<run>` into a placeholder, and now `mysql ... -p<pw>` is the first `-p`).
    Text without secrets costs one pass; a pass that changes something replaces characters
    outside placeholders, so passes end (and are capped).

    Text longer than MAX_SCAN_CHARS (before, or after placeholders made it grow) is cut at a
    line break and ends with a note: what was not scanned is dropped, never returned, and the
    work per call is bounded whatever the input size.
    """
    if not isinstance(text, str) or not text:
        return text
    original_length, cut = len(text), False
    if len(text) > MAX_SCAN_CHARS:
        text, cut = _cut_at_line(text, _FIT), True
    for _ in range(_MAX_PASSES):
        redacted = _redact_all(text)
        if len(redacted) > MAX_SCAN_CHARS:
            redacted, cut = _cut_at_line(redacted, _FIT), True
        if redacted == text:
            break
        text = redacted
    if cut:
        text += f"\n[learn: cut to {len(text)} of {original_length} characters; the rest dropped]"
    return text


def contains_secret(text: str) -> bool:
    """True when `redact` would change `text` (already-redacted text holds no secret)."""
    return isinstance(text, str) and bool(text) and _contains(text[:MAX_SCAN_CHARS], 0)


_MAX_DEPTH = 64
_TOO_DEEP = "[learn: nested too deep, dropped]"


def redact_obj(obj, _depth: int = 0):
    """A copy of `obj` with every string redacted, recursing into dicts, lists and tuples.

    Keys are kept; a string value under a key that names a credential (`"password"`,
    `"api_key"`, `"GITHUB_TOKEN"` ...) is redacted whole even when it does not look secret.
    A container nested deeper than 64 levels (or a cycle) is replaced by a short marker string.
    """
    if isinstance(obj, str):
        return redact(obj)
    if _depth >= _MAX_DEPTH and isinstance(obj, (dict, list, tuple)):
        return _TOO_DEEP
    if isinstance(obj, dict):
        return {key: _redact_value(key, value, _depth) for key, value in obj.items()}
    if isinstance(obj, (list, tuple)):
        items = [redact_obj(item, _depth + 1) for item in obj]
        return items if isinstance(obj, list) else tuple(items)
    return obj


def _redact_value(key, value, depth: int):
    kind = _secret_name_kind(key) if isinstance(key, str) and len(key) <= 120 else None
    if kind and isinstance(value, str) and value and not _is_placeholder(value) \
            and not _looks_pathy(key, value) and (kind != "key" or _token_like(value)):
        return _mark("secret-assignment")
    return redact_obj(value, depth + 1)


def redact_project(project):
    """A store.project.Project whose name, root and remote are fit for disk: a folder named
    after a token, or a remote with one in it, must not reach project.json, the index or any
    learning's `project` field. Text without a secret comes back unchanged."""
    name, root, remote = (redact(v) if isinstance(v, str) else v
                          for v in (project.name, project.root, project.remote))
    if (name, root, remote) == (project.name, project.root, project.remote):
        return project
    return project._replace(name=name, root=root, remote=remote)



# ---------------------------------------------------------------------------------------------
# Masks filled back in, for the agent that holds the values

_MARK_RE = r"\[REDACTED:[a-z0-9-]+\]"


def unmask(text: str, raw: str) -> str:
    """`text` (stored, so masked) with each mark filled in from `raw`, the command the agent just
    ran, secrets and all: where `raw`, redacted, has the same mark in the same slot (`sgit
    --token [REDACTED:secret-flag] push`), the value it masks there. A fix shown masked cannot
    be run; the agent that ran `raw` holds the value already. For that answer only: what is
    stored stays masked. A mark with no counterpart in `raw` stays as it is."""
    if PLACEHOLDER_PREFIX not in text or not raw:
        return text
    values = _masked_values(raw)
    if not values:
        return text

    def fill(match) -> str:
        slot = _slot(text[:match.start()])
        found = {value for place, mark, value in values if mark == match.group() and place == slot}
        return found.pop() if len(found) == 1 else match.group()

    return _compiled(_MARK_RE).sub(fill, text)


@lru_cache(maxsize=4)
def _masked_values(raw: str) -> tuple[tuple[str, str, str], ...]:
    """(slot, mark, value) for each mark of `raw` redacted, read off `raw` between the texts
    around it (the text redact leaves is `raw`'s own); as far as the two can be told apart.
    (One answer fills several texts from one command: it is redacted once.)"""
    pieces = _compiled(f"({_MARK_RE})").split(redact(raw))  # texts at even places, marks at odd
    if not raw.startswith(pieces[0]):
        return ()
    found, at = [], len(pieces[0])
    for i in range(1, len(pieces), 2):
        after = pieces[i + 1]
        if i + 2 < len(pieces):
            end = raw.find(after, at) if after else -1  # (two marks side by side: no telling where)
        else:
            end = len(raw) - len(after) if raw.endswith(after) else -1
        if end < at:
            break
        value = raw[at:end]
        if value and PLACEHOLDER_PREFIX not in value:
            found.append((_slot("".join(pieces[:i])), pieces[i], value))
        at = end + len(after)
    return tuple(found)


def _slot(before: str) -> str:
    """The slot a mark fills: the last word with a letter or digit before it, and the quote or
    sign that opens the value (`--token`, `-p '`, `PGPASSWORD=`, `Bearer`, `postgres://app:`).
    Read word by word (a pattern for it crawled: a run of 2,000 characters took minutes)."""
    words = before[-200:].split()
    at = next((i for i in range(len(words) - 1, -1, -1) if any(c.isalnum() for c in words[i])), None)
    return " ".join(words[at:]) if at is not None else ""
