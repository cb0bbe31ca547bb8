//! Documents of other shapes than Bluesky events: the heterogeneity axis of issue #33.
//!
//! A universe of `paths` distinct leaf paths, each with a fixed depth, name and type; every
//! document holds `per_doc` of them, chosen by popularity (a power law of exponent `zipf` over
//! the paths' ranks: a few common paths, a long tail of rare ones). A share of the paths hold
//! arrays, a share change type from one document to the next (a number here, a string there).
//! Document `i` depends only on (seed, knobs, i): any file, any slice, any order.
//!
//! The oracle of the shape queries is computed in the same pass ([`Oracle`]), without any
//! database: a point lookup of the most common path, an aggregate over a rare numeric path, a
//! filter on a path whose type varies, a count of the documents having a mid-popular path.

use crate::json;
use crate::rng::{hash3, mix64, PowerLaw, Rng};

const DOMAIN_PATH: u64 = 0x5_4a9e_0001;
const DOMAIN_DOC: u64 = 0x5_4a9e_0002;
const DOMAIN_VALUE: u64 = 0x5_4a9e_0003;
/// Children per object level: paths whose numbers share low bits share their parents.
const FANOUT: u64 = 8;
/// The filter of the varying path: its value is a JSON number greater than this.
pub const FILTER_THRESHOLD: i64 = 500_000;

/// What shape the documents have.
#[derive(Clone, Debug, PartialEq)]
pub struct Knobs {
    /// Distinct leaf paths in the universe.
    pub paths: u64,
    /// Leaf paths per document (at most `paths`).
    pub per_doc: u64,
    /// Deepest nesting of a leaf (1: top-level keys only).
    pub depth: u32,
    /// Share of the paths whose value is an array of 1-4 scalars.
    pub array_share: f64,
    /// Share of the paths whose type changes from document to document (integer or string).
    pub varying_share: f64,
    /// Popularity exponent over the paths' ranks (0: uniform).
    pub zipf: f64,
    /// Characters of a string value.
    pub string_len: u32,
}

/// The named presets: (name, knobs, what it stands for).
pub fn presets() -> Vec<(&'static str, Knobs, &'static str)> {
    let k = |paths, per_doc, depth, array_share, varying_share, zipf, string_len| Knobs {
        paths,
        per_doc,
        depth,
        array_share,
        varying_share,
        zipf,
        string_len,
    };
    vec![
        ("logs", k(200, 20, 2, 0.05, 0.05, 1.1, 24), "application logs: few paths, shallow, skewed"),
        ("catalogue", k(5_000, 40, 3, 0.2, 0.02, 0.8, 32), "product catalogue: many sparse attributes"),
        ("telemetry", k(1_000, 60, 2, 0.0, 0.1, 0.6, 8), "device telemetry: many numeric readings"),
        ("deep", k(500, 20, 12, 0.1, 0.05, 1.0, 16), "deeply nested objects"),
    ]
}

pub fn preset(name: &str) -> Option<Knobs> {
    presets().into_iter().find(|(n, _, _)| *n == name).map(|(_, k, _)| k)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Int,
    Float,
    Str,
    Bool,
    /// An integer in some documents, a string in others.
    Varying,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Int => "int",
            Kind::Float => "float",
            Kind::Str => "string",
            Kind::Bool => "bool",
            Kind::Varying => "varying",
        }
    }
}

/// One leaf path of the universe.
#[derive(Clone, Debug)]
pub struct Path {
    /// Its keys from the top: parents `o<k>` (shared between paths), the leaf `p<number>`.
    pub keys: Vec<String>,
    pub kind: Kind,
    pub array: bool,
}

impl Path {
    /// The dotted name (no key holds a dot).
    pub fn dotted(&self) -> String {
        self.keys.join(".")
    }
}

/// The paths, their popularity and the permutation from rank to path.
pub struct Universe {
    pub knobs: Knobs,
    pub seed: u64,
    pub paths: Vec<Path>,
    popularity: PowerLaw,
    multiplier: u64,
    offset: u64,
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

fn unit(h: u64) -> f64 {
    (h >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

impl Universe {
    pub fn new(knobs: Knobs, seed: u64) -> Result<Universe, String> {
        if knobs.paths == 0 || knobs.per_doc == 0 || knobs.per_doc > knobs.paths {
            return Err(format!("paths per document ({}) must be 1 ..= paths ({})", knobs.per_doc, knobs.paths));
        }
        if knobs.depth == 0 || knobs.depth > 64 {
            return Err(format!("depth {} must be 1 ..= 64", knobs.depth));
        }
        for (name, share) in [("array share", knobs.array_share), ("varying share", knobs.varying_share)] {
            if !(0.0..=1.0).contains(&share) {
                return Err(format!("{name} {share} must be within 0 ..= 1"));
            }
        }
        if !(0.0..=10.0).contains(&knobs.zipf) {
            return Err(format!("zipf exponent {} must be within 0 ..= 10", knobs.zipf));
        }
        let paths = (0..knobs.paths).map(|j| Universe::path(&knobs, seed, j)).collect();
        // rank -> path number: j = (rank * multiplier + offset) mod paths, a bijection when the
        // multiplier is coprime with the number of paths (popular paths spread over the tree).
        let mut multiplier = (mix64(seed ^ 0x9e37) % knobs.paths).max(1);
        while gcd(multiplier, knobs.paths) != 1 {
            multiplier += 1;
        }
        let offset = mix64(seed ^ 0x7f4a) % knobs.paths;
        let popularity = PowerLaw::new(knobs.paths, knobs.zipf, 0.0);
        Ok(Universe { knobs, seed, paths, popularity, multiplier, offset })
    }

    fn path(knobs: &Knobs, seed: u64, j: u64) -> Path {
        let h = hash3(DOMAIN_PATH, seed, j);
        let depth = 1 + (mix64(h) % knobs.depth as u64) as usize;
        let mut keys: Vec<String> =
            // Past 8^21 every level is o0 (the power would not fit 64 bits).
            (0..depth - 1)
                .map(|level| format!("o{}", FANOUT.checked_pow(level as u32).map_or(0, |d| (j / d) % FANOUT)))
                .collect();
        keys.push(format!("p{j}"));
        let kind = if unit(mix64(h ^ 1)) < knobs.varying_share {
            Kind::Varying
        } else {
            match mix64(h ^ 2) % 20 {
                0..=7 => Kind::Int,
                8..=15 => Kind::Str,
                16..=18 => Kind::Float,
                _ => Kind::Bool,
            }
        };
        let array = kind != Kind::Varying && unit(mix64(h ^ 3)) < knobs.array_share;
        Path { keys, kind, array }
    }

    /// The path number of popularity rank `rank` (0: the most common).
    pub fn path_at_rank(&self, rank: u64) -> u64 {
        ((rank as u128 * self.multiplier as u128 + self.offset as u128) % self.knobs.paths as u128) as u64
    }

    /// The path numbers document `i` holds, in its key order.
    pub fn paths_of(&self, i: u64) -> Vec<u64> {
        let mut rng = Rng::new(self.seed, DOMAIN_DOC, i);
        let want = self.knobs.per_doc as usize;
        let mut ranks: Vec<u64> = Vec::with_capacity(want);
        let mut attempts = 0;
        while ranks.len() < want && attempts < 50 * want {
            let rank = self.popularity.sample(&mut rng);
            if !ranks.contains(&rank) {
                ranks.push(rank);
            }
            attempts += 1;
        }
        // Almost every path in every document: the draws repeat; the most popular ranks not
        // drawn fill the rest (deterministic, and still skewed towards the head).
        let mut next = 0;
        while ranks.len() < want {
            if !ranks.contains(&next) {
                ranks.push(next);
            }
            next += 1;
        }
        let mut numbers: Vec<u64> = ranks.iter().map(|&r| self.path_at_rank(r)).collect();
        numbers.sort_by(|a, b| self.paths[*a as usize].keys.cmp(&self.paths[*b as usize].keys));
        numbers
    }

    /// The value of path `j` in document `i`, as JSON text.
    pub fn value(&self, i: u64, j: u64, out: &mut Vec<u8>) {
        let path = &self.paths[j as usize];
        let h = hash3(DOMAIN_VALUE, self.seed ^ i.rotate_left(17), j);
        if path.array {
            let n = 1 + (h % 4);
            out.push(b'[');
            for k in 0..n {
                if k > 0 {
                    out.push(b',');
                }
                self.scalar(path.kind, mix64(h ^ (k + 1)), out);
            }
            out.push(b']');
        } else {
            self.scalar(path.kind, h, out);
        }
    }

    fn scalar(&self, kind: Kind, h: u64, out: &mut Vec<u8>) {
        match kind {
            Kind::Int => int_value(h, out),
            Kind::Float => {
                let v = (h % 100_000_000) as f64 / 100.0;
                out.extend_from_slice(format!("{v}").as_bytes());
                if v.fract() == 0.0 {
                    out.extend_from_slice(b".5");
                }
            }
            Kind::Str => string_value(h, self.knobs.string_len, out),
            Kind::Bool => out.extend_from_slice(if h & 1 == 0 { b"false" } else { b"true" }),
            Kind::Varying => {
                if mix64(h ^ 0x55) & 1 == 0 {
                    int_value(h, out)
                } else {
                    string_value(h, self.knobs.string_len, out)
                }
            }
        }
    }

    /// Document `i` as one line of JSON (no newline): `{"id": i, <its paths, nested>}`.
    pub fn document(&self, i: u64, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"id\":");
        json::uint(out, i);
        let mut open: Vec<&str> = Vec::new();
        for j in self.paths_of(i) {
            let keys = &self.paths[j as usize].keys;
            let parents = &keys[..keys.len() - 1];
            let shared = open.iter().zip(parents).take_while(|(a, b)| **a == b.as_str()).count();
            for _ in shared..open.len() {
                out.push(b'}');
            }
            open.truncate(shared);
            for key in &parents[shared..] {
                if out.last() != Some(&b'{') {
                    out.push(b',');
                }
                json::str(out, key.as_bytes());
                out.extend_from_slice(b":{");
                open.push(key);
            }
            // The first key of an object just opened needs no comma.
            if out.last() != Some(&b'{') {
                out.push(b',');
            }
            json::str(out, keys[keys.len() - 1].as_bytes());
            out.push(b':');
            self.value(i, j, out);
        }
        for _ in 0..open.len() {
            out.push(b'}');
        }
        out.push(b'}');
    }
}

fn int_value(h: u64, out: &mut Vec<u8>) {
    json::uint(out, h % 1_000_000);
}

fn string_value(h: u64, len: u32, out: &mut Vec<u8>) {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    out.push(b'"');
    let mut state = h;
    for _ in 0..len {
        state = mix64(state);
        out.push(ALPHABET[(state % ALPHABET.len() as u64) as usize]);
    }
    out.push(b'"');
}

/// The shape queries' paths, chosen from the universe, and their answers over documents
/// `0 .. docs`, accumulated as the documents are written.
pub struct Oracle {
    /// Point lookup: the most common path's value in the first document from `point_from`
    /// on that has it (`point_id`).
    pub common_path: u64,
    pub point_from: u64,
    pub point_id: Option<u64>,
    pub point_value: Option<String>,
    /// Aggregate over a rare path holding one integer: documents having it and their sum.
    pub rare_path: Option<u64>,
    pub rare_count: u64,
    pub rare_sum: u64,
    /// Filter on a path whose type varies: documents where it is a number > FILTER_THRESHOLD.
    pub varying_path: Option<u64>,
    pub varying_matches: u64,
    /// Documents having a path of middle popularity.
    pub present_path: u64,
    pub present_count: u64,
}

impl Oracle {
    pub fn new(universe: &Universe, docs: u64) -> Oracle {
        let n = universe.knobs.paths;
        let rank_of_kind = |from: u64, step: i64, test: &dyn Fn(&Path) -> bool| -> Option<u64> {
            let mut rank = from as i64;
            while rank >= 0 && (rank as u64) < n {
                let j = universe.path_at_rank(rank as u64);
                if test(&universe.paths[j as usize]) {
                    return Some(j);
                }
                rank += step;
            }
            None
        };
        let rare_from = n - 1 - (n / 10).min(n - 1); // in the tail, not its very end
        Oracle {
            common_path: universe.path_at_rank(0),
            point_from: docs / 2,
            point_id: None,
            point_value: None,
            rare_path: rank_of_kind(rare_from, -1, &|p| p.kind == Kind::Int && !p.array),
            rare_count: 0,
            rare_sum: 0,
            varying_path: rank_of_kind(0, 1, &|p| p.kind == Kind::Varying),
            varying_matches: 0,
            present_path: universe.path_at_rank(n / 4),
            present_count: 0,
        }
    }

    /// Count document `i` (its path numbers as [`Universe::paths_of`] gives them).
    pub fn add(&mut self, universe: &Universe, i: u64, paths: &[u64]) {
        let mut value = Vec::new();
        for &j in paths {
            let mut read = || {
                value.clear();
                universe.value(i, j, &mut value);
                String::from_utf8(value.clone()).expect("generated JSON is UTF-8")
            };
            if j == self.common_path && i >= self.point_from && self.point_id.is_none() {
                self.point_id = Some(i);
                self.point_value = Some(read());
            }
            if Some(j) == self.rare_path {
                self.rare_count += 1;
                self.rare_sum += read().parse::<u64>().expect("an integer path");
            }
            if Some(j) == self.varying_path {
                if let Ok(number) = read().parse::<i64>() {
                    if number > FILTER_THRESHOLD {
                        self.varying_matches += 1;
                    }
                }
            }
            if j == self.present_path {
                self.present_count += 1;
            }
        }
    }

    /// The answers and the paths they are about, as JSON.
    pub fn to_json(&self, universe: &Universe) -> serde_json::Value {
        let name = |j: Option<u64>| j.map(|j| universe.paths[j as usize].dotted());
        serde_json::json!({
            "point": {"path": name(Some(self.common_path)), "from": self.point_from, "id": self.point_id,
                      "value": self.point_value},
            "rare_aggregate": {"path": name(self.rare_path), "count": self.rare_count, "sum": self.rare_sum},
            "varying_filter": {"path": name(self.varying_path), "threshold": FILTER_THRESHOLD,
                               "matches": self.varying_matches},
            "presence": {"path": name(Some(self.present_path)), "count": self.present_count},
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn knobs() -> Knobs {
        preset("catalogue").unwrap()
    }

    #[test]
    fn a_document_depends_only_on_seed_knobs_and_index() {
        let a = Universe::new(knobs(), 3).unwrap();
        let b = Universe::new(knobs(), 3).unwrap();
        let (mut x, mut y) = (Vec::new(), Vec::new());
        a.document(41, &mut x);
        b.document(41, &mut y);
        assert_eq!(x, y);
        let mut z = Vec::new();
        Universe::new(knobs(), 4).unwrap().document(41, &mut z);
        assert_ne!(x, z);
    }

    #[test]
    fn documents_are_json_with_the_knobs_paths() {
        for (_, k, _) in presets() {
            let universe = Universe::new(k.clone(), 1).unwrap();
            for i in 0..200 {
                let mut line = Vec::new();
                universe.document(i, &mut line);
                let doc: serde_json::Value = serde_json::from_slice(&line).expect("valid JSON");
                let mut leaves = 0;
                count_leaves(&doc, 0, k.depth as usize, &mut leaves);
                // every path of the document, and its id
                assert_eq!(leaves, k.per_doc + 1, "{}", String::from_utf8_lossy(&line));
            }
        }
    }

    fn count_leaves(v: &serde_json::Value, level: usize, depth: usize, leaves: &mut u64) {
        match v.as_object() {
            Some(map) if level == 0 || !map.is_empty() => {
                assert!(level <= depth, "nested deeper than the depth knob");
                for child in map.values() {
                    count_leaves(child, level + 1, depth, leaves);
                }
            }
            _ => *leaves += 1,
        }
    }

    #[test]
    fn popularity_follows_the_exponent() {
        let mut k = knobs();
        k.per_doc = 1;
        let skewed = Universe::new(k.clone(), 1).unwrap();
        k.zipf = 0.0;
        let uniform = Universe::new(k, 1).unwrap();
        let head = |u: &Universe| (0..5_000).filter(|&i| u.paths_of(i)[0] == u.path_at_rank(0)).count();
        assert!(head(&skewed) > 20 * head(&uniform).max(1), "{} {}", head(&skewed), head(&uniform));
    }
}

/// `docbench-gen shapes ...`: parse the arguments, write the documents, print the summary.
pub mod cli {
    use super::{preset, presets, Knobs, Oracle, Universe};
    use crate::digest::{hex, HashWriter};
    use sha2::Digest;
    use std::io::{self, Write};

    pub const USAGE: &str =
        "usage: docbench-gen shapes --docs N --out PATH|- [--preset logs|catalogue|telemetry|deep] \
        [--paths P] [--per-doc K] [--depth D] [--array-share A] [--varying-share V] [--zipf S] \
        [--string-len L] [--seed S] [--first I] [--summary PATH]\n\
        docbench-gen shapes --presets";

    pub struct Request {
        pub knobs: Knobs,
        pub preset: Option<String>,
        pub docs: u64,
        pub first: u64,
        pub seed: u64,
        pub out: String,
        pub summary: Option<String>,
    }

    /// The request the arguments (after `shapes`) describe, or what is wrong with them.
    pub fn parse(argv: &[String]) -> Result<Request, String> {
        let mut knobs = preset("logs").expect("a preset");
        let mut preset_name = None;
        let (mut docs, mut first, mut seed, mut out, mut summary) = (None, 0, 1, None, None);
        let mut i = 0;
        // The preset first, whatever the order: the other knobs change it.
        if let Some(at) = argv.iter().position(|a| a == "--preset") {
            let name = argv.get(at + 1).ok_or("--preset needs a name")?;
            knobs = preset(name).ok_or_else(|| format!("unknown preset {name}"))?;
            preset_name = Some(name.clone());
        }
        while i < argv.len() {
            let key = argv[i].as_str();
            let val = argv.get(i + 1).ok_or_else(|| format!("{key} needs a value"))?;
            let int = || val.parse::<u64>().map_err(|_| format!("{key}: {val} is not a whole number"));
            let real = || val.parse::<f64>().map_err(|_| format!("{key}: {val} is not a number"));
            match key {
                "--preset" => {}
                "--docs" => docs = Some(int()?),
                "--first" => first = int()?,
                "--seed" => seed = int()?,
                "--out" => out = Some(val.clone()),
                "--summary" => summary = Some(val.clone()),
                "--paths" => knobs.paths = int()?,
                "--per-doc" => knobs.per_doc = int()?,
                "--depth" => knobs.depth = int()? as u32,
                "--array-share" => knobs.array_share = real()?,
                "--varying-share" => knobs.varying_share = real()?,
                "--zipf" => knobs.zipf = real()?,
                "--string-len" => knobs.string_len = int()? as u32,
                _ => return Err(format!("unknown option {key}")),
            }
            i += 2;
        }
        let docs = docs.ok_or("--docs is required")?;
        let out = out.ok_or("--out is required")?;
        // A smaller universe than the preset's paths per document: every path in every one.
        knobs.per_doc = knobs.per_doc.min(knobs.paths);
        Ok(Request { knobs, preset: preset_name, docs, first, seed, out, summary })
    }

    pub fn main(argv: &[String]) -> i32 {
        if argv.first().map(String::as_str) == Some("--help") {
            println!("{USAGE}");
            return 0;
        }
        if argv.first().map(String::as_str) == Some("--presets") {
            for (name, k, what) in presets() {
                println!("{name}\t{k:?}\t{what}");
            }
            return 0;
        }
        let request = match parse(argv) {
            Ok(r) => r,
            Err(message) => {
                eprintln!("docbench-gen shapes: {message}\n{USAGE}");
                return 2;
            }
        };
        match run(&request) {
            Ok(()) => 0,
            Err(error) => {
                eprintln!("docbench-gen shapes: {error}");
                1
            }
        }
    }

    fn run(r: &Request) -> io::Result<()> {
        let universe = Universe::new(r.knobs.clone(), r.seed).map_err(io::Error::other)?;
        let mut oracle = Oracle::new(&universe, r.docs);
        oracle.point_from = r.first + r.docs / 2; // from the middle of the documents written
        let sink: Box<dyn Write> =
            if r.out == "-" { Box::new(io::stdout().lock()) } else { Box::new(std::fs::File::create(&r.out)?) };
        let mut writer = HashWriter::new(io::BufWriter::with_capacity(1 << 20, sink));
        let mut line = Vec::with_capacity(4096);
        for i in r.first..r.first + r.docs {
            line.clear();
            universe.document(i, &mut line);
            line.push(b'\n');
            writer.write_all(&line)?;
            oracle.add(&universe, i, &universe.paths_of(i));
        }
        writer.flush()?;
        let k = &r.knobs;
        let summary = serde_json::json!({
            "generator": "docbench-gen shapes",
            "preset": r.preset,
            "knobs": {"paths": k.paths, "per_doc": k.per_doc, "depth": k.depth, "array_share": k.array_share,
                      "varying_share": k.varying_share, "zipf": k.zipf, "string_len": k.string_len},
            "seed": r.seed,
            "first": r.first,
            "docs": r.docs,
            "bytes": writer.bytes,
            "sha256": hex(&writer.hasher.clone().finalize()),
            "answers": oracle.to_json(&universe),
        });
        let text = format!("{summary}\n");
        match (&r.summary, r.out == "-") {
            (Some(path), _) => std::fs::write(path, text)?,
            (None, false) => io::stdout().write_all(text.as_bytes())?,
            (None, true) => eprint!("{text}"),
        }
        Ok(())
    }
}
