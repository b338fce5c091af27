//! The HTTP/2-over-TCP baseline ([QPR §IV-B]: "we also added HTTP/2 support for both the
//! player and the server"): every object is a GET on one HTTP/2 connection over one TCP
//! connection, so a lost segment holds back every object behind it (HOL blocking).
//! assumption: cleartext HTTP/2 with prior knowledge (h2c); TLS adds no packets that matter
//! to the comparison. The kernel's TCP (its default congestion control and initial window:
//! the paper fixed only QUIC's) carries it. The server writes a marker file where the QUIC
//! server writes its certificate, so the harness starts the player the same way.

use quicsetup::{Clock, Console};
use std::future::Future;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::scene::Scene;
use crate::wire::Request;
use anyhow::{anyhow, bail, Context, Result};
use bytes::Bytes;
use tokio::net::{TcpListener, TcpStream};

use crate::cli::WINDOW_BYTES;

/// h2's largest window (2^31 − 1) is above WINDOW_BYTES: flow control never limits.
const H2_WINDOW: u32 = WINDOW_BYTES;
const CHUNK: usize = 64 << 10;

fn path_of(r: &Request) -> String {
    format!(
        "http://priolab/{}/{}/{}/{}",
        r.segment, r.object, r.quality, r.id
    )
}

/// (segment, object, quality) from a request path.
fn parse_path(p: &str) -> Option<Request> {
    let mut it = p.trim_start_matches('/').split('/');
    let segment = it.next()?.parse().ok()?;
    let object = it.next()?.parse().ok()?;
    let quality = it.next()?.parse().ok()?;
    let id = it.next()?.parse().ok()?;
    let r = Request {
        id,
        segment,
        object,
        quality,
    };
    Request::decode(&r.encode())
}

/// Retransmitted TCP segments of this network namespace so far (/proc/net/snmp).
pub fn tcp_retrans_segs() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/net/snmp").ok()?;
    let mut tcp = s.lines().filter(|l| l.starts_with("Tcp:"));
    let (head, vals) = (tcp.next()?, tcp.next()?);
    let i = head.split_whitespace().position(|k| k == "RetransSegs")?;
    vals.split_whitespace().nth(i)?.parse().ok()
}

pub struct Client {
    send: Option<h2::client::SendRequest<Bytes>>,
    closed: Arc<Mutex<Option<String>>>,
    clock: Clock,
}

impl Client {
    /// Waits for the server's marker file, then connects (both within `limit`).
    pub async fn connect(
        addr: SocketAddr,
        marker: &Path,
        limit: Duration,
        clock: Clock,
    ) -> Result<Option<Client>> {
        let deadline = clock.now() + limit;
        while !marker.exists() {
            if clock.now() >= deadline {
                return Ok(None);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let tcp = match tokio::time::timeout_at(deadline, TcpStream::connect(addr)).await {
            Err(_) | Ok(Err(_)) => return Ok(None),
            Ok(Ok(t)) => t,
        };
        tcp.set_nodelay(true)?;
        let (send, conn) = h2::client::Builder::new()
            .initial_window_size(H2_WINDOW)
            .initial_connection_window_size(H2_WINDOW)
            .handshake::<_, Bytes>(tcp)
            .await
            .context("HTTP/2 handshake")?;
        let closed = Arc::new(Mutex::new(None));
        let c = closed.clone();
        tokio::spawn(async move {
            let why = match conn.await {
                Ok(()) => "closed".to_string(),
                Err(e) => format!("{e}"),
            };
            *c.lock().expect("lock") = Some(why);
        });
        Ok(Some(Client {
            send: Some(send),
            closed,
            clock,
        }))
    }

    pub fn closed(&self) -> Option<String> {
        self.closed.lock().expect("lock").clone()
    }

    /// Drops the request handle and waits (up to 1 s) for the connection to close
    /// gracefully (GOAWAY), so the server sees a clean end.
    pub async fn close(&mut self) {
        self.send = None;
        let until = self.clock.now() + Duration::from_secs(1);
        while self.closed().is_none() && self.clock.now() < until {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// GET one object; resolves to its payload bytes.
    pub fn get(&self, r: Request) -> impl Future<Output = Result<u64>> + Send + 'static {
        let send = self.send.clone();
        async move {
            let send = send.ok_or_else(|| anyhow!("the HTTP/2 connection is closing"))?;
            let mut send = send.ready().await?;
            let req = http::Request::get(path_of(&r)).body(())?;
            let (resp, _) = send.send_request(req, true)?;
            let resp = resp.await?;
            if resp.status() != http::StatusCode::OK {
                bail!("request {}: status {}", r.id, resp.status());
            }
            let mut body = resp.into_body();
            let mut n = 0u64;
            while let Some(chunk) = body.data().await {
                let c = chunk?;
                n += c.len() as u64;
                body.flow_control().release_capacity(c.len())?;
            }
            Ok(n)
        }
    }
}

/// Serves one HTTP/2 connection until it ends: Some(None) if the player closed it cleanly,
/// Some(Some(error)) if it ended otherwise (TCP has no idle timeout: the player's exit code
/// says whether its session was whole), None if no player came.
pub async fn serve(
    bind: SocketAddr,
    marker: &Path,
    scene: Scene,
    limit: Duration,
    console: &Console,
) -> Result<Option<Option<String>>> {
    let listener = TcpListener::bind(bind)
        .await
        .with_context(|| format!("listening on {bind} (TCP)"))?;
    quicsetup::tls::write_cert_atomically(marker, b"h2c")?;
    console.err(format_args!(
        "qpr server: listening on {bind} (HTTP/2 over TCP)"
    ));
    let (tcp, peer) = match tokio::time::timeout(limit, listener.accept()).await {
        Err(_) => return Ok(None),
        Ok(r) => r?,
    };
    console.err(format_args!("qpr server: peer {peer} connected"));
    tcp.set_nodelay(true)?;
    let mut conn = h2::server::Builder::new()
        .initial_window_size(H2_WINDOW)
        .initial_connection_window_size(H2_WINDOW)
        .handshake::<_, Bytes>(tcp)
        .await
        .context("HTTP/2 handshake")?;
    let payload = Bytes::from(vec![0u8; CHUNK]);
    while let Some(next) = conn.accept().await {
        let (req, mut respond) = match next {
            Ok(x) => x,
            Err(e) => return Ok(Some(Some(format!("{e}")))),
        };
        let Some(r) = parse_path(req.uri().path()) else {
            let resp = http::Response::builder().status(404).body(())?;
            respond.send_response(resp, true)?;
            continue;
        };
        let size = scene.size_bytes(r.object as usize, r.quality as usize, r.segment);
        let p = payload.clone();
        tokio::spawn(async move {
            let resp = http::Response::builder()
                .status(200)
                .body(())
                .expect("response");
            let Ok(mut send) = respond.send_response(resp, false) else {
                return;
            };
            let mut left = size;
            while left > 0 {
                send.reserve_capacity(left.min(CHUNK as u64) as usize);
                let cap = match std::future::poll_fn(|cx| send.poll_capacity(cx)).await {
                    Some(Ok(c)) => c.min(left as usize),
                    _ => return, // the stream or the connection ended
                };
                left -= cap as u64;
                if send.send_data(p.slice(..cap), left == 0).is_err() {
                    return;
                }
            }
        });
    }
    Ok(Some(None))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_paths_round_trip() {
        let r = Request {
            id: 11,
            segment: 7,
            object: 3,
            quality: 4,
        };
        let p = path_of(&r);
        assert_eq!(parse_path(p.trim_start_matches("http://priolab")), Some(r));
        assert_eq!(parse_path("/7/4/0/1"), None); // object out of range
        assert_eq!(parse_path("/x"), None);
        assert!(tcp_retrans_segs().is_some());
    }
}
