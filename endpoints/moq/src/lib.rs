//! The `moq` endpoint ([`run_argv`]: the whole program; the binary runs it in the real
//! world, the sim site in virtual time) and its pure core (no I/O, no clock): the GoP trace
//! and the live
//! release schedule ([`trace`]), which stream and priority each frame goes on per scheme and
//! when a group is abandoned ([`route`]), and the frame header on a stream ([`wire`]).

mod app;
mod cli;
mod publish;
mod subscribe;

pub use app::run_argv;

pub mod route;
pub mod trace;
pub mod wire;

/// A picture type of the I/P/B GoP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Pict {
    I,
    P,
    B,
}

impl Pict {
    pub fn as_str(self) -> &'static str {
        match self {
            Pict::I => "I",
            Pict::P => "P",
            Pict::B => "B",
        }
    }

    pub fn from_code(c: u8) -> Option<Pict> {
        match c {
            0 => Some(Pict::I),
            1 => Some(Pict::P),
            2 => Some(Pict::B),
            _ => None,
        }
    }

    pub fn code(self) -> u8 {
        self as u8
    }
}
