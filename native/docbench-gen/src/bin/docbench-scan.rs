//! docbench-scan: the oracle's native scanner. Reads one data file (or a byte range of a
//! plain one), aggregates the lines it can judge exactly and hands every other line back to
//! the oracle's Python scan (`docbench_gen::scan` says which lines and what it prints).
//!
//! usage: docbench-scan PATH --compression none|gzip|zstd --post COLLECTION
//!        [--start B --end B] [--sha256]
//!        docbench-scan --portable PLAN [--threads N] [--skip LINES] --file none|gzip|zstd PATH [--file ...]
//! (--skip: a JSON file {"FILE INDEX": [line numbers, 1-based]} of lines left out)
//! (--portable: the answers of a portable query set over the files, in order, on N threads;
//! `docbench_gen::portable`)

// mimalloc: the portable scan parses each line into a few small objects and drops them; with
// glibc's allocator, malloc and free were a fifth of its time (perf, 10m events).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};

use docbench_gen::digest::Sha256Reader;
use docbench_gen::portable::{read_skip, scan_files, Plan, Portable, Skip};
use docbench_gen::procstats::peak_rss;
use docbench_gen::scan::{scan, write_output, Scan};

struct Args {
    path: String,
    compression: String,
    post: String,
    start: u64,
    end: Option<u64>,
    sha: bool,
    portable: Option<String>,
    threads: usize,
    files: Vec<(String, String)>,
    skip: Option<String>,
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
        portable: None,
        threads: 1,
        files: Vec::new(),
        skip: None,
    };
    let mut i = 0;
    while i < argv.len() {
        let key = argv[i].as_str();
        let value = || argv.get(i + 1).cloned().unwrap_or_else(|| usage());
        match key {
            "--compression" => a.compression = value(),
            "--post" => a.post = value(),
            "--portable" => a.portable = Some(value()),
            "--start" => a.start = value().parse().unwrap_or_else(|_| usage()),
            "--end" => a.end = Some(value().parse().unwrap_or_else(|_| usage())),
            "--threads" => a.threads = value().parse().unwrap_or_else(|_| usage()),
            "--skip" => a.skip = Some(value()),
            "--file" => {
                let path = argv.get(i + 2).cloned().unwrap_or_else(|| usage());
                a.files.push((value(), path));
                i += 3;
                continue;
            }
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
    if a.portable.is_some() && a.path.is_empty() && !a.files.is_empty() {
        return a;
    }
    if a.path.is_empty() || (a.post.is_empty() && a.portable.is_none()) {
        usage()
    }
    a
}

fn decoder(compression: &str, raw: Box<dyn Read>) -> io::Result<Box<dyn Read>> {
    Ok(match compression {
        "none" => raw,
        "gzip" => Box::new(flate2::read::MultiGzDecoder::new(BufReader::with_capacity(1 << 20, raw))),
        "zstd" => Box::new(zstd::stream::read::Decoder::new(raw)?),
        other => return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("compression {other}"))),
    })
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
    Ok((decoder(&args.compression, raw)?, hasher))
}

fn fail(what: &str, error: impl std::fmt::Display) -> ! {
    eprintln!("docbench-scan: {what}: {error}");
    std::process::exit(1)
}

/// The portable query set's answers over the files (or the one file's range).
fn main_portable(args: &Args, plan_path: &str) {
    let plan = std::fs::read_to_string(plan_path).unwrap_or_else(|e| fail(plan_path, e));
    let result = if args.files.is_empty() {
        // one file, or a byte range of one: read on this thread
        serde_json::from_str::<Plan>(&plan).map_err(io::Error::other).and_then(|plan| {
            let mut state = Portable::new(plan);
            let (mut reader, _) = open(args)?;
            scan(&mut *reader, &mut state)?;
            Ok(state)
        })
    } else {
        let skip = match &args.skip {
            Some(path) => std::fs::read_to_string(path)
                .and_then(|text| read_skip(&text).map_err(io::Error::other))
                .unwrap_or_else(|e| fail(path, e)),
            None => Skip::new(),
        };
        scan_files(&plan, &args.files, args.threads, 4 << 20, &skip, |compression, path| {
            decoder(compression, Box::new(File::open(path)?))
        })
    };
    let mut state = result.unwrap_or_else(|error| fail(&args.path, error));
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(1 << 20, stdout.lock());
    if let Err(error) = state.write_output(&mut out) {
        fail("writing the result", error)
    }
}

fn main() {
    let args = parse_args();
    if let Some(plan) = args.portable.clone() {
        return main_portable(&args, &plan);
    }
    let mut state = Scan::new(&args.post);
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
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(1 << 20, stdout.lock());
    if let Err(error) = write_output(&mut state, sha, peak_rss(), &mut out) {
        eprintln!("docbench-scan: writing the result: {error}");
        std::process::exit(1)
    }
}
