//! `docs/declaration.md` states every tunable's bounds and default; this
//! keeps that table equal to the engine's constants, which are the source of
//! truth.

use std::fs;
use std::path::Path;

use ding::decl::TunableKey;

#[test]
fn declaration_reference_states_every_tunables_core_bounds() {
    let doc = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/declaration.md"))
        .expect("docs/declaration.md");
    for key in TunableKey::ALL {
        let row = format!("| `{}` |", key.name());
        assert!(doc.contains(&row), "no table row for `{}`", key.name());
        assert!(
            doc.contains(&key.range_text()),
            "docs disagree with core for `{}`: expected `{}`",
            key.name(),
            key.range_text()
        );
        assert!(
            doc.contains(&key.default_literal()),
            "no default for `{}`",
            key.name()
        );
    }
}
