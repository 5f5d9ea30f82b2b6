"""The app-server dying under the TUI (findings §12): our own `codex
app-server --listen unix://SOCK` with DING's hooks as `-c` arguments, the TUI
under `ding pty` as `codex --remote unix://SOCK` (as DING's launcher runs
them), and the app-server ended with SIGKILL.

  p_dead_server.py SCENARIO [TRIAL]

SCENARIO is one of
  idle     kill while idle: the screen at 2 s and 10 s, 60 s of waiting for
           the TUI to exit, a keystroke and a Return, then a new app-server
           on the same socket
  restart  kill while idle, a new app-server on the same socket 3 s later:
           how long the TUI takes to come back, whether its thread is loaded
           on the new server, a typed prompt, `thread/queue/add`
  afterturn  the same after one completed turn (the thread has a rollout)
  turn     the same, killed during a turn (`mock:run 5`; TRIAL 2+: `mock:slow 8`)
  sigterm, sighup, ctrlc   kill, then that signal (or Ctrl-C typed) to the
           TUI while it reconnects
  tuikill  SIGKILL to the TUI while the app-server lives: does the server exit?
DOWN=S (default 3) is how long no server listens in restart, afterturn and
turn. TRIAL (default 1) names the run (dead-SCENARIO-TRIAL); with SAVE=1 the
idle run writes fixtures/providers/codex/snapshots/app-server-gone-*.json.
"""
import json, os, signal, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cxprobe import *
OUT = os.path.join(REPO, "fixtures/providers/codex/snapshots")

scenario = sys.argv[1]
trial = int(sys.argv[2]) if len(sys.argv) > 2 else 1
save = os.environ.get("SAVE") == "1"
run = Run(f"dead-{scenario}-{trial}", hooks_file=False)
m = Marks(run)
T0 = None
EXPECT_GONE = {"screen": "unrecognized", "composer": "unknown"}


def rel():
    return time.time() - T0 if T0 else 0.0


def log(text):
    print(f"[{rel():7.3f}] {text}", flush=True)


def screen(s, label):
    rows = [r.rstrip() for r in s["rows"]]
    while rows and not rows[-1]:
        rows.pop()
    log(f"screen {label} (rev {s['revision']}, cursor {s.get('cursor')}):")
    for i, r in enumerate(rows):
        if r:
            print(f"      {i:2} |{r}")


def child():
    return run.pty.status()["child"]


def reconnecting(s):
    return shows(s, "Reconnecting")


def server_args():
    return [run.binary, "app-server", "--listen", f"unix://{run.app_socket}"] + session_flag_args(run)


def new_server(tag):
    """A new app-server on the same socket path with the same arguments; if it
    cannot bind over the stale socket file, says so, removes it and tries again."""
    p = run.spawn(server_args(), f"app-server-{tag}")
    t = time.time()
    ok = None
    while time.time() - t < 10:
        if p.poll() is not None:
            ok = False
            break
        try:
            r = Rpc(run.app_socket, timeout=2)
            r.close()
            ok = True
            break
        except Exception:
            time.sleep(0.05)
    log(f"new app-server {tag} pid {p.pid}: {'listening' if ok else 'NOT listening'} "
        f"after {time.time() - t:.2f} s, exit={p.poll()}")
    if not ok:
        err = open(os.path.join(run.dir, f"app-server-{tag}.stderr")).read()[-600:]
        log(f"its stderr: {err!r}")
        if p.poll() is None:
            end_pid(p.pid)
        os.unlink(run.app_socket)
        log("removed the stale socket file; again")
        return new_server(tag + "b")
    return p


def kill_server():
    global T0
    p = run.procs[0]
    T0 = time.time()
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    m.mark("app-server SIGKILL")
    log(f"app-server {p.pid} SIGKILLed; socket file still there: {os.path.exists(run.app_socket)}")


def wait_back(what="the TUI back", timeout=60):
    """Polls the screen until 'Reconnecting' is gone; returns that snapshot."""
    t = time.time()
    s = run.wait(what, lambda s: not reconnecting(s), timeout, poll=0.05)
    log(f"{what}: 'Reconnecting' gone {time.time() - t:.2f} s after the new server listened")
    s = run.wait("a composer", lambda s: any(r.startswith("› ") for r in s["rows"][18:]), 10, poll=0.05)
    log(f"{what}: the composer drawn again {time.time() - t:.2f} s after the new server listened")
    return s


def rpc2():
    r = Rpc(run.app_socket)
    r.initialize()
    return r


def loaded(r):
    return r.call("thread/loaded/list", {})["result"]["data"]


def after_reconnect(old_tid):
    """What the new server knows; a typed prompt; then thread/queue/add."""
    r = rpc2()
    for i in range(20):
        data = loaded(r)
        if data:
            break
        time.sleep(0.25)
    log(f"new server thread/loaded/list: {data} (TUI's thread was {old_tid}; same: {old_tid in data})")
    tid = data[0] if data else old_tid
    try:
        read = r.call("thread/read", {"threadId": old_tid, "includeTurns": True})
        turns = read.get("result", {}).get("thread", {}).get("turns")
        log(f"thread/read old thread: {'error ' + json.dumps(read['error'])[:200] if 'error' in read else f'{len(turns or [])} turns'}")
    except Exception as e:
        log(f"thread/read raised {e!r}")
    if old_tid not in data and os.environ.get("RESUME", "1") == "1":
        res = r.call("thread/resume", {"threadId": old_tid})
        log(f"thread/resume {old_tid} from the second client: "
            f"{('error ' + json.dumps(res['error'])) if 'error' in res else 'ok'}"[:240])
        time.sleep(1.5)
        screen(run.snap(), "1.5 s after that resume")
        log(f"thread/loaded/list after the resume: {loaded(r)}")
    n_req, n_stop = len(run.requests()), run.stops()
    run.pty.send(b"prompt after reconnect", 300, CR)
    m.mark("typed prompt after reconnect")
    try:
        run.wait_for("Stop", lambda: run.stops() > n_stop, 20)
        log(f"typed prompt: Stop fired; model requests +{len(run.requests()) - n_req}")
    except TimeoutError:
        log(f"typed prompt: no Stop in 20 s; model requests +{len(run.requests()) - n_req}")
    time.sleep(1.0)
    screen(run.snap(), "after the typed prompt")
    data = loaded(r)
    log(f"thread/loaded/list now: {data}")
    for t in data:
        tid = t
    n_stop = run.stops()
    reply = queue_add(r, tid, "after-reconnect", m)
    log(f"thread/queue/add on {tid}: {json.dumps(reply)[:200]}")
    try:
        run.wait_for("Stop", lambda: run.stops() > n_stop, 20)
        log(f"queue/add: a turn ran (Stop); reached requests {run.seen('after-reconnect')}")
    except TimeoutError:
        log(f"queue/add: no Stop in 20 s; reached {run.seen('after-reconnect')}; queue {queue_list(r, tid)}")
    time.sleep(1.0)
    screen(run.snap(), "after queue/add")
    r.pump(0.3)
    log("second client notifications: " + ", ".join(sorted({msg.get('method') or '?' for _, msg in r.notifications})))
    return r


rpc = None
try:
    pty, rpc, tid = run.start_remote()
    m.mark(f"thread {tid}")
    print(f"TUI thread {tid}; child {child()}; socket {run.app_socket}", flush=True)
    screen(run.snap(), "before")

    if scenario == "afterturn":
        n = run.stops()
        pty.send(b"first prompt", 300, CR)
        run.wait_for("Stop", lambda: run.stops() > n, 30)
        run.wait("idle", idle_screen, 20); time.sleep(1.0)
        screen(run.snap(), "after a first turn")

    if scenario == "turn":
        prompt = b"mock:run 5" if trial == 1 else b"mock:slow 8"
        pty.send(prompt, 300, CR)
        if trial == 1:
            run.wait_text("background terminal running", 20)
        else:
            run.wait_for("streaming", lambda: len(run.requests()) >= 1 and run.count("PreModelRequest") >= 1, 20)
            time.sleep(1.5)
        screen(run.snap(), "mid-turn")

    if scenario == "tuikill":
        server = run.procs[0]
        pid = child()["pid"]
        T0 = time.time()
        os.kill(pid, signal.SIGKILL)
        log(f"TUI {pid} SIGKILLed")
        rpc.pump(1.0)
        for i in range(30):
            if server.poll() is not None:
                break
            time.sleep(1)
        log(f"app-server {server.pid}: {'exited ' + str(server.returncode) if server.poll() is not None else 'still running'}")
        log(f"thread/loaded/list on it: {loaded(rpc) if server.poll() is None else '-'}")
        log(f"pty child: {child()}")
        raise SystemExit

    try:
        rpc.pump(0.2)
    except Exception:
        pass
    kill_server()
    try:
        rpc.pump(1.0)
        log("our RPC connection: still open after 1 s")
    except Exception as e:
        log(f"our RPC connection: {type(e).__name__} {e}")
    s2 = run.wait("2 s", lambda s: rel() >= 2.0, 5, poll=0.02)
    screen(s2, "2 s after the kill")
    if save and scenario == "idle":
        s2x = dict(s2); s2x["_expect"] = EXPECT_GONE
        run.save(f"{OUT}/app-server-gone-reconnecting.json", s2x,
                 "Codex 0.169.0 TUI (--remote unix://SOCK, own app-server with DING's hooks as -c arguments), idle with an empty composer, "
                 "2 s after its app-server was SIGKILLed: 'Reconnecting to server…' under the history; stays so while no server listens")

    if scenario in ("sigterm", "sighup", "ctrlc"):
        sig = {"sigterm": signal.SIGTERM, "sighup": signal.SIGHUP, "ctrlc": None}[scenario]
        time.sleep(1.0)
        pid = child()["pid"]
        t = time.time()
        if sig:
            os.kill(pid, sig)
        else:
            pty.send(b"\x03")
        name = sig.name if sig else "Ctrl-C"
        log(f"{name} to the TUI {pid}")
        while time.time() - t < 30 and "pid" in child():
            time.sleep(0.02)
        log(f"TUI after {name}: {child()} within {time.time() - t:.2f} s")
        screen(run.snap(), f"after {name}")
        raise SystemExit

    if scenario == "idle":
        s10 = run.wait("10 s", lambda s: rel() >= 10.0, 15, poll=0.1)
        screen(s10, "10 s after the kill")
        if save:
            s10x = dict(s10); s10x["_expect"] = EXPECT_GONE
            run.save(f"{OUT}/app-server-gone-reconnecting-10s.json", s10x,
                     "the same TUI 10 s after its app-server was SIGKILLed: unchanged, 'Reconnecting to server…' (no exit, no error)")
        revs = set()
        while rel() < 60:
            revs.add(run.snap()["revision"])
            if "pid" not in child():
                break
            time.sleep(0.5)
        log(f"after 60 s: child {child()}; screen revisions seen 10-60 s: {sorted(revs)[:5]}..{len(revs)} distinct")
        screen(run.snap(), "60 s after the kill")
        n_req = len(run.requests())
        pty.type("hello"); time.sleep(1.0)
        s = run.snap(); screen(s, "1 s after typing 'hello'")
        pty.send(CR); time.sleep(1.5)
        s = run.snap(); screen(s, "1.5 s after a Return")
        if save:
            sx = dict(s); sx["_expect"] = EXPECT_GONE
            run.save(f"{OUT}/app-server-gone-after-return.json", sx,
                     "the same TUI 60 s after the kill: 'hello' typed and Return pressed while 'Reconnecting to server…'")
        log(f"model requests since: {len(run.requests()) - n_req}; hooks UserPromptSubmit: {run.count('UserPromptSubmit')}")
        pty.send(ESC); time.sleep(1.0)
        screen(run.snap(), "1 s after an Esc")
        t = time.time()
        new_server("2")
        s = wait_back()
        screen(s, "back")
        time.sleep(2.0)
        log(f"model requests since the keystrokes: {len(run.requests()) - n_req}; UserPromptSubmit: {run.count('UserPromptSubmit')}")
        screen(run.snap(), "2 s after back")
        rpc = after_reconnect(tid)

    if scenario in ("restart", "afterturn", "turn"):
        time.sleep(max(0, float(os.environ.get("DOWN", "3")) - rel()))
        n_req = len(run.requests())
        new_server("2")
        t_listen = time.time()
        s = wait_back()
        screen(s, "back")
        if scenario == "turn":
            time.sleep(8.0)
            log(f"turn after reconnect: model requests +{len(run.requests()) - n_req}, Stops {run.stops()}, "
                f"hooks {[h['event'] for h in run.hooks()][-6:]}")
            screen(run.snap(), "8 s after back")
        rpc = after_reconnect(tid)
finally:
    print(m.timeline())
    print(run.summary())
    print("pty child at the end:", child() if run.pty else None)
    print("left:", [(p, c[:60]) for p, c in run.close()])
