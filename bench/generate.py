"""Synthetic `learn` homes for the benchmarks: realistic, large, deterministic from a seed.

    python bench/generate.py OUT_DIR --learnings 100000 --projects 1000 [--seed 7]

writes `OUT_DIR/home` (the store, in the on-disk format of learn_cli.store) and `OUT_DIR/work`
(one folder per project, each a git checkout as far as `learn` can tell: `.git/config` with an
origin URL, plus the stack files of its kind), then builds the SQLite index once, in process,
so that every measured `learn` process finds it fresh.

What the home holds, and why:
- learnings spread over the projects by a Zipf-like law (one busy project, a long tail), of
  every type and category, with error texts 60-400 characters long;
- dedup keys shared across projects for a fraction of the errors (a pool of popular failures:
  `No module named 'requests'`, `pytest: command not found`, ...) so that promotion, lateral
  lookups and the graph have real work; every other key is unique;
- frequencies 1-12, impacts, last_used spread over 120 days (so some learnings are stale and
  carry `low_since`), ~15 % archived, ~5 % global, a few near-duplicates and conflicts;
- the topic `docker` in ~2 % of the records (the recall benchmark's query);
- session buffers (some older than the 14-day limit) and a global store.

Records are written straight to the JSONL files with orjson; going through Store.put would
take minutes at 100,000 learnings and measure nothing we care about.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from learn_cli.store.paths import DEFAULT_CONFIG, Layout
from learn_cli.store.project import normalize_remote

DAY = 86400
DOCKER_SHARE = 0.02
GLOBAL_SHARE = 0.05
ARCHIVED_SHARE = 0.15
SHARED_KEY_SHARE = 0.35  # errors whose key comes from the pool of popular failures
ZIPF_S = 0.6  # project sizes: share of project i ∝ 1 / (i + 1) ** ZIPF_S
SPREAD_DAYS = 120  # last_used spread
SESSION_EVENTS = 40

# The failure the capture benchmark sends: the home must already know it (lateral + global).
BENCH_FAILURE = ("pytest -q tests/test_api.py", "bash: pytest: command not found", 127)

# --------------------------------------------------------------------------------------------
# Vocabulary
# --------------------------------------------------------------------------------------------
MODULES = ["requests", "numpy", "pandas", "jose", "yaml", "dotenv", "flask", "django", "fastapi",
           "pydantic", "sqlalchemy", "boto3", "torch", "scipy", "httpx", "redis", "psycopg2",
           "jwt", "lxml", "PIL"]
NODE_MODULES = ["express", "react", "lodash", "axios", "typescript", "vite", "jest", "zod",
                "next", "prisma", "dotenv", "webpack"]
PROGRAMS = ["pytest", "ruff", "black", "mypy", "poetry", "uv", "pnpm", "yarn", "tsc", "eslint",
            "jq", "make", "cargo", "go", "terraform", "kubectl", "helm", "node", "npx", "bun"]
HOSTS = ["api.github.com", "registry.npmjs.org", "pypi.org", "localhost", "db.internal",
         "auth.example.com", "s3.amazonaws.com", "redis.local"]
PORTS = [3000, 5432, 6379, 8000, 8080, 5000, 9200, 27017]
ENV_VARS = ["DATABASE_URL", "API_KEY", "SECRET_KEY", "AWS_REGION", "NODE_ENV", "REDIS_URL",
            "OPENAI_BASE_URL", "SENTRY_DSN"]
FILES = ["src/app.py", "src/main.ts", "app/models.py", "lib/utils.js", "cmd/server/main.go",
         "tests/test_api.py", "config/settings.py", "src/index.tsx", "scripts/deploy.sh",
         "pkg/store/store.go"]
FUNCS = ["handle_request", "load_config", "main", "run", "connect", "parse_args", "build",
         "test_login", "fetch_user", "migrate"]
PROJECT_WORDS = ["web", "api", "ml", "data", "auth", "billing", "search", "mobile", "infra",
                 "cli", "dash", "etl", "chat", "media", "shop", "docs", "sync", "edge", "core",
                 "admin", "notify", "report", "geo", "feed"]
PROJECT_KINDS = ["app", "service", "worker", "lib", "site", "bot", "pipeline", "tool", "ui",
                 "gateway"]
STACKS = {
    "python": {"pyproject.toml": "[project]\nname = \"{name}\"\nrequires-python = \">=3.11\"\n"},
    "node": {"package.json": "{{\"name\": \"{name}\", \"version\": \"1.0.0\"}}\n",
             "pnpm-lock.yaml": "lockfileVersion: '9.0'\n"},
    "go": {"go.mod": "module example.com/{name}\n\ngo 1.22\n"},
    "rust": {"Cargo.toml": "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\n"},
}
STACK_WEIGHTS = {"python": 45, "node": 35, "go": 12, "rust": 8}

# Error templates: (category, tool command, error first line, extra-line kind, fix, fix command,
# tags, exit code, the variable that decides the key). `{x}` is that key variable.
ERRORS = [
    ("dependency", "python {file}", "ModuleNotFoundError: No module named '{x}'", "py",
     "Install the missing module into the project's environment: pip install {x}",
     "pip install {x}", ["python"], 1, MODULES),
    ("dependency", "{x} --version", "bash: {x}: command not found", None,
     "Install {x} in the virtualenv or run it through the project's runner (uv run {x})",
     "uv run {x}", ["shell"], 127, PROGRAMS),
    ("dependency", "node {file}", "Error: Cannot find module '{x}'", "node",
     "Run pnpm install; {x} was missing from node_modules after switching branches",
     "pnpm install", ["node"], 1, NODE_MODULES),
    ("dependency", "npm install", "npm ERR! ERESOLVE unable to resolve dependency tree: peer {x}@^18",
     "npm", "Pin the peer dependency or install with --legacy-peer-deps for {x}",
     "npm install --legacy-peer-deps", ["node", "npm"], 1, NODE_MODULES),
    ("dependency", "go build ./...", "go: module {x} not found: missing go.sum entry", None,
     "Run go mod tidy to refresh go.sum before building", "go mod tidy", ["go"], 1,
     ["golang.org/x/net", "github.com/spf13/cobra", "github.com/stretchr/testify"]),
    ("permission", "{x} {file}", "bash: {file}: Permission denied", None,
     "Make the script executable (chmod +x) or run it through its interpreter",
     "chmod +x {file}", ["shell"], 126, ["./run", "./deploy", "bash"]),
    ("permission", "npm install -g {x}", "npm ERR! Error: EACCES: permission denied, mkdir '/usr/lib/node_modules/{x}'",
     "npm", "Use a user prefix for global installs (npm config set prefix ~/.npm-global)",
     "npm config set prefix ~/.npm-global", ["node", "npm"], 243, NODE_MODULES),
    ("permission", "cat {path}", "cat: {path}: Permission denied", None,
     "Read it with sudo or fix the owner of the file", "sudo chown $USER {path}", ["shell"], 1,
     ["/etc/shadow", "/var/log/syslog", "/root/.ssh/config"]),
    ("network", "curl https://{x}/v1/health", "curl: (6) Could not resolve host: {x}", None,
     "Check the VPN and DNS; the host only resolves inside the corporate network",
     "nslookup {x}", ["network"], 6, HOSTS),
    ("network", "psql -h localhost -p {port}", "psql: error: connection to server at \"localhost\" port {port} failed: "
     "Connection refused", None,
     "Start the database container first (make db-up) and wait for it to accept connections",
     "make db-up", ["database"], 2, ["5432", "5433", "6543"]),
    ("network", "pip install {x}", "ERROR: Could not find a version that satisfies the requirement {x} "
     "(ReadTimeoutError: HTTPSConnectionPool(host='pypi.org', port=443): Read timed out.)",
     "py", "Retry with a longer timeout (pip --timeout 60) or use the local mirror",
     "pip install --timeout 60 {x}", ["python", "network"], 1, MODULES),
    ("network", "git push origin main", "fatal: unable to access 'https://github.com/org/{x}.git/': "
     "The requested URL returned error: 503",
     None, "GitHub was degraded; retry later or push over SSH", "git push origin main", ["git"], 128,
     ["web", "api", "infra"]),
    ("config", "python manage.py runserver", "KeyError: '{x}'", "py",
     "Copy .env.example to .env and set {x}; settings read it at import time",
     "cp .env.example .env", ["python", "config"], 1, ENV_VARS),
    ("config", "{x} --colour", "error: unknown option '--colour'", None,
     "The flag is spelled --color", "{x} --color", ["shell"], 2, PROGRAMS),
    ("config", "npm run build", "Error: Environment variable {x} is not set", "node",
     "Export {x} before building, or add it to .env.local", "export {x}=...", ["node", "config"], 1,
     ENV_VARS),
    ("config", "terraform plan", "Error: No valid credential sources found for AWS Provider ({x})",
     None, "Log in with aws sso login --profile dev before terraform plan", "aws sso login --profile dev",
     ["terraform", "aws"], 1, ["dev", "staging", "prod"]),
    ("syntax", "python {file}", "SyntaxError: invalid syntax ({x})", "py",
     "A stray merge marker was left in the file; remove the conflict markers",
     "git diff --check", ["python"], 1, ["<<<<<<< HEAD", "print 'x'", "f\"{a!}\""]),
    ("syntax", "npx tsc --noEmit", "error TS1005: '{x}' expected.", "node",
     "Close the JSX expression; the formatter choked on the unbalanced brace", "npx tsc --noEmit",
     ["node", "typescript"], 2, [";", ")", "}", ","]),
    ("syntax", "jq . data.json", "jq: error (at data.json:{line}): Cannot index {x} with \"name\"", None,
     "The payload is an array: use .[].name", "jq '.[].name' data.json", ["shell", "json"], 5,
     ["array", "string", "null"]),
    ("logic", "pytest -q", "FAILED tests/test_{x}.py::test_{x} - AssertionError: assert 200 == 404",
     "pytest", "The route moved under /api/v2; update the test client base URL",
     "pytest -q", ["python", "testing"], 1, ["api", "auth", "billing", "users", "search"]),
    ("logic", "npm test", "expect(received).toEqual(expected) // {x}", "jest",
     "Snapshot was stale after the date formatting change; update with -u after checking",
     "npm test -- -u", ["node", "testing"], 1, ["deep equality", "snapshot", "toHaveBeenCalled"]),
    ("logic", "go test ./...", "--- FAIL: Test{x} (0.00s)", None,
     "The map iteration order is random; sort keys before comparing", "go test ./...",
     ["go", "testing"], 1, ["Parse", "Handler", "Store", "Config"]),
    ("runtime", "python {file}", "TypeError: 'NoneType' object is not subscriptable ({x})", "py",
     "The API returns null for deleted users; guard before indexing", "python {file}",
     ["python"], 1, FUNCS),
    ("runtime", "node {file}", "TypeError: Cannot read properties of undefined (reading '{x}')",
     "node", "Await the config loader before reading {x}", "node {file}", ["node"], 1,
     ["map", "length", "id", "data", "then"]),
    ("runtime", "cargo run", "thread 'main' panicked at src/main.rs:{line}:5: {x}", None,
     "Handle the Err case instead of unwrap() when the file is missing", "cargo run",
     ["rust"], 101, ["called `Option::unwrap()` on a `None` value", "index out of bounds"]),
    ("runtime", "python -m {x}", "MemoryError: Unable to allocate 12.0 GiB for an array", "py",
     "Stream the file in chunks instead of loading it whole", "python -m {x} --chunked",
     ["python", "data"], 1, ["etl.load", "train", "export"]),
]

DOCKER_ERRORS = [
    ("network", "docker compose up -d", "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. "
     "Is the docker daemon running?",
     None, "Start Docker Desktop (or sudo systemctl start docker) before docker compose up",
     "sudo systemctl start docker", ["docker"], 1, ["daemon"]),
    ("permission", "docker ps", "permission denied while trying to connect to the Docker daemon socket at unix:///var/run/docker.sock",
     None, "Add the user to the docker group and log in again", "sudo usermod -aG docker $USER",
     ["docker"], 1, ["socket"]),
    ("config", "docker build -t {x} .", "ERROR: failed to solve: failed to read dockerfile: "
     "open Dockerfile: no such file or directory",
     None, "Pass -f docker/Dockerfile; the Dockerfile lives in the docker/ folder",
     "docker build -f docker/Dockerfile -t {x} .", ["docker"], 1, ["web", "api", "worker"]),
    ("network", "docker pull {x}", "Error response from daemon: pull access denied for {x}, "
     "repository does not exist or may require 'docker login'",
     None, "Log in to the private registry first (docker login ghcr.io)", "docker login ghcr.io",
     ["docker"], 1, ["org/api", "org/base", "org/worker"]),
    ("config", "docker compose up", "Error response from daemon: driver failed programming external connectivity: "
     "Bind for 0.0.0.0:{x} failed: port is already allocated",
     None, "Another container holds the port; docker compose down in the other project",
     "docker compose down", ["docker"], 1, ["5432", "8080", "6379"]),
]

PATTERNS = [
    ("workflow", "Run the linter before committing: pre-commit catches what CI would reject later"),
    ("workflow", "Rebase on main before opening a pull request; the merge queue rejects stale branches"),
    ("coding", "Wrap external API calls in a timeout and retry with backoff; the upstream flakes under load"),
    ("coding", "Keep database migrations reversible; write the down step in the same change"),
    ("coding", "Validate request bodies with a schema at the edge, never deep inside handlers"),
    ("deployment", "Deploy to staging first and watch error rates for ten minutes before production"),
    ("deployment", "Tag releases from main only; hotfix branches are merged back the same day"),
    ("coding", "Prefer pathlib over os.path in new Python code; it reads better and handles Windows"),
]
DOCKER_PATTERNS = [
    ("deployment", "Build docker images with --pull and a pinned base tag so builds are reproducible"),
    ("workflow", "Use docker compose profiles to start only the services a test needs"),
]
PREFERENCES = [
    ("tooling", "Use pnpm, not npm, for JavaScript dependencies in this repository"),
    ("tooling", "Use uv for Python environments; never pip install into the system interpreter"),
    ("tooling", "Use Vitest for unit tests"),
    ("tooling", "Use Jest for unit tests"),
    ("style", "Prefer small functions with names that explain themselves over comments"),
    ("style", "Never commit .env files; keep secrets in the vault"),
    ("style", "Always run the formatter (ruff format) before committing Python code"),
    ("tooling", "Use ripgrep instead of grep -r for searching the code base"),
]
WORKFLOWS = [
    ("testing", "Run pytest -x -q on the changed package first, the whole suite only before pushing"),
    ("testing", "Seed the test database with make fixtures before running integration tests"),
    ("ci-cd", "Re-run flaky CI jobs once; if they fail twice, open an issue with the job log"),
    ("ci-cd", "Bump the cache key in the CI workflow when the lock file format changes"),
]
DOCKER_WORKFLOWS = [("ci-cd", "Run the integration tests inside docker compose run --rm tests to match CI")]

CONTEXTS = ["running the test suite", "starting the dev server", "installing dependencies",
            "building the release", "running a migration", "deploying to staging",
            "debugging a failing request", "setting up a fresh checkout", "running a script",
            "updating packages"]

SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]

TYPE_WEIGHTS = [("error", 70), ("pattern", 12), ("preference", 8), ("workflow", 10)]


# --------------------------------------------------------------------------------------------
# Keys: the project's own key functions when they exist, else a stand-in of the same shape
# --------------------------------------------------------------------------------------------
def _key_functions():
    try:
        from learn_cli.text.keys import error_key, text_key
    except ImportError:
        def error_key(text, command=None, tool=None):
            return "err:" + hashlib.sha256(f"{text}".encode()).hexdigest()[:16]

        def text_key(text):
            return "txt:" + hashlib.sha256(" ".join(text.lower().split()).encode()).hexdigest()[:16]
    return error_key, text_key


# --------------------------------------------------------------------------------------------
# The model of a home
# --------------------------------------------------------------------------------------------
@dataclass
class ProjectInfo:
    id: str
    name: str
    root: str
    remote: str
    stack: str
    created: str
    keys: set = field(default_factory=set)


@dataclass
class Summary:
    home: str
    work: str
    learnings: int = 0
    projects: int = 0
    live: int = 0
    archived: int = 0
    global_records: int = 0
    docker_records: int = 0
    shared_keys: int = 0
    sessions: int = 0
    bench_project: dict = field(default_factory=dict)
    sessions_of_bench_project: list = field(default_factory=list)
    now: float = 0.0  # the generator's clock: records are dated relative to it
    seconds_write: float = 0.0
    seconds_index: float = 0.0
    maintenance: dict = field(default_factory=dict)  # yesterday's promote and prune, when run
    bytes_jsonl: int = 0
    bytes_index: int = 0

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


def stamp(ts: float) -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(ts))


def today_anchor() -> float:
    """Midnight UTC today: the home is the same all day for a given seed, and fresh."""
    now = time.time()
    return now - now % DAY


class Generator:
    def __init__(self, out: Path, learnings: int, projects: int, seed: int = 7, now: float | None = None):
        self.out = Path(out)
        self.home = self.out / "home"
        self.work = self.out / "work"
        self.n = learnings
        self.n_projects = max(1, projects)
        self.rng = random.Random(seed)
        self.now = today_anchor() if now is None else now
        self.layout = Layout(self.home)
        self.error_key, self.text_key = _key_functions()
        self._key_cache: dict = {}
        self._id_seq = self.rng.randrange(1 << 24)
        self._word_seq = 400  # three syllables at least
        self.summary = Summary(home=str(self.home), work=str(self.work), now=self.now)

    # -- projects ------------------------------------------------------------------------
    def make_projects(self) -> list[ProjectInfo]:
        rng = self.rng
        names: list[str] = []
        seen: set = set()
        for i in range(self.n_projects):
            base = f"{rng.choice(PROJECT_WORDS)}-{rng.choice(PROJECT_KINDS)}"
            # Most names are unique; ~2 % share a basename with another project (forks, clones
            # of different remotes), which `learn` must tell apart by id.
            name = base if base not in seen or rng.random() < 0.02 else f"{base}-{i}"
            seen.add(name)
            names.append(name)
        stacks = list(STACK_WEIGHTS)
        weights = list(STACK_WEIGHTS.values())
        out = []
        for i, name in enumerate(names):
            remote = f"git@github.com:org{i % 37}/{name}-{i}.git"
            pid = hashlib.sha256(normalize_remote(remote).encode()).hexdigest()[:12]
            root = str(self.work / f"{i:04d}" / name)
            created = iso(self.now - rng.uniform(130, 700) * DAY)
            out.append(ProjectInfo(pid, name, root, remote, rng.choices(stacks, weights)[0], created))
        return out

    def write_work_folders(self, projects: list[ProjectInfo]) -> None:
        for p in projects:
            root = Path(p.root)
            (root / ".git").mkdir(parents=True, exist_ok=True)
            (root / ".git" / "config").write_text(
                f'[core]\n\tbare = false\n[remote "origin"]\n\turl = {p.remote}\n')
            for rel, text in STACKS[p.stack].items():
                (root / rel).write_text(text.format(name=p.name))
            if self.rng.random() < 0.3:
                (root / "Dockerfile").write_text("FROM python:3.12-slim\n")

    # -- records -------------------------------------------------------------------------
    def unique_word(self) -> str:
        """A fresh made-up word, letters only: key normalisers drop digits and hex runs."""
        self._word_seq += 1
        n, syllables = self._word_seq, []
        while n:
            n, r = divmod(n, len(SYLLABLES))
            syllables.append(SYLLABLES[r])
        return "".join(syllables)

    def new_id(self, ts: float) -> str:
        self._id_seq = (self._id_seq + 0x9E3779) % (1 << 24)
        return f"learn-{stamp(ts)}-{self._id_seq:06x}"

    def times(self, archived: bool) -> dict:
        rng = self.rng
        age = rng.uniform(60, SPREAD_DAYS + 60) if archived else rng.triangular(0, SPREAD_DAYS, 5)
        last = self.now - age * DAY - rng.uniform(0, DAY)
        created = last - rng.uniform(0, 90) * DAY
        return {"created": iso(created), "last_used": iso(last), "_age": age, "_created": created}

    def fill_error(self, template, shared: bool, project: ProjectInfo) -> dict:
        rng = self.rng
        category, cmd_t, err_t, extra, fix_t, fix_cmd_t, tags, code, choices = template
        if shared:
            x = rng.choice(choices)
        else:  # a failure nobody else has seen: a private module, host or program
            x = f"{rng.choice(choices)}_{self.unique_word()}"
        values = {"x": x, "file": rng.choice(FILES), "port": rng.choice(PORTS),
                  "line": rng.randint(1, 400), "path": rng.choice(["/etc/app.conf", "/var/lib/app/state"])}
        command = cmd_t.format(**values)
        first = err_t.format(**values)
        canonical = err_t.format(**dict(values, file="app.py", line=1, path="/x"))
        key = self._error_key(canonical, command)
        text = self._with_extra_lines(first, extra, values, project)
        return {"category": category, "error": text, "command": command, "fix": fix_t.format(**values),
                "fix_command": fix_cmd_t.format(**values), "tags": list(tags), "exit_code": code,
                "key": key, "tool": "Bash"}

    def _error_key(self, canonical: str, command: str) -> str:
        cached = self._key_cache.get(canonical)
        if cached is None:
            cached = self._key_cache[canonical] = self.error_key(canonical, command, "Bash")
        return cached

    def _with_extra_lines(self, first: str, extra, values: dict, project: ProjectInfo) -> str:
        """Real error texts: the message plus a few lines of traceback or tool noise."""
        rng = self.rng
        lines: list[str] = []
        target = rng.randint(60, 400)
        header = "Traceback (most recent call last):"
        length = len(first) + (len(header) + 1 if extra == "py" else 0)
        while extra and length < target:
            if extra == "py":
                line = (f'  File "/home/dev/{project.name}/{values["file"]}", line {rng.randint(1, 900)}, '
                        f"in {rng.choice(FUNCS)}")
            elif extra == "node":
                line = (f"    at Object.<anonymous> (/home/dev/{project.name}/{values['file']}:"
                        f"{rng.randint(1, 300)}:{rng.randint(1, 40)})")
            elif extra == "npm":
                line = ("npm ERR! A complete log of this run can be found in: "
                        f"/home/dev/.npm/_logs/{stamp(self.now)}-debug-0.log")
            elif extra == "pytest":
                line = f"E       assert {rng.randint(100, 599)} == {rng.randint(100, 599)}"
            else:
                line = (f"    at Test.run (node_modules/jest-circus/build/run.js:{rng.randint(1, 300)}:"
                        f"{rng.randint(1, 30)})")
            if length + len(line) + 1 > 400:
                break
            lines.append(line)
            length += len(line) + 1
        if extra == "py" and lines:
            return "\n".join([header, *lines, first])
        return "\n".join([first, *lines])

    def fill_text(self, rtype: str, docker: bool) -> dict:
        rng = self.rng
        pool = {"pattern": DOCKER_PATTERNS if docker else PATTERNS,
                "preference": PREFERENCES, "workflow": DOCKER_WORKFLOWS if docker else WORKFLOWS}[rtype]
        category, sentence = rng.choice(pool)
        # Small wording variations: some near-duplicates for `prune`, most distinct.
        scope = rng.choice([f" in {rng.choice(FILES)}", f" for {rng.choice(MODULES + NODE_MODULES)}",
                            f" around {rng.choice(FUNCS)}()", ""])
        suffix = scope + rng.choice(["", " (learned the hard way)", f" — see ticket #{rng.randint(100, 9999)}",
                                     f"; noted while {rng.choice(CONTEXTS)}"])
        text = sentence + suffix
        tags = ["docker"] if docker else [rng.choice(["python", "node", "git", "ci", "style"])]
        return {"category": category, "context": text, "fix": text, "key": self.text_key(text), "tags": tags}

    def make_record(self, rtype: str, project: ProjectInfo | None, projects: list[str],
                    docker: bool, shared: bool, archived: bool, status: str) -> dict:
        rng = self.rng
        t = self.times(archived)
        when = rng.uniform(0, 1)
        if rtype == "error":
            template = rng.choice(DOCKER_ERRORS) if docker else rng.choice(ERRORS)
            body = self.fill_error(template, shared or docker, project or self._any_project)
        else:
            body = self.fill_text(rtype, docker)
        auto = rtype == "error" and when < 0.65
        frequency = min(12, 1 + int(rng.expovariate(0.45)))
        rec = {
            "id": self.new_id(t["_created"]),
            "type": rtype,
            "category": body["category"],
            "context": body.get("context") or f"{rng.choice(CONTEXTS)}: {body.get('command', '')}".strip(),
            "error": body.get("error", ""),
            "fix": body["fix"],
            "project": project.name if project else "",
            "projects": projects,
            "frequency": frequency,
            "impact": round(rng.choice([0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]) * rng.uniform(0.85, 1.0), 2),
            "created": t["created"],
            "last_used": t["last_used"],
            "status": status,
            "source": "auto" if auto else rng.choices(["manual", "import:team.json", "ingest"], [85, 8, 7])[0],
            "key": body["key"],
            "schema": 1,
            "tags": body["tags"],
            "updated": t["last_used"],
        }
        if rtype == "error":
            rec.update(tool="Bash", command=body["command"], fix_command=body["fix_command"],
                       exit_code=body["exit_code"], env={"os": "linux", "shell": "bash"})
        if auto:
            rec["evidence"] = [{"session": f"sess-{rng.getrandbits(48):012x}",
                                "event": f"toolu_{rng.getrandbits(64):016x}", "at": t["last_used"]}
                               for _ in range(rng.randint(1, 3))]
            if status == "active" and rng.random() < 0.12:
                rec["status"] = "pending"
                rec["evidence"] = rec["evidence"][:1]
        if rng.random() < 0.2:
            rec["helped"] = rng.randint(0, 5)
            rec["not_helped"] = rng.randint(0, 2)
        # Stale learnings carry the archive clock; archived ones are long past it.
        if archived or t["_age"] > 40:
            rec["low_since"] = iso(self.now - rng.uniform(10, max(11, t["_age"] - 20)) * DAY)
        return rec

    # -- the home --------------------------------------------------------------------------
    def project_counts(self, total: int) -> list[int]:
        weights = [1 / (i + 1) ** ZIPF_S for i in range(self.n_projects)]
        scale = total / sum(weights)
        counts = [max(1, int(w * scale)) for w in weights]
        counts[0] += total - sum(counts)  # the rounding remainder goes to the busiest project
        return counts

    def build(self) -> Summary:
        started = time.perf_counter()
        if self.out.exists():
            shutil.rmtree(self.out)
        self.layout.ensure()
        rng = self.rng
        projects = self.make_projects()
        self._any_project = projects[0]
        self.write_work_folders(projects)
        n_global = max(1, round(self.n * GLOBAL_SHARE))
        counts = self.project_counts(self.n - n_global)
        types = [t for t, _ in TYPE_WEIGHTS]
        type_w = [w for _, w in TYPE_WEIGHTS]
        key_projects: dict[str, set] = {}
        key_record: dict[str, dict] = {}
        docker = archived_n = 0
        jsonl_bytes = 0
        for p, count in zip(projects, counts, strict=True):
            live, archive = [], []
            attempts = 0
            while len(live) + len(archive) < count and attempts < count * 5:
                attempts += 1
                rtype = rng.choices(types, type_w)[0]
                is_docker = rng.random() < DOCKER_SHARE
                is_archived = rng.random() < ARCHIVED_SHARE
                shared = rtype == "error" and rng.random() < SHARED_KEY_SHARE
                rec = self.make_record(rtype, p, [p.id], is_docker, shared, is_archived,
                                       "archived" if is_archived else "active")
                if rec["key"] in p.keys:  # one learning per key per project: the store merges
                    continue
                p.keys.add(rec["key"])
                docker += is_docker
                if is_archived:
                    archive.append(rec)
                    archived_n += 1
                else:
                    live.append(rec)
                    key_projects.setdefault(rec["key"], set()).add(p.id)
                    key_record.setdefault(rec["key"], rec)
            self._write_project(p, live, archive)
            jsonl_bytes += self._size(self.layout.learnings(p.id)) + self._size(self.layout.archive(p.id))
        globals_, shared_keys = self._globals(n_global, key_projects, key_record, projects)
        docker += sum(1 for g in globals_ if "docker" in g.get("tags", []))
        self._write_globals(globals_)
        jsonl_bytes += sum(self._size(f) for f in (self.layout.global_errors, self.layout.global_patterns,
                                                    self.layout.global_archive))
        self._write_config_and_stats()
        sessions = self._write_sessions(projects)
        s = self.summary
        s.projects = len(projects)
        s.archived = archived_n + sum(1 for g in globals_ if g["status"] == "archived")
        s.global_records = len(globals_)
        s.learnings = sum(len(p.keys) for p in projects) + len(globals_)
        s.live = s.learnings - s.archived
        s.docker_records = docker
        s.shared_keys = shared_keys
        s.sessions = sessions
        bench = projects[0]
        s.bench_project = {"id": bench.id, "name": bench.name, "root": bench.root,
                           "learnings": len(bench.keys), "stack": bench.stack}
        s.bytes_jsonl = jsonl_bytes
        s.seconds_write = time.perf_counter() - started
        return s

    def _globals(self, n_global: int, key_projects: dict, key_record: dict, projects) -> tuple[list, int]:
        """Promoted copies of the most widespread keys, then global patterns and preferences."""
        rng = self.rng
        shared = sorted((k for k, ps in key_projects.items() if len(ps) >= 2),
                        key=lambda k: (-len(key_projects[k]), k))
        out: list[dict] = []
        # Half of the widespread keys are promoted already; the other half is `learn promote`'s work.
        for key in shared[: min(int(n_global * 0.6), len(shared) // 2)]:
            src = key_record[key]
            if src["type"] == "preference" and sum(r["type"] == "preference" for r in out) >= 100:
                continue
            rec = dict(src, id=self.new_id(self.now - rng.uniform(0, 100) * DAY), status="global",
                       projects=sorted(key_projects[key])[:1000],
                       frequency=min(12, src["frequency"] + len(key_projects[key])))
            rec.pop("low_since", None)
            out.append(rec)
        types = [t for t, _ in TYPE_WEIGHTS]
        type_w = [w for _, w in TYPE_WEIGHTS]
        seen = {r["key"] for r in out}
        attempts = 0
        while len(out) < n_global and attempts < n_global * 20:
            attempts += 1
            rtype = rng.choices(types, type_w)[0]
            # preferences.json is rewritten whole on every change, so it stays small.
            if rtype == "preference" and sum(r["type"] == "preference" for r in out) >= 200:
                continue
            owners = rng.sample(projects, min(len(projects), rng.randint(1, 4)))
            archived = rng.random() < 0.05
            rec = self.make_record(rtype, owners[0], sorted(p.id for p in owners), rng.random() < DOCKER_SHARE,
                                   False, archived, "archived" if archived else "global")
            if rec["key"] in seen and rtype != "error":
                continue
            seen.add(rec["key"])
            out.append(rec)
        # The capture benchmark's failure is a known one: make sure a global fix exists for it.
        cmd, err, code = BENCH_FAILURE
        bench_key = self.error_key(err, cmd, "Bash")
        if bench_key not in seen:
            out.pop()  # keep the total exact
            out.append(dict(self.make_record("error", projects[0], [p.id for p in projects[:3]], False, True,
                                             False, "global"),
                            key=bench_key, error=err, command=cmd, exit_code=code, category="dependency",
                            fix="Install pytest in the project's virtualenv (uv add --dev pytest) "
                                "or run it with uv run pytest",
                            fix_command="uv run pytest -q tests/test_api.py"))
        return out, len(shared)

    # -- writing ---------------------------------------------------------------------------
    def _write_project(self, p: ProjectInfo, live: list, archive: list) -> None:
        self.layout.ensure_project(p.id)
        doc = {"id": p.id, "name": p.name, "root": p.root, "remote": p.remote, "created": p.created}
        _write(self.layout.project_json(p.id), json.dumps(doc, indent=2).encode() + b"\n")
        _write(self.layout.learnings(p.id), _jsonl(live))
        _write(self.layout.archive(p.id), _jsonl(archive))

    def _write_globals(self, globals_: list) -> None:
        lay = self.layout
        files = {"errors": [], "patterns": [], "preferences": [], "archive": []}
        for rec in globals_:
            if rec["status"] == "archived":
                files["archive"].append(rec)
            elif rec["type"] == "preference":
                files["preferences"].append(rec)
            elif rec["type"] in ("pattern", "workflow"):
                files["patterns"].append(rec)
            else:
                files["errors"].append(rec)
        _write(lay.global_errors, _jsonl(files["errors"]))
        _write(lay.global_patterns, _jsonl(files["patterns"]))
        _write(lay.global_archive, _jsonl(files["archive"]))
        _write(lay.global_preferences, orjson.dumps({"schema": 1, "learnings": files["preferences"]},
                                                    option=orjson.OPT_INDENT_2) + b"\n")

    def _write_config_and_stats(self) -> None:
        _write(self.layout.config, json.dumps(DEFAULT_CONFIG, indent=2).encode() + b"\n")
        rng = self.rng
        days = {}
        for back in range(30):
            day = time.strftime("%Y-%m-%d", time.gmtime(self.now - back * DAY))
            events = rng.randint(50, 400)
            days[day] = {"events": events, "failures": events // rng.randint(5, 12),
                         "pairs": rng.randint(0, 6), "suggestions": rng.randint(0, 10),
                         "helped": rng.randint(0, 5)}
        totals: dict = {}
        for bucket in days.values():
            for name, n in bucket.items():
                totals[name] = totals.get(name, 0) + n
        _write(self.layout.stats, json.dumps({"schema": 1, "totals": totals, "days": days}).encode())

    def _write_sessions(self, projects: list[ProjectInfo]) -> int:
        """Session buffers: a few per busy project, a quarter of them past the 14-day limit."""
        from bench import sessions as session_format

        rng = self.rng
        count = min(400, max(5, self.n // 250))
        bench_sessions = []
        for i in range(count):
            p = projects[0] if i < 5 else rng.choice(projects[: max(1, len(projects) // 4)])
            sid = f"{rng.getrandbits(128):032x}"
            sid = f"{sid[:8]}-{sid[8:12]}-{sid[12:16]}-{sid[16:20]}-{sid[20:]}"
            age = rng.uniform(15, 40) if i % 4 == 3 else rng.uniform(0, 10)
            start = self.now - age * DAY
            events = session_format.events(rng, sid, p.root, p.id, start, SESSION_EVENTS)
            path = self.layout.session(sid)
            _write(path, b"".join(orjson.dumps(e) + b"\n" for e in events))
            os.utime(path, (start + 3600, start + 3600))
            if i < 5:
                bench_sessions.append(sid)
        self.summary.sessions_of_bench_project = bench_sessions
        return count

    @staticmethod
    def _size(path: Path) -> int:
        try:
            return path.stat().st_size
        except FileNotFoundError:
            return 0

    # -- the index -------------------------------------------------------------------------
    def build_index(self) -> None:
        """Build the derived index once, the way `learn` itself would (Store.refresh)."""
        started = time.perf_counter()
        from learn_cli.store.api import Store

        store = Store(self.home, warn_stderr=False)
        try:
            store.refresh(loads=orjson.loads)
            store.projects()  # notes every project in the index
        finally:
            store.close()
        self.summary.seconds_index = time.perf_counter() - started
        self.summary.bytes_index = sum(self._size(Path(f"{self.layout.index_db}{s}")) for s in ("", "-wal"))


def _jsonl(records: list) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in records)


def _write(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)


def generate(out: Path, learnings: int, projects: int, seed: int = 7, now: float | None = None,
             index: bool = True, maintained: bool = False) -> Summary:
    gen = Generator(out, learnings, projects, seed, now)
    summary = gen.build()
    if index or maintained:
        gen.build_index()
    if maintained:
        summary.maintenance = maintain(Path(summary.home), summary.now - DAY)
    return summary


def maintain(home: Path, when: float) -> dict:
    """The housekeeping a heavy user's home has had: `learn promote` and `learn prune` over the
    whole store, run (in process) at `when`. A generated home is a year of learnings that no
    promotion has ever seen (tens of thousands of scores to start or stop, first conflicts);
    a real one is promoted at every session end and pruned daily, so the benchmarks of the
    daily commands run on a home maintained the day before."""
    from learn_cli.engine.promotion import run_promotion
    from learn_cli.engine.prune import run_prune
    from learn_cli.store.api import Store

    store = Store(home, warn_stderr=False)
    try:
        started = time.perf_counter()
        promoted = run_promotion(store, now=iso(when), loads=orjson.loads).counts()
        middle = time.perf_counter()
        pruned = run_prune(store, now=iso(when), loads=orjson.loads)
        done = time.perf_counter()
    finally:
        store.close()
    return {"at": iso(when), "seconds_promote": round(middle - started, 2), "seconds_prune": round(done - middle, 2),
            "promoted": promoted["promoted"], "archived": promoted["archived"] + len(pruned.archived),
            "conflicts": promoted["conflicts"], "low_since_changed": promoted["low_since_changed"],
            "merged": pruned.removed}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="output folder (replaced): gets home/ and work/")
    ap.add_argument("--learnings", type=int, default=1000)
    ap.add_argument("--projects", type=int, default=10)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--no-index", action="store_true", help="skip building the SQLite index")
    ap.add_argument("--maintained", action="store_true",
                    help="then run yesterday's promote and prune over it, as a real home has had")
    args = ap.parse_args(argv)
    summary = generate(Path(args.out), args.learnings, args.projects, args.seed, index=not args.no_index,
                       maintained=args.maintained)
    print(json.dumps(summary.as_dict(), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
