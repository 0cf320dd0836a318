"""Fake secrets in realistic contexts, and look-alikes that are not secrets.

Every value is generated from a fixed label with sha256, so it has the shape of a real credential
(prefix, length, alphabet) but was never issued by anyone. Import by path (no package needed):

    spec = importlib.util.spec_from_file_location("secrets_corpus", path_to_this_file)

SECRETS: (kind, value, template). `template.format(s=value)` is a line an agent could see; after
`redact` it must contain `[REDACTED:<kind>]` and no 8-character fragment of `value`.
LOOKALIKES: strings that `redact` must return unchanged.
"""

from __future__ import annotations

import base64
import hashlib
import string

UPPER_DIGITS = string.ascii_uppercase + string.digits
BASE62 = string.ascii_letters + string.digits
BASE64 = BASE62 + "+/"
URLSAFE = BASE62 + "-_"
HEX = "0123456789abcdef"


def fake(label: str, length: int, alphabet: str = BASE62) -> str:
    """`length` characters of `alphabet`, the same on every run for the same label."""
    chars: list[str] = []
    counter = 0
    while len(chars) < length:
        digest = hashlib.sha256(f"{label}:{counter}".encode()).digest()
        chars.extend(alphabet[b % len(alphabet)] for b in digest)
        counter += 1
    return "".join(chars[:length])


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _jwt(label: str) -> str:
    header = _b64url(b'{"alg":"HS256","typ":"JWT"}')
    payload = _b64url(b'{"sub":"1234567890","name":"Test User","iat":1716239022}')
    return f"{header}.{payload}.{fake(label, 43, URLSAFE)}"


def _pem(label: str, kind: str, lines: int, end: bool = True, newline: str = "\n") -> str:
    body = [fake(f"{label}{i}", 64, BASE64) for i in range(lines)] + [fake(label, 24, BASE64) + "=="]
    block = [f"-----BEGIN {kind}PRIVATE KEY-----", *body]
    if end:
        block.append(f"-----END {kind}PRIVATE KEY-----")
    return newline.join(block)


_DISCORD_ID = base64.b64encode(b"112233445566778899").decode()  # a bot's numeric id, base64

SECRETS: list[tuple[str, str, str]] = [
    ("aws-access-key", "AKIA" + fake("aws-id", 16, UPPER_DIGITS),
     "aws configure set aws_access_key_id {s}"),
    ("aws-access-key", "ASIA" + fake("aws-sts", 16, UPPER_DIGITS),
     "AWS_ACCESS_KEY_ID={s} aws s3 ls s3://backups"),
    ("aws-secret-key", fake("aws-secret", 40, BASE64),
     "aws_secret_access_key = {s}"),
    ("aws-secret-key", fake("aws-secret-env", 40, BASE64),
     "export AWS_SECRET_ACCESS_KEY={s}"),
    ("aws-secret-key", fake("aws-secret-json", 40, BASE64),
     '        "SecretAccessKey": "{s}",'),
    ("github-token", "ghp_" + fake("ghp", 36),
     "git clone https://{s}@github.com/acme/widgets.git"),
    ("github-token", "gho_" + fake("gho", 36),
     "export GITHUB_TOKEN={s}"),
    ("github-token", "ghs_" + fake("ghs", 36),
     "remote: fatal: https://x-access-token:{s}@github.com/acme/app denied"),
    ("github-token", "github_pat_" + fake("pat-a", 22) + "_" + fake("pat-b", 59),
     "gh auth login --with-token <<< {s}"),
    ("gitlab-token", "glpat-" + fake("glpat", 20, URLSAFE),
     "git push https://oauth2:{s}@gitlab.com/group/project.git"),
    ("slack-token", "xoxb-" + fake("slack-a", 12, string.digits) + "-"
     + fake("slack-b", 13, string.digits) + "-" + fake("slack-c", 24),
     "SLACK_BOT_TOKEN={s} node bot.js"),
    ("slack-token", "xoxp-" + fake("xoxp-a", 11, string.digits) + "-" + fake("xoxp-b", 32, HEX),
     "curl -H 'Authorization: Bearer {s}' https://slack.com/api/auth.test"),
    ("slack-webhook", "T" + fake("wh-t", 8, UPPER_DIGITS) + "/B" + fake("wh-b", 10, UPPER_DIGITS)
     + "/" + fake("wh-s", 24),
     "curl -X POST https://hooks.slack.com/services/{s} -d @message.json"),
    ("openai-key", "sk-proj-" + fake("openai-proj", 120, URLSAFE),
     "OPENAI_API_KEY={s} python app.py"),
    ("openai-key", "sk-" + fake("openai-legacy", 48),
     "openai.api_key = '{s}'"),
    ("anthropic-key", "sk-ant-api03-" + fake("anthropic", 93, URLSAFE) + "AA",
     'export ANTHROPIC_API_KEY="{s}"'),
    ("google-api-key", "AIza" + fake("google", 35, URLSAFE),
     "GET https://maps.googleapis.com/maps/api/geocode/json?address=Berlin&key={s} 403"),
    ("google-oauth-token", "ya29." + fake("ya29", 150, URLSAFE),
     "Authorization: Bearer {s}"),
    ("stripe-key", "sk_live_" + fake("stripe-live", 99),
     'stripe.api_key = "{s}"'),
    ("stripe-key", "rk_test_" + fake("stripe-rk", 99),
     "STRIPE_RESTRICTED={s}"),
    ("npm-token", "npm_" + fake("npm", 36),
     "//registry.npmjs.org/:_authToken={s}"),
    ("pypi-token", "pypi-AgEIcHlwaS5vcmc" + fake("pypi", 150, URLSAFE),
     "twine upload -u __token__ -p {s} dist/*"),
    ("huggingface-token", "hf_" + fake("hf", 34),
     "huggingface-cli login --token {s}"),
    ("sendgrid-key", "SG." + fake("sg-a", 22, URLSAFE) + "." + fake("sg-b", 43, URLSAFE),
     "SENDGRID_API_KEY={s}"),
    ("twilio-key", "SK" + fake("twilio", 32, HEX),
     "twilio api:core:keys:fetch --sid {s}"),
    ("discord-token", _DISCORD_ID + "." + fake("discord-b", 6, URLSAFE) + "."
     + fake("discord-c", 38, URLSAFE),
     "client.run('{s}')"),
    ("telegram-token", "7123456789:AA" + fake("telegram", 33, URLSAFE),
     "requests.get('https://api.telegram.org/bot{s}/getMe')"),
    ("digitalocean-token", "dop_v1_" + fake("do", 64, HEX),
     "doctl auth init -t {s}"),
    ("shopify-token", "shpat_" + fake("shopify", 32, HEX),
     "X-Shopify-Access-Token: {s}"),
    ("doppler-token", "dp.pt." + fake("doppler", 43),
     "DOPPLER_TOKEN={s} doppler run -- npm start"),
    ("mailgun-key", "key-" + fake("mailgun", 32),
     "curl -s --user 'api:{s}' https://api.mailgun.net/v3/mg.example.com/messages"),
    ("azure-storage-key", fake("azure", 86, BASE64) + "==",
     "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={s};EndpointSuffix=core.windows.net"),
    ("azure-sas", fake("azure-sas", 44, BASE62) + "%3D",
     "https://acme.blob.core.windows.net/backups/db.tar?sv=2022-11-02&sr=b&sp=r&sig={s}"),
    ("vault-token", "hvs." + fake("vault", 90, URLSAFE),
     "vault login {s}"),
    ("age-secret-key", "AGE-SECRET-KEY-1" + fake("age", 58, UPPER_DIGITS),
     "# created: 2026-01-02\n{s}"),
    ("jwt", _jwt("jwt-header"),
     "Authorization: Bearer {s}"),
    ("jwt", _jwt("jwt-query"),
     "GET /api/me?access={s} HTTP/1.1"),
    ("private-key", _pem("rsa", "RSA ", 8),
     "$ cat ~/.ssh/id_rsa\n{s}\n$ ssh-add ~/.ssh/id_rsa"),
    ("private-key", _pem("openssh", "OPENSSH ", 5, end=False),
     "Read(~/.ssh/id_ed25519)\n{s}\n[output truncated]"),
    ("private-key", _pem("gcp", "", 6, newline="\\n"),
     '{{"type": "service_account", "private_key": "{s}", "client_email": "ci@p.iam.example"}}'),
    ("url-password", "correct-horse-" + fake("pg", 10),
     "psql: error: connection to postgres://app_user:{s}@db.internal:5432/app failed"),
    ("url-password", fake("redis", 24),
     "REDIS_URL=redis://:{s}@cache.internal:6379/0"),
    ("authorization", base64.b64encode(b"deploy:" + fake("basic", 16).encode()).decode(),
     "> Authorization: Basic {s}"),
    ("authorization", fake("token-auth", 40, HEX),
     "curl -H 'Authorization: Token {s}' https://api.example.com/v1/me"),
    ("authorization", fake("x-api-key", 32, HEX),
     'curl -H "X-API-Key: {s}" https://api.example.com/v1/items'),
    ("cookie", "sess-" + fake("cookie", 20),
     "Cookie: sessionid={s}; theme=dark"),
    ("password-flag", "S3cure" + fake("mysql", 6),
     "mysql -u root -p'{s}' shop < dump.sql"),
    ("password-flag", "pgPass-" + fake("psql", 8),
     "pg_dump --password={s} -h db.internal app"),
    ("password-flag", "ssh-" + fake("sshpass", 12),
     "sshpass -p {s} ssh deploy@10.0.0.5"),
    ("password-flag", "adm-" + fake("curl-user", 12),
     "curl -u admin:{s} https://jenkins.internal/api/json"),
    ("password-flag", fake("netrc", 16),
     "machine api.example.com login bob password {s}"),
    ("secret-flag", fake("vercel", 24),
     "vercel deploy --prod --token {s}"),
    ("secret-flag", fake("api-key-flag", 32, HEX),
     "acme-cli --api-key {s} sync"),
    ("secret-assignment", fake("secret-token", 40, HEX),
     "export SECRET_TOKEN={s}"),
    ("secret-assignment", "hunter2 " + fake("db-password", 8),
     'DB_PASSWORD="{s}"'),
    ("secret-assignment", "pw-" + fake("json-password", 12),
     '{{"username": "admin", "password": "{s}"}}'),
    ("secret-assignment", fake("yaml-key", 24, string.ascii_lowercase + string.digits),
     "openai:\n  api_key: {s}\n  model: gpt-4o"),
    ("secret-assignment", "pg-" + fake("pgpassword", 12),
     "PGPASSWORD={s} psql -h db -U app"),
    ("secret-assignment", "Sa-" + fake("mssql", 14),
     "Server=db;Database=app;User Id=sa;Password={s};TrustServerCertificate=true"),
    ("secret-assignment", fake("client-secret", 32, HEX),
     "    client_secret = '{s}'"),
    ("secret-assignment", fake("spring", 20),
     "spring.datasource.password={s}"),
    ("high-entropy", fake("entropy-48", 48),
     "Error: unexpected response for {s} (status 401)"),
    ("high-entropy", fake("entropy-64", 64, BASE64),
     "cache key mismatch: {s}"),
]

_SRI = "sha512-" + base64.b64encode(hashlib.sha512(b"left-pad@1.3.0").digest()).decode()
_GO_SUM = "h1:" + base64.b64encode(hashlib.sha256(b"golang.org/x/text").digest()).decode()
_CSP_HASH = "sha256-" + base64.b64encode(hashlib.sha256(b"alert(1)").digest()).decode()
_SHA256 = hashlib.sha256(b"lockfile").hexdigest()
_SHA1 = hashlib.sha1(b"commit").hexdigest()

LOOKALIKES: list[str] = [
    "/home/runner/work/learn-cli/learn-cli/node_modules/.pnpm/typescript@5.4.5/node_modules/"
    "typescript/lib/tsserver.js",
    "/Users/JaneDoe/Library/Application Support/Code/User/workspaceStorage/"
    "3f2a9c1b7d4e5f60718293a4b5c6d7e8/state.vscdb",
    "/Users/JaneDoe/Library/Caches/3f2a9c1b7d4e5f60718293a4b5c6d7e8f9012345/Data2024/Index",
    r"C:\Users\Developer\AppData\Local\Programs\Python\Python311\Lib\site-packages\setuptools"
    r"\_distutils\command\build_ext.py",
    "node_modules/@typescript-eslint/eslint-plugin/dist/rules/no-unnecessary-type-assertion.js",
    f"commit {_SHA1}",
    "HEAD is now at 1a2b3c4 fix: handle empty config",
    "session 123e4567-e89b-12d3-a456-426614174000 started",
    f'"hash": "sha256:{_SHA256}"',
    f"pip install requests==2.32.3 --hash=sha256:{_SHA256}",
    f"nginx@sha256:{_SHA256}",
    f"resolution: {{integrity: {_SRI}}}",
    f"golang.org/x/text v0.14.0 {_GO_SUM}",
    f"Content-Security-Policy: script-src 'self' '{_CSP_HASH}'",
    "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
    "echo dGVzdCBkYXRh | base64 -d",
    "VGhlIHF1aWNrIGJyb3duIGZveCBqdW1wcyBvdmVyIHRoZSBsYXp5IGRvZw==",
    "FAILED tests/test_auth.py::test_authentication_middleware_rejects_expired_tokens",
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
    "org.springframework.security.oauth2.server.resource.InvalidBearerTokenException",
    "ModuleNotFoundError: No module named 'google.auth.transport.requests'",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "x86_64-unknown-linux-gnu-gcc-13-Release2024Build",
    "https://github.com/anthropics/claude-code/issues/1234",
    "git@github.com:owner/repo.git",
    "https://user@example.com/path/to/page?tab=settings#tokens",
    "Please reset your password and try again.",
    'FATAL:  password authentication failed for user "postgres"',
    "mytool --password-file ~/.config/mytool/pass.txt --token-file /run/secrets/token",
    "Invalid token: expected 3 parts, got 2",
    "color: #3b82f6; background-color: #FFFFFF;",
    "numpy==1.26.4 Python 3.11.9 node v18.19.0",
    "max_tokens: 4096",
    '"usage": {"prompt_tokens": 1532, "completion_tokens": 211, "total_tokens": 1743}',
    "TOKENIZERS_PARALLELISM=false",
    "export PATH=/usr/local/bin:$PATH",
    "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
    'curl -H "Authorization: Bearer $API_TOKEN" https://api.example.com',
    "DB_PASSWORD=${DB_PASSWORD:-}",
    "password: <your-password-here>",
    "postgresql://postgres:[YOUR-PASSWORD]@db.example.supabase.co:5432/postgres",
    "PWD=/home/dev/projects/app OLDPWD=/home/dev",
    "GOOGLE_APPLICATION_CREDENTIALS=/home/dev/.config/gcloud/application_default_credentials.json",
    "const apiKey = process.env.OPENAI_API_KEY;",
    "    token = self._fetch_token(client_id)",
    "ssh -p 2222 deploy@10.0.0.5",
    "mkdir -p /tmp/build && tar -xzf pkg.tgz",
    "docker run -u 1000:1000 alpine",
    "gh auth login -p ssh --web",
    "git push -u origin main",
    "AWS access key ids start with AKIA; ours is missing.",
    "pip install scikit-learn  # imported as sklearn, not sk-learn",
    "main.4f3c2a1b9d8e7f60.js 2026-11-29T17:55:00Z",
    "secrets: inherit",
    "token_type: bearer",
    "credentials: 'include'",
    "passed=12 failed=0 skipped=3",
    "[REDACTED:github-token] and [REDACTED:url-password]",
]
