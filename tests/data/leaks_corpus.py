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


# (kind, prefix, body length, alphabet, template): a prefixed token in a line where its only
# clue is its shape (an error, a log, a command), not a label.
_PREFIXED = [
    ("aws-access-key", "AKIA", 16, UP, "An error occurred (InvalidClientTokenId) for {s} in us-east-1"),
    ("aws-access-key", "ASIA", 16, UP, "assumed role session key {s} expires soon"),
    ("github-token", "ghp_", 36, B62, "fatal: Authentication failed for {s}"),
    ("github-token", "gho_", 36, B62, "gh: token {s} lacks scope read:org"),
    ("github-token", "ghs_", 36, B62, "remote: Invalid username or token {s}."),
    ("github-token", "ghu_", 36, B62, "app user token {s} revoked"),
    ("github-token", "ghr_", 36, B62, "refresh with {s} failed"),
    ("github-token", "github_pat_", 82, B62 + "_", "using {s} from the keychain"),
    ("gitlab-token", "glpat-", 20, URL, "401 Unauthorized for token {s}"),
    ("gitlab-token", "gldt-", 20, URL, "deploy token {s} expired"),
    ("gitlab-token", "glrt-", 20, URL, "runner registered with {s}"),
    ("gitlab-token", "glptt-", 40, HEX, "trigger pipeline {s}"),
    ("gitlab-token", "GR1348941", 20, URL, "gitlab-runner register --registration-token {s}"),
    ("gitlab-token", "glft-", 20, URL, "feed {s} denied"),
    ("gitlab-token", "gloas-", 64, URL, "oauth app secret {s}"),
    ("slack-token", "xoxb-", 50, string.digits + "-" + B62, "slack: invalid_auth for {s}"),
    ("slack-token", "xoxp-", 60, string.digits + "-" + HEX, "posting as {s}"),
    ("slack-token", "xapp-1-", 60, UP + "-", "socket mode with {s}"),
    ("anthropic-key", "sk-ant-api03-", 93, URL, "anthropic.AuthenticationError: invalid x-api-key {s}"),
    ("anthropic-key", "sk-ant-admin01-", 93, URL, "admin call with {s} rejected"),
    ("openai-key", "sk-proj-", 120, URL, "Incorrect API key provided: {s}."),
    ("openai-key", "sk-svcacct-", 120, URL, "service account {s} disabled"),
    ("openai-key", "sk-", 48, B62, "openai.error: key {s} quota exceeded"),
    ("openrouter-key", "sk-or-v1-", 64, HEX, "openrouter 401 for {s}"),
    ("google-api-key", "AIza", 35, URL, "API key not valid: {s}"),
    ("google-oauth-token", "ya29.", 150, URL, "token {s} expired"),
    ("google-oauth-secret", "GOCSPX-", 28, URL, "client secret {s} from console"),
    ("stripe-key", "sk_live_", 99, B62, "No such customer; request made with {s}"),
    ("stripe-key", "rk_live_", 99, B62, "restricted key {s} lacks permission"),
    ("stripe-key", "sk_test_", 99, B62, "test mode key {s}"),
    ("stripe-key", "whsec_", 32, B62, "webhook signing secret {s}"),
    ("npm-token", "npm_", 36, B62, "npm ERR! 403 for token {s}"),
    ("pypi-token", "pypi-AgEIcHlwaS5vcmc", 150, URL, "HTTPError: 403 Forbidden with {s}"),
    ("huggingface-token", "hf_", 34, string.ascii_letters, "huggingface_hub: invalid token {s}"),
    ("huggingface-token", "api_org_", 34, string.ascii_letters, "org token {s}"),
    ("digitalocean-token", "dop_v1_", 64, HEX, "doctl: unable to authenticate {s}"),
    ("digitalocean-token", "doo_v1_", 64, HEX, "oauth {s}"),
    ("shopify-token", "shpat_", 32, HEX, "Shopify 401 with {s}"),
    ("shopify-token", "shpss_", 32, HEX, "shared secret {s}"),
    ("doppler-token", "dp.pt.", 43, B62, "doppler: token {s} invalid"),
    ("doppler-token", "dp.st.", 43, B62, "service token {s}"),
    ("vault-token", "hvs.", 90, URL, "vault: permission denied for {s}"),
    ("vault-token", "hvb.", 140, URL, "batch token {s}"),
    ("age-secret-key", "AGE-SECRET-KEY-1", 58, UP, "age: key {s} loaded"),
    ("1password-token", "ops_eyJ", 260, B62, "op: service account {s}"),
    ("adobe-client-secret", "p8e-", 32, B62, "adobe io secret {s}"),
    ("alibaba-access-key", "LTAI", 20, B62, "aliyun: InvalidAccessKeyId {s}"),
    ("atlassian-token", "ATATT3", 186, URL, "jira: 401 for {s}"),
    ("bitbucket-token", "ATBB", 32, B62, "bitbucket app password {s}"),
    ("artifactory-token", "AKCp", 69, B62, "artifactory api key {s}"),
    ("clojars-token", "CLOJARS_", 60, LOW, "deploy with {s}"),
    ("cloudflare-ca-key", "v1.0-", 171, HEX + "-", "origin ca key {s}"),
    ("databricks-token", "dapi", 32, HEX, "databricks: invalid token {s}"),
    ("dynatrace-token", "dt0c01.", 89, UP + ".", "dynatrace token {s}"),
    ("easypost-token", "EZAK", 54, B62, "easypost: {s} unauthorized"),
    ("facebook-token", "EAAC", 120, B62, "graph api: token {s} expired"),
    ("square-token", "sq0atp-", 22, URL, "square 401 for {s}"),
    ("square-token", "EAAA", 60, URL, "square prod token {s}"),
    ("flutterwave-key", "FLWSECK_TEST-", 32, HEX, "flutterwave key {s}-X"),
    ("flyio-token", "fo1_", 43, URL, "flyctl: token {s}"),
    ("frameio-token", "fio-u-", 64, URL, "frame.io {s}"),
    ("grafana-token", "glc_", 80, B64, "grafana cloud {s}"),
    ("grafana-token", "glsa_", 32, B62, "grafana sa token {s}_0a1b2c3d"),
    ("heroku-token", "HRKU-AA", 58, URL, "heroku: {s} invalid"),
    ("intra42-secret", "s-s4t2ud-", 64, HEX, "42 api secret {s}"),
    ("linear-key", "lin_api_", 40, B62, "linear: {s} unauthorized"),
    ("new-relic-key", "NRAK-", 27, UP, "newrelic user key {s}"),
    ("openshift-token", "sha256~", 43, URL, "oc login --token={s}"),
    ("planetscale-token", "pscale_tkn_", 43, URL, "pscale: {s}"),
    ("planetscale-token", "pscale_pw_", 43, URL, "mysql -h aws.connect.psdb.cloud -u app -p{s}"),
    ("postman-key", "PMAK-", 59, HEX + "-", "postman api key {s}"),
    ("prefect-token", "pnu_", 36, B62, "prefect cloud login -k {s}"),
    ("readme-token", "rdme_", 70, LOW, "readme key {s}"),
    ("rubygems-token", "rubygems_", 48, HEX, "gem push with {s}"),
    ("scalingo-token", "tk-us-", 48, URL, "scalingo {s}"),
    ("sendinblue-key", "xkeysib-", 81, HEX + "-", "brevo key {s}"),
    ("sentry-token", "sntryu_", 64, HEX, "sentry-cli: {s} invalid"),
    ("settlemint-token", "sm_pat_", 16, B62, "settlemint {s}"),
    ("shippo-token", "shippo_live_", 40, HEX, "shippo {s}"),
    ("typeform-token", "tfp_", 59, URL, "typeform {s}"),
    ("sourcegraph-token", "sgp_", 40, HEX, "src login with {s}"),
    ("yandex-key", "AQVN", 38, URL, "yandex api key {s}"),
    ("duffel-token", "duffel_live_", 43, URL, "duffel {s}"),
    ("mapbox-token", "sk.eyJ", 90, URL + ".", "mapbox secret {s}"),
    ("contentful-token", "CFPAT-", 43, URL, "contentful cma token {s}"),
    ("xai-key", "xai-", 80, B62, "xai: incorrect API key {s}"),
    ("groq-key", "gsk_", 52, B62, "groq.AuthenticationError {s}"),
    ("perplexity-key", "pplx-", 48, B62, "perplexity 401 {s}"),
    ("tavily-key", "tvly-dev-", 32, B62, "tavily key {s}"),
    ("nvidia-key", "nvapi-", 64, URL, "nvidia nim {s}"),
    ("pinecone-key", "pcsk_", 70, URL, "pinecone: {s} rejected"),
    ("langsmith-key", "lsv2_pt_", 43, HEX + "_", "langsmith {s}"),
    ("supabase-key", "sbp_", 40, HEX, "supabase login --token {s}"),
    ("notion-token", "ntn_", 46, B62, "notion: API token is invalid {s}"),
    ("figma-token", "figd_", 40, URL, "figma 403 {s}"),
    ("docker-token", "dckr_pat_", 27, URL, "docker login -u me --password-stdin <<< {s}"),
    ("circleci-token", "CCIPAT_", 48, B62 + "_", "circleci token {s}"),
    ("buildkite-token", "bkua_", 40, HEX, "buildkite agent {s}"),
    ("deno-token", "ddp_", 36, B62, "deployctl --token {s}"),
    ("tailscale-key", "tskey-auth-", 40, URL, "tailscale up --authkey {s}"),
    ("render-key", "rnd_", 32, B62, "render api {s}"),
    ("netlify-token", "nfp_", 40, B62, "netlify deploy auth {s}"),
    ("neon-key", "napi_", 64, LOW, "neonctl {s}"),
    ("replicate-token", "r8_", 37, B62, "replicate: {s} invalid"),
    ("sendgrid-key", "SG.", 66, URL[:-1] + ".", "sendgrid 401 {s}"),
    ("mailgun-key", "key-", 32, B62, "mailgun: {s} forbidden"),
    ("twilio-key", "SK", 32, HEX, "twilio: api key {s} disabled"),
    ("plaid-token", "access-production-", 36, HEX + "-", "plaid item {s}"),
]

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
