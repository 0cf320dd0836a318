#!/bin/sh
# Claude Code hook shim for `learn` (plugin layout and hand-made registrations).
#
#   learn-hook.sh capture          tool events, prompts, Stop, SessionEnd
#   learn-hook.sh context --hook   SessionStart: the learned-notes digest
#
# Hooks run without the user's shell set-up, so `learn` is looked for in $LEARN_BIN, on PATH
# and in the usual install places. When it is not found the payload is drained and the shim
# exits 0 without output: a missing `learn` never shows up as a hook error in the agent.
# Without arguments (a Claude Code without the exec form's `args`) it runs `learn capture`,
# which also answers SessionStart with the digest.
[ "$#" -gt 0 ] || set -- capture
for candidate in "${LEARN_BIN:-}" "$(command -v learn 2>/dev/null)" \
    "$HOME/.local/bin/learn" "/opt/homebrew/bin/learn" "/usr/local/bin/learn"; do
    if [ -n "$candidate" ] && [ -x "$candidate" ]; then
        exec "$candidate" "$@"
    fi
done
cat >/dev/null 2>&1
exit 0
