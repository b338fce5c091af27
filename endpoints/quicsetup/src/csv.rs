//! CSV logs through buffered writers.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// One CSV file with a header.
pub struct Csv {
    path: PathBuf,
    w: BufWriter<File>,
}

impl Csv {
    pub fn create(dir: &Path, name: &str, header: &str) -> Result<Self> {
        let path = dir.join(name);
        let f = File::create(&path).with_context(|| format!("creating {}", path.display()))?;
        let mut c = Csv {
            path,
            w: BufWriter::with_capacity(64 << 10, f),
        };
        c.line(header)?;
        Ok(c)
    }

    pub fn line(&mut self, s: &str) -> Result<()> {
        writeln!(self.w, "{s}").with_context(|| format!("writing {}", self.path.display()))
    }

    pub fn flush(&mut self) -> Result<()> {
        self.w
            .flush()
            .with_context(|| format!("flushing {}", self.path.display()))
    }
}
