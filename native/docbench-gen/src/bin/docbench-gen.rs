//! docbench-gen: writes one JSONBench-layout file of synthetic Bluesky Jetstream events.
//!
//! The content of file k depends only on (seed, k, docs per file, hard rate, dirty rate); a
//! shorter `--count` is a prefix of the full file (the library's `gen` writes the events,
//! `datafile` their times, hard documents and invalid lines). Progress goes to stderr
//! (`progress <docs>` lines), a JSON summary to stdout.

#![allow(clippy::manual_is_multiple_of)]

use std::fs::File;
use std::io::{self, Write};
use std::path::PathBuf;
use std::time::Instant;

use sha2::Digest;

use docbench_gen::datafile::{dirty_line, dirty_rng, full_version, hard_positions, Clock};
use docbench_gen::digest::{hex, HashWriter};
use docbench_gen::gen::{Gen, Hard};
use docbench_gen::procstats::peak_rss;
use docbench_gen::{json, text};

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
         docbench-gen --version\n\
         docbench-gen shapes --help (documents of other shapes: paths, depth, types, popularity)"
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
    if argv.first().map(String::as_str) == Some("shapes") {
        std::process::exit(docbench_gen::shapes::cli::main(&argv[1..]));
    }
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
    let hw = HashWriter::new(raw);
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
    let mut dirty_rng = dirty_rng(a.seed, a.file);

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
        if let Some(kind) = dirty_line(&mut o, start, a.dirty_rate, &mut dirty_rng) {
            // An extra, invalid line after this document.
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
        peak_rss().unwrap_or(0)
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
