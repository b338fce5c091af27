//! roq stays real-time only (endpoints/README.md, "roq and virtual time"): given an injected
//! network, as the sim site gives, `run_argv` refuses with exit 2 and says why, before any
//! GStreamer thread or socket exists.

use std::time::Duration;

use proctest::memnet::MemNet;
use quicsetup::{Clock, Console, Env, Net};

#[test]
fn an_injected_network_is_refused() {
    let dir = proctest::scratch("roq-virtual", "refused");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap();
    let (console, _out, err) = Console::memory();
    let code = rt.block_on(async {
        let net = MemNet::new(Duration::from_millis(10));
        let env = Env {
            clock: Clock::virtual_from(proctest::VIRTUAL_EPOCH_NS),
            net: Net::Injected(net.node("10.0.0.1".parse().unwrap())),
            console,
            rng_seed: Some(1),
        };
        let cert = dir.join("cert.der");
        let argv = ["roq", "--role", "receiver", "--connect", "10.0.0.2:4450"];
        let mut argv: Vec<String> = argv.map(String::from).to_vec();
        argv.extend(["--cert".into(), cert.to_str().unwrap().into()]);
        argv.extend(["--log-dir".into(), dir.to_str().unwrap().into()]);
        roq::run_argv(argv, env).await
    });
    assert_eq!(code, 2);
    assert!(err.text().contains("real time only"), "{}", err.text());
}

#[test]
fn the_session_future_can_be_spawned() {
    // Send, so the sim may tokio::spawn each process's run_argv (a runtime is not needed
    // to make the future, only to run it)
    proctest::assert_send(&roq::run_argv(vec![], quicsetup::Env::real()));
}
