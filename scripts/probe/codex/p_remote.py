"""Native delivery without PTY input: our own `codex app-server --listen
unix://PATH`, the TUI under `ding pty` with `--remote unix://PATH`, and RPC
from a second client. Scenarios A-G in one session (see findings)."""
import json, os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cxprobe import *
OUT = os.path.join(REPO, "fixtures/providers/codex/snapshots")
run = Run("remote", hooks_file=False)
m = Marks(run)

only = set(sys.argv[1:])

def composer_row(s):
    rows = [i for i, r in enumerate(s["rows"]) if r.startswith("›") and any(x["row"] == i and x["col"] == 0 and x.get("bold") and not x.get("inverse") for x in s["runs"])]
    return s["rows"][rows[-1]] if rows else None

def turn_start(rpc, tid, tag, **extra):
    params = {"threadId": tid, "input": [{"type": "text", "text": notice(tag), "text_elements": []}]}
    params.update(extra)
    m.mark(f"rpc turn/start {tag}")
    reply = rpc.call("turn/start", params)
    m.mark(f"rpc turn/start {tag} answered: {json.dumps(reply)[:160]}")
    return reply

def section(name):
    print(f"\n######## {name}", flush=True)
    return not only or name[0] in only

try:
    pty, rpc, tid = run.start_remote(server_env={"PROBE_TAG": "app-server-env"}, tui_env={"PROBE_TAG": "tui-env"})
    m.mark(f"thread {tid}")
    rev0 = run.snap()["revision"]

    if section("A idle, empty composer: turn/start"):
        n = run.stops(); turn_start(rpc, tid, "A")
        s = run.wait("A on screen", lambda s: shows(s, "A.md"), 20); m.mark("A on screen", s)
        run.wait_for("Stop", lambda: run.stops() > n, 30); s = run.wait("idle", idle_screen, 20)
        run.save(f"{OUT}/remote-turn-start-idle.json", s, "after RPC turn/start on an idle TUI (own app-server, TUI --remote): the notice shows as a user message")
        print("A reached requests", run.seen("A"))

    if section("B human draft in the composer: turn/start"):
        pty.type("please refactor the parser"); run.wait_text("please refactor the parser"); m.mark("draft typed")
        n = run.stops(); turn_start(rpc, tid, "B")
        s = run.wait("B on screen", lambda s: shows(s, "B.md"), 20); m.mark("B on screen", s)
        run.save(f"{OUT}/remote-turn-start-with-draft-busy.json", s, "RPC turn/start while a human draft is in the composer: turn running")
        print("composer during B:", composer_row(s))
        run.wait_for("Stop", lambda: run.stops() > n, 30); time.sleep(1.0); s = run.snap()
        run.save(f"{OUT}/remote-turn-start-with-draft-after.json", s, "after the RPC turn ended: the human draft is still in the composer")
        print("composer after B:", composer_row(s)); print("B reached", run.seen("B"))
        pty.send(b"\x7f" * len("please refactor the parser")); run.wait_idle_composer()

    if section("C approval dialog open: turn/start"):
        marker = os.path.join(run.dir, "marker-C")
        pty.send(f"mock:permission {marker}".encode(), 300, CR); m.mark("human prompt mock:permission")
        run.wait_text("Press enter to confirm or esc to cancel", 30); m.mark("dialog open")
        try:
            turn_start(rpc, tid, "C")
        except Exception as e:
            m.mark(f"turn/start C raised {e!r}")
        time.sleep(3.0); s = run.snap()
        run.save(f"{OUT}/remote-turn-start-during-approval.json", s, "3 s after RPC turn/start while the approval dialog was open")
        print("dialog still open:", shows(s, "Press enter to confirm"), "marker:", os.path.exists(marker), "C reached", run.seen("C"))
        pty.send(ESC); m.mark("human Esc on the dialog")
        run.wait("idle", idle_screen, 30); time.sleep(4.0)
        print("after Esc: C reached", run.seen("C"), "marker:", os.path.exists(marker))
        print(json.dumps(rpc.call("thread/queue/list", {"threadId": tid}))[:400])

    if section("D mid-turn (command running): turn/start"):
        n = run.stops()
        pty.send(b"mock:run 6", 300, CR); run.wait_text("background terminal running", 20); m.mark("tool running")
        turn_start(rpc, tid, "D")
        run.wait_for("Stop", lambda: run.stops() > n, 40); run.wait("idle", idle_screen, 20); time.sleep(1)
        print("D reached", run.seen("D"))

    if section("E mid-turn, then the human presses Esc: turn/start"):
        pty.send(b"mock:run 20", 300, CR); run.wait_text("background terminal running", 20); m.mark("tool running")
        turn_start(rpc, tid, "E")
        time.sleep(1.0); pty.send(ESC); m.mark("human Esc")
        run.wait("idle", idle_screen, 30); time.sleep(4.0)
        print("E reached after Esc", run.seen("E"))
        print(json.dumps(rpc.call("thread/queue/list", {"threadId": tid}))[:400])
        n = run.stops(); pty.send(b"next human prompt", 300, CR); run.wait_for("Stop", lambda: run.stops() > n, 30); time.sleep(1)
        print("E reached after the next human prompt", run.seen("E"))

    if section("F idle: thread/inject_items"):
        before = len(run.requests())
        m.mark("rpc inject_items F")
        print(json.dumps(rpc.call("thread/inject_items", {"threadId": tid, "items": [
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": notice("F")}]}]})))
        time.sleep(3.0); s = run.snap()
        print("requests after inject:", len(run.requests()) - before, "F on screen:", shows(s, "F.md"))
        n = run.stops(); pty.send(b"prompt after inject", 300, CR); run.wait_for("Stop", lambda: run.stops() > n, 30); time.sleep(1)
        print("F reached", run.seen("F"))

    if section("G idle: thread/queue/add"):
        n = run.stops(); m.mark("rpc queue/add G")
        print(json.dumps(rpc.call("thread/queue/add", {"threadId": tid, "clientUserMessageId": "ding-claim-7",
                                                       "input": [{"type": "text", "text": notice("G"), "text_elements": []}]}))[:400])
        try:
            run.wait_for("Stop", lambda: run.stops() > n, 15)
        except TimeoutError:
            m.mark("queue/add alone started no turn")
            print(json.dumps(rpc.call("thread/queue/list", {"threadId": tid}))[:400])
            print(json.dumps(rpc.call("thread/queue/start", {"threadId": tid}))[:400]); m.mark("rpc queue/start")
            run.wait_for("Stop", lambda: run.stops() > n, 20)
        run.wait("idle", idle_screen, 20); time.sleep(1)
        print("G reached", run.seen("G"))
        run.save(f"{OUT}/remote-queue-add-idle.json", run.snap(), "after RPC thread/queue/add on an idle TUI")
finally:
    try:
        rpc.pump(0.5)
        methods = {}
        for t, msg in rpc.notifications:
            methods[msg.get("method")] = methods.get(msg.get("method"), 0) + 1
        print("notifications seen by the second client:", methods)
        json.dump([(t, msg) for t, msg in rpc.notifications], open(os.path.join(run.dir, "notifications.json"), "w"))
    except Exception as e:
        print("rpc", e)
    print(m.timeline())
    print(run.summary())
    print("pty input events:", [(e.get("event"), e.get("op"), e.get("bytes")) for e in run.pty_log() if e.get("event") in ("delivery", "intervention")])
    print("hook env tags:", sorted({h["env"].get("PROBE_TAG") for h in run.hooks()}))
    print("left:", [(p, c[:60]) for p, c in run.close()])
