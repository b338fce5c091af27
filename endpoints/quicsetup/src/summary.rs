//! What every endpoint writes beside its logs: `summary.json` (flat, values already JSON).
//! The time its logs use is the session's [`crate::Clock`].

use std::path::Path;

use anyhow::{Context, Result};

/// Writes `dir/summary.json` with `fields` in order; each value is JSON text already (a
/// number, or a string made with [`quoted`]).
pub fn write_summary(dir: &Path, fields: &[(&str, String)]) -> Result<()> {
    let body: Vec<String> = fields
        .iter()
        .map(|(k, v)| format!("  \"{k}\": {v}"))
        .collect();
    let p = dir.join("summary.json");
    std::fs::write(&p, format!("{{\n{}\n}}\n", body.join(",\n")))
        .with_context(|| format!("writing {}", p.display()))
}

/// `s` as a JSON string.
pub fn quoted(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}
