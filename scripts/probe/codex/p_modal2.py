"""Review-hooks browser: does a pasted notice (which contains the letter t)
trust hooks? And what does option 3 / Esc do?"""
import json, os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cxprobe import *
OUT = os.path.join(REPO, "fixtures/providers/codex/snapshots")
run = Run("modal2")
try:
    pty = run.start()
    run.wait_text("Hooks need review", 60)
    pty.send(CR)
    s = run.wait_text("t trust all", 10)
    run.save(f"{OUT}/hooks-browser.json", s, "the /hooks browser opened from the review modal (1. Review hooks)")
    pty.notice("[ding] 1 unread inbox message in /x/new: a.md. Read each file, then archive it: ding archive w a.md")
    time.sleep(2.0)
    s = run.snap()
    print("---- after DING transport in the browser"); print(rows_text(s))
    run.save(f"{OUT}/hooks-browser-after-notice.json", s, "the /hooks browser after DING's transport (paste, 200 ms, CR)")
    print("config hooks.state:", [l for l in open(run.config) if "hooks.state" in l or "trusted_hash" in l][:20])
    pty.send(ESC); time.sleep(1.0); s = run.snap(); print("---- after esc"); print(rows_text(s))
    pty.send(ESC); time.sleep(1.0); s = run.snap(); print("---- after esc 2"); print(rows_text(s))
    print("requests:", run.summary()); print("hooks:", [h["event"] for h in run.hooks()])
finally:
    print("left:", run.close())
