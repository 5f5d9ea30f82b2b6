//! Protocol v1 as an adapter writes it: a JSON `null` is the same as an
//! absent field, for every field of every kind (spec §2, CORE-3).

use ding::core::protocol::{ProtocolError, parse_line};
use serde_json::{Value, json};

/// How a field of a line is bound.
enum Bound {
    /// Absent (or null), the line is refused as missing this field.
    Required(&'static str),
    /// One of a pair (`claim` has `messages` or `limit`): absent (or null)
    /// with its partner absent too, the line is refused as missing a field.
    OneOf,
    /// Absent (or null), the line parses with the field's default.
    Optional,
}

/// One valid line of every kind and form, each field given, with how each
/// field is bound.
fn complete_lines() -> Vec<(Value, Vec<(&'static str, Bound)>)> {
    let envelope = json!({
        "v": 1, "session": "host.worker", "incarnation": "i-1",
        "generation": "sha256:ab", "sequence": 7,
    });
    let with = |fields: Value| {
        let mut line = envelope.clone();
        for (key, value) in fields.as_object().unwrap() {
            line[key] = value.clone();
        }
        line
    };
    let envelope_fields = || {
        vec![
            ("v", Bound::Required("v")),
            ("kind", Bound::Required("kind")),
            ("session", Bound::Required("session")),
            ("incarnation", Bound::Required("incarnation")),
            ("generation", Bound::Required("generation")),
            ("sequence", Bound::Required("sequence")),
        ]
    };
    let fields = |more: Vec<(&'static str, Bound)>| {
        let mut all = envelope_fields();
        all.extend(more);
        all
    };
    vec![
        (
            with(
                json!({"kind": "activity", "state": "idle", "validForMs": 250,
                        "composer": "empty", "revision": 42, "reason": "prompt"}),
            ),
            fields(vec![
                ("state", Bound::Required("state")),
                ("validForMs", Bound::Required("validForMs")),
                ("composer", Bound::Optional),
                ("revision", Bound::Optional),
                ("reason", Bound::Optional),
            ]),
        ),
        (
            with(json!({"kind": "turn-boundary", "messages": ["a.md", "b.md"]})),
            fields(vec![("messages", Bound::Required("messages"))]),
        ),
        (
            with(json!({"kind": "lifecycle", "event": "clear"})),
            fields(vec![("event", Bound::Required("event"))]),
        ),
        (
            with(json!({"kind": "claim", "claim": 3, "limit": 2, "scope": "unread"})),
            fields(vec![
                ("claim", Bound::Required("claim")),
                ("limit", Bound::OneOf),
                ("scope", Bound::Optional),
            ]),
        ),
        (
            with(json!({"kind": "claim", "claim": 3, "messages": ["a.md"], "scope": "pending"})),
            fields(vec![
                ("claim", Bound::Required("claim")),
                ("messages", Bound::OneOf),
                ("scope", Bound::Optional),
            ]),
        ),
    ]
}

fn parse(line: &Value) -> Result<String, ProtocolError> {
    // The parsed event, shown as JSON so results of two lines compare.
    parse_line(line.to_string().as_bytes()).map(|event| serde_json::to_string(&event).unwrap())
}

#[test]
fn null_means_absent_for_every_field_of_every_kind() {
    for (line, fields) in complete_lines() {
        assert!(parse(&line).is_ok(), "{line} is valid");
        for (field, bound) in fields {
            let mut absent = line.clone();
            absent.as_object_mut().unwrap().remove(field);
            let mut null = line.clone();
            null[field] = Value::Null;
            let (absent_result, null_result) = (parse(&absent), parse(&null));
            assert_eq!(
                null_result, absent_result,
                "{field}: null must mean absent in {line}"
            );
            match bound {
                Bound::Required(name) => assert_eq!(
                    absent_result,
                    Err(ProtocolError::MissingField { field: name.into() }),
                    "{field} is required in {line}"
                ),
                Bound::OneOf => assert!(
                    matches!(absent_result, Err(ProtocolError::MissingField { .. })),
                    "{field}: a claim needs `messages` or `limit` ({absent_result:?})"
                ),
                Bound::Optional => assert!(
                    absent_result.is_ok(),
                    "{field} is optional in {line}: {absent_result:?}"
                ),
            }
        }
        // A field v1 does not know is ignored, null or not.
        let mut unknown = line.clone();
        unknown["future"] = Value::Null;
        assert_eq!(parse(&unknown), parse(&line));
    }
}

#[test]
fn a_null_optional_field_takes_its_default() {
    let line = json!({
        "v": 1, "kind": "activity", "session": "s", "incarnation": "i", "generation": "g",
        "sequence": 1, "state": "idle", "validForMs": 5,
        "composer": null, "revision": null, "reason": null, "withdraw": null,
        "withdrawAfterMs": null,
    });
    let text = line.to_string();
    let event = parse_line(text.as_bytes()).unwrap();
    assert_eq!(
        serde_json::to_value(&event.body).unwrap(),
        json!({"kind": "activity", "state": "idle", "validFor": 5,
               "composer": "unknown", "revision": null, "typed": null, "withdraw": null,
               "reason": null})
    );
    let claim = json!({
        "v": 1, "kind": "claim", "session": "s", "incarnation": "i", "generation": "g",
        "sequence": 1, "claim": 9, "limit": 1, "messages": null, "scope": null,
    });
    let text = claim.to_string();
    let event = parse_line(text.as_bytes()).unwrap();
    let body = serde_json::to_value(&event.body).unwrap();
    assert_eq!(body["scope"], "pending", "{body}");
}

fn claim_line(rest: &str) -> Vec<u8> {
    format!(
        r#"{{"v":1,"kind":"claim","session":"s","incarnation":"i","generation":"g","sequence":1,{rest}}}"#
    )
    .into_bytes()
}

#[test]
fn a_claim_names_files_or_a_limit_and_nothing_else() {
    use ding::core::protocol::{Body, Claim, ClaimScope, ClaimWants};
    let body = |rest: &str| -> Result<Option<Claim>, ProtocolError> {
        let line = claim_line(rest);
        parse_line(&line).map(|event| match event.body {
            Body::Claim(claim) => Some(claim),
            _ => None,
        })
    };
    let Ok(Some(claim)) = body(r#""claim":4,"limit":1024"#) else {
        panic!("a limit of 1,024 is allowed")
    };
    assert_eq!(
        (claim.claim, claim.wants, claim.scope),
        (4, ClaimWants::Oldest(1024), ClaimScope::Pending)
    );
    let Ok(Some(claim)) = body(r#""claim":0,"messages":["b.md","a.md"],"scope":"unread""#) else {
        panic!("named files")
    };
    assert_eq!(claim.scope, ClaimScope::Unread);
    assert!(matches!(claim.wants, ClaimWants::Named(names) if names.len() == 2));

    let invalid = |rest: &str, field: &str| {
        let result = body(rest);
        assert!(
            matches!(&result, Err(ProtocolError::InvalidField { field: named, .. }) if *named == field),
            "{rest}: expected invalid {field}, got {result:?}"
        );
    };
    invalid(r#""claim":1,"limit":2,"messages":["a.md"]"#, "limit");
    invalid(r#""claim":1,"limit":0"#, "limit");
    invalid(r#""claim":1,"limit":1025"#, "limit");
    invalid(r#""claim":1,"limit":"2""#, "limit");
    invalid(r#""claim":1,"messages":[]"#, "messages");
    invalid(r#""claim":1,"messages":["a.md","a.md"]"#, "messages");
    invalid(r#""claim":1,"limit":2,"scope":"all""#, "scope");
    invalid(r#""claim":-1,"limit":2"#, "claim");
    assert!(matches!(
        body(r#""claim":1"#),
        Err(ProtocolError::MissingField { .. })
    ));
    assert_eq!(
        body(r#""limit":2"#),
        Err(ProtocolError::MissingField {
            field: "claim".into()
        })
    );
}
