//! The segment server ([QPR Fig. 9]): the first bidirectional stream the player opens is
//! the control stream (unreliable requests in, end-of-data out), every other one carries one
//! reliable request and its response. The datagrams go on `dgram`: the same connection, or
//! the second one of a second-connection unreliable path (qpr::unreliable).

use quicsetup::Console;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::fec::{encode_block, Fec, Symbol};
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
    /// FEC repair datagrams and their payload bytes (QPR(F); 0 without FEC)
    pub repair_datagrams: AtomicU64,
    pub repair_bytes: AtomicU64,
}

/// A zero-filled payload shared by every response (the content's bits do not matter).
fn payload() -> Bytes {
    Bytes::from(vec![0u8; 64 << 10])
}

/// Serves until the connection ends; returns how it ended. Datagrams go on `dgram`, with
/// `fec`'s repair symbols after each block's sources if set.
pub async fn run(
    conn: &Connection,
    dgram: &Connection,
    (scene, fec): (Scene, Option<Fec>),
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
                if let Err(e) = control(&d, send, recv, (scene, fec), &counts).await {
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

/// The datagrams of one unreliable object of `size` bytes, `per` payload bytes each: with
/// `fec`, each block's sources then its repair symbols (qpr::fec), else the sources alone.
/// (index, payload) in sending order; payloads borrow from the zero-filled `p`.
fn object_datagrams(
    size: u64,
    per: usize,
    fec: Option<Fec>,
    p: &Bytes,
) -> Result<Vec<(u32, Bytes)>> {
    let n = (size.div_ceil(per as u64) as usize).max(1);
    let source = |i: usize| {
        let start = (i * per) as u64;
        p.slice(..(size.saturating_sub(start)).min(per as u64) as usize)
    };
    let Some(fec) = fec else {
        return Ok((0..n).map(|i| (i as u32, source(i))).collect());
    };
    let mut repairs = Vec::new();
    for (b, (k, r)) in fec.blocks(n).into_iter().enumerate() {
        let sources: Vec<Bytes> = (0..k).map(|i| source(b * fec.block + i)).collect();
        let refs: Vec<&[u8]> = sources.iter().map(|s| s.as_ref()).collect();
        repairs.push(encode_block(&refs, r, per).map_err(anyhow::Error::msg)?);
    }
    Ok(fec
        .send_order(n)
        .into_iter()
        .map(|sym| match sym {
            Symbol::Source(i) => (sym.index(), source(i as usize)),
            Symbol::Repair { block, number } => (
                sym.index(),
                Bytes::from(std::mem::take(
                    &mut repairs[block as usize][number as usize],
                )),
            ),
        })
        .collect())
}

/// The control stream; `conn` is the connection the datagrams go on.
async fn control(
    conn: &Connection,
    mut send: SendStream,
    mut recv: RecvStream,
    (scene, fec): (Scene, Option<Fec>),
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
        let empty = conn.datagram_send_buffer_space(); // the queue is empty here
        let datagrams = object_datagrams(size, per, fec, &p)?;
        let (mut repair_n, mut repair_b) = (0u64, 0u64);
        for (index, payload) in &datagrams {
            let mut d = Vec::with_capacity(DGRAM_HEADER + payload.len());
            d.extend_from_slice(&r.id.to_be_bytes());
            d.extend_from_slice(&index.to_be_bytes());
            d.extend_from_slice(payload);
            conn.send_datagram_wait(Bytes::from(d)).await?;
            if matches!(Symbol::from_index(*index), Symbol::Repair { .. }) {
                repair_n += 1;
                repair_b += payload.len() as u64;
            }
        }
        let index = datagrams.len() as u32;
        // The end-of-data goes out once every datagram has left quinn's queue, so it
        // follows them on the path ([QPR §III-C]: the end on the reliable control stream).
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
            symbol_bytes: per as u32,
        };
        send.write_all(&eod.encode()).await?;
        counts.unreliable_requests.fetch_add(1, Ordering::Relaxed);
        counts
            .datagrams_sent
            .fetch_add(index as u64, Ordering::Relaxed);
        counts.unreliable_bytes.fetch_add(size, Ordering::Relaxed);
        counts
            .repair_datagrams
            .fetch_add(repair_n, Ordering::Relaxed);
        counts.repair_bytes.fetch_add(repair_b, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fec::Decoder;

    #[test]
    fn an_object_is_cut_into_sources_and_with_fec_repairs_that_rebuild_it() {
        let p = payload();
        // 2,500 bytes in 1,000-byte datagrams: 1,000 + 1,000 + 500
        let plain = object_datagrams(2_500, 1_000, None, &p).unwrap();
        let lens: Vec<(u32, usize)> = plain.iter().map(|(i, d)| (*i, d.len())).collect();
        assert_eq!(lens, vec![(0, 1_000), (1, 1_000), (2, 500)]);
        // FEC: blocks of 2 sources, 50 % repair: [S0 S1 R0.0] [S2 R1.0]
        let fec = Fec::new(2, 50).unwrap();
        let coded = object_datagrams(2_500, 1_000, Some(fec), &p).unwrap();
        let kinds: Vec<Symbol> = coded.iter().map(|(i, _)| Symbol::from_index(*i)).collect();
        assert_eq!(
            kinds,
            vec![
                Symbol::Source(0),
                Symbol::Source(1),
                Symbol::Repair {
                    block: 0,
                    number: 0
                },
                Symbol::Source(2),
                Symbol::Repair {
                    block: 1,
                    number: 0
                },
            ]
        );
        assert_eq!(coded[2].1.len(), 1_000); // a repair symbol is a full symbol
                                             // the player rebuilds the object from any one loss per block
        let mut d = Decoder::new(fec, 2_500, 1_000);
        for (i, data) in [&coded[0], &coded[2], &coded[4]] {
            d.on_symbol(*i, data).unwrap();
        }
        assert_eq!(d.decode().unwrap(), vec![0u8; 2_500]);
    }
}
