"""The ground floor: text tools every layer may use (stdlib only, imports nothing of
learn_cli outside learn_cli.text, cheap to import: regexes compile on first use).

- `failure`: failure text's anatomy (exit code, ANSI, the lines that carry the error,
  `meaningful_line`) and its category;
- `redact`: secrets out of text, objects and project descriptions;
- `shell`: command lines (segments, tokens, the program, output plumbing, normalising);
- `effects`: what a command does to the world (mutating, read-only);
- `keys`: error signatures and keys, text keys, tokens, path normalising;
- `sanitize`: captured text made inert for an agent to read, token estimates, short paths;
- `hashes`: SHA hex digests without loading OpenSSL;
- `rx`: `re`'s names, served by the hooks' regex cache without importing `re` (these
  modules spell their patterns `rx.compile`, `rx.search`, `rx.IGNORECASE`, ...).
"""
