"""Probe kit for the real Codex CLI TUI under `ding pty`, model-free.

Not production code: the scripts in this directory use it to record the facts
in docs/providers/codex-findings.md. One `Run` is one scratch directory with

* `ding-eval model-server --api openai` (log: model/requests.jsonl),
* a home from `ding-eval harness-env codex` (home/.codex),
* a probe hook for every Codex hook event (hooklog.py; log: hooks.jsonl),
* `ding pty` running codex, driven through the PTY host's control socket.

`Run.close()` ends every process it started, by pid: the PTY host (which
hangs up codex), every `codex` process whose environment has this run's
CODEX_HOME (the app-server daemon and its pid-update loop, or our own
app-server), then the model server.
"""

import base64
import json
import os
import signal
import socket
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
# PROBE_DING names another ding binary (say, one built with its own CARGO_TARGET_DIR).
DING = os.environ.get("PROBE_DING") or os.path.join(REPO, "target", "debug", "ding")
# The model server and the harness homes are the evaluation's binary's.
DING_EVAL = os.environ.get("PROBE_DING_EVAL") or os.path.join(os.path.dirname(DING), "ding-eval")
# Scratch runs live here, so that captured screens and payloads show neutral
# paths (the same convention as the shared captures) without any rewriting.
BASE = os.environ.get("PROBE_BASE", "/home/agent/cx")

EVENTS = [
    "SessionStart", "UserPromptSubmit", "PreModelRequest", "PostModelRequest",
    "PreToolUse", "PermissionRequest", "PostToolUse", "PreCompact", "PostCompact",
    "SubagentStart", "SubagentStop", "Stop", "Interrupt", "SessionEnd",
]

ESC = b"\x1b"
PASTE_START = b"\x1b[200~"
PASTE_END = b"\x1b[201~"
CR = b"\r"


def now_ms():
    return int(time.time() * 1000)


def codex_binary():
    out = subprocess.run(["bash", os.path.join(REPO, "scripts/install-harnesses.sh"), "--check"],
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        if line.startswith("DING_HARNESS_CODEX="):
            return line.split("=", 1)[1]
    raise RuntimeError("no codex binary")


# ---------------------------------------------------------------- PTY host

class Pty:
    def __init__(self, path):
        self.path = path

    def request(self, req, timeout=15):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        s.connect(self.path)
        s.sendall((json.dumps(req) + "\n").encode())
        buf = b""
        while b"\n" not in buf:
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
        s.close()
        return json.loads(buf.split(b"\n", 1)[0])

    def snapshot(self):
        snap = self.request({"op": "snapshot"})
        snap["_t"] = time.time()
        return snap

    def status(self):
        return self.request({"op": "status"})

    def send(self, *steps, origin=None):
        """steps: bytes (written) or int/float (wait ms)."""
        wire = []
        for step in steps:
            if isinstance(step, (bytes, bytearray)):
                wire.append({"write": base64.b64encode(step).decode()})
            else:
                wire.append({"waitMs": int(step)})
        req = {"op": "send", "steps": wire}
        if origin:
            req["origin"] = origin
        return self.request(req)

    def type(self, text):
        return self.send(text.encode())

    def notice(self, text, delay_ms=200):
        """DING's transport: bracketed paste, delay, CR."""
        return self.send(PASTE_START + text.encode() + PASTE_END, delay_ms, CR, origin="delivery")


def rows_text(snap):
    return "\n".join(snap["rows"])


def shows(snap, text):
    return any(text in row for row in snap["rows"])


# ------------------------------------------------- app-server (WebSocket)

class Rpc:
    """JSON-RPC over a WebSocket over a Unix socket (codex app-server --listen unix://PATH)."""

    def __init__(self, path, timeout=20):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(timeout)
        self.s.connect(path)
        key = base64.b64encode(os.urandom(16)).decode()
        self.s.sendall((
            "GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = self.s.recv(4096)
            if not chunk:
                raise RuntimeError("app-server closed during the handshake: %r" % buf)
            buf += chunk
        head, self.rest = buf.split(b"\r\n\r\n", 1)
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise RuntimeError("no upgrade: %r" % head)
        self.next_id = 1
        self.notifications = []   # (t, message) for every message that is not our reply
        self.replies = {}

    def _read_exact(self, n):
        while len(self.rest) < n:
            chunk = self.s.recv(65536)
            if not chunk:
                raise EOFError("app-server closed")
            self.rest += chunk
        out, self.rest = self.rest[:n], self.rest[n:]
        return out

    def _send_frame(self, opcode, payload):
        head = bytes([0x80 | opcode])
        n = len(payload)
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 65536:
            head += bytes([0x80 | 126]) + n.to_bytes(2, "big")
        else:
            head += bytes([0x80 | 127]) + n.to_bytes(8, "big")
        mask = os.urandom(4)
        self.s.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def _read_message(self):
        data = b""
        while True:
            b0, b1 = self._read_exact(2)
            opcode, fin = b0 & 0x0F, b0 & 0x80
            n = b1 & 0x7F
            if n == 126:
                n = int.from_bytes(self._read_exact(2), "big")
            elif n == 127:
                n = int.from_bytes(self._read_exact(8), "big")
            if b1 & 0x80:
                mask = self._read_exact(4)
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(self._read_exact(n)))
            else:
                payload = self._read_exact(n)
            if opcode == 9:
                self._send_frame(10, payload)
                continue
            if opcode == 8:
                raise EOFError("app-server sent close")
            if opcode in (0, 1, 2):
                data += payload
                if fin:
                    return json.loads(data)

    def send(self, message):
        self._send_frame(1, json.dumps(message).encode())

    def pump(self, seconds):
        """Reads messages for `seconds`."""
        deadline = time.time() + seconds
        while time.time() < deadline:
            self.s.settimeout(max(0.05, deadline - time.time()))
            try:
                msg = self._read_message()
            except socket.timeout:
                break
            self._file(msg)

    def _file(self, msg):
        if "id" in msg and ("result" in msg or "error" in msg) and "method" not in msg:
            self.replies[msg["id"]] = msg
        else:
            self.notifications.append((time.time(), msg))

    def call(self, method, params=None, timeout=30):
        rid = self.next_id
        self.next_id += 1
        msg = {"id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        deadline = time.time() + timeout
        while rid not in self.replies:
            if time.time() > deadline:
                raise TimeoutError(method)
            self.s.settimeout(max(0.05, deadline - time.time()))
            try:
                self._file(self._read_message())
            except socket.timeout:
                pass
        return self.replies.pop(rid)

    def initialize(self, name="ding-probe", experimental=True):
        reply = self.call("initialize", {
            "clientInfo": {"name": name, "version": "0.0.0"},
            "capabilities": {"experimentalApi": experimental},
        })
        self.send({"method": "initialized"})
        return reply

    def close(self):
        try:
            self.s.close()
        except OSError:
            pass


# ---------------------------------------------------------------- a run

def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def end_pid(pid, grace=5.0):
    if not alive(pid):
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.time() + grace
    while alive(pid) and time.time() < deadline:
        time.sleep(0.05)
    if alive(pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def pids_with_env(name, value):
    marker = f"{name}={value}".encode()
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                env = f.read().split(b"\0")
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in env and alive(int(entry)):
            out.append((int(entry), cmd))
    return out


class Run:
    def __init__(self, name, permission="manual", base=BASE, hooks=True, hooks_file=True):
        self.name = name
        os.makedirs(base, exist_ok=True)
        self.hook_script = os.path.join(base, "hooklog.py")
        subprocess.run(["cp", os.path.join(HERE, "hooklog.py"), self.hook_script], check=True)
        self.dir = os.path.join(base, name)
        subprocess.run(["rm", "-rf", self.dir], check=True)
        os.makedirs(self.dir)
        self.binary = codex_binary()
        self.procs = []          # Popen objects we started, ended in reverse order
        self.model_dir = os.path.join(self.dir, "model")
        os.makedirs(self.model_dir)
        self.model_log = os.path.join(self.model_dir, "requests.jsonl")
        port_file = os.path.join(self.model_dir, "port")
        self.model = subprocess.Popen(
            [DING_EVAL, "model-server", "--api", "openai", "--log", self.model_log,
             "--port-file", port_file],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(self.model_dir, "stderr"), "w"))
        deadline = time.time() + 10
        while not (os.path.exists(port_file) and open(port_file).read().strip()):
            if time.time() > deadline:
                raise RuntimeError("model server port")
            time.sleep(0.05)
        self.port = int(open(port_file).read().strip())
        self.home = os.path.join(self.dir, "home")
        self.project = os.path.join(self.dir, "project")
        launch = json.loads(subprocess.run(
            [DING_EVAL, "harness-env", "codex", "--binary", self.binary, "--home", self.home,
             "--cwd", self.project, "--model-url", f"http://127.0.0.1:{self.port}",
             "--permission", permission], capture_output=True, text=True, check=True).stdout)
        self.launch = launch
        self.env = dict(os.environ)
        self.env.update(launch["env"])
        self.codex_home = launch["env"]["CODEX_HOME"]
        self.config = os.path.join(self.codex_home, "config.toml")
        self.hooklog = os.path.join(self.dir, "hooks.jsonl")
        self.replies = os.path.join(self.dir, "replies")
        os.makedirs(self.replies)
        if hooks and hooks_file:
            self.write_hooks()
        self.pty = None
        self.pty_proc = None

    # -- hooks
    def hook_command(self, event):
        return f"python3 {self.hook_script} {event} {self.hooklog} {self.replies}"

    def hooks_json(self):
        return {"hooks": {e: [{"hooks": [{"type": "command", "command": self.hook_command(e),
                                          "timeout": 30}]}] for e in EVENTS}}

    def write_hooks(self):
        with open(os.path.join(self.codex_home, "hooks.json"), "w") as f:
            json.dump(self.hooks_json(), f, indent=1)

    def reply(self, event, text, once=True, exit_code=None, sleep=None):
        base = os.path.join(self.replies, event)
        with open(base, "w") as f:
            f.write(text)
        if exit_code is not None:
            open(base + ".exit", "w").write(str(exit_code))
        if sleep is not None:
            open(base + ".sleep", "w").write(str(sleep))
        if once:
            open(base + ".once", "w").write("")

    def hooks(self):
        try:
            return [json.loads(l) for l in open(self.hooklog)]
        except OSError:
            return []

    def append_config(self, text):
        with open(self.config, "a") as f:
            f.write("\n" + text + "\n")

    def count(self, event):
        return sum(h["event"] == event for h in self.hooks())

    def stops(self):
        return self.count("Stop")

    def seen(self, tag):
        """Where `tag`.md's notice reached the model (see `reached`)."""
        return reached(self, tag)

    # -- model
    def requests(self):
        try:
            return [json.loads(l) for l in open(self.model_log)]
        except OSError:
            return []

    def summary(self):
        return "\n".join(
            f"{r['seq']} t={r['t']} {r['class']} turn={r['turn']} call={r['callInTurn']} "
            f"key={(r.get('turnKey') or '')[-8:]} prompt={r['prompt']!r}"
            for r in self.requests())

    # -- codex under ding pty
    def start(self, args=(), cols=80, rows=24, extra_env=None, argv=None):
        sockdir = os.path.join(self.dir, "rt")
        os.makedirs(sockdir, mode=0o700, exist_ok=True)
        os.chmod(sockdir, 0o700)
        self.sock = os.path.join(sockdir, "pty.sock")
        env = dict(self.env)
        if extra_env:
            env.update(extra_env)
        cmd = argv or ([self.binary] + list(args))
        self.pty_stderr = os.path.join(self.dir, "pty.stderr")
        self.pty_proc = subprocess.Popen(
            [DING, "pty", "--socket", self.sock, "--session", self.name, "--cwd", self.project,
             "--size", f"{cols}x{rows}", "--runtime-dir", sockdir, "--"] + cmd,
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=open(self.pty_stderr, "w"))
        self.t_start = time.time()
        deadline = time.time() + 10
        while not os.path.exists(self.sock):
            if time.time() > deadline:
                raise RuntimeError("pty socket")
            time.sleep(0.02)
        self.pty = Pty(self.sock)
        return self.pty

    def start_remote(self, launcher=False, hooks=True, experimental=True, server_env=None, tui_env=None):
        """Codex against our own app-server: with `launcher`, both as one
        harness under `ding pty` (launcher.sh); else the app-server spawned
        here and the TUI `--remote` under `ding pty`. DING's hooks (and their
        trust) go to the app-server, which runs them. Waits for the empty
        composer and the TUI's thread; returns (pty, rpc, thread id)."""
        args = session_flag_args(self) if hooks else []
        if launcher:
            sock = os.path.join(self.dir, "rt", "codex-app.sock")
            os.makedirs(os.path.dirname(sock), mode=0o700, exist_ok=True)
            pty = self.start(argv=["sh", os.path.join(HERE, "launcher.sh"), self.binary, sock] + args,
                             extra_env=tui_env)
        else:
            sock = os.path.join(self.dir, "as.sock")
            self.spawn([self.binary, "app-server", "--listen", f"unix://{sock}"] + args, "app-server",
                       extra_env=server_env)
            self.wait_for("the app-server socket", lambda: os.path.exists(sock), 20)
            pty = self.start(["--remote", f"unix://{sock}"], extra_env=tui_env)
        self.app_socket = sock
        self.composer_snap = self.wait_idle_composer()
        rpc = Rpc(sock)
        rpc.initialize(experimental=experimental)
        tid = self.wait_for("the TUI's thread", lambda: (rpc.call("thread/loaded/list", {})["result"]["data"] or [None])[0],
                            20, poll=0.2)
        return pty, rpc, tid

    def spawn(self, argv, log_name, extra_env=None):
        env = dict(self.env)
        if extra_env:
            env.update(extra_env)
        p = subprocess.Popen(argv, env=env, cwd=self.project, stdin=subprocess.DEVNULL,
                             stdout=open(os.path.join(self.dir, log_name + ".stdout"), "w"),
                             stderr=open(os.path.join(self.dir, log_name + ".stderr"), "w"))
        self.procs.append(p)
        return p

    def snap(self):
        return self.pty.snapshot()

    def wait(self, what, pred, timeout=45, poll=0.05):
        deadline = time.time() + timeout
        last = None
        while time.time() < deadline:
            last = self.snap()
            if pred(last):
                return last
            time.sleep(poll)
        raise TimeoutError(f"{what}; last screen:\n{rows_text(last) if last else None}")

    def wait_for(self, what, probe, timeout=45, poll=0.05):
        deadline = time.time() + timeout
        while time.time() < deadline:
            value = probe()
            if value:
                return value
            time.sleep(poll)
        raise TimeoutError(what)

    def wait_text(self, text, timeout=45):
        return self.wait(repr(text), lambda s: shows(s, text), timeout)

    def wait_idle_composer(self, timeout=45):
        return self.wait("empty composer", empty_composer, timeout)

    def save(self, path, snap, note):
        snap = dict(snap)
        snap["_note"] = note
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            json.dump(snap, f, indent=1, ensure_ascii=False)
            f.write("\n")

    def pty_log(self):
        try:
            return [json.loads(l) for l in open(self.pty_stderr) if l.startswith("{")]
        except OSError:
            return []

    def codex_processes(self):
        return pids_with_env("CODEX_HOME", self.codex_home)

    def close(self):
        left = []
        if self.pty_proc and self.pty_proc.poll() is None:
            end_pid(self.pty_proc.pid)
            self.pty_proc.wait()
        for p in reversed(self.procs):
            if p.poll() is None:
                end_pid(p.pid)
                p.wait()
        for pid, cmd in self.codex_processes():
            left.append((pid, cmd))
            end_pid(pid)
        if self.model.poll() is None:
            end_pid(self.model.pid)
            self.model.wait()
        return left


def empty_composer(snap):
    """`› ` + a dim placeholder and nothing else on the row (not bold/inverse)."""
    for i, text in enumerate(snap["rows"]):
        if not text.startswith("› ") or len(text) <= 2:
            continue
        placeholder = text[2:]
        if any(r["row"] == i and r["col"] == 2 and r.get("dim") and r["text"] == placeholder
               for r in snap["runs"]):
            return True
    return False


def busy(snap):
    return any("esc to interrupt" in row for row in snap["rows"])


# ------------------------------------------- DING's hooks, per invocation

def toml_str(s):
    return json.dumps(s, ensure_ascii=False)


def session_flag_args(run, events=None):
    """`-c` arguments that declare the probe hooks and trust exactly them, for
    this invocation only (no file is written; Codex then runs embedded)."""
    import trust_hash
    hooks = run.hooks_json()
    if events is not None:
        hooks["hooks"] = {e: g for e, g in hooks["hooks"].items() if e in events}
    args = []
    for event, groups in hooks["hooks"].items():
        h = groups[0]["hooks"][0]
        args += ["-c", f"hooks.{event}=[{{hooks=[{{type=\"command\",command={toml_str(h['command'])},timeout={h['timeout']}}}]}}]"]
    states = ",".join(f"{toml_str(k)}={{trusted_hash={toml_str(v)}}}"
                      for k, v in trust_hash.offline("/<session-flags>/config.toml", hooks).items())
    return args + ["-c", f"hooks.state={{{states}}}"]


class Marks:
    """A timeline of what the probe saw on screen, beside the hook and model logs."""

    def __init__(self, run):
        self.run = run
        self.items = []

    def mark(self, label, snap=None):
        t = snap["_t"] if snap else time.time()
        self.items.append((int(t * 1000), label))

    def timeline(self):
        rows = [(t, "screen", l) for t, l in self.items]
        rows += [(h["t"], "hook", h["event"] + hook_detail(h)) for h in self.run.hooks()]
        rows += [(r["t"], "model", f"{r['class']} turn={r['turn']} call={r['callInTurn']} prompt={r['prompt']!r}"[:110])
                 for r in self.run.requests()]
        rows.sort()
        t0 = rows[0][0] if rows else 0
        return "\n".join(f"{(t - t0) / 1000:8.3f} {kind:6} {label}" for t, kind, label in rows)


def hook_detail(h):
    p = h["payload"] if isinstance(h["payload"], dict) else {}
    bits = []
    for k in ("source", "prompt", "tool_name", "trigger", "stop_hook_active", "reason"):
        if k in p:
            bits.append(f"{k}={str(p[k])[:40]!r}")
    if h.get("answered"):
        bits.append("answered")
    return (" " + " ".join(bits)) if bits else ""


# ------------------------------------------- shared by the delivery probes

def notice(tag):
    """A DING-style notice naming the one file `tag`.md."""
    return (f"[ding] 1 unread inbox message in /home/agent/cx/inbox/new: {tag}.md. "
            "Read each file, then archive it: ding archive w FILE")


def reached(run, tag):
    """(seq, turn, callInTurn) of every request whose texts carry `tag`.md's notice."""
    return [(r["seq"], r["turn"], r["callInTurn"]) for r in run.requests()
            if any(f"new: {tag}.md" in t["text"] for t in r["texts"])]


def count(run, event):
    return sum(h["event"] == event for h in run.hooks())


def idle_screen(snap):
    """What a screen-only check would call idle (the streaming hole makes it wrong mid-reply)."""
    return empty_composer(snap) and not busy(snap)


def queue_add(rpc, tid, tag, marks):
    marks.mark(f"rpc queue/add {tag}")
    return rpc.call("thread/queue/add", {"threadId": tid, "clientUserMessageId": f"ding-{tag}",
                                        "input": [{"type": "text", "text": notice(tag), "text_elements": []}]})


def queue_list(rpc, tid):
    return [(q["clientUserMessageId"], q["id"])
            for q in rpc.call("thread/queue/list", {"threadId": tid}).get("result", {}).get("data", [])]


def resume_queue(run, rpc, tid, marks):
    """thread/queue/start, then waits for the turn it starts (if any) to end."""
    n = count(run, "Stop")
    marks.mark("rpc queue/start")
    reply = rpc.call("thread/queue/start", {"threadId": tid})
    try:
        run.wait_for("Stop", lambda: count(run, "Stop") > n, 15)
    except TimeoutError:
        marks.mark("queue/start started nothing")
    run.wait("idle", idle_screen, 20)
    time.sleep(1)
    return reply


def try_submit(run, steps, leftover, origin=None):
    """Sends `steps`; True if UserPromptSubmit fired within 2 s (then waits
    for the turn's Stop), else False with the screen, after erasing the
    `leftover` characters the Return left in the composer as a newline."""
    n_ups, n_stop = count(run, "UserPromptSubmit"), count(run, "Stop")
    run.pty.send(*steps, origin=origin)
    try:
        run.wait_for("submit", lambda: count(run, "UserPromptSubmit") > n_ups, 2.0)
    except TimeoutError:
        snap = run.snap()
        run.pty.send(b"\x15" * 3)  # Ctrl-U kills the lines
        time.sleep(0.3)
        if not empty_composer(run.snap()):
            run.pty.send(b"\x7f" * (leftover + 4))
        run.wait_idle_composer()
        return False, snap
    run.wait_for("stop", lambda: count(run, "Stop") > n_stop, 30)
    run.wait_idle_composer()
    return True, None
