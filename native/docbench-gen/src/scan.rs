//! docbench-scan: the oracle's native scanner. Reads one data file (or a byte range of a
//! plain one) and aggregates, for the lines it can judge exactly, what the oracle's Python
//! scan would (docbench/dataset/oracle.py); every other line is handed back untouched for
//! the Python scan to judge. The semantics stay in Python: this program only takes a line
//! when it is certain the full parse would read the same five fields from it.
//!
//! A line is taken when it is valid UTF-8 and serde_json reads it as one JSON object with
//! `did` (string), `time_us` (integer within i64), `kind` (string) and `commit` (an object
//! with `collection` and `operation` strings), each key once; or as an object without
//! `commit` (or with `"commit": null`) whose `did`, `time_us`, `kind`, if there, have those
//! types (the oracle only counts such an event). serde_json refuses duplicate
//! keys among those, lone surrogates in them, numbers that are not i64, nesting beyond 128
//! levels and trailing garbage: such lines go back to Python. (Its leniency where the
//! oracle is stricter cannot change a taken line: UTF-8 is checked on the whole line first,
//! and the skipped parts are only validated, never read.)
//!
//! usage: docbench-scan PATH --compression none|gzip|zstd --post COLLECTION
//!        [--q3 COLL,COLL,...] [--start B --end B] [--sha256]
//!
//! Output on stdout: one JSON line (counts, hours, the dids that are not did:plc, array
//! lengths), then little-endian arrays: per collection its sorted distinct packed dids
//! (hi, lo as u64), then the post creates' (hi, lo, min, max), then the lengths (u32) and
//! bytes of the lines handed back.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom, Write};

use serde::Deserialize;
use sha2::{Digest, Sha256};

const HOUR_US: i64 = 3_600_000_000;

/// An event; a missing key is None (and so is `"commit": null`). A commit event is taken
/// only with all of `did`, `time_us` and `kind`; an event without a commit (identity,
/// account) needs none of them (the oracle only counts it, under the null collection).
#[derive(Deserialize)]
struct Event<'a> {
    #[serde(borrow, default)]
    did: Option<Cow<'a, str>>,
    #[serde(default)]
    time_us: Option<i64>,
    #[serde(borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    commit: Option<Commit<'a>>,
}

#[derive(Deserialize)]
struct Commit<'a> {
    #[serde(borrow)]
    collection: Cow<'a, str>,
    #[serde(borrow)]
    operation: Cow<'a, str>,
}

#[derive(Default)]
struct Collection {
    all: u64,
    creates: u64,
    hours: [u64; 24],
    packed: Vec<(u64, u64)>,
    others: BTreeMap<String, ()>,
}

struct Args {
    path: String,
    compression: String,
    post: String,
    start: u64,
    end: Option<u64>,
    sha: bool,
}

fn usage() -> ! {
    eprintln!(
        "usage: docbench-scan PATH --compression none|gzip|zstd --post COLLECTION \
         [--start B --end B] [--sha256]"
    );
    std::process::exit(2)
}

fn parse_args() -> Args {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut a = Args {
        path: String::new(),
        compression: "none".into(),
        post: String::new(),
        start: 0,
        end: None,
        sha: false,
    };
    let mut i = 0;
    while i < argv.len() {
        let key = argv[i].as_str();
        let value = || argv.get(i + 1).cloned().unwrap_or_else(|| usage());
        match key {
            "--compression" => a.compression = value(),
            "--post" => a.post = value(),
            "--start" => a.start = value().parse().unwrap_or_else(|_| usage()),
            "--end" => a.end = Some(value().parse().unwrap_or_else(|_| usage())),
            "--sha256" => {
                a.sha = true;
                i += 1;
                continue;
            }
            _ if !key.starts_with("--") && a.path.is_empty() => {
                a.path = key.to_string();
                i += 1;
                continue;
            }
            _ => usage(),
        }
        i += 2;
    }
    if a.path.is_empty() || a.post.is_empty() {
        usage()
    }
    a
}

/// `did:plc:` + 24 base32 characters as (hi, lo): the first 12 characters and the last 12,
/// each a base-32 number (as the oracle's `pack_did_rows`).
fn pack_did(did: &[u8]) -> Option<(u64, u64)> {
    if did.len() != 32 || &did[..8] != b"did:plc:" {
        return None;
    }
    let mut parts = [0u64; 2];
    for (k, chunk) in did[8..].chunks(12).enumerate() {
        let mut x = 0u64;
        for &c in chunk {
            let d = match c {
                b'a'..=b'z' => c - b'a',
                b'2'..=b'7' => c - b'2' + 26,
                _ => return None,
            };
            x = (x << 5) | d as u64;
        }
        parts[k] = x;
    }
    Some((parts[0], parts[1]))
}

struct Scan {
    post: String,
    lines: u64,
    documents: u64,
    no_commit: u64,
    time_min: Option<i64>,
    time_max: Option<i64>,
    colls: HashMap<String, Collection>,
    order: Vec<String>,
    posts: Vec<(u64, u64, i64)>,
    post_others: BTreeMap<String, (i64, i64)>,
    handed_back: Vec<Vec<u8>>,
}

impl Scan {
    fn line(&mut self, line: &[u8]) {
        self.lines += 1;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let event = std::str::from_utf8(line)
            .ok()
            .filter(|text| text.starts_with('{'))
            .and_then(|text| serde_json::from_str::<Event>(text).ok());
        if !event.is_some_and(|event| self.take(event)) {
            self.handed_back.push(line.to_vec());
        }
    }

    /// The span of the times taken (for the generator's faithfulness figures).
    fn span(&mut self, t: i64) {
        self.time_min = Some(self.time_min.map_or(t, |m| m.min(t)));
        self.time_max = Some(self.time_max.map_or(t, |m| m.max(t)));
    }

    /// Aggregates the event; false when the Python scan must judge it.
    fn take(&mut self, e: Event) -> bool {
        let Some(commit) = e.commit else {
            if let Some(t) = e.time_us {
                self.span(t);
            }
            self.documents += 1;
            self.no_commit += 1;
            return true;
        };
        let (Some(did), Some(time_us), Some(kind)) = (e.did, e.time_us, e.kind) else {
            return false;
        };
        self.documents += 1;
        self.span(time_us);
        let name = commit.collection.as_ref();
        if !self.colls.contains_key(name) {
            self.colls.insert(name.to_string(), Collection::default());
            self.order.push(name.to_string());
        }
        let coll = self.colls.get_mut(name).expect("inserted above");
        coll.all += 1;
        if commit.operation != "create" || kind != "commit" {
            return true;
        }
        coll.creates += 1;
        coll.hours[(time_us.div_euclid(HOUR_US)).rem_euclid(24) as usize] += 1;
        let did = did.as_ref();
        if name == self.post {
            match pack_did(did.as_bytes()) {
                Some((hi, lo)) => self.posts.push((hi, lo, time_us)),
                None => {
                    let span = self.post_others.entry(did.to_string()).or_insert((time_us, time_us));
                    span.0 = span.0.min(time_us);
                    span.1 = span.1.max(time_us);
                }
            }
        } else {
            match pack_did(did.as_bytes()) {
                Some(key) => coll.packed.push(key),
                None => {
                    coll.others.insert(did.to_string(), ());
                }
            }
        }
        true
    }
}

fn open(args: &Args) -> io::Result<(Box<dyn Read>, Option<Sha256Reader>)> {
    let mut file = File::open(&args.path)?;
    if args.start > 0 {
        file.seek(SeekFrom::Start(args.start))?;
    }
    let raw: Box<dyn Read> = match args.end {
        Some(end) => Box::new(file.take(end.saturating_sub(args.start))),
        None => Box::new(file),
    };
    let (raw, hasher): (Box<dyn Read>, Option<Sha256Reader>) = if args.sha {
        let shared = Sha256Reader::new(raw);
        (Box::new(shared.clone()), Some(shared))
    } else {
        (raw, None)
    };
    let reader: Box<dyn Read> = match args.compression.as_str() {
        "none" => raw,
        "gzip" => Box::new(flate2::read::MultiGzDecoder::new(BufReader::with_capacity(1 << 20, raw))),
        "zstd" => Box::new(zstd::stream::read::Decoder::new(raw)?),
        other => {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("compression {other}")))
        }
    };
    Ok((reader, hasher))
}

/// A reader that hashes what passes through it; clones share the state (the decoder owns
/// one clone, `main` asks the other for the digest at the end).
#[derive(Clone)]
struct Sha256Reader {
    inner: std::rc::Rc<std::cell::RefCell<(Box<dyn Read>, Sha256)>>,
}

impl Sha256Reader {
    fn new(inner: Box<dyn Read>) -> Self {
        Sha256Reader { inner: std::rc::Rc::new(std::cell::RefCell::new((inner, Sha256::new()))) }
    }

    fn hex(&self) -> io::Result<String> {
        let mut state = self.inner.borrow_mut();
        // (the decoder may stop before the file's very last bytes: hash them too)
        let mut rest = Vec::new();
        state.0.read_to_end(&mut rest)?;
        state.1.update(&rest);
        Ok(state.1.clone().finalize().iter().map(|b| format!("{b:02x}")).collect())
    }
}

impl Read for Sha256Reader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut state = self.inner.borrow_mut();
        let n = state.0.read(buf)?;
        state.1.update(&buf[..n]);
        Ok(n)
    }
}

fn scan(reader: &mut dyn Read, scan: &mut Scan) -> io::Result<()> {
    let mut buf = vec![0u8; 8 << 20];
    let mut have = 0usize;
    loop {
        if have == buf.len() {
            buf.resize(buf.len() * 2, 0); // a line longer than the buffer
        }
        let n = reader.read(&mut buf[have..])?;
        if n == 0 {
            if have > 0 {
                scan.line(&buf[..have]); // the last line, without its newline
            }
            return Ok(());
        }
        let end = have + n;
        let mut start = 0;
        while let Some(pos) = memchr::memchr(b'\n', &buf[start..end]) {
            scan.line(&buf[start..start + pos]);
            start += pos + 1;
        }
        buf.copy_within(start..end, 0);
        have = end - start;
    }
}

fn write_u64s(out: &mut impl Write, values: impl Iterator<Item = u64>) -> io::Result<()> {
    for v in values {
        out.write_all(&v.to_le_bytes())?;
    }
    Ok(())
}

fn main() {
    let args = parse_args();
    let mut state = Scan {
        post: args.post.clone(),
        lines: 0,
        documents: 0,
        no_commit: 0,
        time_min: None,
        time_max: None,
        colls: HashMap::new(),
        order: Vec::new(),
        posts: Vec::new(),
        post_others: BTreeMap::new(),
        handed_back: Vec::new(),
    };
    let result = open(&args).and_then(|(mut reader, hasher)| {
        scan(&mut *reader, &mut state)?;
        drop(reader);
        hasher.map(|h| h.hex()).transpose()
    });
    let sha = match result {
        Ok(sha) => sha,
        Err(error) => {
            eprintln!("docbench-scan: {}: {error}", args.path);
            std::process::exit(1)
        }
    };
    if let Err(error) = write_output(&mut state, sha) {
        eprintln!("docbench-scan: writing the result: {error}");
        std::process::exit(1)
    }
}

/// This process's peak resident set (bytes, from /proc/self/status), for the oracle's
/// memory figures; None where there is no such file.
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn write_output(state: &mut Scan, sha: Option<String>) -> io::Result<()> {
    let mut colls = Vec::new();
    for name in &state.order {
        let coll = state.colls.get_mut(name).expect("listed");
        coll.packed.sort_unstable();
        coll.packed.dedup();
        let others: Vec<&String> = coll.others.keys().collect();
        colls.push(serde_json::json!([name, coll.all, coll.creates, coll.hours.to_vec(),
                                      coll.packed.len(), others]));
    }
    state.posts.sort_unstable();
    let mut spans: Vec<(u64, u64, i64, i64)> = Vec::new();
    for &(hi, lo, t) in &state.posts {
        match spans.last_mut() {
            Some(last) if last.0 == hi && last.1 == lo => {
                last.2 = last.2.min(t);
                last.3 = last.3.max(t);
            }
            _ => spans.push((hi, lo, t, t)),
        }
    }
    let post_others: Vec<_> = state.post_others.iter().map(|(d, (a, b))| serde_json::json!([d, a, b])).collect();
    let header = serde_json::json!({
        "lines": state.lines,
        "documents": state.documents,
        "no_commit": state.no_commit,
        "time_min": state.time_min,
        "time_max": state.time_max,
        "sha256": sha,
        "colls": colls,
        "posts": spans.len(),
        "post_others": post_others,
        "handed_back": state.handed_back.len(),
        "peak_rss": peak_rss(),
    });
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(1 << 20, stdout.lock());
    out.write_all(header.to_string().as_bytes())?;
    out.write_all(b"\n")?;
    for name in &state.order {
        let coll = &state.colls[name];
        write_u64s(&mut out, coll.packed.iter().map(|k| k.0))?;
        write_u64s(&mut out, coll.packed.iter().map(|k| k.1))?;
    }
    write_u64s(&mut out, spans.iter().map(|s| s.0))?;
    write_u64s(&mut out, spans.iter().map(|s| s.1))?;
    write_u64s(&mut out, spans.iter().map(|s| s.2 as u64))?;
    write_u64s(&mut out, spans.iter().map(|s| s.3 as u64))?;
    for line in &state.handed_back {
        out.write_all(&(line.len() as u32).to_le_bytes())?;
    }
    for line in &state.handed_back {
        out.write_all(line)?;
    }
    out.flush()
}
