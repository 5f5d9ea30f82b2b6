"""Enter after a burst of input: submitted or taken as a newline?
For each delay D: (a) bracketed paste of a notice, D ms, CR (DING's transport);
(b) the same text written raw in one write (no paste markers), D ms, CR.
Submitted = UserPromptSubmit fired within 2 s. Each case repeated 3 times."""
import json, os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cxprobe import *
OUT = os.path.join(REPO, "fixtures/providers/codex/snapshots")
run = Run("paste", hooks_file=False)
NOTICE = "[ding] 1 unread inbox message in /home/agent/inbox/new: a.md. Read each file, then archive it: ding archive w FILE"
results = {}
REPS = int(os.environ.get("REPS", "3"))
saved = set()
try:
    pty = run.start(session_flag_args(run, events=["UserPromptSubmit", "Stop"]))
    run.wait_idle_composer()
    delays = [int(a) for a in sys.argv[1:]] or [0, 50, 100, 115, 125, 150, 200]
    for kind in os.environ.get("KINDS", "paste,raw").split(","):
        for d in delays:
            for rep in range(REPS):
                body = (PASTE_START + NOTICE.encode() + PASTE_END) if kind == "paste" else NOTICE.encode()
                ok, s = try_submit(run, [body] + ([d] if d else []) + [CR], len(NOTICE), origin="delivery")
                if not ok and (kind, "newline") not in saved:
                    run.save(f"{OUT}/enter-as-newline-{kind}.json", s, f"{kind} burst then CR after {d} ms: the Return became a newline, nothing submitted")
                    saved.add((kind, "newline"))
                results.setdefault((kind, d), []).append(ok)
                print(kind, d, rep, "submitted" if ok else "NEWLINE", flush=True)
                time.sleep(0.5)
    print("summary:", {f"{k[0]}@{k[1]}ms": sum(v) for k, v in results.items()}, f"of {REPS} submitted")
finally:
    print("left:", run.close())
