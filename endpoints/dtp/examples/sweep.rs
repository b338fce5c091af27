//! The paper's static bandwidth sweep ([DTP Fig. 3]) on the `sim` model path, in
//! virtual time: the deadline-meeting ratio of every scheme at 1-10 MB/s (all blocks, and
//! priority 1). What a real run should approach when the bottleneck is the only limit.
//!
//!     cargo run --release -p dtp --example sweep

use dtp::ads::Policy;
use dtp::pattern::Pattern;
use dtp::sim::{self, on_time_ratio, Path};

fn main() {
    let pattern = Pattern {
        interval_us: 100_000,
        sizes_bytes: vec![200_000; 3],
        deadline_us: 200_000,
    };
    let schemes = [
        ("quic", Policy::RoundRobin),
        ("quic-fifo", Policy::Fifo),
        ("sctp", Policy::FcfsCancel),
        (
            "dtp-d",
            Policy::Ads {
                alpha: 0.0,
                beta: 3.0,
            },
        ),
        (
            "dtp-p",
            Policy::Ads {
                alpha: 1.0,
                beta: 3.0,
            },
        ),
        (
            "dtp",
            Policy::Ads {
                alpha: 0.5,
                beta: 3.0,
            },
        ),
    ];
    println!("MB/s  scheme     all    p1     (60 s, RTT 5 ms, 1200-byte chunks)");
    for rate in [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0] {
        let path = Path {
            rate_bytes_per_s: rate * 1e6,
            one_way_delay_us: 2500,
        };
        for (name, p) in schemes {
            let f = sim::run(p, &pattern, path, 60_000_000, 1200);
            println!(
                "{rate:>4}  {name:<9}  {:.3}  {:.3}",
                on_time_ratio(&f, None),
                on_time_ratio(&f, Some(1))
            );
        }
    }
}
