//! The link as a socket sees it, in virtual time: delay and serialisation exact to the ns,
//! tail drops, loss per seed, the receive buffer, and the stats file.

mod common;
use common::*;
use std::time::Duration;

/// How the receiver reads.
#[derive(Clone, Copy, PartialEq)]
enum Read {
    /// `n` datagrams, each as it arrives.
    AsTheyCome,
    /// After 5 s (so a bounded buffer fills up first), whatever is queued.
    AfterSettling,
}

/// Send `n` datagrams of `size` bytes at once (guest to host, or host to guest if
/// `reverse`); the (arrival ns, tag) of those read, and the final counters.
fn exchange(
    link: linkem::Config,
    n: u32,
    size: usize,
    rcvbuf: Option<u64>,
    reverse: bool,
    read: Read,
) -> (Vec<(u64, u32)>, simnet::LinkReport) {
    let rt = simnet::build().unwrap();
    rt.rt.block_on(async {
        let net = net(&rt, link, rcvbuf, None);
        let (src_ip, dst_ip) = if reverse {
            (HOST, GUEST)
        } else {
            (GUEST, HOST)
        };
        let a = bind(&net, src_ip, 5000);
        let b = bind(&net, dst_ip, 6000);
        for i in 0..n {
            let mut p = vec![0u8; size];
            p[..4].copy_from_slice(&i.to_be_bytes());
            send(&*a, addr(dst_ip, 6000), &p);
        }
        let mut got = Vec::new();
        let limit = match read {
            Read::AsTheyCome => Duration::from_secs(3600),
            Read::AfterSettling => {
                tokio::time::sleep(Duration::from_secs(5)).await;
                Duration::from_millis(1)
            }
        };
        while got.len() < n as usize {
            let Ok((t, from, p)) = tokio::time::timeout(limit, recv(&net, &*b)).await else {
                break;
            };
            assert_eq!(from, addr(src_ip, 5000));
            got.push((t, u32::from_be_bytes(p[..4].try_into().unwrap())));
        }
        (got, net.finish().unwrap())
    })
}

fn arrivals(
    link: linkem::Config,
    n: u32,
    size: usize,
    reverse: bool,
) -> (Vec<u64>, simnet::LinkReport) {
    let (got, rep) = exchange(link, n, size, None, reverse, Read::AsTheyCome);
    (got.iter().map(|g| g.0).collect(), rep)
}

fn burst(
    link: linkem::Config,
    n: u32,
    size: usize,
    rcvbuf: Option<u64>,
    reverse: bool,
) -> (Vec<(u64, u32)>, simnet::LinkReport) {
    exchange(link, n, size, rcvbuf, reverse, Read::AfterSettling)
}

#[test]
fn delivery_delay_is_link_delay_plus_serialisation_of_the_frame() {
    // 1000-byte payload = 1042-byte frame = 8336 bits: 833,600 ns at 10 Mbit/s.
    let l = link(
        1,
        &direction(10_000_000, 10_500, r#"{"kind": "none"}"#, 100_000),
    );
    let (t, _) = arrivals(l, 3, 1000, false);
    assert_eq!(t, vec![11_333_600, 12_167_200, 13_000_800]);
}

#[test]
fn the_same_link_carries_the_other_direction() {
    let l = link(
        1,
        &direction(10_000_000, 2_000, r#"{"kind": "none"}"#, 100_000),
    );
    let (t, rep) = arrivals(l, 2, 1000, true);
    assert_eq!(t, vec![2_833_600, 3_667_200]);
    assert!(
        rep.final_lines[1].contains(r#""arrivals": 2,"#),
        "{}",
        rep.final_lines[1]
    );
    assert!(
        rep.final_lines[0].contains(r#""arrivals": 0,"#),
        "{}",
        rep.final_lines[0]
    );
}

#[test]
fn a_full_queue_drops_the_tail() {
    // Queue of 5 frames of 1042 bytes; 20 sent at once: one in service + 5 queued pass.
    let (got, rep) = burst(
        link(
            1,
            &direction(10_000_000, 1_000, r#"{"kind": "none"}"#, 5 * 1042),
        ),
        20,
        1000,
        None,
        false,
    );
    assert_eq!(
        got.iter().map(|g| g.1).collect::<Vec<_>>(),
        vec![0, 1, 2, 3, 4, 5]
    );
    assert!(
        rep.final_lines[0].contains(r#""drops_queue": 14,"#),
        "{}",
        rep.final_lines[0]
    );
}

#[test]
fn the_ecn_codepoint_crosses_the_link_as_the_sender_set_it() {
    // The real path keeps the IP header's ECN bits: the kernel sends quinn's ECT(0), veth and
    // linkem forward the frame untouched (linkem never marks CE), and the receiving socket
    // reports them. quinn answers ECT(0) with ACK_ECN frames: ACK plus three counters.
    use quinn::udp::EcnCodepoint::{Ect0, Ect1};
    let rt = simnet::build().unwrap();
    let got = rt.rt.block_on(async {
        let l = link(
            1,
            &direction(10_000_000, 1_000, r#"{"kind": "none"}"#, 100_000),
        );
        let net = net(&rt, l, None, None);
        let a = bind(&net, GUEST, 5000);
        let b = bind(&net, HOST, 6000);
        send_ecn(&*a, addr(HOST, 6000), &[1], Some(Ect0));
        send_ecn(&*a, addr(HOST, 6000), &[2], None);
        send_ecn(&*b, addr(GUEST, 5000), &[3], Some(Ect1));
        vec![
            recv_ecn(&*b).await,
            recv_ecn(&*b).await,
            recv_ecn(&*a).await,
        ]
    });
    assert_eq!(
        got,
        vec![
            (vec![1], Some(Ect0)),
            (vec![2], None),
            (vec![3], Some(Ect1))
        ]
    );
}

fn loss_pattern(seed: u64) -> Vec<u32> {
    let l = link(
        seed,
        &direction(
            100_000_000,
            1_000,
            r#"{"kind": "iid", "p": 0.3}"#,
            10_000_000,
        ),
    );
    burst(l, 200, 100, None, false)
        .0
        .iter()
        .map(|g| g.1)
        .collect()
}

#[test]
fn loss_is_reproducible_per_seed_and_differs_across_seeds() {
    let a = loss_pattern(1);
    assert_eq!(a, loss_pattern(1));
    let b = loss_pattern(2);
    assert_ne!(a, b);
    for p in [&a, &b] {
        assert!(
            (110..170).contains(&p.len()),
            "{} of 200 arrived at p = 0.3",
            p.len()
        );
    }
}

#[test]
fn a_small_receive_buffer_drops_and_counts() {
    // 1200-byte payloads are charged 2304 bytes: a 10 * 2304 buffer admits 11 (the kernel
    // admits while the charge is at most the limit) and drops the rest, counted.
    let l = link(
        1,
        &direction(1_000_000_000, 1_000, r#"{"kind": "none"}"#, 10_000_000),
    );
    let (got, rep) = burst(l, 50, 1200, Some(10 * 2304), false);
    assert_eq!(got.len(), 50);
    let s = rep.sockets[&addr(HOST, 6000)];
    assert_eq!(s.recv.recv_buffer_drops, 0, "the host has no limit");
    let (got, rep) = burst(
        link(
            1,
            &direction(1_000_000_000, 1_000, r#"{"kind": "none"}"#, 10_000_000),
        ),
        50,
        1200,
        Some(10 * 2304),
        true,
    );
    assert_eq!(got.len(), 11);
    let s = rep.sockets[&addr(GUEST, 6000)];
    assert_eq!(s.recv.recv_buffer_drops, 39);
    assert_eq!(s.recv.datagrams_received, 11);
}

#[test]
fn the_packet_log_has_every_frame_in_linkems_format() {
    // As a_full_queue_drops_the_tail: 20 frames into a queue of 5, at 10 Mbit/s, 1 ms.
    let dir = std::env::temp_dir().join(format!("simnet-plog-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("linkem-packets.log");
    let rt = simnet::build().unwrap();
    rt.rt.block_on(async {
        let l = link(
            1,
            &direction(10_000_000, 1_000, r#"{"kind": "none"}"#, 5 * 1042),
        );
        let net = net_full(&rt, l, None, None, None, Some(path.clone()));
        let a = bind(&net, GUEST, 5000);
        let _b = bind(&net, HOST, 6000);
        for _ in 0..20 {
            send(&*a, addr(HOST, 6000), &[1u8; 1000]);
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        net.finish().unwrap();
    });
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 20, "{text}");
    let count = |fate: &str| lines.iter().filter(|l| l.contains(fate)).count();
    assert_eq!(
        (count(r#""fate":"sent""#), count(r#""fate":"drop_queue""#)),
        (6, 14)
    );
    // the first frame: in at 0, out after its serialisation (833.6 us) and the 1 ms delay
    let first = lines
        .iter()
        .find(|l| l.contains("sent"))
        .expect("a sent line");
    assert_eq!(
        *first,
        r#"{"dir":"a_to_b","t_in_us":0.000,"t_out_us":1833.600,"bytes":1042,"fate":"sent"}"#
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn stats_lines_are_linkems_per_interval_and_final() {
    let dir = std::env::temp_dir().join(format!("simnet-stats-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("linkem-stats.jsonl");
    let rt = simnet::build().unwrap();
    rt.rt.block_on(async {
        let net = net(
            &rt,
            link(
                1,
                &direction(10_000_000, 1_000, r#"{"kind": "none"}"#, 100_000),
            ),
            None,
            Some(path.clone()),
        );
        let a = bind(&net, GUEST, 5000);
        let _b = bind(&net, HOST, 6000);
        // 10 datagrams in the first second, 5 in the second, then silence until 3.5 s.
        for _ in 0..10 {
            send(&*a, addr(HOST, 6000), &[1u8; 500]);
        }
        tokio::time::sleep(Duration::from_millis(1500)).await;
        for _ in 0..5 {
            send(&*a, addr(HOST, 6000), &[1u8; 500]);
        }
        tokio::time::sleep(Duration::from_millis(2000)).await;
        net.finish().unwrap();
    });
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3 * 2 + 2, "{text}");
    assert!(
        lines[0].starts_with(
            r#"{"t_s": 1.0, "dir": "a_to_b", "arrivals": 10, "departures": 10, "bytes_out": 5420,"#
        ),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].starts_with(r#"{"t_s": 1.0, "dir": "b_to_a", "arrivals": 0,"#),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].starts_with(r#"{"t_s": 2.0, "dir": "a_to_b", "arrivals": 5,"#),
        "{}",
        lines[2]
    );
    assert!(
        lines[6].starts_with(r#"{"t_s": 3.5, "dir": "a_to_b", "arrivals": 15, "departures": 15,"#),
        "{}",
        lines[6]
    );
    assert!(
        lines[6].ends_with(r#""send_late_ms_mean": 0.0, "send_late_ms_max": 0.0, "final": true}"#),
        "{}",
        lines[6]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn other_tasks_timers_still_fire_on_their_ms_tick_while_packets_leave_between_ticks() {
    let rt = simnet::build().unwrap();
    let (ticks, arrivals) = rt.rt.block_on(async {
        // 1000-byte payloads at 10 Mbit/s leave every 833.6 us: between the ms ticks.
        let l = link(
            1,
            &direction(10_000_000, 2_300, r#"{"kind": "none"}"#, 1_000_000),
        );
        let net = net(&rt, l, None, None);
        let timer_net = net.clone();
        let timers = tokio::spawn(async move {
            let mut t = Vec::new();
            for _ in 0..20 {
                tokio::time::sleep(Duration::from_micros(700)).await;
                t.push(timer_net.now_ns());
            }
            t
        });
        let a = bind(&net, GUEST, 5000);
        let b = bind(&net, HOST, 6000);
        for _ in 0..20 {
            send(&*a, addr(HOST, 6000), &[0u8; 1000]);
        }
        let mut arrivals = Vec::new();
        for _ in 0..20 {
            arrivals.push(recv(&net, &*b).await.0);
        }
        (timers.await.unwrap(), arrivals)
    });
    // A 700 us sleep ends on the next ms tick, as under real tokio: 1, 2, ... 20 ms.
    let want: Vec<u64> = (1..=20).map(|k| k * 1_000_000).collect();
    assert_eq!(ticks, want);
    // Packets still leave exactly: 2.3 ms + k * 833.6 us.
    for (k, t) in arrivals.iter().enumerate() {
        assert_eq!(*t, 2_300_000 + (k as u64 + 1) * 833_600, "packet {k}");
    }
}

/// Bursts of 300 datagrams (1200 bytes) every 50 ms from the host to a guest reading all the
/// time, over 1 Gbit/s; (datagrams read, receive-buffer drops).
fn bursts_to_a_stalled_reader(
    rcvbuf: Option<u64>,
    stall: Option<simnet::ReaderStall>,
) -> (u64, u64) {
    let rt = simnet::build().unwrap();
    rt.rt.block_on(async {
        let l = link(
            1,
            &direction(1_000_000_000, 1_000, r#"{"kind": "none"}"#, 10_000_000),
        );
        let net = net_with_stall(&rt, l, rcvbuf, stall, None);
        let host = bind(&net, HOST, 5000);
        let guest = bind(&net, GUEST, 6000);
        let reader_net = net.clone();
        let reader = tokio::spawn(async move {
            let mut n = 0u64;
            while tokio::time::timeout(Duration::from_secs(1), recv(&reader_net, &*guest))
                .await
                .is_ok()
            {
                n += 1;
            }
            n
        });
        for _ in 0..10 {
            for _ in 0..300 {
                send(&*host, addr(GUEST, 6000), &[0u8; 1200]);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let read = reader.await.unwrap();
        let rep = net.finish().unwrap();
        (read, rep.sockets[&addr(GUEST, 6000)].recv.recv_buffer_drops)
    })
}

#[test]
fn a_stalled_reader_overflows_the_default_buffer_and_not_a_large_one() {
    let stall = Some(simnet::ReaderStall {
        every_ns: 50_000_000,
        for_ns: 5_000_000,
    });
    // A reader that keeps up loses nothing even with the kernel default.
    assert_eq!(bursts_to_a_stalled_reader(Some(212_992), None), (3000, 0));
    // Stalled for 5 ms as each burst arrives: the default holds 93 of its 300.
    assert_eq!(
        bursts_to_a_stalled_reader(Some(212_992), stall),
        (930, 2070)
    );
    // 8 MiB (the endpoints' forced 4 MiB, doubled) holds every burst.
    assert_eq!(
        bursts_to_a_stalled_reader(Some(8_388_608), stall),
        (3000, 0)
    );
}

#[test]
fn the_kept_clock_reading_is_tokios_clock_wherever_a_task_looks() {
    // A stale reading can also stall the driver (it plans from the wrong time): a watchdog
    // in real time turns that into a failure.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(kept_clock_mismatches()));
    let mismatches = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the run stalled: the kept reading went stale");
    assert_eq!(mismatches, 0);
}

/// How often simnet's kept clock reading differed from tokio's clock.
fn kept_clock_mismatches() -> u32 {
    let rt = simnet::build().unwrap();
    rt.rt.block_on(async {
        // Packets leave between the ms ticks (the driver advances the clock there) while
        // another task's timers fire on the ticks (tokio moves the clock while parked).
        let l = link(
            1,
            &direction(10_000_000, 2_300, r#"{"kind": "none"}"#, 1_000_000),
        );
        let net = net(&rt, l, None, None);
        let same = || simnet::clock::now() == tokio::time::Instant::now();
        let timers = tokio::spawn(async move {
            let mut bad = 0;
            for k in 0..40u64 {
                tokio::time::sleep(Duration::from_micros(300 + 97 * k)).await;
                bad += u32::from(!same());
                tokio::task::yield_now().await;
                bad += u32::from(!same());
            }
            bad
        });
        let a = bind(&net, GUEST, 5000);
        let b = bind(&net, HOST, 6000);
        let mut bad = 0;
        for _ in 0..20 {
            send(&*a, addr(HOST, 6000), &[0u8; 1000]);
            bad += u32::from(!same());
        }
        for _ in 0..20 {
            recv(&net, &*b).await;
            bad += u32::from(!same());
        }
        bad + timers.await.unwrap()
    })
}
