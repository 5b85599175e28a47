//! PostgreSQL over TLS, and a database that goes away under a running
//! server. Each test starts a throw-away PostgreSQL cluster of its own
//! (initdb in a temporary directory, on a free port, `ssl=on` with a
//! certificate for `localhost` signed by a CA made here with `openssl`);
//! a test is skipped, with the reason printed, only when `initdb` is not
//! installed, and fails then under CI (`CI` set).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use spades_protocol::TableOptions;
use spades_server::storage::{Journal, StoreOptions, TableRecord};
use sqlx::Connection;
use uuid::Uuid;

mod services;

/// `initdb`, `pg_ctl`: on the PATH or in Debian's versioned directory.
fn pg_bin(name: &str) -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join(name));
    let debian = ["17", "16", "15", "14"]
        .into_iter()
        .map(|v| PathBuf::from(format!("/usr/lib/postgresql/{v}/bin/{name}")));
    on_path.chain(debian).find(|p| p.is_file())
}

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// `program args…`, as the `postgres` user when this runs as root
/// (PostgreSQL refuses to run as root).
fn as_postgres(program: &Path) -> Command {
    if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    }
}

/// A free TCP port on 127.0.0.1 (free a moment ago).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Makes a CA (`<name>.crt`, `<name>.key`) in `dir`.
fn make_ca(dir: &Path, name: &str) {
    run(Command::new("openssl")
        .current_dir(dir)
        .args(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj"])
        .arg(format!("/CN={name}"))
        .args(["-keyout", &format!("{name}.key"), "-out", &format!("{name}.crt")]));
}

/// A throw-away PostgreSQL cluster with TLS on; stopped and removed on drop.
struct Cluster {
    dir: PathBuf,
    port: u16,
    pg_ctl: PathBuf,
}

impl Cluster {
    /// `None` (with the reason printed) when PostgreSQL is not installed.
    fn start() -> Option<Cluster> {
        let (Some(initdb), Some(pg_ctl)) = (pg_bin("initdb"), pg_bin("pg_ctl")) else {
            services::missing(
                "PostgreSQL",
                "initdb/pg_ctl are not installed (apt-get install postgresql-15)",
            );
            return None;
        };
        let dir = std::env::temp_dir().join(format!("spades-tls-{}", Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        // The CA that signs the server's certificate, and another one.
        make_ca(&dir, "ca");
        make_ca(&dir, "other-ca");
        run(Command::new("openssl").current_dir(&dir).args([
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=localhost",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
        ]));
        std::fs::write(dir.join("san.ext"), "subjectAltName=DNS:localhost\n").unwrap();
        run(Command::new("openssl").current_dir(&dir).args([
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "san.ext",
            "-out",
            "server.crt",
        ]));
        if is_root() {
            run(Command::new("chown").arg("-R").arg("postgres:").arg(&dir));
        }
        run(Command::new("chmod").arg("0600").arg(dir.join("server.key")));
        run(Command::new("chmod").arg("0755").arg(&dir));
        let data = dir.join("data");
        run(as_postgres(&initdb).arg("-D").arg(&data).args(["-U", "postgres", "--auth=trust", "-N"]));
        let port = free_port();
        let conf = format!(
            "port = {port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{dir}'\n\
             ssl = on\nssl_cert_file = '{dir}/server.crt'\nssl_key_file = '{dir}/server.key'\n\
             fsync = off\nshared_buffers = 16MB\n",
            dir = dir.display()
        );
        let mut existing = std::fs::read_to_string(data.join("postgresql.conf")).unwrap();
        existing.push_str(&conf);
        std::fs::write(data.join("postgresql.conf"), existing).unwrap();
        let cluster = Cluster { dir, port, pg_ctl };
        run(as_postgres(&cluster.pg_ctl)
            .arg("-D")
            .arg(&data)
            .arg("-l")
            .arg(cluster.dir.join("log"))
            .args(["-w", "-t", "20", "start"]));
        Some(cluster)
    }

    fn path(&self, file: &str) -> String {
        self.dir.join(file).display().to_string()
    }

    /// A URL for database `postgres` at `host` with `query`.
    fn url(&self, host: &str, query: &str) -> String {
        format!("postgres://postgres@{host}:{}/postgres?{query}", self.port)
    }

    /// Starts the stopped server again, on the same port.
    fn restart(&self) {
        run(as_postgres(&self.pg_ctl)
            .arg("-D")
            .arg(self.dir.join("data"))
            .arg("-l")
            .arg(self.dir.join("log"))
            .args(["-w", "-t", "20", "start"]));
    }

    /// Stops the server at once (as a crash or a lost network would).
    fn stop(&self) {
        let _ = as_postgres(&self.pg_ctl)
            .arg("-D")
            .arg(self.dir.join("data"))
            .args(["-m", "immediate", "-w", "stop"])
            .output();
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn table() -> TableRecord {
    TableRecord {
        id: Uuid::new_v4(),
        name: "Over TLS".into(),
        options: TableOptions::default(),
        owner_hash: "ab".repeat(32),
        owner_account: None,
        created_at_ms: 1_700_000_000_000,
    }
}

/// Opens the journal at `url`, writes a table and reads it back.
async fn writes_and_reads(url: &str) {
    let journal = Journal::open(url, &std::env::temp_dir()).await.unwrap_or_else(|e| panic!("{url}: {e}"));
    assert_eq!(journal.kind(), "postgres");
    let t = table();
    journal.create_table(&t).await.unwrap();
    let stored = journal.get(t.id).await.unwrap().expect("the table reads back");
    assert_eq!(stored.table, t);
    assert!(journal.ping().await);
}

/// True when a connection made with `url` is encrypted, by the server's
/// own account.
async fn server_sees_tls(url: &str) -> bool {
    let mut c = sqlx::PgConnection::connect(url).await.unwrap();
    let (ssl,): (bool,) = sqlx::query_as("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
        .fetch_one(&mut c)
        .await
        .unwrap();
    c.close().await.unwrap();
    ssl
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_over_tls_require_and_verify_full() {
    let Some(pg) = Cluster::start() else { return };
    let options = StoreOptions { acquire_timeout: Duration::from_secs(2), ..Default::default() };

    // sslmode=require: encrypted, the certificate is not checked.
    let require = pg.url("127.0.0.1", "sslmode=require");
    writes_and_reads(&require).await;
    assert!(server_sees_tls(&require).await, "sslmode=require encrypts");
    assert!(!server_sees_tls(&pg.url("127.0.0.1", "sslmode=disable")).await, "the check itself can fail");

    // sslmode=verify-full with the right CA and host name.
    let verify = pg.url("localhost", &format!("sslmode=verify-full&sslrootcert={}", pg.path("ca.crt")));
    writes_and_reads(&verify).await;
    assert!(server_sees_tls(&verify).await);

    // A CA that did not sign the server's certificate: refused.
    let wrong_ca =
        pg.url("localhost", &format!("sslmode=verify-full&sslrootcert={}", pg.path("other-ca.crt")));
    let began = Instant::now();
    let e = Journal::open_with(&wrong_ca, &std::env::temp_dir(), options).await.unwrap_err().to_string();
    assert!(began.elapsed() < Duration::from_secs(5), "refused at once: {:?}", began.elapsed());
    assert!(e.contains(&format!("localhost:{}", pg.port)), "names the server: {e}");
    assert!(e.contains("TLS") && e.contains("sslrootcert"), "says what to check: {e}");
    assert!(e.to_lowercase().contains("certificate"), "{e}");
    assert!(!e.contains("other-ca.crt"), "no query in the message: {e}");

    // The right CA, but a host name the certificate does not name.
    let wrong_host = pg.url("127.0.0.1", &format!("sslmode=verify-full&sslrootcert={}", pg.path("ca.crt")));
    let e = Journal::open_with(&wrong_host, &std::env::temp_dir(), options).await.unwrap_err().to_string();
    assert!(e.contains(&format!("127.0.0.1:{}", pg.port)), "names the server: {e}");
    assert!(e.contains("TLS") && e.to_lowercase().contains("certificate"), "{e}");

    // verify-ca checks the CA but not the name: the IP address is fine.
    writes_and_reads(&pg.url("127.0.0.1", &format!("sslmode=verify-ca&sslrootcert={}", pg.path("ca.crt"))))
        .await;
}

async fn get(client: &reqwest::Client, url: &str) -> (reqwest::StatusCode, String, Duration) {
    let began = Instant::now();
    let r = client.get(url).send().await.unwrap();
    let status = r.status();
    (status, r.text().await.unwrap(), began.elapsed())
}

/// The database dies under a running server: `/readyz` says so within
/// 2 s, the match list answers 503 `storage_unavailable` within the read
/// timeout, and the journal's errors name the server (never a password).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_that_goes_away_fails_fast() {
    let Some(pg) = Cluster::start() else { return };
    let url = pg.url("127.0.0.1", "sslmode=require");
    let mut config = spades_server::Config::default();
    config.storage.database_url = url.clone();
    config.limits.requests_per_minute_per_ip = 10_000;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let shutdown = tokio_util::sync::CancellationToken::new();
    let server = tokio::spawn(spades_server::serve(listener, config, shutdown.clone()));
    let client = reqwest::Client::builder().timeout(Duration::from_secs(15)).build().unwrap();
    let mut ready = false;
    for _ in 0..100 {
        if let Ok(r) = client.get(format!("{base}/readyz")).send().await {
            ready = r.status() == reqwest::StatusCode::OK;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(ready, "ready while the database answers");
    let (status, _, _) = get(&client, &format!("{base}/api/v1/matches")).await;
    assert_eq!(status, reqwest::StatusCode::OK);

    // A journal of its own, to look at the error messages.
    let options = StoreOptions { read_timeout: Duration::from_millis(1500), ..Default::default() };
    let journal = Journal::open_with(&url, &std::env::temp_dir(), options).await.unwrap();
    let t = table();
    journal.create_table(&t).await.unwrap();

    pg.stop();

    let (status, body, took) = get(&client, &format!("{base}/readyz")).await;
    assert_eq!(status, reqwest::StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert!(took < Duration::from_secs(2), "readyz took {took:?}");
    for _ in 0..2 {
        let (status, body, took) = get(&client, &format!("{base}/api/v1/matches")).await;
        assert_eq!(status, reqwest::StatusCode::SERVICE_UNAVAILABLE, "{body}");
        assert!(body.contains("storage_unavailable"), "{body}");
        assert!(took < Duration::from_secs(4), "the match list took {took:?}");
    }

    let began = Instant::now();
    assert!(!journal.ping().await);
    assert!(began.elapsed() < Duration::from_secs(2), "ping took {:?}", began.elapsed());
    let began = Instant::now();
    let e = journal.get(t.id).await.unwrap_err().to_string();
    assert!(began.elapsed() < Duration::from_secs(4), "read took {:?}", began.elapsed());
    assert!(e.contains(&format!("reading postgres://127.0.0.1:{}/postgres", pg.port)), "{e}");
    let e = journal.create_table(&table()).await.unwrap_err().to_string();
    assert!(e.contains(&format!("127.0.0.1:{}", pg.port)), "{e}");

    // The database comes back: so does the server, without a restart.
    pg.restart();
    let mut back = false;
    for _ in 0..50 {
        if get(&client, &format!("{base}/readyz")).await.0 == reqwest::StatusCode::OK {
            back = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(back, "ready again once the database answers");
    let (status, body, _) = get(&client, &format!("{base}/api/v1/matches")).await;
    assert_eq!(status, reqwest::StatusCode::OK, "{body}");
    assert_eq!(journal.get(t.id).await.unwrap().unwrap().table, t);

    shutdown.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(10), server).await;
}
