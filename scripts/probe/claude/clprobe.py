"""Probe kit for the real Claude Code 2.1.328 under `ding pty`, model-free
(not production code). It reuses the Codex kit (`../codex/cxprobe.py`: the
PTY host client, PROBE_DING, PROBE_BASE, ending processes by pid).

One `ClaudeRun` is one scratch directory `$PROBE_BASE/<name>/` with
`ding-eval model-server --api anthropic` (model/requests.jsonl), a home from
`ding-eval harness-env claude` (home/.claude.json), and Claude under
`ding pty` with the argv, environment and cwd that command printed.
`trusted=False` removes `projects.<cwd>.hasTrustDialogAccepted` from
`.claude.json` (onboarding, theme and the API key approval stay answered),
so the folder trust dialog shows.
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "codex"))
from cxprobe import DING, DING_EVAL, REPO, BASE, Pty, end_pid, pids_with_env, rows_text, shows  # noqa: E402,F401


def claude_binary():
    out = subprocess.run(["bash", os.path.join(REPO, "scripts/install-harnesses.sh"), "--check"],
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        if line.startswith("DING_HARNESS_CLAUDE="):
            return line.split("=", 1)[1]
    raise RuntimeError("no claude binary")


class ClaudeRun:
    def __init__(self, name, trusted=True, git=False, base=BASE, permission="manual"):
        self.name = name
        self.dir = os.path.join(base, name)
        subprocess.run(["rm", "-rf", self.dir], check=True)
        os.makedirs(self.dir)
        self.binary = claude_binary()
        self.model_dir = os.path.join(self.dir, "model")
        os.makedirs(self.model_dir)
        self.model_log = os.path.join(self.model_dir, "requests.jsonl")
        port_file = os.path.join(self.model_dir, "port")
        self.model = subprocess.Popen(
            [DING_EVAL, "model-server", "--api", "anthropic", "--log", self.model_log,
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
        self.launch = json.loads(subprocess.run(
            [DING_EVAL, "harness-env", "claude", "--binary", self.binary, "--home", self.home,
             "--cwd", self.project, "--model-url", f"http://127.0.0.1:{self.port}",
             "--permission", permission], capture_output=True, text=True, check=True).stdout)
        self.env = dict(os.environ)
        self.env.update(self.launch["env"])
        self.config_path = os.path.join(self.home, ".claude.json")
        if git:
            subprocess.run(["git", "init", "-q", self.project], check=True)
        if not trusted:
            config = self.config()
            for key, project in config.get("projects", {}).items():
                project.pop("hasTrustDialogAccepted", None)
            json.dump(config, open(self.config_path, "w"), indent=2)
        self.config_before = self.config()
        self.pty = None
        self.pty_proc = None

    def config(self):
        return json.load(open(self.config_path))

    def start(self, cols=80, rows=24, extra_env=None):
        sockdir = os.path.join(self.dir, "rt")
        os.makedirs(sockdir, mode=0o700, exist_ok=True)
        os.chmod(sockdir, 0o700)
        self.sock = os.path.join(sockdir, "pty.sock")
        env = dict(self.env)
        if extra_env:
            env.update(extra_env)
        self.pty_stderr = os.path.join(self.dir, "pty.stderr")
        self.pty_proc = subprocess.Popen(
            [DING, "pty", "--socket", self.sock, "--session", self.name, "--cwd", self.launch["cwd"],
             "--size", f"{cols}x{rows}", "--runtime-dir", sockdir, "--"] + self.launch["argv"],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=open(self.pty_stderr, "w"))
        self.t_start = time.time()
        deadline = time.time() + 10
        while not os.path.exists(self.sock):
            if time.time() > deadline:
                raise RuntimeError("pty socket")
            time.sleep(0.01)
        self.pty = Pty(self.sock)
        return self.pty

    def snap(self):
        return self.pty.snapshot()

    def requests(self):
        try:
            return [json.loads(line) for line in open(self.model_log)]
        except OSError:
            return []

    def claude_processes(self):
        return pids_with_env("HOME", self.home)

    def close(self):
        left = []
        if self.pty_proc and self.pty_proc.poll() is None:
            end_pid(self.pty_proc.pid)
            self.pty_proc.wait()
        for pid, cmd in self.claude_processes():
            left.append((pid, cmd))
            end_pid(pid)
        if self.model.poll() is None:
            end_pid(self.model.pid)
            self.model.wait()
        return left


RULE = "─" * 20


def empty_composer(snap):
    """`❯` + U+00A0 on a row between two full-width rules, in the default
    style, with nothing after it but the drawn cursor (an inverse cell) or a
    dim placeholder: what the provider grammar calls a ready, empty composer
    (approximately; the grammar in src/providers/claude/screen.rs decides)."""
    rows = snap["rows"]
    for i, text in enumerate(rows):
        if not text.startswith("❯\u00a0"):
            continue
        if not (i > 0 and RULE in rows[i - 1] and i + 1 < len(rows) and RULE in rows[i + 1]):
            continue
        rest = text[2:].strip()
        if not rest:
            return True
        runs = [r for r in snap["runs"] if r["row"] == i and r["col"] >= 2]
        if runs and all(r.get("dim") or r.get("inverse") for r in runs if r["text"].strip()):
            return True
    return False
