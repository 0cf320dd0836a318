"""SHA digests without importing `hashlib`, which loads OpenSSL: ~2 ms of every hook call that
needs a digest (a failure's key, a project's id, a synthesized tool-use id). CPython's own
implementations give the same digests; `hashlib` is the fallback elsewhere."""

from __future__ import annotations

import sys

# The C modules are imported with this module, not at the first digest. The hook's hard stop
# (capture.hook, on SIGALRM) may spool the event it interrupts, which names its project by a
# SHA-256, while the work was importing the SHA module for the same reason: an extension
# module caught between its creation and its initialisation is in sys.modules already,
# without its state, and calling it then crashed the hook (SIGSEGV in `_sha256`, once in
# ~2,300 calls of tests/reliability/deadline_attack.py). The hard stop waits until the modules
# spooling needs are imported (`_ready_to_spool`), this one among them (store.project).
try:
    from _sha1 import sha1 as _sha1
except ImportError:  # pragma: no cover - not CPython
    from hashlib import sha1 as _sha1
try:  # by version: a failed import looks through every folder of sys.path again
    _sha256 = __import__("_sha2" if sys.version_info >= (3, 12) else "_sha256").sha256
except ImportError:  # pragma: no cover - not CPython
    from hashlib import sha256 as _sha256


def sha1_hex(data: bytes) -> str:
    return _sha1(data).hexdigest()


def sha256_hex(data: bytes) -> str:
    return _sha256(data).hexdigest()


def blake2b_hex(data: bytes, digest_size: int) -> str:
    try:
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - not CPython
        from hashlib import blake2b
    return blake2b(data, digest_size=digest_size).hexdigest()
