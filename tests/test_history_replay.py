"""Every real history, replayed through the installed `learn`'s hooks: no hook raises.

A hook that raises on the real path still exits 0 and prints nothing (it is never in the way),
so the pair it was judging is lost without a word. Here every payload goes to the installed
package's `hook.handle` in one process (the replay kit's worker), where an exception shows:
the kit builds Claude Code's payloads from each history's events, in time order, as
`../shared/tools/replay.py` does (session 38 found a ValueError this way, in the judgement of a
compiler that printed its usage: tests/test_learning_real.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
KIT = ROOT.parent / "shared" / "tools" / "replay.py"
HISTORIES = sorted([*(ROOT.parent / "shared" / "histories").glob("*/events.jsonl"),
                    *(ROOT / "bench" / "data" / "histories").glob("*/events.jsonl")])

pytestmark = pytest.mark.skipif(not KIT.is_file() or not HISTORIES, reason="needs ../shared (the replay kit)")


@pytest.mark.parametrize("history", [p.parent for p in HISTORIES], ids=lambda p: p.name)
def test_a_real_history_replays_without_a_hook_raising(tmp_path, history):
    sys.path.insert(0, str(ROOT))
    from bench.corpus import replay_kit

    kit = replay_kit()

    class InProcess(kit.Replayer):
        """Every payload in the worker, the ones the kit sends through `sh -c` too."""

        def _run_real(self, h, payload, cwd, env_extra):
            return self._run_inproc(payload, cwd, env_extra)

    replayer = InProcess(str(ROOT / ".venv" / "bin" / "learn"), base=str(tmp_path))
    try:
        replayed = kit.replay_history(kit.load_history(str(history)), replayer)
    finally:
        replayer.close()
    assert replayer.errors == []
    assert replayer.calls == 0 and replayer.inproc > 100  # every payload in the worker
    assert any(event.get("outcome") == "fail" for event in replayed["events"])
