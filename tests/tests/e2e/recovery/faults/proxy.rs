//! An RPC proxy that injects the faults of a flaky provider, deterministically: of every
//! ten requests one gets 429 (not forwarded), one is forwarded and its answer replaced by
//! 502 (the request took effect, the caller does not know), one has its connection
//! closed without an answer (a reset), and one is held past the caller's time limit.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use alloy::transports::http::reqwest::Url;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// How many faults a proxy injected, by kind.
#[derive(Debug, Default, Clone, Copy)]
pub struct Faults {
    pub too_many_requests: u64,
    pub lost_answers: u64,
    pub resets: u64,
    pub timeouts: u64,
}

impl Faults {
    pub fn total(&self) -> u64 {
        self.too_many_requests + self.lost_answers + self.resets + self.timeouts
    }
}

#[derive(Default)]
struct Counts {
    requests: AtomicU64,
    too_many_requests: AtomicU64,
    lost_answers: AtomicU64,
    resets: AtomicU64,
    timeouts: AtomicU64,
}

/// A running proxy (stopped when dropped).
pub struct Faulty {
    addr: SocketAddr,
    counts: Arc<Counts>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Faulty {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Faulty {
    /// A proxy to `upstream` whose fault sequence starts `phase` requests in.
    pub async fn start(upstream: Url, phase: u64) -> anyhow::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let counts = Arc::new(Counts::default());
        counts.requests.store(phase, Ordering::Relaxed);
        let client = reqwest::Client::new();
        let task = {
            let counts = counts.clone();
            tokio::spawn(async move {
                while let Ok((conn, _)) = listener.accept().await {
                    tokio::spawn(serve(
                        conn,
                        upstream.clone(),
                        client.clone(),
                        counts.clone(),
                    ));
                }
            })
        };
        Ok(Self { addr, counts, task })
    }

    /// The proxy's URL.
    pub fn url(&self) -> Url {
        format!("http://{}/", self.addr).parse().expect("a URL")
    }

    /// What it injected so far.
    pub fn faults(&self) -> Faults {
        let c = &self.counts;
        Faults {
            too_many_requests: c.too_many_requests.load(Ordering::Relaxed),
            lost_answers: c.lost_answers.load(Ordering::Relaxed),
            resets: c.resets.load(Ordering::Relaxed),
            timeouts: c.timeouts.load(Ordering::Relaxed),
        }
    }
}

/// One keep-alive connection: request after request until a fault closes it.
async fn serve(mut conn: TcpStream, upstream: Url, client: reqwest::Client, counts: Arc<Counts>) {
    let mut buf = Vec::new();
    loop {
        let Some(body) = read_request(&mut conn, &mut buf).await else {
            return;
        };
        let n = counts.requests.fetch_add(1, Ordering::Relaxed);
        let answer = match n % 10 {
            1 => {
                counts.too_many_requests.fetch_add(1, Ordering::Relaxed);
                (429, b"{\"error\":\"slow down\"}".to_vec())
            }
            4 => {
                counts.resets.fetch_add(1, Ordering::Relaxed);
                return;
            }
            7 => {
                counts.timeouts.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_secs(3)).await;
                return;
            }
            k => {
                let forwarded = client
                    .post(upstream.clone())
                    .header("content-type", "application/json")
                    .body(body)
                    .send()
                    .await;
                let (status, bytes) = match forwarded {
                    Ok(r) => (
                        r.status().as_u16(),
                        r.bytes().await.unwrap_or_default().to_vec(),
                    ),
                    Err(_) => (502, Vec::new()),
                };
                if k == 9 {
                    counts.lost_answers.fetch_add(1, Ordering::Relaxed);
                    (502, b"bad gateway".to_vec())
                } else {
                    (status, bytes)
                }
            }
        };
        let head = format!(
            "HTTP/1.1 {} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            answer.0,
            answer.1.len()
        );
        if conn.write_all(head.as_bytes()).await.is_err()
            || conn.write_all(&answer.1).await.is_err()
        {
            return;
        }
    }
}

/// Reads one HTTP/1.1 request with a `content-length` body; `None` at the end of the
/// connection.
async fn read_request(conn: &mut TcpStream, buf: &mut Vec<u8>) -> Option<Vec<u8>> {
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = conn.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + length {
        let n = conn.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = buf[head_end..head_end + length].to_vec();
    buf.drain(..head_end + length);
    Some(body)
}
