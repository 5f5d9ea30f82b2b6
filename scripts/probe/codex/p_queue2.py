"""More of thread/queue: a human message queued in the TUI during the same
turn (order, and whether the server's queue lists it), withdrawing a queued
delivery (thread/queue/delete), and the `codex queue --remote` CLI."""
import json, os, subprocess, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cxprobe import *
run = Run("queue2", hooks_file=False)
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
    return rpc.call("thread/queue/add", {"threadId": tid, "clientUserMessageId": f"ding-{tag}",
                                        "input": [{"type": "text", "text": notice(tag), "text_elements": []}]})
def qlist(rpc, tid):
    return [(q["clientUserMessageId"], q["id"]) for q in rpc.call("thread/queue/list", {"threadId": tid}).get("result", {}).get("data", [])]
try:
    sock = os.path.join(run.dir, "rt", "codex-app.sock"); os.makedirs(os.path.dirname(sock), mode=0o700, exist_ok=True)
    pty = run.start(argv=["sh", os.path.join(HERE, "launcher.sh"), run.binary, sock] + session_flag_args(run))
    run.wait_idle_composer()
    rpc = Rpc(sock); rpc.initialize()
    tid = run.wait_for("thread", lambda: (rpc.call("thread/loaded/list", {})["result"]["data"] or [None])[0], 20, poll=0.2)

    print("#### human queues in the TUI during a turn, DING queues by RPC")
    n = stops()
    pty.send(b"mock:run 5", 300, CR); run.wait_text("background terminal running", 20)
    qadd(rpc, tid, "R1")
    pty.type("human typed during the turn"); run.wait_text("tab to queue message", 10); pty.send(CR); m.mark("human Return (TUI queue)")
    run.wait_text("↳", 10); print("server queue while both wait:", [c for c, _ in qlist(rpc, tid)])
    run.wait_for("two Stops", lambda: stops() >= n + 2, 40); run.wait("idle", idle_screen, 20); time.sleep(1)
    print("human reached", [(r["seq"], r["turn"], r["callInTurn"]) for r in run.requests() if r["prompt"] == "human typed during the turn"], "R1 reached", reached("R1"))

    print("#### withdraw: queue/add during a turn, then queue/delete")
    n = stops()
    pty.send(b"mock:run 4", 300, CR); run.wait_text("background terminal running", 20)
    r = qadd(rpc, tid, "R2"); qid = r["result"]["queuedSubmission"]["id"]
    d = rpc.call("thread/queue/delete", {"threadId": tid, "queuedSubmissionId": qid}); m.mark("rpc queue/delete R2")
    print("delete:", json.dumps(d)[:200], "queue after:", qlist(rpc, tid))
    run.wait_for("Stop", lambda: stops() > n, 30); time.sleep(3); print("R2 reached", reached("R2"))

    print("#### the CLI: codex queue --remote")
    n = stops(); m.mark("codex queue CLI")
    t0 = time.time()
    out = subprocess.run([run.binary, "queue", "--remote", f"unix://{sock}", "--thread", tid, "--message", notice("R3")],
                         env=run.env, capture_output=True, text=True, timeout=60)
    print("cli exit", out.returncode, "took %.2fs" % (time.time() - t0), out.stdout.strip()[:200], out.stderr.strip()[-300:])
    try:
        run.wait_for("Stop", lambda: stops() > n, 15)
    except TimeoutError:
        print("the CLI queued item did not start; queue:", qlist(rpc, tid))
    time.sleep(1); print("R3 reached", reached("R3"))
finally:
    print(m.timeline())
    print(run.summary())
    print("left:", [(p, c[:60]) for p, c in run.close()])
