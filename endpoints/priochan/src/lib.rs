//! Datagram priority channels: RISE Algorithm 1 (Lin et al., MMAsia 2025, section 3.1).
//!
//! A pure scheduler core: no I/O and no clock. Ingress control caps a *virtual* sender buffer
//! at `capacity_bytes` (B); egress control hands the transport the highest-priority datagram
//! that fits, round robin among channels of equal priority.
//!
//! API contract (fixed; the implementation fills in the bodies):

/// Anything with a size in bytes can be scheduled.
pub trait Datagram {
    fn size(&self) -> usize;
}

impl Datagram for Vec<u8> {
    fn size(&self) -> usize {
        self.len()
    }
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
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChannelStats {
    pub enqueued: u64,
    pub dropped_ingress: u64,
    pub evicted: u64,
    pub dequeued: u64,
    pub bytes_dequeued: u64,
}

/// The scheduler. Larger `priority` values are more important.
pub struct Scheduler<T: Datagram> {
    _t: std::marker::PhantomData<T>,
}

#[allow(unused_variables)]
impl<T: Datagram> Scheduler<T> {
    /// A scheduler whose virtual sender buffer holds at most `capacity_bytes`.
    pub fn new(capacity_bytes: usize) -> Self {
        unimplemented!()
    }
    /// Create a channel (up front or on demand).
    pub fn add_channel(&mut self, priority: u8) -> ChannelId {
        unimplemented!()
    }
    /// Ingress control (Algorithm 1, lines 1–12).
    pub fn enqueue(&mut self, ch: ChannelId, d: T) -> Ingress<T> {
        unimplemented!()
    }
    /// Ingress control, placing the datagram at the head of its channel (retransmissions).
    pub fn enqueue_front(&mut self, ch: ChannelId, d: T) -> Ingress<T> {
        unimplemented!()
    }
    /// Egress control (lines 13–23): the highest-priority head that fits in `space_bytes`,
    /// round robin among equal priorities; `None` if empty or the selected head does not fit
    /// (the round is skipped).
    pub fn dequeue(&mut self, space_bytes: usize) -> Option<(ChannelId, T)> {
        unimplemented!()
    }
    /// Size of the datagram `dequeue` would select next, if any.
    pub fn peek_size(&self) -> Option<usize> {
        unimplemented!()
    }
    /// Keep only the datagrams of `ch` for which `keep` is true; returns how many were removed.
    pub fn retain(&mut self, ch: ChannelId, keep: impl FnMut(&T) -> bool) -> usize {
        unimplemented!()
    }
    /// Bytes queued over all channels (the virtual sender buffer occupancy S).
    pub fn len_bytes(&self) -> usize {
        unimplemented!()
    }
    /// Datagrams queued in one channel.
    pub fn channel_len(&self, ch: ChannelId) -> usize {
        unimplemented!()
    }
    pub fn is_empty(&self) -> bool {
        unimplemented!()
    }
    pub fn stats(&self, ch: ChannelId) -> ChannelStats {
        unimplemented!()
    }
}
