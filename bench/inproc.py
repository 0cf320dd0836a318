"""In-process timings over one home: recall (learn_cli.engine.search.search) and the
session-start digest (learn_cli.engine.digest.session_digest), each the median of many calls
in one process that has already opened the store. Prints one JSON object.

    python bench/inproc.py --home HOME --project DIR --topic docker [--repeat 30]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import time


def timed(fn, repeat: int, warmup: int = 2) -> dict:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return {"median_ms": statistics.median(times), "min_ms": min(times), "max_ms": max(times), "calls": repeat}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--home", required=True)
    ap.add_argument("--project", required=True)
    ap.add_argument("--topic", default="docker")
    ap.add_argument("--session", default="")
    ap.add_argument("--repeat", type=int, default=30)
    args = ap.parse_args()

    import orjson

    from learn_cli.store.api import Store
    from learn_cli.store.project import identify

    store = Store(args.home, warn_stderr=False)
    project = identify(args.project)
    out: dict = {}
    try:
        from learn_cli.engine.search import search
    except ImportError as exc:
        out["recall"] = {"error": f"not available ({exc})"}
    else:
        hits = search(store, args.topic, project_id=project.id, limit=10, loads=orjson.loads)
        out["recall"] = dict(timed(lambda: search(store, args.topic, project_id=project.id, limit=10,
                                                  loads=orjson.loads), args.repeat),
                             call=f"engine.search.search(store, {args.topic!r}, limit=10)",
                             hits=len(getattr(hits, "hits", []) or []))
    try:
        from learn_cli.engine.digest import session_digest
    except ImportError as exc:
        out["digest"] = {"error": f"not available ({exc})"}
    else:
        res = session_digest(store, project, loads=orjson.loads)
        out["digest"] = dict(timed(lambda: session_digest(store, project, loads=orjson.loads), args.repeat),
                             call="engine.digest.session_digest(store, project)",
                             tokens=getattr(res, "tokens", None), items=len(getattr(res, "items", []) or []))
    out["_peak_rss_mb"] = {"value": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    store.close()
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
