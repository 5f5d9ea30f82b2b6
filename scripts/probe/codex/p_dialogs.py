"""The dialogs beyond a command's approval (2026-12-04): what `mock:edit
PATH`, `mock:choice` and `mock:plan` open in manual mode, what Yes and Esc
do, which hooks fire around them (and which request hook context rides),
and the pickers a person opens with a slash command. Embedded mode, every
hook logged (hooklog.py).

  python3 scripts/probe/codex/p_dialogs.py edit|choice|plan [yes|esc]
  python3 scripts/probe/codex/p_dialogs.py picker COMMAND...

CONTEXT=1 arms PreToolUse and PostToolUse (and, while the dialog is open,
PreModelRequest) to answer with an `additionalContext` naming a file, to
see which request carries each. CATALOG=SLUG gives the mock model the
metadata Codex bundles for that model (say `gpt-5.5`), through
`model_catalog_json`: then Codex offers it the freeform `apply_patch` tool
(CATALOG_SET='{"field": value}' overrides fields). PRE=/plan types that
command first (Plan mode: `request_user_input` works there, and a
`<proposed_plan>` reply asks to implement it). ENABLE=FEATURE starts Codex
with `--enable FEATURE`. KEY=enter answers a picker with Return instead of
Esc. SAVE=DIR writes the screens there as captures."""
import json, os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cxprobe import *

kind = sys.argv[1]
args = sys.argv[2:]
run = Run(f"dialogs-{kind}", hooks_file=False)
m = Marks(run)
SAVE = os.environ.get("SAVE")


def context(event, tag):
    return json.dumps({"hookSpecificOutput": {"hookEventName": event,
                                              "additionalContext": f"hook context: {tag}.md"}})


def settle(seconds=1.0):
    run.wait("idle", lambda s: empty_composer(s) and not busy(s), 40)
    time.sleep(seconds)


def show(s):
    print("\n".join(r for r in s["rows"] if r.strip()))
    sel = [(r["row"], r["col"], r["text"][:40]) for r in s["runs"] if r.get("inverse") or r.get("bold")]
    print("bold/inverse runs:", sel)
    print("cursor:", s["cursor"])


def bundled_model(slug):
    """The model entry Codex's binary bundles for `slug` (its models list is
    JSON inside the binary)."""
    data = open(run.binary, "rb").read()
    at = data.find(f'"slug": "{slug}"'.encode())
    if at < 0:
        raise SystemExit(f"no bundled model {slug}")
    start = data.rfind(b"{", 0, data.rfind(b'"models"', 0, at))
    models, _ = json.JSONDecoder().raw_decode(data[start:start + 4_000_000].decode("utf-8", "replace"))
    return next(model for model in models["models"] if model["slug"] == slug)


extra = []
if os.environ.get("CATALOG"):
    # Model metadata for the mock model with a native apply_patch tool
    # (Codex's fallback metadata for an unknown model has none): a bundled
    # model's entry, with the mock model's name and no websocket.
    entry = bundled_model(os.environ["CATALOG"])
    entry.update({"slug": "mock-model", "display_name": "mock-model", "prefer_websockets": False})
    for key, value in json.loads(os.environ.get("CATALOG_SET", "{}")).items():
        entry[key] = value
    path = os.path.join(run.dir, "catalog.json")
    json.dump({"models": [entry]}, open(path, "w"))
    extra = ["-c", f"model_catalog_json={toml_str(path)}"]
if os.environ.get("ENABLE"):
    extra += ["--enable", os.environ["ENABLE"]]

try:
    pty = run.start(extra + session_flag_args(run))
    run.wait_idle_composer()
    if os.environ.get("PRE"):
        pty.send(os.environ["PRE"].encode(), 300, CR); m.mark(f"typed {os.environ['PRE']}")
        time.sleep(1.5)
        run.wait_idle_composer()
    if kind in ("edit", "choice", "plan"):
        answer = args[0] if args else "yes"
        if os.environ.get("CONTEXT"):
            run.reply("PostToolUse", context("PostToolUse", "post-tool"))
            run.reply("PreToolUse", context("PreToolUse", "pre-tool"))
        target = os.path.join(run.dir, "project-edit.txt")
        prompt = {"edit": f"mock:edit {target}", "choice": "mock:choice", "plan": "mock:plan"}[kind]
        n = len(run.hooks())
        pty.send(prompt.encode(), 300, CR); m.mark(f"submitted {prompt}")
        time.sleep(1.5)
        s = run.snap(); m.mark("1.5 s later", s)
        show(s)
        if SAVE:
            run.save(os.path.join(SAVE, f"{kind}-dialog.json"), s, f"{prompt}: the dialog")
        if os.environ.get("CONTEXT"):
            # Armed while the dialog is open: the only hooks left to fire
            # before the tool-result request.
            run.reply("PreModelRequest", context("PreModelRequest", "pre-model"))
        time.sleep(2.0)
        key = {"yes": CR, "esc": ESC, "no": b"n", "2": b"2"}.get(answer, answer.encode())
        pty.send(key); m.mark(f"answered {key!r}")
        time.sleep(1.5)
        s = run.snap(); show(s)
        if SAVE:
            run.save(os.path.join(SAVE, f"{kind}-after-{answer}.json"), s, f"{prompt}: after {answer}")
        try:
            settle()
        except TimeoutError as e:
            print("never idle:", e)
        print("file exists:", os.path.exists(target))
        print("hooks:", [h["event"] + hook_detail(h) for h in run.hooks()[n:]])
        for h in run.hooks()[n:]:
            if h["event"] in ("PreToolUse", "PermissionRequest", "PostToolUse"):
                print(h["event"], json.dumps(h["payload"])[:1500])
        for r in run.requests():
            print(r["seq"], r["class"], r["callInTurn"], r["reply"], [t["text"][:80] for t in r["texts"][-3:]])
            print("   carries:", [tag for tag in ("pre-tool", "post-tool", "pre-model") if any(f"{tag}.md" in t["text"] for t in r["texts"])])
    elif kind == "picker":
        for command in args:
            pty.send(command.encode(), 300, CR); m.mark(f"typed {command}")
            time.sleep(2.0)
            s = run.snap(); m.mark(f"{command} open", s)
            print(f"==== {command}"); show(s)
            if SAVE:
                name = command.strip("/").replace(" ", "-")
                run.save(os.path.join(SAVE, f"picker-{name}.json"), s, f"{command}: the picker")
            close = CR if os.environ.get("KEY") == "enter" else ESC
            pty.send(close); m.mark(f"{close!r}")
            time.sleep(1.5)
            s = run.snap(); print(f"---- after {close!r}"); show(s)
            if not empty_composer(s):
                pty.send(ESC); time.sleep(1.0); s = run.snap(); print("---- after a second Esc"); show(s)
        print(open(run.config).read())
finally:
    print(m.timeline())
    print(run.summary())
    print("left:", [(p, c[:60]) for p, c in run.close()])
