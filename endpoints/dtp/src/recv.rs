//! The receiver's I/O shell: accepts every unidirectional stream (one block each) and reads
//! it out of order in a task of its own, takes parity symbols from QUIC datagrams, and logs
//! each block once: complete when every byte arrived or the rest can be rebuilt from its
//! redundancy groups (then rebuilt and checked against the known content), else reset or
//! broken.

use std::collections::HashMap;
use std::path::Path;

use crate::assembly::{Assembly, GroupInfo};
use crate::wire::{stream_byte, BlockHeader, ParityHeader, HEADER_BYTES};
use anyhow::Result;
use quicsetup::csv::Csv;
use quinn::{Connection, ConnectionError, RecvStream};
use tokio::sync::mpsc;

use quicsetup::{Clock, Console};

pub const RECEIVED_HEADER: &str = "block_id,priority,payload_bytes,created_us,deadline_us,first_byte_us,end_us,received_bytes,status,recovered_bytes";

#[derive(Debug, Default)]
pub struct Outcome {
    pub complete: u64,
    pub recovered: u64,
    pub reset: u64,
    pub broken: u64,
    pub parity_received: u64,
    pub close: Option<ConnectionError>,
}

/// What a stream task reports, tagged with the stream's accept index.
enum Event {
    Data(u64, u64, bytes::Bytes),
    Finished(u64),
    Reset(u64),
    Broken(u64, String),
}

async fn read_stream(idx: u64, mut s: RecvStream, tx: mpsc::UnboundedSender<Event>) {
    let ev = loop {
        match s.read_chunk(usize::MAX, false).await {
            Ok(Some(c)) => {
                let _ = tx.send(Event::Data(idx, c.offset, c.bytes));
            }
            Ok(None) => break Event::Finished(idx),
            Err(quinn::ReadError::Reset(_)) => break Event::Reset(idx),
            Err(e) => break Event::Broken(idx, e.to_string()),
        }
    };
    let _ = tx.send(ev);
}

/// One stream's block as it arrives.
#[derive(Default)]
struct Rx {
    first_byte_us: u64,
    /// Chunks before the header was complete.
    early: Vec<(u64, bytes::Bytes)>,
    head: Vec<Option<u8>>,
    block: Option<(BlockHeader, [u8; HEADER_BYTES], Assembly)>,
    done: bool,
}

struct State {
    csv: Csv,
    streams: HashMap<u64, Rx>,
    /// Block id → stream index, once its header arrived.
    by_block: HashMap<u64, u64>,
    /// Parity that came before its block's header.
    parity: HashMap<u64, Vec<(ParityHeader, Vec<u8>)>>,
    /// Blocks known only from their parity (every stream packet so far lost): rebuilt from
    /// parity alone when the groups cover the whole stream (a one-packet block).
    orphans: HashMap<u64, Assembly>,
    /// Blocks logged from parity alone: their stream, when it comes, is not logged again.
    done_blocks: std::collections::HashSet<u64>,
    out: Outcome,
    clock: Clock,
    console: Console,
}

fn group_info(p: &ParityHeader) -> GroupInfo {
    GroupInfo {
        start: p.start,
        end: p.end,
        symbol_bytes: usize::from(p.symbol_bytes),
        m: usize::from(p.m),
        n: usize::from(p.n),
    }
}

impl State {
    fn log(&mut self, idx: u64, status: &str, recovered: usize) -> Result<()> {
        let rx = self.streams.get_mut(&idx).expect("known stream");
        if rx.done {
            return Ok(());
        }
        rx.done = true;
        match status {
            "complete" => self.out.complete += 1,
            "reset" => self.out.reset += 1,
            _ => self.out.broken += 1,
        }
        if recovered > 0 {
            self.out.recovered += 1;
        }
        // A stream reset before its header arrived names no block: nothing to log.
        let Some((h, _, asm)) = &rx.block else {
            return Ok(());
        };
        let received = asm.present().saturating_sub(HEADER_BYTES);
        self.csv.line(&format!(
            "{},{},{},{},{},{},{},{},{},{}",
            h.block_id,
            h.priority,
            h.payload_bytes,
            h.created_us,
            h.deadline_us,
            rx.first_byte_us,
            self.clock.unix_us(),
            received,
            status,
            recovered
        ))
    }

    fn add_parity(&mut self, idx: u64, p: ParityHeader, sym: Vec<u8>) {
        let Some(rx) = self.streams.get_mut(&idx) else {
            return;
        };
        let Some((_, _, asm)) = rx.block.as_mut() else {
            return;
        };
        let info = group_info(&p);
        if let Err(e) = asm.add_parity(info, usize::from(p.index), sym) {
            self.console
                .err(format_args!("dtp receiver: block {}: {e}", p.block_id));
        }
    }

    fn on_data(&mut self, idx: u64, offset: u64, bytes: bytes::Bytes) {
        let rx = self.streams.entry(idx).or_default();
        if rx.first_byte_us == 0 {
            rx.first_byte_us = self.clock.unix_us();
        }
        if let Some((_, _, asm)) = rx.block.as_mut() {
            asm.add_data(offset, &bytes);
            return;
        }
        if rx.head.is_empty() {
            rx.head = vec![None; HEADER_BYTES];
        }
        for (i, b) in bytes.iter().enumerate() {
            let o = offset as usize + i;
            if o < HEADER_BYTES {
                rx.head[o] = Some(*b);
            }
        }
        rx.early.push((offset, bytes));
        if rx.head.iter().any(|b| b.is_none()) {
            return;
        }
        let raw: [u8; HEADER_BYTES] = std::array::from_fn(|i| rx.head[i].expect("all there"));
        let h = BlockHeader::decode(&raw);
        let mut asm = Assembly::new(HEADER_BYTES + h.payload_bytes as usize);
        for (o, b) in rx.early.drain(..) {
            asm.add_data(o, &b);
        }
        if self.done_blocks.contains(&h.block_id) {
            rx.done = true; // logged from its parity alone
        }
        rx.block = Some((h, raw, asm));
        self.by_block.insert(h.block_id, idx);
        self.orphans.remove(&h.block_id);
        for (p, sym) in self.parity.remove(&h.block_id).unwrap_or_default() {
            self.add_parity(idx, p, sym);
        }
    }

    fn on_datagram(&mut self, d: &[u8]) -> Result<()> {
        let Some((p, sym)) = ParityHeader::decode(d) else {
            self.console.err(format_args!(
                "dtp receiver: a datagram that is not a parity symbol"
            ));
            return Ok(());
        };
        self.out.parity_received += 1;
        if self.done_blocks.contains(&p.block_id) {
            return Ok(());
        }
        if let Some(&idx) = self.by_block.get(&p.block_id) {
            self.add_parity(idx, p, sym.to_vec());
            return self.check(idx);
        }
        self.parity
            .entry(p.block_id)
            .or_default()
            .push((p, sym.to_vec()));
        if p.total < HEADER_BYTES as u64 || p.total > 1 << 32 {
            return Ok(());
        }
        let asm = self
            .orphans
            .entry(p.block_id)
            .or_insert_with(|| Assembly::new(p.total as usize));
        if asm.total() != p.total as usize {
            return Ok(());
        }
        if let Err(e) = asm.add_parity(group_info(&p), usize::from(p.index), sym.to_vec()) {
            self.console
                .err(format_args!("dtp receiver: block {}: {e}", p.block_id));
            return Ok(());
        }
        if !asm.complete() {
            return Ok(());
        }
        let mut asm = self.orphans.remove(&p.block_id).expect("there");
        let rebuilt = asm.recover().map_err(|e| anyhow::anyhow!(e))?;
        let raw: [u8; HEADER_BYTES] = asm.data()[..HEADER_BYTES].try_into().expect("36 bytes");
        let h = BlockHeader::decode(&raw);
        let good = h.block_id == p.block_id
            && asm
                .data()
                .iter()
                .enumerate()
                .all(|(o, b)| *b == stream_byte(&raw, h.block_id, o as u64));
        if !good {
            self.console.err(format_args!(
                "dtp receiver: block {} rebuilt from parity alone is wrong",
                p.block_id
            ));
            return Ok(());
        }
        self.done_blocks.insert(h.block_id);
        self.out.complete += 1;
        self.out.recovered += 1;
        let now = self.clock.unix_us();
        self.csv.line(&format!(
            "{},{},{},{},{},{now},{now},{},complete,{rebuilt}",
            h.block_id, h.priority, h.payload_bytes, h.created_us, h.deadline_us, h.payload_bytes,
        ))
    }

    /// Logs the stream's block if it became complete; rebuilds (and checks) what is missing.
    fn check(&mut self, idx: u64) -> Result<()> {
        let Some(rx) = self.streams.get_mut(&idx) else {
            return Ok(());
        };
        if rx.done {
            return Ok(());
        }
        let Some((h, raw, asm)) = rx.block.as_mut() else {
            return Ok(());
        };
        if !asm.complete() {
            return Ok(());
        }
        let (id, raw) = (h.block_id, *raw);
        let rebuilt = if asm.received_all() {
            0
        } else {
            match asm.recover() {
                Ok(n) => n,
                Err(e) => return self.log_broken(idx, &e),
            }
        };
        let bad = asm
            .data()
            .iter()
            .enumerate()
            .any(|(o, b)| *b != stream_byte(&raw, id, o as u64));
        if bad {
            return self.log_broken(idx, "content differs from the sender's");
        }
        self.log(idx, "complete", rebuilt)
    }

    fn log_broken(&mut self, idx: u64, why: &str) -> Result<()> {
        self.console
            .err(format_args!("dtp receiver: stream {idx} broke: {why}"));
        self.log(idx, "broken", 0)
    }

    fn on_end(&mut self, ev: Event) -> Result<()> {
        match ev {
            Event::Data(idx, o, b) => {
                self.on_data(idx, o, b);
                self.check(idx)
            }
            Event::Finished(idx) => {
                self.streams.entry(idx).or_default();
                self.check(idx)?;
                self.log_broken(idx, "finished with bytes missing") // no-op once logged
            }
            Event::Reset(idx) => {
                self.streams.entry(idx).or_default();
                self.log(idx, "reset", 0)
            }
            Event::Broken(idx, why) => {
                self.streams.entry(idx).or_default();
                self.log_broken(idx, &why)
            }
        }
    }
}

pub async fn run(
    conn: &Connection,
    log_dir: &Path,
    clock: Clock,
    console: Console,
) -> Result<Outcome> {
    let mut st = State {
        csv: Csv::create(log_dir, "blocks_received.csv", RECEIVED_HEADER)?,
        streams: HashMap::new(),
        by_block: HashMap::new(),
        parity: HashMap::new(),
        orphans: HashMap::new(),
        done_blocks: std::collections::HashSet::new(),
        out: Outcome::default(),
        clock,
        console,
    };
    let (tx, mut rx) = mpsc::unbounded_channel::<Event>();
    let mut accepted = 0u64;
    loop {
        // biased: a fixed order, so a run in virtual time repeats exactly
        tokio::select! {
            biased;
            s = conn.accept_uni() => match s {
                Ok(s) => {
                    tokio::spawn(read_stream(accepted, s, tx.clone()));
                    accepted += 1;
                }
                Err(e) => {
                    st.out.close = Some(e);
                    break;
                }
            },
            d = conn.read_datagram() => match d {
                Ok(d) => st.on_datagram(&d)?,
                Err(e) => {
                    st.out.close = Some(e);
                    break;
                }
            },
            Some(ev) = rx.recv() => st.on_end(ev)?,
        }
    }
    drop(tx);
    // Blocks whose last bytes came with the close.
    while let Ok(ev) = rx.try_recv() {
        st.on_end(ev)?;
    }
    st.csv.flush()?;
    Ok(st.out)
}
