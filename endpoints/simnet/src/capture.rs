//! Packet capture on the sim's nodes, the I/O half: one pcap file per node, holding what
//! tcpdump on that endpoint's interface on the emulated link holds on the real site: every
//! frame the node sends (when it sends it, before the link: drops by the link included) and
//! every frame that reaches it (when the link delivers it, before its socket: frames its
//! receive buffer then drops included). Times are the run's virtual clock as Unix time, so
//! they match the endpoints' logs. The records come from [`crate::pcap`]; a failed write is
//! reported at the end and ends that file, not the run.

use crate::pcap;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};

/// What to capture: a pcap file per node address, `snaplen_bytes` kept per frame, and the
/// Unix time of the run's origin (virtual time 0).
#[derive(Debug, Clone)]
pub struct CaptureSpec {
    pub files: Vec<(IpAddr, PathBuf)>,
    pub snaplen_bytes: u32,
    pub epoch_unix_ns: u64,
}

struct NodeFile {
    path: PathBuf,
    out: Option<BufWriter<File>>,
}

pub(crate) struct Capture {
    nodes: BTreeMap<Ipv4Addr, NodeFile>,
    snaplen: u32,
    epoch_unix_ns: u64,
    frame: Vec<u8>,
    record: Vec<u8>,
    errors: Vec<String>,
}

impl Capture {
    /// Opens every file and writes its header. Only IPv4 nodes: the frames are IPv4.
    pub fn create(spec: &CaptureSpec) -> io::Result<Self> {
        let mut nodes = BTreeMap::new();
        for (ip, path) in &spec.files {
            let IpAddr::V4(v4) = ip else {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("capture: {ip} is not IPv4; the pcap frames are IPv4"),
                ));
            };
            let mut out = BufWriter::with_capacity(1 << 20, open(path)?);
            out.write_all(&pcap::file_header(spec.snaplen_bytes))?;
            let node = NodeFile {
                path: path.clone(),
                out: Some(out),
            };
            nodes.insert(*v4, node);
        }
        Ok(Capture {
            nodes,
            snaplen: spec.snaplen_bytes,
            epoch_unix_ns: spec.epoch_unix_ns,
            frame: Vec::new(),
            record: Vec::new(),
            errors: Vec::new(),
        })
    }

    /// The datagram `data` from `from` to `to` with ECN bits `ecn`, seen on the interface of
    /// `at` (the sender's or the receiver's node) at `ns` since the origin.
    pub fn frame(
        &mut self,
        at: IpAddr,
        ns: u64,
        from: SocketAddr,
        to: SocketAddr,
        ecn: u8,
        data: &[u8],
    ) {
        let IpAddr::V4(at) = at else { return };
        let Some(node) = self.nodes.get_mut(&at) else {
            return;
        };
        let (Some(out), SocketAddr::V4(from), SocketAddr::V4(to)) = (node.out.as_mut(), from, to)
        else {
            return;
        };
        self.frame.clear();
        self.record.clear();
        pcap::frame(from, to, ecn, data, &mut self.frame);
        pcap::record(
            self.epoch_unix_ns + ns,
            &self.frame,
            self.snaplen,
            &mut self.record,
        );
        if let Err(e) = out.write_all(&self.record) {
            self.errors.push(format!(
                "writing the capture {}: {e}; no more frames written",
                node.path.display()
            ));
            node.out = None;
        }
    }

    /// Flushes every file; what went wrong while capturing.
    pub fn finish(&mut self) -> Vec<String> {
        for node in self.nodes.values_mut() {
            if let Some(mut out) = node.out.take() {
                if let Err(e) = out.flush() {
                    self.errors
                        .push(format!("writing the capture {}: {e}", node.path.display()));
                }
            }
        }
        std::mem::take(&mut self.errors)
    }
}

fn open(path: &Path) -> io::Result<File> {
    File::create(path).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))
}

/// The two ECN bits quinn asked for (None: not-ECT).
pub(crate) fn ecn_bits(ecn: Option<quinn::udp::EcnCodepoint>) -> u8 {
    ecn.map_or(0, |c| c as u8)
}
