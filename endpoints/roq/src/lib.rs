//! `roq`: RTP over QUIC ([RoQ]). The command line and the logs are the harness's
//! contract, see endpoints/README.md ("roq"). [`run_argv`] is the whole program; the binary
//! runs it, and so does the sim site in virtual time (endpoints/README.md, "roq and virtual
//! time"). [`media`] (the encoder and decoder) is public for `roq-encode`, the offline encoder
//! of the SSIM span.

mod app;
mod cc;
mod cli;
pub mod media;
mod net;
mod receiver;
mod sender;

pub use app::run_argv;
