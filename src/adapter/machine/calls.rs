//! One hook call line, read and checked for this adapter, and the
//! refusals a hook gets instead of a plan.

use crate::adapter::hook_wire::{HOOK_WIRE_VERSION, HookCall, HookRefusal, MAX_CALL_BYTES};
use crate::adapter::{AgentContext, HookPlan, Provider};
use crate::core::protocol::check_identity;
use crate::core::time::Time;

/// What the machine makes of one hook call line: the call and the
/// provider's plan for it, or the refusal to answer with
/// (`malformed-call`, `unknown-version`, `wrong-provider`). Either way the
/// hook gets one answer line: a refusal now, or the plan's answer (now,
/// after its claim, or empty when the claim's deadline passes).
pub fn judge_call<P: Provider>(
    provider: &mut P,
    line: &[u8],
    agent: &AgentContext,
    now: Time,
) -> Result<(HookCall, HookPlan), HookRefusal> {
    let call = read_call(provider.name(), line)?;
    if call.identity.is_none() {
        return Err(no_identity());
    }
    let plan = provider.on_hook(&call, agent, now);
    Ok((call, plan))
}

/// One hook call line, read and checked for an adapter of `provider`.
pub(super) fn read_call(provider: &str, line: &[u8]) -> Result<HookCall, HookRefusal> {
    let call: HookCall =
        serde_json::from_slice(line).map_err(|err| refusal("malformed-call", err.to_string()))?;
    if call.v != HOOK_WIRE_VERSION {
        return Err(refusal("unknown-version", format!("version {}", call.v)));
    }
    if call.provider != provider {
        let message = format!("this adapter serves `{provider}`, not `{}`", call.provider);
        return Err(refusal("wrong-provider", message));
    }
    // The machine stamps the call's claims and facts with this identity:
    // one the sidecar would refuse would leave the hook waiting for nothing.
    if let Some(identity) = &call.identity {
        check_identity(identity)
            .map_err(|err| refusal("malformed-call", format!("identity: {err}")))?;
    }
    Ok(call)
}

fn refusal(error: &str, message: String) -> HookRefusal {
    HookRefusal {
        error: error.into(),
        message,
    }
}

/// A call without the harness identity comes from a harness DING did not
/// start (its hooks run without `DING_SESSION`, `DING_INCARNATION` and
/// `DING_GENERATION`): whatever it claimed would go to a session that may
/// never ask again.
pub(super) fn no_identity() -> HookRefusal {
    refusal(
        "no-identity",
        "the call names no harness identity (DING_SESSION, DING_INCARNATION, DING_GENERATION): its harness was not started by this agent's PTY host".into(),
    )
}

/// A call about another terminal than this adapter's, once it waited for
/// it in vain.
pub(super) fn another_terminal() -> HookRefusal {
    refusal(
        "identity-mismatch",
        "the call names another harness than the one this adapter serves (stale, or not this agent's)".into(),
    )
}

/// The refusal of a call line longer than [`MAX_CALL_BYTES`].
pub fn oversized_call(len: usize) -> HookRefusal {
    HookRefusal {
        error: "oversized-call".into(),
        message: format!("a call of {len} bytes exceeds {MAX_CALL_BYTES}"),
    }
}
