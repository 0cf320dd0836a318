"""`learn hooks install|uninstall|status` output (the JSON is the command's own)."""

from __future__ import annotations

from learn_cli.render.console import fancy


def report(result: dict, agent) -> None:
    """One install or uninstall, for a person (a terminal) or plain lines (piped)."""
    verb = "installed" if result["action"] == "install" else "removed"
    events = ", ".join(result["events"])
    skill = agent.kind == "skill"
    noun = "skill" if skill else "hooks"
    if fancy():
        if not result["changed"]:
            state_line = "already installed" if result["action"] == "install" else "nothing of learn's to remove"
            print(f"✅ {agent.title} {noun} ({result['scope']}): {state_line} in {result['path']}")
            return
        print(f"✅ {agent.title} {noun} {verb} ({result['scope']} scope)")
        print(f"   📄 {result['path']}")
        print(f"   🪝 {events}")
        if result.get("command") and not skill:
            print(f"   ▶️  {result['command']} capture")
        if result["backup"]:
            print(f"   💾 backup: {result['backup']}")
        if result.get("note"):
            print(f"   👉 {result['note']}")
        return
    if not result["changed"]:
        state_line = "already installed" if result["action"] == "install" else "nothing to remove"
        print(f"{result['action']}: {agent.name} {result['scope']}: {state_line}: {result['path']}")
        return
    print(f"{result['action']}: {agent.name} {result['scope']}: {verb} {events}: {result['path']}")
    if result["backup"]:
        print(f"backup: {result['backup']}")
    if result.get("note"):
        print(f"note: {result['note']}")


def print_status(doc: dict, agent, brief: bool = False) -> None:
    """`hooks status` of one agent: a line per scope (brief: only where something is)."""
    tty = fancy()
    if brief and not any(row["events"] or not row["valid"] for row in doc["scopes"]):
        print(f"⚪ {agent.title}: not installed" if tty else f"{agent.name}: not installed")
        return
    if tty:
        print(f"🪝 {agent.title} hooks — this learn: {doc['command']}")
    else:
        print(f"agent: {agent.name}")
        print(f"command: {doc['command']}")
    for row in doc["scopes"]:
        if brief and not row["events"] and row["valid"]:
            continue
        state_text = _state_text(row)
        if tty:
            mark = "✅" if row["runs"] else "⚪" if not row["events"] else "⚠️ "
            print(f"  {mark} {row['scope']:<8} {state_text}  ({row['path']})")
        else:
            print(f"{row['scope']}: {state_text}: {row['path']}")


def _state_text(row: dict) -> str:
    if not row["valid"]:
        return f"invalid settings file ({row.get('error', '')})"
    if row["events"] and not row["missing"]:
        text = "installed" + (", guard on" if row["guard"] else "")
        if not row["current"]:
            text += " (not what this learn installs: run install again)"
    elif row["events"]:
        text = f"partly installed (missing: {', '.join(row['missing'])})"
    else:
        return "not installed"
    if not row["runnable"]:
        text += "; the registered command does not exist"
    elif row["trust"]:
        text += f"; {row['trust']}"
    return text
