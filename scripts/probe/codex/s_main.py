"""The main capture run (manual permission: on-request + read-only sandbox),
DING's hooks declared and trusted per invocation (session flags, embedded).
Screens: idle placeholder, draft, busy, busy with a running command, busy with
a draft, queued, idle after a turn, approval dialog, slash menu, after paste,
after compaction. Hook payloads for every event that fires, with a timeline."""
import json, os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cxprobe import *
OUT = os.path.join(REPO, "fixtures/providers/codex")
S = OUT + "/snapshots"
run = Run("main", hooks_file=False)
m = Marks(run)

def cap(name, snap, note):
    run.save(f"{S}/{name}.json", snap, note)
    m.mark("capture " + name, snap)

try:
    pty = run.start(session_flag_args(run))
    s = run.wait_idle_composer(); cap("idle-empty-placeholder", s, "fresh start, empty composer with the dim placeholder")
    time.sleep(3.0)
    m.mark(f"3 s after start: {len(run.hooks())} hook calls")
    s = run.snap(); m.mark(f"revision {s['revision']}")

    pty.type("please refactor the parser")
    s = run.wait_text("please refactor the parser"); cap("draft", s, "a human draft typed into the empty composer, not submitted")
    time.sleep(1.0); s2 = run.snap(); m.mark(f"draft revision after 1 s: {s['revision']} -> {s2['revision']}")
    pty.send(b"\x7f" * len("please refactor the parser"))
    run.wait_idle_composer(); m.mark("draft erased")

    pty.send(b"please mock:run 12", 300, CR); m.mark("submitted mock:run 12")
    s = run.wait_text("Working"); cap("busy", s, "turn started: Working line, composer row looks idle")
    s = run.wait_text("background terminal running", 20); cap("busy-command-running", s, "exec_command (sleep 12) running")
    pty.type("also look at the lexer")
    s = run.wait_text("tab to queue message", 10); cap("busy-draft", s, "a draft typed during the busy turn")
    pty.send(CR); m.mark("Return on the busy draft")
    s = run.wait_text("↳", 10); cap("busy-queued", s, "the draft queued during the turn (Return): ↳ line")
    # The screen looks idle while the last reply streams: wait for Stop.
    run.wait_for("Stop", lambda: any(h["event"] == "Stop" for h in run.hooks()), 60)
    s = run.wait("the Worked-for line", lambda s: empty_composer(s) and shows(s, "Worked for"), 10)
    cap("idle-after-turn", s, "idle after a turn with a command and a queued message (after Stop)")
    time.sleep(1.0)

    pty.send(b"mock:slow 3", 300, CR); m.mark("submitted mock:slow 3")
    s = run.wait_text("Working"); time.sleep(1.0); s = run.snap()
    cap("busy-streaming", s, "a slow model reply streaming (no tool)")
    run.wait("the slow turn's end", lambda s: empty_composer(s) and not busy(s), 30)
    time.sleep(1.0)

    pty.send(b"mock:run 20", 300, CR); m.mark("submitted mock:run 20")
    run.wait_text("background terminal running", 20)
    pty.send(ESC); m.mark("Esc during the running command")
    s = run.wait("idle after the interrupt", lambda s: empty_composer(s) and not busy(s), 30)
    cap("idle-after-interrupt", s, "after Esc interrupted a turn with a running command")
    time.sleep(1.0)

    marker = os.path.join(run.dir, "approval-marker")
    pty.send(f"mock:permission {marker}".encode(), 300, CR); m.mark("submitted mock:permission")
    s = run.wait("the approval dialog", lambda s: shows(s, "Press enter to confirm or esc to cancel"), 30, poll=0.02); cap("approval-dialog", s, "approval dialog for an escalated command")
    time.sleep(2.0); s2 = run.snap(); m.mark(f"dialog revision after 2 s: {s['revision']} -> {s2['revision']}")
    pty.send(ESC); m.mark("Esc on the approval dialog")
    s = run.wait("idle after the cancelled approval", lambda s: empty_composer(s) and not busy(s), 30)
    cap("idle-after-cancelled-approval", s, "after Esc on the approval dialog")
    m.mark(f"marker exists: {os.path.exists(marker)}")
    time.sleep(1.0)

    pty.type("/")
    s = run.wait("slash menu", lambda s: any("/model" in r or "/compact" in r for r in s["rows"]), 10)
    cap("slash-menu", s, "the / command menu, opened by typing /")
    pty.send(b"\x7f"); run.wait_idle_composer(); m.mark("slash menu closed")

    pty.send(PASTE_START + b"pasted text from a human" + PASTE_END)
    s = run.wait_text("pasted text from a human", 10); cap("after-paste", s, "right after a bracketed paste, no Return")
    pty.send(b"\x7f" * len("pasted text from a human")); run.wait_idle_composer()

    pty.send(b"/compact", 300, CR); m.mark("submitted /compact")
    s = run.wait("compaction done", lambda s: empty_composer(s) and not busy(s) and len([r for r in run.requests() if r["class"] == "compaction"]) > 0, 45)
    time.sleep(1.5); s = run.snap(); cap("after-compaction", s, "idle after /compact")

    pty.send(b"after compaction", 300, CR); m.mark("submitted a prompt after compaction")
    run.wait(" reply", lambda s: sum("mock reply" in r for r in s["rows"]) and empty_composer(s) and not busy(s), 45)
    time.sleep(1.0)
    pty.send(b"/quit", 300, CR); m.mark("submitted /quit")
    run.wait_for("codex exit", lambda: run.pty.status()["child"]["state"] != "running", 20)
    m.mark("codex exited")
    time.sleep(0.5)
finally:
    print(m.timeline())
    print("requests:\n" + run.summary())
    print("left:", [(p, c[:60]) for p, c in run.close()])
    import shutil
    shutil.copy(run.hooklog, os.path.join(BASE, "main-hooks.jsonl"))
