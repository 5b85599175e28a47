//! `spades-echo`: a minimal WebSocket echo server on tokio-tungstenite, the
//! raw ceiling the Spades server is compared with (`scripts/bench.sh`).
//!
//! Every connection gets one `hello` frame (so the load generator's
//! connection code works unchanged), then every text frame is sent back as
//! it came. Sockets are set up like the Spades server's: 4 KiB read buffer,
//! no write buffering, Nagle off.
//!
//! ```sh
//! spades-echo --bind 127.0.0.1:9001
//! spades-load run --mode echo --url ws://127.0.0.1:9001/ws --tables 200
//! ```

use std::net::SocketAddr;

use clap::Parser;
use futures_util::{SinkExt, StreamExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

/// A minimal WebSocket echo server.
#[derive(Debug, Parser)]
#[command(name = "spades-echo", version)]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:9001")]
    bind: SocketAddr,
}

const HELLO: &str = r#"{"type":"hello","protocol":1,"server":"spades-echo","server_time":0}"#;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let listener = TcpListener::bind(args.bind).await?;
    eprintln!("spades-echo listening on {}", listener.local_addr()?);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                tokio::spawn(echo(stream));
            }
            _ = tokio::signal::ctrl_c() => return Ok(()),
        }
    }
}

async fn echo(stream: TcpStream) {
    let _ = stream.set_nodelay(true);
    let config = WebSocketConfig::default()
        .read_buffer_size(4096)
        .write_buffer_size(0)
        .max_write_buffer_size(256 * 1024)
        .max_message_size(Some(64 * 1024))
        .max_frame_size(Some(64 * 1024));
    let Ok(mut ws) = tokio_tungstenite::accept_async_with_config(stream, Some(config)).await else { return };
    if ws.send(Message::text(HELLO)).await.is_err() {
        return;
    }
    while let Some(Ok(msg)) = ws.next().await {
        let reply = match msg {
            Message::Text(_) | Message::Binary(_) => msg,
            Message::Close(_) => break,
            Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => continue,
        };
        if ws.send(reply).await.is_err() {
            break;
        }
    }
}
