//! The loop of docbench-client: one thread, all the worker's clients (see [`crate::client`]).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::ffi::c_int;
use std::io::Write;

use crate::client::session::{Session, STATEMENT_INSERT, STATEMENT_READ, STATEMENT_UPDATE};
use crate::client::{Config, Sessions};
use crate::rng::SplitMix;
use crate::ycsb::{key_of, random_text, Keys, FIELD_COUNT, FIELD_LENGTH};

/// Field values are drawn from a pool of this many, made once per worker.
const VALUE_POOL: usize = 4096;

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Read,
    Update,
    Insert,
    ReadModifyWrite,
}

fn nul_terminated(mut text: Vec<u8>) -> Vec<u8> {
    text.push(0);
    text
}

/// contracts/ycsb.py's key, NUL-terminated for libpq.
fn c_key(index: u64, seed: u64) -> Vec<u8> {
    nul_terminated(key_of(index, seed).into_bytes())
}

/// CLOCK_MONOTONIC in ns: the clock of every time the client reports.
pub fn monotonic_ns() -> i64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

pub fn clock_ns(clock: libc::clockid_t) -> i64 {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe { libc::clock_gettime(clock, &mut now) };
    now.tv_sec * 1_000_000_000 + now.tv_nsec
}

struct Client {
    id: u64,
    session: Box<dyn Session>,
    rng: SplitMix,
    keys_rng: SplitMix,
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

/// The clients of one worker and their one thread: see the module's documentation.
pub struct Loop {
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
    /// The loop for `config`'s clients over their `sessions`; refuses an unknown operation or
    /// distribution.
    pub fn new(config: Config, sessions: Sessions) -> Result<Loop, String> {
        let kinds = config.operations.iter().map(|(name, _)| kind_of(name)).collect::<Result<Vec<_>, _>>()?;
        let mut total = 0.0;
        let cumulative = config
            .operations
            .iter()
            .map(|(_, w)| {
                total += w;
                total
            })
            .collect();
        let keys = Keys::new(&config.distribution, config.docs.max(1))?;
        let mut pool_rng = SplitMix::seeded(config.seed.wrapping_mul(104_729).wrapping_add(config.client_ids[0]));
        let values = (0..VALUE_POOL).map(|_| nul_terminated(random_text(&mut pool_rng, FIELD_LENGTH))).collect();
        let fields = (1..=FIELD_COUNT).map(|n| format!("field{n}\0").into_bytes()).collect();
        let clients = config
            .client_ids
            .iter()
            .zip(sessions)
            .map(|(&id, session)| {
                let seed = config.seed.wrapping_mul(7919).wrapping_add(id);
                Client {
                    id,
                    session,
                    rng: SplitMix::seeded(seed),
                    keys_rng: SplitMix::seeded(seed.wrapping_add(2)),
                    inserted: 0,
                    inserted_ok: 0,
                    code: 0,
                    key: Vec::new(),
                    second_step: false,
                    begin: 0,
                    intended: 0,
                    waiting: false,
                    gone: false,
                }
            })
            .collect();
        let operations = config.operations.len();
        let scheduled = config.rate_per_client.is_some();
        Ok(Loop {
            kinds,
            cumulative,
            keys,
            fields,
            values,
            clients,
            epoll: -1,
            start_ns: 0,
            warm_end: 0,
            end: 0,
            scheduled,
            ends: Vec::new(),
            begins: Vec::new(),
            intendeds: Vec::new(),
            codes: Vec::new(),
            counts: Vec::new(),
            in_flight: 0,
            ready: VecDeque::new(),
            timers: BinaryHeap::new(),
            interval_failed: vec![0; config.intervals.max(1)],
            failed: vec![0; operations],
            first_error: vec![None; operations],
            operations_done: 0,
            aborted: 0,
            config,
        })
    }

    /// Runs the clients from `start_ns` (CLOCK_MONOTONIC) to the end of the duration, writing
    /// the interval blocks and the final message to `out`.
    pub fn run<W: Write>(&mut self, start_ns: i64, out: &mut W) -> Result<(), String> {
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
        let slot =
            if self.scheduled { self.scheduled_loop(last_slot, out)? } else { self.closed_loop(last_slot, out)? };
        let cpu = clock_ns(libc::CLOCK_PROCESS_CPUTIME_ID) - cpu_before;
        for remaining in slot..=last_slot {
            let upto = if remaining == last_slot {
                None
            } else {
                Some(self.start_ns + (remaining as i64 + 1) * self.config.interval_ns)
            };
            self.flush(remaining, upto, out)?;
        }
        self.finish(cpu, out)
    }

    fn wait(&mut self, events: &mut [libc::epoll_event], timeout_ms: c_int) -> usize {
        let n = unsafe { libc::epoll_wait(self.epoll, events.as_mut_ptr(), events.len() as c_int, timeout_ms) };
        n.max(0) as usize
    }

    fn closed_loop<W: Write>(&mut self, last_slot: usize, out: &mut W) -> Result<usize, String> {
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
                self.flush(slot, Some(slot_end), out)?;
                slot += 1;
                slot_end += self.config.interval_ns;
            }
        }
    }

    fn scheduled_loop<W: Write>(&mut self, last_slot: usize, out: &mut W) -> Result<usize, String> {
        let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; self.clients.len().max(1)];
        let (mut slot, mut slot_end) = (0usize, self.start_ns + self.config.interval_ns);
        for index in 0..self.clients.len() {
            self.next_of(index, true);
        }
        loop {
            let now = monotonic_ns();
            while slot < last_slot && now >= slot_end {
                self.flush(slot, Some(slot_end), out)?;
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
                client.key = c_key(self.keys.next_index(&mut client.keys_rng), seed);
                client.session.send(STATEMENT_READ, &[&client.key])
            }
            Kind::Update => {
                let key = c_key(self.keys.next_index(&mut client.keys_rng), seed);
                let field = &self.fields[(client.rng.unit() * FIELD_COUNT as f64) as usize];
                let value = &self.values[(client.rng.unit() * VALUE_POOL as f64) as usize];
                client.session.send(STATEMENT_UPDATE, &[field, value, &key])
            }
            Kind::Insert => {
                // Keys beyond the loaded ones, unique per client: docs + n * clients + id.
                let number = docs + client.inserted * total_clients + client.id;
                client.inserted += 1;
                let key = c_key(number, seed);
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
        let slot =
            (((now - self.start_ns) / self.config.interval_ns).max(0) as usize).min(self.interval_failed.len() - 1);
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
    fn flush<W: Write>(&mut self, slot: usize, upto: Option<i64>, out: &mut W) -> Result<(), String> {
        let taken = match upto {
            Some(limit) => self.ends.partition_point(|&end| end < limit),
            None => self.ends.len(),
        };
        self.operations_done += taken as u64;
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

    fn finish<W: Write>(&mut self, cpu_ns: i64, out: &mut W) -> Result<(), String> {
        let names: Vec<&str> = self.config.operations.iter().map(|(n, _)| n.as_str()).collect();
        let failed: HashMap<&str, u64> = names.iter().copied().zip(self.failed.iter().copied()).collect();
        let first_error: HashMap<&str, Option<String>> =
            names.iter().copied().zip(self.first_error.iter().cloned()).collect();
        let inserted: u64 = self.clients.iter().map(|c| c.inserted_ok).sum();
        let message = serde_json::json!({
            "failed": failed, "first_error": first_error, "inserted": inserted, "cpu_ns": cpu_ns,
            "operations_done": self.operations_done, "aborted": self.aborted,
        })
        .to_string();
        out.write_all(b"F").map_err(|e| e.to_string())?;
        out.write_all(&(message.len() as u32).to_le_bytes()).map_err(|e| e.to_string())?;
        out.write_all(message.as_bytes()).map_err(|e| e.to_string())?;
        out.flush().map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;

    use super::*;
    use crate::client::session::NoOpSession;

    type Sent = Rc<RefCell<Vec<(usize, Vec<Vec<u8>>)>>>;

    /// The no-op session, keeping what it is sent.
    struct Recording {
        inner: NoOpSession,
        sent: Sent,
    }

    impl Session for Recording {
        fn fd(&self) -> c_int {
            self.inner.fd()
        }
        fn send(&mut self, statement: usize, params: &[&[u8]]) -> Result<(), String> {
            self.sent.borrow_mut().push((statement, params.iter().map(|p| p.to_vec()).collect()));
            self.inner.send(statement, params)
        }
        fn receive(&mut self) -> Result<Option<i64>, String> {
            self.inner.receive()
        }
        fn broken(&self) -> bool {
            false
        }
    }

    fn config(client_ids: &[u64], distribution: &str, rate: Option<f64>) -> Config {
        serde_json::from_value(serde_json::json!({
            "protocol": "noop", "client_ids": client_ids, "total_clients": 4, "docs": 1000, "seed": 5,
            "operations": [["read", 0.4], ["update", 0.3], ["insert", 0.1], ["read-modify-write", 0.2]],
            "distribution": distribution, "warmup_ns": 0, "duration_ns": 60_000_000,
            "interval_ns": 20_000_000, "intervals": 3, "rate_per_client": rate,
        }))
        .unwrap()
    }

    struct Output {
        slots: Vec<u32>,
        codes: Vec<u8>,
        intended: Vec<i64>,
        counts: Vec<i64>,
        last: serde_json::Value,
    }

    /// Runs the loop from now and reads its output as compiled.py does.
    fn run(config: Config, sent: &Sent) -> Output {
        let scheduled = config.rate_per_client.is_some();
        let sessions: Vec<Box<dyn Session>> = config
            .client_ids
            .iter()
            .map(|_| Box::new(Recording { inner: NoOpSession::new().unwrap(), sent: sent.clone() }) as Box<dyn Session>)
            .collect();
        let mut driver = Loop::new(config, sessions).unwrap();
        let start = monotonic_ns();
        let mut out = Vec::new();
        driver.run(start, &mut out).unwrap();
        let mut o =
            Output { slots: vec![], codes: vec![], intended: vec![], counts: vec![], last: serde_json::Value::Null };
        let mut at = 0;
        let mut take = |n: usize| {
            at += n;
            out[at - n..at].to_vec()
        };
        let word = |b: &[u8]| i64::from_le_bytes(b.try_into().unwrap());
        loop {
            let kind = take(1);
            if kind == b"F" {
                let length = u32::from_le_bytes(take(4).try_into().unwrap()) as usize;
                o.last = serde_json::from_slice(&take(length)).unwrap();
                break;
            }
            assert_eq!(kind, b"I");
            o.slots.push(u32::from_le_bytes(take(4).try_into().unwrap()));
            assert_eq!(word(&take(8)), 0); // failed
            let n = word(&take(8)) as usize;
            let ends: Vec<i64> = take(8 * n).chunks(8).map(word).collect();
            let begins: Vec<i64> = take(8 * n).chunks(8).map(word).collect();
            assert!(begins.iter().zip(&ends).all(|(b, e)| start <= *b && b <= e));
            if scheduled {
                o.intended.extend(take(8 * n).chunks(8).map(|w| word(w) - start));
            }
            o.codes.extend(take(n));
            o.counts.extend(take(8 * n).chunks(8).map(word));
        }
        assert_eq!(at, out.len());
        o
    }

    #[test]
    fn one_client_draws_the_operations_it_always_drew() {
        let sent = Sent::default();
        let o = run(config(&[3], "zipfian", None), &sent);
        assert_eq!(o.slots, [0, 1, 2]);
        assert!(o.codes.len() >= 40, "{}", o.codes.len());
        // (printed by docbench-client before the crate was a library: seed 5, client 3)
        assert_eq!(
            o.codes[..40],
            [
                1, 1, 1, 0, 2, 3, 3, 1, 1, 0, 2, 3, 1, 3, 3, 3, 1, 3, 0, 1, 3, 2, 1, 1, 0, 1, 2, 0, 3, 1, 1, 0, 3, 0,
                0, 0, 0, 0, 0, 2
            ]
        );
        assert!(o.counts.iter().all(|&c| c == 1));
        assert_eq!(o.last["operations_done"], o.codes.len());
        assert_eq!(o.last["inserted"], o.codes.iter().filter(|&&c| c == 2).count());
        assert_eq!((o.last["aborted"].clone(), o.last["failed"]["read"].clone()), (0.into(), 0.into()));

        // What was sent: keys of loaded documents, new keys for inserts (docs + n * clients + id).
        let sent = sent.borrow();
        let loaded: std::collections::HashSet<Vec<u8>> = (0..1000).map(|i| c_key(i, 5)).collect();
        let mut inserts = 0;
        let mut i = 0;
        for &code in &o.codes {
            let (statement, params) = &sent[i];
            match code {
                0 | 3 => {
                    assert_eq!(*statement, STATEMENT_READ);
                    assert!(loaded.contains(&params[0]));
                    if code == 3 {
                        let (update, set) = &sent[i + 1];
                        assert_eq!((*update, &set[2]), (STATEMENT_UPDATE, &params[0]));
                        i += 1;
                    }
                }
                1 => {
                    assert_eq!(*statement, STATEMENT_UPDATE);
                    assert!(params[0].starts_with(b"field") && params[0].ends_with(b"\0"));
                    assert_eq!(params[1].len(), FIELD_LENGTH + 1);
                    assert!(loaded.contains(&params[2]));
                }
                _ => {
                    assert_eq!(*statement, STATEMENT_INSERT);
                    let document = &params[0][..params[0].len() - 1];
                    let document: serde_json::Value = serde_json::from_slice(document).unwrap();
                    let key = key_of(1000 + inserts * 4 + 3, 5);
                    assert_eq!(document["ycsb_key"], key.as_str());
                    assert_eq!(document.as_object().unwrap().len(), 1 + FIELD_COUNT);
                    assert_eq!(document["field10"].as_str().unwrap().len(), FIELD_LENGTH);
                    inserts += 1;
                }
            }
            i += 1;
        }
    }

    #[test]
    fn uniform_keys_and_scheduled_starts_are_pinned() {
        let mut uniform = config(&[0], "uniform", None);
        uniform.seed = 9;
        let o = run(uniform, &Sent::default());
        assert_eq!(o.codes[..20], [1, 0, 0, 1, 3, 1, 1, 3, 0, 2, 1, 0, 1, 2, 0, 0, 1, 2, 0, 1]);

        let o = run(config(&[1], "zipfian", Some(5000.0)), &Sent::default());
        assert_eq!(o.intended[..8], [442100, 480918, 1007325, 1039679, 1188127, 1486896, 1538192, 1571806]);
        assert!(o.intended.windows(2).all(|w| w[0] < w[1]));
        assert!(*o.intended.last().unwrap() < 60_000_000);
        assert_eq!(o.codes[..20], [3, 0, 0, 1, 0, 0, 1, 0, 1, 1, 0, 0, 3, 0, 1, 3, 3, 1, 0, 0]);
    }

    #[test]
    fn refuses_unknown_operations_and_distributions() {
        let mut bad = config(&[1], "pareto", None);
        assert_eq!(Loop::new(bad, Vec::new()).err().unwrap(), "unknown distribution pareto");
        bad = config(&[1], "uniform", None);
        bad.operations = vec![("scan".into(), 1.0)];
        assert_eq!(Loop::new(bad, Vec::new()).err().unwrap(), "unknown operation scan");
    }
}
