//! Lowering semantics: defaults, the DING block's rules, paths, the
//! fingerprint's canonical form, drift, and `$ST_HOOKS` staying literal
//! until spawn time.

use std::collections::HashMap;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ding::core::config::{EngineConfig, Fence, Policy, Tunables};
use ding::decl::{
    self, AgentSpec, DingSpec, ExpandError, FieldDrift, FingerprintInput, Fingerprinted, drift,
    expand_argv,
};

const BASE_DIR: &str = "/srv/agents";

fn agents(text: &str) -> Vec<AgentSpec> {
    let checked = decl::check_bytes("test.kdl", text.as_bytes(), Path::new(BASE_DIR));
    assert!(!checked.has_errors(), "{}", checked.render_diagnostics());
    checked.agents
}

fn agent(text: &str) -> AgentSpec {
    let mut all = agents(text);
    assert_eq!(all.len(), 1);
    all.remove(0)
}

fn errors(text: &str) -> String {
    let checked = decl::check_bytes("test.kdl", text.as_bytes(), Path::new(BASE_DIR));
    assert!(checked.has_errors(), "expected errors in {text:?}");
    assert!(checked.agents.is_empty());
    checked.render_positioned()
}

const FRESH_IDLE: &str = r#"
agent "worker" {
  command "harness"
  ding {
    delivery "turn-boundary+fresh-idle"
    adapter { command "$ST_HOOKS/generic-adapter" "--strict"; }
  }
}
"#;

#[test]
fn omitted_ding_block_lowers_to_the_pre_change_default() {
    let spec = agent("agent \"worker\" { command \"harness\"; }");
    assert_eq!(spec.ding, DingSpec::default());
    assert_eq!(spec.ding.policy, Policy::Aggressive);
    assert_eq!(spec.ding.tunables, Tunables::default());
    assert_eq!(spec.ding.adapter, None);
    let unread = format!("{BASE_DIR}/inbox/worker/new");
    assert_eq!(
        spec.engine_config(),
        EngineConfig::new(Policy::Aggressive, "worker", unread)
    );
}

#[test]
fn bare_ding_block_means_the_same_as_none() {
    let omitted = agent("agent \"worker\" { command \"harness\"; }");
    let bare = agent("agent \"worker\" { command \"harness\"; ding {}; }");
    let bare_node = agent("agent \"worker\" { command \"harness\"; ding; }");
    assert_eq!(bare, omitted);
    assert_eq!(bare_node, omitted);
    assert_eq!(bare.fingerprint(), omitted.fingerprint());
}

#[test]
fn explicit_defaults_do_not_change_the_lowered_spec() {
    let omitted = agent("agent \"worker\" { command \"harness\"; }");
    let explicit = agent(
        "agent \"worker\" { command \"harness\"; inbox \"./inbox/worker/\"; cwd \".\"\n\
         ding { delivery \"aggressive\"; re-ring-after \"600s\"; submit-delay \"200ms\"; notice-max-files 16; } }",
    );
    assert_eq!(explicit, omitted);
}

#[test]
fn seed_example_lowers_to_fresh_idle_with_its_literal_adapter() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/providers/codex/declarations/seed.kdl");
    let spec = agent(&fs::read_to_string(path).expect("seed fixture"));
    assert_eq!(spec.name, "worker");
    assert_eq!(spec.ding.policy, Policy::TurnBoundaryFreshIdle);
    let adapter = spec.adapter_command().expect("the seed names an adapter");
    assert_eq!(adapter.len(), 1);
    assert!(adapter[0].starts_with("$ST_HOOKS/"), "{adapter:?}");
    assert!(adapter[0].ends_with("-ding-adapter"), "{adapter:?}");
    assert_eq!(spec.ding.tunables, Tunables::default());
    assert_eq!(spec.command, None);
}

#[test]
fn fresh_idle_requires_an_adapter_with_a_program() {
    let no_adapter =
        errors("agent \"w\" { command \"h\"; ding { delivery \"turn-boundary+fresh-idle\"; } }");
    assert!(no_adapter.contains("needs an adapter"), "{no_adapter}");
    let empty = errors(
        "agent \"w\" { command \"h\"; ding { delivery \"turn-boundary+fresh-idle\"; adapter { command \"\"; } } }",
    );
    assert!(
        empty.contains("adapter `command` program is empty"),
        "{empty}"
    );
    let missing = errors(
        "agent \"w\" { command \"h\"; ding { delivery \"turn-boundary+fresh-idle\"; adapter {} } }",
    );
    assert!(missing.contains("`adapter` needs a `command`"), "{missing}");
}

#[test]
fn unknown_delivery_tokens_fail_with_a_suggestion() {
    let found = errors("agent \"w\" { ding { delivery \"fresh-idle\"; } }");
    assert!(found.contains("unknown delivery `fresh-idle`"), "{found}");
    let found = errors("agent \"w\" { ding { delivery \"turn-boundary\"; } }");
    assert!(
        found.contains("did you mean `turn-boundary+fresh-idle`?"),
        "{found}"
    );
}

#[test]
fn tunables_lower_into_core_tunables() {
    let spec = agent(
        r#"agent "w" { command "h"; ding {
            delivery "turn-boundary+fresh-idle"; adapter { command "a"; }
            lease-cap "750ms"; adapter-silence "2m"; re-ring-after "never"
            submit-delay "1s"; notice-max-files 4; unsafe-receipt-fence #true
            quiet-input "600ms"; settled-output "1s"
            gather-quiet "0s"; gather-cap "10s" } }"#,
    );
    assert_eq!(
        spec.ding.tunables,
        Tunables {
            lease_cap: Duration::from_millis(750),
            adapter_silence: Duration::from_secs(120),
            re_ring_after: None,
            submit_delay: Duration::from_secs(1),
            notice_max_files: 4,
            fence: Fence::ReceiptUnsafe,
            quiet_input: Duration::from_millis(600),
            settled_output: Duration::from_secs(1),
            gather_quiet: Duration::ZERO,
            gather_cap: Duration::from_secs(10),
        }
    );
    assert_eq!(spec.engine_config().tunables, spec.ding.tunables);
}

#[test]
fn relative_paths_resolve_against_the_declaration_directory() {
    let spec = agent("agent \"w\" { command \"h\"; cwd \"desks//w/./\"; inbox \"../shared/in\"; }");
    assert_eq!(spec.cwd, PathBuf::from("/srv/agents/desks/w"));
    assert_eq!(spec.inbox, PathBuf::from("/srv/agents/../shared/in"));
    let spec = agent("agent \"w\" { command \"h\"; inbox \"/var/spool/w\"; }");
    assert_eq!(spec.cwd, PathBuf::from(BASE_DIR));
    assert_eq!(spec.inbox, PathBuf::from("/var/spool/w"));
    let spec = agent("agent \"w\" { command \"h\"; }");
    assert_eq!(spec.inbox, PathBuf::from("/srv/agents/inbox/w"));
}

#[test]
fn check_file_resolves_paths_against_the_files_own_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sub = dir.path().join("fleet");
    fs::create_dir(&sub).expect("mkdir");
    let file = sub.join("a.kdl");
    fs::write(&file, "agent \"w\" { command \"h\"; cwd \"work\"; }").expect("write");
    let real = fs::canonicalize(&sub).expect("canonical dir");
    let loaded = decl::load_file(&file).expect("valid declaration");
    assert_eq!(loaded[0].cwd, real.join("work"));
    assert_eq!(loaded[0].inbox, real.join("inbox/w"));
    // The same file reached through `..` lowers identically.
    let roundabout = sub.join("..").join("fleet").join("a.kdl");
    assert_eq!(
        decl::load_file(&roundabout).expect("valid declaration"),
        loaded
    );
}

#[test]
fn load_file_fails_with_every_rendered_diagnostic() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("bad.kdl");
    fs::write(&file, "agent \"w\" {\n  cwd 5\n  delivry \"x\"\n}\n").expect("write");
    let err = format!("{:#}", decl::load_file(&file).unwrap_err());
    assert!(
        err.contains("bad.kdl:2:7: error: `cwd` expects a string"),
        "{err}"
    );
    assert!(
        err.contains("bad.kdl:3:3: error: unknown node `delivry`"),
        "{err}"
    );
}

#[test]
fn several_agents_keep_file_order() {
    let names: Vec<String> = agents(
        "agent \"c\" { command \"h\"; }\nagent \"a\" { command \"h\"; }\nagent \"b\" { command \"h\"; }",
    )
    .into_iter()
    .map(|spec| spec.name)
    .collect();
    assert_eq!(names, ["c", "a", "b"]);
}

#[test]
fn fingerprint_ignores_formatting_order_and_equivalent_spellings() {
    let reference = agent(FRESH_IDLE).fingerprint();
    let reshaped = agent(
        r##"// same agent, other spelling
agent worker {
  ding {
    adapter {
      command #"$ST_HOOKS/generic-adapter"# "--strict"
    }
    /* order does not matter */ delivery "turn-boundary+fresh-idle"
    lease-cap "5000ms"
  }
  inbox "inbox/./worker"
  command "harness"
}"##,
    )
    .fingerprint();
    assert_eq!(reshaped, reference);
}

#[test]
fn fingerprint_has_a_stable_canonical_form() {
    let input = agent(FRESH_IDLE).fingerprint_input();
    assert_eq!(
        input.canonical_json(),
        concat!(
            r#"{"adapterCommand":["$ST_HOOKS/generic-adapter","--strict"],"adapterSilenceMs":30000,"#,
            r#""agent":"worker","delivery":"turn-boundary+fresh-idle","gatherCapMs":3000,"#,
            r#""gatherQuietMs":1000,"inbox":"/srv/agents/inbox/worker","#,
            r#""leaseCapMs":5000,"noticeMaxFiles":16,"quietInputMs":300,"reRingAfterMs":600000,"#,
            r#""settledOutputMs":250,"submitDelayMs":200,"version":4}"#
        )
    );
    // Pinned, and equal to `printf %s JSON | sha256sum`: a change here is
    // drift for every running sidecar.
    assert_eq!(
        input.fingerprint(),
        "sha256:5c27b1683de6681c9d7aaf5219bb4a592d149c4718e575a7d70fbff94c73a41c"
    );
}

#[test]
fn any_policy_or_adapter_edit_changes_the_fingerprint_and_is_named_by_drift() {
    let base = agent(FRESH_IDLE);
    let edits: [(&str, &str, &str); 5] = [
        ("\"--strict\"", "\"--lenient\"", "ding.adapter.command"),
        ("generic-adapter", "other-adapter", "ding.adapter.command"),
        (
            "delivery \"turn-boundary+fresh-idle\"\n    adapter { command \"$ST_HOOKS/generic-adapter\" \"--strict\"; }",
            "delivery \"aggressive\"",
            "ding.delivery",
        ),
        ("agent \"worker\"", "agent \"worker-2\"", "agent"),
        (
            "command \"harness\"",
            "command \"harness\"\n  inbox \"elsewhere\"",
            "inbox",
        ),
    ];
    for (from, to, field) in edits {
        assert!(FRESH_IDLE.contains(from), "{from}");
        let edited = agent(&FRESH_IDLE.replacen(from, to, 1));
        assert_ne!(edited.fingerprint(), base.fingerprint(), "{field}");
        let fields: Vec<String> = drift(&base.fingerprint_input(), &edited.fingerprint_input())
            .into_iter()
            .map(|drifted| drifted.field)
            .collect();
        assert!(fields.contains(&field.to_string()), "{field}: {fields:?}");
    }
}

#[test]
fn drift_reports_exactly_the_changed_fields_with_old_and_new_values() {
    let old = agent(FRESH_IDLE).fingerprint_input();
    let new = agent(&FRESH_IDLE.replace(
        "\"--strict\"; }",
        "\"--strict\"; }\n    lease-cap \"2s\"\n    re-ring-after \"never\"",
    ))
    .fingerprint_input();
    assert_eq!(
        drift(&old, &new),
        [
            FieldDrift {
                field: "ding.lease-cap".into(),
                old: "\"5s\"".into(),
                new: "\"2s\"".into(),
            },
            FieldDrift {
                field: "ding.re-ring-after".into(),
                old: "\"10m\"".into(),
                new: "\"never\"".into(),
            },
        ]
    );
    assert!(drift(&old, &old).is_empty());
    assert_eq!(
        drift(&old, &new)[0].to_string(),
        "ding.lease-cap: \"5s\" -> \"2s\""
    );
}

#[test]
fn harness_settings_change_the_launch_generation_not_the_sidecar_fingerprint() {
    let base = agent(FRESH_IDLE);
    let edited = agent(&FRESH_IDLE.replace(
        "command \"harness\"",
        "command \"harness\" \"--fast\"\n  env { MODE \"x\"; }",
    ));
    assert_eq!(edited.fingerprint(), base.fingerprint());
    assert_ne!(edited.launch_generation(), base.launch_generation());
    let fields: Vec<String> = drift(&base.launch_input(), &edited.launch_input())
        .into_iter()
        .map(|drifted| drifted.field)
        .collect();
    assert_eq!(fields, ["command", "env"]);
}

#[test]
fn fingerprint_input_round_trips_through_json() {
    let input = agent(FRESH_IDLE).fingerprint_input();
    let stored = serde_json::to_string(&input).expect("serialize");
    let loaded: FingerprintInput = serde_json::from_str(&stored).expect("deserialize");
    assert_eq!(loaded, input);
    assert_eq!(loaded.fingerprint(), input.fingerprint());
    let unknown_field = stored.replacen('{', "{\"extra\":1,", 1);
    assert!(serde_json::from_str::<FingerprintInput>(&unknown_field).is_err());
}

#[test]
fn a_version_1_fingerprint_input_is_still_read_and_drifts_in_its_version_time_fence_and_gather() {
    // What a sidecar of an older ding records and reports: snake_case keys.
    let stored = r#"{"version":1,"agent":"worker","inbox":"/srv/agents/inbox/worker","delivery":"turn-boundary+fresh-idle","adapter_command":["$ST_HOOKS/generic-adapter","--strict"],"lease_cap_ms":5000,"adapter_silence_ms":30000,"re_ring_after_ms":600000,"submit_delay_ms":200,"notice_max_files":16}"#;
    let old: FingerprintInput = serde_json::from_str(stored).expect("version 1 is read");
    let fields: Vec<String> = drift(&old, &agent(FRESH_IDLE).fingerprint_input())
        .into_iter()
        .map(|drifted| drifted.field)
        .collect();
    // Its sidecar sent without a time fence and gathered nothing: that is
    // drift too.
    assert_eq!(
        fields,
        [
            "version",
            "ding.quiet-input",
            "ding.settled-output",
            "ding.gather-quiet",
            "ding.gather-cap"
        ]
    );
}

#[test]
fn st_hooks_stays_literal_until_spawn_time() {
    let spec = agent(FRESH_IDLE);
    let argv = spec.adapter_command().expect("adapter").to_vec();
    assert_eq!(argv[0], "$ST_HOOKS/generic-adapter");
    assert!(
        spec.fingerprint_input()
            .canonical_json()
            .contains("$ST_HOOKS/generic-adapter")
    );
    let env = HashMap::from([("ST_HOOKS", OsString::from("/opt/hooks"))]);
    let expanded = expand_argv(&argv, |name| env.get(name).cloned()).expect("expands");
    assert_eq!(
        expanded,
        ["/opt/hooks/generic-adapter", "--strict"].map(OsString::from)
    );
    assert_eq!(
        expand_argv(&argv, |_| None),
        Err(ExpandError::Unset {
            variable: "ST_HOOKS"
        })
    );
}
