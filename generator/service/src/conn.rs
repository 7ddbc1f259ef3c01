//! Serving connections: HTTP/1.1 (hyper) with a cap on open connections and
//! deadlines on each one, so slow or idle clients cannot hold the server:
//!
//! - a new connection that sends nothing within the first-byte timeout (a
//!   few seconds) is closed, and one kept alive after a response is closed
//!   when no byte comes for the idle timeout;
//! - one client address holds at most `max_connections_per_client` of the
//!   connections: past that its new ones are closed at once, so one host
//!   cannot take every slot (`/healthz` included) from the others;
//! - once a request's first byte is in, its headers must be complete within
//!   the header timeout (a slowloris trickling bytes is closed);
//! - a response the client stops reading is dropped when no byte can be
//!   sent for the idle timeout;
//! - every response says `Keep-Alive: timeout=<idle>`, so clients that
//!   pool connections stop reusing one before the server closes it;
//! - the request body has its own deadline ([`crate::api`] reads it whole,
//!   within the body timeout, or answers 408);
//! - a connection closed while the client is still sending (a 413 answered
//!   from the `Content-Length` alone, say) lingers: the server sends FIN and
//!   discards what still arrives, for a bounded time, so the client's TCP
//!   stack does not get a reset that destroys the response before it is
//!   read (nginx's lingering close).
//!
//! Past the connection cap, new connections wait in the listen backlog
//! until one closes. Shutdown stops accepting and gives open requests a
//! grace period.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use http_body_util::BodyExt as _;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpListener;
use tokio::time::{Instant, Sleep};
use tower::ServiceExt as _;

/// Connection limits (`braid serve` flags).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// From a request's first byte to the end of its headers.
    pub header_timeout: Duration,
    /// No byte received while waiting for a request, or none sent while
    /// writing a response.
    pub idle_timeout: Duration,
    /// A new connection's first byte, at most this long after it opens.
    pub first_byte_timeout: Duration,
    /// Open connections at most.
    pub max_connections: usize,
    /// Open connections of one client address at most.
    pub max_connections_per_client: usize,
}

/// How long open requests may finish after shutdown begins.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// A closing connection discards what the client still sends until it
/// closes too, no byte comes for [`LINGER_IDLE`], or [`LINGER_MAX`] passed.
const LINGER_IDLE: Duration = Duration::from_secs(2);
const LINGER_MAX: Duration = Duration::from_secs(10);

/// What one connection is doing, shared by its socket and its requests.
#[derive(Debug)]
struct Activity {
    /// Requests whose response is not fully sent.
    in_flight: usize,
    /// When the connection last became idle (opened, or a response ended).
    idle_since: Instant,
    /// When the first byte of the next request arrived.
    request_started: Option<Instant>,
    /// Whether any request began on this connection.
    served: bool,
    /// The task last waiting to read: woken when the connection becomes
    /// idle, so that it sets the idle deadline (hyper would otherwise wait
    /// for bytes without polling again).
    reader: Option<std::task::Waker>,
}

type Shared = Arc<Mutex<Activity>>;

fn lock(a: &Shared) -> std::sync::MutexGuard<'_, Activity> {
    a.lock().unwrap_or_else(|e| e.into_inner())
}

/// Marks a request in flight until dropped (with its response body).
struct InFlight(Shared);

impl InFlight {
    fn start(shared: &Shared) -> Self {
        let mut a = lock(shared);
        a.in_flight += 1;
        a.request_started = None;
        Self(shared.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut a = lock(&self.0);
        a.in_flight -= 1;
        if a.in_flight == 0 {
            a.idle_since = Instant::now();
            a.request_started = None;
            if let Some(reader) = a.reader.take() {
                reader.wake();
            }
        }
    }
}

/// A socket whose reads and writes fail with `TimedOut` past the deadlines.
struct Guarded<S> {
    /// The client's count of open connections, given back before our FIN
    /// is sent (in `poll_shutdown`, or by dropping: fields drop in order):
    /// a client that sees the close and connects again is never refused for
    /// the connection just closed, even while this one still lingers.
    client: Option<Client>,
    io: S,
    shared: Shared,
    limits: Limits,
    read_timer: Pin<Box<Sleep>>,
    write_timer: Pin<Box<Sleep>>,
    write_stalled_since: Option<Instant>,
    /// Once our side is shut down: when lingering began and when the last
    /// byte was discarded.
    linger: Option<(Instant, Instant)>,
}

impl<S> Guarded<S> {
    fn new(io: S, client: Client, shared: Shared, limits: Limits) -> Self {
        let far = Instant::now() + Duration::from_secs(86_400 * 365);
        Self {
            client: Some(client),
            io,
            shared,
            limits,
            read_timer: Box::pin(tokio::time::sleep_until(far)),
            write_timer: Box::pin(tokio::time::sleep_until(far)),
            write_stalled_since: None,
            linger: None,
        }
    }
}

/// Polls `timer` set to `deadline`: an error once it has passed.
fn expired(timer: &mut Pin<Box<Sleep>>, deadline: Instant, cx: &mut Context<'_>, what: &str) -> Option<std::io::Error> {
    if timer.deadline() != deadline {
        timer.as_mut().reset(deadline);
    }
    timer.as_mut().poll(cx).is_ready().then(|| std::io::Error::new(std::io::ErrorKind::TimedOut, what.to_string()))
}

impl<S: AsyncRead + Unpin> AsyncRead for Guarded<S> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        match Pin::new(&mut this.io).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before {
                    let mut a = lock(&this.shared);
                    if a.in_flight == 0 && a.request_started.is_none() {
                        a.request_started = Some(Instant::now());
                        a.served = true;
                    }
                }
                Poll::Ready(Ok(()))
            }
            Poll::Pending => {
                let deadline = {
                    let mut a = lock(&this.shared);
                    a.reader = Some(cx.waker().clone());
                    match (a.in_flight, a.request_started) {
                        // A handler is working, or the body is being read
                        // (under the body timeout): no read deadline here.
                        (n, _) if n > 0 => None,
                        (_, Some(started)) => Some((started + this.limits.header_timeout, "request headers too slow")),
                        (_, None) if !a.served => {
                            let wait = this.limits.first_byte_timeout.min(this.limits.idle_timeout);
                            Some((a.idle_since + wait, "no request on a new connection"))
                        }
                        (_, None) => Some((a.idle_since + this.limits.idle_timeout, "idle connection")),
                    }
                };
                if let Some((deadline, what)) = deadline {
                    if let Some(e) = expired(&mut this.read_timer, deadline, cx, what) {
                        return Poll::Ready(Err(e));
                    }
                }
                Poll::Pending
            }
            other => other,
        }
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for Guarded<S> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        match Pin::new(&mut this.io).poll_write(cx, data) {
            Poll::Pending => {
                let since = *this.write_stalled_since.get_or_insert_with(Instant::now);
                if let Some(e) =
                    expired(&mut this.write_timer, since + this.limits.idle_timeout, cx, "client stopped reading")
                {
                    return Poll::Ready(Err(e));
                }
                Poll::Pending
            }
            ready => {
                this.write_stalled_since = None;
                ready
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    /// Sends FIN, then lingers (see the module docs). Closing a socket
    /// with unread bytes makes the kernel send RST, and a client still
    /// writing its body then loses the response it was sent.
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let (started, mut last) = match this.linger {
            Some(linger) => linger,
            None => {
                this.client = None;
                std::task::ready!(Pin::new(&mut this.io).poll_shutdown(cx))?;
                let now = Instant::now();
                *this.linger.insert((now, now))
            }
        };
        let mut scratch = [0u8; 16 * 1024];
        loop {
            let mut buf = ReadBuf::new(&mut scratch);
            match Pin::new(&mut this.io).poll_read(cx, &mut buf) {
                // The client closed (or reset): done.
                Poll::Ready(Ok(())) if buf.filled().is_empty() => return Poll::Ready(Ok(())),
                Poll::Ready(Err(_)) => return Poll::Ready(Ok(())),
                Poll::Ready(Ok(())) => last = Instant::now(),
                Poll::Pending => {
                    this.linger = Some((started, last));
                    let deadline = (last + LINGER_IDLE).min(started + LINGER_MAX);
                    return match expired(&mut this.read_timer, deadline, cx, "lingering") {
                        Some(_) => Poll::Ready(Ok(())),
                        None => Poll::Pending,
                    };
                }
            }
            if last >= started + LINGER_MAX {
                return Poll::Ready(Ok(()));
            }
        }
    }
}

/// `Keep-Alive: timeout=N`: tells clients that pool connections (undici,
/// browsers) when the server will close an idle one, so they stop reusing
/// it before then instead of racing the close with a new request.
fn keep_alive_header(idle: Duration) -> axum::http::HeaderValue {
    axum::http::HeaderValue::from_str(&format!("timeout={}", idle.as_secs().max(1))).expect("ASCII digits")
}

/// Open connections per client address.
#[derive(Default, Clone)]
struct Clients(Arc<Mutex<std::collections::HashMap<std::net::IpAddr, usize>>>);

/// One of a client's connections, counted until dropped.
struct Client {
    clients: Clients,
    ip: std::net::IpAddr,
}

impl Clients {
    /// Counts a new connection from `ip`, unless it holds `max` already.
    fn admit(&self, ip: std::net::IpAddr, max: usize) -> Option<Client> {
        let mut open = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let count = open.entry(ip).or_default();
        if *count >= max.max(1) {
            return None;
        }
        *count += 1;
        Some(Client { clients: self.clone(), ip })
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let mut open = self.clients.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(count) = open.get_mut(&self.ip) {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.ip);
            }
        }
    }
}

/// Accepts connections on `listener` and serves `app` on each, until
/// `shutdown` completes; then waits (at most [`SHUTDOWN_GRACE`]) for open
/// requests.
pub async fn serve(listener: TcpListener, app: Router, limits: Limits, shutdown: impl Future<Output = ()>) {
    let slots = Arc::new(tokio::sync::Semaphore::new(limits.max_connections.max(1)));
    let clients = Clients::default();
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let slot = tokio::select! {
            biased;
            () = &mut shutdown => break,
            slot = slots.clone().acquire_owned() => slot.expect("the semaphore is never closed"),
        };
        let stream = tokio::select! {
            biased;
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => match clients.admit(peer.ip(), limits.max_connections_per_client) {
                    Some(client) => (stream, client),
                    None => {
                        tracing::debug!("{peer}: closed at once, its address holds {} connections", limits.max_connections_per_client);
                        continue;
                    }
                },
                Err(e) => {
                    // Out of file descriptors, say: let some close.
                    tracing::warn!("accepting a connection: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        let (stream, client) = stream;
        let _ = stream.set_nodelay(true);
        let shared: Shared = Arc::new(Mutex::new(Activity {
            in_flight: 0,
            idle_since: Instant::now(),
            request_started: None,
            served: false,
            reader: None,
        }));
        let io = TokioIo::new(Guarded::new(stream, client, shared.clone(), limits));
        let app = app.clone();
        let keep_alive = keep_alive_header(limits.idle_timeout);
        let service = hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
            let in_flight = InFlight::start(&shared);
            let app = app.clone();
            let keep_alive = keep_alive.clone();
            async move {
                let Ok(mut response) = app.oneshot(request.map(axum::body::Body::new)).await;
                response.headers_mut().insert(axum::http::header::HeaderName::from_static("keep-alive"), keep_alive);
                // The request stays in flight until its body is sent (or dropped).
                Ok::<_, Infallible>(response.map(|body| {
                    axum::body::Body::new(body.map_frame(move |frame| {
                        let _ = &in_flight;
                        frame
                    }))
                }))
            }
        });
        let connection = hyper::server::conn::http1::Builder::new().serve_connection(io, service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!("connection closed: {e}");
            }
            drop(slot);
        });
    }
    drop(listener);
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown()).await.is_err() {
        tracing::warn!("some requests were still open {} s after shutdown began", SHUTDOWN_GRACE.as_secs());
    }
}
