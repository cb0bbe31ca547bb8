//! docbench-client, the throughput driver's compiled client loop (the program is
//! src/bin/docbench-client.rs: the protocol's handshake around [`driver::Loop`]).
//!
//! One worker process of `docbench run throughput` starts one of these for its clients when the
//! system offers a compiled session (today PostgreSQL through libpq, and the no-op target of
//! the driver's ceiling). It does what a pgbench `-j` thread does: each client has its own
//! connection and one operation in flight; one thread waits on all the sockets with epoll and
//! sends a client's next operation as soon as its answer is read (or at its intended start
//! under a rate). Per operation it keeps five integers; the Python worker that started it turns
//! them into HdrHistograms, so every figure is made by the same code whichever loop ran.
//!
//! Protocol, on stdin/stdout of the Python worker:
//!   stdin  line 1: the configuration (JSON, see `Config`); the password, if any, is in the
//!                  conninfo here and never on a command line;
//!   stdout line:   `ready <connect ns>,<connect ns>...` once every client has connected and
//!                  prepared its statements, or `failed <message>`;
//!   stdin  line 2: `go <start, CLOCK_MONOTONIC ns>`;
//!   stdout blocks: per progress interval `I`, slot u32, failed u64, n u64, then n ends, n
//!                  begins, n intended starts (only under a rate), n codes (i8), n counts (all
//!                  little-endian i64 but the codes): the operations that ended before the
//!                  interval's end; last `F`, u32 length, a JSON object (failures per
//!                  operation, first error, inserted, cpu_ns, operations_done, aborted).
//!
//! The sessions: [`pq::PgSession`] (libpq, opened at run time) and [`session::NoOpSession`]
//! (the ceiling). Adding a protocol means a [`session::Session`] here, a case in
//! [`open_sessions`] and a `compiled_client` in the system's `updates.py`.

pub mod driver;
pub mod pq;
pub mod session;

use std::collections::HashMap;

use serde::Deserialize;

use driver::monotonic_ns;
use pq::{PgSession, Pq};
use session::{NoOpSession, Session};

/// The first line on stdin, from compiled.py's `client_configuration`.
#[derive(Deserialize)]
pub struct Config {
    pub protocol: String,
    #[serde(default)]
    pub library: Vec<String>,
    #[serde(default)]
    pub conninfo: String,
    #[serde(default)]
    pub statements: HashMap<String, String>,
    pub client_ids: Vec<u64>,
    pub total_clients: u64,
    pub docs: u64,
    pub seed: u64,
    /// (operation name, weight) in code order: the codes are the indexes here.
    pub operations: Vec<(String, f64)>,
    pub distribution: String,
    pub warmup_ns: i64,
    pub duration_ns: i64,
    pub interval_ns: i64,
    pub intervals: usize,
    pub rate_per_client: Option<f64>,
}

/// The clients' sessions, in the order of `Config::client_ids`.
pub type Sessions = Vec<Box<dyn Session>>;

/// One session per client (connected, its statements prepared) and the time each took (ns).
pub fn open_sessions(config: &Config) -> Result<(Sessions, Vec<i64>), String> {
    let mut sessions: Vec<Box<dyn Session>> = Vec::new();
    let mut connect_ns = Vec::new();
    let pq: Option<&'static Pq> =
        if config.protocol == "libpq" { Some(Box::leak(Box::new(Pq::open(&config.library)?))) } else { None };
    for _ in &config.client_ids {
        let began = monotonic_ns();
        let session: Box<dyn Session> = match (config.protocol.as_str(), pq) {
            ("libpq", Some(pq)) => Box::new(PgSession::connect(pq, &config.conninfo, &config.statements)?),
            ("noop", _) => Box::new(NoOpSession::new()?),
            (other, _) => return Err(format!("unknown protocol {other}")),
        };
        connect_ns.push(monotonic_ns() - began);
        sessions.push(session);
    }
    Ok((sessions, connect_ns))
}
