"""The first seconds after spawn, frame by frame: every distinct screen until
the screen has been quiet for QUIET ms (default 3000) or SECS pass.

    python3 scripts/probe/gemini/p_startup.py MODE

MODE: `bare` (no settings.json at all: only GEMINI_API_KEY and the base URL),
`clean` (gmprobe.CLEAN_SETTINGS + hooks), `notrust` (clean, but folder trust
left on), `noauth` (clean but no auth type), `trustenv` (folder trust on,
GEMINI_CLI_TRUST_WORKSPACE=true). KEYS=1 types `early words` at KEYS_AT seconds (0.3).
EXTRA_ENV='{"K":"V"}' adds to Gemini's environment. TREE=1 prints `ps --forest` of the run's processes once idle. SAVE=NAME saves
the last screen as snapshot NAME (with NOTE, SCREEN, COMPOSER).
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gmprobe as g

mode = sys.argv[1] if len(sys.argv) > 1 else "clean"
secs = float(os.environ.get("SECS", "40"))
quiet = float(os.environ.get("QUIET", "3000"))
kw = {}
if mode == "bare":
    kw = dict(bare=True)
elif mode == "notrust":
    kw = dict(settings={"security": {"folderTrust": {"enabled": True}}})
elif mode == "trustenv":
    kw = dict(settings={"security": {"folderTrust": {"enabled": True}}}, trust_env=True)
elif mode == "noauth":
    kw = dict(settings={"security": {"auth": None}})
elif mode == "defaults":
    # auth only: everything else at its default
    kw = dict(settings={"security": {"folderTrust": None}, "general": None, "privacy": None,
                        "telemetry": None, "ide": None})
run = g.Run("startup-" + mode, **kw)
frames = []
try:
    pty = run.start(extra_env=json.loads(os.environ.get("EXTRA_ENV", "{}")))
    t0 = run.t_start
    last_rows = None
    last_change = time.time()
    typed = False
    while time.time() - t0 < secs:
        s = run.snap()
        if os.environ.get("KEYS") and not typed and time.time() - t0 > float(os.environ.get("KEYS_AT", "0.3")):
            pty.type("early words")
            typed = True
        if s["rows"] != last_rows:
            frames.append(s)
            print(g.dump(s, f"t={s['_t'] - t0:.2f}s"))
            last_rows = s["rows"]
            last_change = time.time()
        elif (time.time() - last_change) * 1000 > quiet and any(r.strip() for r in s["rows"]):
            break
        time.sleep(0.1)
    print("idle_empty:", g.idle_empty(frames[-1]))
    if os.environ.get("TREE"):
        pids = [str(p) for p, _ in run.processes()]
        print(subprocess.run(["ps", "--forest", "-o", "pid,ppid,rss,args", "-p", ",".join(pids)],
                             capture_output=True, text=True).stdout)
        print(subprocess.run(["ps", "--forest", "-o", "pid,ppid,rss,args", "--ppid", ",".join(pids)],
                             capture_output=True, text=True).stdout)
    if os.environ.get("SAVE"):
        print(run.save(os.environ["SAVE"], frames[-1], os.environ.get("NOTE", ""),
                       os.environ.get("SCREEN", "dialog"), os.environ.get("COMPOSER", "unknown")))
    print("requests:\n" + run.summary())
    print("hooks:", [h["event"] + g.hook_detail(h) for h in run.hooks()])
    print("files:", subprocess.run(["find", run.home, "-type", "f"], capture_output=True, text=True).stdout)
finally:
    left = run.close()
    print("left:", left)
