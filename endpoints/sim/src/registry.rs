//! Programs the sim can run, by argv[0]. Each entry is one line: the program's library entry
//! point `run_argv(argv, env) -> exit code` (clap's `try_parse_from(argv)`, so argv[0] is the
//! program's name, as for a real process).
//!
//! Wiring a protocol in is one line, e.g.
//! `"rise" => |argv, env| Box::pin(rise::run_argv(argv, env)),`

use crate::env::Env;
use std::future::Future;
use std::pin::Pin;

/// A running program: resolves to its exit code. Not `Send`: programs run on one thread.
pub type Program = Pin<Box<dyn Future<Output = u8>>>;

/// How a program is started.
pub type App = fn(Vec<String>, Env) -> Program;

/// The program called `name` (argv[0]'s basename), if the sim has it.
pub fn lookup(name: &str) -> Option<App> {
    let app: App = match name {
        "sim-dgram" => |argv, env| Box::pin(crate::apps::dgram::run_argv(argv, env)),
        "rise" => |argv, env| Box::pin(rise::run_argv(argv, env)),
        "dtp" => |argv, env| Box::pin(dtp::run_argv(argv, env)),
        "qpr" => |argv, env| Box::pin(qpr::run_argv(argv, env)),
        "moq" => |argv, env| Box::pin(moq::run_argv(argv, env)),
        "roq" => |argv, env| Box::pin(roq::run_argv(argv, env)),
        _ => return None,
    };
    Some(app)
}

/// Every name [`lookup`] knows (for error messages).
pub const NAMES: &[&str] = &["sim-dgram", "rise", "dtp", "qpr", "moq", "roq"];

#[cfg(test)]
mod tests {
    #[test]
    fn every_listed_name_is_found_and_nothing_else() {
        for n in super::NAMES {
            assert!(super::lookup(n).is_some(), "{n}");
        }
        assert!(super::lookup("no-such-app").is_none());
    }
}
