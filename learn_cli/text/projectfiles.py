"""Files that configure a project rather than hold its code: manifests, build files, tool
configs. An error may name one without it being a path to mask (text.keys), and an edit to
one before the same command works is a lesson for any command that meets the error again
(capture.learner: `"type": "module"` set in package.json fixes every script's ESM import).
Stdlib only (hot path)."""

from __future__ import annotations

__all__ = ["MANIFESTS", "is_project_config", "has_script"]

MANIFESTS = frozenset({"cargo.toml", "package.json", "go.mod", "pyproject.toml", "setup.py", "makefile",
                       "cmakelists.txt", "tsconfig.json", "pom.xml", "build.gradle", "gemfile", "composer.json",
                       "requirements.txt", "docker-compose.yml", "compose.yaml", "dockerfile", "justfile"})
# Other files a tool reads its settings from (`setup.cfg`, `.npmrc`, `.env`, `jest.config.ts`).
_CONFIGS = frozenset({"setup.cfg", "tox.ini", "pytest.ini", ".npmrc", ".yarnrc.yml", ".env", ".nvmrc",
                      ".python-version", "rust-toolchain.toml", "rust-toolchain", "go.work", "deno.json",
                      "babel.config.js", ".babelrc", "build.gradle.kts", "settings.gradle", "meson.build",
                      "docker-compose.yaml", "compose.yml", "config.toml"})
_CONFIG_SUFFIXES = (".config.js", ".config.ts", ".config.mjs", ".config.cjs", "rc.json", "rc.js", "rc.yml",
                    "rc.yaml", "rc.cjs")


def is_project_config(path: str) -> bool:
    """Is the file at `path` one that configures the project (by its name)?"""
    from learn_cli.text.shell import path_name

    name = path_name(path).lower()
    return name in MANIFESTS or name in _CONFIGS or name.startswith(".env.") or name.endswith(_CONFIG_SUFFIXES)


def has_script(folder: str, root: str, name: str) -> bool:
    """Does the package.json a JavaScript package manager reads in `folder` (the nearest one,
    up to the project's `root`) define the script `name`? True when none can be read: nothing
    then says the script is missing."""
    import os

    from learn_cli.text import jsonlite  # (not `json`: its import costs a hook ~0.6x its start)

    here, root = os.path.normpath(folder), os.path.normpath(root)
    while True:
        try:
            with open(os.path.join(here, "package.json"), "rb") as handle:
                scripts = jsonlite.loads(handle.read(1 << 20)).get("scripts")
            return isinstance(scripts, dict) and name in scripts
        except (OSError, ValueError, AttributeError):
            pass
        if here == root or os.path.dirname(here) == here or not here.startswith(root):
            return True
        here = os.path.dirname(here)
