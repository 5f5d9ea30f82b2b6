"""More of thread/queue: a human message queued in the TUI during the same
turn (order, and whether the server's queue lists it), withdrawing a queued
delivery (thread/queue/delete), and the `codex queue --remote` CLI."""
import json, os, subprocess, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cxprobe import *
run = Run("queue2", hooks_file=False)
m = Marks(run)

try:
    pty, rpc, tid = run.start_remote(launcher=True)
    sock = run.app_socket

    print("#### human queues in the TUI during a turn, DING queues by RPC")
    n = run.stops()
    pty.send(b"mock:run 5", 300, CR); run.wait_text("background terminal running", 20)
    queue_add(rpc, tid, "R1", m)
    pty.type("human typed during the turn"); run.wait_text("tab to queue message", 10); pty.send(CR); m.mark("human Return (TUI queue)")
    run.wait_text("↳", 10); print("server queue while both wait:", [c for c, _ in queue_list(rpc, tid)])
    run.wait_for("two Stops", lambda: run.stops() >= n + 2, 40); run.wait("idle", idle_screen, 20); time.sleep(1)
    print("human reached", [(r["seq"], r["turn"], r["callInTurn"]) for r in run.requests() if r["prompt"] == "human typed during the turn"], "R1 reached", run.seen("R1"))

    print("#### withdraw: queue/add during a turn, then queue/delete")
    n = run.stops()
    pty.send(b"mock:run 4", 300, CR); run.wait_text("background terminal running", 20)
    r = queue_add(rpc, tid, "R2", m); qid = r["result"]["queuedSubmission"]["id"]
    d = rpc.call("thread/queue/delete", {"threadId": tid, "queuedSubmissionId": qid}); m.mark("rpc queue/delete R2")
    print("delete:", json.dumps(d)[:200], "queue after:", queue_list(rpc, tid))
    run.wait_for("Stop", lambda: run.stops() > n, 30); time.sleep(3); print("R2 reached", run.seen("R2"))

    print("#### the CLI: codex queue --remote")
    n = run.stops(); m.mark("codex queue CLI")
    t0 = time.time()
    out = subprocess.run([run.binary, "queue", "--remote", f"unix://{sock}", "--thread", tid, "--message", notice("R3")],
                         env=run.env, capture_output=True, text=True, timeout=60)
    print("cli exit", out.returncode, "took %.2fs" % (time.time() - t0), out.stdout.strip()[:200], out.stderr.strip()[-300:])
    try:
        run.wait_for("Stop", lambda: run.stops() > n, 15)
    except TimeoutError:
        print("the CLI queued item did not start; queue:", queue_list(rpc, tid))
    time.sleep(1); print("R3 reached", run.seen("R3"))
finally:
    print(m.timeline())
    print(run.summary())
    print("left:", [(p, c[:60]) for p, c in run.close()])
