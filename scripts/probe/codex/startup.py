"""A harness's first seconds under `ding pty`, frame by frame (shared by the
Codex and Claude startup probes).

`record` polls the PTY host's snapshot every POLL_MS and keeps each distinct
screen (rows, styled runs, cursor) with its revision and the time since the
PTY host was started (`run.t_start`, taken right after spawning `ding pty`).
A classifier names each frame (`composer`, `dialog:...`, `blank`, `other`).
"""
import hashlib
import json
import os
import time

POLL_MS = int(os.environ.get("POLL_MS", "15"))


def frame_key(snap):
    return hashlib.sha1(json.dumps([snap["rows"], snap["runs"], snap["cursor"]],
                                   sort_keys=True).encode()).hexdigest()


def first_text(snap, n=2):
    rows = [r.strip() for r in snap["rows"] if r.strip()]
    return " | ".join(rows[:n])[:100]


class Frame:
    def __init__(self, t, snap, kind):
        self.t = t                # seconds since ding pty was spawned
        self.snap = snap
        self.kind = kind
        self.revision = snap["revision"]

    def line(self):
        return f"{self.t:7.3f}s rev {self.revision:4d} {self.kind:14} {first_text(self.snap)}"


def record(run, classify, stop, max_s=10.0, min_s=0.0):
    """Frames until `stop(frames, elapsed)` is true (checked once `min_s` passed) or
    `max_s`. Returns the list of distinct frames, in order."""
    frames = []
    last = None
    polls = 0
    while True:
        elapsed = time.time() - run.t_start
        if elapsed > max_s:
            break
        try:
            snap = run.pty.snapshot()
        except (OSError, ValueError):
            time.sleep(POLL_MS / 1000)
            continue
        polls += 1
        key = frame_key(snap)
        if key != last:
            frames.append(Frame(snap["_t"] - run.t_start, snap, classify(snap)))
            last = key
        if elapsed >= min_s and stop(frames, elapsed):
            break
        time.sleep(POLL_MS / 1000)
    run.polls = polls
    return frames


def first(frames, pred):
    for f in frames:
        if pred(f.kind):
            return f
    return None


def settled(run, frames, kind, quiet_s=0.6, max_s=4.0):
    """The screen once it stopped changing for `quiet_s` (the fully drawn
    dialog), read again directly."""
    deadline = time.time() + max_s
    last_key, since = None, time.time()
    snap = None
    while time.time() < deadline:
        snap = run.pty.snapshot()
        key = frame_key(snap)
        if key != last_key:
            last_key, since = key, time.time()
        elif time.time() - since >= quiet_s:
            break
        time.sleep(0.05)
    return snap


def stats(values):
    vals = sorted(v for v in values if v is not None)
    if not vals:
        return "n=0"
    n = len(vals)
    med = vals[n // 2] if n % 2 else (vals[n // 2 - 1] + vals[n // 2]) / 2
    return f"n={n} min={vals[0]:.3f} median={med:.3f} max={vals[-1]:.3f}"


def save_fixture(path, snap, note, expect):
    snap = dict(snap)
    snap["_note"] = note
    snap["_expect"] = expect
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(snap, f, indent=1, ensure_ascii=False)
        f.write("\n")
