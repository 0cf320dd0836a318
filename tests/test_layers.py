"""Imports point downward: text ← store ← engine ← capture ← commands/render (docs/ARCHITECTURE.md).

A module may import its own layer and the layers below it, never one above, and an import
inside a function counts like one at the top. The graph is read from the source with `ast`
(nothing is imported), so the test also runs against a synthetic tree with a planted upward
import, to show that it would fail.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "learn_cli"

# Lowest first. Anything of learn_cli not named here (commands, render, doctor, cli, help,
# __main__) is the top floor; the root package `learn_cli` itself (its version) is the ground
# floor. `agents` (one module per agent: its payload adapter and its installer) shares the
# capture floor: capture finds an agent's adapter there, an agent speaks in capture's events.
LAYERS = ("text", "store", "engine", "capture")
FLOOR_OF = {"agents": LAYERS.index("capture")}
TOP = len(LAYERS)


def layer(module: str) -> int:
    parts = module.split(".")
    if len(parts) == 1:
        return 0
    if parts[1] in FLOOR_OF:
        return FLOOR_OF[parts[1]]
    return LAYERS.index(parts[1]) if parts[1] in LAYERS else TOP


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, module: str) -> list[tuple[str, int]]:
    """Every learn_cli module `module` imports, wherever in the file, with its line."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            # `from learn_cli import engine`, `from . import jsonl`: the names are modules.
            names = [f"{base}.{alias.name}" if not node.module or base == "learn_cli" else base
                     for alias in node.names]
        else:
            continue
        found += [(name, node.lineno) for name in names if name == "learn_cli" or name.startswith("learn_cli.")]
    return found


def graph(root: Path) -> dict[str, list[tuple[str, int]]]:
    return {module_name(path, root): imports_of(path, module_name(path, root)) for path in sorted(root.rglob("*.py"))}


def violations(edges: dict[str, list[tuple[str, int]]]) -> list[str]:
    return [f"{module}:{line} imports {target} (layer {LAYERS[layer(module)] if layer(module) < TOP else 'top'} "
            f"must not import layer {LAYERS[layer(target)] if layer(target) < TOP else 'top'})"
            for module, targets in sorted(edges.items()) for target, line in targets if layer(target) > layer(module)]


def test_no_module_imports_a_higher_layer():
    edges = graph(PACKAGE)
    assert len(edges) > 50 and any(edges.values())  # the walk saw the package
    assert violations(edges) == []


def test_the_rule_catches_an_upward_import_in_a_synthetic_graph():
    edges = {
        "learn_cli.text.keys": [("learn_cli.text.shell", 3)],
        "learn_cli.store.index": [("learn_cli.text.hashes", 1), ("learn_cli.engine.scoring", 9)],
        "learn_cli.capture.hook": [("learn_cli.store.api", 2), ("learn_cli.engine.keys", 4)],
        "learn_cli.commands.add": [("learn_cli.capture.learner", 5), ("learn_cli.render.learning", 6)],
        "learn_cli.engine.exchange": [("learn_cli.capture.redact", 7)],
    }
    assert violations(edges) == [
        "learn_cli.engine.exchange:7 imports learn_cli.capture.redact (layer engine must not import layer capture)",
        "learn_cli.store.index:9 imports learn_cli.engine.scoring (layer store must not import layer engine)",
    ]


def test_a_planted_function_level_upward_import_fails(tmp_path):
    root = tmp_path / "learn_cli"
    for folder in ("text", "store", "engine", "capture", "commands"):
        (root / folder).mkdir(parents=True)
        (root / folder / "__init__.py").write_text("")
    (root / "__init__.py").write_text("")
    (root / "text" / "shell.py").write_text("import re\n")
    (root / "text" / "keys.py").write_text(
        "from learn_cli.text.shell import x\n\n\ndef f():\n    from learn_cli.capture import hook\n    return hook\n")
    (root / "store" / "api.py").write_text("from . import jsonl\nfrom ..engine import merge\n")
    (root / "engine" / "merge.py").write_text("def g():\n    import learn_cli.commands.add\n")
    (root / "commands" / "add.py").write_text("from learn_cli.capture import hook\nfrom learn_cli import text\n")
    found = violations(graph(root))
    assert found == [
        "learn_cli.engine.merge:2 imports learn_cli.commands.add (layer engine must not import layer top)",
        "learn_cli.store.api:2 imports learn_cli.engine (layer store must not import layer engine)",
        "learn_cli.text.keys:5 imports learn_cli.capture (layer text must not import layer capture)",
    ]
