"""`learn export` / `learn import`: the portable JSON format and merging it into a store.

Format (version 1.x):

    {"format": "self-learning-agent", "version": "1.0.0", "exported": "<ISO-8601 UTC>",
     "global": [record, ...],
     "projects": {"<project id>": {"name", "root", "remote", "learnings": [record, ...]}, ...},
     "archived": [record + "archived_from": "global" | "<project id>", ...]}

Every project that has a learning (live or archived) is listed under `projects`, so an
archived entry's `archived_from` always names a listed project (or "global").

Both directions stream, so memory does not grow with the store or the file: export writes a
record at a time from one ordered query per section and per project; import reads the entries
one by one inside each array (`_JsonStream`), and writes each target file once, indexing its
rows from the records it staged (`Index.load_rows`: no file read back, the derived columns
left NULL for the next promote or prune). For a large file, the redaction checks run in
worker processes (`_Helpers`).

Import is untrusted input (SPEC §4): a size limit, the parser's nesting limit, the shape of
each section, and every entry through `coerce_record` (types, caps); text is redacted again;
project ids from the file are folder names only when they are 12 lower-case hex digits, else
a safe id is derived from the project's remote/root/name; names like `../../etc` are display
names, never paths. `deleted` and `updated` are dropped from entries (a `deleted` line would
act as a tombstone in the log). Nothing is written unless the whole file reads: new files are
staged in a folder of the home and renamed into place at the end. Unless the user trusts the
file (`trust`), entries arrive pending and change no existing learning (`distrust`).

Merging, per target file (a project's learnings or archive, a global file), in this order:
- **duplicate** (skipped): the entry's id is already in the store, or was merged before (it is
  in a record's `merged_from`), or a record with the same key has the same text (context,
  error and fix, compared after normalising case, spacing and punctuation): such a copy is a
  duplicate before any conflict is judged (its record has been judged). So importing a file
  twice adds nothing, and reads of a target only the records of its entries' keys. An entry
  whose id the store holds (a learning's of its key, or merged) is a duplicate as soon as it
  is read, before it is checked, redacted or coerced (`_Importer._known`), even if it would
  now be skipped: its id says the store has it.
- **conflict**: engine.conflicts finds the entry and a live record of the same scope give
  incompatible advice: the entry is added with status `conflicted`, the record is flagged too.
- **merged** (frequency updated): same key with different text, or a near-duplicate
  (engine.merge.similarity ≥ NEAR_DUPLICATE) of a record of that file: engine.merge.merge
  (frequencies summed, projects unioned, better text); the entry's id joins `merged_from`.
- **new**: everything else; ids are kept (a clash with a learning of another key gets a new id,
  and the id it came with joins its `merged_from`).
- **skipped**: entries `coerce_record` rejects, with the reason.
The entries of a target are merged together once none can follow: a project's learnings at
the end of its project, the global files at the end of `global`, the archives at the end;
until then they are held marshalled (`_Merger.add`).

The package, by idea: `common` (constants, the error, redaction), `export`, `stream` (the JSON
reader), `importer` (sections and entries), `trust`, `merging`, `staging`, `workers`.
"""

from .common import (
    FORMAT,
    MAX_IMPORT_BYTES,
    NEAR_DUPLICATE,
    VERSION,
    ExchangeError,
    redact_record,
)
from .export import ExportResult, write_export
from .importer import import_file, safe_project_id
from .merging import _Merger
from .report import ImportReport, Incoming
from .staging import _Staging
from .stream import _JsonStream, check_export, check_format
from .trust import accept_import, distrust, is_untrusted_import
from .workers import _Helpers, dirty_texts

__all__ = [
    "FORMAT", "MAX_IMPORT_BYTES", "NEAR_DUPLICATE", "VERSION", "ExchangeError", "ExportResult",
    "ImportReport", "Incoming", "_Helpers", "_JsonStream", "_Merger", "_Staging", "accept_import",
    "check_export", "check_format", "dirty_texts", "distrust", "import_file",
    "is_untrusted_import", "redact_record", "safe_project_id", "write_export",
]
