//! The application's blocks ([DTP §VI-A]): every `interval_us` a round of blocks, one per
//! entry of `sizes_bytes`, priority 1 for the first, 2 for the second, …, all with the same
//! relative deadline, pushed in priority order ("the app sorts the sending order of blocks
//! based on their priorities"). Blocks are numbered 0, 1, … in push order.

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    pub interval_us: u64,
    pub sizes_bytes: Vec<u64>,
    pub deadline_us: u64,
}

/// One block the application releases `at_us` after the start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Release {
    pub id: u64,
    pub round: u64,
    pub at_us: u64,
    pub size_bytes: u64,
    pub priority: u32,
}

impl Pattern {
    pub fn pmax(&self) -> u32 {
        self.sizes_bytes.len().max(1) as u32
    }

    /// Every block released in [0, duration_us).
    pub fn releases(&self, duration_us: u64) -> Vec<Release> {
        let mut out = Vec::new();
        if self.interval_us == 0 {
            return out;
        }
        let mut round = 0u64;
        while round * self.interval_us < duration_us {
            for (i, &size) in self.sizes_bytes.iter().enumerate() {
                out.push(Release {
                    id: out.len() as u64,
                    round,
                    at_us: round * self.interval_us,
                    size_bytes: size,
                    priority: i as u32 + 1,
                });
            }
            round += 1;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_of_blocks_in_priority_order() {
        let p = Pattern {
            interval_us: 100_000,
            sizes_bytes: vec![200, 200, 100],
            deadline_us: 200_000,
        };
        let r = p.releases(250_000);
        assert_eq!(r.len(), 9);
        assert_eq!(
            r[4],
            Release {
                id: 4,
                round: 1,
                at_us: 100_000,
                size_bytes: 200,
                priority: 2
            }
        );
        assert_eq!(r[8].size_bytes, 100);
        assert_eq!(p.pmax(), 3);
        assert_eq!(p.releases(0), vec![]);
    }
}
