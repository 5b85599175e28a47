//! The services a test may need beside the server: PostgreSQL
//! (`TEST_DATABASE_URL`), with a database of the test's own on it, and NATS
//! (`TEST_NATS_URL`). Shared by the test binaries (`mod services;`, or with
//! `#[path]` from `e2e/`).
//!
//! A test that needs one runs when the variable names a service that
//! answers. When the service is missing it is skipped with a line saying so
//! on stderr, except under CI (`CI` set and not empty), where it fails: a CI
//! run cannot pass without running it. A variable that names a service that
//! does not answer fails the test everywhere.

// Each test binary uses what it needs of this module.
#![allow(dead_code)]

use std::io::Write;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

/// The PostgreSQL server of `TEST_DATABASE_URL` (see [`service`]).
pub fn postgres() -> Option<String> {
    service("TEST_DATABASE_URL", "PostgreSQL", 5432)
}

/// The NATS server of `TEST_NATS_URL` (see [`service`]).
pub fn nats() -> Option<String> {
    service("TEST_NATS_URL", "NATS", 4222)
}

/// Whether this runs under CI (`CI` set and not empty).
pub fn under_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// The URL in `var` of `service` (`default_port` when the URL names none),
/// once it answers there. When `var` is unset or empty: under CI, panics;
/// elsewhere says so and returns `None` (the caller skips what needs it).
/// Panics when the service does not answer at the URL.
pub fn service(var: &str, service: &str, default_port: u16) -> Option<String> {
    let Some(url) = std::env::var(var).ok().filter(|u| !u.is_empty()) else {
        missing(service, &format!("{var} is not set"));
        return None;
    };
    if let Some(addrs) = socket_addrs(&url, default_port) {
        let answers = addrs.iter().any(|a| TcpStream::connect_timeout(a, Duration::from_secs(5)).is_ok());
        assert!(answers, "{var} names {service} at {addrs:?}, which does not answer");
    }
    Some(url)
}

/// What a test does when `service`, which it needs, is missing (`why`):
/// under CI, panics; elsewhere prints that what needs it is not run, and
/// why (to stderr itself, so that it shows with the test's output
/// captured too). The caller then skips what needs the service.
pub fn missing(service: &str, why: &str) {
    let test = std::thread::current().name().unwrap_or("a test").to_owned();
    if under_ci() {
        panic!("{test} needs {service}, and CI is set, so it must run: {why}");
    }
    let _ = writeln!(std::io::stderr(), "{test}: not run with {service}: {why}");
}
/// Where `url` (`scheme://[user[:password]@]host[:port][/…]`) points; `None`
/// when it names no host (a Unix socket, say).
fn socket_addrs(url: &str, default_port: u16) -> Option<Vec<SocketAddr>> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?']).next()?;
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    if host_port.is_empty() {
        return None;
    }
    let with_port = if host_port.ends_with(']') || !host_port.contains(':') {
        format!("{host_port}:{default_port}")
    } else {
        host_port.to_owned()
    };
    let addrs: Vec<SocketAddr> = with_port.to_socket_addrs().ok()?.collect();
    (!addrs.is_empty()).then_some(addrs)
}

/// A database of the test's own on the PostgreSQL server at `base` (a URL
/// with a database path), named `{prefix}_{random}`, made by
/// [`TestDatabase::create`] and dropped by [`TestDatabase::remove`].
pub struct TestDatabase {
    /// One connection to `base`, kept to drop the database with.
    pub admin: sqlx::PgPool,
    pub name: String,
    pub url: String,
}

impl TestDatabase {
    pub async fn create(base: &str, prefix: &str) -> TestDatabase {
        let name = format!("{prefix}_{}", uuid::Uuid::new_v4().simple());
        let admin = sqlx::postgres::PgPoolOptions::new()
            .max_connections(1)
            .connect(base)
            .await
            .unwrap_or_else(|e| panic!("PostgreSQL at the test URL: {e}"));
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}"))).execute(&admin).await.unwrap();
        let path = base.rfind('/').expect("the PostgreSQL URL of a test needs a database path");
        let url = format!("{}/{name}", &base[..path]);
        TestDatabase { admin, name, url }
    }

    /// Drops the database, closing its connections by force.
    pub async fn remove(&self) -> Result<(), sqlx::Error> {
        let sql = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name);
        sqlx::raw_sql(sqlx::AssertSqlSafe(sql)).execute(&self.admin).await.map(drop)
    }
}
