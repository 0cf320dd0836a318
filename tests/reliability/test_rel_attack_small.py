"""The 256-session attack of RELIABILITY.md (deadline_attack.py, a script: its figures are
recorded there), at a size CI runs in seconds: 8 agent sessions at once, each a real
`learn capture` process per tool call (a failure and its fix, a failure of a shared error with
a known fix and its fix, a user correction, a Stop), beside `learn prune`, `learn promote`,
`learn export` and `learn import` looping, then one `learn promote`.

Nothing may be lost (pairs, tool events, corrections), no hook may exit non-zero or print a
traceback, and the spool's counters must add up. How far past their deadlines the calls ended
is printed, not asserted: on a CI machine it measures the CPU the machine had to give.
"""

from __future__ import annotations

import json

import deadline_attack


def test_8_sessions_beside_looping_housekeeping_lose_nothing(tmp_path):
    report = deadline_attack.concurrent(tmp_path, 8)
    print("\nattack " + json.dumps({k: report[k] for k in ("pairs", "tool_events", "corrections", "spool",
                                                            "bad_hook_exits", "housekeeping_runs")}))
    assert report["bad_hook_exits"] == 0, report["bad_calls"]
    assert report["housekeeping_failures"] == [], report["housekeeping_failures"]
    for what in ("pairs", "tool_events", "corrections"):
        assert report[what]["lost"] == 0, (what, report)
    spool = report["spool"]
    assert spool["dropped"] == 0 and spool["deferred"] == spool["replayed"] and spool["final_promote_ok"], spool
