//! The segment server (seeds/002 Fig. 9): the first bidirectional stream the player opens is
//! the control stream (unreliable requests in, end-of-data out), every other one carries one
//! reliable request and its response. The datagrams go on `dgram`: the same connection, or
//! the second one of a second-connection unreliable path (qpr::unreliable).

use quicsetup::Console;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::scene::Scene;
use crate::wire::{EndOfData, Request, DGRAM_HEADER, HELLO, REQUEST_LEN};
use anyhow::{bail, Context, Result};
use bytes::Bytes;
use quinn::{Connection, RecvStream, SendStream};

#[derive(Debug, Default)]
pub struct Counts {
    pub reliable_requests: AtomicU64,
    pub reliable_bytes: AtomicU64,
    pub unreliable_requests: AtomicU64,
    pub datagrams_sent: AtomicU64,
    pub unreliable_bytes: AtomicU64,
}

/// A zero-filled payload shared by every response (the content's bits do not matter).
fn payload() -> Bytes {
    Bytes::from(vec![0u8; 64 << 10])
}

/// Serves until the connection ends; returns how it ended. Datagrams go on `dgram`.
pub async fn run(
    conn: &Connection,
    dgram: &Connection,
    scene: Scene,
    counts: Arc<Counts>,
    console: &Console,
) -> quinn::ConnectionError {
    let mut control_seen = false;
    loop {
        let (send, mut recv) = match conn.accept_bi().await {
            Ok(s) => s,
            Err(e) => return e,
        };
        let counts = counts.clone();
        let console = console.clone();
        if !control_seen {
            control_seen = true;
            let d = dgram.clone();
            tokio::spawn(async move {
                if let Err(e) = control(&d, send, recv, scene, &counts).await {
                    console.err(format_args!("qpr server: control stream: {e:#}"));
                }
            });
            continue;
        }
        tokio::spawn(async move {
            let mut b = [0u8; REQUEST_LEN];
            if recv.read_exact(&mut b).await.is_err() {
                return; // the connection is ending
            }
            match Request::decode(&b) {
                Some(r) => {
                    if let Err(e) = reliable(send, r, scene, &counts).await {
                        console.err(format_args!("qpr server: request {}: {e:#}", r.id));
                    }
                }
                None => console.err(format_args!("qpr server: malformed request {b:?}")),
            }
        });
    }
}

async fn reliable(mut send: SendStream, r: Request, scene: Scene, counts: &Counts) -> Result<()> {
    let size = scene.size_bytes(r.object as usize, r.quality as usize, r.segment);
    let p = payload();
    let mut left = size;
    while left > 0 {
        let n = left.min(p.len() as u64) as usize;
        send.write_chunk(p.slice(..n)).await?;
        left -= n as u64;
    }
    send.finish()?;
    counts.reliable_requests.fetch_add(1, Ordering::Relaxed);
    counts.reliable_bytes.fetch_add(size, Ordering::Relaxed);
    Ok(())
}

/// The control stream; `conn` is the connection the datagrams go on.
async fn control(
    conn: &Connection,
    mut send: SendStream,
    mut recv: RecvStream,
    scene: Scene,
    counts: &Counts,
) -> Result<()> {
    let mut hello = [0u8; 4];
    recv.read_exact(&mut hello).await.context("reading hello")?;
    if &hello != HELLO {
        bail!("not a qpr control stream (hello {hello:?})");
    }
    let max = conn
        .max_datagram_size()
        .context("the player does not accept datagrams")?;
    let p = payload();
    let per = max - DGRAM_HEADER;
    loop {
        let mut b = [0u8; REQUEST_LEN];
        if recv.read_exact(&mut b).await.is_err() {
            return Ok(()); // the player closed the control stream or the connection
        }
        let Some(r) = Request::decode(&b) else {
            bail!("malformed request {b:?}");
        };
        let size = scene.size_bytes(r.object as usize, r.quality as usize, r.segment);
        let (mut left, mut index) = (size, 0u32);
        let empty = conn.datagram_send_buffer_space(); // the queue is empty here
        while left > 0 {
            let n = left.min(per as u64) as usize;
            let mut d = Vec::with_capacity(DGRAM_HEADER + n);
            d.extend_from_slice(&r.id.to_be_bytes());
            d.extend_from_slice(&index.to_be_bytes());
            d.extend_from_slice(&p[..n]);
            conn.send_datagram_wait(Bytes::from(d)).await?;
            left -= n as u64;
            index += 1;
        }
        // The end-of-data goes out once every datagram has left quinn's queue, so it
        // follows them on the path (seeds/002 §III-C: the end on the reliable control stream).
        // With a second connection too: both connections share the server's one UDP socket
        // and the one link queue, and the datagrams are in packets handed to that socket
        // before the end-of-data is written on the first connection.
        while conn.datagram_send_buffer_space() < empty {
            tokio::time::sleep(Duration::from_micros(500)).await;
        }
        let eod = EndOfData {
            id: r.id,
            datagrams: index,
            bytes: size,
        };
        send.write_all(&eod.encode()).await?;
        counts.unreliable_requests.fetch_add(1, Ordering::Relaxed);
        counts
            .datagrams_sent
            .fetch_add(index as u64, Ordering::Relaxed);
        counts.unreliable_bytes.fetch_add(size, Ordering::Relaxed);
    }
}
