//! How sure a handful of trials lets the evaluation be: 95% Wilson score
//! intervals for rates (a count out of so many), and a 95% Student-t
//! interval for the mean of paired differences (the careful arm's model
//! calls per delivered message minus the aggressive arm's, seed by seed).
//!
//! Wilson rather than the normal approximation: it stays inside 0..1 and
//! says something at 0 of n, which is what the safety rates are meant to
//! be (0 drafts corrupted of 40 still allows up to 8.8% at 95%).

/// The normal quantile of a two-sided 95% interval.
const Z95: f64 = 1.959_963_984_540_054;

/// Student's t quantiles of a two-sided 95% interval, by degrees of
/// freedom 1..=30; past 30 the normal quantile is within 4%.
const T95: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// `count` of `of`, with its 95% Wilson interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rate {
    pub count: usize,
    pub of: usize,
}

impl Rate {
    pub fn new(count: usize, of: usize) -> Rate {
        Rate {
            count: count.min(of),
            of,
        }
    }

    /// The 95% Wilson score interval; `None` of nothing.
    pub fn interval(self) -> Option<(f64, f64)> {
        if self.of == 0 {
            return None;
        }
        let n = self.of as f64;
        let p = self.count as f64 / n;
        let z2 = Z95 * Z95;
        let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
        let half = Z95 * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / (1.0 + z2 / n);
        // At 0 and n the interval touches the bound exactly.
        let low = if self.count == 0 { 0.0 } else { centre - half };
        let high = if self.count == self.of {
            1.0
        } else {
            centre + half
        };
        Some((low.max(0.0), high.min(1.0)))
    }

    /// `3/40 (95%: 2–20%)`; `0/0`.
    pub fn show(self) -> String {
        match self.interval() {
            None => "0/0".into(),
            Some((low, high)) => format!(
                "{}/{} (95%: {}–{}%)",
                self.count,
                self.of,
                percent(low),
                percent(high)
            ),
        }
    }
}

fn percent(value: f64) -> String {
    let percent = value * 100.0;
    if percent == 0.0 || percent == 100.0 || percent >= 10.0 {
        format!("{percent:.0}")
    } else {
        format!("{percent:.1}")
    }
}

/// Paired differences (one per seed both arms ran) and what they allow.
#[derive(Clone, Debug, PartialEq)]
pub struct PairedDifference {
    pub pairs: usize,
    pub mean: f64,
    /// The largest single difference.
    pub max: f64,
    /// The 95% interval of the mean; `None` with fewer than two pairs.
    pub interval: Option<(f64, f64)>,
}

impl PairedDifference {
    pub fn of(differences: &[f64]) -> Option<PairedDifference> {
        let n = differences.len();
        if n == 0 {
            return None;
        }
        let mean = differences.iter().sum::<f64>() / n as f64;
        let max = differences
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        let interval = (n >= 2).then(|| {
            let variance = differences
                .iter()
                .map(|d| (d - mean) * (d - mean))
                .sum::<f64>()
                / (n - 1) as f64;
            let t = T95.get(n - 2).copied().unwrap_or(Z95);
            let half = t * (variance / n as f64).sqrt();
            (mean - half, mean + half)
        });
        Some(PairedDifference {
            pairs: n,
            mean,
            max,
            interval,
        })
    }

    /// `+0.20 over 10 pairs (95%: -0.10 to +0.50)`.
    pub fn show(&self) -> String {
        let pairs = match self.pairs {
            1 => "1 pair".to_string(),
            n => format!("{n} pairs"),
        };
        match self.interval {
            Some((low, high)) => format!(
                "{:+.2} over {pairs} (95%: {low:+.2} to {high:+.2})",
                self.mean
            ),
            None => format!("{:+.2} over {pairs}", self.mean),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 5e-4
    }

    /// Values from the published tables of the Wilson interval (Newcombe
    /// 1998, table I: 0/10, 1/10, 10/10, 81/263).
    #[test]
    fn wilson_intervals_match_the_published_values() {
        let (low, high) = Rate::new(0, 10).interval().unwrap();
        assert!(close(low, 0.0) && close(high, 0.2775), "{low} {high}");
        let (low, high) = Rate::new(1, 10).interval().unwrap();
        assert!(close(low, 0.0179) && close(high, 0.4042), "{low} {high}");
        let (low, high) = Rate::new(10, 10).interval().unwrap();
        assert!(close(low, 0.7225) && close(high, 1.0), "{low} {high}");
        let (low, high) = Rate::new(81, 263).interval().unwrap();
        assert!(close(low, 0.2553) && close(high, 0.3662), "{low} {high}");
        assert_eq!(Rate::new(0, 0).interval(), None);
        assert_eq!(Rate::new(0, 40).show(), "0/40 (95%: 0–8.8%)");
    }

    #[test]
    fn paired_differences_give_a_t_interval_of_their_mean() {
        let same = PairedDifference::of(&[0.0; 5]).unwrap();
        assert_eq!(
            (same.mean, same.max, same.interval),
            (0.0, 0.0, Some((0.0, 0.0)))
        );
        // Mean 1, sample variance 2/3, n 4: 1 ± 3.182 * sqrt(2/3 / 4).
        let spread = PairedDifference::of(&[0.0, 1.0, 1.0, 2.0]).unwrap();
        let (low, high) = spread.interval.unwrap();
        assert!(close(spread.mean, 1.0) && close(spread.max, 2.0));
        assert!(
            close(low, 1.0 - 1.2991) && close(high, 1.0 + 1.2991),
            "{low} {high}"
        );
        assert_eq!(PairedDifference::of(&[1.0]).unwrap().interval, None);
        assert_eq!(PairedDifference::of(&[]), None);
        assert_eq!(
            PairedDifference::of(&[0.5, -0.5]).unwrap().show(),
            "+0.00 over 2 pairs (95%: -6.35 to +6.35)"
        );
    }
}
