"""Ways to make DING's hooks run in Codex 0.169.0, each in a fresh home:
  config     trusted_hash entries (computed offline) appended to CODEX_HOME/config.toml
  cli-state  hooks in hooks.json, trust per invocation: -c hooks.state={...}
  cli-hooks  no hooks.json: hooks and trust both per invocation (-c hooks.EVENT=..., -c hooks.state=...)
  profile    hooks and trust in CODEX_HOME/ding.config.toml, started with -p ding
  bypass     --dangerously-bypass-hook-trust, plus an untrusted hook of "the user's"
Each: start, watch 4 s for the review modal, type one prompt, wait for the reply,
list which hooks fired; check config.toml afterwards.
Usage: p_trust.py MODE [daemon|embedded]"""
import hashlib, json, os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cxprobe import *
import trust_hash as th

mode = sys.argv[1]
daemon = (sys.argv[2] if len(sys.argv) > 2 else "daemon") == "daemon"
run = Run(f"trust-{mode}-{'d' if daemon else 'e'}", hooks_file=mode in ("config", "cli-state", "bypass"))

def toml_str(s):
    return json.dumps(s, ensure_ascii=False)

args = [] if daemon else ["--no-daemon"]
hooks = run.hooks_json()
hooks_path = os.path.join(run.codex_home, "hooks.json")
if mode == "config":
    with open(run.config, "a") as f:
        for key, h in th.offline(hooks_path, hooks).items():
            f.write(f"\n[hooks.state.{toml_str(key)}]\ntrusted_hash = {toml_str(h)}\n")
elif mode == "cli-state":
    states = ",".join(f"{toml_str(k)}={{trusted_hash={toml_str(h)}}}" for k, h in th.offline(hooks_path, hooks).items())
    args += ["-c", f"hooks.state={{{states}}}"]
elif mode == "cli-hooks":
    flags = "/<session-flags>/config.toml"
    for event, groups in hooks["hooks"].items():
        h = groups[0]["hooks"][0]
        args += ["-c", f"hooks.{event}=[{{hooks=[{{type=\"command\",command={toml_str(h['command'])},timeout={h['timeout']}}}]}}]"]
    states = ",".join(f"{toml_str(k)}={{trusted_hash={toml_str(h)}}}" for k, h in th.offline(flags, hooks).items())
    args += ["-c", f"hooks.state={{{states}}}"]
elif mode == "profile":
    prof = os.path.join(run.codex_home, "ding.config.toml")
    with open(prof, "w") as f:
        f.write("# DING's hooks for Codex (probe)\n")
        for event, groups in hooks["hooks"].items():
            h = groups[0]["hooks"][0]
            f.write(f"\n[[hooks.{event}]]\n[[hooks.{event}.hooks]]\ntype = \"command\"\ncommand = {toml_str(h['command'])}\ntimeout = {h['timeout']}\n")
        for key, hsh in th.offline(prof, hooks).items():
            f.write(f"\n[hooks.state.{toml_str(key)}]\ntrusted_hash = {toml_str(hsh)}\n")
    args += ["-p", "ding"]
elif mode == "bypass":
    # One more hook in hooks.json that stands for the user's own, never reviewed.
    hooks["hooks"]["Stop"][0]["hooks"].append({"type": "command", "command": run.hook_command("UserOwnStop"), "timeout": 30})
    json.dump(hooks, open(hooks_path, "w"), indent=1)
    args += ["--dangerously-bypass-hook-trust"]

before = open(run.config).read()
try:
    pty = run.start(args)
    s = run.wait_idle_composer()
    t0 = time.time(); modal = False
    while time.time() - t0 < 4:
        s = run.snap()
        if shows(s, "Hooks need review"):
            modal = True
            break
        time.sleep(0.05)
    print(f"[{mode} {'daemon' if daemon else 'embedded'}] review modal: {modal}")
    if modal:
        print(rows_text(s))
        pty.send(b"3"); time.sleep(0.5); pty.send(CR); time.sleep(1)
    pty.send(b"hello there", 300, CR)
    run.wait_text("mock reply to turn 1.", 45)
    time.sleep(1.5)
    fired = sorted({h["event"] for h in run.hooks()})
    print("hooks fired:", fired)
    print("requests:\n" + run.summary())
    after = open(run.config).read()
    added = after[len(before):] if after.startswith(before) else after
    print("config.toml changed by codex:", after != before, repr(added[:300]))
    print("processes:", [(p, c[:90]) for p, c in run.codex_processes()])
    if fired:
        print("one hook env:", {k: v for k, v in run.hooks()[0]["env"].items()})
finally:
    print("left:", [(p, c[:60]) for p, c in run.close()])
