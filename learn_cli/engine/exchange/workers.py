"""Worker processes of a large import (`_Helpers`): redaction checks and index writes off the main
process; a small file, or a system without fork, does it all in-process."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

# ---------------------------------------------------------------- work in other processes


class _Helpers:
    """Worker processes that take work off the main process of a large import: `submit` and
    `result` tell which texts redaction changes (each distinct text of the file once, see
    importer._Verdicts: ~35 µs a text), answered in order; `index_rows` writes the index rows of
    staged files (SQLite's part), one job at a time: one writer, transactions in order. The
    main process reads, merges and writes on meanwhile. A small file, or a system without
    fork, does it all in-process.

    Every worker is forked at once, here, before the import starts any thread: a fork copies
    no other thread, so a lock that one of them held would stay held in the child."""

    PARALLEL_BYTES = 4 << 20  # below this, forking costs more than it saves
    batch = 400  # entries whose new texts make a redaction job
    ahead = 8  # redaction jobs out at once (bounds the entries held in memory)

    def __init__(self, store, file_bytes: int):
        self.store = store
        self.pool = None
        self.index_job = None
        workers = min(os.cpu_count() or 1, 4)
        if file_bytes < self.PARALLEL_BYTES or workers < 2 or not hasattr(os, "fork"):
            return
        try:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            self.pool = ProcessPoolExecutor(workers, multiprocessing.get_context("fork"), initializer=_quiet_worker)
            self.pool.submit(int).result()  # forks them all now
        except (OSError, ImportError, ValueError):  # no fork, no /dev/shm...: all in-process
            self.close()

    def submit(self, texts: list[str]):
        return self.pool.submit(dirty_texts, texts) if self.pool and texts else dirty_texts(texts)

    def result(self, job) -> set[int]:
        return set(job if isinstance(job, list) else job.result())

    def index_rows(self, files: list[tuple[Path, Path, bool]]) -> None:
        """Index.load_rows for staged files: (target, staged file, whether to parse its lines
        with the standard library: a record orjson cannot write exactly). The file is read
        again where the rows are made: the main process holds no copy of its lines."""
        self.wait_index()
        if self.pool is None or str(self.store.index.path) == ":memory:":
            return self._noted(_load_rows(self.store.index, files))
        self.index_job = self.pool.submit(index_in_worker, str(self.store.home), files)

    def wait_index(self) -> None:
        """The index job done (before the index is read back, or the import ends)."""
        job, self.index_job = self.index_job, None
        if job is not None:
            self._noted(job.result())

    def _noted(self, problem: str | None) -> None:
        if problem:
            self.store.note(problem)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None


def _quiet_worker() -> None:
    """A worker leaves Ctrl-C to the main process (which stops it), yields the CPU to it (the
    main process feeds the workers), and ends when it ends, even killed (kill -9 leaves the
    workers waiting on a queue that they themselves hold open)."""
    import signal
    import threading

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.nice(5)
    threading.Thread(target=_end_with, args=(os.getppid(),), daemon=True).start()


def _end_with(parent: int) -> None:
    import time

    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)


INDEX_CACHE_KB = 8192


def index_in_worker(home: str, files: list) -> str | None:
    """In a worker: `_load_rows` on a connection of its own."""
    from learn_cli.store.index import Index
    from learn_cli.store.paths import Layout

    index = Index(Layout(Path(home)))
    try:
        return _load_rows(index, files)
    finally:
        index.close()


def _load_rows(index, files: list[tuple[Path, Path, bool]]) -> str | None:
    """index.load_rows from the lines of staged files, with their derived columns (what promote
    and prune read: the first run after an import derives nothing); what went wrong, if anything."""
    import sqlite3

    import orjson

    from learn_cli.engine.promotion import DERIVE

    index.derive = (DERIVE[0], _features_once(DERIVE[1]))
    # A page cache of 8 MB instead of SQLite's 2: the rows go into the id, key and other indexes
    # in no order, and with 2 MB their pages are evicted and read back over and over (-22 %
    # of SQLite's CPU time for the 75,000 rows of the realistic 100,000 export).
    index.use_page_cache(INDEX_CACHE_KB)

    def rows(target: Path, staged: Path, exact: bool) -> tuple:
        # Each line is its row's `data`. Split at "\n" only: str.splitlines would also cut at
        # U+2028 or U+0085, which JSON text holds as they are.
        with open(staged, "rb") as fh:
            texts = [text for text in fh.read().decode("utf-8").split("\n") if text]
        return target, [(json.loads if exact else orjson.loads)(text) for text in texts], staged, texts

    try:
        index.load_rows([rows(*file) for file in files])
    except sqlite3.DatabaseError as exc:  # the files are the truth: the index heals from their stats
        return f"index not updated ({exc}); it will be rebuilt from the files"
    return None


# What conflicts.record_features reads of a record (tests/test_exchange_stream.py checks it):
# records alike in these have the same features. An export repeats them (a fix in many
# projects): 62,397 live rows, 44,748 distinct, in the realistic 100,000 one.
FEATURE_FIELDS = ("type", "context", "error", "fix", "command", "fix_command")
_FEATURES: dict[tuple, str] = {}  # a worker's features by FEATURE_FIELDS, over its jobs
_FEATURES_KEPT = 20_000


def _features_once(features: Callable[[dict], str]) -> Callable[[dict], str]:
    """`features` (the index's derive of conflict features), once per distinct FEATURE_FIELDS."""
    def once(rec: dict) -> str:
        key = tuple(rec.get(name) for name in FEATURE_FIELDS)
        try:
            known = _FEATURES.get(key)
        except TypeError:  # a value no hash takes (a hand-made list): derived, not kept
            return features(rec)
        if known is None:
            if len(_FEATURES) >= _FEATURES_KEPT:
                _FEATURES.clear()
            known = _FEATURES[key] = features(rec)
        return known

    return once


def dirty_texts(texts: list[str]) -> list[int]:
    """The positions of the texts that redaction changes (the redactor's prefilter lets most
    through unread: tests/test_redact_prefilter.py)."""
    from learn_cli.text.redact import changed_texts

    return changed_texts(texts)
