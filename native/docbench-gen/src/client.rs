//! docbench-client: the throughput driver's compiled client loop.
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
//! libpq is opened at run time (dlopen) from the paths the configuration lists, so the build
//! needs no PostgreSQL headers and the same library as psycopg's can be used.

use serde::Deserialize;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::cmp::Reverse;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::os::fd::FromRawFd;

#[derive(Deserialize)]
struct Config {
    protocol: String,
    #[serde(default)]
    library: Vec<String>,
    #[serde(default)]
    conninfo: String,
    #[serde(default)]
    statements: HashMap<String, String>,
    client_ids: Vec<u64>,
    total_clients: u64,
    docs: u64,
    seed: u64,
    /// (operation name, weight) in code order: the codes are the indexes here.
    operations: Vec<(String, f64)>,
    distribution: String,
    warmup_ns: i64,
    duration_ns: i64,
    interval_ns: i64,
    intervals: usize,
    rate_per_client: Option<f64>,
}

// ----- random numbers and keys (the Python driver's definitions) -------------------------------

struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        let mut rng = Rng(seed ^ 0x9E37_79B9_7F4A_7C15);
        rng.next_u64();
        rng
    }
    /// splitmix64: fast, and enough for choosing keys and operations.
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

const KEY_MODULUS: u128 = 100_000_000_000_000_000_000;
const KEY_MULTIPLIER: u128 = 6_364_136_223_846_793_007 % KEY_MODULUS;
const FIELD_LENGTH: usize = 160;
const FIELD_COUNT: usize = 10;
const VALUE_POOL: usize = 4096;
const ZIPFIAN_THETA: f64 = 0.99;

/// contracts/ycsb.py's key_of, NUL-terminated for libpq.
fn key_of(index: u64, seed: u64) -> Vec<u8> {
    let offset = (seed as u128 * 1_442_695_040_888_963_407u128) % KEY_MODULUS;
    let number = (index as u128 * KEY_MULTIPLIER + offset) % KEY_MODULUS;
    format!("user{number:020}\0").into_bytes()
}

fn fnv1a_64(mut value: u64) -> u64 {
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for _ in 0..8 {
        h ^= value & 0xFF;
        h = h.wrapping_mul(0x100_0000_01B3);
        value >>= 8;
    }
    h
}

/// uniform, or YCSB's scrambled zipfian (contracts/ycsb.py's ZipfianChooser).
enum Keys {
    Uniform { items: u64 },
    Zipfian { items: u64, zetan: f64, eta: f64, alpha: f64 },
}

impl Keys {
    fn new(distribution: &str, items: u64) -> Result<Keys, String> {
        match distribution {
            "uniform" => Ok(Keys::Uniform { items }),
            "zipfian" => {
                let theta = ZIPFIAN_THETA;
                let zetan: f64 = (1..=items).map(|i| 1.0 / (i as f64).powf(theta)).sum();
                let zeta2 = 1.0 + 1.0 / 2f64.powf(theta);
                let eta = (1.0 - (2.0 / items as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
                Ok(Keys::Zipfian { items, zetan, eta, alpha: 1.0 / (1.0 - theta) })
            }
            other => Err(format!("unknown distribution {other}")),
        }
    }
    fn next_index(&self, rng: &mut Rng) -> u64 {
        match *self {
            Keys::Uniform { items } => ((rng.unit() * items as f64) as u64).min(items - 1),
            Keys::Zipfian { items, zetan, eta, alpha } => {
                let u = rng.unit();
                let uz = u * zetan;
                let rank = if uz < 1.0 {
                    0
                } else if uz < 1.0 + 0.5f64.powf(ZIPFIAN_THETA) {
                    1
                } else {
                    ((items as f64 * (eta * u - eta + 1.0).powf(alpha)) as u64).min(items - 1)
                };
                fnv1a_64(rank) % items
            }
        }
    }
}

fn random_text(rng: &mut Rng, length: usize) -> Vec<u8> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut text: Vec<u8> = (0..length).map(|_| ALPHABET[(rng.next_u64() >> 58) as usize]).collect();
    text.push(0);
    text
}

// ----- sessions ------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Read,
    Update,
    Insert,
    ReadModifyWrite,
}

const STATEMENT_READ: usize = 0;
const STATEMENT_UPDATE: usize = 1;
const STATEMENT_INSERT: usize = 2;

trait Session {
    fn fd(&self) -> c_int;
    /// Send one statement (parameters NUL-terminated) without waiting for the answer.
    fn send(&mut self, statement: usize, params: &[&[u8]]) -> Result<(), String>;
    /// What has arrived: None while the answer is incomplete, else its count.
    fn receive(&mut self) -> Result<Option<i64>, String>;
    fn broken(&self) -> bool;
}

type PGconn = c_void;
type PGresult = c_void;

/// The libpq calls pgbench makes, resolved with dlsym.
struct Pq {
    connectdb: unsafe extern "C" fn(*const c_char) -> *mut PGconn,
    status: unsafe extern "C" fn(*const PGconn) -> c_int,
    error_message: unsafe extern "C" fn(*const PGconn) -> *const c_char,
    prepare: unsafe extern "C" fn(*mut PGconn, *const c_char, *const c_char, c_int, *const u32) -> *mut PGresult,
    result_status: unsafe extern "C" fn(*const PGresult) -> c_int,
    result_error_message: unsafe extern "C" fn(*const PGresult) -> *const c_char,
    clear: unsafe extern "C" fn(*mut PGresult),
    set_nonblocking: unsafe extern "C" fn(*mut PGconn, c_int) -> c_int,
    socket: unsafe extern "C" fn(*const PGconn) -> c_int,
    send_query_prepared: unsafe extern "C" fn(*mut PGconn, *const c_char, c_int, *const *const c_char,
                                              *const c_int, *const c_int, c_int) -> c_int,
    flush: unsafe extern "C" fn(*mut PGconn) -> c_int,
    consume_input: unsafe extern "C" fn(*mut PGconn) -> c_int,
    is_busy: unsafe extern "C" fn(*mut PGconn) -> c_int,
    get_result: unsafe extern "C" fn(*mut PGconn) -> *mut PGresult,
    ntuples: unsafe extern "C" fn(*const PGresult) -> c_int,
    cmd_tuples: unsafe extern "C" fn(*mut PGresult) -> *const c_char,
    finish: unsafe extern "C" fn(*mut PGconn),
}

const PGRES_COMMAND_OK: c_int = 1;
const PGRES_TUPLES_OK: c_int = 2;
const CONNECTION_OK: c_int = 0;

impl Pq {
    fn open(candidates: &[String]) -> Result<Pq, String> {
        let mut tried = Vec::new();
        for path in candidates {
            let name = CString::new(path.as_str()).map_err(|e| e.to_string())?;
            let handle = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
            if handle.is_null() {
                tried.push(path.clone());
                continue;
            }
            return unsafe { Pq::resolve(handle) };
        }
        Err(format!("no libpq could be opened (tried {})", tried.join(", ")))
    }

    unsafe fn resolve(handle: *mut c_void) -> Result<Pq, String> {
        macro_rules! symbol {
            ($name:literal) => {{
                let name = concat!($name, "\0");
                let address = libc::dlsym(handle, name.as_ptr() as *const c_char);
                if address.is_null() {
                    return Err(format!("libpq has no {}", $name));
                }
                std::mem::transmute(address)
            }};
        }
        Ok(Pq {
            connectdb: symbol!("PQconnectdb"),
            status: symbol!("PQstatus"),
            error_message: symbol!("PQerrorMessage"),
            prepare: symbol!("PQprepare"),
            result_status: symbol!("PQresultStatus"),
            result_error_message: symbol!("PQresultErrorMessage"),
            clear: symbol!("PQclear"),
            set_nonblocking: symbol!("PQsetnonblocking"),
            socket: symbol!("PQsocket"),
            send_query_prepared: symbol!("PQsendQueryPrepared"),
            flush: symbol!("PQflush"),
            consume_input: symbol!("PQconsumeInput"),
            is_busy: symbol!("PQisBusy"),
            get_result: symbol!("PQgetResult"),
            ntuples: symbol!("PQntuples"),
            cmd_tuples: symbol!("PQcmdTuples"),
            finish: symbol!("PQfinish"),
        })
    }
}

fn text_of(pointer: *const c_char) -> String {
    if pointer.is_null() {
        return String::new();
    }
    unsafe { CStr::from_ptr(pointer) }.to_string_lossy().trim().to_string()
}

struct PgSession {
    pq: &'static Pq,
    conn: *mut PGconn,
    reading: bool,
    pending: *mut PGresult,
}

const STATEMENT_NAMES: [&[u8]; 3] = [b"docbench_read\0", b"docbench_update\0", b"docbench_insert\0"];
const STATEMENT_KEYS: [&str; 3] = ["read", "update", "insert"];

impl PgSession {
    fn connect(pq: &'static Pq, conninfo: &str, statements: &HashMap<String, String>) -> Result<PgSession, String> {
        let info = CString::new(conninfo).map_err(|e| e.to_string())?;
        let conn = unsafe { (pq.connectdb)(info.as_ptr()) };
        let session = PgSession { pq, conn, reading: false, pending: std::ptr::null_mut() };
        if conn.is_null() || unsafe { (pq.status)(conn) } != CONNECTION_OK {
            return Err(format!("connection failed: {}", text_of(unsafe { (pq.error_message)(conn) })));
        }
        for (number, key) in STATEMENT_KEYS.iter().enumerate() {
            let Some(sql) = statements.get(*key) else { continue };
            let sql = CString::new(sql.as_str()).map_err(|e| e.to_string())?;
            let result = unsafe {
                (pq.prepare)(conn, STATEMENT_NAMES[number].as_ptr() as *const c_char, sql.as_ptr(), 0,
                             std::ptr::null())
            };
            let status = unsafe { (pq.result_status)(result) };
            let message = text_of(unsafe { (pq.result_error_message)(result) });
            unsafe { (pq.clear)(result) };
            if status != PGRES_COMMAND_OK {
                return Err(format!("prepare {key}: {message}"));
            }
        }
        unsafe { (pq.set_nonblocking)(conn, 1) };
        Ok(session)
    }

    fn flush_rest(&mut self) -> Result<(), String> {
        loop {
            match unsafe { (self.pq.flush)(self.conn) } {
                0 => return Ok(()),
                1 => {
                    let mut fds = libc::pollfd { fd: self.fd(), events: libc::POLLOUT, revents: 0 };
                    unsafe { libc::poll(&mut fds, 1, 1000) };
                }
                _ => return Err(self.connection_error()),
            }
        }
    }

    fn connection_error(&self) -> String {
        text_of(unsafe { (self.pq.error_message)(self.conn) })
    }
}

impl Session for PgSession {
    fn fd(&self) -> c_int {
        unsafe { (self.pq.socket)(self.conn) }
    }

    fn send(&mut self, statement: usize, params: &[&[u8]]) -> Result<(), String> {
        let values: [*const c_char; 3] = std::array::from_fn(|i| {
            params.get(i).map_or(std::ptr::null(), |p| p.as_ptr() as *const c_char)
        });
        let sent = unsafe {
            (self.pq.send_query_prepared)(self.conn, STATEMENT_NAMES[statement].as_ptr() as *const c_char,
                                          params.len() as c_int, values.as_ptr(), std::ptr::null(),
                                          std::ptr::null(), 0)
        };
        if sent == 0 {
            return Err(self.connection_error());
        }
        self.reading = statement == STATEMENT_READ;
        self.flush_rest()
    }

    fn receive(&mut self) -> Result<Option<i64>, String> {
        let pq = self.pq;
        if unsafe { (pq.consume_input)(self.conn) } == 0 {
            return Err(self.connection_error());
        }
        while unsafe { (pq.is_busy)(self.conn) } == 0 {
            let result = unsafe { (pq.get_result)(self.conn) };
            if result.is_null() {
                // The command's end: its result came before.
                let done = std::mem::replace(&mut self.pending, std::ptr::null_mut());
                if done.is_null() {
                    return Err("no result".to_string());
                }
                let status = unsafe { (pq.result_status)(done) };
                let outcome = if status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK {
                    Err(text_of(unsafe { (pq.result_error_message)(done) }))
                } else if self.reading {
                    Ok(Some(unsafe { (pq.ntuples)(done) } as i64))
                } else {
                    let text = text_of(unsafe { (pq.cmd_tuples)(done) });
                    Ok(Some(text.parse::<i64>().unwrap_or(0)))
                };
                unsafe { (pq.clear)(done) };
                return outcome;
            }
            let previous = std::mem::replace(&mut self.pending, result);
            if !previous.is_null() {
                unsafe { (pq.clear)(previous) };
            }
        }
        Ok(None)
    }

    fn broken(&self) -> bool {
        unsafe { (self.pq.status)(self.conn) != CONNECTION_OK }
    }
}

impl Drop for PgSession {
    fn drop(&mut self) {
        unsafe {
            if !self.pending.is_null() {
                (self.pq.clear)(self.pending);
            }
            if !self.conn.is_null() {
                (self.pq.finish)(self.conn);
            }
        }
    }
}

/// The driver's ceiling: an eventfd written by the request and read as the answer.
struct NoOpSession {
    fd: c_int,
}

impl NoOpSession {
    fn new() -> Result<NoOpSession, String> {
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err("eventfd failed".to_string());
        }
        Ok(NoOpSession { fd })
    }
}

impl Session for NoOpSession {
    fn fd(&self) -> c_int {
        self.fd
    }
    fn send(&mut self, _statement: usize, _params: &[&[u8]]) -> Result<(), String> {
        let one: u64 = 1;
        unsafe { libc::write(self.fd, &one as *const u64 as *const c_void, 8) };
        Ok(())
    }
    fn receive(&mut self) -> Result<Option<i64>, String> {
        let mut value: u64 = 0;
        unsafe { libc::read(self.fd, &mut value as *mut u64 as *mut c_void, 8) };
        Ok(Some(1))
    }
    fn broken(&self) -> bool {
        false
    }
}

impl Drop for NoOpSession {
    fn drop(&mut self) {
        unsafe { libc::close(self.fd) };
    }
}

// ----- the loop ------------------------------------------------------------------------------

fn monotonic_ns() -> i64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

fn clock_ns(clock: libc::clockid_t) -> i64 {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe { libc::clock_gettime(clock, &mut now) };
    now.tv_sec * 1_000_000_000 + now.tv_nsec
}

struct Client {
    id: u64,
    session: Box<dyn Session>,
    rng: Rng,
    keys_rng: Rng,
    inserted: u64,
    inserted_ok: u64,
    code: usize,
    key: Vec<u8>,
    second_step: bool,
    begin: i64,
    intended: i64,
    waiting: bool,
    gone: bool,
}

struct Loop {
    config: Config,
    kinds: Vec<Kind>,
    cumulative: Vec<f64>,
    keys: Keys,
    fields: Vec<Vec<u8>>,
    values: Vec<Vec<u8>>,
    clients: Vec<Client>,
    epoll: c_int,
    start_ns: i64,
    warm_end: i64,
    end: i64,
    scheduled: bool,
    ends: Vec<i64>,
    begins: Vec<i64>,
    intendeds: Vec<i64>,
    codes: Vec<i8>,
    counts: Vec<i64>,
    in_flight: usize,
    ready: VecDeque<usize>,
    timers: BinaryHeap<Reverse<(i64, usize)>>,
    interval_failed: Vec<u64>,
    failed: Vec<u64>,
    first_error: Vec<Option<String>>,
    operations_done: u64,
    aborted: u64,
    out: BufWriter<File>,
}

fn kind_of(name: &str) -> Result<Kind, String> {
    match name {
        "read" => Ok(Kind::Read),
        "update" => Ok(Kind::Update),
        "insert" => Ok(Kind::Insert),
        "read-modify-write" => Ok(Kind::ReadModifyWrite),
        other => Err(format!("unknown operation {other}")),
    }
}

impl Loop {
    fn new(config: Config, sessions: Vec<Box<dyn Session>>, out: BufWriter<File>) -> Result<Loop, String> {
        let kinds = config.operations.iter().map(|(name, _)| kind_of(name)).collect::<Result<Vec<_>, _>>()?;
        let mut total = 0.0;
        let cumulative = config.operations.iter().map(|(_, w)| { total += w; total }).collect();
        let keys = Keys::new(&config.distribution, config.docs.max(1))?;
        let mut pool_rng = Rng::new(config.seed.wrapping_mul(104_729).wrapping_add(config.client_ids[0]));
        let values = (0..VALUE_POOL).map(|_| random_text(&mut pool_rng, FIELD_LENGTH)).collect();
        let fields = (1..=FIELD_COUNT).map(|n| format!("field{n}\0").into_bytes()).collect();
        let clients = config.client_ids.iter().zip(sessions).map(|(&id, session)| {
            let seed = config.seed.wrapping_mul(7919).wrapping_add(id);
            Client { id, session, rng: Rng::new(seed), keys_rng: Rng::new(seed.wrapping_add(2)),
                     inserted: 0, inserted_ok: 0, code: 0, key: Vec::new(), second_step: false,
                     begin: 0, intended: 0, waiting: false, gone: false }
        }).collect();
        let operations = config.operations.len();
        let scheduled = config.rate_per_client.is_some();
        Ok(Loop { kinds, cumulative, keys, fields, values, clients, epoll: -1, start_ns: 0, warm_end: 0,
                  end: 0, scheduled, ends: Vec::new(), begins: Vec::new(), intendeds: Vec::new(),
                  codes: Vec::new(), counts: Vec::new(), in_flight: 0, ready: VecDeque::new(),
                  timers: BinaryHeap::new(), interval_failed: vec![0; config.intervals.max(1)],
                  failed: vec![0; operations], first_error: vec![None; operations], operations_done: 0,
                  aborted: 0, out, config })
    }

    fn run(&mut self, start_ns: i64) -> Result<(), String> {
        self.start_ns = start_ns;
        self.warm_end = start_ns + self.config.warmup_ns;
        self.end = self.warm_end + self.config.duration_ns;
        self.epoll = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        for (index, client) in self.clients.iter().enumerate() {
            let mut event = libc::epoll_event { events: libc::EPOLLIN as u32, u64: index as u64 };
            unsafe { libc::epoll_ctl(self.epoll, libc::EPOLL_CTL_ADD, client.session.fd(), &mut event) };
        }
        let delay = start_ns - monotonic_ns();
        if delay > 0 {
            std::thread::sleep(std::time::Duration::from_nanos(delay as u64));
        }
        let cpu_before = clock_ns(libc::CLOCK_PROCESS_CPUTIME_ID);
        let last_slot = self.interval_failed.len() - 1;
        let slot = if self.scheduled { self.scheduled_loop(last_slot)? } else { self.closed_loop(last_slot)? };
        let cpu = clock_ns(libc::CLOCK_PROCESS_CPUTIME_ID) - cpu_before;
        for remaining in slot..=last_slot {
            let upto = if remaining == last_slot { None } else {
                Some(self.start_ns + (remaining as i64 + 1) * self.config.interval_ns)
            };
            self.flush(remaining, upto)?;
        }
        self.finish(cpu)
    }

    fn wait(&mut self, events: &mut [libc::epoll_event], timeout_ms: c_int) -> usize {
        let n = unsafe { libc::epoll_wait(self.epoll, events.as_mut_ptr(), events.len() as c_int, timeout_ms) };
        n.max(0) as usize
    }

    fn closed_loop(&mut self, last_slot: usize) -> Result<usize, String> {
        let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; self.clients.len().max(1)];
        let (mut slot, mut slot_end) = (0usize, self.start_ns + self.config.interval_ns);
        self.ready.extend(0..self.clients.len());
        loop {
            for _ in 0..self.ready.len() {
                let index = self.ready.pop_front().unwrap();
                self.start(index, 0);
            }
            if self.in_flight == 0 && self.ready.is_empty() {
                return Ok(slot);
            }
            let timeout = if self.ready.is_empty() { 100 } else { 0 };
            let n = self.wait(&mut events, timeout);
            for event in &events[..n] {
                self.receive(event.u64 as usize);
            }
            while slot < last_slot && monotonic_ns() >= slot_end {
                self.flush(slot, Some(slot_end))?;
                slot += 1;
                slot_end += self.config.interval_ns;
            }
        }
    }

    fn scheduled_loop(&mut self, last_slot: usize) -> Result<usize, String> {
        let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; self.clients.len().max(1)];
        let (mut slot, mut slot_end) = (0usize, self.start_ns + self.config.interval_ns);
        for index in 0..self.clients.len() {
            self.next_of(index, true);
        }
        loop {
            let now = monotonic_ns();
            while slot < last_slot && now >= slot_end {
                self.flush(slot, Some(slot_end))?;
                slot += 1;
                slot_end += self.config.interval_ns;
            }
            for _ in 0..self.ready.len() {
                let index = self.ready.pop_front().unwrap();
                let intended = self.clients[index].intended;
                self.start(index, intended);
            }
            while let Some(&Reverse((intended, index))) = self.timers.peek() {
                if intended > now {
                    break;
                }
                self.timers.pop();
                self.start(index, intended);
            }
            if self.in_flight == 0 && self.timers.is_empty() && self.ready.is_empty() {
                return Ok(slot);
            }
            let timeout_ms = if !self.ready.is_empty() {
                0
            } else if slot < last_slot || !self.timers.is_empty() {
                let due = match self.timers.peek() {
                    Some(&Reverse((at, _))) => at.min(slot_end),
                    None => slot_end,
                };
                // Round up: waking early only costs a loop turn, waking late delays a start.
                ((due - monotonic_ns()).max(0) + 999_999) / 1_000_000
            } else {
                1000
            };
            let n = self.wait(&mut events, timeout_ms as c_int);
            for event in &events[..n] {
                self.receive(event.u64 as usize);
            }
        }
    }

    fn next_of(&mut self, index: usize, first: bool) {
        let rate = self.config.rate_per_client.unwrap_or(1.0);
        let client = &mut self.clients[index];
        let previous = if first { self.start_ns } else { client.intended };
        let gap = -(1.0 - client.rng.unit()).ln() / rate;
        let intended = previous + (gap * 1e9) as i64;
        if intended < self.end {
            client.intended = intended;
            self.timers.push(Reverse((intended, index)));
        }
    }

    fn choose(&mut self, index: usize) -> usize {
        if self.cumulative.len() == 1 {
            return 0;
        }
        let total = *self.cumulative.last().unwrap();
        let draw = self.clients[index].rng.unit() * total;
        self.cumulative.iter().position(|&c| draw < c).unwrap_or(self.cumulative.len() - 1)
    }

    fn start(&mut self, index: usize, intended: i64) {
        let begin = monotonic_ns();
        if self.scheduled {
            self.clients[index].intended = intended;
        } else if begin >= self.end {
            return;
        }
        let code = self.choose(index);
        let seed = self.config.seed;
        let docs = self.config.docs;
        let total_clients = self.config.total_clients;
        let kind = self.kinds[code];
        let client = &mut self.clients[index];
        client.begin = begin;
        client.second_step = false;
        client.code = code;
        let sent = match kind {
            Kind::Read | Kind::ReadModifyWrite => {
                client.key = key_of(self.keys.next_index(&mut client.keys_rng), seed);
                client.session.send(STATEMENT_READ, &[&client.key])
            }
            Kind::Update => {
                let key = key_of(self.keys.next_index(&mut client.keys_rng), seed);
                let field = &self.fields[(client.rng.unit() * FIELD_COUNT as f64) as usize];
                let value = &self.values[(client.rng.unit() * VALUE_POOL as f64) as usize];
                client.session.send(STATEMENT_UPDATE, &[field, value, &key])
            }
            Kind::Insert => {
                // Keys beyond the loaded ones, unique per client: docs + n * clients + id.
                let number = docs + client.inserted * total_clients + client.id;
                client.inserted += 1;
                let key = key_of(number, seed);
                let mut document = Vec::with_capacity(2048);
                document.extend_from_slice(b"{\"ycsb_key\":\"");
                document.extend_from_slice(&key[..key.len() - 1]);
                document.push(b'"');
                for field in &self.fields {
                    let value = &self.values[(client.rng.unit() * VALUE_POOL as f64) as usize];
                    document.extend_from_slice(b",\"");
                    document.extend_from_slice(&field[..field.len() - 1]);
                    document.extend_from_slice(b"\":\"");
                    document.extend_from_slice(&value[..value.len() - 1]);
                    document.push(b'"');
                }
                document.extend_from_slice(b"}\0");
                client.session.send(STATEMENT_INSERT, &[&document])
            }
        };
        match sent {
            Ok(()) => {
                self.in_flight += 1;
                self.clients[index].waiting = true;
            }
            Err(error) => self.failed(index, error),
        }
    }

    fn receive(&mut self, index: usize) {
        if !self.clients[index].waiting {
            // Readable with nothing asked: the server closing it, say.
            let _ = self.clients[index].session.receive();
            if self.clients[index].session.broken() {
                self.forget(index);
            }
            return;
        }
        let kind = self.kinds[self.clients[index].code];
        let count = match self.clients[index].session.receive() {
            Ok(None) => return,
            Ok(Some(count)) => count,
            Err(error) => {
                self.in_flight -= 1;
                self.clients[index].waiting = false;
                self.failed(index, error);
                return;
            }
        };
        if kind == Kind::ReadModifyWrite && count > 0 && !self.clients[index].second_step {
            let client = &mut self.clients[index];
            client.second_step = true;
            let field = &self.fields[(client.rng.unit() * FIELD_COUNT as f64) as usize];
            let value = &self.values[(client.rng.unit() * VALUE_POOL as f64) as usize];
            let key = std::mem::take(&mut client.key);
            let sent = client.session.send(STATEMENT_UPDATE, &[field, value, &key]);
            client.key = key;
            if let Err(error) = sent {
                self.in_flight -= 1;
                self.clients[index].waiting = false;
                self.failed(index, error);
            }
            return;
        }
        let done = monotonic_ns();
        self.in_flight -= 1;
        let client = &mut self.clients[index];
        client.waiting = false;
        self.ends.push(done);
        self.begins.push(client.begin);
        self.codes.push(client.code as i8);
        self.counts.push(count);
        if kind == Kind::Insert {
            client.inserted_ok += 1;
        }
        if self.scheduled {
            self.intendeds.push(client.intended);
            self.next_of(index, false);
        } else {
            self.start(index, 0);
        }
    }

    fn failed(&mut self, index: usize, error: String) {
        let now = monotonic_ns();
        let slot = (((now - self.start_ns) / self.config.interval_ns).max(0) as usize).min(self.interval_failed.len() - 1);
        self.interval_failed[slot] += 1;
        self.operations_done += 1;
        let client = &self.clients[index];
        let measured_from = if self.scheduled { client.intended } else { client.begin };
        if measured_from >= self.warm_end {
            self.failed[client.code] += 1;
            if self.first_error[client.code].is_none() {
                self.first_error[client.code] = Some(error.chars().take(500).collect());
            }
        }
        if client.session.broken() {
            self.aborted += 1; // its connection is gone: the client stops, as pgbench's does
            self.forget(index);
            return;
        }
        if self.scheduled {
            self.next_of(index, false);
        } else {
            self.ready.push_back(index);
        }
    }

    fn forget(&mut self, index: usize) {
        if !self.clients[index].gone {
            self.clients[index].gone = true;
            let fd = self.clients[index].session.fd();
            unsafe { libc::epoll_ctl(self.epoll, libc::EPOLL_CTL_DEL, fd, std::ptr::null_mut()) };
        }
    }

    /// Hand the operations that ended before `upto` (None: all) to the Python worker.
    fn flush(&mut self, slot: usize, upto: Option<i64>) -> Result<(), String> {
        let taken = match upto {
            Some(limit) => self.ends.partition_point(|&end| end < limit),
            None => self.ends.len(),
        };
        self.operations_done += taken as u64;
        let out = &mut self.out;
        let mut write = |bytes: &[u8]| out.write_all(bytes).map_err(|e| format!("output: {e}"));
        write(b"I")?;
        write(&(slot as u32).to_le_bytes())?;
        write(&self.interval_failed[slot].to_le_bytes())?;
        write(&(taken as u64).to_le_bytes())?;
        let mut columns: Vec<&mut Vec<i64>> = vec![&mut self.ends, &mut self.begins];
        if self.scheduled {
            columns.push(&mut self.intendeds);
        }
        for column in columns {
            for value in column.drain(..taken) {
                write(&value.to_le_bytes())?;
            }
        }
        let codes: Vec<u8> = self.codes.drain(..taken).map(|c| c as u8).collect();
        write(&codes)?;
        for value in self.counts.drain(..taken) {
            write(&value.to_le_bytes())?;
        }
        out.flush().map_err(|e| format!("output: {e}"))
    }

    fn finish(&mut self, cpu_ns: i64) -> Result<(), String> {
        let names: Vec<&str> = self.config.operations.iter().map(|(n, _)| n.as_str()).collect();
        let failed: HashMap<&str, u64> = names.iter().copied().zip(self.failed.iter().copied()).collect();
        let first_error: HashMap<&str, Option<String>> =
            names.iter().copied().zip(self.first_error.iter().cloned()).collect();
        let inserted: u64 = self.clients.iter().map(|c| c.inserted_ok).sum();
        let message = serde_json::json!({
            "failed": failed, "first_error": first_error, "inserted": inserted, "cpu_ns": cpu_ns,
            "operations_done": self.operations_done, "aborted": self.aborted,
        }).to_string();
        self.out.write_all(b"F").map_err(|e| e.to_string())?;
        self.out.write_all(&(message.len() as u32).to_le_bytes()).map_err(|e| e.to_string())?;
        self.out.write_all(message.as_bytes()).map_err(|e| e.to_string())?;
        self.out.flush().map_err(|e| e.to_string())
    }
}

fn open_sessions(config: &Config) -> Result<(Vec<Box<dyn Session>>, Vec<i64>), String> {
    let mut sessions: Vec<Box<dyn Session>> = Vec::new();
    let mut connect_ns = Vec::new();
    let pq: Option<&'static Pq> = if config.protocol == "libpq" {
        Some(Box::leak(Box::new(Pq::open(&config.library)?)))
    } else {
        None
    };
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

fn main() {
    // Never outlive the Python worker that started this (a killed run takes its clients along).
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
    let mut out = BufWriter::with_capacity(1 << 20, unsafe { File::from_raw_fd(1) });
    let mut input = BufReader::new(std::io::stdin());
    let mut line = String::new();
    let fail = |out: &mut BufWriter<File>, message: String| -> ! {
        let _ = writeln!(out, "failed {}", message.replace('\n', " "));
        let _ = out.flush();
        std::process::exit(1);
    };
    if input.read_line(&mut line).unwrap_or(0) == 0 {
        fail(&mut out, "no configuration on stdin".to_string());
    }
    let config: Config = match serde_json::from_str(&line) {
        Ok(config) => config,
        Err(error) => fail(&mut out, format!("bad configuration: {error}")),
    };
    if config.client_ids.is_empty() || config.operations.is_empty() || config.interval_ns <= 0 {
        fail(&mut out, "no clients, operations or interval".to_string());
    }
    let (sessions, connect_ns) = match open_sessions(&config) {
        Ok(opened) => opened,
        Err(error) => fail(&mut out, error),
    };
    let connect: Vec<String> = connect_ns.iter().map(|n| n.to_string()).collect();
    let _ = writeln!(out, "ready {}", connect.join(","));
    let _ = out.flush();
    line.clear();
    if input.read_line(&mut line).unwrap_or(0) == 0 {
        std::process::exit(0); // the worker went away before the start
    }
    let start_ns: i64 = match line.trim().strip_prefix("go ").and_then(|s| s.parse().ok()) {
        Some(start) => start,
        None => fail(&mut out, format!("expected `go <ns>`, got {:?}", line.trim())),
    };
    let mut driver = match Loop::new(config, sessions, out) {
        Ok(driver) => driver,
        Err(error) => {
            let mut out = BufWriter::new(unsafe { File::from_raw_fd(1) });
            fail(&mut out, error)
        }
    };
    if let Err(error) = driver.run(start_ns) {
        eprintln!("docbench-client: {error}");
        std::process::exit(1);
    }
}
