//! quinn transport settings shared by host and guest.

use std::time::Duration;

use anyhow::{Context, Result};
use quinn::{IdleTimeout, TransportConfig, VarInt};

use crate::cli::Args;

/// Generous: received datagrams are read at once by the event loop.
pub const DATAGRAM_RECEIVE_BUFFER_BYTES: usize = 16 << 20;

/// The transport of each connection (one per connection: quicsetup::Transport).
pub fn transport_config(args: &Args) -> Result<quicsetup::Transport> {
    let datagram_buffer_bytes = args.quinn_datagram_buffer_bytes;
    let idle = Duration::from_secs_f64(args.idle_timeout_s);
    let cc = args.common.cc;
    quicsetup::Transport::new(move || {
        let mut t = TransportConfig::default();
        t.enable_segmentation_offload(false);
        t.datagram_send_buffer_size(datagram_buffer_bytes);
        t.datagram_receive_buffer_size(Some(DATAGRAM_RECEIVE_BUFFER_BYTES));
        t.max_idle_timeout(Some(
            IdleTimeout::try_from(idle).context("--idle-timeout-s out of range")?,
        ));
        // Keep-alive well inside the idle timeout so only a lost peer times out.
        t.keep_alive_interval(Some((idle / 4).max(Duration::from_millis(100))));
        cc.apply(&mut t);
        Ok(t)
    })
}

/// Application close codes.
pub const CLOSE_DONE: VarInt = VarInt::from_u32(0);
pub const CLOSE_SIGNAL: VarInt = VarInt::from_u32(1);
pub const CLOSE_ERROR: VarInt = VarInt::from_u32(2);
