"""learn_cli.engine.goals: goal families, ecosystems and targets (issue 10, cause 3)."""

from __future__ import annotations

import pytest

from learn_cli.capture.pairing import is_retry
from learn_cli.engine.goals import goal, narrowed, other_packages, other_tests, same_job, targets
from learn_cli.text.shell import unwrap


def _t(command: str) -> list[str]:
    return unwrap(command)


@pytest.mark.parametrize(
    ("command", "family"),
    [
        # commands of the corpora (agent-retries, histories)
        ("make -s", "build"), ("cmake --build build", "build"), ("cmake -S . -B build", "configure"),
        ("cmake ..", "configure"), ("cmake --install build", "install"), ("cmake -E make_directory b", ""),
        ("cargo build", "build"), ("cargo check", "build"), ("npx tsc --noEmit", "build"),
        ("pnpm --dir evals typecheck", "build"), ("npm run build:prod", "build"), ("gcc -I../src x.c", "build"),
        ("nargo compile", "build"), ("make test", "test"), ("cargo test lz77", "test"), ("npm test", "test"),
        ("forge test --match-path test/A.t.sol", "test"), ("nargo test", "test"), ("python -m pytest -q", "test"),
        ("npx jest src", "test"), ("pip install x", "install"), ("uv add x", "install"),
        ("npm i -D x", "install"), ("sudo apt-get install -y libpq-dev", "install"), ("forge install x", "install"),
        ("python -m uvicorn app.main:app", "run"), ("npm run dev", "run"), ("cargo run --bin x", "run"),
        ("git push", "vcs"), ("gh pr view 12", "vcs"),
        ("npm run mocha", "test"), ("yarn jest --ci", "test"), ("pnpm run tsc", "build"),  # named for the tool
        # not a job of a family
        ("make clean", ""), ("npm run lint", ""), ("ls -la", ""), ("./build.sh --mode=self-host", ""),
        ("cargo fuzz run x", ""), ("", ""),
    ],
)
def test_goal(command, family):
    assert goal(_t(command)) == family


def test_targets_name_what_a_job_is_about():
    assert targets(_t("cmake --build build")) == frozenset()  # where, not what
    assert targets(_t("make -C build -j4")) == frozenset()
    assert targets(_t("pnpm --dir evals typecheck")) == {"evals"}
    assert targets(_t("tsc -p evals")) == {"evals"}
    assert targets(_t("pip install 'python-jose[cryptography]' jose==3.3 vite@5")) == {"python-jose", "jose", "vite"}
    assert targets(_t("pytest /abs/tests/test_api.py -k login")) == {"test_api.py", "login"}
    assert targets(_t("cargo test --features c-fallback lz77")) == {"lz77"}


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("make", "cmake --build build", True),
        ("make", "cmake -B build", False),  # configuring is a step before the build, not the build
        ("cmake --build build", "cmake -S . -B build", False),
        ("make", "cargo build", True),  # a generic driver that failed, then the project's tool
        ("cargo build", "make", False),  # not the other way round
        ("make test", "npm test", True),  # make only named the job (no rule for it)
        ("npm test", "make test", False),
        ("make test", "cargo build", False),  # another job
        ("cargo build", "npm run build", False),  # two ecosystems of one monorepo
        ("pnpm --dir evals typecheck", "tsc -p evals", True),
        ("pnpm --dir evals typecheck", "tsc -p web", False),
        ("npm test", "npx vitest run", True),
        ("pytest", "npm test", False),
        ("pip install jose", "uv add python-jose", True),
        ("pip install jose", "uv add requests", False),
        ("git push", "git pull", False),  # vcs: one program, judged by the subcommand rules
        ("nargo compile", "cmake --build build", False),
        ("pip install pandas", "apt-get install -y python3-pandas", True),  # Debian's name for it
        ("pip install pyyaml", "apk add py3-yaml", True),
        ("apt-get install -y python3-pandas", "pip install --user pandas", True),
        ("pip install pandas", "apt-get install -y python3-venv", False),
        ("pip install pandas", "apt-get install -y pandas-tools", False),  # no language's prefix: the system's
        ("npm install semver", "apt-get install -y node-semver", True),
        ("brew install supabase/tap/supabase", "npm install -g supabase", True),  # r19-b-001: the same package
        ("brew install supabase/tap/supabase", "npm install -g supabase-js", False),  # by its very name only
        ("cargo build", "npm install", False),  # another world, another job
    ],
)
def test_same_job(a, b, same):
    assert same_job(_t(a), _t(b)) is same


def test_other_packages():
    """Round 11 (r11-c-011, a Rust workspace): after `cargo check -p landro-daemon` failed the
    agent checked two other crates; that is not a retry, as other tests are not."""
    assert other_packages(_t("cargo check -p landro-daemon"), _t("cargo check -p landro-sync -p landro-cas"))
    assert other_packages(_t("npm run build -w web"), _t("npm run build --workspace=api"))
    assert other_packages(_t("mvn -pl core test"), _t("mvn -pl api test"))
    assert not other_packages(_t("cargo check -p landro-deamon"), _t("cargo check -p landro-daemon"))  # a typo
    assert not other_packages(_t("cargo test -p core"), _t("cargo test -p core -p api"))  # one kept
    assert not other_packages(_t("pnpm --filter web dev"), _t("pnpm --filter @app/web dev"))  # its full name
    assert not other_packages(_t("cargo build -p core"), _t("cargo build"))  # the whole workspace
    assert not other_packages(_t("pytest -p xdist"), _t("pytest -p cov"))  # `-p` is a plugin there
    assert not is_retry("cargo check -p landro-daemon", "cargo check -p landro-sync -p landro-cas")
    assert is_retry("cargo check -p landro-deamon", "cargo check -p landro-daemon")


def test_narrowed():
    """One runner on part of what it ran (round 12: `uv run pytest -q` -> its own test file)."""
    assert narrowed(_t("uv run pytest -q"), _t("uv run pytest -q tests/test_usage_tracker.py"))
    assert narrowed(_t("cargo test"), _t("cargo test parser::"))
    assert narrowed(_t("npm test"), _t("npm test -- src/app.test.ts"))
    assert narrowed(_t("go test ./..."), _t("go test ./pkg/x"))  # `./...` is everything
    assert not narrowed(_t("pytest tests/test_a.py"), _t("pytest"))  # widened
    assert not narrowed(_t("pytest tests/test_a.py"), _t("pytest tests/test_b.py"))  # other tests
    assert not narrowed(_t("pytest"), _t("pytest -q"))
    assert not narrowed(_t("cargo build"), _t("cargo build -p core"))  # not a test run
    assert not narrowed(_t("npm test"), _t("npx jest src/a.test.ts"))  # another runner: same_job's


def test_other_tests():
    assert other_tests(_t("cargo test test_basic"), _t("cargo test test_simple"))
    assert not other_tests(_t("cargo test lz77::tests"), _t("cargo test lz77::tests::test_get_match"))
    assert not other_tests(_t("cargo test hash"), _t("cargo test"))
    assert not other_tests(_t("pytest tests/tset_api.py"), _t("pytest tests/test_api.py"))  # a path: a typo
