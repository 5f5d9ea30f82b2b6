"""thread/queue/add against our own app-server with the TUI --remote: does a
queued delivery wait for the turn to end (never steer), survive Esc and a
denied approval, and leave a human draft alone?"""
import json, os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cxprobe import *
OUT = os.path.join(REPO, "fixtures/providers/codex/snapshots")
run = Run("queue", hooks_file=False)
m = Marks(run)

def notice(tag):
    return f"[ding] 1 unread inbox message in /home/agent/cx/inbox/new: {tag}.md. Read each file, then archive it: ding archive w FILE"

def reached(tag):
    return [(r["seq"], r["turn"], r["callInTurn"]) for r in run.requests() if any(f"new: {tag}.md" in t["text"] for t in r["texts"])]

def stops():
    return sum(h["event"] == "Stop" for h in run.hooks())

def idle_screen(s):
    return empty_composer(s) and not busy(s)

def qadd(rpc, tid, tag):
    m.mark(f"rpc queue/add {tag}")
    r = rpc.call("thread/queue/add", {"threadId": tid, "clientUserMessageId": f"ding-{tag}",
                                     "input": [{"type": "text", "text": notice(tag), "text_elements": []}]})
    m.mark(f"queue/add {tag} answered {'error' if 'error' in r else 'ok'} {json.dumps(r.get('error'))[:120] if 'error' in r else ''}")
    return r

def qlist(rpc, tid):
    r = rpc.call("thread/queue/list", {"threadId": tid})
    return [(q["clientUserMessageId"], q["id"][-6:]) for q in r.get("result", {}).get("data", [])]

try:
    sock = os.path.join(run.dir, "as.sock")
    run.spawn([run.binary, "app-server", "--listen", f"unix://{sock}"] + session_flag_args(run), "app-server")
    run.wait_for("socket", lambda: os.path.exists(sock), 20)
    pty = run.start(["--remote", f"unix://{sock}"])
    run.wait_idle_composer()
    rpc = Rpc(sock); rpc.initialize()
    tid = run.wait_for("thread", lambda: (rpc.call("thread/loaded/list", {})["result"]["data"] or [None])[0], 20, poll=0.2)

    print("#### Q1 busy turn (command running) + queue/add")
    n = stops()
    pty.send(b"mock:run 6", 300, CR); run.wait_text("background terminal running", 20)
    qadd(rpc, tid, "Q1"); time.sleep(0.5)
    s = run.snap(); run.save(f"{OUT}/remote-queued-during-turn.json", s, "RPC thread/queue/add during a busy turn: how the TUI shows it")
    print("queue:", qlist(rpc, tid), "screen shows Q1:", shows(s, "Q1.md"))
    run.wait_for("two Stops", lambda: stops() >= n + 2, 40); run.wait("idle", idle_screen, 20); time.sleep(1)
    print("Q1 reached", reached("Q1"))

    print("#### Q2 busy turn + queue/add, then the human presses Esc")
    pty.send(b"mock:run 20", 300, CR); run.wait_text("background terminal running", 20)
    qadd(rpc, tid, "Q2"); time.sleep(0.5); pty.send(ESC); m.mark("human Esc")
    run.wait("idle", idle_screen, 30); time.sleep(4.0)
    s = run.snap(); run.save(f"{OUT}/remote-queue-paused-after-interrupt.json", s, "after Esc: the queued delivery waits, paused")
    print("after Esc: Q2 reached", reached("Q2"), "queue:", qlist(rpc, tid))
    n = stops(); m.mark("rpc queue/start")
    print(json.dumps(rpc.call("thread/queue/start", {"threadId": tid}))[:300])
    try:
        run.wait_for("Stop", lambda: stops() > n, 15)
    except TimeoutError:
        m.mark("queue/start started nothing")
    run.wait("idle", idle_screen, 20); time.sleep(1)
    print("after queue/start: Q2 reached", reached("Q2"), "queue:", qlist(rpc, tid))

    print("#### Q3 approval dialog + queue/add, human denies (Esc)")
    marker = os.path.join(run.dir, "marker-Q3")
    pty.send(f"mock:permission {marker}".encode(), 300, CR); run.wait_text("Press enter to confirm or esc to cancel", 30)
    qadd(rpc, tid, "Q3"); time.sleep(2.0)
    s = run.snap(); print("dialog still open:", shows(s, "Press enter to confirm"), "Q3 reached", reached("Q3"), "queue:", qlist(rpc, tid))
    run.save(f"{OUT}/remote-queued-during-approval.json", s, "RPC thread/queue/add while the approval dialog is open")
    pty.send(ESC); m.mark("human Esc on dialog"); run.wait("idle", idle_screen, 30); time.sleep(3.0)
    print("after deny: Q3 reached", reached("Q3"), "queue:", qlist(rpc, tid), "marker:", os.path.exists(marker))
    n = stops(); rpc.call("thread/queue/start", {"threadId": tid}); m.mark("rpc queue/start")
    try:
        run.wait_for("Stop", lambda: stops() > n, 15)
    except TimeoutError:
        m.mark("queue/start started nothing")
    run.wait("idle", idle_screen, 20); time.sleep(1)
    print("after queue/start: Q3 reached", reached("Q3"), "queue:", qlist(rpc, tid))

    print("#### Q4 approval dialog + queue/add, human approves (y)")
    marker = os.path.join(run.dir, "marker-Q4")
    n = stops()
    pty.send(f"mock:permission {marker}".encode(), 300, CR); run.wait_text("Press enter to confirm or esc to cancel", 30)
    qadd(rpc, tid, "Q4"); time.sleep(1.0); pty.send(b"y"); m.mark("human y")
    run.wait_for("two Stops", lambda: stops() >= n + 2, 40); run.wait("idle", idle_screen, 20); time.sleep(1)
    print("after approve: Q4 reached", reached("Q4"), "marker:", os.path.exists(marker))

    print("#### Q5 human draft + queue/add at idle")
    pty.type("please refactor the parser"); run.wait_text("please refactor the parser")
    n = stops(); qadd(rpc, tid, "Q5")
    run.wait_for("Stop", lambda: stops() > n, 30); time.sleep(1.0)
    s = run.snap(); print("Q5 reached", reached("Q5"), "draft intact:", shows(s, "› please refactor the parser"))
    run.save(f"{OUT}/remote-queue-add-with-draft-after.json", s, "after a queued delivery ran while a human draft sat in the composer")
finally:
    print(m.timeline())
    print(run.summary())
    print("pty input events by DING (origin delivery):", [e for e in run.pty_log() if e.get("event") == "delivery"])
    print("left:", [(p, c[:60]) for p, c in run.close()])
