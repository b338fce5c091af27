//! Where an endpoint's messages go: the process's stdout/stderr for the binaries, files (or
//! memory, in tests) when several endpoints share one process (the sim site).

use std::fmt::Display;
use std::io::Write;
use std::sync::{Arc, Mutex};

type Sink = Arc<Mutex<Box<dyn Write + Send>>>;

/// Cloning shares the sinks. Lines are written whole and flushed at once.
#[derive(Clone)]
pub struct Console {
    out: Sink,
    err: Sink,
}

impl std::fmt::Debug for Console {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Console")
    }
}

/// The text a [`Console::memory`] console was given.
#[derive(Clone, Default)]
pub struct Captured(Arc<Mutex<Vec<u8>>>);

impl Captured {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
    }
}

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn sink(w: Box<dyn Write + Send>) -> Sink {
    Arc::new(Mutex::new(w))
}

impl Console {
    /// This process's stdout and stderr.
    pub fn process() -> Self {
        Console::new(Box::new(std::io::stdout()), Box::new(std::io::stderr()))
    }

    pub fn new(out: Box<dyn Write + Send>, err: Box<dyn Write + Send>) -> Self {
        Console {
            out: sink(out),
            err: sink(err),
        }
    }

    /// Stdout and stderr appended to two files (created).
    pub fn files(out: &std::path::Path, err: &std::path::Path) -> std::io::Result<Self> {
        let open = |p: &std::path::Path| {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
        };
        Ok(Console::new(Box::new(open(out)?), Box::new(open(err)?)))
    }

    /// In memory: (console, its stdout, its stderr).
    pub fn memory() -> (Self, Captured, Captured) {
        let (o, e) = (Captured::default(), Captured::default());
        (Console::new(Box::new(o.clone()), Box::new(e.clone())), o, e)
    }

    fn line(s: &Sink, text: &str) {
        let mut w = s.lock().unwrap_or_else(|e| e.into_inner());
        // As eprintln!: a console that cannot be written to must not end the run.
        let _ = w.write_all(text.as_bytes());
        if !text.ends_with('\n') {
            let _ = w.write_all(b"\n");
        }
        let _ = w.flush();
    }

    /// One line on stderr (what `eprintln!` did).
    pub fn err(&self, msg: impl Display) {
        Console::line(&self.err, &msg.to_string());
    }

    /// One line on stdout (what `println!` did).
    pub fn out(&self, msg: impl Display) {
        Console::line(&self.out, &msg.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_go_to_their_stream() {
        let (c, o, e) = Console::memory();
        c.err(format_args!("x: {}", 1));
        c.out("y\n");
        c.clone().err("z");
        assert_eq!(e.text(), "x: 1\nz\n");
        assert_eq!(o.text(), "y\n");
    }
}
