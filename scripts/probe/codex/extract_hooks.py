#!/usr/bin/env python3
"""Writes fixtures/providers/codex/hooks/*.json: the exact stdin payloads the
probe hook received (hooklog.py logs), one per event and variant. A fixture
that already says what the adapter must make of it (tests/providers_codex_hooks.rs)
keeps that: only its `payload` is replaced."""
import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cxprobe import BASE, REPO
OUT = os.path.join(REPO, "fixtures/providers/codex/hooks")
os.makedirs(OUT, exist_ok=True)

def log(run):
    return [json.loads(l) for l in open(os.path.join(BASE, run, "hooks.jsonl"))]

def pick(run, event, nth=0, **want):
    hits = [h for h in log(run) if h["event"] == event and all(h["payload"].get(k) == v for k, v in want.items())]
    return hits[nth]["payload"]

def pick_prompt(run, prefix):
    return next(h["payload"] for h in log(run) if h["event"] == "UserPromptSubmit" and h["payload"]["prompt"].startswith(prefix))

def after(run, event, previous_event, previous_key, previous_value):
    hooks = log(run)
    for i, h in enumerate(hooks):
        if h["event"] == event:
            earlier = [x for x in hooks[:i] if x["event"] == previous_event]
            if earlier and earlier[-1]["payload"].get(previous_key, "").startswith(previous_value):
                return h["payload"]
    raise KeyError(event)

FIXTURES = {
    "SessionStart-startup": pick("main", "SessionStart", source="startup"),
    "SessionStart-compact": pick("main", "SessionStart", source="compact"),
    "SessionStart-clear": pick("approval", "SessionStart", source="clear"),
    "UserPromptSubmit": pick_prompt("main", "please mock:run 12"),
    "UserPromptSubmit-queued": pick_prompt("main", "also look at the lexer"),
    "UserPromptSubmit-rpc-queue": pick_prompt("queue", "[ding] 1 unread inbox message"),
    "PreModelRequest": pick("main", "PreModelRequest"),
    "PostModelRequest": pick("main", "PostModelRequest"),
    "PreToolUse": pick("main", "PreToolUse"),
    "PostToolUse": pick("main", "PostToolUse"),
    "PermissionRequest": pick("main", "PermissionRequest"),
    "Interrupt-esc-during-tool": pick("main", "Interrupt", 0),
    "Interrupt-approval-cancelled": pick("main", "Interrupt", 1),
    "PreCompact": pick("main", "PreCompact"),
    "PostCompact": pick("main", "PostCompact"),
    "Stop": pick("main", "Stop"),
    "Stop-continuation": pick("boundary", "Stop", stop_hook_active=True),
    "SessionEnd": pick("main", "SessionEnd"),
}
for name, payload in FIXTURES.items():
    path = os.path.join(OUT, name + ".json")
    fixture = payload
    if os.path.exists(path):
        existing = json.load(open(path))
        if "payload" in existing:
            existing["payload"] = payload
            fixture = existing
    with open(path, "w") as f:
        json.dump(fixture, f, indent=1, ensure_ascii=False)
        f.write("\n")
print(sorted(FIXTURES))
