"""Secret formats and look-alikes for the leak attack suite (tests/reliability/test_rel_attacks_leaks.py).

Every value is made from a fixed label with sha256: the shape of a real credential (prefix,
length, alphabet), never issued by anyone. Formats follow the provider rules of gitleaks'
default rule set (config/gitleaks.toml) plus AI, CI and hosting providers with prefixed tokens,
and the context rules (URLs, headers, flags, labels) that carry a secret without a prefix.

FORMATS: (kind, value, template, standalone). `template.format(s=value)` is a line an agent
could see. `standalone`: the value alone is recognisable (a prefixed token), so it is also
planted bare, as a folder name.
CUT: (value cut short by an agent's output, template).
LOOKALIKES: strings that must come back unchanged (hashes, UUIDs, SHAs, digests, placeholders).
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import string
from pathlib import Path

_spec = importlib.util.spec_from_file_location("secrets_corpus", Path(__file__).with_name("secrets_corpus.py"))
_base = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_base)

UP, B62, B64, URL, HEX = _base.UPPER_DIGITS, _base.BASE62, _base.BASE64, _base.URLSAFE, _base.HEX
LOW = string.ascii_lowercase + string.digits


def fake(label: str, length: int, alphabet: str = B62) -> str:
    """secrets_corpus.fake, with labels of their own (no value is shared with that corpus)."""
    return _base.fake(f"leaks:{label}", length, alphabet)


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


# The alphabets of a token's body, by the names tests/data/leaks_prefixed.tsv uses.
ALPHABETS = {
    "UP": UP, "UP-": UP + "-", "UP.": UP + ".", "B62": B62, "B62_": B62 + "_", "B64": B64, "URL": URL,
    "URL.": URL + ".", "URL[:-1].": URL[:-1] + ".", "HEX": HEX, "HEX-": HEX + "-", "HEX_": HEX + "_", "LOW": LOW,
    "LETTERS": string.ascii_letters, "DIGITS-B62": string.digits + "-" + B62, "DIGITS-HEX": string.digits + "-" + HEX,
}


def _prefixed() -> list[tuple[str, str, int, str, str]]:
    """(kind, prefix, body length, alphabet, template): a prefixed token in a line where its only
    clue is its shape (an error, a log, a command), not a label. A table: leaks_prefixed.tsv."""
    rows = []
    for line in Path(__file__).with_name("leaks_prefixed.tsv").read_text().splitlines():
        if line and not line.startswith("#"):
            kind, prefix, length, alphabet, template = line.split("\t")
            rows.append((kind, prefix, int(length), ALPHABETS[alphabet], template))
    return rows


_PREFIXED = _prefixed()

# (kind, value, template): secrets known only by where they are (a URL, a header, a flag, a
# label, a shape without a prefix).
_CONTEXT = [
    ("url-password", "pw-" + fake("pg", 14), "psql: connection to postgresql://app:{s}@db.internal:5432/app failed"),
    ("url-password", fake("mongo", 20), "MongoServerError at mongodb+srv://admin:{s}@cluster0.example.net/db"),
    ("url-password", fake("amqp", 18), "amqp://guest:{s}@rabbit:5672/ refused"),
    ("url-password", fake("xtok", 36), "git push https://x-access-token:{s}@github.com/acme/app.git"),
    ("authorization", fake("bearer", 40), "curl -H 'Authorization: Bearer {s}' https://api.example.com"),
    ("authorization", fake("xkey", 32, HEX), 'curl -H "X-API-Key: {s}" https://api.example.com'),
    ("cookie", "s%3A" + fake("cookie", 30), "Set-Cookie: connect.sid={s}; Path=/; HttpOnly"),
    ("password-flag", "Rd!" + fake("redis", 12), "redis-cli -h cache.internal -a {s} ping"),
    ("password-flag", "My$" + fake("mysql", 10), "mysql -u root -p{s} shop"),
    ("password-flag", "Sq1" + fake("sqlcmd", 10), "sqlcmd -S db -U sa -P {s} -Q 'select 1'"),
    ("password-flag", "Ld4" + fake("ldap", 10), "ldapsearch -x -D cn=admin -w {s} -b dc=example"),
    ("password-flag", "Ks5" + fake("keytool", 10), "keytool -importcert -storepass {s} -keystore app.jks"),
    ("secret-assignment", fake("client-secret", 32, HEX), "Error: client_secret: {s} was rejected by the IdP"),
    ("secret-assignment", fake("api-key-mid", 28), "invalid api_key: {s} (401)"),
    ("secret-assignment", "Hunter" + fake("prose", 6, string.digits), "the password is {s}"),
    ("secret-assignment", fake("dd", 32, HEX), "DD_APP_KEY={s} datadog-agent start"),
    ("secret-assignment", fake("ada", 32, LOW), "ADAFRUIT_IO_KEY={s}"),
    ("secret-assignment", fake("twbearer", 100, B62), "TWITTER_BEARER_TOKEN=AAAAAAAAAAAAAAAAAAAAA{s}"),
    ("azure-storage-key", fake("azure", 86, B64) + "==",
     "AccountName=acme;AccountKey={s};EndpointSuffix=core.windows.net"),
    ("jwt", _b64url(b'{"alg":"RS256","typ":"JWT"}') + "." + _b64url(b'{"sub":"42","iat":1700000000}') + "."
     + fake("jwt-sig", 86, URL), "Authorization header rejected: {s}"),
    ("telegram-token", "6123456789:AA" + fake("tg", 33, URL), "https://api.telegram.org/bot{s}/sendMessage 401"),
    ("azure-ad-client-secret", fake("aad", 3) + "8Q~" + fake("aad-b", 34, B62 + "_~.-"),
     "AADSTS7000215: Invalid client secret {s}"),
    ("terraform-token", fake("tf", 14, LOW) + ".atlasv1." + fake("tf-b", 67, LOW), "terraform login: token {s}"),
    ("teams-webhook", "a1b2c3d4-0000-4000-8000-" + fake("teams", 12, HEX) + "@" + fake("teams-t", 8, HEX)
     + "/IncomingWebhook/" + fake("teams-h", 32, HEX), "POST https://acme.webhook.office.com/webhookb2/{s} failed"),
    ("slack-webhook", "T" + fake("wh-t", 8, UP) + "/B" + fake("wh-b", 10, UP) + "/" + fake("wh-s", 24),
     "curl -X POST https://hooks.slack.com/services/{s}"),
    ("discord-webhook", fake("dwh", 68, URL), "POST https://discord.com/api/webhooks/112233445566778899/{s} 404"),
    ("private-key", "-----BEGIN EC PRIVATE KEY-----\n" + "\n".join(fake(f"ec{i}", 64, B64) for i in range(3))
     + "\n-----END EC PRIVATE KEY-----", "cat key.pem\n{s}"),
]

FORMATS: list[tuple[str, str, str, bool]] = (
    [(kind, prefix + fake(f"{kind}:{prefix}", length, alphabet), template, True)
     for kind, prefix, length, alphabet, template in _PREFIXED]
    + [(kind, value, template, False) for kind, value, template in _CONTEXT]
)

# Tokens cut short by an agent's output: a known prefix and enough of the token.
CUT = [
    ("ghp_" + fake("cut-ghp", 26), "remote: Invalid token {s}"),
    ("AIza" + fake("cut-aiza", 22, URL), "...&key={s}"),
    ("glpat-" + fake("cut-glpat", 14, URL), "token {s}"),
    ("sk-ant-api03-" + fake("cut-ant", 30, URL), "x-api-key: {s}"),
    ("xoxb-" + fake("cut-xoxb", 16, string.digits + "-"), "SLACK {s}"),
    ("npm_" + fake("cut-npm", 20), "//registry.npmjs.org/:_authToken={s}"),
    ("https://deploy:" + fake("cut-url", 16), "git clone {s}"),
]

_SHA256 = [hashlib.sha256(f"lookalike-{i}".encode()).hexdigest() for i in range(20)]
_SHA1 = [hashlib.sha1(f"commit-{i}".encode()).hexdigest() for i in range(20)]
_UUIDS = [f"{h[:8]}-{h[8:12]}-4{h[13:16]}-8{h[17:20]}-{h[20:32]}" for h in _SHA256[:15]]
_SRI = ["sha512-" + base64.b64encode(hashlib.sha512(f"pkg-{i}".encode()).digest()).decode() for i in range(8)]
_GOSUM = ["h1:" + base64.b64encode(hashlib.sha256(f"mod-{i}".encode()).digest()).decode() for i in range(6)]

LOOKALIKES: list[str] = (
    [f"commit {h}" for h in _SHA1[:10]]
    + [f"HEAD is now at {h[:7]} fix flaky test" for h in _SHA1[10:15]]
    + [f"Merge {a[:12]} into {b[:12]}" for a, b in zip(_SHA1[15:], _SHA1[:5], strict=False)]
    + [f"docker pull nginx@sha256:{h}" for h in _SHA256[:10]]
    + [f'"integrity": "sha256:{h}"' for h in _SHA256[10:15]]
    + [f"pip install pkg=={i}.0 --hash=sha256:{h}" for i, h in enumerate(_SHA256[15:])]
    + [f"request id {u} failed" for u in _UUIDS[:8]]
    + [f"session {u} resumed" for u in _UUIDS[8:]]
    + [f"resolved: {s}" for s in _SRI]
    + [f"golang.org/x/text v0.{i}.0 {g}" for i, g in enumerate(_GOSUM)]
    + [f"etag W/\"{h[:32]}\"" for h in _SHA256[:5]]
    + [f"md5 {hashlib.md5(str(i).encode()).hexdigest()}  dist/app-{i}.tar.gz" for i in range(5)]
    + [
        "export GITHUB_TOKEN=<your-token>",
        "OPENAI_API_KEY=sk-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE",
        "password: <your-password-here>",
        "api_key: YOUR_API_KEY",
        "token: ${{ secrets.DEPLOY_TOKEN }}",
        "DB_PASSWORD=${DB_PASSWORD:-}",
        "Authorization: Bearer $TOKEN",
        "postgresql://user:[YOUR-PASSWORD]@db.example.supabase.co:5432/postgres",
        "client_secret: ********",
        "STRIPE_KEY=sk_test_xxxxxxxxxxxxxxxxxxxxxxxx",
        "curl -u admin:$ADMIN_PASS https://jenkins.internal/api/json",
        "the password is incorrect, try again",
        "invalid token: expected 3 parts, got 2",
        "Error: token expired at 2026-11-30T10:00:00Z",
        "secret: inherit",
        "key: value",
        "sort_key=user-profile",
        "http://localhost:8080/health",
        "https://github.com/acme/widgets/pull/1234",
        "git@github.com:acme/widgets.git",
        "redis-cli -h cache.internal ping",
        "mysql -u root -p shop",
        "keytool -list -keystore app.jks",
        "node_modules/.pnpm/typescript@5.4.5/node_modules/typescript/lib/tsserver.js",
        "FAILED tests/test_auth.py::test_rejects_expired_tokens",
        "max_tokens: 4096",
        "TOKENIZERS_PARALLELISM=false",
        "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
        "Content-Security-Policy: script-src 'self'",
        "x86_64-unknown-linux-gnu",
        "pip install scikit-learn",
        "mypy: error: Name 'task_definition_arn' is not defined",
        "ssh -p 2222 deploy@10.0.0.5",
        "export PATH=/usr/local/bin:$PATH",
        "numpy==1.26.4 Python 3.11.9 node v18.19.0",
        "passed=12 failed=0 skipped=3",
        "key-value store connection lost",
        "API-v2 deprecated, use API-v3",
    ]
)
