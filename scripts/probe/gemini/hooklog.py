#!/usr/bin/env python3
"""A probe hook for Gemini CLI: logs every call and answers what a reply file says.

Run by Gemini CLI as `python3 hooklog.py EVENT [LOG [REPLIES]]` (settings.json `hooks`);
LOG and REPLIES default to $PROBE_HOOKLOG and $PROBE_REPLIES. Appends one JSON line
to $PROBE_HOOKLOG: when it started and ended (Unix ms), the event, the payload
read on stdin, the DING_*, GEMINI_* and CLAUDE_* environment, its pid and parent pid.

The answer comes from $PROBE_REPLIES/EVENT (printed to stdout as is) and, if
present, EVENT.exit (exit code) and EVENT.sleep (seconds to wait before
answering: parks the hook) and EVENT.stderr (written to stderr). A file EVENT.once is removed after one use, along
with its reply, so a reply can be armed for exactly one call.
"""
import json, os, sys, time

event = sys.argv[1]
start = time.time()
raw = sys.stdin.read()
try:
    payload = json.loads(raw)
except Exception:
    payload = raw
replies = sys.argv[3] if len(sys.argv) > 3 else os.environ.get("PROBE_REPLIES", "")
out, code, nap, err = "", 0, 0.0, ""
if replies:
    base = os.path.join(replies, event)
    try:
        out = open(base).read()
    except OSError:
        pass
    try:
        code = int(open(base + ".exit").read().strip())
    except (OSError, ValueError):
        pass
    try:
        nap = float(open(base + ".sleep").read().strip())
    except (OSError, ValueError):
        pass
    try:
        err = open(base + ".stderr").read()
    except OSError:
        pass
    if os.path.exists(base + ".once"):
        for suffix in ("", ".exit", ".sleep", ".stderr", ".once"):
            try:
                os.remove(base + suffix)
            except OSError:
                pass
if nap:
    time.sleep(nap)
env = {k: v for k, v in os.environ.items() if k.startswith(("DING_", "GEMINI_", "CLAUDE_", "PROBE_TAG"))}
line = {
    "t": int(start * 1000),
    "tEnd": int(time.time() * 1000),
    "event": event,
    "payload": payload,
    "env": env,
    "pid": os.getpid(),
    "ppid": os.getppid(),
    "answered": out,
    "exit": code,
}
log = sys.argv[2] if len(sys.argv) > 2 else os.environ.get("PROBE_HOOKLOG")
if log:
    with open(log, "a") as f:
        f.write(json.dumps(line) + "\n")
sys.stdout.write(out)
sys.stderr.write(err)
sys.exit(code)
