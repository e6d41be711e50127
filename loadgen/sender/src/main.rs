//! The open-loop generator's sender: openloop.py fixes the schedule (every visit's intended
//! start, every reload's wait) and judges the result; this program only sends it, and keeps
//! every attempt. It reads the plan as JSON on stdin and writes the attempts as JSON on stdout.
//!
//! Why a compiled sender: through a failure storm (hundreds of connections opened and timed out
//! a second, 700 in flight) the Python event loop's own work per attempt made sends late
//! (docs/story.md, "How far to trust the figures"). Here an attempt is a few microseconds of
//! work: one TCP connection (the address resolved once, before the run), one HTTP/1.1 request
//! through hyper, read to the end, the connection closed; the user gives up at the intended
//! time + the timeout, however late the send left, and a user who gives up closes the
//! connection, as a browser tab does.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper::client::conn::http1;
use hyper::header::{CONNECTION, HOST};
use hyper::{Method, Request, Uri};
use hyper_util::rt::TokioIo;
use serde::{Deserialize, Serialize};
use tokio::net::TcpStream;

#[derive(Deserialize)]
struct Event {
    at: f64,
    method: String,
    url: String,
}

#[derive(Deserialize)]
struct Watch {
    name: String,
    url: String,
}

/// What openloop.py hands over: the run's clock and its schedule, fixed in advance.
#[derive(Deserialize)]
struct Plan {
    url: String,
    timeout: f64,
    // Second 0 of the run on the machine's monotonic clock (Python's time.monotonic()).
    t0_monotonic: f64,
    duration: f64,
    dry: bool,
    threads: usize,
    // (visit number, intended start of its first attempt) in seconds from second 0.
    visits: Vec<(u64, f64)>,
    // waits[v][n - 1]: how long visit v's user waits after failed attempt n before reloading;
    // its length + 1 is the number of attempts.
    waits: Vec<Vec<f64>>,
    events: Vec<Event>,
    watches: Vec<Watch>,
    watch_interval: f64,
    watch_timeout: f64,
    event_timeout: f64,
}

/// One attempt, as openloop.py's columns: visit, attempt, intended, sent, end, outcome,
/// status, detail.
type Row = (u64, u32, f64, f64, f64, &'static str, u16, String);

#[derive(Serialize)]
struct Output {
    engine: String,
    attempts: Vec<Row>,
    events: Vec<serde_json::Value>,
    watches: Vec<serde_json::Value>,
    peak_in_flight: usize,
    sent_all_s: f64,
    finished_s: f64,
}

/// A target: the address resolved once, and what goes in the request line and Host header.
#[derive(Clone)]
struct Target {
    addr: SocketAddr,
    authority: String,
    path: String,
}

struct Run {
    plan: Plan,
    page: Target,
    others: HashMap<String, Target>,
    rows: Mutex<Vec<Row>>,
    events: Mutex<Vec<serde_json::Value>>,
    watches: Mutex<Vec<serde_json::Value>>,
    in_flight: AtomicUsize,
    peak: AtomicUsize,
}

fn monotonic() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes into the timespec it is given and reads nothing else.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

impl Run {
    fn now(&self) -> f64 {
        monotonic() - self.plan.t0_monotonic
    }

    async fn sleep_until(&self, t: f64) {
        let delay = t - self.now();
        if delay > 0.0 {
            tokio::time::sleep(Duration::from_secs_f64(delay)).await;
        }
    }

    fn other(&self, url: &str) -> &Target {
        &self.others[url]
    }
}

async fn resolve(url: &str) -> Result<Target, String> {
    let uri: Uri = url.parse().map_err(|e| format!("{url}: {e}"))?;
    if uri.scheme_str() != Some("http") {
        return Err(format!("{url}: only http:// is sent by the compiled sender"));
    }
    let host = uri.host().ok_or_else(|| format!("{url}: no host"))?.to_string();
    let port = uri.port_u16().unwrap_or(80);
    let addr = tokio::net::lookup_host((host.as_str(), port))
        .await
        .map_err(|e| format!("{url}: {e}"))?
        .next()
        .ok_or_else(|| format!("{url}: no address for {host}"))?;
    let authority = uri.authority().map(|a| a.to_string()).unwrap_or(host);
    let path = uri.path_and_query().map(|p| p.to_string()).unwrap_or_else(|| "/".into());
    Ok(Target { addr, authority, path })
}

/// An answer: the status, whether the page was a lesser one (X-Degraded), the body.
type Answer = (u16, bool, Bytes);
/// No answer: (outcome, detail), as openloop.py's classify() names them.
type Failure = (&'static str, String);

fn io_outcome(e: &std::io::Error) -> &'static str {
    use std::io::ErrorKind::*;
    match e.kind() {
        ConnectionRefused => "refused",
        ConnectionReset | BrokenPipe | ConnectionAborted | UnexpectedEof => "reset",
        _ => "error",
    }
}

fn hyper_failure(e: hyper::Error) -> Failure {
    let text: String = e.to_string().chars().take(120).collect();
    if e.is_incomplete_message() || e.is_canceled() {
        return ("reset", text);
    }
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            let outcome = io_outcome(io);
            if outcome != "error" {
                return (outcome, text);
            }
        }
        source = s.source();
    }
    ("error", format!("hyper::Error: {e}").chars().take(160).collect())
}

/// One request on a connection of its own, closed when it ends (or when it is dropped).
async fn exchange(target: &Target, method: Method) -> Result<Answer, Failure> {
    let stream = TcpStream::connect(target.addr).await.map_err(|e| {
        let outcome = io_outcome(&e);
        let text = if outcome == "error" { format!("OSError: {e}") } else { e.to_string() };
        (outcome, text.chars().take(160).collect::<String>())
    })?;
    let _ = stream.set_nodelay(true);
    let (mut sender, conn) = http1::handshake(TokioIo::new(stream)).await.map_err(hyper_failure)?;
    let request = Request::builder()
        .method(method)
        .uri(target.path.as_str())
        .header(HOST, target.authority.as_str())
        .header(CONNECTION, "close")
        .body(Empty::<Bytes>::new())
        .map_err(|e| ("error", format!("http::Error: {e}")))?;
    let answer = async {
        let resp = sender.send_request(request).await.map_err(hyper_failure)?;
        let status = resp.status().as_u16();
        let degraded = resp.headers().contains_key("x-degraded");
        let body = resp.into_body().collect().await.map_err(hyper_failure)?.to_bytes();
        Ok::<Answer, Failure>((status, degraded, body))
    };
    tokio::pin!(conn, answer);
    // The connection is driven here, not spawned: when the user gives up this future is
    // dropped, and with it the socket.
    tokio::select! {
        biased;
        a = &mut answer => a,
        c = &mut conn => match c {
            Ok(()) => answer.await,
            Err(e) => Err(hyper_failure(e)),
        },
    }
}

async fn within(target: &Target, method: Method, seconds: f64) -> Result<Answer, Failure> {
    let limit = Duration::from_secs_f64(seconds.max(0.001));
    match tokio::time::timeout(limit, exchange(target, method)).await {
        Ok(r) => r,
        Err(_) => Err(("timeout", String::new())),
    }
}

/// (outcome, end) of one attempt.
async fn attempt(run: &Run, visit: u64, n: u32, intended: f64) -> (&'static str, f64) {
    let sent = run.now();
    if run.plan.dry {
        run.rows.lock().unwrap().push((visit, n, intended, sent, sent, "dry", 0, String::new()));
        return ("dry", sent);
    }
    let now = run.in_flight.fetch_add(1, Ordering::Relaxed) + 1;
    run.peak.fetch_max(now, Ordering::Relaxed);
    // The user gives up at the intended time + timeout, however late the send left.
    let result = within(&run.page, Method::GET, intended + run.plan.timeout - sent).await;
    let end = run.now();
    run.in_flight.fetch_sub(1, Ordering::Relaxed);
    let (outcome, status, detail) = match result {
        Ok((status, _, _)) if !(200..300).contains(&status) => ("status", status, String::new()),
        Ok((status, true, _)) => ("degraded", status, String::new()),
        Ok((status, false, _)) => ("ok", status, String::new()),
        Err((outcome, detail)) => (outcome, 0, detail),
    };
    run.rows.lock().unwrap().push((visit, n, intended, sent, end, outcome, status, detail));
    (outcome, end)
}

/// One user: the first attempt at its intended time, then reloads after failures.
async fn visit(run: Arc<Run>, index: usize) {
    let (number, start) = run.plan.visits[index];
    let waits = &run.plan.waits[index];
    let mut intended = start;
    for n in 1..=(waits.len() as u32 + 1) {
        run.sleep_until(intended).await;
        let (outcome, end) = attempt(&run, number, n, intended).await;
        if matches!(outcome, "ok" | "degraded" | "dry") || n as usize > waits.len() {
            return;
        }
        // The user notices at the end of this attempt, waits, and reloads the page.
        intended = end + waits[n as usize - 1];
    }
}

fn text(body: &Bytes, limit: usize) -> String {
    String::from_utf8_lossy(body).chars().take(limit).collect()
}

async fn event(run: Arc<Run>, index: usize) {
    let e = &run.plan.events[index];
    run.sleep_until(e.at).await;
    let sent = run.now();
    let method = Method::from_bytes(e.method.as_bytes()).unwrap_or(Method::POST);
    let (status, body) = match within(run.other(&e.url), method, run.plan.event_timeout).await {
        Ok((status, _, body)) => (status, text(&body, 500)),
        Err((outcome, detail)) => (0, format!("{outcome}: {detail}")),
    };
    let record = serde_json::json!({"at": e.at, "sent": sent, "method": e.method, "url": e.url,
                                    "status": status, "body": body, "end": run.now()});
    run.events.lock().unwrap().push(record);
}

async fn watch(run: Arc<Run>, index: usize) {
    let w = &run.plan.watches[index];
    let mut tick = 0u64;
    loop {
        let t = tick as f64 * run.plan.watch_interval;
        if t > run.plan.duration {
            break;
        }
        run.sleep_until(t).await;
        let sent = run.now();
        if sent > run.plan.duration {
            break;
        }
        let (status, body) = match within(run.other(&w.url), Method::GET, run.plan.watch_timeout)
            .await
        {
            Ok((status, _, body)) => (status, text(&body, usize::MAX)),
            Err((outcome, detail)) => (0, format!("{outcome}: {detail}")),
        };
        let record = serde_json::json!({"name": w.name, "t": sent, "status": status, "body": body});
        run.watches.lock().unwrap().push(record);
        tick += 1;
    }
}

async fn main_async(plan: Plan) -> Result<Output, String> {
    let page = resolve(&plan.url).await?;
    let mut others = HashMap::new();
    for url in plan.events.iter().map(|e| &e.url).chain(plan.watches.iter().map(|w| &w.url)) {
        others.insert(url.clone(), resolve(url).await?);
    }
    let run = Arc::new(Run {
        plan,
        page,
        others,
        rows: Mutex::new(Vec::new()),
        events: Mutex::new(Vec::new()),
        watches: Mutex::new(Vec::new()),
        in_flight: AtomicUsize::new(0),
        peak: AtomicUsize::new(0),
    });
    let side: Vec<_> = (0..run.plan.events.len())
        .map(|i| tokio::spawn(event(run.clone(), i)))
        .chain((0..run.plan.watches.len()).map(|i| tokio::spawn(watch(run.clone(), i))))
        .collect();
    let visits: Vec<_> = (0..run.plan.visits.len())
        .map(|i| tokio::spawn(visit(run.clone(), i)))
        .collect();
    let last_start = run.plan.visits.last().map(|v| v.1).unwrap_or(0.0);
    run.sleep_until(last_start).await;
    let sent_all = run.now();
    for task in visits.into_iter().chain(side) {
        task.await.map_err(|e| format!("a task failed: {e}"))?;
    }
    let finished = run.now();
    let mut rows = std::mem::take(&mut *run.rows.lock().unwrap());
    let events = std::mem::take(&mut *run.events.lock().unwrap());
    let watches = std::mem::take(&mut *run.watches.lock().unwrap());
    rows.sort_by(|a, b| a.2.total_cmp(&b.2).then(a.0.cmp(&b.0)).then(a.1.cmp(&b.1)));
    Ok(Output {
        engine: format!("tokio {} threads", run.plan.threads),
        attempts: rows,
        events,
        watches,
        peak_in_flight: run.peak.load(Ordering::Relaxed),
        sent_all_s: sent_all,
        finished_s: finished,
    })
}

fn main() {
    let plan: Plan = match serde_json::from_reader(std::io::stdin().lock()) {
        Ok(plan) => plan,
        Err(e) => {
            eprintln!("openloop-sender: the plan on stdin is not readable: {e}");
            std::process::exit(2);
        }
    };
    let runtime = if plan.threads <= 1 {
        tokio::runtime::Builder::new_current_thread().enable_all().build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(plan.threads)
            .enable_all()
            .build()
    };
    let result = runtime.map_err(|e| e.to_string()).and_then(|rt| rt.block_on(main_async(plan)));
    match result {
        Ok(output) => {
            let stdout = std::io::stdout().lock();
            if let Err(e) = serde_json::to_writer(stdout, &output) {
                eprintln!("openloop-sender: cannot write the result: {e}");
                std::process::exit(1);
            }
        }
        Err(e) => {
            eprintln!("openloop-sender: {e}");
            std::process::exit(2);
        }
    }
}
