"""One of the concurrency test's capture processes: 100 hook calls through
learn_cli.capture.hook.main (the code `learn capture` runs), then a JSON summary on stdout.

    python concurrency_worker.py PLAN.json INDEX

The calls: 24 failure/retry pairs with an error of its own (each must become exactly one
learning), 25 failure/fix pairs of the shared errors whose fix is a known global learning
(each must add exactly one sighting and credit exactly one "helped"), one user correction,
one SessionEnd (end-of-session promotion check and compaction, concurrent with the rest).
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import reliability_kit as kit

UNIQUE_PAIRS = 24
SHARED_PAIRS = 25


def main() -> int:
    plan = json.loads(Path(sys.argv[1]).read_text())
    index = int(sys.argv[2])
    rng = random.Random(f"worker-{index}")
    cwd, sid = plan["project"], f"conc-session-{index}"
    calls = bad_exit = bad_stdout = 0
    markers, corrections = [], []

    durations: list[float] = []
    warnings: list = []

    def call(payload) -> None:
        nonlocal calls, bad_exit, bad_stdout
        calls += 1
        started = time.monotonic()
        code, out, err = kit.run_hook(payload, ["--home", plan["home"]])
        durations.append(time.monotonic() - started)
        if err.strip():
            warnings.append((payload["hook_event_name"], err.strip()[-200:]))
        bad_exit += code != 0
        try:
            kit.check_hook_stdout(out)
        except (AssertionError, ValueError):
            bad_stdout += 1

    for n in range(UNIQUE_PAIRS):
        marker = f"{kit.word(rng, 2)}{kit.letters(index)}q{kit.letters(n)}"
        markers.append(marker)
        prog, verb = kit.word(rng, 2), kit.word(rng, 3)
        failed = f"{prog} {verb} {kit.word(rng)}"
        call(kit.failure(cwd, sid, f"toolu_u{index}_{n}_f", failed,
                         f"Error: cannot {kit.word(rng)} {marker} {kit.words(rng, 4)}"))
        call(kit.success(cwd, sid, f"toolu_u{index}_{n}_s", f"{failed} --{kit.word(rng)}"))
    for n in range(SHARED_PAIRS):
        spec = plan["shared"][n % len(plan["shared"])]
        call(kit.failure(cwd, sid, f"toolu_k{index}_{n}_f", spec["command"], spec["error"]))
        call(kit.success(cwd, sid, f"toolu_k{index}_{n}_s", spec["fix"]))
    tool = kit.word(rng, 3)
    corrections.append(tool)
    call(kit.prompt(cwd, sid, f"Don't use npm here, use {tool} instead."))
    call(kit.session_end(cwd, sid))
    json.dump({"index": index, "calls": calls, "bad_exit": bad_exit, "bad_stdout": bad_stdout,
               "markers": markers, "corrections": corrections, "slowest": max(durations), "warnings": warnings,
               "median": sorted(durations)[len(durations) // 2]}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
