//! The matrix rows of the A/B evaluation: the situations in which a message
//! may arrive, each a separate row per harness and per arm. What each row's
//! workload does is `scenario`; this is their names.

use std::fmt;

use anyhow::{Result, bail};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Row {
    StartupBacklog,
    ResumeBacklog,
    DuringTurn,
    ExactIdle,
    Draft,
    Dialog,
    Burst,
    AdapterLoss,
    Compaction,
    Clear,
    Crash,
    Intervention,
}

impl Row {
    pub const ALL: [Row; 12] = [
        Row::StartupBacklog,
        Row::ResumeBacklog,
        Row::DuringTurn,
        Row::ExactIdle,
        Row::Draft,
        Row::Dialog,
        Row::Burst,
        Row::AdapterLoss,
        Row::Compaction,
        Row::Clear,
        Row::Crash,
        Row::Intervention,
    ];

    /// The row's number in the design's matrix, from 1.
    pub fn number(self) -> u32 {
        Row::ALL
            .iter()
            .position(|row| *row == self)
            .map_or(0, |index| index as u32 + 1)
    }

    pub fn by_number(number: u32) -> Result<Row> {
        match Row::ALL.get((number as usize).wrapping_sub(1)) {
            Some(row) => Ok(*row),
            None => bail!("matrix rows are 1 to {}, got {number}", Row::ALL.len()),
        }
    }

    /// A short name for tables and directories.
    pub fn slug(self) -> &'static str {
        match self {
            Row::StartupBacklog => "startup-backlog",
            Row::ResumeBacklog => "resume-backlog",
            Row::DuringTurn => "during-turn",
            Row::ExactIdle => "exact-idle",
            Row::Draft => "draft",
            Row::Dialog => "dialog",
            Row::Burst => "burst",
            Row::AdapterLoss => "adapter-loss",
            Row::Compaction => "compaction",
            Row::Clear => "clear",
            Row::Crash => "crash",
            Row::Intervention => "intervention",
        }
    }
}

impl fmt::Display for Row {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.number(), self.slug())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_numbered_as_in_the_design() {
        assert_eq!(Row::StartupBacklog.number(), 1);
        assert_eq!(Row::ExactIdle.number(), 4);
        assert_eq!(Row::Intervention.number(), 12);
        for row in Row::ALL {
            assert_eq!(Row::by_number(row.number()).ok(), Some(row));
        }
        assert!(Row::by_number(0).is_err());
        assert!(Row::by_number(13).is_err());
    }
}
