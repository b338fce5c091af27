//! Freeze detection as in libwebrtc's `video_quality_observer2.cc`: each inter-frame display
//! interval is added to a moving window of the last 30 intervals; once the window holds at
//! least 5 samples, the interval is a freeze if it is ≥ max(3 × avg, avg + 150 ms), avg being
//! the window mean (including the interval itself, as libwebrtc does).

use std::collections::VecDeque;

pub const WINDOW_FRAMES: usize = 30;
pub const MIN_SAMPLES: usize = 5;
pub const MIN_INCREASE_US: u64 = 150_000;

#[derive(Debug, Default)]
pub struct FreezeDetector {
    last_display_us: Option<u64>,
    window: VecDeque<u64>,
    sum_us: u64,
}

impl FreezeDetector {
    /// Record a displayed frame; returns the interval if it was a freeze.
    pub fn on_display(&mut self, now_us: u64) -> Option<u64> {
        let last = self.last_display_us.replace(now_us)?;
        let interval = now_us.saturating_sub(last);
        self.window.push_back(interval);
        self.sum_us += interval;
        if self.window.len() > WINDOW_FRAMES {
            self.sum_us -= self.window.pop_front().unwrap_or(0);
        }
        if self.window.len() < MIN_SAMPLES {
            return None;
        }
        let avg = self.sum_us / self.window.len() as u64;
        (interval >= (3 * avg).max(avg + MIN_INCREASE_US)).then_some(interval)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_playback_has_no_freeze_and_a_gap_is_one() {
        let mut f = FreezeDetector::default();
        let mut t = 0;
        for _ in 0..40 {
            t += 33_333;
            assert_eq!(f.on_display(t), None);
        }
        t += 300_000;
        assert_eq!(f.on_display(t), Some(300_000));
        t += 33_333;
        assert_eq!(f.on_display(t), None);
    }

    #[test]
    fn needs_five_samples() {
        let mut f = FreezeDetector::default();
        // 4 intervals only: no detection even for a long gap
        for t in [0, 10_000, 20_000, 30_000, 1_000_000] {
            assert_eq!(f.on_display(t), None);
        }
    }

    #[test]
    fn below_avg_plus_150ms_is_no_freeze() {
        let mut f = FreezeDetector::default();
        let mut t = 0;
        for _ in 0..31 {
            t += 10_000;
            f.on_display(t);
        }
        // 3 × avg is tiny, but avg + 150 ms is not reached by 120 ms
        t += 120_000;
        assert_eq!(f.on_display(t), None);
    }
}
