//! The receiver's view of one block's stream: which bytes arrived (QUIC stream data read
//! out of order), which redundancy groups can rebuild the missing ones, and the rebuild.
//!
//! A block is complete when every byte arrived, or every missing byte lies in a group that
//! has at least `m` of its `m + n` symbols (received source symbols + parity): any `m`
//! recover the group (Reed-Solomon), so the retransmission need not be waited for.

use crate::fec;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupInfo {
    /// Stream offsets [start, end) the group covers; symbol i is [start + i·s, …+s) ∩ end.
    pub start: u64,
    pub end: u64,
    pub symbol_bytes: usize,
    pub m: usize,
    pub n: usize,
}

impl GroupInfo {
    fn range(&self, i: usize) -> (usize, usize) {
        let a = self.start as usize + i * self.symbol_bytes;
        (a, (a + self.symbol_bytes).min(self.end as usize))
    }
}

#[derive(Debug, Clone)]
struct Group {
    info: GroupInfo,
    parity: Vec<Option<Vec<u8>>>,
}

#[derive(Debug, Clone)]
pub struct Assembly {
    data: Vec<u8>,
    have: Vec<bool>,
    missing: usize,
    groups: Vec<Group>,
}

impl Assembly {
    /// A block whose stream carries `total_bytes`.
    pub fn new(total_bytes: usize) -> Self {
        Assembly {
            data: vec![0; total_bytes],
            have: vec![false; total_bytes],
            missing: total_bytes,
            groups: Vec::new(),
        }
    }

    pub fn total(&self) -> usize {
        self.data.len()
    }

    /// Stream bytes at `offset` (anything beyond the block is ignored).
    pub fn add_data(&mut self, offset: u64, bytes: &[u8]) {
        let a = (offset as usize).min(self.data.len());
        let b = (offset as usize + bytes.len()).min(self.data.len());
        for i in a..b {
            if !self.have[i] {
                self.have[i] = true;
                self.data[i] = bytes[i - offset as usize];
                self.missing -= 1;
            }
        }
    }

    /// Parity symbol `index` (0-based among the n) of the group `info`. Err if it does not
    /// fit the block or contradicts an earlier symbol's group.
    pub fn add_parity(
        &mut self,
        info: GroupInfo,
        index: usize,
        bytes: Vec<u8>,
    ) -> Result<(), String> {
        if info.end as usize > self.data.len()
            || info.start >= info.end
            || info.m == 0
            || info.n == 0
        {
            return Err(format!(
                "group {info:?} does not fit a block of {} bytes",
                self.data.len()
            ));
        }
        if index >= info.n || bytes.len() != info.symbol_bytes {
            return Err(format!(
                "parity {index} of {} bytes for group {info:?}",
                bytes.len()
            ));
        }
        let expect_m = (info.end - info.start).div_ceil(info.symbol_bytes as u64) as usize;
        if expect_m != info.m {
            return Err(format!("group {info:?}: m should be {expect_m}"));
        }
        let overlaps = self.groups.iter().any(|g| {
            g.info.start != info.start && g.info.start < info.end && info.start < g.info.end
        });
        if overlaps {
            return Err(format!("group {info:?} overlaps another"));
        }
        let g = match self.groups.iter_mut().find(|g| g.info.start == info.start) {
            Some(g) if g.info != info => {
                return Err(format!(
                    "group at {} seen as {:?} and {info:?}",
                    info.start, g.info
                ))
            }
            Some(g) => g,
            None => {
                self.groups.push(Group {
                    parity: vec![None; info.n],
                    info,
                });
                self.groups.last_mut().expect("pushed")
            }
        };
        g.parity[index] = Some(bytes);
        Ok(())
    }

    fn symbol_present(&self, g: &GroupInfo, i: usize) -> bool {
        let (a, b) = g.range(i);
        self.have[a..b].iter().all(|h| *h)
    }

    fn recoverable(&self, g: &Group) -> bool {
        let src = (0..g.info.m)
            .filter(|&i| self.symbol_present(&g.info, i))
            .count();
        src + g.parity.iter().filter(|p| p.is_some()).count() >= g.info.m
    }

    /// Bytes present (arrived or rebuilt).
    pub fn present(&self) -> usize {
        self.data.len() - self.missing
    }

    /// Every byte arrived.
    pub fn received_all(&self) -> bool {
        self.missing == 0
    }

    /// Every byte arrived or can be rebuilt.
    pub fn complete(&self) -> bool {
        if self.missing == 0 {
            return true;
        }
        // Groups are disjoint (add_parity refuses overlaps): count the missing bytes that
        // recoverable groups cover.
        let covered: usize = self
            .groups
            .iter()
            .filter(|g| self.recoverable(g))
            .map(|g| {
                self.have[g.info.start as usize..g.info.end as usize]
                    .iter()
                    .filter(|h| !**h)
                    .count()
            })
            .sum();
        covered == self.missing
    }

    /// Rebuilds every missing byte that a group can; returns how many bytes were rebuilt.
    pub fn recover(&mut self) -> Result<usize, String> {
        let mut rebuilt = 0;
        for gi in 0..self.groups.len() {
            let g = &self.groups[gi];
            let info = g.info.clone();
            let lacking: Vec<usize> = (0..info.m)
                .filter(|&i| !self.symbol_present(&info, i))
                .collect();
            if lacking.is_empty() || !self.recoverable(g) {
                continue;
            }
            let mut symbols: Vec<Option<Vec<u8>>> = (0..info.m)
                .map(|i| {
                    if !self.symbol_present(&info, i) {
                        return None;
                    }
                    let (a, b) = info.range(i);
                    let mut v = self.data[a..b].to_vec();
                    v.resize(info.symbol_bytes, 0);
                    Some(v)
                })
                .collect();
            symbols.extend(g.parity.iter().cloned());
            let sources = fec::recover(info.m, info.n, symbols)?;
            for i in lacking {
                let (a, b) = info.range(i);
                for (k, byte) in (a..b).zip(&sources[i]) {
                    if !self.have[k] {
                        self.have[k] = true;
                        self.data[k] = *byte;
                        self.missing -= 1;
                        rebuilt += 1;
                    }
                }
            }
        }
        Ok(rebuilt)
    }

    pub fn data(&self) -> &[u8] {
        &self.data
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn content(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 7 % 251) as u8).collect()
    }

    #[test]
    fn complete_once_every_byte_arrived_in_any_order() {
        let c = content(1000);
        let mut a = Assembly::new(1000);
        a.add_data(500, &c[500..]);
        assert!(!a.complete());
        a.add_data(0, &c[..600]); // overlaps
        assert!(a.complete() && a.received_all());
        assert_eq!(a.data(), &c[..]);
    }

    #[test]
    fn a_group_rebuilds_lost_packets() {
        let c = content(1000);
        // the tail [400, 1000) in 3 symbols of 250 (the last 100 bytes), 2 parity
        let info = GroupInfo {
            start: 400,
            end: 1000,
            symbol_bytes: 250,
            m: 3,
            n: 2,
        };
        let srcs: Vec<&[u8]> = vec![&c[400..650], &c[650..900], &c[900..1000]];
        let parity = fec::encode(&srcs, 2, 250).unwrap();
        let mut a = Assembly::new(1000);
        a.add_data(0, &c[..400]);
        a.add_data(650, &c[650..900]); // symbols 0 and 2 lost
        a.add_parity(info.clone(), 0, parity[0].clone()).unwrap();
        assert!(!a.complete(), "one of two missing symbols covered");
        a.add_parity(info.clone(), 1, parity[1].clone()).unwrap();
        assert!(a.complete() && !a.received_all());
        assert_eq!(a.recover().unwrap(), 350);
        assert!(a.received_all());
        assert_eq!(a.data(), &c[..]);
        // a gap outside every group is not covered
        let mut b = Assembly::new(1000);
        b.add_data(100, &c[100..]);
        b.add_parity(info, 0, parity[0].clone()).unwrap();
        assert!(!b.complete());
    }

    #[test]
    fn parity_that_does_not_fit_is_refused() {
        let mut a = Assembly::new(100);
        let g = GroupInfo {
            start: 0,
            end: 200,
            symbol_bytes: 50,
            m: 4,
            n: 1,
        };
        assert!(a.add_parity(g, 0, vec![0; 50]).is_err());
        let g = GroupInfo {
            start: 0,
            end: 100,
            symbol_bytes: 50,
            m: 3,
            n: 1,
        };
        assert!(a.add_parity(g, 0, vec![0; 50]).is_err());
        let g = GroupInfo {
            start: 0,
            end: 100,
            symbol_bytes: 50,
            m: 2,
            n: 1,
        };
        assert!(a.add_parity(g.clone(), 1, vec![0; 50]).is_err());
        assert!(a.add_parity(g.clone(), 0, vec![0; 49]).is_err());
        a.add_parity(g, 0, vec![0; 50]).unwrap();
        let overlapping = GroupInfo {
            start: 50,
            end: 100,
            symbol_bytes: 50,
            m: 1,
            n: 1,
        };
        assert!(a.add_parity(overlapping, 0, vec![0; 50]).is_err());
        let other = GroupInfo {
            start: 0,
            end: 100,
            symbol_bytes: 50,
            m: 2,
            n: 2,
        };
        assert!(a.add_parity(other, 0, vec![0; 50]).is_err());
    }
}
