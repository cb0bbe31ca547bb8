//! The three programs end to end: command lines, outputs, the client's protocol.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use sha2::{Digest, Sha256};

const GEN: &str = env!("CARGO_BIN_EXE_docbench-gen");
const SCAN: &str = env!("CARGO_BIN_EXE_docbench-scan");
const CLIENT: &str = env!("CARGO_BIN_EXE_docbench-client");

/// A directory of this test's own, removed at the end.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("docbench-gen-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run(program: &str, args: &[&str]) -> Output {
    Command::new(program).args(args).output().unwrap()
}

fn json(bytes: &[u8]) -> serde_json::Value {
    serde_json::from_slice(bytes).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(bytes)))
}

fn sha256(path: &Path) -> String {
    docbench_gen::digest::hex(&Sha256::digest(std::fs::read(path).unwrap()))
}

/// Generates file `file` (3000 documents a file, hard and dirty lines one in a thousand).
fn generate(out: &Path, file: &str, count: &str, extra: &[&str]) -> serde_json::Value {
    let out = out.to_str().unwrap();
    let mut args = vec!["--file", file, "--seed", "3", "--docs-per-file", "3000", "--count", count, "--out", out];
    args.extend_from_slice(&["--hard-rate", "1e-3", "--dirty-rate", "1e-3"]);
    args.extend_from_slice(extra);
    let done = run(GEN, &args);
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    json(&done.stdout)
}

#[test]
fn generator_writes_prefixes_and_describes_them() {
    let dir = Scratch::new("prefix");
    let full = generate(&dir.path("full.ndjson"), "1", "3000", &[]);
    let part = generate(&dir.path("part.ndjson"), "1", "1200", &["--progress-every", "500"]);
    let (full_bytes, part_bytes) =
        (std::fs::read(dir.path("full.ndjson")).unwrap(), std::fs::read(dir.path("part.ndjson")).unwrap());
    assert!(full_bytes.starts_with(&part_bytes) && part_bytes.len() < full_bytes.len());
    assert_eq!(full["docs"], 3000);
    assert_eq!(full["sha256"], sha256(&dir.path("full.ndjson")));
    assert_eq!(full["bytes"], full_bytes.len());
    assert_eq!(full["lines"], full_bytes.iter().filter(|&&c| c == b'\n').count());
    assert_eq!(full["hard"].as_array().unwrap().len(), 5 + 3); // file 1: the five kinds, + rate
    assert!(full["version"].as_str().unwrap().starts_with(concat!(env!("CARGO_PKG_VERSION"), "+")));
    assert_eq!(part["docs"], 1200);

    // The same bytes to stdout (the summary then goes to stderr), and compressed.
    let to_stdout = run(
        GEN,
        &[
            "--file", "1", "--seed", "3", "--docs-per-file", "3000", "--hard-rate", "1e-3", "--dirty-rate", "1e-3",
            "--out", "-",
        ],
    );
    assert_eq!(to_stdout.stdout, full_bytes);
    let summary = String::from_utf8(to_stdout.stderr).unwrap();
    assert!(summary.lines().any(|l| l == "progress 3000"));
    assert_eq!(json(summary.lines().last().unwrap().as_bytes())["sha256"], full["sha256"]);
    let gz = generate(&dir.path("full.ndjson.gz"), "1", "3000", &["--compress", "gzip"]);
    assert_eq!(gz["uncompressed_bytes"], full_bytes.len());
    assert_eq!(gz["sha256"], sha256(&dir.path("full.ndjson.gz")));

    let other_seed = run(GEN, &["--file", "1", "--seed", "4", "--docs-per-file", "3000", "--out", "-"]);
    assert_ne!(other_seed.stdout[..1000], full_bytes[..1000]);
}

#[test]
fn generator_refuses_bad_arguments() {
    for args in [
        &["--file", "0", "--out", "-"][..],
        &["--file", "1"],
        &["--file", "1", "--out", "-", "--compress", "lz4"],
        &["--file", "x", "--out", "-"],
        &["--bogus", "1"],
    ] {
        let done = run(GEN, args);
        assert_eq!(done.status.code(), Some(2), "{args:?}");
        assert!(String::from_utf8_lossy(&done.stderr).starts_with("usage: docbench-gen"));
    }
    let version = run(GEN, &["--version"]);
    let version = String::from_utf8(version.stdout).unwrap();
    assert_eq!(version.trim(), format!("docbench-gen {}", docbench_gen::datafile::full_version()));
}

/// The scanner's header line and the lines it handed back.
fn scan(args: &[&str]) -> (serde_json::Value, Vec<Vec<u8>>) {
    let done = run(SCAN, args);
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    let newline = done.stdout.iter().position(|&c| c == b'\n').unwrap();
    let header = json(&done.stdout[..newline]);
    let mut words = 0;
    for coll in header["colls"].as_array().unwrap() {
        words += 2 * coll[4].as_u64().unwrap() as usize;
    }
    words += 4 * header["posts"].as_u64().unwrap() as usize;
    let mut at = newline + 1 + 8 * words;
    let n = header["handed_back"].as_u64().unwrap() as usize;
    let lengths: Vec<usize> =
        done.stdout[at..at + 4 * n].chunks(4).map(|b| u32::from_le_bytes(b.try_into().unwrap()) as usize).collect();
    at += 4 * n;
    let mut lines = Vec::new();
    for length in lengths {
        lines.push(done.stdout[at..at + length].to_vec());
        at += length;
    }
    assert_eq!(at, done.stdout.len());
    (header, lines)
}

#[test]
fn scanner_takes_the_generated_events_and_hands_back_the_rest() {
    let dir = Scratch::new("scan");
    let summary = generate(&dir.path("f.ndjson"), "1", "3000", &[]);
    let plain = dir.path("f.ndjson");
    let plain = plain.to_str().unwrap();
    let (header, handed_back) = scan(&[plain, "--compression", "none", "--post", "app.bsky.feed.post", "--sha256"]);
    assert_eq!(header["lines"], summary["lines"]);
    assert_eq!(header["sha256"], summary["sha256"]);
    assert_eq!(header["documents"].as_u64().unwrap() + handed_back.len() as u64, header["lines"].as_u64().unwrap());
    let dirty = summary["dirty"].as_array().unwrap();
    assert!(!dirty.is_empty() && handed_back.len() >= dirty.len());
    assert!(handed_back.iter().any(|l| l.is_empty()) == dirty.iter().any(|d| d["kind"] == "empty"));
    assert!(header["colls"].as_array().unwrap().iter().any(|c| c[0] == "app.bsky.feed.like"));

    // Compressed, the same answers; a byte range reads only its lines.
    generate(&dir.path("f.ndjson.zst"), "1", "3000", &["--compress", "zstd"]);
    let zst = dir.path("f.ndjson.zst");
    let (zheader, zback) = scan(&[zst.to_str().unwrap(), "--compression", "zstd", "--post", "app.bsky.feed.post"]);
    let strip = |mut h: serde_json::Value| {
        h["peak_rss"] = serde_json::Value::Null;
        h["sha256"] = serde_json::Value::Null;
        h
    };
    assert_eq!(strip(zheader), strip(header.clone()));
    assert_eq!(zback, handed_back);
    let bytes = std::fs::read(plain).unwrap();
    let cut = bytes[..bytes.len() / 2].iter().rposition(|&c| c == b'\n').unwrap() + 1;
    let (first, _) = scan(&[plain, "--compression", "none", "--post", "app.bsky.feed.post", "--end", &cut.to_string()]);
    let (second, _) =
        scan(&[plain, "--compression", "none", "--post", "app.bsky.feed.post", "--start", &cut.to_string()]);
    assert_eq!(first["lines"].as_u64().unwrap() + second["lines"].as_u64().unwrap(), header["lines"].as_u64().unwrap());

    let usage = run(SCAN, &[plain, "--compression", "none"]);
    assert_eq!(usage.status.code(), Some(2));
    let missing = run(SCAN, &["/nonexistent/f.ndjson", "--compression", "none", "--post", "p"]);
    assert_eq!(missing.status.code(), Some(1));
}

#[test]
fn client_speaks_its_protocol() {
    let config = serde_json::json!({
        "protocol": "noop", "client_ids": [0, 1], "total_clients": 2, "docs": 100, "seed": 1,
        "operations": [["read", 0.5], ["update", 0.5]], "distribution": "uniform", "warmup_ns": 0,
        "duration_ns": 30_000_000, "interval_ns": 10_000_000, "intervals": 3, "rate_per_client": null,
    });
    let mut child =
        Command::new(CLIENT).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    writeln!(stdin, "{config}").unwrap();
    let mut ready = String::new();
    stdout.read_line(&mut ready).unwrap();
    let connect: Vec<&str> = ready.trim_end().strip_prefix("ready ").unwrap().split(',').collect();
    assert_eq!(connect.len(), 2);
    assert!(connect.iter().all(|n| n.parse::<i64>().unwrap() >= 0));
    let start = docbench_gen::client::driver::monotonic_ns() + 5_000_000;
    writeln!(stdin, "go {start}").unwrap();
    let mut rest = Vec::new();
    stdout.read_to_end(&mut rest).unwrap();
    assert!(child.wait().unwrap().success());
    let (mut at, mut slots, mut operations) = (0, Vec::new(), 0);
    while rest[at] == b'I' {
        slots.push(u32::from_le_bytes(rest[at + 1..at + 5].try_into().unwrap()));
        let n = u64::from_le_bytes(rest[at + 13..at + 21].try_into().unwrap()) as usize;
        operations += n;
        at += 21 + n * (8 + 8 + 1 + 8);
    }
    assert_eq!(slots, [0, 1, 2]);
    assert_eq!(rest[at], b'F');
    let length = u32::from_le_bytes(rest[at + 1..at + 5].try_into().unwrap()) as usize;
    assert_eq!(rest.len(), at + 5 + length);
    let last = json(&rest[at + 5..]);
    assert_eq!(last["operations_done"], operations);
    assert!(operations > 0);
    assert_eq!(last["failed"], serde_json::json!({"read": 0, "update": 0}));

    // Refusals come as `failed <message>` in place of `ready`.
    for (line, message) in [
        ("{nope".to_string(), "failed bad configuration: key must be a string at line 1 column 2"),
        (
            serde_json::json!({"client_ids": []}).to_string(),
            "failed bad configuration: missing field `protocol` at line 1 column 17",
        ),
        (config.to_string().replace("noop", "xyz"), "failed unknown protocol xyz"),
        (config.to_string().replace("uniform", "pareto"), "failed unknown distribution pareto"),
        (config.to_string().replace("\"update\"", "\"scan\""), "failed unknown operation scan"),
        (config.to_string().replace("[0,1]", "[]"), "failed no clients, operations or interval"),
    ] {
        let mut child = Command::new(CLIENT).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
        writeln!(child.stdin.take().unwrap(), "{line}").unwrap();
        let mut answer = String::new();
        child.stdout.take().unwrap().read_to_string(&mut answer).unwrap();
        assert_eq!(answer, format!("{message}\n"));
        assert_eq!(child.wait().unwrap().code(), Some(1));
    }
}
