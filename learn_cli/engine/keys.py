"""Old home of the keys, kept for outside tools (../shared/tools/replay.py imports
`learn_cli.engine.keys.error_key`). The keys live in `learn_cli.text.keys`."""

from learn_cli.text.keys import error_key, error_signature, text_key

__all__ = ["error_key", "error_signature", "text_key"]
