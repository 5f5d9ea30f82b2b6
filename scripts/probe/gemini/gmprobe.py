"""Probe kit for the real Gemini CLI TUI under `ding pty`, model-free.

Not production code: the scripts in this directory use it to record the facts
in docs/providers/gemini-findings.md. One `Run` is one scratch directory
`$PROBE_BASE/<name>/` (default /home/agent/gm, so captured paths are neutral)
with

* mock_gemini.py on loopback (log: model/requests.jsonl),
* a scratch home (home/.gemini/settings.json; HOME points there),
* a probe hook for every Gemini CLI hook event (hooklog.py; log: hooks.jsonl),
* `ding pty` running `node gemini.js`, driven through the PTY host's control
  socket (`send` for keystrokes, `snapshot` to read).

Environment: DING_HARNESS_GEMINI names Gemini CLI's `bundle/gemini.js` (or a
`gemini` executable); PROBE_DING the ding binary (default
target/release/ding); PROBE_BASE the scratch base; PROBE_NODE the node binary.

`Run.close()` ends every process it started, by pid: the PTY host (which
hangs up Gemini CLI), every process whose environment carries this run's
marker GMPROBE_RUN (Gemini's relaunched child, hooks), then the mock server.
"""

import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
DING = os.environ.get("PROBE_DING") or os.path.join(REPO, "target", "release", "ding")
BASE = os.environ.get("PROBE_BASE", "/home/agent/gm")
# Gemini CLI's bundle/gemini.js (run with node) or a `gemini` executable;
# without DING_HARNESS_GEMINI, the `gemini` found on PATH.
GEMINI = os.environ.get("DING_HARNESS_GEMINI") or shutil.which("gemini") or "gemini"
NODE = os.environ.get("PROBE_NODE") or shutil.which("node") or "node"
NICE = int(os.environ.get("PROBE_NICE", "10"))

EVENTS = [
    "SessionStart", "SessionEnd", "BeforeAgent", "AfterAgent", "BeforeModel", "AfterModel",
    "BeforeToolSelection", "BeforeTool", "AfterTool", "PreCompress", "Notification",
]

ESC = b"\x1b"
CTRL_C = b"\x03"
PASTE_START = b"\x1b[200~"
PASTE_END = b"\x1b[201~"
CR = b"\r"
UP = b"\x1b[A"
DOWN = b"\x1b[B"

# Settings for a clean, model-free start (see gemini-findings.md, question 1).
CLEAN_SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "ide": {"enabled": False, "hasSeenNudge": True},
    "ui": {"showCompatibilityWarnings": False},
}


def now_ms():
    return int(time.time() * 1000)


def gemini_argv(args=()):
    if GEMINI.endswith(".js"):
        cmd = [NODE, GEMINI]
    else:
        cmd = [GEMINI]
    return cmd + list(args)


def deep_merge(a, b):
    out = dict(a)
    for k, v in b.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = deep_merge(out[k], v)
        elif v is None:
            out.pop(k, None)
        else:
            out[k] = v
    return out


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

    def paste(self, text, delay_ms=None):
        steps = [PASTE_START + text.encode() + PASTE_END]
        if delay_ms is not None:
            if delay_ms:
                steps.append(delay_ms)
            steps.append(CR)
        return self.send(*steps, origin="delivery")


def rows_text(snap):
    return "\n".join(snap["rows"])


def shows(snap, text):
    return any(text in row for row in snap["rows"])


def dump(snap, label=""):
    c = snap["cursor"]
    head = f"--- {label} rev={snap['revision']} cursor=({c['row']},{c['col']}) visible={c['visible']}"
    body = "\n".join(f"{i:2}|{r}" for i, r in enumerate(snap["rows"]))
    return head + "\n" + body


# ---------------------------------------------------------------- processes

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


# ---------------------------------------------------------------- a run

class Run:
    """settings: None for no settings.json at all (a bare first start), else
    a dict merged over CLEAN_SETTINGS (a None value deletes a key);
    hooks: the events to declare probe hooks for (all by default)."""

    def __init__(self, name, settings=None, bare=False, hooks=EVENTS, base=BASE, hook_timeout=30000,
                 trust_env=False, git=False):
        self.name = name
        os.makedirs(base, exist_ok=True)
        self.base = base
        self.hook_script = os.path.join(base, "hooklog.py")
        shutil.copy(os.path.join(HERE, "hooklog.py"), self.hook_script)
        self.dir = os.path.join(base, name)
        subprocess.run(["rm", "-rf", self.dir], check=True)
        os.makedirs(self.dir)
        self.procs = []
        self.model_dir = os.path.join(self.dir, "model")
        os.makedirs(self.model_dir)
        self.model_log = os.path.join(self.model_dir, "requests.jsonl")
        port_file = os.path.join(self.model_dir, "port")
        self.model = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "mock_gemini.py"), "--log", self.model_log,
             "--port-file", port_file],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(self.model_dir, "stderr"), "w"))
        deadline = time.time() + 10
        while not os.path.exists(port_file):
            if time.time() > deadline:
                raise RuntimeError("model server port")
            time.sleep(0.05)
        self.port = int(open(port_file).read().strip())
        self.home = os.path.join(self.dir, "home")
        self.gemini_dir = os.path.join(self.home, ".gemini")
        os.makedirs(self.gemini_dir)
        self.project = os.path.join(self.dir, "project")
        os.makedirs(self.project)
        if git:
            subprocess.run(["git", "init", "-q", self.project], check=True)
        self.hooklog = os.path.join(self.dir, "hooks.jsonl")
        self.replies = os.path.join(self.dir, "replies")
        os.makedirs(self.replies)
        self.hook_timeout = hook_timeout
        self.settings_path = os.path.join(self.gemini_dir, "settings.json")
        self.settings = None
        if not bare:
            s = deep_merge(CLEAN_SETTINGS, settings or {})
            if hooks:
                s = deep_merge(s, {"hooks": self.hooks_settings(hooks)})
            self.write_settings(s)
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": self.home,
            "LANG": os.environ.get("LANG", "C.UTF-8"),
            "TERM": "xterm-256color",
            "GEMINI_API_KEY": "dummy",
            "GOOGLE_GEMINI_BASE_URL": f"http://127.0.0.1:{self.port}",
            "GMPROBE_RUN": self.dir,
        }
        if trust_env:
            self.env["GEMINI_CLI_TRUST_WORKSPACE"] = "true"
        self.pty = None
        self.pty_proc = None

    # -- settings and hooks
    def hook_command(self, event):
        return f"python3 {self.hook_script} {event} {self.hooklog} {self.replies}"

    def hooks_settings(self, events=EVENTS):
        return {e: [{"matcher": "*", "hooks": [{"name": f"probe-{e}", "type": "command",
                                                "command": self.hook_command(e),
                                                "timeout": self.hook_timeout}]}] for e in events}

    def write_settings(self, settings):
        self.settings = settings
        with open(self.settings_path, "w") as f:
            json.dump(settings, f, indent=1)

    def reply(self, event, text, once=True, exit_code=None, sleep=None, stderr=None):
        base = os.path.join(self.replies, event)
        if not isinstance(text, str):
            text = json.dumps(text)
        with open(base, "w") as f:
            f.write(text)
        if exit_code is not None:
            open(base + ".exit", "w").write(str(exit_code))
        if sleep is not None:
            open(base + ".sleep", "w").write(str(sleep))
        if stderr is not None:
            open(base + ".stderr", "w").write(stderr)
        if once:
            open(base + ".once", "w").write("")

    def clear_reply(self, event):
        for suffix in ("", ".exit", ".sleep", ".stderr", ".once"):
            try:
                os.remove(os.path.join(self.replies, event) + suffix)
            except OSError:
                pass

    def hooks(self):
        try:
            return [json.loads(l) for l in open(self.hooklog)]
        except OSError:
            return []

    def count(self, event):
        return sum(h["event"] == event for h in self.hooks())

    # -- model
    def requests(self):
        try:
            return [json.loads(l) for l in open(self.model_log)]
        except OSError:
            return []

    def main_requests(self):
        return [r for r in self.requests() if r["kind"] == "stream"]

    def summary(self):
        out = []
        for r in self.requests():
            out.append(f"{r['seq']} t={r['t']} {r['kind']} {r.get('model')} reply={r['reply'][:60]!r} "
                       f"last={r.get('lastUser', '')[-70:]!r}")
        return "\n".join(out)

    # -- gemini under ding pty
    def start(self, args=(), cols=80, rows=24, extra_env=None, argv=None):
        sockdir = os.path.join(self.dir, "rt")
        os.makedirs(sockdir, mode=0o700, exist_ok=True)
        os.chmod(sockdir, 0o700)
        self.sock = os.path.join(sockdir, "pty.sock")
        if os.path.exists(self.sock):
            os.remove(self.sock)
        env = dict(self.env)
        if extra_env:
            env.update({k: v for k, v in extra_env.items() if v is not None})
            for k, v in extra_env.items():
                if v is None:
                    env.pop(k, None)
        cmd = argv or gemini_argv(args)
        if NICE:
            cmd = ["nice", "-n", str(NICE)] + cmd
        self.pty_stderr = os.path.join(self.dir, "pty.stderr")
        self.pty_proc = subprocess.Popen(
            [DING, "pty", "--socket", self.sock, "--session", self.name, "--cwd", self.project,
             "--size", f"{cols}x{rows}", "--runtime-dir", sockdir, "--"] + cmd,
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=open(self.pty_stderr, "a"))
        self.t_start = time.time()
        deadline = time.time() + 10
        while not os.path.exists(self.sock):
            if time.time() > deadline:
                raise RuntimeError("pty socket")
            time.sleep(0.02)
        self.pty = Pty(self.sock)
        return self.pty

    def stop(self):
        """Ends the PTY host (hangs up Gemini) and any straggler of this run but the mock."""
        if self.pty_proc and self.pty_proc.poll() is None:
            end_pid(self.pty_proc.pid)
            self.pty_proc.wait()
        left = []
        deadline = time.time() + 5
        while time.time() < deadline:
            left = [p for p in pids_with_env("GMPROBE_RUN", self.dir)]
            if not left:
                break
            time.sleep(0.1)
        for pid, cmd in left:
            end_pid(pid)
        return left

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
        raise TimeoutError(f"{what}; last screen:\n{dump(last) if last else None}")

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

    def wait_gone(self, text, timeout=45):
        return self.wait("no " + repr(text), lambda s: not shows(s, text), timeout)

    def wait_idle(self, timeout=60):
        return self.wait("idle empty composer", idle_empty, timeout)

    def wait_quiet(self, ms=600, timeout=30):
        """Waits until the revision has not moved for `ms` (no output, no input)."""
        deadline = time.time() + timeout
        last = self.snap()
        since = time.time()
        while time.time() < deadline:
            time.sleep(0.05)
            s = self.snap()
            if s["revision"] != last["revision"]:
                last, since = s, time.time()
            elif (time.time() - since) * 1000 >= ms:
                return s
        return last

    def save(self, name, snap, note, screen, composer, **extra):
        snap = dict(snap)
        snap["_note"] = note
        snap["_expect"] = dict({"screen": screen, "composer": composer}, **extra)
        path = os.path.join(REPO, "fixtures", "providers", "gemini", "snapshots", name + ".json")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            json.dump(snap, f, indent=1, ensure_ascii=False)
            f.write("\n")
        return path

    def processes(self):
        return pids_with_env("GMPROBE_RUN", self.dir)

    def close(self):
        left = self.stop()
        for p in reversed(self.procs):
            if p.poll() is None:
                end_pid(p.pid)
                p.wait()
        if self.model.poll() is None:
            end_pid(self.model.pid)
            self.model.wait()
        return left


# ---------------------------------------------------------------- screen grammar (as found)

def composer_row(snap):
    """Index of the row with the composer prompt `> ` (`* ` in YOLO mode) inside its box, or None."""
    for i in range(len(snap["rows"]) - 1, -1, -1):
        text = snap["rows"][i]
        if text.startswith((" > ", "> ", "│ > ", " * ")):
            return i
    return None


def idle_empty(snap):
    i = composer_row(snap)
    if i is None:
        return False
    return "Type your message" in snap["rows"][i] and not busy(snap)


def busy(snap):
    return any("esc to cancel" in row for row in snap["rows"])


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
        rows += [(r["t"], "model", f"{r['kind']} reply={r['reply'][:40]!r} last={r.get('lastUser', '')[-60:]!r}")
                 for r in self.run.requests()]
        rows.sort()
        t0 = rows[0][0] if rows else 0
        return "\n".join(f"{(t - t0) / 1000:8.3f} {kind:6} {label}" for t, kind, label in rows)


def hook_detail(h):
    p = h["payload"] if isinstance(h["payload"], dict) else {}
    bits = []
    for k in ("source", "reason", "prompt", "tool_name", "trigger", "stop_hook_active", "notification_type"):
        if k in p:
            bits.append(f"{k}={str(p[k])[:40]!r}")
    if h.get("answered"):
        bits.append("answered=" + h["answered"][:60])
    return (" " + " ".join(bits)) if bits else ""
