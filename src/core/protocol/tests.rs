use std::time::Duration;

use crate::core::message::MessageName;

use super::*;

const ENVELOPE: &str =
    r#""v":1,"session":"host.worker","incarnation":"i-1","generation":"sha256:ab""#;

fn line(rest: &str) -> Vec<u8> {
    format!("{{{ENVELOPE},{rest}}}").into_bytes()
}

#[test]
fn parses_a_fresh_idle_activity() {
    let text = line(
        r#""kind":"activity","sequence":7,"state":"idle","validForMs":250,"composer":"empty","revision":42,"reason":"opaque""#,
    );
    let event = parse_line(&text).unwrap();
    assert_eq!(event.sequence, 7);
    assert_eq!(event.identity.incarnation, "i-1");
    assert_eq!(
        event.body,
        Body::Activity(Activity {
            state: ActivityState::Idle,
            valid_for: Duration::from_millis(250),
            composer: Composer::Empty,
            revision: Some(42),
            typed: None,
            withdraw: None,
            reason: Some("opaque".into()),
        })
    );
}

#[test]
fn an_activity_may_say_which_typed_notice_the_composer_holds() {
    let text = line(
        r#""kind":"activity","sequence":8,"state":"idle","validForMs":250,"composer":"nonempty","revision":43,"typed":5"#,
    );
    let Body::Activity(activity) = parse_line(&text).unwrap().body else {
        panic!("not an activity");
    };
    assert_eq!(activity.typed, Some(5));
    let bad = line(r#""kind":"activity","sequence":8,"state":"idle","validForMs":250,"typed":"5""#);
    assert!(matches!(
        parse_line(&bad),
        Err(ProtocolError::InvalidField { field, .. }) if field == "typed"
    ));
}

#[test]
fn composer_defaults_to_unknown_and_unknown_fields_are_ignored() {
    let text =
        line(r#""kind":"activity","sequence":1,"state":"idle","validForMs":9,"future":{"x":[1]}"#);
    let event = parse_line(&text).unwrap();
    let Body::Activity(activity) = event.body else {
        panic!("not activity")
    };
    assert_eq!(activity.composer, Composer::Unknown);
}

#[test]
fn parses_turn_boundary_and_lifecycle() {
    let text = line(r#""kind":"turn-boundary","sequence":2,"messages":["a.md","b.md"]"#);
    let event = parse_line(&text).unwrap();
    assert_eq!(
        event.body,
        Body::TurnBoundary {
            messages: vec![
                MessageName::new("a.md").unwrap(),
                MessageName::new("b.md").unwrap()
            ]
        }
    );
    let text = line(r#""kind":"lifecycle","sequence":3,"event":"clear""#);
    let event = parse_line(&text).unwrap();
    assert_eq!(
        event.body,
        Body::Lifecycle {
            event: Lifecycle::Clear
        }
    );
}

#[test]
fn parses_a_release_with_its_reason_and_refuses_an_unknown_one() {
    let text = line(r#""kind":"release","sequence":4,"messages":["a.md"],"reason":"no-receipt""#);
    assert_eq!(
        parse_line(&text).unwrap().body,
        Body::Release {
            messages: vec![MessageName::new("a.md").unwrap()],
            reason: Undelivered::NoReceipt,
        }
    );
    let text = line(r#""kind":"release","sequence":4,"messages":["a.md"],"reason":"withheld""#);
    assert!(matches!(
        parse_line(&text).unwrap().body,
        Body::Release {
            reason: Undelivered::Withheld,
            ..
        }
    ));
    let text = line(r#""kind":"release","sequence":4,"messages":["a.md"],"reason":"later""#);
    assert!(matches!(
        parse_line(&text),
        Err(ProtocolError::InvalidField { field, .. }) if field == "reason"
    ));
    let text = line(r#""kind":"release","sequence":4,"messages":["a.md"]"#);
    assert_eq!(
        parse_line(&text),
        Err(ProtocolError::MissingField {
            field: "reason".into()
        })
    );
}

#[test]
fn every_defect_is_a_typed_error() {
    let cases: Vec<(Vec<u8>, ProtocolError)> = vec![
        (
            vec![b'{'; MAX_LINE_BYTES + 1],
            ProtocolError::LineTooLong {
                len: MAX_LINE_BYTES + 1,
            },
        ),
        (
            b"{\"v\":1,\xff}".to_vec(),
            ProtocolError::InvalidUtf8 { at: 7 },
        ),
        (
            br#"{"v":2,"kind":"activity"}"#.to_vec(),
            ProtocolError::UnknownVersion { found: "2".into() },
        ),
        (
            br#"{"v":"1"}"#.to_vec(),
            ProtocolError::UnknownVersion {
                found: "string \"1\"".into(),
            },
        ),
        (
            br#"{"kind":"activity"}"#.to_vec(),
            ProtocolError::MissingField { field: "v".into() },
        ),
        (
            line(r#""kind":"bogus","sequence":1"#),
            ProtocolError::UnknownKind {
                found: "bogus".into(),
            },
        ),
        (
            line(r#""kind":"activity","sequence":1,"validForMs":5"#),
            ProtocolError::MissingField {
                field: "state".into(),
            },
        ),
        (
            line(r#""kind":"activity","sequence":1,"state":"idle""#),
            ProtocolError::MissingField {
                field: "validForMs".into(),
            },
        ),
        (
            line(r#""kind":"turn-boundary","sequence":1"#),
            ProtocolError::MissingField {
                field: "messages".into(),
            },
        ),
        (
            line(r#""kind":"lifecycle","sequence":1"#),
            ProtocolError::MissingField {
                field: "event".into(),
            },
        ),
        (
            line(r#""kind":"lifecycle","sequence":1,"event":"nap""#),
            ProtocolError::UnknownLifecycle {
                found: "nap".into(),
            },
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(
            parse_line(&input),
            Err(expected),
            "input {:?}",
            String::from_utf8_lossy(&input)
        );
    }
}

#[test]
fn mistyped_fields_are_named() {
    let cases = [
        (
            r#""kind":"activity","sequence":-1,"state":"idle","validForMs":5"#,
            "sequence",
        ),
        (
            r#""kind":"activity","sequence":1.5,"state":"idle","validForMs":5"#,
            "sequence",
        ),
        (
            r#""kind":"activity","sequence":1,"state":"sleepy","validForMs":5"#,
            "state",
        ),
        (
            r#""kind":"activity","sequence":1,"state":"idle","validForMs":"5""#,
            "validForMs",
        ),
        (
            r#""kind":"activity","sequence":1,"state":"idle","validForMs":5,"composer":"full""#,
            "composer",
        ),
        (
            r#""kind":"activity","sequence":1,"state":"idle","validForMs":5,"revision":-3"#,
            "revision",
        ),
        (
            r#""kind":"turn-boundary","sequence":1,"messages":"a.md""#,
            "messages",
        ),
        (
            r#""kind":"turn-boundary","sequence":1,"messages":[]"#,
            "messages",
        ),
        (
            r#""kind":"turn-boundary","sequence":1,"messages":["../x"]"#,
            "messages",
        ),
        (
            r#""kind":"turn-boundary","sequence":1,"messages":["a","a"]"#,
            "messages",
        ),
    ];
    for (rest, field) in cases {
        match parse_line(&line(rest)) {
            Err(ProtocolError::InvalidField { field: named, .. }) => {
                assert_eq!(named, field, "{rest}")
            }
            other => panic!("{rest}: expected invalid {field}, got {other:?}"),
        }
    }
}

#[test]
fn identity_fields_must_be_non_empty_bounded_strings() {
    let too_long = "x".repeat(MAX_FIELD_BYTES + 1);
    for (session, field) in [
        ("\"\"", "session"),
        ("5", "session"),
        (&format!("\"{too_long}\"")[..], "session"),
    ] {
        let text = format!(
            r#"{{"v":1,"kind":"activity","session":{session},"incarnation":"i","generation":"g","sequence":1,"state":"idle","validForMs":1}}"#
        );
        assert!(
            matches!(parse_line(text.as_bytes()), Err(ProtocolError::InvalidField { field: f, .. }) if f == field),
            "{session}"
        );
    }
}

proptest::proptest! {
    /// Arbitrary bytes never panic the parser: they parse or they are a typed error.
    #[test]
    fn parse_line_never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..512)) {
        let _ = parse_line(&bytes);
    }
}

/// A valid line with one field replaced by another JSON value never
/// panics: it is a typed error naming that field, or, when the
/// replacement is valid there, a line that parses with it. Every field
/// with every replacement: the space is small enough to walk whole.
#[test]
fn mistyped_valid_lines_never_panic() {
    let fields = [
        "v",
        "kind",
        "session",
        "incarnation",
        "generation",
        "sequence",
        "state",
        "validForMs",
        "composer",
        "revision",
        "reason",
    ];
    let replacements = [
        "null",
        "true",
        "-1",
        "1.5",
        "\"x\"",
        "[]",
        "{}",
        "18446744073709551616",
    ];
    let valid = line(
        r#""kind":"activity","sequence":7,"state":"idle","validForMs":250,"composer":"empty","revision":3,"reason":"r""#,
    );
    for field in fields {
        for replacement in replacements {
            let mut value: serde_json::Value = serde_json::from_slice(&valid).unwrap();
            value[field] = serde_json::from_str(replacement).unwrap();
            let text = value.to_string();
            let result = parse_line(text.as_bytes());
            assert!(
                mistyped_outcome_is_right(field, replacement, &result),
                "{field} = {replacement}: {result:?}"
            );
        }
    }
}

/// What replacing `field` of a valid activity line with `replacement`
/// must give (spec §2): `null` is absent, so a missing required field or
/// an optional one at its default; a string where a string is wanted
/// parses (or, for `kind`, is an unknown kind); anything else is
/// refused naming the field (`v` as an unknown version, checked first).
fn mistyped_outcome_is_right(
    field: &str,
    replacement: &str,
    result: &Result<Event<'_>, ProtocolError>,
) -> bool {
    let activity = match result {
        Ok(Event {
            body: Body::Activity(activity),
            ..
        }) => Some(activity),
        _ => None,
    };
    let invalid =
        matches!(result, Err(ProtocolError::InvalidField { field: named, .. }) if *named == field);
    match (field, replacement) {
        ("composer", "null") => activity.is_some_and(|a| a.composer == Composer::Unknown),
        ("revision", "null") => activity.is_some_and(|a| a.revision.is_none()),
        ("reason", "null") => activity.is_some_and(|a| a.reason.is_none()),
        (_, "null") => {
            matches!(result, Err(ProtocolError::MissingField { field: named }) if *named == field)
        }
        ("v", _) => matches!(result, Err(ProtocolError::UnknownVersion { .. })),
        ("kind", "\"x\"") => {
            matches!(result, Err(ProtocolError::UnknownKind { found }) if found == "x")
        }
        ("session", "\"x\"") => result.as_ref().is_ok_and(|e| e.identity.session == "x"),
        ("incarnation", "\"x\"") => result.as_ref().is_ok_and(|e| e.identity.incarnation == "x"),
        ("generation", "\"x\"") => result.as_ref().is_ok_and(|e| e.identity.generation == "x"),
        ("reason", "\"x\"") => activity.is_some_and(|a| a.reason.as_deref() == Some("x")),
        _ => invalid,
    }
}

#[test]
fn malformed_json_and_non_objects_are_errors() {
    for input in [
        &b""[..],
        b"{",
        b"[1,2]",
        b"\"idle\"",
        b"{\"v\":1} trailing",
        b"{\"v\":1,\"v\":1}",
    ] {
        assert!(
            matches!(parse_line(input), Err(ProtocolError::MalformedJson { .. })),
            "{:?}",
            String::from_utf8_lossy(input)
        );
    }
}
