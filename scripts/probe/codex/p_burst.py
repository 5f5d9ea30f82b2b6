"""Enter after a per-character burst (each character its own write, 1 ms
apart: what a fast paste without bracketed-paste markers looks like), then
D ms, then CR. Submitted = UserPromptSubmit within 2 s. 3 repetitions."""
import json, os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cxprobe import *
run = Run("burst", hooks_file=False)
TEXT = "[ding] 1 unread inbox message in /x/new: a.md. Read it, then archive it."
results = {}
REPS = int(os.environ.get("REPS", "3"))
try:
    pty = run.start(session_flag_args(run, events=["UserPromptSubmit", "Stop"]))
    run.wait_idle_composer()
    for d in [int(a) for a in sys.argv[1:]] or [0, 60, 100, 130, 200, 300]:
        for rep in range(REPS):
            steps = []
            for ch in TEXT.encode():
                steps += [bytes([ch]), 1]
            steps = steps[:-1] + ([d] if d else []) + [CR]
            ok, _ = try_submit(run, steps, len(TEXT))
            results.setdefault(d, []).append(ok)
            print("burst", d, rep, "submitted" if ok else "NEWLINE", flush=True)
            time.sleep(0.5)
    print("summary:", {f"{k}ms": sum(v) for k, v in results.items()}, f"of {REPS} submitted")
finally:
    print("left:", run.close())
