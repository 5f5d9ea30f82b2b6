#!/usr/bin/env bash
# make demo: DING delivering to the bundled demo agent, under both policies.
#
# Two agents run the same demo agent (a composer, 1.5 s turns, and a
# confirmation menu at the end of every turn). A "human" types a draft and
# leaves a menu open while messages arrive:
#
#   * aggressive (no `ding {}`): rings at once, so the notice is glued onto
#     the half-typed draft, and its Return answers the open menu;
#   * turn-boundary+fresh-idle: holds each message with a visible reason and
#     delivers it only when the adapter proves the agent idle with an empty
#     composer, through a compare-and-send.
#
# Everything runs in a temporary directory and is stopped on exit.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# DING_BIN_DIR: use the `ding` already built there (the test suite runs the
# demo on its own debug build) instead of building a release.
if [ -n "${DING_BIN_DIR:-}" ]; then
  export PATH="$DING_BIN_DIR:$PATH"
else
  echo "== building ding (release)"
  cargo build --release --quiet --bin ding --manifest-path "$root/Cargo.toml"
  export PATH="$root/target/release:$PATH"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/ding-demo.XXXXXX")
export XDG_RUNTIME_DIR="$work/run" XDG_STATE_HOME="$work/state"
mkdir -m 700 "$XDG_RUNTIME_DIR"
start_ms=$(date +%s%3N)

cleanup() {
  for agent in aggressive careful; do ding down "$agent" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT

agent_flags='"--turn-ms" "1500" "--menu-every" "1"'
cat >"$work/agents.kdl" <<EOF
// No ding {} block: the aggressive default.
agent "aggressive" {
  command "ding" "demo-agent" "--transcript" "$work/aggressive.jsonl" $agent_flags
}

agent "careful" {
  command "ding" "demo-agent" "--transcript" "$work/careful.jsonl" $agent_flags
  ding {
    delivery "turn-boundary+fresh-idle"
    adapter {
      command "ding" "demo-adapter"
    }
  }
}
EOF

say() { printf '\n== %s\n' "$*"; }
# wait_for AGENT TEXT: until `ding status AGENT` mentions TEXT (10 s at most).
wait_for() {
  for _ in $(seq 200); do
    ding status "$1" 2>/dev/null | grep -q -- "$2" && return 0
    sleep 0.05
  done
  echo "(gave up waiting for \"$2\" on $1)"
}
# wait_event AGENT EVENT [COUNT]: until its transcript has COUNT such events.
wait_event() {
  for _ in $(seq 200); do
    [ "$(grep -c "\"event\":\"$2\"" "$work/$1.jsonl" 2>/dev/null)" -ge "${3:-1}" ] && return 0
    sleep 0.05
  done
  echo "(gave up waiting for $2 on $1)"
}
status_lines() { ding status "$1" | sed -n '/^  unread/,$p'; }
message() { printf '%s\n' "$2" | ding send "$1" - >/dev/null; }

for agent in aggressive careful; do
  ding up "$work/agents.kdl" --agent "$agent" | sed -n 1p
done
wait_for careful "adapter      up"

say "a human starts typing in both terminals, then a message arrives"
ding intervene aggressive "refactor the par" --no-enter >/dev/null
ding intervene careful "refactor the par" --no-enter >/dev/null
message aggressive "Please review PR 12."
message careful "Please review PR 12."
wait_for careful "held: composer nonempty"
echo "aggressive:"; wait_event aggressive submitted; status_lines aggressive
echo "careful:"; status_lines careful

say "the human finishes the draft; the turn ends in a confirmation menu"
ding intervene careful "ser" >/dev/null
wait_event careful menu-shown
wait_event aggressive menu-shown
message aggressive "CI failed on main."
message careful "CI failed on main."
wait_for careful "held: activity unknown"
echo "aggressive:"; wait_event aggressive menu-answered; status_lines aggressive
echo "careful:"; status_lines careful

say "the human answers the menu (No); the careful agent goes idle with an empty composer"
ding intervene careful "2" --no-enter >/dev/null
wait_for careful "staged: rung"
wait_event careful submitted 2
echo "careful:"; status_lines careful

say "status of the careful agent"
ding status careful

say "what reached each agent, and when (seconds since the demo started)"
for agent in aggressive careful; do
  echo "$agent:"
  python3 - "$work/$agent.jsonl" "$start_ms" <<'PY' || cat "$work/$agent.jsonl"
import json, sys
start = int(sys.argv[2])
for line in open(sys.argv[1]):
    e = json.loads(line)
    t = (e["t"] - start) / 1000
    what = e["event"]
    if what == "submitted":
        how = "pasted" if e.get("pasted") else "typed"
        print(f"  {t:6.2f}s  submitted ({how}): {e['text'][:96]}")
    elif what == "menu-answered":
        cause = " by the Return after a paste" if e.get("afterPaste") else ""
        print(f"  {t:6.2f}s  menu answered {e['answer'].upper()}{cause}")
    elif what in ("menu-shown", "queued"):
        print(f"  {t:6.2f}s  {what}" + (f": {e['text'][:80]}" if "text" in e else ""))
PY
done
say "done: every process started by the demo is stopped on exit"
