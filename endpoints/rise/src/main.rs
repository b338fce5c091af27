//! `rise`: the RISE endpoint (rise-core over quinn). The command line and the logs are the
//! harness's contract, see endpoints/README.md.

mod cli;
mod connect;
mod logs;
mod regime;
mod session;
mod transport;
mod wait;

use std::process::ExitCode;

use clap::Parser;

use cli::{Args, RoleArg};

/// Exit codes of the contract.
const EXIT_BAD_ARGS: u8 = 2;
const EXIT_NO_CONNECTION: u8 = 4;

fn main() -> ExitCode {
    let args = Args::parse(); // clap exits with 2 on bad arguments
    if let Err(e) = args.validate() {
        eprintln!("rise: {e:#}");
        return ExitCode::from(EXIT_BAD_ARGS);
    }
    let cfg = match args.core_config() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("rise: {e:#}");
            return ExitCode::from(EXIT_BAD_ARGS);
        }
    };
    quicsetup::run_to_exit("rise", run(args, cfg))
}

async fn run(args: Args, cfg: rise_core::Config) -> anyhow::Result<u8> {
    let mut logs = logs::Logs::create(&args.log_dir)?;
    let connected = match args.role {
        RoleArg::Host => connect::host(&args).await?,
        RoleArg::Guest => connect::guest(&args).await?,
    };
    let (endpoint, conn) = match connected {
        Ok(c) => c,
        Err(connect::ConnectTimeout(why)) => {
            eprintln!("rise: no connection: {why}");
            logs.flush()?;
            return Ok(EXIT_NO_CONNECTION);
        }
    };
    let result = session::run(&args, cfg, &mut logs, &conn).await?;
    eprintln!(
        "rise {}: {} (exit {})",
        args.role_str(),
        result.end.reason(),
        result.end.exit_code()
    );
    // Give the close a moment to reach the peer.
    let _ = tokio::time::timeout(std::time::Duration::from_secs(1), endpoint.wait_idle()).await;
    Ok(result.end.exit_code())
}
