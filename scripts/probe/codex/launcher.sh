#!/bin/sh
# Probe launcher: Codex's app-server and its TUI as one harness under `ding pty`.
# The app-server is a child of this shell, so it inherits the PTY host's
# environment (DING_* identity: hooks run in the app-server) and its process
# group (a PTY host restart or shutdown hangs both up).
#   launcher.sh CODEX SOCKET [app-server args...]
codex=$1; sock=$2; shift 2
rm -f "$sock"
"$codex" app-server --listen "unix://$sock" "$@" 2>"$sock.stderr" &
server=$!
i=0
while [ ! -S "$sock" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
"$codex" --remote "unix://$sock"
status=$?
kill "$server" 2>/dev/null
wait "$server" 2>/dev/null
exit $status
