//! The player buffer with freeze detection ([QPR §IV-B]): the buffer holds
//! `capacity` downloaded segments that are not playing yet (the paper: 1 s = one segment);
//! the next segment is requested as soon as there is room; playback of segment k starts
//! when it has arrived and segment k-1 has played out. Should the buffer be empty when a
//! segment ends, playout stalls: a freeze, until the next segment arrives. The wait for the
//! first segment is the start-up delay, not a freeze. A stall still going on at the end of
//! the session counts as a freeze up to the end (a stream that stops must not look good).

/// A freeze: when it began and how long it lasted (s).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Freeze {
    pub start_s: f64,
    pub duration_s: f64,
    /// the segment whose arrival ended it (None: still frozen at the end)
    pub ended_by: Option<u64>,
}

#[derive(Debug, Clone)]
pub struct Playout {
    segment_s: f64,
    capacity: usize,
    /// playback start time of every segment that arrived, in order
    starts: Vec<f64>,
    pub freezes: Vec<Freeze>,
}

impl Playout {
    pub fn new(segment_s: f64, capacity: usize) -> Self {
        assert!(segment_s > 0.0 && capacity >= 1);
        Playout {
            segment_s,
            capacity,
            starts: Vec::new(),
            freezes: Vec::new(),
        }
    }

    pub fn arrived(&self) -> u64 {
        self.starts.len() as u64
    }

    /// When the next segment may be requested: now if the buffer has room after the last
    /// arrival, else when segment (next - capacity) starts playing.
    pub fn next_request_s(&self, last_arrival_s: f64) -> f64 {
        let n = self.starts.len();
        if n < self.capacity {
            return last_arrival_s;
        }
        last_arrival_s.max(self.starts[n - self.capacity])
    }

    /// Segment number `arrived()` arrived at `t_s`; returns its playback start.
    pub fn on_arrival(&mut self, t_s: f64) -> f64 {
        let start = match self.starts.last() {
            None => t_s,
            Some(&prev) => {
                let end = prev + self.segment_s;
                if t_s > end {
                    self.freezes.push(Freeze {
                        start_s: end,
                        duration_s: t_s - end,
                        ended_by: Some(self.arrived()),
                    });
                }
                t_s.max(end)
            }
        };
        self.starts.push(start);
        start
    }

    /// Closes the session at `t_end_s`: a stall going on then is a freeze up to `t_end_s`.
    /// Returns (freezes, total freeze duration s, seconds of media played by `t_end_s`).
    pub fn finish(&mut self, t_end_s: f64) -> (usize, f64, f64) {
        if let Some(&last) = self.starts.last() {
            let end = last + self.segment_s;
            if t_end_s > end {
                self.freezes.push(Freeze {
                    start_s: end,
                    duration_s: t_end_s - end,
                    ended_by: None,
                });
            }
        }
        let played: f64 = self
            .starts
            .iter()
            .map(|&s| (t_end_s - s).clamp(0.0, self.segment_s))
            .sum();
        let total = self.freezes.iter().map(|f| f.duration_s).sum();
        (self.freezes.len(), total, played)
    }

    pub fn starts(&self) -> &[f64] {
        &self.starts
    }
}

/// Freezes of a whole session from its segment arrival times (for analysis and tests).
pub fn freezes_of(arrivals_s: &[f64], segment_s: f64, end_s: f64) -> (usize, f64) {
    let mut p = Playout::new(segment_s, 1);
    for &a in arrivals_s {
        p.on_arrival(a);
    }
    let (n, total, _) = p.finish(end_s);
    (n, total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hand_made_buffer_trace_gives_its_freezes() {
        // arrival → playback start: 0.5 start-up; 1.2 buffered until 1.5; 2.5 just in time;
        // 4.0 after segment 2 ended at 3.5; 4.1 buffered until 5.0; 7.0 after segment 4
        // ended at 6.0
        let mut p = Playout::new(1.0, 1);
        assert_eq!(p.on_arrival(0.5), 0.5);
        assert_eq!(p.on_arrival(1.2), 1.5);
        assert_eq!(p.on_arrival(2.5), 2.5);
        assert_eq!(p.on_arrival(4.0), 4.0); // segment 2 ended 3.5: froze 0.5 s
        assert_eq!(p.on_arrival(4.1), 5.0);
        assert_eq!(p.on_arrival(7.0), 7.0); // segment 4 ended 6.0: froze 1.0 s
        let (n, total, played) = p.finish(8.0); // segment 5 ends exactly at 8.0
        assert_eq!(n, 2);
        assert!((total - 1.5).abs() < 1e-12);
        assert!((played - 6.0).abs() < 1e-12);
        assert_eq!(p.freezes[0].ended_by, Some(3));
        assert_eq!(p.freezes[1].start_s, 6.0);
    }

    #[test]
    fn a_stall_at_the_end_counts_and_a_run_that_stops_is_not_flattered() {
        // two segments then nothing: frozen from 2.0 to the end at 10.0
        assert_eq!(freezes_of(&[0.0, 0.5], 1.0, 10.0), (1, 8.0));
        // no segment at all: no playback, no freeze (start-up never ended); the player
        // reports segments played beside it
        let mut p = Playout::new(1.0, 1);
        assert_eq!(p.finish(10.0), (0, 0.0, 0.0));
        // on-time arrivals: no freeze
        assert_eq!(freezes_of(&[0.3, 1.0, 2.2, 3.3], 1.0, 4.3), (0, 0.0));
    }

    #[test]
    fn the_next_request_waits_for_room_in_the_buffer() {
        let mut p = Playout::new(1.0, 1);
        assert_eq!(p.next_request_s(0.0), 0.0);
        p.on_arrival(0.5); // plays 0.5-1.5, buffer empty
        assert_eq!(p.next_request_s(0.5), 0.5);
        p.on_arrival(0.9); // buffered until 1.5
        assert_eq!(p.next_request_s(0.9), 1.5);
        let mut two = Playout::new(1.0, 2);
        two.on_arrival(0.1);
        two.on_arrival(0.2);
        assert_eq!(two.next_request_s(0.2), 0.2); // two slots: one still free
        two.on_arrival(0.3);
        assert_eq!(two.next_request_s(0.3), 1.1);
    }
}
