//! How the tables write a cell's numbers: seconds, ratios, DING's bytes
//! per delivered message, a row's name, and clipped text.

use crate::cell::Cell;
use crate::row::Row;

pub(super) fn clip(text: &str, chars: usize) -> String {
    if text.chars().count() <= chars {
        return text.to_string();
    }
    let cut: String = text.chars().take(chars).collect();
    format!("{cut}…")
}

pub(super) fn seconds(ms: Option<u64>) -> String {
    ms.map_or("–".into(), |ms| format!("{:.2} s", ms as f64 / 1000.0))
}

pub(super) fn ratio(value: Option<f64>) -> String {
    value.map_or("–".into(), |v| {
        if v.fract() == 0.0 {
            format!("{v:.0}")
        } else {
            format!("{v:.2}")
        }
    })
}

/// DING's terminal bytes per delivered message; with nothing delivered,
/// what it wrote all the same (never hidden behind a dash).
pub(super) fn bytes_per_delivered(cell: &Cell) -> String {
    match cell.ding_bytes_per_delivered {
        Some(_) => ratio(cell.ding_bytes_per_delivered),
        None => format!("{} written, 0 delivered", cell.ding_bytes),
    }
}

pub(super) fn row_name(number: u32) -> String {
    Row::by_number(number).map_or_else(|_| number.to_string(), |row| row.to_string())
}
