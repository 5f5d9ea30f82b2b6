"""Is a streaming model reply visible as busy on the screen? Samples the
screen every 50 ms through a `mock:slow 4` turn and prints when the
`esc to interrupt` status line is there."""
import json, os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cxprobe import *
OUT = os.path.join(REPO, "fixtures/providers/codex/snapshots")
run = Run("stream", hooks_file=False)
try:
    pty = run.start(session_flag_args(run))
    run.wait_idle_composer()
    pty.send(b"mock:slow 4", 300, CR)
    t0 = time.time(); samples = []; saved = False
    while time.time() - t0 < 7:
        s = run.snap()
        b = busy(s); e = empty_composer(s)
        samples.append((round(s["_t"] - t0, 2), b, e, s["revision"]))
        if e and not b and not saved and any("mock slow reply" in r for r in s["rows"]) and not run.hooks() or (e and not b and not saved and not any(h["event"] == "Stop" for h in run.hooks()) and t0 + 1 < time.time()):
            run.save(f"{OUT}/busy-streaming-looks-idle.json", s, "mid-turn while the model streams text: no Working line, looks idle (no Stop yet)")
            saved = True
        time.sleep(0.05)
    final = run.snap()
    run.save(f"{OUT}/idle-after-streamed-reply.json", final, "the same session after the streamed turn's Stop")
    looks = json.load(open(f"{OUT}/busy-streaming-looks-idle.json"))
    print("final rows:"); print("\n".join(r for r in final["rows"] if r.strip()))
    print("mid-stream cursor", looks["cursor"], "final cursor", final["cursor"])
    strip = lambda snap: [(r["row"], r["col"], r["text"], tuple(sorted((k, v) for k, v in r.items() if k not in ("row", "col", "text")))) for r in snap["runs"]]
    print("runs only mid-stream:", [x for x in strip(looks) if x not in strip(final)])
    print("runs only final:", [x for x in strip(final) if x not in strip(looks)])
    runs = []
    for t, b, e, r in samples:
        if not runs or runs[-1][1:] != (b, e):
            runs.append((t, b, e))
    print("changes (t, busy-line, empty-composer):", runs)
    print(Marks(run).timeline())
finally:
    print("left:", run.close())
