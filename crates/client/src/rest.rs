//! The REST side: creating and listing tables; and the entry point for
//! connections and sessions.

use spades_protocol::{
    ApiError, CreateTable, CreatedTable, MatchRecord, TablePhase, TableStatus, TableSummary,
};
use uuid::Uuid;

use crate::conn::{ConnectOptions, Connection, Endpoint};
use crate::error::{Error, Result};
use crate::session::{Attach, Session, SessionOptions};
use crate::tls::Tls;

/// Filters for [`Client::tables`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TableQuery {
    /// Only tables in this phase.
    pub phase: Option<TablePhase>,
    /// Only tables with (`true`) or without (`false`) an empty seat.
    pub open: Option<bool>,
    /// At most this many (the server's default otherwise).
    pub limit: Option<u32>,
}

impl TableQuery {
    fn to_query(self) -> String {
        let mut parts = Vec::new();
        if let Some(p) = self.phase {
            let name = match p {
                TablePhase::Lobby => "lobby",
                TablePhase::Bidding => "bidding",
                TablePhase::Playing => "playing",
                TablePhase::Finished => "finished",
            };
            parts.push(format!("phase={name}"));
        }
        if let Some(o) = self.open {
            parts.push(format!("open={o}"));
        }
        if let Some(l) = self.limit {
            parts.push(format!("limit={l}"));
        }
        if parts.is_empty() { String::new() } else { format!("?{}", parts.join("&")) }
    }
}

/// A server: its REST API, and a factory for WebSocket connections and
/// sessions.
///
/// ```no_run
/// use spades_client::Client;
/// use spades_client::protocol::CreateTable;
///
/// # async fn demo() -> Result<(), spades_client::Error> {
/// let client = Client::new("http://127.0.0.1:8080")?;
/// let created = client.create_table(&CreateTable { name: Some("Practice".into()), ..Default::default() }).await?;
/// let mut conn = client.connect().await?;
/// let joined = conn.join(created.table, "Ann", None).await?;
/// conn.add_bots(&created.owner_token).await?;
/// conn.start(&created.owner_token).await?;
/// println!("sitting {} with token {}", joined.seat, joined.token);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Client {
    endpoint: Endpoint,
    http: reqwest::Client,
    connect: ConnectOptions,
}

impl Client {
    /// A client for the server at `url` (`http://host:port`,
    /// `https://host`, …: see [`Endpoint::parse`]), trusting Mozilla's root
    /// certificates for `https`.
    ///
    /// # Errors
    /// [`Error::Url`] for an address this library cannot use.
    pub fn new(url: &str) -> Result<Client> {
        Ok(Client::with_endpoint(Endpoint::parse(url)?))
    }

    /// A client for an endpoint.
    pub fn with_endpoint(endpoint: Endpoint) -> Client {
        let connect = ConnectOptions::default();
        Client { endpoint, http: connect.tls.http_client(), connect }
    }

    /// Trusts these certificates, for REST calls and connections alike
    /// (e.g. [`Tls::with_pem_file`] for a private CA). Replaces an HTTP
    /// client set with [`Client::with_http`].
    pub fn with_tls(mut self, tls: Tls) -> Client {
        self.http = tls.http_client();
        self.connect.tls = tls;
        self
    }

    /// Uses this HTTP client for REST calls (e.g. one bound to a local
    /// address).
    pub fn with_http(mut self, http: reqwest::Client) -> Client {
        self.http = http;
        self
    }

    /// Uses these options for new connections.
    pub fn with_connect_options(mut self, connect: ConnectOptions) -> Client {
        self.connect = connect;
        self
    }

    /// The server's addresses.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// `POST /api/v1/tables`: creates a table; the reply carries the owner
    /// token.
    ///
    /// # Errors
    /// [`Error::Api`] (`invalid_options`, `rate_limited`, `capacity`, …) or
    /// a transport error.
    pub async fn create_table(&self, req: &CreateTable) -> Result<CreatedTable> {
        let mut post = self.http.post(format!("{}/api/v1/tables", self.endpoint.http)).json(req);
        if let Some(session) = &self.connect.session {
            post = post.bearer_auth(&session.0);
        }
        json(post.send().await?).await
    }

    /// `POST /api/v1/accounts/guest`: signs `device` in, making its guest
    /// account (named `name`, or a generated name) on first use; returns
    /// what the server answered and the session's token (a bearer session).
    /// [`Client::with_session`] then uses it.
    ///
    /// # Errors
    /// [`Error::Api`] (`name_taken`, `invalid_name`, `rate_limited`, …) or a
    /// transport error.
    pub async fn sign_in_guest(
        &self,
        device: &crate::account::DeviceSecret,
        name: Option<&str>,
    ) -> Result<(spades_protocol::SignedIn, crate::account::SessionToken)> {
        let body = spades_protocol::GuestSignIn {
            device_secret: device.0.clone(),
            name: name.map(str::to_owned),
            session: spades_protocol::SessionDelivery::Bearer,
        };
        let resp = self
            .http
            .post(format!("{}/api/v1/accounts/guest", self.endpoint.http))
            .json(&body)
            .send()
            .await?;
        let mut signed: spades_protocol::SignedIn = json(resp).await?;
        let token =
            signed.token.take().ok_or_else(|| Error::Protocol("no session token in the answer".into()))?;
        Ok((signed, crate::account::SessionToken(token)))
    }

    /// Uses this session for REST calls and new connections: tables are
    /// created as the account's, and connections play as it.
    pub fn with_session(mut self, session: crate::account::SessionToken) -> Client {
        self.connect.session = Some(session);
        self
    }

    /// `GET /api/v1/tables`: tables, newest first.
    ///
    /// # Errors
    /// [`Error::Api`] or a transport error.
    pub async fn tables(&self, query: TableQuery) -> Result<Vec<TableSummary>> {
        let url = format!("{}/api/v1/tables{}", self.endpoint.http, query.to_query());
        json(self.http.get(url).send().await?).await
    }

    /// `GET /api/v1/tables/{id}`: one table's public status.
    ///
    /// # Errors
    /// [`Error::Api`] (`table_not_found`) or a transport error.
    pub async fn table(&self, id: Uuid) -> Result<TableStatus> {
        json(self.http.get(format!("{}/api/v1/tables/{id}", self.endpoint.http)).send().await?).await
    }

    /// `GET /api/v1/matches/{id}`: a match's record (with the server seed
    /// of a fair match once it is over: see [`crate::verify`]).
    ///
    /// # Errors
    /// [`Error::Api`] (`table_not_found`) or a transport error.
    pub async fn match_record(&self, id: Uuid) -> Result<MatchRecord> {
        json(self.http.get(format!("{}/api/v1/matches/{id}", self.endpoint.http)).send().await?).await
    }

    /// Opens a WebSocket connection (not yet attached to a table).
    ///
    /// # Errors
    /// As [`Connection::connect_with`].
    pub async fn connect(&self) -> Result<Connection> {
        Connection::connect_with(&self.endpoint, &self.connect).await
    }

    /// Opens a reconnecting session at a table.
    ///
    /// # Errors
    /// As [`Session::open`].
    pub async fn session(&self, attach: Attach, mut opts: SessionOptions) -> Result<Session> {
        if opts.connect.source.is_none() {
            opts.connect.source = self.connect.source;
        }
        if opts.connect.tls.is_default() {
            opts.connect.tls = self.connect.tls.clone();
        }
        Session::open(&self.endpoint, attach, opts).await
    }
}

async fn json<T: serde::de::DeserializeOwned>(resp: reqwest::Response) -> Result<T> {
    let status = resp.status();
    if status.is_success() {
        return Ok(resp.json().await?);
    }
    let body = resp.text().await.unwrap_or_default();
    let (code, message) = match serde_json::from_str::<ApiError>(&body) {
        Ok(e) => (Some(e.code), e.message),
        Err(_) => (None, body),
    };
    Err(Error::Api { status: status.as_u16(), code, message })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries() {
        assert_eq!(TableQuery::default().to_query(), "");
        let q = TableQuery { phase: Some(TablePhase::Lobby), open: Some(true), limit: Some(20) };
        assert_eq!(q.to_query(), "?phase=lobby&open=true&limit=20");
    }
}
