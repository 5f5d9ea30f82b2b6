"""thread/queue/add against our own app-server with the TUI --remote: does a
queued delivery wait for the turn to end (never steer), survive Esc and a
denied approval, and leave a human draft alone?"""
import json, os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cxprobe import *
OUT = os.path.join(REPO, "fixtures/providers/codex/snapshots")
run = Run("queue", hooks_file=False)
m = Marks(run)

try:
    pty, rpc, tid = run.start_remote()

    print("#### Q1 busy turn (command running) + queue/add")
    n = run.stops()
    pty.send(b"mock:run 6", 300, CR); run.wait_text("background terminal running", 20)
    queue_add(rpc, tid, "Q1", m); time.sleep(0.5)
    s = run.snap(); run.save(f"{OUT}/remote-queued-during-turn.json", s, "RPC thread/queue/add during a busy turn: how the TUI shows it")
    print("queue:", queue_list(rpc, tid), "screen shows Q1:", shows(s, "Q1.md"))
    run.wait_for("two Stops", lambda: run.stops() >= n + 2, 40); run.wait("idle", idle_screen, 20); time.sleep(1)
    print("Q1 reached", run.seen("Q1"))

    print("#### Q2 busy turn + queue/add, then the human presses Esc")
    pty.send(b"mock:run 20", 300, CR); run.wait_text("background terminal running", 20)
    queue_add(rpc, tid, "Q2", m); time.sleep(0.5); pty.send(ESC); m.mark("human Esc")
    run.wait("idle", idle_screen, 30); time.sleep(4.0)
    s = run.snap(); run.save(f"{OUT}/remote-queue-paused-after-interrupt.json", s, "after Esc: the queued delivery waits, paused")
    print("after Esc: Q2 reached", run.seen("Q2"), "queue:", queue_list(rpc, tid))
    print(json.dumps(resume_queue(run, rpc, tid, m))[:300])
    print("after queue/start: Q2 reached", run.seen("Q2"), "queue:", queue_list(rpc, tid))

    print("#### Q3 approval dialog + queue/add, human denies (Esc)")
    marker = os.path.join(run.dir, "marker-Q3")
    pty.send(f"mock:permission {marker}".encode(), 300, CR); run.wait_text("Press enter to confirm or esc to cancel", 30)
    queue_add(rpc, tid, "Q3", m); time.sleep(2.0)
    s = run.snap(); print("dialog still open:", shows(s, "Press enter to confirm"), "Q3 reached", run.seen("Q3"), "queue:", queue_list(rpc, tid))
    run.save(f"{OUT}/remote-queued-during-approval.json", s, "RPC thread/queue/add while the approval dialog is open")
    pty.send(ESC); m.mark("human Esc on dialog"); run.wait("idle", idle_screen, 30); time.sleep(3.0)
    print("after deny: Q3 reached", run.seen("Q3"), "queue:", queue_list(rpc, tid), "marker:", os.path.exists(marker))
    resume_queue(run, rpc, tid, m)
    print("after queue/start: Q3 reached", run.seen("Q3"), "queue:", queue_list(rpc, tid))

    print("#### Q4 approval dialog + queue/add, human approves (y)")
    marker = os.path.join(run.dir, "marker-Q4")
    n = run.stops()
    pty.send(f"mock:permission {marker}".encode(), 300, CR); run.wait_text("Press enter to confirm or esc to cancel", 30)
    queue_add(rpc, tid, "Q4", m); time.sleep(1.0); pty.send(b"y"); m.mark("human y")
    run.wait_for("two Stops", lambda: run.stops() >= n + 2, 40); run.wait("idle", idle_screen, 20); time.sleep(1)
    print("after approve: Q4 reached", run.seen("Q4"), "marker:", os.path.exists(marker))

    print("#### Q5 human draft + queue/add at idle")
    pty.type("please refactor the parser"); run.wait_text("please refactor the parser")
    n = run.stops(); queue_add(rpc, tid, "Q5", m)
    run.wait_for("Stop", lambda: run.stops() > n, 30); time.sleep(1.0)
    s = run.snap(); print("Q5 reached", run.seen("Q5"), "draft intact:", shows(s, "› please refactor the parser"))
    run.save(f"{OUT}/remote-queue-add-with-draft-after.json", s, "after a queued delivery ran while a human draft sat in the composer")
finally:
    print(m.timeline())
    print(run.summary())
    print("pty input events by DING (origin delivery):", [e for e in run.pty_log() if e.get("event") == "delivery"])
    print("left:", [(p, c[:60]) for p, c in run.close()])
