#!/usr/bin/env bash
# A short scripted tour of `learn` on a throwaway home: nothing touches your real store.
set -euo pipefail
LEARN=${1:-learn}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export SELF_LEARNING_HOME="$TMP/home" NO_COLOR=1
A="$TMP/work/web-api"; B="$TMP/work/ml-pipeline"
mkdir -p "$A/.git" "$B/.git"
printf '[remote "origin"]\n\turl = git@github.com:demo/web-api.git\n' > "$A/.git/config"
printf '[remote "origin"]\n\turl = git@github.com:demo/ml-pipeline.git\n' > "$B/.git/config"
touch "$A/pyproject.toml" "$B/pyproject.toml" "$B/Dockerfile"

say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
hook() {  # hook EVENT SESSION CWD TOOL_USE_ID COMMAND [ERROR]
  local body
  if [ "$1" = PostToolUseFailure ]; then
    body=$(printf '"error": "%s", "is_interrupt": false' "$6")
  else
    body='"tool_response": {"stdout": "4 passed in 0.12s", "stderr": "", "interrupted": false, "isImage": false}'
  fi
  printf '{"session_id": "%s", "transcript_path": "/tmp/%s.jsonl", "cwd": "%s", "permission_mode": "default", "hook_event_name": "%s", "tool_name": "Bash", "tool_input": {"command": "%s", "description": "Run the tests"}, "tool_use_id": "%s", %s}' \
    "$2" "$2" "$3" "$1" "$5" "$4" "$body" | "$LEARN" capture
}

say "learn --project web-api add 'Always use --platform linux/amd64 with Docker build on M1 Mac' --fix 'docker build --platform linux/amd64 -t myapp .' --category config"
"$LEARN" --project "$A" add "Always use --platform linux/amd64 with Docker build on M1 Mac" \
  --fix "docker build --platform linux/amd64 -t myapp ." --category config --impact 0.8

echo; echo "# Claude Code works in web-api: \`pytest tests\` fails, \`python -m pytest tests\` works."
hook PostToolUseFailure s1 "$A" toolu_s1_1 "pytest tests" 'Exit code 127\nbash: pytest: command not found'
hook PostToolUse s1 "$A" toolu_s1_2 "python -m pytest tests"

echo; echo "# The next session in web-api, the same failure. The hook answers Claude at once:"
hook PostToolUseFailure s2 "$A" toolu_s2_1 "pytest tests" 'Exit code 127\nbash: pytest: command not found'
echo
hook PostToolUse s2 "$A" toolu_s2_2 "python -m pytest tests"

echo; echo "# Later, in ml-pipeline, the same failure:"
say "learn capture   (PostToolUseFailure: pytest tests → command not found)"
hook PostToolUseFailure s3 "$B" toolu_s3_1 "pytest tests" 'Exit code 127\nbash: pytest: command not found'
echo
hook PostToolUse s3 "$B" toolu_s3_2 "python -m pytest tests"

say "learn recall pytest"
"$LEARN" --project "$B" recall pytest
say "learn context          # what Claude sees at the start of the next session"
"$LEARN" --project "$B" context
say "learn stats"
"$LEARN" --project "$B" stats
say "learn graph"
"$LEARN" --project "$B" graph
echo; echo "Tour done. Your real store was not touched (this one lived in $SELF_LEARNING_HOME)."
echo "Next: \`learn hooks install\` connects Claude Code; \`man learn\` or \`learn --help\` for the rest."
