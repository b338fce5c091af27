//! A predictor in virtual time: rise-core's Host and Guest over a model of quinn 0.11's
//! transport ([`cc`], [`pacer`], [`rtt`], [`conn`]) and linkem's links ([`link`]), one 30 s run
//! in about a second of CPU. [`scenario`] builds runs from the paper's settings, [`metrics`]
//! computes what the real analysis reports. See endpoints/README.md, "The predictor".

pub mod cc;
pub mod conn;
pub mod link;
pub mod metrics;
pub mod pacer;
pub mod rtt;
pub mod run;
pub mod scenario;
