//! docbench-gen: writes one JSONBench-layout file of synthetic Bluesky Jetstream events.
//!
//! The content of file k depends only on (seed, k, docs per file, hard rate, dirty rate); a
//! shorter `--count` is a prefix of the full file. Progress goes to stderr
//! (`progress <docs>` lines), a JSON summary to stdout.

#![allow(clippy::manual_is_multiple_of)]

mod gen;
mod ids;
mod json;
mod model;
mod rng;
mod text;
mod words;

use std::fs::File;
use std::io::{self, Write};
use std::path::PathBuf;
use std::time::Instant;

use sha2::{Digest, Sha256};

use gen::{Gen, Hard};
use model::{seconds_at_event, T0};
use rng::{InvCdf, Rng};

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

struct Args {
    seed: u64,
    file: u64,
    docs_per_file: u64,
    count: u64,
    out: Option<PathBuf>,
    compress: String,
    level: Option<i32>,
    hard_rate: f64,
    dirty_rate: f64,
    progress_every: u64,
}

fn usage() -> ! {
    eprintln!(
        "usage: docbench-gen --file K [--seed S] [--docs-per-file D] [--count N] --out PATH|- \
         [--compress none|gzip|zstd] [--level L] [--hard-rate R] [--dirty-rate R] [--progress-every N]\n\
         docbench-gen --version"
    );
    std::process::exit(2)
}

fn parse_args() -> Args {
    let mut a = Args {
        seed: 1,
        file: 0,
        docs_per_file: 1_000_000,
        count: u64::MAX,
        out: None,
        compress: "none".into(),
        level: None,
        hard_rate: 1e-6,
        dirty_rate: 0.0,
        progress_every: 50_000,
    };
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < argv.len() {
        let key = argv[i].as_str();
        if key == "--version" {
            println!("docbench-gen {}", full_version());
            std::process::exit(0);
        }
        let val = argv.get(i + 1).cloned().unwrap_or_else(|| usage());
        let num = |v: &str| v.parse::<u64>().unwrap_or_else(|_| usage());
        let flt = |v: &str| v.parse::<f64>().unwrap_or_else(|_| usage());
        match key {
            "--seed" => a.seed = val.parse::<i64>().map(|v| v as u64).unwrap_or_else(|_| usage()),
            "--file" => a.file = num(&val),
            "--docs-per-file" => a.docs_per_file = num(&val),
            "--count" => a.count = num(&val),
            "--out" => a.out = Some(PathBuf::from(val)),
            "--compress" => a.compress = val,
            "--level" => a.level = Some(val.parse().unwrap_or_else(|_| usage())),
            "--hard-rate" => a.hard_rate = flt(&val),
            "--dirty-rate" => a.dirty_rate = flt(&val),
            "--progress-every" => a.progress_every = num(&val).max(1),
            _ => usage(),
        }
        i += 2;
    }
    if a.file == 0 || a.out.is_none() || a.docs_per_file == 0 {
        usage();
    }
    if !matches!(a.compress.as_str(), "none" | "gzip" | "zstd") {
        usage();
    }
    a.count = a.count.min(a.docs_per_file);
    a
}

/// Counts and hashes the bytes that reach the file.
struct HashWriter<W: Write> {
    inner: W,
    hasher: Sha256,
    bytes: u64,
}

impl<W: Write> Write for HashWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

enum Sink<W: Write> {
    Plain(HashWriter<W>),
    Gzip(flate2::write::GzEncoder<HashWriter<W>>),
    Zstd(zstd::stream::write::Encoder<'static, HashWriter<W>>),
}

impl<W: Write> Sink<W> {
    fn write_all(&mut self, b: &[u8]) -> io::Result<()> {
        match self {
            Sink::Plain(w) => w.write_all(b),
            Sink::Gzip(w) => w.write_all(b),
            Sink::Zstd(w) => w.write_all(b),
        }
    }
    fn finish(self) -> io::Result<HashWriter<W>> {
        let mut hw = match self {
            Sink::Plain(w) => w,
            Sink::Gzip(w) => w.finish()?,
            Sink::Zstd(w) => w.finish()?,
        };
        hw.flush()?;
        Ok(hw)
    }
}

/// Inter-arrival gaps (µs) before rescaling: mostly a few hundred µs, with rare stalls.
fn gap_cdf() -> InvCdf {
    InvCdf::new(
        &[
            (0.0, 150.0),
            (0.01, 225.0),
            (0.1, 286.0),
            (0.25, 338.0),
            (0.5, 416.0),
            (0.75, 529.0),
            (0.9, 691.0),
            (0.95, 874.0),
            (0.985, 2_000.0),
            (0.99, 20_000.0),
            (1.0, 90_000.0),
        ],
        true,
    )
}

/// Strictly increasing time_us for the documents of one file, filling the file's window: from
/// the time the stream reaches event (k-1)·D to the time it reaches event k·D (D = docs per
/// file) under the model's varying rate (model.rs `seconds_at_event`).
struct Clock {
    rng: Rng,
    cdf: InvCdf,
    start: u64,
    scale: f64,
    i: u64,
    prefix: f64,
}

/// (first time_us, window length in µs) of file k.
fn file_window(file: u64, docs_per_file: u64) -> (u64, u64) {
    let first = (file - 1) * docs_per_file;
    let at = |events: u64| T0 + (seconds_at_event(events) * 1e6).round() as u64;
    let start = at(first);
    (start, at(first + docs_per_file) - start)
}

impl Clock {
    fn new(seed: u64, file: u64, docs_per_file: u64) -> Clock {
        let (start, window) = file_window(file, docs_per_file);
        let cdf = gap_cdf();
        // First pass: the sum of all gaps, to scale them into the window.
        let mut rng = Rng::new(seed, file, 3);
        let mut sum = 0.0;
        for _ in 1..docs_per_file {
            sum += cdf.sample(&mut rng);
        }
        let room = window.saturating_sub(docs_per_file) as f64;
        let scale = if sum > 0.0 { room / sum } else { 0.0 };
        Clock { rng: Rng::new(seed, file, 3), cdf, start, scale, i: 0, prefix: 0.0 }
    }

    #[inline]
    fn next(&mut self) -> u64 {
        if self.i > 0 {
            self.prefix += self.cdf.sample(&mut self.rng);
        }
        let t = self.start + self.i + (self.prefix * self.scale) as u64;
        self.i += 1;
        t
    }
}

/// Where the hard documents of a file go (0-based document index, kind), sorted.
///
/// Rule: file 1 always holds one document of each of the five kinds, at document indexes
/// ⌊D·(2j+1)/10⌋ for kind j = 0..4 (D = docs per file; lines 100001, 300001, ... for 1M);
/// in addition every file holds ⌊R·D⌋ (+1 with probability frac(R·D)) hard documents of random
/// kinds at random positions (R = hard rate, default 1e-6). R = 0 disables both.
fn hard_positions(seed: u64, file: u64, dpf: u64, rate: f64) -> Vec<(u64, Hard)> {
    let mut v: Vec<(u64, Hard)> = Vec::new();
    if rate <= 0.0 {
        return v;
    }
    if file == 1 {
        for (j, k) in Hard::ALL.iter().enumerate() {
            v.push((dpf * (2 * j as u64 + 1) / 10, *k));
        }
    }
    let mut rng = Rng::new(seed, file, 4);
    let expect = rate * dpf as f64;
    let mut n = expect.floor() as u64;
    if rng.f64() < expect - expect.floor() {
        n += 1;
    }
    for _ in 0..n {
        let pos = rng.below(dpf);
        let kind = Hard::ALL[rng.below(5) as usize];
        if !v.iter().any(|(p, _)| *p == pos) {
            v.push((pos, kind));
        }
    }
    v.sort_by_key(|x| x.0);
    v
}

/// The crate version plus a fingerprint of the output (sha256 of a small file generated with
/// fixed parameters, hard and dirty lines included), so any change to what the generator writes
/// changes the version recorded in dataset.json.
fn full_version() -> String {
    const N: u64 = 3_000;
    let tg = text::TextGen::new();
    let mut g = Gen::new(12_345, 1, 0, N, &tg);
    let mut clock = Clock::new(12_345, 1, N);
    let hard = hard_positions(12_345, 1, N, 1e-3);
    let mut o: Vec<u8> = Vec::with_capacity(4 << 20);
    let mut next = 0;
    for i in 0..N {
        let t = clock.next();
        let start = o.len();
        g.event(&mut o, t);
        if next < hard.len() && hard[next].0 == i {
            o.truncate(start);
            g.hard_event(&mut o, t, hard[next].1);
            next += 1;
        }
    }
    // And the start of a file in each later mix segment (and day of the rate model).
    for file in [51, 501] {
        let mut g = Gen::new(12_345, file, (file - 1) * 1_000_000, 1_000_000, &tg);
        let mut clock = Clock::new(12_345, file, 1_000_000);
        for _ in 0..1_000 {
            g.event(&mut o, clock.next());
        }
    }
    let digest = Sha256::digest(&o);
    format!("{VERSION}+{}", &hex(&digest)[..10])
}

fn run(a: Args) -> io::Result<()> {
    let started = Instant::now();
    let out = a.out.clone().unwrap();
    let to_stdout = out.as_os_str() == "-";
    // Devices, pipes (e.g. /dev/null) are written in place; regular files are written to a
    // temporary name and renamed when complete, so a partial file never looks finished.
    let in_place = std::fs::metadata(&out).map(|m| !m.file_type().is_file()).unwrap_or(false);
    let tmp = {
        let mut s = out.clone().into_os_string();
        s.push(format!(".tmp{}", std::process::id()));
        PathBuf::from(s)
    };
    let raw: Box<dyn Write> = if to_stdout {
        Box::new(io::stdout().lock())
    } else if in_place {
        Box::new(std::fs::OpenOptions::new().write(true).open(&out)?)
    } else {
        Box::new(File::create(&tmp)?)
    };
    let hw = HashWriter { inner: raw, hasher: Sha256::new(), bytes: 0 };
    let mut sink = match a.compress.as_str() {
        "gzip" => {
            let level = a.level.unwrap_or(6).clamp(0, 9) as u32;
            Sink::Gzip(flate2::write::GzEncoder::new(hw, flate2::Compression::new(level)))
        }
        "zstd" => Sink::Zstd(zstd::stream::write::Encoder::new(hw, a.level.unwrap_or(3))?),
        _ => Sink::Plain(hw),
    };

    let tg = text::TextGen::new();
    let mut g = Gen::new(a.seed, a.file, (a.file - 1) * a.docs_per_file, a.docs_per_file, &tg);
    let mut clock = Clock::new(a.seed, a.file, a.docs_per_file);
    let hard = hard_positions(a.seed, a.file, a.docs_per_file, a.hard_rate);
    let mut next_hard = 0usize;
    let mut dirty_rng = Rng::new(a.seed, a.file, 5);

    const FLUSH: usize = 4 << 20;
    let mut o: Vec<u8> = Vec::with_capacity(FLUSH + (256 << 10));
    let mut uncompressed: u64 = 0;
    let mut line: u64 = 0; // lines written so far
    let mut hard_out: Vec<(u64, Hard)> = Vec::new();
    let mut dirty_out: Vec<(u64, &'static str)> = Vec::new();
    let mut first_t = 0;
    let mut last_t = 0;

    for i in 0..a.count {
        let t = clock.next();
        if i == 0 {
            first_t = t;
        }
        last_t = t;
        let start = o.len();
        g.event(&mut o, t);
        if next_hard < hard.len() && hard[next_hard].0 == i {
            o.truncate(start);
            g.hard_event(&mut o, t, hard[next_hard].1);
            hard_out.push((line + 1, hard[next_hard].1));
            next_hard += 1;
        }
        line += 1;
        if a.dirty_rate > 0.0 && dirty_rng.f64() < a.dirty_rate {
            // An extra, invalid line after this document.
            let doc = o[start..].to_vec();
            let kind = match dirty_rng.below(3) {
                0 => {
                    let cut = dirty_rng.range(2, (doc.len() as u64).saturating_sub(3).max(2)) as usize;
                    o.extend_from_slice(&doc[..cut]);
                    o.push(b'\n');
                    "truncated"
                }
                1 => {
                    // Invalid UTF-8 bytes inside the did string.
                    o.extend_from_slice(&doc[..12]);
                    o.extend_from_slice(b"\xff\xfe\xc3\x28");
                    o.extend_from_slice(&doc[12..]);
                    "invalid_utf8"
                }
                _ => {
                    o.push(b'\n');
                    "empty"
                }
            };
            line += 1;
            dirty_out.push((line, kind));
        }
        if o.len() >= FLUSH {
            uncompressed += o.len() as u64;
            sink.write_all(&o)?;
            o.clear();
        }
        if (i + 1) % a.progress_every == 0 {
            eprintln!("progress {}", i + 1);
        }
    }
    uncompressed += o.len() as u64;
    sink.write_all(&o)?;
    let hw = sink.finish()?;
    let bytes = hw.bytes;
    let digest = hw.hasher.finalize();
    drop(hw.inner);
    if !to_stdout && !in_place {
        std::fs::rename(&tmp, &out)?;
    }
    if a.count % a.progress_every != 0 {
        eprintln!("progress {}", a.count);
    }

    // Summary on stdout (or stderr when the data went to stdout).
    let mut s = String::with_capacity(1024);
    s.push_str(&format!(
        "{{\"generator\":\"docbench-gen\",\"version\":\"{}\",\"file\":{},\"path\":{},\"docs\":{},\"lines\":{},\
         \"bytes\":{},\"uncompressed_bytes\":{},\"sha256\":\"{}\",\"first_time_us\":{},\"last_time_us\":{},\
         \"seconds\":{:.3},\"peak_rss_bytes\":{},\"hard\":[",
        full_version(),
        a.file,
        json_string(&out.to_string_lossy()),
        a.count,
        line,
        bytes,
        uncompressed,
        hex(&digest),
        first_t,
        last_t,
        started.elapsed().as_secs_f64(),
        peak_rss_bytes()
    ));
    for (i, (l, k)) in hard_out.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&format!("{{\"line\":{l},\"kind\":\"{}\"}}", k.name()));
    }
    s.push_str("],\"dirty\":[");
    for (i, (l, k)) in dirty_out.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&format!("{{\"line\":{l},\"kind\":\"{k}\"}}"));
    }
    s.push_str("]}");
    if to_stdout {
        eprintln!("{s}");
    } else {
        println!("{s}");
    }
    Ok(())
}

/// Peak resident set size of this process (VmHWM), 0 where /proc is not available.
fn peak_rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<u64>().ok())
        })
        .map(|kb| kb * 1024)
        .unwrap_or(0)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn json_string(s: &str) -> String {
    let mut v = Vec::new();
    json::str(&mut v, s.as_bytes());
    String::from_utf8(v).unwrap()
}

fn main() {
    let a = parse_args();
    if let Err(e) = run(a) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_fills_its_window_strictly_increasing() {
        let d = 50_000;
        let mut previous_end = T0;
        for file in [1u64, 2, 3] {
            let mut c = Clock::new(3, file, d);
            let (start, window) = file_window(file, d);
            assert_eq!(start, previous_end);
            previous_end = start + window;
            let mut prev = 0;
            for i in 0..d {
                let t = c.next();
                if i == 0 {
                    assert_eq!(t, start);
                }
                assert!(t > prev);
                prev = t;
            }
            assert!(prev < start + window);
            assert!(prev > start + window - window / 100);
        }
    }

    #[test]
    fn hard_placement_rule() {
        let h = hard_positions(1, 1, 1_000_000, 1e-6);
        for (j, k) in Hard::ALL.iter().enumerate() {
            assert!(h.contains(&(100_000 * (2 * j as u64 + 1), *k)));
        }
        assert!(hard_positions(1, 1, 1_000_000, 0.0).is_empty());
        let n: usize = (2..200).map(|f| hard_positions(1, f, 1_000_000, 1e-6).len()).sum();
        assert!((150..=250).contains(&n), "{n}");
    }

    #[test]
    fn same_seed_same_bytes() {
        let tg = text::TextGen::new();
        let run = |seed| {
            let mut g = Gen::new(seed, 4, 6_000, 2_000, &tg);
            let mut c = Clock::new(seed, 4, 2_000);
            let mut o = Vec::new();
            for _ in 0..2_000 {
                g.event(&mut o, c.next());
            }
            o
        };
        assert_eq!(run(9), run(9));
        assert_ne!(run(9), run(10));
    }
}
