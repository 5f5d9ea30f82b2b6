"""App-server + TUI as one harness under `ding pty` (launcher.sh): the startup
backlog as the first thing a fresh session gets (thread/queue/add before any
prompt), where hooks run, socket permissions, and process lifetime on PTY
host restart and shutdown."""
import json, os, stat, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cxprobe import *
OUT = os.path.join(REPO, "fixtures/providers/codex/snapshots")
run = Run("launcher", hooks_file=False)
m = Marks(run)
try:
    pty, rpc, tid = run.start_remote(launcher=True)
    sock = run.app_socket
    m.mark("composer", run.composer_snap); m.mark(f"thread {tid}")
    st = os.stat(sock); print("socket mode", oct(stat.S_IMODE(st.st_mode)), "dir mode", oct(stat.S_IMODE(os.stat(os.path.dirname(sock)).st_mode)))
    backlog = "[ding] 2 unread inbox messages in /home/agent/cx/inbox/new: a.md, b.md. Read each file, then archive it: ding archive w FILE"
    r = rpc.call("thread/queue/add", {"threadId": tid, "clientUserMessageId": "ding-claim-1",
                                     "input": [{"type": "text", "text": backlog, "text_elements": []}]})
    m.mark("queue/add backlog " + ("ok" if "result" in r else json.dumps(r)))
    run.wait_for("Stop", lambda: any(h["event"] == "Stop" for h in run.hooks()), 30)
    s = run.wait("idle", lambda s: empty_composer(s) and not busy(s), 20); time.sleep(0.5); s = run.snap()
    run.save(f"{OUT}/remote-startup-backlog.json", s, "a fresh session whose first turn is the startup backlog, queued by RPC before any prompt")
    h0 = run.hooks()[0]
    print("first hook:", h0["event"], h0["payload"].get("source"), "session_id == thread:", h0["payload"].get("session_id") == tid)
    print("hook env has DING identity:", {k: h0["env"].get(k) for k in ("DING_SESSION", "DING_INCARNATION")})
    print("pty identity:", {k: pty.status().get(k) for k in ("session", "incarnation")})
    before = run.codex_processes(); print("codex processes:", [(p, c.split()[1] if len(c.split()) > 1 else c[:40]) for p, c in before])
    m.mark("restart op")
    print("restart:", pty.request({"op": "restart"}, timeout=30))
    time.sleep(2.0)
    after = run.codex_processes()
    print("old pids still alive after restart:", [p for p, _ in before if alive(p)], "now:", [(p, c.split()[1] if len(c.split()) > 1 else '') for p, c in after])
    s = run.wait_idle_composer(); m.mark("composer after restart", s)
    end_pid(run.pty_proc.pid); run.pty_proc.wait(); time.sleep(1.0)
    print("alive after PTY host SIGTERM:", [(p, c[:60]) for p, c in run.codex_processes()])
finally:
    print(m.timeline())
    print(run.summary())
    print("left:", [(p, c[:60]) for p, c in run.close()])
