//! Rate servers: when does a packet that starts transmission at `start_ns` finish?
//!
//! The time-based servers (unlimited, constant, schedule) serialise one packet at a time,
//! bit-accurately on the frame's wire bytes as seen on the socket (Ethernet header included,
//! no preamble/FCS/inter-frame gap). The Mahimahi opportunity server is byte-based and lives
//! in `Opportunities`: each opportunity carries up to `bytes_per_opportunity` bytes, a packet
//! may span several opportunities (the remainder carries over in the packet), one opportunity
//! may finish several small packets, and bytes of an opportunity that meets an empty queue
//! are lost, as in Mahimahi's LinkQueue.

const NS_PER_S: u128 = 1_000_000_000;

/// Constant rate with the sub-nanosecond remainder carried across back-to-back packets, so a
/// long busy period has no cumulative rounding error.
#[derive(Debug, Clone)]
pub struct Constant {
    rate_bps: u64,
    last_finish_ns: u64,
    rem: u128,
}

impl Constant {
    pub fn new(rate_bps: u64) -> Self {
        Constant {
            rate_bps,
            last_finish_ns: 0,
            rem: 0,
        }
    }

    pub fn finish(&mut self, start_ns: u64, bytes: u64) -> u64 {
        if start_ns != self.last_finish_ns {
            self.rem = 0;
        }
        let num = bytes as u128 * 8 * NS_PER_S + self.rem;
        let rate = self.rate_bps as u128;
        let dt = num / rate;
        self.rem = num % rate;
        self.last_finish_ns = start_ns + dt as u64;
        self.last_finish_ns
    }
}

/// Piecewise-constant rate; each point's rate holds until the next point; wraps at the period
/// when looped, otherwise the last rate holds forever.
#[derive(Debug, Clone)]
pub struct Schedule {
    points: Vec<(u64, u64)>,
    period_ns: u64,
    looped: bool,
}

impl Schedule {
    pub fn new(points: Vec<(u64, u64)>, period_ns: u64, looped: bool) -> Self {
        Schedule {
            points,
            period_ns,
            looped,
        }
    }

    /// Rate at `t_ns` and the end of its segment (None: holds forever).
    pub fn segment(&self, t_ns: u64) -> (u64, Option<u64>) {
        let (base, phase) = if self.looped {
            (t_ns - t_ns % self.period_ns, t_ns % self.period_ns)
        } else {
            (0, t_ns)
        };
        let i = self.points.partition_point(|p| p.0 <= phase) - 1;
        let rate = self.points[i].1;
        let end = match self.points.get(i + 1) {
            Some(next) => Some(base + next.0),
            None if self.looped => Some(base + self.period_ns),
            None => None,
        };
        (rate, end)
    }

    /// Finish time of `bytes` starting at `start_ns`; None if the link never delivers them
    /// (a non-looped schedule ending in rate 0).
    pub fn finish(&self, start_ns: u64, bytes: u64) -> Option<u64> {
        let mut need = bytes as u128 * 8 * NS_PER_S; // bit·ns
        let mut t = start_ns;
        loop {
            let (rate, end) = self.segment(t);
            let rate = rate as u128;
            match end {
                None => {
                    if rate == 0 {
                        return None;
                    }
                    return Some(t + need.div_ceil(rate) as u64);
                }
                Some(end) => {
                    let avail = rate * (end - t) as u128;
                    if rate > 0 && need <= avail {
                        return Some(t + need.div_ceil(rate) as u64);
                    }
                    need -= avail;
                    t = end;
                }
            }
        }
    }
}

/// Mahimahi delivery opportunities, iterated in absolute time.
#[derive(Debug, Clone)]
pub struct Opportunities {
    times_ns: Vec<u64>,
    period_ns: u64,
    pub bytes_per_opportunity: u64,
    looped: bool,
    cycle: u64,
    idx: usize,
    exhausted: bool,
}

impl Opportunities {
    pub fn new(
        times_ns: Vec<u64>,
        period_ns: u64,
        bytes_per_opportunity: u64,
        looped: bool,
    ) -> Self {
        Opportunities {
            times_ns,
            period_ns,
            bytes_per_opportunity,
            looped,
            cycle: 0,
            idx: 0,
            exhausted: false,
        }
    }

    /// Time of the next unused opportunity.
    pub fn next_ns(&self) -> Option<u64> {
        if self.exhausted {
            None
        } else {
            Some(self.cycle * self.period_ns + self.times_ns[self.idx])
        }
    }

    /// Consume the next opportunity.
    pub fn advance(&mut self) {
        self.idx += 1;
        if self.idx == self.times_ns.len() {
            self.idx = 0;
            self.cycle += 1;
            if !self.looped {
                self.exhausted = true;
            }
        }
    }

    /// Waste every opportunity at or before `t_ns` (the queue was empty).
    pub fn skip_through(&mut self, t_ns: u64) {
        if self.next_ns().is_none_or(|n| n > t_ns) {
            return;
        }
        let cycle = t_ns / self.period_ns;
        let phase = t_ns % self.period_ns;
        if !self.looped && cycle > 0 {
            self.exhausted = true;
            return;
        }
        self.cycle = cycle;
        self.idx = self.times_ns.partition_point(|&x| x <= phase);
        if self.idx == self.times_ns.len() {
            self.idx = 0;
            self.cycle += 1;
            if !self.looped {
                self.exhausted = true;
            }
        }
    }
}

/// A token bucket in exact integer arithmetic. Tokens are counted in bit·ns/s (a frame of
/// `b` bytes costs `b · 8 · 10⁹`, and `dt` ns at `rate_bps` add `rate_bps · dt`), so refills
/// never round. The bucket starts full, as tc's police action does.
#[derive(Debug, Clone)]
pub struct TokenBucket {
    rate_bps: u128,
    cap: u128,
    tokens: u128,
    last_ns: u64,
}

impl TokenBucket {
    pub fn new(rate_bps: u64, burst_bytes: u64) -> Self {
        let cap = burst_bytes as u128 * 8 * NS_PER_S;
        TokenBucket {
            rate_bps: rate_bps as u128,
            cap,
            tokens: cap,
            last_ns: 0,
        }
    }

    fn refill(&mut self, now_ns: u64) {
        if now_ns > self.last_ns {
            let add = self.rate_bps * (now_ns - self.last_ns) as u128;
            self.tokens = (self.tokens + add).min(self.cap);
            self.last_ns = now_ns;
        }
    }

    /// Tokens available at `now_ns`, in bytes (rounded down).
    pub fn tokens_bytes(&mut self, now_ns: u64) -> u64 {
        self.refill(now_ns);
        (self.tokens / (8 * NS_PER_S)) as u64
    }

    /// Does a frame of `bytes` conform at `now_ns`? If so its tokens are taken; if not the
    /// bucket is left as it is (a dropped frame costs nothing).
    pub fn conform(&mut self, now_ns: u64, bytes: u64) -> bool {
        self.refill(now_ns);
        let cost = bytes as u128 * 8 * NS_PER_S;
        if cost <= self.tokens {
            self.tokens -= cost;
            true
        } else {
            false
        }
    }
}
