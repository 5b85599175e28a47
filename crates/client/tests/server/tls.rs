//! The library through a TLS-terminating proxy (a certificate made for the
//! test, trusted through [`Tls::with_pem`]): REST over `https://` and a
//! whole match over `wss://`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use spades_bots::Strength;
use spades_client::protocol::{CreateTable, TableOptions, TablePhase, Tempo};
use spades_client::{Client, Error, ServerMessage, TableQuery, Tls};
use spades_engine::{MatchEnd, Rules, Seat};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;

use crate::helpers::*;

/// A TLS-terminating proxy in front of a plain server, as the README's
/// Caddy or nginx would be.
struct TlsProxy {
    addr: SocketAddr,
    /// PEM of its self-signed certificate (for `localhost`).
    cert_pem: String,
    /// TLS handshakes completed.
    handshakes: Arc<AtomicUsize>,
    accept: JoinHandle<()>,
}

impl TlsProxy {
    async fn start(target: SocketAddr) -> TlsProxy {
        let made = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
        let cert: CertificateDer<'static> = made.cert.der().clone();
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(made.signing_key.serialize_der()));
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![cert], key)
            .unwrap();
        let acceptor = TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let handshakes = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&handshakes);
        let accept = tokio::spawn(async move {
            while let Ok((inbound, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                let counted = Arc::clone(&counted);
                tokio::spawn(async move {
                    let Ok(mut inbound) = acceptor.accept(inbound).await else { return };
                    counted.fetch_add(1, Ordering::SeqCst);
                    let Ok(mut outbound) = TcpStream::connect(target).await else { return };
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                });
            }
        });
        TlsProxy { addr, cert_pem: made.cert.pem(), handshakes, accept }
    }

    fn url(&self) -> String {
        format!("https://localhost:{}", self.addr.port())
    }
}

impl Drop for TlsProxy {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_match_over_https_and_wss_through_a_tls_proxy() {
    let server = spawn_server(test_config()).await;
    let proxy = TlsProxy::start(server.addr).await;
    let tls = Tls::with_pem(proxy.cert_pem.as_bytes()).unwrap();
    let client = Client::new(&proxy.url()).unwrap().with_tls(tls);
    assert!(client.endpoint().tls);
    assert_eq!(client.endpoint().ws, format!("wss://localhost:{}/ws", proxy.addr.port()));

    // REST over https.
    let options = TableOptions {
        rules: Rules { match_end: MatchEnd::Hands(5), ..Rules::default() },
        tempo: Tempo::Normal,
        ..TableOptions::default()
    };
    let created = client.create_table(&CreateTable { name: Some("Over TLS".into()), options }).await.unwrap();
    let listed = client.tables(TableQuery::default()).await.unwrap();
    assert!(listed.iter().any(|t| t.table == created.table));
    let after_rest = proxy.handshakes.load(Ordering::SeqCst);
    assert!(after_rest >= 1, "REST went around the TLS proxy");

    // A whole match over wss, with bots in the other seats.
    let mut conn = within("connecting over wss", client.connect()).await.unwrap();
    assert!(conn.server().starts_with("spades-server/"));
    assert!(proxy.handshakes.load(Ordering::SeqCst) > after_rest, "the WebSocket went around the proxy");
    let joined = conn.join(created.table, "Ann", Some(Seat::North)).await.unwrap();
    conn.add_bots(&created.owner_token).await.unwrap();
    conn.start(&created.owner_token).await.unwrap();
    let mut moves = 0u64;
    let last = within("the match over wss", async {
        loop {
            let ServerMessage::View { view, .. } = conn.recv().await.expect("the connection stays up") else {
                continue;
            };
            if view.phase == TablePhase::Finished {
                return view;
            }
            if let Some(game) = view.game.as_ref()
                && game.turn.is_some()
                && game.turn == view.you
            {
                conn.act(spades_bots::choose(Strength::Rule, game, moves)).await.unwrap();
                moves += 1;
            }
        }
    })
    .await;
    assert_eq!(last.you, Some(joined.seat));
    let result = last.game.as_ref().and_then(|g| g.result).expect("a result");
    assert!(result.hands_played >= 5);
    assert_eq!(moves, 14 * u64::from(result.hands_played), "one bid and 13 cards a hand");
    conn.close().await.unwrap();
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_certificate_is_refused_over_https_and_wss() {
    let server = spawn_server(test_config()).await;
    let proxy = TlsProxy::start(server.addr).await;
    // Mozilla's roots only: the proxy's self-signed certificate is not trusted.
    let client = Client::new(&proxy.url()).unwrap();
    let err = client.tables(TableQuery::default()).await.unwrap_err();
    assert!(matches!(err, Error::Http(_)), "{err}");
    let err = client.connect().await.unwrap_err();
    assert!(matches!(err, Error::Connect { .. }), "{err}");
    assert!(err.to_string().to_lowercase().contains("certificate"), "{err}");
    assert_eq!(proxy.handshakes.load(Ordering::SeqCst), 0);
    // Plain HTTP to the TLS port fails too: the scheme decides, not the port.
    let plain = Client::new(&format!("http://localhost:{}", proxy.addr.port())).unwrap();
    assert!(plain.tables(TableQuery::default()).await.is_err());
    server.stop().await;
}
