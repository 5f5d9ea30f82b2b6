"""Codex's own daemon (default mode): where its processes and files live,
what `codex app-server daemon stop` leaves, and ending the rest by pid."""
import json, os, subprocess, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cxprobe import *
run = Run("daemon", hooks_file=False)
def ps():
    out = []
    for pid, cmd in run.codex_processes():
        try:
            st = open(f"/proc/{pid}/stat").read().split(") ", 1)[1].split()
            ppid, pgid, sid = st[1], st[2], st[3]
        except OSError:
            continue
        out.append(f"{pid} ppid={ppid} pgid={pgid} sid={sid} {cmd[:150]}")
    return out
try:
    pty = run.start()
    run.wait_idle_composer()
    run.wait_for("daemon", lambda: any("managed-daemon" in c for _, c in run.codex_processes()), 40, poll=0.5)
    time.sleep(2)
    print("pty host pid", run.pty_proc.pid, "tui pid", pty.status()["child"]["pid"])
    print("\n".join(ps()))
    ctl = os.path.join(run.codex_home, "app-server-control")
    for root, dirs, files in os.walk(ctl):
        for f in dirs + files:
            p = os.path.join(root, f)
            print("  ", p, "->", os.readlink(p) if os.path.islink(p) else "", oct(os.lstat(p).st_mode))
    tgt = [os.readlink(os.path.join(ctl, f)) for f in os.listdir(ctl) if os.path.islink(os.path.join(ctl, f))]
    for t in tgt:
        d = os.path.dirname(t)
        print("shared dir", d, sorted(os.listdir(d)))
    print("packages:", subprocess.run(["du", "-sh", os.path.join(run.codex_home, "packages")], capture_output=True, text=True).stdout.strip())
    print("daemon version:", subprocess.run([run.binary, "app-server", "daemon", "version"], env=run.env, capture_output=True, text=True, timeout=30).stdout.strip()[:300])
    # Exit the TUI: does the daemon outlive it?
    pty.send(b"/quit", 300, CR)
    run.wait_for("tui exit", lambda: pty.status()["child"]["state"] != "running", 20)
    time.sleep(2); print("after the TUI quit:\n" + "\n".join(ps()))
    r = subprocess.run([run.binary, "app-server", "daemon", "stop"], env=run.env, capture_output=True, text=True, timeout=30)
    print("daemon stop:", r.returncode, r.stdout.strip()[:200], r.stderr.strip()[-200:])
    time.sleep(2); print("after daemon stop:\n" + "\n".join(ps()))
finally:
    print("left (ended by pid):", [(p, c[:80]) for p, c in run.close()])
    time.sleep(1); print("still alive:", run.codex_processes())
