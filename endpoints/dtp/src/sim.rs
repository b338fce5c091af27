//! The scheduler over a model of the path in virtual time: a bottleneck of fixed rate that
//! the sender keeps just busy (the queue sits in the sender, where the scheduler sees it:
//! what the `dtp` shell does with a small quinn send window), a fixed one-way delay, no
//! loss. The bottleneck and the delay are one direction of linkem's own link core
//! ([`linkem::Direction`], the model the emulator and the sim site run). The sender hands
//! `chunk_bytes` at a time, the next once the link has sent the last; the scheduler runs
//! before each chunk and whenever blocks arrive. A block is on time if its last byte arrives
//! by created + deadline. It predicts what a real run should show and lets tests compare
//! policies without I/O.

use crate::ads::{Block, Estimate, Policy, Scheduler};
use crate::pattern::Pattern;
use linkem::config::{
    DirectionConfig, DropPolicy, LossConfig, QueueConfig, QueueLimit, RateConfig,
};
use linkem::{Direction, Event};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Path {
    pub rate_bytes_per_s: f64,
    pub one_way_delay_us: u64,
}

impl Path {
    /// linkem's config of the path: the rate, the delay, no loss; the queue never holds more
    /// than the chunk being sent.
    pub fn direction(&self) -> DirectionConfig {
        DirectionConfig {
            rate: RateConfig::Constant {
                rate_bps: ((self.rate_bytes_per_s * 8.0).round() as u64).max(1),
            },
            delay_ns: self.one_way_delay_us * 1000,
            jitter_ns: 0,
            jitter_reorder: false,
            loss: LossConfig::None,
            queue: Some(QueueConfig {
                limit: QueueLimit::Packets(1),
                drop: DropPolicy::Tail,
            }),
        }
    }
}

/// The largest chunk the core takes (its size check is the emulator's, for Ethernet frames;
/// a chunk is none).
const MAX_CHUNK_BYTES: u64 = 1 << 32;

/// What became of one block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fate {
    pub id: u64,
    pub priority: u32,
    pub size_bytes: u64,
    pub sent_bytes: u64,
    /// When its last byte arrived (None: dropped or never finished).
    pub arrival_us: Option<u64>,
    pub due_us: u64,
}

impl Fate {
    pub fn on_time(&self) -> bool {
        self.arrival_us.is_some_and(|a| a <= self.due_us)
    }
}

/// A chunk on the link: its block, and whether it is the block's last.
type Chunk = (u64, bool);

/// Runs the pattern for `duration_us` plus a drain of one deadline; the estimate given to
/// ADS is the true rate and delay.
pub fn run(
    policy: Policy,
    pattern: &Pattern,
    path: Path,
    duration_us: u64,
    chunk_bytes: u64,
) -> Vec<Fate> {
    let releases = pattern.releases(duration_us);
    let mut fates: Vec<Fate> = releases
        .iter()
        .map(|r| Fate {
            id: r.id,
            priority: r.priority,
            size_bytes: r.size_bytes,
            sent_bytes: 0,
            arrival_us: None,
            due_us: r.at_us + pattern.deadline_us,
        })
        .collect();
    let mut s = Scheduler::new(policy, pattern.pmax());
    let est = Estimate {
        bandwidth_bytes_per_s: path.rate_bytes_per_s,
        one_way_delay_us: path.one_way_delay_us,
    };
    let mut link: Direction<Chunk> = Direction::new(&path.direction(), MAX_CHUNK_BYTES, 0, 0);
    let mut events = Vec::new();
    let end = duration_us + pattern.deadline_us;
    let mut now = 0u64;
    let mut next = 0usize;
    while now < end {
        while next < releases.len() && releases[next].at_us <= now {
            let r = releases[next];
            s.push(Block {
                id: r.id,
                size_bytes: r.size_bytes,
                priority: r.priority,
                created_us: r.at_us,
                deadline_us: pattern.deadline_us,
                deps: vec![],
            })
            .expect("pattern blocks are valid");
            next += 1;
        }
        s.expire(now);
        let Some(id) = s.pick(now, &est) else {
            now = releases.get(next).map_or(end, |r| r.at_us);
            continue;
        };
        let left = s.block(id).expect("picked").size_bytes - s.sent_bytes(id).expect("picked");
        let n = left.min(chunk_bytes);
        let last = s.on_sent(id, n).expect("within the block");
        fates[id as usize].sent_bytes += n;
        link.enqueue(now * 1000, (id, last), n, &mut events);
        // the next chunk goes once the link has sent this one
        let mut t_ns = now * 1000;
        while link.backlog_bytes() > 0 {
            t_ns = link.next_wakeup_ns().expect("a chunk in transmission");
            link.poll(t_ns, &mut events);
        }
        record_arrivals(&mut events, &mut fates);
        now = t_ns.div_ceil(1000);
    }
    link.poll(u64::MAX, &mut events);
    record_arrivals(&mut events, &mut fates);
    fates
}

/// The arrival of every block whose last chunk left the link.
fn record_arrivals(events: &mut Vec<Event<Chunk>>, fates: &mut [Fate]) {
    for ev in events.drain(..) {
        match ev {
            Event::Sent { pkt, at_ns } => {
                if let (id, true) = pkt.payload {
                    fates[id as usize].arrival_us = Some(at_ns.div_ceil(1000));
                }
            }
            Event::Dropped { .. } => unreachable!("a lossless path the sender never overfills"),
        }
    }
}

/// Share of blocks on time (all blocks, or those of one priority).
pub fn on_time_ratio(fates: &[Fate], priority: Option<u32>) -> f64 {
    let sel: Vec<&Fate> = fates
        .iter()
        .filter(|f| priority.is_none_or(|p| f.priority == p))
        .collect();
    if sel.is_empty() {
        return 0.0;
    }
    sel.iter().filter(|f| f.on_time()).count() as f64 / sel.len() as f64
}
