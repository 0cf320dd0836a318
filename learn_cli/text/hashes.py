"""SHA digests without importing `hashlib`, which loads OpenSSL: ~2 ms of every hook call that
needs a digest (a failure's key, a project's id, a synthesized tool-use id). CPython's own
implementations give the same digests; `hashlib` is the fallback elsewhere."""

from __future__ import annotations

import sys

# CPython's own SHA-256 module, by version: a failed import looks through every folder of
# sys.path again on each call (and, in a hook run without `site`, would make it run `site`).
_SHA256_MODULE = "_sha2" if sys.version_info >= (3, 12) else "_sha256"


def sha1_hex(data: bytes) -> str:
    try:
        from _sha1 import sha1
    except ImportError:  # pragma: no cover - not CPython
        from hashlib import sha1
    return sha1(data).hexdigest()


def sha256_hex(data: bytes) -> str:
    try:
        sha256 = __import__(_SHA256_MODULE).sha256
    except ImportError:  # pragma: no cover - not CPython
        from hashlib import sha256
    return sha256(data).hexdigest()


def blake2b_hex(data: bytes, digest_size: int) -> str:
    try:
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - not CPython
        from hashlib import blake2b
    return blake2b(data, digest_size=digest_size).hexdigest()
