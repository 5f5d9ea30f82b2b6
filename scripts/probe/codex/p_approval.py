"""The approval dialog against the hooks: when PermissionRequest fires
relative to the dialog on screen (20 ms sampling), whether the dialog waits
for the hook, what Yes and Esc fire; then /clear and SessionStart's source."""
import json, os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cxprobe import *
run = Run("approval", hooks_file=False)
m = Marks(run)
DIALOG = "Press enter to confirm or esc to cancel"

def ask(tag, answer, hook_sleep=None):
    if hook_sleep:
        run.reply("PermissionRequest", "", sleep=hook_sleep)
    marker = os.path.join(run.dir, f"marker-{tag}")
    n = len(run.hooks())
    run.pty.send(f"mock:permission {marker}".encode(), 300, CR); t0 = time.time()
    s = run.wait("dialog", lambda s: shows(s, DIALOG), 30, poll=0.02); seen = s["_t"]
    pr = [h for h in run.hooks()[n:] if h["event"] == "PermissionRequest"]
    pr = pr[0] if pr else None
    print(f"[{tag}] hook sleep {hook_sleep}: PermissionRequest start +{(pr['t']/1000 - t0):.3f}s end +{(pr['tEnd']/1000 - t0):.3f}s; dialog seen +{seen - t0:.3f}s" if pr else f"[{tag}] no PermissionRequest; dialog +{seen - t0:.3f}s")
    m.mark(f"dialog {tag} seen", s)
    time.sleep(0.5)
    run.pty.send(answer); m.mark(f"answered {answer!r}")
    run.wait("idle", lambda s: empty_composer(s) and not busy(s), 30); time.sleep(1.0)
    print(f"[{tag}] after {answer!r}: events {[h['event'] for h in run.hooks()[n:]]} marker {os.path.exists(marker)}")

try:
    pty = run.start(session_flag_args(run))
    run.wait_idle_composer()
    ask("yes", b"y")
    ask("esc", ESC)
    ask("slow-hook", ESC, hook_sleep=2)
    n = len(run.hooks())
    pty.send(b"/clear", 300, CR); m.mark("/clear"); time.sleep(2.0)
    print("after /clear:", [(h["event"], h["payload"].get("source"), h["payload"].get("reason")) for h in run.hooks()[n:]])
    s = run.snap(); print("\n".join(r for r in s["rows"] if r.strip()))
    pty.send(b"after clear", 300, CR)
    run.wait_for("Stop", lambda: any(h["event"] == "Stop" for h in run.hooks()[n:]), 30)
    print("after the first prompt after /clear:", [(h["event"], h["payload"].get("source"), h["payload"].get("session_id", "")[-6:]) for h in run.hooks()[n:]])
    print("session ids over the run:", sorted({h["payload"].get("session_id", "")[-6:] for h in run.hooks()}))
finally:
    print(m.timeline())
    print(run.summary())
    print("left:", [(p, c[:60]) for p, c in run.close()])
