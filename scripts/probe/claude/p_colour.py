"""How Claude Code 2.1.328 (and, with `--codex`, Codex CLI 0.169.0) draws
under the environment variables that change colour (issue 36, item 5): one
start per variant, four screens each, as gemini/p_colour.py does for Gemini
CLI.

    python3 scripts/probe/claude/p_colour.py [--codex] [VARIANT...] [--out DIR]

Each variant starts the harness under `ding pty` in a home from `ding-eval
harness-env` (the machine's environment, then the home's, then
TERM=xterm-256color with no CI, NO_COLOR, FORCE_COLOR or COLORTERM, then the
variant's variables; `None` unsets one) and saves, as PTY host snapshots:

* `idle`: the screen once an empty composer shows (or after 25 s) and has
  been quiet for 1.5 s (Codex: 3 s);
* `draft`: after typing `hello world`;
* `busy`: 1.5 s after Ctrl+U (the draft cleared) and `mock:slow 6` (Codex:
  `mock:run 5`, in `auto` permission mode), Return;
* `busy-draft`: 0.6 s after typing `and then this` during that turn (then
  Ctrl+U clears it);
* `after-turn`: once the turn's output has been quiet for 2 s.

Files go to DIR/<harness>-<variant>/<step>.json (default /tmp/gm-colour),
with `_note` (the variant's variables). Nothing is judged here.
"""

import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "codex"))
import clprobe  # noqa: E402
import cxprobe  # noqa: E402

VARIANTS = {
    "base": {},
    "ci-false": {"CI": "false"},
    "ci-true": {"CI": "true"},
    "no-color": {"NO_COLOR": "1"},
    "force-color-0": {"FORCE_COLOR": "0"},
    "term-dumb": {"TERM": "dumb"},
    "term-xterm": {"TERM": "xterm"},
    "term-foot": {"TERM": "foot"},
    "colorterm-truecolor": {"COLORTERM": "truecolor"},
}

CLEAN = {"TERM": "xterm-256color", "CI": None, "NO_COLOR": None, "FORCE_COLOR": None,
         "COLORTERM": None, "GITHUB_ACTIONS": None}


def quiet(run, ms, timeout):
    deadline = time.time() + timeout
    last = run.snap()
    since = time.time()
    while time.time() < deadline:
        time.sleep(0.05)
        snap = run.snap()
        if snap["revision"] != last["revision"]:
            last, since = snap, time.time()
        elif (time.time() - since) * 1000 >= ms:
            return snap
    return last


def save(out, name, step, snap, env):
    snap = dict(snap)
    snap["_note"] = f"{name}: {json.dumps(env)}"
    path = os.path.join(out, name, step + ".json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(snap, f, indent=1, ensure_ascii=False)
        f.write("\n")
    rows = "\n".join(f"{i:2}|{r}" for i, r in enumerate(snap["rows"]))
    print(f"--- {name} {step} cursor={snap['cursor']}\n{rows}")


def probe(harness, variant, env, out):
    name = f"{harness}-{variant}"
    if harness == "codex":
        run = cxprobe.Run("colour-" + variant, permission="auto", hooks=False)
    else:
        run = clprobe.ClaudeRun("colour-" + variant)
    for key, value in dict(CLEAN, **env).items():
        if value is None:
            run.env.pop(key, None)
        else:
            run.env[key] = value
    try:
        run.start()
        deadline = time.time() + 25
        while time.time() < deadline:
            snap = run.snap()
            if any(row.startswith(("\u276f", "\u203a")) for row in snap["rows"]):
                break
            time.sleep(0.2)
        # Codex draws its composer before it takes keys: give it a while.
        save(out, name, "idle", quiet(run, 3000 if harness == "codex" else 1500, 25), env)
        run.pty.type("hello world")
        save(out, name, "draft", quiet(run, 800, 10), env)
        # Codex hides its `Working` line while a reply streams: a command
        # keeps it.
        prompt = b"mock:run 5" if harness == "codex" else b"mock:slow 6"
        run.pty.send(b"\x15", 200, prompt, 200, b"\r")
        time.sleep(1.5)
        save(out, name, "busy", run.snap(), env)
        run.pty.type("and then this")
        time.sleep(0.6)
        save(out, name, "busy-draft", run.snap(), env)
        run.pty.send(b"\x15")
        time.sleep(5)
        save(out, name, "after-turn", quiet(run, 2000, 25), env)
    finally:
        left = run.close()
        if left:
            print("stragglers ended:", left)


def main():
    args = sys.argv[1:]
    out = "/tmp/gm-colour"
    harness = "claude"
    if "--out" in args:
        i = args.index("--out")
        out = args[i + 1]
        del args[i:i + 2]
    if "--codex" in args:
        args.remove("--codex")
        harness = "codex"
    for variant in args or list(VARIANTS):
        probe(harness, variant, VARIANTS[variant], out)


if __name__ == "__main__":
    main()
