"""Claude Code 2.1.328's first seconds under `ding pty`: the folder trust
dialog (and any other screen it draws before the composer), when it shows,
and how long after answering it the first empty composer comes.

  p_startup.py [TRIALS]
  env: TRUSTED=1 keeps the folder trusted (a baseline); GIT=1 makes the
  project a git repository; ANSWER=keys (default: the footer's confirm key,
  Return, on the preselected option, after checking it is the trust option),
  ANSWER=transport (DING's transport: bracketed paste of a notice, 200 ms,
  CR), ANSWER=paste (the paste alone), ANSWER=esc, ANSWER=none; SAVE=1 writes trial 1's screens to
  fixtures/providers/claude/screens/ (trust-folder-dialog.json, and the
  first composer after the answer as startup-after-trust.json).

Each trial polls the PTY host every 15 ms from the spawn of `ding pty` and
prints each distinct frame (time, revision, kind, text)."""
import json, os, sys, time
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "codex"))
from clprobe import *
from cxprobe import PASTE_START, PASTE_END, CR, notice
from startup import record, first, settled, stats, save_fixture, first_text

TRIALS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
ANSWER = os.environ.get("ANSWER", "keys")
TRUSTED = bool(os.environ.get("TRUSTED"))
GIT = bool(os.environ.get("GIT"))
OUT = os.path.join(REPO, "fixtures/providers/claude/screens")
WATCH = float(os.environ.get("WATCH", "12"))   # seconds to keep watching after the first composer


def classify(snap):
    text = rows_text(snap)
    low = text.lower()
    if "accessing workspace" in low or "trust this folder" in low:
        return "dialog:trust"
    if "api key" in low:
        return "dialog:apikey"
    if empty_composer(snap):
        return "composer"
    if any(r.lstrip().startswith("❯ ") and "1." in r for r in snap["rows"]):
        return "dialog:other"
    if not text.strip():
        return "blank"
    return "other"


def selected_row(snap):
    for row in snap["rows"]:
        if row.lstrip().startswith("❯ "):   # U+0020 after it: a list's pointer (the composer has U+00A0)
            return row.strip()
    return None


def pty_status(run):
    if run.pty_proc.poll() is not None:
        return f"ding pty exited {run.pty_proc.returncode}"
    try:
        return json.dumps(run.pty.status())[:400]
    except (OSError, ValueError) as e:
        return f"no reply: {e}"


results = []
for trial in range(1, TRIALS + 1):
    run = ClaudeRun(f"cl-start-{'t' if TRUSTED else 'u'}{'g' if GIT else ''}-{trial}", trusted=TRUSTED, git=GIT)
    try:
        run.start()
        want = "composer" if TRUSTED else "dialog:trust"
        frames = record(run, classify,
                        lambda fr, t: (lambda hit: hit is not None and t - hit.t > 1.5)(first(fr, lambda k: k == want)),
                        max_s=20.0)
        comp = first(frames, lambda k: k == "composer")
        dlg = first(frames, lambda k: k.startswith("dialog"))
        r = {"trial": trial, "composer_before": comp.t if comp and (not dlg or comp.t < dlg.t) else None,
             "dialog": dlg.t if dlg else None, "kinds": [f.kind for f in frames]}
        print(f"== trial {trial}")
        for f in frames:
            print("   " + f.line())
        if dlg:
            s = settled(run, frames, dlg.kind)
            print("   settled dialog (selected: %r):" % selected_row(s))
            print("\n".join("   |" + row for row in s["rows"] if row.strip()))
            print("   cursor", s["cursor"], "styled:", json.dumps([x for x in s["runs"] if x.get("fg") is not None or x.get("bold") or x.get("inverse")])[:900])
            if trial == 1 and os.environ.get("SAVE"):
                save_fixture(f"{OUT}/trust-folder-dialog.json", s,
                             "Claude Code 2.1.328 under ding pty, TERM=xterm-256color, 80x24, model-free, onboarding done, "
                             f"folder not trusted ({'git repository' if GIT else 'plain directory'}): the startup "
                             f"\"Do you trust the files in this folder?\" dialog, settled; first frame {dlg.t:.2f} s "
                             f"after ding pty started, no composer drawn before it; preselected: {selected_row(s)}",
                             {"screen": "dialog", "composer": "unknown"})
            if ANSWER != "none":
                if ANSWER == "transport":
                    run.t_start = time.time()     # from here: time since the paste's first byte
                    run.pty.send(PASTE_START + notice("startup-probe").encode() + PASTE_END, 200, CR, origin="delivery")
                elif ANSWER == "paste":
                    run.t_start = time.time()     # a bracketed paste alone, no Return
                    run.pty.send(PASTE_START + notice("startup-probe").encode() + PASTE_END, origin="delivery")
                elif ANSWER == "esc":
                    run.t_start = time.time()
                    run.pty.send(b"\x1b")
                else:
                    # The footer names Enter (confirm) and Esc (cancel); the
                    # trust option is the second one: Down, then Enter.
                    run.pty.send(b"\x1b[B")
                    time.sleep(0.3)
                    sel = selected_row(run.snap())
                    print("   after Down, selected:", repr(sel))
                    if not sel or "trust" not in sel:
                        raise RuntimeError("the trust option is not selected")
                    run.t_start = time.time()     # from here: time since the Return
                    run.pty.send(CR)
                after = record(run, classify,
                               lambda fr, t: (lambda hit: hit is not None and t - hit.t > WATCH)(first(fr, lambda k: k == "composer")),
                               max_s=WATCH + 8.0 if ANSWER == "keys" else 6.0)
                print(f"   after the answer ({ANSWER}):")
                for f in after:
                    print("     " + f.line())
                ac = first(after, lambda k: k == "composer")
                for prev, f in zip(after, after[1:]):
                    changed = [(i, a, b) for i, (a, b) in enumerate(zip(prev.snap["rows"], f.snap["rows"])) if a != b]
                    if prev.kind == "composer" and f.t > 1.0:
                        print(f"     {f.t:.3f}s changed rows:", [(i, b.strip()[:70]) for i, a, b in changed][:6])
                r["answer_to_composer"] = ac.t if ac else None
                r["after_kinds"] = [f.kind for f in after]
                try:
                    last = run.snap()
                except OSError as e:
                    last = {"rows": [f"(no PTY host: {e})"]}
                print("   pty status:", pty_status(run))
                print("   screen WATCH s after that composer:\n" + "\n".join("   |" + row for row in last["rows"] if row.strip()))
                if trial == 1 and os.environ.get("SAVE") and ANSWER == "transport" and "rows" in last and "runs" in last:
                    save_fixture(f"{OUT}/trust-folder-after-notice.json", last,
                                 "Claude Code 2.1.328 under ding pty, 80x24: DING's transport (bracketed paste of a notice, 200 ms, CR) "
                                 "into the startup folder trust dialog: the CR chose the preselected \"No, exit\"; Claude printed "
                                 "\"Claude Code didn't start because this folder isn't trusted.\" and exited with code 1; "
                                 "the PTY host kept this last screen (child state exited)",
                                 {"screen": "dialog", "composer": "unknown"})
                cfg = run.config()
                proj = cfg.get("projects", {}).get(run.launch["cwd"], {})
                print("   hasTrustDialogAccepted now:", proj.get("hasTrustDialogAccepted"), " model requests:",
                      [(q.get("class"), q.get("prompt")) for q in run.requests()])
                if trial == 1 and os.environ.get("SAVE") and ac:
                    name = "startup-after-trust" if ANSWER == "keys" else "trust-folder-after-notice"
                    save_fixture(f"{OUT}/{name}.json", ac.snap,
                                 f"Claude Code 2.1.328: the first empty composer after answering the folder trust dialog "
                                 f"({'Return on the preselected trust option' if ANSWER == 'keys' else 'with DING transport: paste of a notice, 200 ms, CR'}), "
                                 f"{ac.t:.2f} s after the answer",
                                 {"screen": "ready", "composer": "empty"})
        results.append(r)
        print("   " + json.dumps({k: v for k, v in r.items() if k not in ("kinds", "after_kinds")}))
    finally:
        left = run.close()
        if left:
            print("   ended leftover:", [(p, c[:60]) for p, c in left])

print(f"\n## claude {'trusted' if TRUSTED else 'untrusted'} {'git' if GIT else 'plain'} answer={ANSWER}")
print("start -> first composer before any dialog:", stats([r["composer_before"] for r in results]))
print("start -> first dialog frame:              ", stats([r["dialog"] for r in results]))
print("answer -> first empty composer:           ", stats([r.get("answer_to_composer") for r in results]))
