"""Untrusted hooks at startup: the "Hooks need review" modal, when it shows,
and what DING's transport (paste, 200 ms, CR) does to it."""
import json, os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cxprobe import *
OUT = os.path.join(REPO, "fixtures/providers/codex/snapshots")
run = Run("modal")
try:
    pty = run.start()
    s = run.wait_idle_composer()
    print("composer at t+%.2fs rev %d" % (s["_t"] - run.t_start, s["revision"]))
    s = run.wait_text("Hooks need review", 60)
    print("modal at t+%.2fs rev %d" % (s["_t"] - run.t_start, s["revision"]))
    print(rows_text(s)); print(json.dumps([r for r in s["runs"]]))
    print("cursor", s["cursor"])
    run.save(f"{OUT}/hooks-review-modal.json", s, "startup modal: untrusted hooks in CODEX_HOME/hooks.json (shown about 1-2 s after the empty composer)")
    time.sleep(1.0)
    pty.notice("[ding] 1 unread inbox message in /x/new: a.md. Read each file, then archive it: ding archive w a.md")
    time.sleep(2.0)
    s = run.snap()
    print("---- after DING transport"); print(rows_text(s))
    run.save(f"{OUT}/hooks-review-after-notice.json", s, "after DING's transport (paste, 200 ms, CR) into the review modal")
    time.sleep(1.0)
    print("requests:", run.summary()); print("hooks:", [h["event"] for h in run.hooks()])
    print("config tail:", open(run.config).read()[-400:])
finally:
    print("left:", run.close())
