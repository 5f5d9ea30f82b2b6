"""How Gemini CLI 0.61.0 draws under the environment variables that change
colour (issue 36, item 5): one start per variant, four screens each.

    python3 scripts/probe/gemini/p_colour.py [VARIANT...] [--out DIR]

A variant is a name from VARIANTS below (default: all of them). For each,
Gemini CLI starts under `ding pty` in a clean home (TERM=xterm-256color, no
CI variable, as gmprobe's Run) with the variant's variables set (a `None`
value unsets one), and the probe saves, as PTY host snapshots:

* `idle`: the screen once a rule is drawn and it has been quiet for 1.5 s
  (each wait gives up after 25 s);
* `draft`: after typing `hello world`;
* `busy`: 1.5 s after Ctrl+U (the draft cleared) and `mock:slow 4`, Return;
* `busy-draft`: 0.6 s after typing `and then this` during that turn (then
  Ctrl+U clears it);
* `after-turn`: once the turn's output has been quiet for 1.5 s.

Files go to DIR/<variant>/<step>.json (default /tmp/gm-colour), each with
`_note` (the variant's variables) and `_exit` (the PTY host's status: did
the CLI exit). Nothing is judged here: the grammar reads them in
tests/providers_gemini_screens.rs once they are fixtures.
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gmprobe  # noqa: E402

VARIANTS = {
    "base": {},
    "ci-false": {"CI": "false"},
    "ci-false-gha-false": {"CI": "false", "GITHUB_ACTIONS": "false"},
    "ci-empty": {"CI": ""},
    "no-color": {"NO_COLOR": "1"},
    "no-color-empty": {"NO_COLOR": ""},
    "force-color-0": {"FORCE_COLOR": "0"},
    "term-dumb": {"TERM": "dumb"},
    "term-unset": {"TERM": None},
    "term-xterm": {"TERM": "xterm"},
    "term-screen": {"TERM": "screen"},
    "term-vt100": {"TERM": "vt100"},
    "term-foot": {"TERM": "foot"},
    "term-foot-colorterm": {"TERM": "foot", "COLORTERM": "truecolor"},
    "force-color-false": {"FORCE_COLOR": "false"},
    "ci-true": {"CI": "true"},
    "colorterm-truecolor": {"COLORTERM": "truecolor"},
    "ci-false-force-color-1": {"CI": "false", "FORCE_COLOR": "1"},
    "ci-false-force-color-2": {"CI": "false", "FORCE_COLOR": "2"},
}


def quiet(run, ms, timeout):
    return run.wait_quiet(ms=ms, timeout=timeout)


def save(out, variant, step, snap, env, run):
    snap = dict(snap)
    snap["_note"] = f"{variant}: {json.dumps(env)}"
    try:
        snap["_exit"] = run.pty.status()
    except Exception as err:  # the host may be gone
        snap["_exit"] = str(err)
    path = os.path.join(out, variant, step + ".json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(snap, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(gmprobe.dump(snap, f"{variant} {step}"))


def probe(variant, env, out):
    run = gmprobe.Run("colour-" + variant, hooks=())
    try:
        run.start(extra_env=env)
        try:
            run.wait("a rule", lambda snap: any(row.startswith("\u2500" * 20) for row in snap["rows"]), 25)
        except TimeoutError:
            pass
        save(out, variant, "idle", quiet(run, 1500, 25), env, run)
        run.pty.type("hello world")
        save(out, variant, "draft", quiet(run, 800, 10), env, run)
        run.pty.send(b"\x15", 200, b"mock:slow 4", 200, gmprobe.CR)
        time.sleep(1.5)
        save(out, variant, "busy", run.snap(), env, run)
        run.pty.type("and then this")
        time.sleep(0.6)
        save(out, variant, "busy-draft", run.snap(), env, run)
        run.pty.send(b"\x15")
        time.sleep(4)
        save(out, variant, "after-turn", quiet(run, 1500, 20), env, run)
    finally:
        left = run.close()
        if left:
            print("stragglers ended:", left)


def main():
    args = sys.argv[1:]
    out = "/tmp/gm-colour"
    if "--out" in args:
        i = args.index("--out")
        out = args[i + 1]
        del args[i:i + 2]
    for variant in args or list(VARIANTS):
        probe(variant, VARIANTS[variant], out)


if __name__ == "__main__":
    main()
