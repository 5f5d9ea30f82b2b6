//! "Did you mean ...?": the closest known word to a misspelt one.
//!
//! Used for node names, property names and policy tokens. It owns only the
//! distance and the threshold; callers word the hint.

/// The candidate closest to `word`, if it is close enough to be a plausible
/// typo: a case-insensitive match, `_` for `-`, a prefix of a longer token
/// (`turn-boundary` for `turn-boundary+fresh-idle`), or at most one edit per
/// three characters (at least one).
pub fn did_you_mean<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let folded = word.to_lowercase().replace('_', "-");
    if let Some(exact) = candidates.iter().find(|c| **c == folded) {
        return Some(exact);
    }
    let budget = (word.chars().count() / 3).max(1);
    let closest = candidates
        .iter()
        .map(|candidate| (edit_distance(&folded, candidate), *candidate))
        .filter(|(distance, _)| *distance <= budget)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate);
    closest.or_else(|| {
        (folded.len() >= 4)
            .then(|| {
                candidates
                    .iter()
                    .find(|candidate| candidate.starts_with(&folded))
                    .copied()
            })
            .flatten()
    })
}

/// Optimal string alignment distance: insertions, deletions, substitutions
/// and transpositions of neighbours each cost one.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let width = b.len() + 1;
    let mut table = vec![0usize; (a.len() + 1) * width];
    for (i, row) in table.chunks_mut(width).enumerate() {
        row[0] = i;
    }
    for (j, cell) in table.iter_mut().take(width).enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (table[(i - 1) * width + j] + 1)
                .min(table[i * width + j - 1] + 1)
                .min(table[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(table[(i - 2) * width + j - 2] + 1);
            }
            table[i * width + j] = best;
        }
    }
    table[a.len() * width + b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    const DING_CHILDREN: [&str; 4] = ["delivery", "adapter", "lease-cap", "submit-delay"];

    #[test]
    fn suggests_close_misspellings() {
        assert_eq!(did_you_mean("delivry", &DING_CHILDREN), Some("delivery"));
        assert_eq!(did_you_mean("adaptor", &DING_CHILDREN), Some("adapter"));
        assert_eq!(did_you_mean("lease_cap", &DING_CHILDREN), Some("lease-cap"));
        assert_eq!(did_you_mean("Delivery", &DING_CHILDREN), Some("delivery"));
        assert_eq!(did_you_mean("dleivery", &DING_CHILDREN), Some("delivery"));
    }

    #[test]
    fn suggests_the_full_token_for_a_prefix() {
        let tokens = ["aggressive", "turn-boundary+fresh-idle"];
        assert_eq!(
            did_you_mean("turn-boundary", &tokens),
            Some("turn-boundary+fresh-idle")
        );
    }

    #[test]
    fn stays_quiet_for_unrelated_words() {
        assert_eq!(did_you_mean("color", &DING_CHILDREN), None);
        assert_eq!(did_you_mean("x", &DING_CHILDREN), None);
        assert_eq!(did_you_mean("", &DING_CHILDREN), None);
    }

    #[test]
    fn distance_counts_transpositions_once() {
        assert_eq!(edit_distance("ab", "ba"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
