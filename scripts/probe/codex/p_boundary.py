"""Which hook boundary carries text into the model's context, and at what
cost in model requests (title requests counted apart)."""
import json, os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cxprobe import *
run = Run("boundary", hooks_file=False)

def ctx(event, text):
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})

def turn(prompt, label):
    before = len(run.requests())
    run.pty.send(prompt.encode(), 300, CR)
    run.wait_for("Stop", lambda: sum(h["event"] == "Stop" for h in run.hooks()) > turn.stops, 60)
    time.sleep(1.5)
    turn.stops = sum(h["event"] == "Stop" for h in run.hooks())
    new = run.requests()[before:]
    print(f"==== {label}: {len(new)} requests: " + ", ".join(f"{r['class']}(call={r['callInTurn']})" for r in new))
    for r in new:
        marks = [(t["role"], t["text"][:90]) for t in r["texts"] if "DING-" in t["text"]]
        print(f"   seq {r['seq']} {r['class']} carries: {marks}")
    return new
turn.stops = 0

try:
    pty = run.start(session_flag_args(run))
    run.wait_idle_composer()
    run.reply("SessionStart", ctx("SessionStart", "DING-SESSIONSTART backlog a.md"))
    run.reply("UserPromptSubmit", ctx("UserPromptSubmit", "DING-UPS b.md"))
    turn("hello", "SessionStart + UserPromptSubmit additionalContext")
    run.reply("PreToolUse", ctx("PreToolUse", "DING-PRETOOL c.md"))
    run.reply("PostToolUse", ctx("PostToolUse", "DING-POSTTOOL d.md"))
    turn("mock:run 2", "PreToolUse + PostToolUse additionalContext")
    run.reply("PostToolUse", "DING-POSTTOOL-PLAIN e.md\n")
    run.reply("UserPromptSubmit", "DING-UPS-PLAIN f.md\n")
    turn("mock:run 2", "plain stdout from UserPromptSubmit and PostToolUse")
    run.reply("Stop", json.dumps({"decision": "block", "reason": "DING-STOP g.md"}))
    turn("hello again", "Stop decision block")
    run.reply("PreModelRequest", "DING-PREMODEL-PLAIN h.md\n")
    run.reply("PostModelRequest", json.dumps({"systemMessage": "DING-POSTMODEL i.md"}))
    turn("one more", "PreModelRequest plain stdout, PostModelRequest systemMessage")
    s = run.snap(); print("\n".join(r for r in s["rows"] if r.strip()))
    stops = [h["payload"].get("stop_hook_active") for h in run.hooks() if h["event"] == "Stop"]
    print("Stop stop_hook_active sequence:", stops)
    print(run.summary())
    # Keep the developer message shapes for the findings.
    for r in run.requests():
        for item in (r["body"].get("input") or []) if isinstance(r["body"], dict) else []:
            txt = json.dumps(item)
            if "DING-" in txt and item.get("type") == "message":
                print("ITEM", r["seq"], txt[:400])
finally:
    print("left:", run.close())
