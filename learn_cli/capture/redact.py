"""Old home of the redactor, kept for outside tools (../shared/tools/replay.py imports
`learn_cli.capture.redact.redact`). The redactor lives in `learn_cli.text.redact`."""

from learn_cli.text.redact import redact, redact_obj, redact_project

__all__ = ["redact", "redact_obj", "redact_project"]
