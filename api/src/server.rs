//! Serving: the HTTP server of one process (taking the lead of a chain is the engine's,
//! [`openrail_engine::lead`]).

use openrail_store::now_ms;
use std::sync::Arc;

use alloy::signers::local::PrivateKeySigner;
use openrail_chain::deploy::ChainDeployment;
use openrail_engine::network::Network;
use openrail_store::{Mode, Store};

/// A server running in this process.
#[derive(Debug)]
pub struct Running {
    /// Where it serves (`http://127.0.0.1:PORT`, or the configured advertised URL).
    pub base_url: String,
    /// The serving task.
    pub task: tokio::task::JoinHandle<()>,
    /// The testnet network (its submitter is the engine's).
    pub testnet: Option<Arc<Network>>,
    /// The engine's task, when this server leads (abort it with the serving task).
    pub engine: Option<tokio::task::AbortHandle>,
    /// Starts a graceful stop of the HTTP server (see [`Stopper`]).
    pub stopper: Stopper,
}

/// Stops a server gracefully: `/readyz` turns 503 at once and new requests get 503 (see
/// [`crate::health::refuse_while_draining`]); then the listener stops accepting, idle
/// connections close, and the requests in flight get their answers; the serving task
/// ([`Running::task`]) ends when the last one is answered.
#[derive(Debug, Clone)]
pub struct Stopper {
    lifecycle: Arc<crate::health::Lifecycle>,
    stop: Arc<tokio::sync::Notify>,
}

impl Stopper {
    /// The process's lifecycle (whether it drains).
    pub fn lifecycle(&self) -> Arc<crate::health::Lifecycle> {
        self.lifecycle.clone()
    }

    /// Begins the stop: `/readyz` 503, new requests answered 503 (idempotent).
    pub fn drain(&self) {
        self.lifecycle.drain();
    }

    /// Closes the listener: no new connection; idle ones close; the serving task ends
    /// when the requests in flight are answered.
    pub fn close(&self) {
        self.lifecycle.drain();
        self.stop.notify_one();
    }

    /// [`Stopper::drain`], then [`Stopper::close`] once no request has started for
    /// `quiet` (so connections are not closed under requests still arriving), or after
    /// `bound` at the latest.
    pub async fn drain_then_close(&self, quiet: std::time::Duration, bound: std::time::Duration) {
        self.drain();
        let started = std::time::Instant::now();
        while self.lifecycle.quiet_for() < quiet && started.elapsed() < bound {
            tokio::time::sleep(quiet / 4).await;
        }
        self.close();
    }
}

/// Serves the API for testnet keys on the settlement chain of `deployment`, on
/// `127.0.0.1:port` (`0` picks a free port), with `operator` signing: one process, no
/// lease, no watcher and no simulated bank (the pull bench's server; bank legs do not
/// move). Mainnet keys get 503.
pub async fn serve_testnet(
    store: Store,
    deployment: &ChainDeployment,
    operator: PrivateKeySigner,
    port: u16,
    config: crate::ApiConfig,
) -> Result<Running, ServeError> {
    let endpoint = openrail_chain::rpc::Endpoint::of(deployment)?;
    let net = Arc::new(Network::on(deployment, &endpoint)?);
    let engine = openrail_engine::lead(
        &store,
        &net,
        &endpoint,
        Default::default(),
        operator,
        None,
        Mode::Testnet,
        std::time::Duration::from_millis(200),
    )
    .await?;
    let mut running = serve(store, Some(net), None, port, config).await?;
    running.engine = Some(engine);
    Ok(running)
}

/// Serves the API with a settlement network per mode; a mode without one answers 503
/// `mainnet_unavailable` (testnet is always configured in practice). A network whose
/// submitter is not started ([`lead`]) still serves every request: requests only queue
/// their work, which the holder of the chain's lease sends.
pub async fn serve(
    store: Store,
    testnet: Option<Arc<Network>>,
    mainnet: Option<Arc<Network>>,
    port: u16,
    config: crate::ApiConfig,
) -> Result<Running, ServeError> {
    let node_lease = openrail_store::lease::node_lease(&config.node_id);
    let (node_id, node_ttl) = (config.node_id.clone(), config.node_ttl);
    let heartbeat_store = store.clone();
    let (bind, advertise) = (config.bind, config.advertise_url.clone());
    let state = crate::AppState::new(store, testnet.clone(), mainnet, config);
    let stopper = Stopper {
        lifecycle: state.lifecycle.clone(),
        stop: Arc::new(tokio::sync::Notify::new()),
    };
    let stop = stopper.stop.clone();
    let listener = listen(std::net::SocketAddr::new(bind, port)).map_err(ServeError::Bind)?;
    let local = listener.local_addr().map_err(ServeError::Bind)?;
    // The URL this process is known by (its leases'): the configured URL, else the bound
    // address (loopback when bound to every interface).
    let base_url = advertise.unwrap_or_else(|| {
        let ip = if local.ip().is_unspecified() {
            std::net::IpAddr::from([127, 0, 0, 1])
        } else {
            local.ip()
        };
        format!("http://{}", std::net::SocketAddr::new(ip, local.port()))
    });
    let _ = state.public_url.set(base_url.clone());
    let app = crate::router(state);
    heartbeat_store
        .leases()
        .acquire(&node_lease, &node_id, &base_url, node_ttl, now_ms())
        .await
        .map_err(ServeError::Store)?;
    // One task serves and keeps this process's liveness lease: aborting it stops both.
    let url = base_url.clone();
    let task = tokio::spawn(async move {
        let heartbeat = async {
            loop {
                tokio::time::sleep(node_ttl / 3).await;
                if let Err(e) = heartbeat_store
                    .leases()
                    .acquire(&node_lease, &node_id, &url, node_ttl, now_ms())
                    .await
                {
                    tracing::warn!(error = %e, "renewing this process's liveness lease failed");
                }
            }
        };
        tokio::select! {
            served = axum::serve(
                listener,
                app.into_make_service_with_connect_info::<std::net::SocketAddr>(),
            )
            .with_graceful_shutdown(async move { stop.notified().await }) => {
                if let Err(e) = served {
                    tracing::error!(error = %e, "the API server stopped");
                }
            }
            () = heartbeat => {}
        }
    });
    Ok(Running {
        base_url,
        task,
        testnet,
        engine: None,
        stopper,
    })
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The chain could not be reached or is not deployed as expected.
    #[error(transparent)]
    Chain(#[from] openrail_chain::ChainError),
    /// The port could not be bound.
    #[error("binding the API port: {0}")]
    Bind(std::io::Error),
    /// The database failed.
    #[error(transparent)]
    Store(#[from] openrail_store::StoreError),
}

/// Connections the kernel holds for the server before it accepts them (capped by the
/// system's `net.core.somaxconn`).
const BACKLOG: u32 = 4096;

/// A listener on `addr` with a backlog of [`BACKLOG`]. Tokio's `TcpListener::bind` asks for
/// 1,024: when more clients than that connect at once (measured: 5,000 agents starting
/// together), the kernel drops the rest of their handshakes and each client waits a second
/// to try again (7,858 listen overflows in one `bench pulls` run).
pub fn listen(addr: std::net::SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let socket = match addr {
        std::net::SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
        std::net::SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
    };
    // As std's and tokio's `bind` do on Unix: a restarted server binds its port at once.
    #[cfg(unix)]
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(BACKLOG)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::{BACKLOG, listen};

    /// The kernel holds as many connections for the listener as it asked for (its backlog,
    /// what `ss` shows as a listening socket's Send-Q), capped by `net.core.somaxconn`:
    /// more than the 1,024 tokio's `bind` asks for, where the system allows it.
    #[tokio::test]
    async fn the_listener_asks_the_kernel_for_its_backlog() {
        let listener = listen("127.0.0.1:0".parse().unwrap()).unwrap();
        let port = listener.local_addr().unwrap().port();
        let out = std::process::Command::new("ss")
            .args(["-ltnH", &format!("sport = :{port}")])
            .output()
            .expect("ss (iproute2) shows listening sockets");
        let line = String::from_utf8_lossy(&out.stdout).to_string();
        let backlog: u32 = line
            .split_whitespace()
            .nth(2)
            .and_then(|q| q.parse().ok())
            .unwrap_or_else(|| panic!("no listening socket on port {port} in {line:?}"));
        let somaxconn: u32 = std::fs::read_to_string("/proc/sys/net/core/somaxconn")
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert_eq!(backlog, BACKLOG.min(somaxconn), "{line}");
        if somaxconn > 1024 {
            assert!(backlog > 1024, "{line}");
        }
    }
}
