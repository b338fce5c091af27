//! Enqueue + dequeue cost per datagram, with the three RISE channels and with one FIFO.
//!
//! `cargo bench -p priochan --bench scheduler`

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use priochan::{ChannelId, Datagram, Scheduler};

/// A datagram that is only a size, so the figure is the scheduler's cost, not the allocator's.
struct Dg(usize);

impl Datagram for Dg {
    fn size(&self) -> usize {
        self.0
    }
}

const BATCH: usize = 1000;
const MTU: usize = 1200;

/// A mix like RISE's: per 10 datagrams, 1 tracking, 6 video, 3 acks.
fn mix(channels: &[ChannelId]) -> Vec<(ChannelId, usize)> {
    (0..BATCH)
        .map(|i| match (i % 10, channels.len()) {
            (_, 1) => (channels[0], if i % 10 < 6 { MTU } else { 40 }),
            (0, _) => (channels[0], 40),
            (1..=6, _) => (channels[1], MTU),
            _ => (channels[2], 30),
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("enqueue_dequeue");
    g.throughput(Throughput::Elements(BATCH as u64));
    for (name, prios) in [("3_channels", vec![2u8, 1, 0]), ("1_channel", vec![0u8])] {
        let mut s: Scheduler<Dg> = Scheduler::new(1 << 20);
        let ids: Vec<ChannelId> = prios.iter().map(|&p| s.add_channel(p)).collect();
        let work = mix(&ids);
        g.bench_function(name, |b| {
            b.iter(|| {
                // Interleave: enqueue four, drain, so queues stay short but busy.
                let mut out = 0usize;
                for (i, &(ch, n)) in work.iter().enumerate() {
                    black_box(s.enqueue(ch, Dg(black_box(n))));
                    if i % 4 == 3 {
                        while let Some((_, d)) = s.dequeue(1500) {
                            out += d.0;
                        }
                    }
                }
                while let Some((_, d)) = s.dequeue(1500) {
                    out += d.0;
                }
                black_box(out)
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
