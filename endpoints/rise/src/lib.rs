//! `rise`: the RISE endpoint (rise-core over quinn). The command line and the logs are the
//! harness's contract, see endpoints/README.md. [`run_argv`] is the whole program; the binary
//! runs it in the real world, the sim site in virtual time.

mod cli;
mod connect;
mod logs;
mod quiet;
mod regime;
mod session;
mod transport;
mod wait;

use quicsetup::shell::{exit, wait_closed};
use quicsetup::Env;

use cli::Args;

/// Runs `rise` with `argv` (argv[0] the program's name) in `env`; returns the exit code.
pub async fn run_argv(argv: Vec<String>, env: Env) -> u8 {
    let check = |a: &Args| {
        a.validate()?;
        a.core_config()
    };
    quicsetup::shell::run_program("rise", argv, env, check, run).await
}

async fn run(args: Args, cfg: rise_core::Config, env: Env) -> anyhow::Result<u8> {
    let mut logs = logs::Logs::create(&args.common.log_dir)?;
    let (endpoint, conn) = match connect::open(&args, &env).await? {
        Ok(c) => c,
        Err(connect::ConnectTimeout(why)) => {
            env.console.err(format_args!("rise: no connection: {why}"));
            logs.flush()?;
            return Ok(exit::NO_CONNECTION);
        }
    };
    let result = session::run(&args, cfg, &mut logs, &conn, &env).await?;
    env.console.err(format_args!(
        "rise {}: {} (exit {})",
        args.role_str(),
        result.end.reason(),
        result.end.exit_code()
    ));
    wait_closed(&endpoint).await;
    Ok(result.end.exit_code())
}
