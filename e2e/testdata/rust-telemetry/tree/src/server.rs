/*
Copyright 2026 The Guestbook Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

//! The manager's HTTP servers: the health probes (`/healthz`, `/readyz` on
//! `--health-probe-bind-address`) and the metrics (`/metrics` on `--metrics-bind-address`), and
//! what the webhook server shares with them: listeners on IPv6 and IPv4 alike, hyper's
//! HTTP/1.1, a bounded number of connections (a slot taken once a connection is accepted,
//! given back when it ends), time limits on the TLS handshake and on the request head (which
//! also closes a kept-alive connection that sends nothing), failed handshakes logged, and a
//! drain of the requests under way at shutdown.
//!
//! The metrics are served over HTTPS, and each request must carry a bearer token that the API
//! server authenticates (TokenReview) and authorizes to `get` the non-resource URL `/metrics`
//! (SubjectAccessReview), as go/v4's `--metrics-secure`: bind the ClusterRole metrics-reader
//! of config/rbac to whatever scrapes them. The API server's answers are remembered a little
//! while ([`ALLOWED_TTL`], [`REFUSED_TTL`]), so a scrape does not cost two reviews. With
//! `--metrics-secure=false`, plain HTTP to anyone.

use crate::manager::{Health, Metrics};
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{ALLOW, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue};
use hyper::server::conn::http1;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec};
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::Client;
use kube::api::{Api, PostParams};
use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::time::{Instant, timeout};
use tokio_rustls::TlsAcceptor;

/// How long a client may take to complete the TLS handshake.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a client may take to send the head of a request, from the moment the server waits
/// for it: a kept-alive connection that sends no new request for that long is closed too (the
/// idle timeout), so an idle client does not keep a connection slot.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the API server may take to review a token or an access.
pub const REVIEW_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a token the API server allowed to read the metrics is let in without asking again
/// (a revoked access ends within this time).
pub const ALLOWED_TTL: Duration = Duration::from_secs(60);
/// How long a token the API server refused (unknown, or without the right) is refused without
/// asking again.
pub const REFUSED_TTL: Duration = Duration::from_secs(10);
/// How many tokens' answers are remembered at most.
const REMEMBERED: usize = 1024;
/// The content type of the metrics: OpenMetrics text, which prometheus-client writes.
pub const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// A response of the manager's servers.
pub type Reply = Response<Full<Bytes>>;

/// A response with `status`, of `content_type`.
pub fn reply(status: StatusCode, content_type: &'static str, body: impl Into<Bytes>) -> Reply {
    let mut response = Response::new(Full::new(body.into()));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

fn text(status: StatusCode, body: impl Into<Bytes>) -> Reply {
    reply(status, "text/plain; charset=utf-8", body)
}

/// 405 Method Not Allowed, saying which methods are.
pub fn not_allowed(allowed: &'static str) -> Reply {
    let mut response = text(StatusCode::METHOD_NOT_ALLOWED, "method not allowed\n");
    response
        .headers_mut()
        .insert(ALLOW, HeaderValue::from_static(allowed));
    response
}

/// Listen on `address` as the Go manager's flags take it (`:8081` is every address, IPv6 and
/// IPv4, as Go's; `0` or nothing is off): `None` when off, an error naming `flag` when the
/// address cannot be bound, so that a manager that cannot serve what it was asked to does not
/// start.
pub async fn bind(flag: &str, address: &str) -> anyhow::Result<Option<TcpListener>> {
    let listener = match address {
        "" | "0" => return Ok(None),
        a if a.starts_with(':') => match a[1..].parse::<u16>() {
            Ok(port) => listen(SocketAddr::from((Ipv6Addr::UNSPECIFIED, port))).await,
            Err(e) => anyhow::bail!("{flag}: {a:?} is no port ({e}); for example :8081"),
        },
        a => match a.parse::<SocketAddr>() {
            Ok(address) => listen(address).await,
            // A host name, such as localhost:8081.
            Err(_) => TcpListener::bind(a).await,
        },
    };
    let listener =
        listener.map_err(|e| anyhow::anyhow!("{flag}: cannot listen on {address}: {e}"))?;
    Ok(Some(listener))
}

/// Listen on `address`. Every IPv6 address (`[::]:port`) means both families, as Go's `:port`
/// does: IPv4 clients arrive as IPv4-mapped IPv6 addresses (IPV6_V6ONLY off, whatever the
/// host's default), so the manager answers on IPv4, IPv6 and dual-stack clusters alike; where
/// the host has no IPv6, every IPv4 address (`0.0.0.0:port`).
pub async fn listen(address: SocketAddr) -> std::io::Result<TcpListener> {
    if address != SocketAddr::from((Ipv6Addr::UNSPECIFIED, address.port())) {
        return TcpListener::bind(address).await;
    }
    match dual_stack(address) {
        Ok(listener) => Ok(listener),
        // Taken, or not allowed: IPv4 would not do better.
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => Err(e),
        Err(e) => {
            tracing::info!(%address, error = %e, "no IPv6 here: listening on IPv4 only");
            TcpListener::bind((Ipv4Addr::UNSPECIFIED, address.port())).await
        }
    }
}

/// A listener on every IPv6 address that takes IPv4 connections too.
fn dual_stack(address: SocketAddr) -> std::io::Result<TcpListener> {
    use socket2::{Domain, Protocol, Socket, Type};
    let socket = Socket::new(Domain::IPV6, Type::STREAM, Some(Protocol::TCP))?;
    socket.set_only_v6(false)?;
    // As tokio's TcpListener::bind: a restarted manager can listen again at once.
    socket.set_reuse_address(true)?;
    socket.set_nonblocking(true)?;
    socket.bind(&address.into())?;
    socket.listen(1024)?;
    TcpListener::from_std(socket.into())
}

/// How a server serves its connections.
#[derive(Clone)]
pub struct Serving {
    /// HTTPS with this acceptor, or plain HTTP.
    pub tls: Option<TlsAcceptor>,
    /// Connections served at once: one accepted beyond them is closed at once (its client, the
    /// API server or a scraper, tries again), so a crowd of slow clients cannot grow the
    /// server's memory without bound.
    pub max_connections: usize,
    /// Whether a connection may carry several requests.
    pub keep_alive: bool,
    /// How long the requests under way may take to finish once the server stops.
    pub drain: Duration,
}

/// Serve `listener` with `handler` until `shutdown`; then stop accepting and wait (at most
/// `serving.drain`) for the requests under way to be answered.
pub async fn serve<H, F>(
    listener: TcpListener,
    serving: Serving,
    handler: H,
    shutdown: impl Future<Output = ()>,
) where
    H: Fn(Request<Incoming>) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Reply> + Send + 'static,
{
    let slots = Arc::new(Semaphore::new(serving.max_connections));
    let graceful = GracefulShutdown::new();
    // When the server last said it was full: it says so at most every 10 s.
    let mut said_full: Option<Instant> = None;
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(e) => {
                // Out of file descriptors, for one: try again shortly.
                tracing::warn!(error = %e, "cannot accept a connection");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        // A slot for each connection served, taken once it is accepted and given back when it
        // ends (a kept-alive one ends after HEADER_TIMEOUT without a request).
        let Ok(permit) = slots.clone().try_acquire_owned() else {
            if said_full.is_none_or(|at| at.elapsed() >= Duration::from_secs(10)) {
                tracing::warn!(%peer, max = serving.max_connections, "too many connections: new ones are closed until some end");
                said_full = Some(Instant::now());
            }
            drop(stream);
            continue;
        };
        let (serving, handler, watcher) = (serving.clone(), handler.clone(), graceful.watcher());
        tokio::spawn(async move {
            let _permit = permit;
            match serving.tls {
                Some(tls) => match timeout(HANDSHAKE_TIMEOUT, tls.accept(stream)).await {
                    Ok(Ok(stream)) => {
                        connection(stream, serving.keep_alive, handler, watcher).await
                    }
                    Ok(Err(error)) => tracing::warn!(%peer, %error, "TLS handshake failed"),
                    Err(_) => tracing::warn!(%peer, "TLS handshake timed out"),
                },
                None => connection(stream, serving.keep_alive, handler, watcher).await,
            }
        });
    }
    drop(listener);
    if timeout(serving.drain, graceful.shutdown()).await.is_err() {
        tracing::warn!(drain = ?serving.drain, "requests were still under way when the server stopped");
    }
}

/// Serve the requests of one connection, which ends gracefully when the server stops.
async fn connection<IO, H, F>(io: IO, keep_alive: bool, handler: H, watcher: Watcher)
where
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    H: Fn(Request<Incoming>) -> F + Send + Sync + 'static,
    F: Future<Output = Reply> + Send + 'static,
{
    let service = hyper::service::service_fn(move |request| {
        let answer = handler(request);
        async move { Ok::<_, Infallible>(answer.await) }
    });
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .keep_alive(keep_alive);
    let connection = builder.serve_connection(TokioIo::new(io), service);
    if let Err(error) = watcher.watch(connection).await {
        tracing::debug!(%error, "connection ended with an error");
    }
}

/// How the probes and metrics servers serve: a few connections, one request each.
pub fn plain(tls: Option<TlsAcceptor>) -> Serving {
    Serving {
        tls,
        max_connections: 32,
        keep_alive: false,
        drain: Duration::from_secs(1),
    }
}

/// The health probes: `/healthz` (the process answers) and `/readyz` (every check of `health`
/// passes; otherwise 503 and each failing check), for GET and HEAD.
pub async fn probe(request: Request<Incoming>, health: Arc<Health>) -> Reply {
    probe_answer(request.method(), request.uri().path(), &health)
}

fn probe_answer(method: &Method, path: &str, health: &Health) -> Reply {
    if method != Method::GET && method != Method::HEAD {
        return not_allowed("GET, HEAD");
    }
    match path {
        "/healthz" => text(StatusCode::OK, "ok"),
        "/readyz" => match health.readiness() {
            Ok(()) => text(StatusCode::OK, "ok"),
            Err(failing) => {
                let lines: String = failing.iter().map(|f| format!("[-]{f}\n")).collect();
                text(StatusCode::SERVICE_UNAVAILABLE, lines)
            }
        },
        _ => text(StatusCode::NOT_FOUND, "not found\n"),
    }
}

/// Who may read the metrics.
#[derive(Clone)]
pub enum Access {
    /// Anyone (`--metrics-secure=false`).
    Anyone,
    /// Whoever the API server authenticates and authorizes.
    Reviewed(Reviewer),
}

/// What the API server said of a token, remembered.
#[derive(Clone)]
enum Decision {
    Allowed,
    /// Refused: 401 or 403, with this body.
    Refused(StatusCode, String),
}

/// A token and the request it made (verb and path) -> the decision and when it expires.
type Decisions = HashMap<(String, String, String), (Decision, Instant)>;

/// Asks the API server of its client who may read the metrics, and remembers its answers for
/// a little while.
#[derive(Clone)]
pub struct Reviewer {
    client: Client,
    decisions: Arc<Mutex<Decisions>>,
}

/// `/metrics` for GET, in the OpenMetrics text format, to whoever `access` lets in.
pub async fn metrics(request: Request<Incoming>, metrics: Arc<Metrics>, access: Access) -> Reply {
    if request.uri().path() == crate::telemetry::LOG_LEVEL_PATH {
        return crate::telemetry::log_level(request, &access).await;
    }
    if request.method() != Method::GET {
        return not_allowed("GET");
    }
    if let Access::Reviewed(reviewer) = &access {
        let path = request.uri().path();
        if let Err(refused) = reviewer
            .authorize(request.method(), path, request.headers())
            .await
        {
            return refused;
        }
    }
    match request.uri().path() {
        "/metrics" => reply(StatusCode::OK, OPENMETRICS, metrics.render()),
        _ => text(StatusCode::NOT_FOUND, "not found\n"),
    }
}

impl Reviewer {
    pub fn new(client: Client) -> Reviewer {
        Reviewer {
            client,
            decisions: Arc::default(),
        }
    }

    fn decisions(&self) -> std::sync::MutexGuard<'_, Decisions> {
        self.decisions.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Let a request in when the API server authenticates its bearer token (TokenReview) and
    /// authorizes that user to `<method>` the non-resource URL `path` (SubjectAccessReview):
    /// otherwise 401 (no token, or one it does not know), 403 (not allowed) or 500 (the API
    /// server did not answer). An answer is remembered for [`ALLOWED_TTL`] or [`REFUSED_TTL`];
    /// a failure to get one is not.
    pub async fn authorize(
        &self,
        method: &Method,
        path: &str,
        headers: &HeaderMap,
    ) -> Result<(), Reply> {
        let token = headers
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim)
            .filter(|t| !t.is_empty());
        let Some(token) = token else {
            return Err(text(StatusCode::UNAUTHORIZED, "Unauthorized\n"));
        };
        let key = (token.to_string(), method.to_string(), path.to_string());
        let remembered = self.decisions().get(&key).cloned();
        let decision = match remembered {
            Some((decision, expires)) if Instant::now() < expires => decision,
            _ => {
                let decision = review(&self.client, method, path, token).await?;
                let ttl = match decision {
                    Decision::Allowed => ALLOWED_TTL,
                    Decision::Refused(..) => REFUSED_TTL,
                };
                let now = Instant::now();
                let mut decisions = self.decisions();
                if decisions.len() >= REMEMBERED {
                    decisions.retain(|_, (_, expires)| now < *expires);
                    if decisions.len() >= REMEMBERED {
                        decisions.clear();
                    }
                }
                decisions.insert(key, (decision.clone(), now + ttl));
                decision
            }
        };
        match decision {
            Decision::Allowed => Ok(()),
            Decision::Refused(status, body) => Err(text(status, body)),
        }
    }
}

/// What the API server of `client` says of `token` asking to `<method>` `path`; `Err`: it did
/// not answer (500).
async fn review(
    client: &Client,
    method: &Method,
    path: &str,
    token: &str,
) -> Result<Decision, Reply> {
    let unauthorized = || Decision::Refused(StatusCode::UNAUTHORIZED, "Unauthorized\n".into());
    let failed = |what: &str, error: String| {
        tracing::error!(%error, "{what} for the metrics endpoint failed");
        text(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("{what} failed\n"),
        )
    };
    let review = TokenReview {
        spec: TokenReviewSpec {
            token: token.to_string(),
            ..TokenReviewSpec::default()
        },
        ..TokenReview::default()
    };
    let tokens: Api<TokenReview> = Api::all(client.clone());
    let reviewed = match timeout(
        REVIEW_TIMEOUT,
        tokens.create(&PostParams::default(), &review),
    )
    .await
    {
        Ok(Ok(reviewed)) => reviewed.status.unwrap_or_default(),
        Ok(Err(e)) => return Err(failed("authentication", e.to_string())),
        Err(_) => return Err(failed("authentication", "no answer in time".into())),
    };
    if reviewed.authenticated != Some(true) {
        return Ok(unauthorized());
    }
    let user = reviewed.user.unwrap_or_default();
    let name = user.username.clone().unwrap_or_default();
    let access = SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: user.username,
            groups: user.groups,
            uid: user.uid,
            extra: user.extra,
            non_resource_attributes: Some(NonResourceAttributes {
                path: Some(path.to_string()),
                verb: Some(method.as_str().to_ascii_lowercase()),
            }),
            ..SubjectAccessReviewSpec::default()
        },
        ..SubjectAccessReview::default()
    };
    let accesses: Api<SubjectAccessReview> = Api::all(client.clone());
    let decided = match timeout(
        REVIEW_TIMEOUT,
        accesses.create(&PostParams::default(), &access),
    )
    .await
    {
        Ok(Ok(decided)) => decided.status.is_some_and(|s| s.allowed),
        Ok(Err(e)) => return Err(failed("authorization", e.to_string())),
        Err(_) => return Err(failed("authorization", "no answer in time".into())),
    };
    if decided {
        Ok(Decision::Allowed)
    } else {
        Ok(Decision::Refused(
            StatusCode::FORBIDDEN,
            format!("Authorization denied for user {name}\n"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;
    use kube::client::Body;
    use tower_test::mock::Handle;

    async fn body(reply: Reply) -> String {
        let bytes = reply
            .into_body()
            .collect()
            .await
            .expect("a body")
            .to_bytes();
        String::from_utf8_lossy(&bytes).into_owned()
    }

    #[tokio::test]
    async fn the_probes_answer_get_and_head_only() {
        let health = Health::default();
        let ok = probe_answer(&Method::GET, "/healthz", &health);
        assert_eq!(ok.status(), StatusCode::OK);
        assert_eq!(
            probe_answer(&Method::HEAD, "/readyz", &health).status(),
            StatusCode::OK
        );
        let refused = probe_answer(&Method::POST, "/healthz", &health);
        assert_eq!(refused.status(), StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(refused.headers()[ALLOW], "GET, HEAD");
        assert_eq!(
            probe_answer(&Method::GET, "/metrics", &health).status(),
            StatusCode::NOT_FOUND
        );
    }

    #[tokio::test]
    async fn readyz_lists_what_is_not_ready() {
        let health = Health::default();
        health.set("webhooks", Some("not listening yet".into()));
        let reply = probe_answer(&Method::GET, "/readyz", &health);
        assert_eq!(reply.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(body(reply).await, "[-]webhooks: not listening yet\n");
    }

    #[tokio::test]
    async fn an_address_in_use_is_an_error_naming_the_flag() {
        let taken = bind("--metrics-bind-address", "127.0.0.1:0")
            .await
            .expect("a free port")
            .expect("a listener");
        let address = taken.local_addr().expect("its address").to_string();
        let error = bind("--metrics-bind-address", &address)
            .await
            .expect_err("the port is taken");
        assert!(
            error
                .to_string()
                .starts_with("--metrics-bind-address: cannot listen on "),
            "{error}"
        );
        assert!(
            bind("--metrics-bind-address", "0")
                .await
                .expect("off")
                .is_none()
        );
    }

    #[tokio::test]
    async fn every_address_is_ipv6_and_ipv4() {
        use tokio::net::TcpStream;
        let listener = bind("--health-probe-bind-address", ":0")
            .await
            .expect("listening")
            .expect("a listener");
        let port = listener.local_addr().expect("its address").port();
        let accepting = tokio::spawn(async move {
            loop {
                let _ = listener.accept().await;
            }
        });
        TcpStream::connect((Ipv4Addr::LOCALHOST, port))
            .await
            .expect("an IPv4 client is answered");
        // Where the host has IPv6, IPv6 clients are answered too.
        if std::net::TcpListener::bind((Ipv6Addr::LOCALHOST, 0)).is_ok() {
            TcpStream::connect((Ipv6Addr::LOCALHOST, port))
                .await
                .expect("an IPv6 client is answered");
        }
        accepting.abort();
        let error = bind("--health-probe-bind-address", ":http")
            .await
            .expect_err("no port");
        assert!(error.to_string().contains("for example :8081"), "{error}");
    }

    /// Connect to `address` and read what the server sends until it closes the connection.
    async fn read_until_closed(address: SocketAddr, request: &[u8]) -> String {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut stream = tokio::net::TcpStream::connect(address)
            .await
            .expect("connected");
        stream.write_all(request).await.expect("sent");
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer).await;
        String::from_utf8_lossy(&answer).into_owned()
    }

    async fn ok(_: Request<Incoming>) -> Reply {
        text(StatusCode::OK, "ok")
    }

    #[tokio::test(start_paused = true)]
    async fn a_kept_alive_connection_that_sends_nothing_is_closed() {
        let listener = bind("--x", "127.0.0.1:0").await.unwrap().unwrap();
        let address = listener.local_addr().expect("its address");
        let serving = Serving {
            keep_alive: true,
            ..plain(None)
        };
        tokio::spawn(serve(listener, serving, ok, std::future::pending()));
        let request = b"GET / HTTP/1.1\r\nhost: test\r\n\r\n";
        // The answer, then the connection stays open for the next request until HEADER_TIMEOUT.
        let answer = timeout(
            HEADER_TIMEOUT + Duration::from_secs(5),
            read_until_closed(address, request),
        )
        .await
        .expect("the idle connection was closed");
        assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    }

    #[tokio::test]
    async fn a_connection_beyond_the_limit_is_closed_and_the_others_served() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = bind("--x", "127.0.0.1:0").await.unwrap().unwrap();
        let address = listener.local_addr().expect("its address");
        let serving = Serving {
            max_connections: 1,
            ..plain(None)
        };
        tokio::spawn(serve(listener, serving, ok, std::future::pending()));
        // The first connection takes the one slot, and sends its request later.
        let mut first = tokio::net::TcpStream::connect(address)
            .await
            .expect("connected");
        let second = read_until_closed(address, b"GET / HTTP/1.1\r\nhost: test\r\n\r\n").await;
        assert_eq!(second, "", "a connection beyond the limit was served");
        first
            .write_all(b"GET / HTTP/1.1\r\nhost: test\r\n\r\n")
            .await
            .expect("sent");
        let mut answer = String::new();
        first.read_to_string(&mut answer).await.expect("an answer");
        assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    }

    #[tokio::test]
    async fn the_metrics_are_served_as_openmetrics_with_a_bounded_server() {
        let listener = bind("--metrics-bind-address", "127.0.0.1:0")
            .await
            .expect("bound")
            .expect("a listener");
        let address = listener.local_addr().expect("its address");
        let registered = Arc::new(Metrics::default());
        registered.register("webapp-guestbook", 1);
        let handler = move |request| metrics(request, registered.clone(), Access::Anyone);
        tokio::spawn(serve(
            listener,
            plain(None),
            handler,
            std::future::pending(),
        ));
        let answer = |request: &'static str| async move {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let mut stream = tokio::net::TcpStream::connect(address)
                .await
                .expect("connected");
            stream.write_all(request.as_bytes()).await.expect("sent");
            let mut answer = String::new();
            stream.read_to_string(&mut answer).await.expect("an answer");
            answer
        };
        let got = answer("GET /metrics HTTP/1.1\r\nhost: test\r\n\r\n").await;
        assert!(got.starts_with("HTTP/1.1 200 OK\r\n"), "{got}");
        assert!(
            got.contains(&format!("content-type: {OPENMETRICS}\r\n")),
            "{got}"
        );
        assert!(got.contains("controller_runtime_reconcile_total{"), "{got}");
        assert!(got.ends_with("# EOF\n"), "{got}");
        let got = answer("DELETE /metrics HTTP/1.1\r\nhost: test\r\n\r\n").await;
        assert!(got.starts_with("HTTP/1.1 405 "), "{got}");
    }

    /// Answer the reviews a metrics request causes: the TokenReview with `authenticated`, the
    /// SubjectAccessReview (when asked) with `allowed`; returns the access review asked.
    async fn reviews(
        mut handle: Handle<http::Request<Body>, http::Response<Body>>,
        authenticated: bool,
        allowed: bool,
    ) -> Option<SubjectAccessReview> {
        let (request, send) = handle.next_request().await?;
        assert!(
            request.uri().path().ends_with("/tokenreviews"),
            "{}",
            request.uri()
        );
        let body = request.into_body().collect_bytes().await.expect("a body");
        let mut review: TokenReview = serde_json::from_slice(&body).expect("a TokenReview");
        assert_eq!(review.spec.token, "secret");
        review.status = Some(k8s_openapi::api::authentication::v1::TokenReviewStatus {
            authenticated: Some(authenticated),
            user: Some(k8s_openapi::api::authentication::v1::UserInfo {
                username: Some("system:serviceaccount:monitoring:prometheus".into()),
                ..Default::default()
            }),
            ..Default::default()
        });
        let json = serde_json::to_vec(&review).expect("JSON");
        send.send_response(http::Response::new(Body::from(json)));
        let (request, send) = handle.next_request().await?;
        assert!(
            request.uri().path().ends_with("/subjectaccessreviews"),
            "{}",
            request.uri()
        );
        let body = request.into_body().collect_bytes().await.expect("a body");
        let mut access: SubjectAccessReview = serde_json::from_slice(&body).expect("a review");
        access.status = Some(
            k8s_openapi::api::authorization::v1::SubjectAccessReviewStatus {
                allowed,
                ..Default::default()
            },
        );
        let json = serde_json::to_vec(&access).expect("JSON");
        send.send_response(http::Response::new(Body::from(json)));
        Some(access)
    }

    fn bearer(header: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if !header.is_empty() {
            headers.insert(
                AUTHORIZATION,
                HeaderValue::from_str(header).expect("a header"),
            );
        }
        headers
    }

    async fn status(reviewer: &Reviewer, header: &str) -> StatusCode {
        match reviewer
            .authorize(&Method::GET, "/metrics", &bearer(header))
            .await
        {
            Ok(()) => StatusCode::OK,
            Err(reply) => reply.status(),
        }
    }

    /// A reviewer whose API server answers one request for the metrics (the reviews it needs),
    /// then nothing: the reviews of later requests fail.
    fn answering(
        authenticated: bool,
        allowed: bool,
    ) -> (
        Reviewer,
        tokio::task::JoinHandle<Option<SubjectAccessReview>>,
    ) {
        let (service, handle) =
            tower_test::mock::pair::<http::Request<Body>, http::Response<Body>>();
        let reviewer = Reviewer::new(Client::new(service, "default"));
        (
            reviewer,
            tokio::spawn(reviews(handle, authenticated, allowed)),
        )
    }

    async fn authorized(
        authenticated: bool,
        allowed: bool,
        header: &str,
    ) -> (StatusCode, Option<SubjectAccessReview>) {
        let (reviewer, server) = answering(authenticated, allowed);
        let status = status(&reviewer, header).await;
        drop(reviewer);
        (status, server.await.expect("the mock server"))
    }

    #[tokio::test]
    async fn a_token_the_api_server_authorizes_gets_the_metrics() {
        let (status, access) = authorized(true, true, "Bearer secret").await;
        assert_eq!(status, StatusCode::OK);
        let spec = access.expect("an access review").spec;
        let asked = spec.non_resource_attributes.expect("a non-resource URL");
        assert_eq!(asked.path.as_deref(), Some("/metrics"));
        assert_eq!(asked.verb.as_deref(), Some("get"));
        assert_eq!(
            spec.user.as_deref(),
            Some("system:serviceaccount:monitoring:prometheus")
        );
    }

    #[tokio::test]
    async fn a_token_without_access_is_forbidden() {
        let (status, _) = authorized(true, false, "Bearer secret").await;
        assert_eq!(status, StatusCode::FORBIDDEN);
    }

    #[tokio::test(start_paused = true)]
    async fn an_answer_is_remembered_a_little_while() {
        let (reviewer, server) = answering(true, true);
        assert_eq!(status(&reviewer, "Bearer secret").await, StatusCode::OK);
        server.await.expect("the mock server");
        // The API server answers nothing more: the next scrapes are let in without asking.
        assert_eq!(status(&reviewer, "Bearer secret").await, StatusCode::OK);
        tokio::time::advance(ALLOWED_TTL - Duration::from_secs(1)).await;
        assert_eq!(status(&reviewer, "Bearer secret").await, StatusCode::OK);
        // Another token is asked about.
        assert_eq!(
            status(&reviewer, "Bearer other").await,
            StatusCode::INTERNAL_SERVER_ERROR
        );
        // Once the answer is old, it is asked again.
        tokio::time::advance(Duration::from_secs(1)).await;
        assert_eq!(
            status(&reviewer, "Bearer secret").await,
            StatusCode::INTERNAL_SERVER_ERROR
        );

        let (reviewer, server) = answering(true, false);
        assert_eq!(
            status(&reviewer, "Bearer secret").await,
            StatusCode::FORBIDDEN
        );
        server.await.expect("the mock server");
        assert_eq!(
            status(&reviewer, "Bearer secret").await,
            StatusCode::FORBIDDEN
        );
        tokio::time::advance(REFUSED_TTL).await;
        assert_eq!(
            status(&reviewer, "Bearer secret").await,
            StatusCode::INTERNAL_SERVER_ERROR
        );
    }

    #[tokio::test]
    async fn a_failure_to_ask_is_not_remembered() {
        let (service, handle) =
            tower_test::mock::pair::<http::Request<Body>, http::Response<Body>>();
        let reviewer = Reviewer::new(Client::new(service, "default"));
        drop(handle);
        assert_eq!(
            status(&reviewer, "Bearer secret").await,
            StatusCode::INTERNAL_SERVER_ERROR
        );
        assert!(reviewer.decisions().is_empty());
    }

    #[tokio::test]
    async fn an_unknown_token_or_none_is_unauthorized() {
        let (status, access) = authorized(false, true, "Bearer secret").await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert!(
            access.is_none(),
            "no access review without an authenticated user"
        );
        let (status, _) = authorized(true, true, "").await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }
}
