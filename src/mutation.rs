//! Planted defects: named places in DING's own decision code where the
//! simulation's mutation check (`tests/agent_simulation_mutations.rs`)
//! puts one deliberate, careless-looking defect at a time, to prove that
//! its sweeps would catch such a change where it would really be made (in
//! a grammar, the engine, the adapter machine, the PTY host's input
//! order), not in a copy beside the
//! code (`docs/simulation.md` lists what each sweep catches).
//!
//! Only test builds can plant one: the cargo feature `mutations`, which
//! the crate's tests turn on (as with the sidecar's crash points). A
//! release `ding` has no switch: [`planted`] is `false`, known at compile
//! time, and the checks fold away.

/// One deliberate defect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mutation {
    /// The fence asks the PTY host for no quiet after the person's input.
    FenceWantsNoQuiet,
    /// A parked wake or queued turn goes without waiting for the person's
    /// quiet.
    WakeSkipsQuiet,
    /// The engine compares a lease's identity by its session alone.
    IdentityBySessionAlone,
    /// A typed notice's Return is confirmed whatever its composer shows.
    ReturnIgnoresTheComposer,
    /// A journal's staged file is restored as pending, to be rung again.
    JournalRestoresStagedAsPending,
    /// A harness grammar reads its dialogs as a ready, empty screen.
    DialogReadsIdle,
    /// Arrivals are not gathered: each goes as soon as it comes.
    NoGather,
    /// The PTY host's fence forgets when the person last typed.
    HostFenceIgnoresInput,
    /// The PTY host never takes a paste back out before a person's key.
    HostNeverWithdraws,
}

impl Mutation {
    pub const ALL: [Mutation; 9] = [
        Mutation::FenceWantsNoQuiet,
        Mutation::WakeSkipsQuiet,
        Mutation::IdentityBySessionAlone,
        Mutation::ReturnIgnoresTheComposer,
        Mutation::JournalRestoresStagedAsPending,
        Mutation::DialogReadsIdle,
        Mutation::NoGather,
        Mutation::HostFenceIgnoresInput,
        Mutation::HostNeverWithdraws,
    ];
}

#[cfg(feature = "mutations")]
mod switch {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::Mutation;

    /// The planted defect's place in [`Mutation::ALL`], plus one; 0: none.
    static PLANTED: AtomicUsize = AtomicUsize::new(0);

    pub fn plant(mutation: Option<Mutation>) {
        let index = mutation.map_or(0, |planted| {
            1 + Mutation::ALL
                .iter()
                .position(|mutation| *mutation == planted)
                .expect("every defect is in ALL")
        });
        PLANTED.store(index, Ordering::Relaxed);
    }

    pub fn planted() -> Option<Mutation> {
        let index = PLANTED.load(Ordering::Relaxed);
        index.checked_sub(1).map(|at| Mutation::ALL[at])
    }
}

/// Plants `mutation` (or none) in this process, for every thread: the
/// mutation check's test binary does nothing else meanwhile.
#[cfg(feature = "mutations")]
pub fn plant(mutation: Option<Mutation>) {
    switch::plant(mutation);
}

/// Whether `mutation` is planted in this process.
#[inline]
pub fn planted(mutation: Mutation) -> bool {
    #[cfg(feature = "mutations")]
    {
        switch::planted() == Some(mutation)
    }
    #[cfg(not(feature = "mutations"))]
    {
        let _ = mutation;
        false
    }
}
