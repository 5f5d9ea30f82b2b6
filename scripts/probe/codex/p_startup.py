"""Codex 0.169.0's first seconds: which dialogs it draws after start, and
when, against the first empty-composer frame.

  p_startup.py MODE KIND [TRIALS]
    MODE  launcher   own app-server + TUI --remote as one harness under
                     `ding pty` (launcher.sh; DING's hooks as -c arguments
                     of the app-server: DING's default setup)
          embedded   `codex` with DING's hooks as -c arguments (no daemon)
    KIND  trust      the project directory is not trusted (its
                     [projects."<cwd>"] entry removed from config.toml)
          hooks      one untrusted hook of "the user's" in CODEX_HOME/hooks.json
          both       both at once
          none       neither (a baseline)
  env: GIT=1 makes the project a git repository; SAVE=NAME writes trial 1's
  settled dialog to fixtures/providers/codex/snapshots/NAME.json (with
  _expect dialog/unknown), SAVE_PRE=NAME the last empty-composer frame
  before it; KEYS=transport sends DING's transport (paste,
  200 ms, CR) into the dialog of the last trial and reports what it did
  (KEYS=paste: the paste alone; KEYS=esc: Esc).

Each trial polls the PTY host every 15 ms from the moment `ding pty` was
spawned and prints each distinct frame (time, revision, kind, text)."""
import json, os, subprocess, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cxprobe import *
from startup import *

MODE = sys.argv[1]
KIND = sys.argv[2]
TRIALS = int(sys.argv[3]) if len(sys.argv) > 3 else 5
OUT = os.path.join(REPO, "fixtures/providers/codex/snapshots")


def classify(snap):
    text = rows_text(snap)
    if "Hooks need review" in text:
        return "dialog:hooks"
    if "trust" in text.lower() and ("1." in text or "›" in text) and not empty_composer(snap):
        return "dialog:trust"
    if empty_composer(snap):
        return "composer"
    if not text.strip():
        return "blank"
    return "other"


def untrust(run):
    lines = open(run.config).read().split("\n")
    out, skip = [], False
    for line in lines:
        if line.startswith("[projects."):
            skip = True
            continue
        if skip and line.startswith("trust_level"):
            continue
        skip = False
        out.append(line)
    open(run.config, "w").write("\n".join(out))


def user_hook(run):
    """One hook of the user's own, never reviewed."""
    hooks = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true", "timeout": 5}]}]}}
    json.dump(hooks, open(os.path.join(run.codex_home, "hooks.json"), "w"), indent=1)


def stop_when(frames, t):
    want = {"trust": "dialog:trust", "hooks": "dialog:hooks", "both": "dialog:"}.get(KIND)
    if want is None:
        return t > 5.0
    hit = first(frames, lambda k: k.startswith(want))
    # keep watching 3 s past the dialog: does a second one follow?
    return hit is not None and t - hit.t > 3.0


results = []
for trial in range(1, TRIALS + 1):
    run = Run(f"start-{MODE}-{KIND}-{trial}", hooks_file=False)
    try:
        if os.environ.get("GIT"):
            subprocess.run(["git", "init", "-q", run.project], check=True)
        if KIND in ("trust", "both"):
            untrust(run)
        if KIND in ("hooks", "both"):
            user_hook(run)
        config_before = open(run.config).read()
        args = session_flag_args(run)
        if MODE == "launcher":
            sock = os.path.join(run.dir, "rt", "codex-app.sock")
            os.makedirs(os.path.dirname(sock), mode=0o700, exist_ok=True)
            run.start(argv=["sh", os.path.join(HERE, "launcher.sh"), run.binary, sock] + args)
        else:
            run.start(args)
        frames = record(run, classify, stop_when, max_s=15.0)
        comp = first(frames, lambda k: k == "composer")
        dlg = first(frames, lambda k: k.startswith("dialog"))
        kinds = []
        for f in frames:
            if not kinds or kinds[-1] != f.kind:
                kinds.append(f.kind)
        r = {"trial": trial, "composer": comp.t if comp else None, "dialog": dlg.t if dlg else None,
             "dialog_kind": dlg.kind if dlg else None,
             "composer_to_dialog": (dlg.t - comp.t) if (comp and dlg and comp.t < dlg.t) else None,
             "kinds": kinds, "frames": len(frames), "polls": run.polls}
        results.append(r)
        print(f"== trial {trial}: {json.dumps({k: v for k, v in r.items()})}")
        for f in frames:
            print("   " + f.line())
        json.dump([{"t": f.t, "revision": f.revision, "kind": f.kind, "rows": f.snap["rows"]} for f in frames],
                  open(os.path.join(run.dir, "frames.json"), "w"), indent=1)
        if dlg:
            s = settled(run, frames, dlg.kind)
            print("   settled dialog:\n" + "\n".join("   |" + row for row in s["rows"] if row.strip()))
            print("   cursor", s["cursor"], "runs:", json.dumps([x for x in s["runs"] if x.get("inverse") or x.get("bold")])[:600])
            if trial == 1 and os.environ.get("SAVE"):
                note = (f"Codex 0.169.0 startup, {MODE} mode ({'own app-server + TUI --remote under ding pty' if MODE == 'launcher' else 'embedded, DING hooks as -c arguments'}), "
                        f"{'untrusted project directory' if KIND in ('trust', 'both') else 'trusted project'}"
                        f"{', one untrusted hook of the user in CODEX_HOME/hooks.json' if KIND in ('hooks', 'both') else ''}"
                        f"{', git repository' if os.environ.get('GIT') else ''}: "
                        f"the settled dialog; first frame {dlg.t:.2f} s after ding pty started"
                        + (f", {dlg.t - comp.t:.2f} s after the first empty composer" if comp and comp.t < dlg.t else ", no composer frame before it"))
                save_fixture(f"{OUT}/{os.environ['SAVE']}.json", s, note, {"screen": "dialog", "composer": "unknown"})
                print("   saved", os.environ["SAVE"])
                pre = [f for f in frames if f.kind == "composer" and f.t < dlg.t]
                if pre and os.environ.get("SAVE_PRE"):
                    save_fixture(f"{OUT}/{os.environ['SAVE_PRE']}.json", pre[-1].snap,
                                 f"the last empty-composer frame Codex drew before the startup dialog ({MODE} mode, {KIND}): "
                                 f"{pre[-1].t:.2f} s after ding pty started, {dlg.t - pre[-1].t:.2f} s before the dialog's first frame; "
                                 "it reads as a ready, empty composer although a dialog is about to open",
                                 {"screen": "ready", "composer": "empty", "fresh": True})
                    print("   saved", os.environ["SAVE_PRE"])
            if trial == TRIALS and os.environ.get("KEYS") in ("transport", "esc", "paste"):
                run.t_start = time.time()   # frames after the keys, timed from the first byte
                if os.environ["KEYS"] == "transport":
                    run.pty.notice(notice("startup-probe"))
                elif os.environ["KEYS"] == "paste":
                    run.pty.send(PASTE_START + notice("startup-probe").encode() + PASTE_END, origin="delivery")
                else:
                    run.pty.send(ESC)
                after_frames = record(run, classify, lambda fr, t: False, max_s=3.0)
                print("   frames after the keys (from the first byte; a transport's CR went 200 ms later):")
                for f in after_frames:
                    print("     " + f.line())
                s2 = run.snap()
                print(f"   after KEYS={os.environ['KEYS']}:\n" + "\n".join("   |" + row for row in s2["rows"] if row.strip()))
                after = open(run.config).read()
                print("   config.toml changed:", after != config_before, repr(after[len(config_before):] if after.startswith(config_before) else after)[:400])
                if os.environ.get("SAVE_AFTER"):
                    save_fixture(f"{OUT}/{os.environ['SAVE_AFTER']}.json", s2,
                                 f"after DING's transport (bracketed paste of a notice, 200 ms, CR) into the startup dialog ({MODE} mode, {KIND})",
                                 {"screen": "?", "composer": "?"})
                time.sleep(1.0)
                print("   model requests:", run.summary() or "none")
    finally:
        left = run.close()
        if left:
            print("   ended leftover:", [(p, c[:60]) for p, c in left])

print(f"\n## {MODE} {KIND} {'git' if os.environ.get('GIT') else 'plain'}")
print("start -> first empty composer:", stats([r["composer"] for r in results]))
print("start -> first dialog frame:  ", stats([r["dialog"] for r in results]))
print("composer -> dialog:           ", stats([r["composer_to_dialog"] for r in results]))
print("sequences:", [" > ".join(r["kinds"]) for r in results])
