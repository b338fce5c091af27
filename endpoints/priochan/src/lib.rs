//! Datagram priority channels: RISE Algorithm 1 (Lin et al., MMAsia 2025, section 3.1).
//!
//! A pure scheduler core: no I/O and no clock. Ingress control caps a *virtual* sender buffer
//! at `capacity_bytes` (B); egress control hands the transport the highest-priority datagram
//! that fits, round robin among channels of equal priority.
//!
//! # Ingress: how the paper's `S < B` test is made strict
//!
//! Algorithm 1 admits a datagram when the occupancy `S < B`, which lets the buffer overflow
//! by up to one datagram, and evicts exactly one datagram otherwise, which can also leave it
//! above B when sizes differ. We require the invariant **`len_bytes() <= B` at all times**, so
//! ingress of `d` (priority `p`) is:
//!
//! 1. if `S + |d| <= B`: enqueue `d`;
//! 2. else, if the bytes queued in channels of priority strictly below `p` are enough to make
//!    room (`S - lower + |d| <= B`): evict the oldest datagram of the lowest-priority non-empty
//!    channel, repeatedly, until `d` fits; then enqueue `d` ([`Ingress::Evicted`]). Among
//!    several lowest-priority channels of equal priority, the one with the most queued bytes
//!    loses its oldest datagram first (ties: the lower [`ChannelId`]);
//! 3. else drop `d` and touch nothing ([`Ingress::Dropped`]): evicting lower-priority
//!    datagrams that could not make room would only destroy data.
//!
//! A consequence: a datagram is never dropped while evicting lower-priority ones would have
//! made room for it, and datagrams of equal or higher priority are never evicted for it
//! (tail drop among equals, as in the paper's strict `p > priority(C_min)`).
//!
//! # Overflow policy of a channel: tail drop (the paper) or head drop (vanilla quinn)
//!
//! A channel made with [`Scheduler::add_channel`] is [`Overflow::TailDrop`]: as above, a
//! datagram that does not fit is dropped when lower priorities cannot make room. A channel made
//! with [`Scheduler::add_channel_with`]`(p, `[`Overflow::HeadDrop`]`)` also gives up its *own
//! oldest* datagrams: after the lower-priority channels are emptied as far as needed, its head
//! is evicted, repeatedly, until `d` fits; `d` is dropped only if it is larger than all of that
//! together (e.g. larger than B). A single head-drop channel is exactly quinn 0.11's datagram
//! send buffer (`Datagrams::send` → `make_space_for` in quinn-proto's `datagrams.rs` pops the
//! oldest datagram until the new one fits): the paper's "baseline QUIC".
//!
//! # Egress
//!
//! The highest-priority non-empty channel is selected, round robin among the non-empty
//! channels of that priority (the turn passes to the next channel only after a dequeue). If
//! its head does not fit in `space_bytes`, the round is skipped (`None`) and the same channel
//! keeps its turn, so [`Scheduler::peek_size`] always names the datagram `dequeue` would give.

use std::collections::VecDeque;

/// Anything with a size in bytes can be scheduled.
pub trait Datagram {
    fn size(&self) -> usize;
}

impl Datagram for Vec<u8> {
    fn size(&self) -> usize {
        self.len()
    }
}

/// What a channel does when a new datagram does not fit in B (see the crate docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Overflow {
    /// Drop the new datagram (after evicting lower priorities if that makes room).
    #[default]
    TailDrop,
    /// Also evict this channel's own oldest datagrams until the new one fits.
    HeadDrop,
}

/// A channel handle, returned by [`Scheduler::add_channel`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ChannelId(pub usize);

/// What ingress control did with a datagram.
#[derive(Debug, PartialEq, Eq)]
pub enum Ingress<T> {
    /// Enqueued without touching anything else.
    Enqueued,
    /// Enqueued after evicting these (oldest datagrams of the lowest-priority channels).
    Evicted(Vec<(ChannelId, T)>),
    /// Not enqueued: the buffer is full and nothing of lower priority could make room.
    Dropped(T),
}

/// Per-channel counters.
///
/// Invariant: `enqueued == dequeued + evicted + removed + channel_len` (datagrams dropped at
/// ingress were never enqueued).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChannelStats {
    /// Datagrams accepted by ingress control (back or front).
    pub enqueued: u64,
    /// Datagrams refused by ingress control.
    pub dropped_ingress: u64,
    /// Datagrams evicted to make room for a higher-priority one.
    pub evicted: u64,
    /// Datagrams handed out by egress control.
    pub dequeued: u64,
    pub bytes_dequeued: u64,
    /// Datagrams removed by [`Scheduler::retain`].
    pub removed: u64,
}

struct Channel<T> {
    priority: u8,
    overflow: Overflow,
    group: usize,
    queue: VecDeque<T>,
    bytes: usize,
    stats: ChannelStats,
}

/// Channels of one priority, for round robin.
struct Group {
    priority: u8,
    members: Vec<usize>,
    /// Index into `members` of the channel whose turn it is.
    cursor: usize,
}

/// The scheduler. Larger `priority` values are more important.
pub struct Scheduler<T: Datagram> {
    capacity_bytes: usize,
    len_bytes: usize,
    channels: Vec<Channel<T>>,
    /// Sorted by priority, highest first.
    groups: Vec<Group>,
}

impl<T: Datagram> Scheduler<T> {
    /// A scheduler whose virtual sender buffer holds at most `capacity_bytes`.
    pub fn new(capacity_bytes: usize) -> Self {
        Scheduler {
            capacity_bytes,
            len_bytes: 0,
            channels: Vec::new(),
            groups: Vec::new(),
        }
    }

    /// The capacity B.
    pub fn capacity_bytes(&self) -> usize {
        self.capacity_bytes
    }

    /// Create a tail-drop channel (up front or on demand).
    pub fn add_channel(&mut self, priority: u8) -> ChannelId {
        self.add_channel_with(priority, Overflow::TailDrop)
    }

    /// Create a channel with the given overflow policy.
    pub fn add_channel_with(&mut self, priority: u8, overflow: Overflow) -> ChannelId {
        let id = self.channels.len();
        let group = match self.groups.iter().position(|g| g.priority == priority) {
            Some(g) => g,
            None => {
                let at = self
                    .groups
                    .iter()
                    .position(|g| g.priority < priority)
                    .unwrap_or(self.groups.len());
                self.groups.insert(
                    at,
                    Group {
                        priority,
                        members: Vec::new(),
                        cursor: 0,
                    },
                );
                for c in &mut self.channels {
                    if c.group >= at {
                        c.group += 1;
                    }
                }
                at
            }
        };
        self.groups[group].members.push(id);
        self.channels.push(Channel {
            priority,
            overflow,
            group,
            queue: VecDeque::new(),
            bytes: 0,
            stats: ChannelStats::default(),
        });
        ChannelId(id)
    }

    /// The priority a channel was created with. Panics on an unknown channel.
    pub fn priority(&self, ch: ChannelId) -> u8 {
        self.channels[ch.0].priority
    }

    /// Ingress control (Algorithm 1, lines 1–12).
    pub fn enqueue(&mut self, ch: ChannelId, d: T) -> Ingress<T> {
        self.ingress(ch, d, false)
    }

    /// Ingress control, placing the datagram at the head of its channel (retransmissions).
    pub fn enqueue_front(&mut self, ch: ChannelId, d: T) -> Ingress<T> {
        self.ingress(ch, d, true)
    }

    fn ingress(&mut self, ch: ChannelId, d: T, front: bool) -> Ingress<T> {
        let size = d.size();
        let p = self.channels[ch.0].priority;
        let mut evicted = Vec::new();
        if self.len_bytes + size > self.capacity_bytes {
            let lower: usize = self
                .channels
                .iter()
                .filter(|c| c.priority < p)
                .map(|c| c.bytes)
                .sum();
            let head_drop = self.channels[ch.0].overflow == Overflow::HeadDrop;
            let own = if head_drop {
                self.channels[ch.0].bytes
            } else {
                0
            };
            if self.len_bytes - lower - own + size > self.capacity_bytes {
                self.channels[ch.0].stats.dropped_ingress += 1;
                return Ingress::Dropped(d);
            }
            while self.len_bytes + size > self.capacity_bytes {
                let victim = match self.lowest_victim() {
                    Some(v) if self.channels[v].priority < p => v,
                    // lower priorities are empty: a head-drop channel gives up its own oldest
                    _ => ch.0,
                };
                let c = &mut self.channels[victim];
                let old = c.queue.pop_front().expect("victim is non-empty");
                c.bytes -= old.size();
                c.stats.evicted += 1;
                self.len_bytes -= old.size();
                evicted.push((ChannelId(victim), old));
            }
        }
        let c = &mut self.channels[ch.0];
        c.bytes += size;
        c.stats.enqueued += 1;
        self.len_bytes += size;
        if front {
            c.queue.push_front(d);
        } else {
            c.queue.push_back(d);
        }
        if evicted.is_empty() {
            Ingress::Enqueued
        } else {
            Ingress::Evicted(evicted)
        }
    }

    /// The non-empty channel of lowest priority (most bytes among equals, then lowest id).
    fn lowest_victim(&self) -> Option<usize> {
        for g in self.groups.iter().rev() {
            let mut best: Option<usize> = None;
            for &m in &g.members {
                let c = &self.channels[m];
                if c.queue.is_empty() {
                    continue;
                }
                if best.is_none_or(|b| c.bytes > self.channels[b].bytes) {
                    best = Some(m);
                }
            }
            if best.is_some() {
                return best;
            }
        }
        None
    }

    /// The channel egress control selects now: (group index, member index).
    fn select(&self) -> Option<(usize, usize)> {
        for (gi, g) in self.groups.iter().enumerate() {
            let n = g.members.len();
            for k in 0..n {
                let mi = (g.cursor + k) % n;
                if !self.channels[g.members[mi]].queue.is_empty() {
                    return Some((gi, mi));
                }
            }
        }
        None
    }

    /// Egress control (lines 13–23): the highest-priority head that fits in `space_bytes`,
    /// round robin among equal priorities; `None` if empty or the selected head does not fit
    /// (the round is skipped).
    pub fn dequeue(&mut self, space_bytes: usize) -> Option<(ChannelId, T)> {
        let (gi, mi) = self.select()?;
        let id = self.groups[gi].members[mi];
        let c = &mut self.channels[id];
        let size = c.queue.front().expect("selected is non-empty").size();
        if size > space_bytes {
            return None;
        }
        let d = c.queue.pop_front().expect("selected is non-empty");
        c.bytes -= size;
        c.stats.dequeued += 1;
        c.stats.bytes_dequeued += size as u64;
        self.len_bytes -= size;
        let g = &mut self.groups[gi];
        g.cursor = (mi + 1) % g.members.len();
        Some((ChannelId(id), d))
    }

    /// Size of the datagram `dequeue` would select next, if any.
    pub fn peek_size(&self) -> Option<usize> {
        let (gi, mi) = self.select()?;
        let id = self.groups[gi].members[mi];
        self.channels[id].queue.front().map(|d| d.size())
    }

    /// Keep only the datagrams of `ch` for which `keep` is true; returns how many were removed.
    pub fn retain(&mut self, ch: ChannelId, mut keep: impl FnMut(&T) -> bool) -> usize {
        let c = &mut self.channels[ch.0];
        let before = c.queue.len();
        let mut freed = 0;
        c.queue.retain(|d| {
            let k = keep(d);
            if !k {
                freed += d.size();
            }
            k
        });
        let removed = before - c.queue.len();
        c.bytes -= freed;
        c.stats.removed += removed as u64;
        self.len_bytes -= freed;
        removed
    }

    /// Bytes queued over all channels (the virtual sender buffer occupancy S).
    pub fn len_bytes(&self) -> usize {
        self.len_bytes
    }

    /// Datagrams queued in one channel.
    pub fn channel_len(&self, ch: ChannelId) -> usize {
        self.channels[ch.0].queue.len()
    }

    /// Bytes queued in one channel.
    pub fn channel_bytes(&self, ch: ChannelId) -> usize {
        self.channels[ch.0].bytes
    }

    pub fn is_empty(&self) -> bool {
        self.len_bytes == 0 && self.channels.iter().all(|c| c.queue.is_empty())
    }

    pub fn stats(&self, ch: ChannelId) -> ChannelStats {
        self.channels[ch.0].stats
    }
}

#[cfg(test)]
mod tests;
