//! Starts the real server on port 0, and a TCP proxy that can cut every
//! connection through it.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use spades_server::Config;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{AbortHandle, JoinHandle};
use tokio_util::sync::CancellationToken;

/// How long any single wait may take before a test fails.
pub const WAIT: Duration = Duration::from_secs(20);

pub struct TestServer {
    pub addr: SocketAddr,
    shutdown: CancellationToken,
    task: JoinHandle<anyhow::Result<()>>,
}

/// Rule bots that act at once, the log in memory, limits out of the way.
pub fn test_config() -> Config {
    let mut config = Config::default();
    config.tables.bot_delay_ms = 0;
    config.tables.bot = spades_bots::Strength::Rule;
    config.storage.in_memory = true;
    config.limits.messages_per_10s = 1_000_000;
    config.limits.tables_per_minute_per_ip = 1_000_000;
    config.limits.connections_per_minute_per_ip = 1_000_000;
    // Every test client comes from one address: per-address caps out of the way.
    config.limits.connections_per_ip = 0;
    config.limits.requests_per_minute_per_ip = 0;
    config.limits.accounts_per_hour_per_ip = 0;
    config.log.filter = "warn".into();
    config
}

pub async fn spawn_server(config: Config) -> TestServer {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    let task = tokio::spawn(spades_server::serve(listener, config, shutdown.clone()));
    TestServer { addr, shutdown, task }
}

impl TestServer {
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub async fn stop(self) {
        self.shutdown.cancel();
        let _ = tokio::time::timeout(WAIT, self.task).await;
    }
}

/// A TCP proxy in front of the server whose connections can all be cut at
/// once, as a network failure would.
pub struct Proxy {
    pub addr: SocketAddr,
    pipes: Arc<Mutex<Vec<AbortHandle>>>,
    accept: JoinHandle<()>,
}

impl Proxy {
    pub async fn start(target: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let pipes: Arc<Mutex<Vec<AbortHandle>>> = Arc::default();
        let registry = Arc::clone(&pipes);
        let accept = tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let pipe = tokio::spawn(async move {
                    let Ok(mut outbound) = TcpStream::connect(target).await else { return };
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                });
                registry.lock().unwrap().push(pipe.abort_handle());
            }
        });
        Proxy { addr, pipes, accept }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Cuts every connection open through the proxy (no close frames).
    pub fn cut_all(&self) -> usize {
        let pipes = std::mem::take(&mut *self.pipes.lock().unwrap());
        for p in &pipes {
            p.abort();
        }
        pipes.len()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accept.abort();
        self.cut_all();
    }
}

/// Waits up to [`WAIT`] for `fut`, failing the test with `what`.
pub async fn within<T>(what: &str, fut: impl Future<Output = T>) -> T {
    tokio::time::timeout(WAIT, fut).await.unwrap_or_else(|_| panic!("timed out: {what}"))
}
