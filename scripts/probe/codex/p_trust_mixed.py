"""DING's hooks trusted per invocation (session flags) beside one untrusted
hook of the user's own in CODEX_HOME/hooks.json: which run, and what the
review modal says."""
import json, os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cxprobe import *
run = Run("trust-mixed", hooks_file=False)
try:
    user = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": run.hook_command("UserOwnStop"), "timeout": 30}]}]}}
    json.dump(user, open(os.path.join(run.codex_home, "hooks.json"), "w"))
    pty = run.start(session_flag_args(run, events=["SessionStart", "UserPromptSubmit", "Stop"]))
    s = run.wait("modal", lambda s: shows(s, "Hooks need review"), 30)
    print("\n".join(r for r in s["rows"][:8] if r.strip()))
    pty.send(b"3"); time.sleep(0.3); pty.send(CR); run.wait_idle_composer()
    pty.send(b"hello", 300, CR); run.wait_text("mock reply to turn 1."); time.sleep(1.5)
    print("fired:", sorted({h["event"] for h in run.hooks()}))
    print("config.toml hooks.state entries:", [l.strip() for l in open(run.config) if "hooks.state" in l])
finally:
    print("left:", [(p, c[:50]) for p, c in run.close()])
