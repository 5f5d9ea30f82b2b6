"""Return after a paste (or a raw burst of typed text): submitted, or a newline?

    python3 scripts/probe/gemini/p_paste.py [DELAYS]     (default 0,20,50,100,200,500)

For each kind in KINDS (default paste1,pasteN,raw: a one-line bracketed
paste, a three-line bracketed paste, the same one-line text written raw with
no paste markers) and each delay (ms between the end of the text and the CR,
sent in one `send` so the host keeps the timing): submitted if the mock
received a request within 3 s. If not, the screen is printed (SAVE=1 keeps
the first of each kind as a fixture), then Ctrl+C clears the draft.
No probe hooks are declared (HOOKS=1 declares them).
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gmprobe as g

delays = [int(x) for x in (sys.argv[1] if len(sys.argv) > 1 else "0,20,50,100,200,500").split(",")]
kinds = os.environ.get("KINDS", "paste1,pasteN,raw").split(",")
reps = int(os.environ.get("REPS", "1"))
run = g.Run("paste", hooks=g.EVENTS if os.environ.get("HOOKS") else [])
saved = set()
results = []
try:
    run.start()
    run.wait_idle()
    run.wait_quiet(1000)
    n = 0
    for kind in kinds:
        for d in delays:
            for rep in range(reps):
                n += 1
                text = f"paste test {n} {kind} {d}ms"
                if kind == "paste1":
                    body = g.PASTE_START + text.encode() + g.PASTE_END
                elif kind == "pasteN":
                    body = g.PASTE_START + (text + "\nsecond line\nthird line").encode() + g.PASTE_END
                else:
                    body = text.encode()
                before = len(run.requests())
                steps = [body] + ([d] if d else []) + [g.CR]
                run.pty.send(*steps, origin="delivery")
                try:
                    run.wait_for("request", lambda: len(run.requests()) > before, 3.0)
                    ok = True
                except TimeoutError:
                    ok = False
                if ok:
                    # wait for the turn's end: the reply on screen and the spinner gone
                    run.wait("reply", lambda s: not g.busy(s) and g.shows(s, "mock reply"), 30)
                    run.wait_quiet(800)
                    results.append((kind, d, rep, "submitted"))
                else:
                    s = run.snap()
                    print(g.dump(s, f"{kind} {d}ms NOT submitted"))
                    if os.environ.get("SAVE") and kind not in saved:
                        saved.add(kind)
                        run.save(f"enter-as-newline-{kind}", s,
                                 f"{kind}: text then CR {d} ms later in one send: the CR became a newline in the draft, nothing submitted.",
                                 "ready", "nonempty")
                    run.pty.send(g.CTRL_C)
                    run.wait_idle(10)
                    run.wait_quiet(800)
                    results.append((kind, d, rep, "newline"))
                print(results[-1], flush=True)
finally:
    print("\n".join(map(str, results)))
    print("left:", run.close())
