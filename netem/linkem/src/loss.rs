//! Loss models, applied to each packet leaving the delay line. Semantics follow Linux netem
//! (net/sched/sch_netem.c): `loss_gilb_ell` and `loss_4state`.

use crate::config::LossConfig;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

#[derive(Debug, Clone)]
pub struct Loss {
    cfg: LossConfig,
    /// GE: false = good, true = bad. 4-state: 1..=4 as in netem's numbering.
    bad: bool,
    state4: u8,
}

impl Loss {
    pub fn new(cfg: LossConfig) -> Self {
        Loss {
            cfg,
            bad: false,
            state4: 1,
        }
    }

    /// Decide whether the next packet is lost.
    pub fn lose(&mut self, rng: &mut ChaCha8Rng) -> bool {
        match self.cfg {
            LossConfig::None => false,
            LossConfig::Iid { p } => p > 0.0 && rng.gen::<f64>() < p,
            LossConfig::GilbertElliott { p, r, h, k } => {
                // As netem: the packet's fate uses the state it found; the transition (first
                // draw) only affects the next packet. Loss prob is 1-k in good, 1-h in bad.
                if !self.bad {
                    if rng.gen::<f64>() < p {
                        self.bad = true;
                    }
                    rng.gen::<f64>() < 1.0 - k
                } else {
                    if rng.gen::<f64>() < r {
                        self.bad = false;
                    }
                    rng.gen::<f64>() >= h
                }
            }
            LossConfig::FourState {
                p13,
                p31,
                p32,
                p23,
                p14,
            } => {
                // One draw per packet; the packet is lost iff the state it moves to is a loss
                // state (3: lost in burst, 4: isolated loss in gap).
                let u = rng.gen::<f64>();
                match self.state4 {
                    1 => {
                        if u < p14 {
                            self.state4 = 4;
                            true
                        } else if u < p14 + p13 {
                            self.state4 = 3;
                            true
                        } else {
                            false
                        }
                    }
                    2 => {
                        if u < p23 {
                            self.state4 = 3;
                            true
                        } else {
                            false
                        }
                    }
                    3 => {
                        if u < p32 {
                            self.state4 = 2;
                            false
                        } else if u < p32 + p31 {
                            self.state4 = 1;
                            false
                        } else {
                            true
                        }
                    }
                    _ => {
                        self.state4 = 1;
                        false
                    }
                }
            }
        }
    }
}
