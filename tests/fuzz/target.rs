//! What a fuzz target is: a check over arbitrary bytes plus what the
//! mutator should know of its grammar. Shared by the stable engine
//! (`engine.rs`) and the optional AFL++ binary (`fuzz/afl/`).

/// One thing to fuzz.
pub struct Target {
    /// The corpus directory's name under `fixtures/fuzz/`.
    pub name: &'static str,
    /// Runs one input through the code under test and checks its
    /// invariants, panicking when one breaks. Returns the outcome's class.
    pub check: fn(&[u8]) -> String,
    /// Byte strings worth inserting: the grammar's words and edges.
    pub tokens: &'static [&'static str],
    /// Input sizes at which behaviour changes (the code's bounds).
    pub bounds: &'static [usize],
}
