//! pcap of the link's packets, the pure half: a datagram as the Ethernet frame the real path
//! carries (Ethernet II, IPv4 with DF and the sender's ECN codepoint, UDP, checksums filled
//! in), and a frame as a record of libpcap's classic file format with a nanosecond timestamp
//! (magic `a1b23c4d`, which tcpdump, Wireshark and tshark read). No I/O, no clock: the
//! caller gives the time and owns the bytes ([`crate::capture`] writes them to files).

use std::net::{Ipv4Addr, SocketAddrV4};

/// libpcap's magic number for nanosecond timestamps.
pub const MAGIC_NS: u32 = 0xa1b2_3c4d;
/// LINKTYPE_ETHERNET: frames start with an Ethernet II header.
pub const LINKTYPE_ETHERNET: u32 = 1;
/// Ethernet 14 + IPv4 20 + UDP 8: what a frame adds to its datagram
/// ([`crate::FRAME_OVERHEAD_BYTES`] counts the same bytes on the link).
pub const HEADER_BYTES: usize = 14 + 20 + 8;
/// The Linux default TTL (net.ipv4.ip_default_ttl).
const TTL: u8 = 64;
const ETHERTYPE_IPV4: u16 = 0x0800;
const PROTO_UDP: u8 = 17;
/// IPv4 flags and fragment offset: don't fragment (quinn sets it; `may_fragment` false).
const DF: u16 = 0x4000;

/// The 24-byte file header: version 2.4, no time zone, `snaplen`, Ethernet, written in this
/// machine's byte order (readers take the order from the magic number).
pub fn file_header(snaplen: u32) -> [u8; 24] {
    let mut h = [0u8; 24];
    h[0..4].copy_from_slice(&MAGIC_NS.to_ne_bytes());
    h[4..6].copy_from_slice(&2u16.to_ne_bytes());
    h[6..8].copy_from_slice(&4u16.to_ne_bytes());
    // thiszone and sigfigs: 0
    h[16..20].copy_from_slice(&snaplen.to_ne_bytes());
    h[20..24].copy_from_slice(&LINKTYPE_ETHERNET.to_ne_bytes());
    h
}

/// Appends one record to `out`: the time (`unix_ns`, split into s and ns), the bytes kept
/// (at most `snaplen`), the frame's whole length, and the kept bytes.
pub fn record(unix_ns: u64, frame: &[u8], snaplen: u32, out: &mut Vec<u8>) {
    let kept = frame.len().min(snaplen as usize);
    let s = u32::try_from(unix_ns / 1_000_000_000).unwrap_or(u32::MAX);
    let ns = (unix_ns % 1_000_000_000) as u32;
    for v in [s, ns, kept as u32, frame.len() as u32] {
        out.extend_from_slice(&v.to_ne_bytes());
    }
    out.extend_from_slice(&frame[..kept]);
}

/// A node's MAC address, made from its IPv4 address (locally administered, unicast):
/// 10.0.0.1 is 02:00:0a:00:00:01.
pub fn mac_of(ip: Ipv4Addr) -> [u8; 6] {
    let o = ip.octets();
    [0x02, 0x00, o[0], o[1], o[2], o[3]]
}

/// Appends to `out` the frame that carries `payload` from `src` to `dst` with the ECN
/// codepoint `ecn` (the two low bits of the IPv4 TOS byte: 0 not-ECT, 1 ECT(1), 2 ECT(0),
/// 3 CE). The IPv4 identification is 0, as Linux sends datagrams with DF set on an
/// unconnected socket.
pub fn frame(src: SocketAddrV4, dst: SocketAddrV4, ecn: u8, payload: &[u8], out: &mut Vec<u8>) {
    let udp_len = 8 + payload.len();
    let ip_len = 20 + udp_len;
    out.reserve(14 + ip_len);
    out.extend_from_slice(&mac_of(*dst.ip()));
    out.extend_from_slice(&mac_of(*src.ip()));
    out.extend_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
    let ip_start = out.len();
    out.extend_from_slice(&[0x45, ecn & 0b11]);
    out.extend_from_slice(&(ip_len as u16).to_be_bytes());
    out.extend_from_slice(&0u16.to_be_bytes()); // identification
    out.extend_from_slice(&DF.to_be_bytes());
    out.extend_from_slice(&[TTL, PROTO_UDP, 0, 0]); // checksum below
    out.extend_from_slice(&src.ip().octets());
    out.extend_from_slice(&dst.ip().octets());
    let ip_sum = checksum(0, &out[ip_start..ip_start + 20]);
    out[ip_start + 10..ip_start + 12].copy_from_slice(&ip_sum.to_be_bytes());
    let udp_start = out.len();
    out.extend_from_slice(&src.port().to_be_bytes());
    out.extend_from_slice(&dst.port().to_be_bytes());
    out.extend_from_slice(&(udp_len as u16).to_be_bytes());
    out.extend_from_slice(&[0, 0]); // checksum below
    out.extend_from_slice(payload);
    // the pseudo-header: source, destination, zero + protocol, UDP length
    let mut pseudo = [0u8; 12];
    pseudo[0..4].copy_from_slice(&src.ip().octets());
    pseudo[4..8].copy_from_slice(&dst.ip().octets());
    pseudo[9] = PROTO_UDP;
    pseudo[10..12].copy_from_slice(&(udp_len as u16).to_be_bytes());
    let partial = sum16(sum16(0, &pseudo), &out[udp_start..]);
    let udp_sum = match !fold(partial) {
        0 => 0xffff, // RFC 768: a computed 0 is sent as all ones (0 means "none")
        s => s,
    };
    out[udp_start + 6..udp_start + 8].copy_from_slice(&udp_sum.to_be_bytes());
}

/// The Internet checksum (RFC 1071) of `data`, starting from the partial sum `init`.
fn checksum(init: u32, data: &[u8]) -> u16 {
    !fold(sum16(init, data))
}

/// `data` added to `acc` as big-endian 16-bit words (an odd last byte padded with 0).
fn sum16(acc: u32, data: &[u8]) -> u32 {
    let mut chunks = data.chunks_exact(2);
    let mut acc = u64::from(acc);
    for c in &mut chunks {
        acc += u64::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = chunks.remainder() {
        acc += u64::from(u16::from_be_bytes([*last, 0]));
    }
    while acc > 0xffff_ffff {
        acc = (acc & 0xffff_ffff) + (acc >> 32);
    }
    acc as u32
}

/// The one's-complement sum folded into 16 bits.
fn fold(mut acc: u32) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(s: &str) -> SocketAddrV4 {
        s.parse().unwrap()
    }

    #[test]
    fn the_file_header_is_libpcaps_with_ns_timestamps() {
        let h = file_header(262_144);
        assert_eq!(u32::from_ne_bytes(h[0..4].try_into().unwrap()), 0xa1b2_3c4d);
        assert_eq!(u16::from_ne_bytes(h[4..6].try_into().unwrap()), 2);
        assert_eq!(u16::from_ne_bytes(h[6..8].try_into().unwrap()), 4);
        assert_eq!(&h[8..16], &[0; 8]);
        assert_eq!(u32::from_ne_bytes(h[16..20].try_into().unwrap()), 262_144);
        assert_eq!(u32::from_ne_bytes(h[20..24].try_into().unwrap()), 1);
    }

    #[test]
    fn a_record_holds_the_time_both_lengths_and_at_most_snaplen_bytes() {
        let frame: Vec<u8> = (0..100u8).collect();
        let mut out = Vec::new();
        record(1_767_225_600_123_456_789, &frame, 64, &mut out);
        let word = |i: usize| u32::from_ne_bytes(out[i * 4..i * 4 + 4].try_into().unwrap());
        assert_eq!((word(0), word(1)), (1_767_225_600, 123_456_789));
        assert_eq!((word(2), word(3)), (64, 100));
        assert_eq!(&out[16..], &frame[..64]);
        out.clear();
        record(5, &frame, 262_144, &mut out);
        assert_eq!(out.len(), 16 + 100);
        assert_eq!(&out[16..], &frame[..]);
    }

    /// A frame checked field by field: a UDP datagram "hi" from 10.0.0.1:32768 to
    /// 10.0.0.2:4433 with DF, TTL 64 and ECT(0) has IPv4 checksum 0x26cb and UDP checksum
    /// 0xf21c (computed apart from this code, RFC 1071 over the header and over the
    /// pseudo-header and datagram).
    #[test]
    fn a_frame_is_ethernet_ipv4_udp_with_correct_checksums() {
        let mut f = Vec::new();
        frame(
            addr("10.0.0.1:32768"),
            addr("10.0.0.2:4433"),
            2,
            b"hi",
            &mut f,
        );
        assert_eq!(f.len(), HEADER_BYTES + 2);
        assert_eq!(&f[0..6], &[0x02, 0, 10, 0, 0, 2]); // destination MAC first
        assert_eq!(&f[6..12], &[0x02, 0, 10, 0, 0, 1]);
        assert_eq!(&f[12..14], &[0x08, 0x00]);
        let ip = &f[14..34];
        assert_eq!(ip[0], 0x45);
        assert_eq!(ip[1], 0b10, "ECT(0) in the TOS byte's low bits");
        assert_eq!(u16::from_be_bytes([ip[2], ip[3]]), 30);
        assert_eq!(&ip[6..8], &[0x40, 0x00], "DF");
        assert_eq!((ip[8], ip[9]), (64, 17));
        assert_eq!(&ip[12..20], &[10, 0, 0, 1, 10, 0, 0, 2]);
        assert_eq!(u16::from_be_bytes([ip[10], ip[11]]), 0x26cb);
        assert_eq!(checksum(0, ip), 0, "a header with its checksum sums to 0");
        let udp = &f[34..];
        assert_eq!(u16::from_be_bytes([udp[0], udp[1]]), 32768);
        assert_eq!(u16::from_be_bytes([udp[2], udp[3]]), 4433);
        assert_eq!(u16::from_be_bytes([udp[4], udp[5]]), 10);
        assert_eq!(u16::from_be_bytes([udp[6], udp[7]]), 0xf21c);
        assert_eq!(&udp[8..], b"hi");
    }

    #[test]
    fn an_odd_length_payload_is_summed_with_a_zero_pad() {
        let mut f = Vec::new();
        frame(
            addr("10.0.1.1:5000"),
            addr("10.0.2.1:6000"),
            0,
            b"abc",
            &mut f,
        );
        let udp = &f[34..];
        let mut pseudo = vec![10, 0, 1, 1, 10, 0, 2, 1, 0, 17, 0, 11];
        pseudo.extend_from_slice(udp);
        pseudo.push(0);
        assert_eq!(checksum(0, &pseudo), 0, "the UDP checksum verifies");
        assert_eq!(f[15], 0, "not-ECT");
    }
}
