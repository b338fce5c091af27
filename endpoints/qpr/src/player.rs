//! The headless player ([QPR Fig. 8]): segment by segment, while the buffer has room:
//! rank the objects by the viewport at the segment's media time, pick qualities with the
//! ABR from the previous segment's throughput, request the top objects reliably (one
//! stream each) and the rest unreliably (control stream + datagrams), and when every object
//! is complete put the segment in the buffer. Logs every segment and object.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::fec::{Decoder, Fec};
use crate::playout::Playout;
use crate::scene::SEGMENT_S;
use crate::wire::{dgram_header, EndOfData, Request, DGRAM_HEADER, EOD_LEN, HELLO};
use crate::{abr, split, OBJECTS};
use anyhow::{Context, Result};
use quicsetup::csv::Csv;
use quinn::{Connection, SendStream};
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::cli::Args;
use quicsetup::Clock;

#[derive(Debug, Default)]
struct Unreliable {
    /// request id → (datagrams, payload bytes) received
    got: HashMap<u32, (u32, u64)>,
    /// request id → end-of-data and when it arrived
    eod: HashMap<u32, (EndOfData, Instant)>,
    /// with FEC, request id → its symbols: held until the end-of-data gives the object's
    /// size and symbol size, then in its decoder
    fec: HashMap<u32, FecObject>,
    /// objects whose lost sources FEC rebuilt
    recovered: u64,
}

#[derive(Debug, Default)]
struct FecObject {
    early: Vec<(u32, Vec<u8>)>,
    decoder: Option<Decoder>,
    /// once the object is done: its source bytes in hand and whether FEC rebuilt any
    result: Option<(u64, bool)>,
    /// the object's size, from its end-of-data
    size: Option<u64>,
}

impl FecObject {
    fn on_symbol(&mut self, index: u32, payload: &[u8]) {
        if self.result.is_some() {
            return; // decided: a late symbol changes nothing
        }
        match &mut self.decoder {
            // a symbol that is not the object's is not counted (the sender never sends one)
            Some(d) => {
                let _ = d.on_symbol(index, payload);
            }
            None => self.early.push((index, payload.to_vec())),
        }
    }

    fn on_eod(&mut self, fec: Fec, eod: &EndOfData) {
        let mut d = Decoder::new(fec, eod.bytes, eod.symbol_bytes as usize);
        for (index, payload) in self.early.drain(..) {
            let _ = d.on_symbol(index, &payload);
        }
        self.decoder = Some(d);
        self.size = Some(eod.bytes);
    }

    /// Whole: every block has enough symbols (or it was found so).
    fn recoverable(&self) -> bool {
        self.result.is_some_and(|(b, _)| self.size == Some(b))
            || self.decoder.as_ref().is_some_and(Decoder::recoverable)
    }

    /// The object's source bytes in hand (a recoverable object decoded, its lost sources
    /// rebuilt; otherwise the sources that arrived) and whether this call rebuilt any;
    /// decided once. None before the end-of-data.
    fn finish(&mut self) -> Option<(u64, bool)> {
        if let Some((b, _)) = self.result {
            return Some((b, false));
        }
        let d = self.decoder.as_mut()?;
        let rebuilt = d.sources_missing() > 0;
        let r = match d.decode() {
            Ok(bytes) => (bytes.len() as u64, rebuilt),
            Err(_) => (d.source_bytes(), false),
        };
        self.result = Some(r);
        self.decoder = None; // the symbols are no longer needed
        Some(r)
    }
}

pub struct Shared {
    state: Mutex<Unreliable>,
    notify: Notify,
    clock: Clock,
    fec: Option<Fec>,
}

pub struct Outcome {
    pub segments: u64,
    pub freezes: usize,
    pub freeze_total_s: f64,
    pub startup_s: f64,
    pub played_s: f64,
    pub objects_incomplete: u64,
    pub datagrams_received: u64,
    /// unreliable objects whose lost datagrams FEC rebuilt
    pub objects_recovered: u64,
    /// why the loop ended: "duration" or the connection error
    pub ended: String,
}

/// One object's request within a segment.
struct Pending {
    object: usize,
    rank: usize,
    quality: usize,
    reliable: bool,
    id: u32,
}

/// What an object's download gave: payload bytes, datagrams expected/received, done time.
type Got = (u64, i64, i64, u64);

async fn fetch_reliable(conn: Connection, r: Request) -> Result<u64> {
    let (mut s, mut recv) = conn.open_bi().await?;
    s.write_all(&r.encode()).await?;
    s.finish()?;
    let mut n = 0u64;
    while let Some(c) = recv.read_chunk(usize::MAX, true).await? {
        n += c.bytes.len() as u64;
    }
    Ok(n)
}

/// Waits until every id of `ids` has its end-of-data and either all its datagrams or
/// `grace` after the end-of-data; None at `deadline`.
async fn wait_unreliable(
    sh: &Shared,
    ids: &[u32],
    grace: Duration,
    deadline: Instant,
) -> Option<HashMap<u32, Got>> {
    loop {
        let notified = sh.notify.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let mut wake = deadline;
        let mut done = HashMap::new();
        {
            let mut st = sh.state.lock().expect("lock");
            let now = sh.clock.now();
            for &id in ids {
                let Some(&(eod, at)) = st.eod.get(&id) else {
                    continue;
                };
                let (n, b) = st.got.get(&id).copied().unwrap_or((0, 0));
                let whole = st.fec.get(&id).is_some_and(FecObject::recoverable);
                if n >= eod.datagrams || whole || now >= at + grace {
                    let b = st
                        .fec
                        .get_mut(&id)
                        .and_then(FecObject::finish)
                        .unwrap_or((b, false));
                    st.recovered += u64::from(b.1);
                    done.insert(
                        id,
                        (b.0, eod.datagrams as i64, n as i64, sh.clock.unix_us()),
                    );
                } else {
                    wake = wake.min(at + grace);
                }
            }
        }
        if done.len() == ids.len() {
            return Some(done);
        }
        if sh.clock.now() >= deadline {
            return None;
        }
        tokio::select! {
            biased; // a fixed order, so a run in virtual time repeats exactly
            _ = notified => {}
            _ = tokio::time::sleep_until(wake) => {}
        }
    }
}

async fn read_control(mut recv: quinn::RecvStream, sh: Arc<Shared>) {
    let mut b = [0u8; EOD_LEN];
    while recv.read_exact(&mut b).await.is_ok() {
        let e = EndOfData::decode(&b);
        let mut st = sh.state.lock().expect("lock");
        if let Some(fec) = sh.fec {
            st.fec.entry(e.id).or_default().on_eod(fec, &e);
        }
        st.eod.insert(e.id, (e, sh.clock.now()));
        drop(st);
        sh.notify.notify_waiters();
    }
}

async fn read_datagrams(conn: Connection, sh: Arc<Shared>) -> u64 {
    let mut total = 0u64;
    while let Ok(d) = conn.read_datagram().await {
        if let Some((id, index)) = dgram_header(&d) {
            total += 1;
            let mut st = sh.state.lock().expect("lock");
            let e = st.got.entry(id).or_insert((0, 0));
            e.0 += 1;
            e.1 += (d.len() - DGRAM_HEADER) as u64;
            let n = e.0;
            let mut complete = st.eod.get(&id).is_some_and(|(eod, _)| n >= eod.datagrams);
            if sh.fec.is_some() {
                let f = st.fec.entry(id).or_default();
                f.on_symbol(index, &d[DGRAM_HEADER..]);
                complete |= f.recoverable();
            }
            drop(st);
            if complete {
                sh.notify.notify_waiters();
            }
        }
    }
    total
}

/// How the player fetches a segment's objects: QUIC (reliable streams + datagrams) or
/// HTTP/2 over one TCP connection (every object reliable; the baseline).
pub enum Fetcher {
    Quic {
        conn: Connection,
        /// the connection the datagrams come on (`conn`, or the second connection)
        dgram: Connection,
        control: SendStream,
        sh: Arc<Shared>,
        grace: Duration,
    },
    H2(crate::h2tcp::Client),
}

impl Fetcher {
    /// Opens the control stream on `conn` and starts the end-of-data reader and the
    /// datagram reader on `dgram` (`conn` itself on the shared path).
    pub async fn quic(
        conn: &Connection,
        dgram: &Connection,
        (grace, fec): (Duration, Option<Fec>),
        clock: Clock,
    ) -> Result<Fetcher> {
        let (mut control, control_recv) =
            conn.open_bi().await.context("opening the control stream")?;
        control.write_all(HELLO).await?;
        let sh = Arc::new(Shared {
            state: Mutex::new(Unreliable::default()),
            notify: Notify::new(),
            clock,
            fec,
        });
        tokio::spawn(read_control(control_recv, sh.clone()));
        tokio::spawn(read_datagrams(dgram.clone(), sh.clone()));
        Ok(Fetcher::Quic {
            conn: conn.clone(),
            dgram: dgram.clone(),
            control,
            sh,
            grace,
        })
    }

    fn closed(&self) -> Option<String> {
        match self {
            Fetcher::Quic { conn, dgram, .. } => conn
                .close_reason()
                .or_else(|| dgram.close_reason())
                .map(|r| format!("{r}")),
            Fetcher::H2(c) => c.closed(),
        }
    }

    /// (datagrams received, objects whose lost sources FEC rebuilt)
    fn datagrams_received(&self) -> (u64, u64) {
        match self {
            Fetcher::Quic { sh, .. } => {
                let st = sh.state.lock().expect("lock");
                (st.got.values().map(|g| g.0 as u64).sum(), st.recovered)
            }
            Fetcher::H2(_) => (0, 0),
        }
    }

    async fn finish(&mut self) {
        match self {
            Fetcher::Quic { control, .. } => {
                let _ = control.finish();
            }
            Fetcher::H2(c) => c.close().await,
        }
    }

    /// Every object of `pend`; None if `end` came first.
    async fn fetch(
        &mut self,
        segment: u64,
        pend: &[Pending],
        (end, clock): (Instant, Clock),
    ) -> Result<Option<HashMap<u32, Got>>> {
        let req = |p: &Pending| Request {
            id: p.id,
            segment,
            object: p.object as u8,
            quality: p.quality as u8,
        };
        let mut tasks = Vec::new();
        let mut unrel_ids = Vec::new();
        for p in pend {
            let r = req(p);
            let task = match self {
                Fetcher::Quic { conn, .. } if p.reliable => {
                    let c = conn.clone();
                    tokio::spawn(async move { (fetch_reliable(c, r).await, clock.unix_us()) })
                }
                Fetcher::Quic { control, .. } => {
                    send_request(control, r).await?;
                    unrel_ids.push(p.id);
                    continue;
                }
                Fetcher::H2(c) => {
                    let f = c.get(r);
                    tokio::spawn(async move { (f.await, clock.unix_us()) })
                }
            };
            tasks.push((p.id, task));
        }
        let all = async {
            let mut got: HashMap<u32, Got> = HashMap::new();
            for (id, t) in tasks {
                let (n, done) = t.await?;
                got.insert(id, (n?, -1, -1, done));
            }
            if let Fetcher::Quic { sh, grace, .. } = self {
                match wait_unreliable(sh, &unrel_ids, *grace, end).await {
                    Some(u) => got.extend(u),
                    None => return Ok(None),
                }
            }
            Ok(Some(got))
        };
        match tokio::time::timeout_at(end, all).await {
            Err(_) => Ok(None),
            Ok(r) => r,
        }
    }
}

pub async fn run(args: &Args, mut fetcher: Fetcher, clock: Clock) -> Result<Outcome> {
    let scene = args.scene();
    let geo = args.geometry();
    let unrel_n = split::unreliable_count(args.q_pct).context("--q-pct")?;
    let dir = &args.common.log_dir;
    let mut seg_log = Csv::create(
        dir,
        "segments.csv",
        "segment,request_us,arrival_us,play_start_us,download_ms,bytes,throughput_mbps,\
         stall_before_ms,ranking,qualities,reliable",
    )?;
    let mut obj_log = Csv::create(
        dir,
        "objects.csv",
        "segment,object,rank,quality,reliable,size_bytes,received_bytes,datagrams_expected,\
         datagrams_received,complete,done_us",
    )?;
    let t0 = clock.now();
    let t0_us = clock.unix_us();
    let at_us = |t: Instant| t0_us + t.duration_since(t0).as_micros() as u64;
    let secs = |t: Instant| t.duration_since(t0).as_secs_f64();
    let end = t0 + Duration::from_secs_f64(args.duration_s);
    let mut playout = Playout::new(SEGMENT_S, args.buffer_segments);
    let mut prev_thr: Option<f64> = None;
    let mut last_arrival = t0;
    let mut next_id = 0u32;
    let mut incomplete = 0u64;
    let mut ended = "duration".to_string();
    let mut seg = 0u64;
    loop {
        let req_s = playout.next_request_s(secs(last_arrival));
        let req_at = t0 + Duration::from_secs_f64(req_s);
        if req_at >= end {
            break;
        }
        tokio::time::sleep_until(req_at).await;
        if let Some(reason) = fetcher.closed() {
            ended = reason;
            break;
        }
        let media_mid = seg as f64 * SEGMENT_S + SEGMENT_S / 2.0;
        let ranking = geo.ranking(media_mid);
        let quality = abr::decide(&scene, prev_thr, &ranking, args.abr_safety);
        let reliable = split::reliable(&ranking, unrel_n);
        let mut pend = Vec::with_capacity(OBJECTS);
        for (rank, &o) in ranking.iter().enumerate() {
            pend.push(Pending {
                object: o,
                rank,
                quality: quality[o],
                reliable: reliable[o],
                id: next_id,
            });
            next_id += 1;
        }
        let got = match fetcher.fetch(seg, &pend, (end, clock)).await {
            Ok(None) => break, // the session ended mid-segment
            Err(e) => {
                ended = fetcher.closed().unwrap_or_else(|| format!("{e:#}"));
                break;
            }
            Ok(Some(g)) => g,
        };
        let arrival = clock.now();
        let before = playout.freezes.len();
        let start_s = playout.on_arrival(secs(arrival));
        let stall_ms = playout
            .freezes
            .get(before)
            .map_or(0.0, |f| f.duration_s * 1e3);
        let bytes: u64 = got.values().map(|g| g.0).sum();
        let dl = arrival.duration_since(req_at).as_secs_f64().max(1e-6);
        let thr = bytes as f64 * 8.0 / dl;
        prev_thr = Some(thr);
        last_arrival = arrival;
        let join = |f: &dyn Fn(usize) -> String| (0..OBJECTS).map(f).collect::<Vec<_>>().join(" ");
        seg_log.line(&format!(
            "{seg},{},{},{},{:.3},{bytes},{:.4},{stall_ms:.3},{},{},{}",
            at_us(req_at),
            at_us(arrival),
            t0_us + (start_s * 1e6) as u64,
            dl * 1e3,
            thr / 1e6,
            join(&|i| ranking[i].to_string()),
            join(&|o| quality[o].to_string()),
            join(&|o| u8::from(reliable[o]).to_string()),
        ))?;
        for p in &pend {
            let size = scene.size_bytes(p.object, p.quality, seg);
            let (b, exp, n, done) = got[&p.id];
            let complete = b >= size;
            incomplete += u64::from(!complete);
            obj_log.line(&format!(
                "{seg},{},{},{},{},{size},{b},{exp},{n},{},{done}",
                p.object,
                p.rank,
                p.quality,
                u8::from(p.reliable),
                u8::from(complete)
            ))?;
        }
        seg += 1;
    }
    if fetcher.closed().is_none() {
        tokio::time::sleep_until(end).await; // the session lasts its duration
    }
    let (freezes, total, played) = playout.finish(secs(clock.now().min(end)));
    let total = total + 0.0; // an empty sum is -0.0
    seg_log.flush()?;
    obj_log.flush()?;
    let startup_s = playout
        .starts()
        .first()
        .map_or(args.duration_s, |&s| s.min(args.duration_s));
    fetcher.finish().await;
    let (datagrams_received, objects_recovered) = fetcher.datagrams_received();
    Ok(Outcome {
        segments: seg,
        freezes,
        freeze_total_s: total,
        startup_s,
        played_s: played,
        objects_incomplete: incomplete,
        datagrams_received,
        objects_recovered,
        ended,
    })
}

async fn send_request(control: &mut SendStream, r: Request) -> Result<()> {
    control
        .write_all(&r.encode())
        .await
        .context("writing a request on the control stream")
}
