"""An async (detached) command hook that finishes while the session is idle:
does it start a turn (like Claude's asyncRewake), or ride the next one?"""
import json, os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cxprobe import *
import trust_hash
run = Run("async", hooks_file=False)
try:
    cmd = run.hook_command("UserPromptSubmit")
    hooks = {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": cmd, "timeout": 30, "async": True}]}],
                       "Stop": [{"hooks": [{"type": "command", "command": run.hook_command("Stop"), "timeout": 30}]}]}}
    args = []
    for event, groups in hooks["hooks"].items():
        h = groups[0]["hooks"][0]
        extra = ",async=true" if h.get("async") else ""
        args += ["-c", f"hooks.{event}=[{{hooks=[{{type=\"command\",command={toml_str(h['command'])},timeout={h['timeout']}{extra}}}]}}]"]
    states = ",".join(f"{toml_str(k)}={{trusted_hash={toml_str(v)}}}" for k, v in trust_hash.offline("/<session-flags>/config.toml", hooks).items())
    args += ["-c", f"hooks.state={{{states}}}"]
    run.reply("UserPromptSubmit", json.dumps({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "DING-ASYNC z.md"}}), sleep=3)
    pty = run.start(args)
    run.wait_idle_composer()
    pty.send(b"hello", 300, CR)
    run.wait_for("Stop", lambda: any(h["event"] == "Stop" for h in run.hooks()), 30)
    t_stop = time.time(); n = len(run.requests())
    run.wait_for("async hook done", lambda: any(h["event"] == "UserPromptSubmit" for h in run.hooks()), 15)
    time.sleep(5)
    print("async hook finished %.1fs after Stop; requests since Stop: %d" % (
        [h for h in run.hooks() if h["event"] == "UserPromptSubmit"][0]["tEnd"] / 1000 - t_stop, len(run.requests()) - n))
    pty.send(b"second prompt", 300, CR)
    run.wait_for("2nd Stop", lambda: sum(h["event"] == "Stop" for h in run.hooks()) >= 2, 30)
    for r in run.requests():
        print(r["seq"], r["class"], r["prompt"], [(t["role"], t["text"][:120]) for t in r["texts"] if "DING-" in t["text"]])
finally:
    print("left:", run.close())
