"""A scripted walk through the TUI: one run, a list of steps.

    python3 scripts/probe/gemini/p_explore.py RUN_NAME STEP...

Settings come from the environment: SETTINGS='{"ui": {...}}' (merged over
gmprobe.CLEAN_SETTINGS), BARE=1 (no settings.json), HOOKS=0 (no probe
hooks), ARGS='--resume latest' (Gemini CLI arguments), KEEP=1 (reuse the run
directory of a previous walk: its home and sessions), SIZE=COLSxROWS.

Steps:
  start                 spawn Gemini CLI (implicit before the first other step)
  idle                  wait for the idle empty composer
  quiet[:MS]            wait until the screen has not changed for MS (600)
  text:TEXT             wait until TEXT is on screen
  gone:TEXT             wait until TEXT is no longer on screen
  hook:EVENT[:N]        wait until EVENT has fired N times in all (default: once more)
  type:TEXT             type TEXT (raw bytes)
  paste:TEXT            bracketed paste of TEXT (\\n becomes a newline)
  key:NAME              enter, esc, ctrl-c, ctrl-d, up, down, tab, bs, ctrl-u, 1..9, y, n
  sleep:MS              sleep (only to pace keys, never to conclude)
  dump[:LABEL]          print the screen
  save:NAME:SCREEN:COMPOSER:NOTE   save the screen as fixture NAME
  reply:EVENT:JSON      arm a one-shot hook reply; replyall:EVENT:JSON arms a lasting one
  exit:EVENT:CODE       arm a one-shot exit code for EVENT's hook; hang:EVENT:SECS a one-shot sleep
  stop                  end Gemini CLI (PTY host hangup), keep the mock; restart with `start`
At the end: the screen, the request summary, the hook timeline.
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gmprobe as g

KEYS = {"enter": g.CR, "esc": g.ESC, "ctrl-c": g.CTRL_C, "ctrl-d": b"\x04", "up": g.UP, "down": g.DOWN,
        "tab": b"\t", "bs": b"\x7f", "ctrl-u": b"\x15", "ctrl-l": b"\x0c", "shift-tab": b"\x1b[Z",
        "right": b"\x1b[C", "left": b"\x1b[D", "space": b" "}

name = sys.argv[1]
steps = sys.argv[2:]
settings = json.loads(os.environ.get("SETTINGS", "{}"))
hooks = g.EVENTS if os.environ.get("HOOKS", "1") != "0" else []
args = os.environ.get("ARGS", "").split()
cols, rows = (int(x) for x in os.environ.get("SIZE", "80x24").split("x"))


def make_run():
    if os.environ.get("KEEP"):
        # keep the previous directory: rename, build a fresh run, move home back
        old = os.path.join(g.BASE, name)
        keep = old + ".keep"
        if os.path.isdir(old):
            os.system(f"rm -rf {keep} && mv {old} {keep}")
        run = g.Run(name, settings=settings, bare=bool(os.environ.get("BARE")), hooks=hooks)
        if os.path.isdir(keep):
            os.system(f"rm -rf {run.home} {run.project} && mv {keep}/home {run.home} && mv {keep}/project {run.project}")
            if not os.environ.get("BARE"):
                run.write_settings(run.settings)
            os.system(f"rm -rf {keep}")
        return run
    return g.Run(name, settings=settings, bare=bool(os.environ.get("BARE")), hooks=hooks)


run = make_run()
marks = g.Marks(run)
started = False
try:
    for step in steps:
        op, _, arg = step.partition(":")
        if op != "start" and not started:
            run.start(args, cols=cols, rows=rows)
            started = True
            marks.mark("spawn")
        if op == "start":
            run.start(args, cols=cols, rows=rows)
            started = True
            marks.mark("spawn")
        elif op == "stop":
            print("stop left:", run.stop())
            started = False
            marks.mark("stop")
        elif op == "idle":
            s = run.wait_idle()
            marks.mark("idle", s)
            print(f"idle at {s['_t'] - run.t_start:.2f}s after spawn")
        elif op == "quiet":
            s = run.wait_quiet(int(arg or 600))
            marks.mark("quiet", s)
        elif op == "text":
            s = run.wait_text(arg)
            marks.mark("text " + arg, s)
        elif op == "gone":
            s = run.wait_gone(arg)
            marks.mark("gone " + arg, s)
        elif op == "hook":
            ev, _, n = arg.partition(":")
            target = int(n) if n else run.count(ev) + 1
            run.wait_for(f"hook {ev} x{target}", lambda: run.count(ev) >= target, 45)
            marks.mark(f"hook {ev} seen")
        elif op == "type":
            run.pty.type(arg)
            marks.mark("type " + arg)
        elif op == "paste":
            run.pty.send(g.PASTE_START + arg.replace("\\n", "\n").encode() + g.PASTE_END)
            marks.mark("paste")
        elif op == "key":
            run.pty.send(KEYS.get(arg) or arg.encode())
            marks.mark("key " + arg)
        elif op == "sleep":
            time.sleep(int(arg) / 1000)
        elif op == "dump":
            s = run.snap()
            print(g.dump(s, arg))
            marks.mark("dump " + arg, s)
        elif op == "save":
            fname, screen, composer, note = arg.split(":", 3)
            s = run.snap()
            print(g.dump(s, "save " + fname))
            print(run.save(fname, s, note, screen, composer))
        elif op in ("reply", "replyall"):
            ev, _, js = arg.partition(":")
            run.reply(ev, js, once=(op == "reply"))
        elif op == "exit":
            ev, _, code = arg.partition(":")
            run.reply(ev, "", exit_code=int(code))
        elif op == "hang":
            ev, _, secs = arg.partition(":")
            run.reply(ev, "", sleep=float(secs))
        else:
            raise SystemExit("unknown step " + step)
    if started:
        print(g.dump(run.snap(), "end"))
finally:
    print("== requests\n" + run.summary())
    print("== timeline\n" + marks.timeline())
    print("left:", run.close())
