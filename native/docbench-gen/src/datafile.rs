//! What goes into data file k besides its events: the times (a strictly increasing clock over
//! the file's window), where its hard documents go, the invalid lines of `--dirty-rate`, and
//! the version fingerprint of what the generator writes.
//!
//! The content of file k depends only on (seed, k, docs per file, hard rate, dirty rate); a
//! shorter count is a prefix of the full file.

use sha2::{Digest, Sha256};

use crate::digest::hex;
use crate::gen::{Gen, Hard, DESCRIBED_IMAGES};
use crate::model::{seconds_at_event, T0};
use crate::rng::{InvCdf, Rng};
use crate::text::TextGen;

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

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
pub struct Clock {
    rng: Rng,
    cdf: InvCdf,
    start: u64,
    scale: f64,
    i: u64,
    prefix: f64,
}

/// (first time_us, window length in µs) of file k.
pub fn file_window(file: u64, docs_per_file: u64) -> (u64, u64) {
    let first = (file - 1) * docs_per_file;
    let at = |events: u64| T0 + (seconds_at_event(events) * 1e6).round() as u64;
    let start = at(first);
    (start, at(first + docs_per_file) - start)
}

impl Clock {
    pub fn new(seed: u64, file: u64, docs_per_file: u64) -> Clock {
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

    /// The next document's time_us.
    #[inline]
    #[allow(clippy::should_implement_trait)] // one per document, never exhausted
    pub fn next(&mut self) -> u64 {
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
pub fn hard_positions(seed: u64, file: u64, dpf: u64, rate: f64) -> Vec<(u64, Hard)> {
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

/// The stream that decides the invalid lines of file k (`dirty_line`).
pub fn dirty_rng(seed: u64, file: u64) -> Rng {
    Rng::new(seed, file, 5)
}

/// With probability `rate`, an extra, invalid line after the document `o[start..]` (a whole
/// line, newline included): the document cut short, the document with invalid UTF-8 bytes
/// inside its did string, or an empty line. Returns the kind written, if any.
pub fn dirty_line(o: &mut Vec<u8>, start: usize, rate: f64, rng: &mut Rng) -> Option<&'static str> {
    if !(rate > 0.0 && rng.f64() < rate) {
        return None;
    }
    let doc = o[start..].to_vec();
    let kind = match rng.below(3) {
        0 => {
            let cut = rng.range(2, (doc.len() as u64).saturating_sub(3).max(2)) as usize;
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
    Some(kind)
}

/// The crate version plus a fingerprint of the output (sha256 of a small file generated with
/// fixed parameters, hard and dirty lines included), so any change to what the generator writes
/// changes the version recorded in dataset.json.
pub fn full_version() -> String {
    const N: u64 = 3_000;
    let tg = TextGen::new();
    let mut g = Gen::new(12_345, 1, 0, N, &tg);
    let mut clock = Clock::new(12_345, 1, N);
    let hard = hard_positions(12_345, 1, N, 1e-3);
    // Hashed a document at a time: the summary of every generated file carries this version,
    // so it must not hold the whole sample in memory.
    let mut sha = Sha256::new();
    let mut o: Vec<u8> = Vec::with_capacity(1 << 16);
    let mut next = 0;
    for i in 0..N {
        let t = clock.next();
        o.clear();
        g.event(&mut o, t);
        if next < hard.len() && hard[next].0 == i {
            o.clear();
            g.hard_event(&mut o, t, hard[next].1);
            next += 1;
        }
        sha.update(&o);
    }
    // And the start of a file in each later mix segment (and day of the rate model).
    for file in [51, 501] {
        let mut g = Gen::new(12_345, file, (file - 1) * 1_000_000, 1_000_000, &tg);
        let mut clock = Clock::new(12_345, file, 1_000_000);
        for _ in 0..1_000 {
            o.clear();
            g.event(&mut o, clock.next());
            sha.update(&o);
        }
    }
    // Long image descriptions are too rare to be in that sample: a few of them, and their rate.
    o.clear();
    g.long_alt_sample(&mut o);
    sha.update(&o);
    sha.update(DESCRIBED_IMAGES.to_le_bytes());
    let digest = sha.finalize();
    format!("{VERSION}+{}", &hex(&digest)[..10])
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
    fn documents_of_4_kib_and_more_in_nearly_every_duckdb_row_group() {
        // The published DuckDB 1.1.3 sizes need ~35 per million (README, "DuckDB"); each is a
        // post whose images carry long descriptions, each description at most 2,000
        // graphemes (the Bluesky app's limit; at most 3 bytes a grapheme here).
        const ROWS: u64 = 122_880;
        let (files, docs) = (2u64, 1_000_000u64);
        let tg = TextGen::new();
        let (mut large, mut groups_without) = (0, 0);
        for file in 1..=files {
            let mut g = Gen::new(1, file, (file - 1) * docs, docs, &tg);
            let mut clock = Clock::new(1, file, docs);
            let mut o = Vec::with_capacity(1 << 16);
            let mut in_group = 0;
            for i in 1..=docs {
                o.clear();
                g.event(&mut o, clock.next());
                if o.len() > 4096 {
                    large += 1;
                    in_group += 1;
                    let doc: serde_json::Value = serde_json::from_slice(&o).unwrap();
                    let record = &doc["commit"]["record"];
                    let embed = &record["embed"];
                    let images = embed["images"].as_array().or(embed["media"]["images"].as_array()).unwrap();
                    for image in images {
                        assert!(image["alt"].as_str().unwrap().len() <= 6_000);
                    }
                }
                if i % ROWS == 0 {
                    groups_without += (in_group == 0) as u32;
                    in_group = 0;
                }
            }
        }
        let per_million = large as f64 / files as f64;
        assert!((20.0..=55.0).contains(&per_million), "{per_million} per million");
        assert!(groups_without <= 1, "{groups_without} of 16 row groups without one");
    }

    #[test]
    fn same_seed_same_bytes() {
        let tg = TextGen::new();
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

    #[test]
    fn dirty_lines_are_invalid_lines_of_each_kind() {
        let tg = TextGen::new();
        let mut g = Gen::new(1, 1, 0, 1_000, &tg);
        let mut clock = Clock::new(1, 1, 1_000);
        let mut rng = dirty_rng(1, 1);
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..300 {
            let mut o = Vec::new();
            g.event(&mut o, clock.next());
            let document = o.clone();
            let Some(kind) = dirty_line(&mut o, 0, 1.0, &mut rng) else { panic!("rate 1 writes one") };
            seen.insert(kind);
            assert!(o.starts_with(&document));
            let extra = &o[document.len()..];
            assert_eq!(extra.iter().filter(|&&c| c == b'\n').count(), 1);
            assert!(extra.ends_with(b"\n"));
            let line = &extra[..extra.len() - 1];
            match kind {
                "empty" => assert!(line.is_empty()),
                "invalid_utf8" => assert!(std::str::from_utf8(line).is_err()),
                "truncated" => assert!(serde_json::from_slice::<serde_json::Value>(line).is_err()),
                other => panic!("{other}"),
            }
        }
        assert_eq!(seen.len(), 3);
        let mut o = b"{}\n".to_vec();
        assert_eq!(dirty_line(&mut o, 0, 0.0, &mut rng), None);
        assert_eq!(o, b"{}\n");
    }

    #[test]
    fn version_is_the_crate_version_and_a_fingerprint() {
        let version = full_version();
        let (crate_version, fingerprint) = version.split_once('+').unwrap();
        assert_eq!(crate_version, VERSION);
        assert_eq!(fingerprint.len(), 10);
        assert_eq!(version, full_version());
    }
}
