"""What each setup runs: processes and resident memory once the composer is
up (embedded TUI with session-flag hooks vs launcher: app-server + TUI --remote)."""
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cxprobe import *
def rss(pid):
    for l in open(f"/proc/{pid}/status"):
        if l.startswith("VmRSS"):
            return int(l.split()[1]) // 1024
for mode in ("embedded", "launcher"):
    run = Run(f"cost-{mode}", hooks_file=False)
    try:
        if mode == "embedded":
            run.start(session_flag_args(run))
        else:
            sock = os.path.join(run.dir, "rt", "codex-app.sock"); os.makedirs(os.path.dirname(sock), mode=0o700, exist_ok=True)
            run.start(argv=["sh", os.path.join(HERE, "launcher.sh"), run.binary, sock] + session_flag_args(run))
        s = run.wait_idle_composer(); t = s["_t"] - run.t_start
        run.pty.send(b"hello", 300, CR); run.wait_text("mock reply to turn 1."); time.sleep(2)
        procs = [(p, c.split()[0].rsplit("/", 1)[-1] + " " + " ".join(c.split()[1:3])[:40], rss(p)) for p, c in run.codex_processes() if "ding pty" not in c]
        print(f"{mode}: composer after {t:.2f}s; processes (pid, cmd, RSS MiB): {procs}; total {sum(p[2] for p in procs)} MiB")
    finally:
        run.close()
