//! The command line of `ding adapter PROVIDER` for a harness whose hooks
//! live in one settings file (the kit's part, written once): `--settings
//! PATH` (the file the adapter checks), `--ding PROGRAM` (how the hooks
//! spell `ding`) and `-h`/`--help`; a provider may take options of its own.

use std::ffi::OsString;
use std::path::PathBuf;

use anyhow::{Result, bail};
use lexopt::prelude::*;

/// What the kit's options said.
pub struct AdapterArgs {
    /// The hook settings file to check (compile-agent writes it).
    pub settings: Option<PathBuf>,
    /// How the hooks spell `ding`: by default this `ding`'s path, as the
    /// hooks compile-agent writes name it.
    pub program: String,
}

impl AdapterArgs {
    /// Parses `args`; `own` takes each long option the kit does not know,
    /// by its name (and says whether it was one of the provider's). `None`
    /// when help was printed.
    pub fn parse(
        args: Vec<OsString>,
        help: &str,
        mut own: impl FnMut(&str, &mut lexopt::Parser) -> Result<bool>,
    ) -> Result<Option<AdapterArgs>> {
        let mut parser = lexopt::Parser::from_args(args);
        let mut parsed = AdapterArgs {
            settings: None,
            program: crate::ding_binary::ding_program(),
        };
        while let Some(arg) = parser.next()? {
            match arg {
                Long("settings") => parsed.settings = Some(PathBuf::from(parser.value()?)),
                Long("ding") => parsed.program = parser.value()?.string()?,
                Short('h') | Long("help") => {
                    print!("{help}");
                    return Ok(None);
                }
                Long(name) => {
                    let name = name.to_string();
                    if !own(&name, &mut parser)? {
                        bail!("{}", Long(&name).unexpected());
                    }
                }
                other => bail!("{}", other.unexpected()),
            }
        }
        Ok(Some(parsed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    #[test]
    fn the_kit_takes_its_options_and_hands_the_rest_to_the_provider() {
        let mut seen = Vec::new();
        let parsed = AdapterArgs::parse(
            words(&[
                "--settings",
                "/p/s.json",
                "--mine",
                "x",
                "--ding",
                "/bin/ding",
            ]),
            "help",
            |name, parser| {
                if name == "mine" {
                    seen.push(parser.value()?.string()?);
                    return Ok(true);
                }
                Ok(false)
            },
        )
        .expect("parse")
        .expect("no help");
        assert_eq!(parsed.settings, Some(PathBuf::from("/p/s.json")));
        assert_eq!(parsed.program, "/bin/ding");
        assert_eq!(seen, ["x"]);
        let unknown = AdapterArgs::parse(words(&["--other"]), "help", |_, _| Ok(false));
        assert!(unknown.is_err());
    }
}
