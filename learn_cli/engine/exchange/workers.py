"""Worker processes of a large import (`_Helpers`): the redaction checks off the main process; a
small file, or a system without fork, does them in-process."""

from __future__ import annotations

import os

# ---------------------------------------------------------------- work in other processes


class _Helpers:
    """Worker processes that take work off the main process of a large import: `submit` and
    `result` tell which texts redaction changes (each distinct text of the file once, see
    importer._Verdicts: ~35 µs a text), answered in order. The main process reads, merges,
    writes and indexes on meanwhile (index rows are made from the records it holds: a worker
    would have to read them back). A small file, or a system without fork, does it all
    in-process.

    Every worker is forked at once, here, before the import starts any thread: a fork copies
    no other thread, so a lock that one of them held would stay held in the child."""

    PARALLEL_BYTES = 4 << 20  # below this, forking costs more than it saves
    batch = 400  # entries whose new texts make a redaction job
    ahead = 8  # redaction jobs out at once (bounds the entries held in memory)

    def __init__(self, store, file_bytes: int):
        self.store = store
        self.pool = None
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


# The import's SQLite page cache, instead of SQLite's 2 MB: its rows go into the id, key and
# other indexes in no order, and with 2 MB their pages are evicted and read back over and over
# (-22 % of SQLite's CPU time for the 75,000 rows of the realistic 100,000 export). 16 MB read
# and wrote back fewer pages again (system time 0.99 -> 0.83 s for those rows), but the import
# of another file into a full home then peaked at 150-154 MB: the cache lives in the main
# process, beside the entries held, since it writes the rows itself.
INDEX_CACHE_KB = 8192


def dirty_texts(texts: list[str]) -> list[int]:
    """The positions of the texts that redaction changes (the redactor's prefilter lets most
    through unread: tests/test_redact_prefilter.py)."""
    from learn_cli.text.redact import changed_texts

    return changed_texts(texts)
