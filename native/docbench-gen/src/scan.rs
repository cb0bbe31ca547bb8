//! The oracle's native scan: aggregates, for the lines it can judge exactly, what the oracle's
//! Python scan would (`docbench.dataset.oracle`); every other line is handed back untouched for
//! the Python scan to judge. The semantics stay in Python: a line is only taken when it is
//! certain the full parse would read the same five fields from it.
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
//! [`write_output`] writes what docbench-scan prints: one JSON line (counts, hours, the dids
//! that are not did:plc, array lengths), then little-endian arrays: per collection its sorted
//! distinct packed dids (hi, lo as u64, see [`crate::did`]), then the post creates' (hi, lo,
//! min, max), then the lengths (u32) and bytes of the lines handed back.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::io::{self, Read, Write};

use serde::Deserialize;

use crate::did::pack_did;

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

/// The aggregates of the lines taken so far, and the lines handed back.
pub struct Scan {
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
    /// `post`: the collection whose creates' first and last times are kept per did.
    pub fn new(post: &str) -> Scan {
        Scan {
            post: post.to_string(),
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
        }
    }

    /// One line (without its newline; a final `\r` is dropped): taken or handed back.
    pub fn line(&mut self, line: &[u8]) {
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

    /// The lines handed back to the Python scan so far.
    pub fn handed_back(&self) -> &[Vec<u8>] {
        &self.handed_back
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

/// What takes a file's lines one by one (the oracle's scan, the portable queries' scan).
pub trait LineSink {
    fn line(&mut self, line: &[u8]);
}

impl LineSink for Scan {
    fn line(&mut self, line: &[u8]) {
        Scan::line(self, line)
    }
}

/// Every line of `reader` into `state` (the last one may lack its newline).
pub fn scan(reader: &mut dyn Read, state: &mut impl LineSink) -> io::Result<()> {
    scan_buffered(reader, state, 8 << 20)
}

fn scan_buffered(reader: &mut dyn Read, state: &mut impl LineSink, capacity: usize) -> io::Result<()> {
    let mut buf = vec![0u8; capacity];
    let mut have = 0usize;
    loop {
        if have == buf.len() {
            buf.resize(buf.len() * 2, 0); // a line longer than the buffer
        }
        let n = reader.read(&mut buf[have..])?;
        if n == 0 {
            if have > 0 {
                state.line(&buf[..have]); // the last line, without its newline
            }
            return Ok(());
        }
        let end = have + n;
        let mut start = 0;
        while let Some(pos) = memchr::memchr(b'\n', &buf[start..end]) {
            state.line(&buf[start..start + pos]);
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

/// What docbench-scan prints (see the module's documentation); `sha` is the file's digest
/// when asked for, `peak_rss` the scanning process's peak resident set.
pub fn write_output(
    state: &mut Scan,
    sha: Option<String>,
    peak_rss: Option<u64>,
    out: &mut impl Write,
) -> io::Result<()> {
    let mut colls = Vec::new();
    for name in &state.order {
        let coll = state.colls.get_mut(name).expect("listed");
        coll.packed.sort_unstable();
        coll.packed.dedup();
        let others: Vec<&String> = coll.others.keys().collect();
        colls.push(serde_json::json!([name, coll.all, coll.creates, coll.hours.to_vec(), coll.packed.len(), others]));
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
        "peak_rss": peak_rss,
    });
    out.write_all(header.to_string().as_bytes())?;
    out.write_all(b"\n")?;
    for name in &state.order {
        let coll = &state.colls[name];
        write_u64s(out, coll.packed.iter().map(|k| k.0))?;
        write_u64s(out, coll.packed.iter().map(|k| k.1))?;
    }
    write_u64s(out, spans.iter().map(|s| s.0))?;
    write_u64s(out, spans.iter().map(|s| s.1))?;
    write_u64s(out, spans.iter().map(|s| s.2 as u64))?;
    write_u64s(out, spans.iter().map(|s| s.3 as u64))?;
    for line in &state.handed_back {
        out.write_all(&(line.len() as u32).to_le_bytes())?;
    }
    for line in &state.handed_back {
        out.write_all(line)?;
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    const POST: &str = "app.bsky.feed.post";
    const ALICE: &str = "did:plc:abcdefghijklmnopqrstuvwx";

    fn event(did: &str, time_us: i64, collection: &str, operation: &str) -> String {
        format!(
            r#"{{"did":"{did}","time_us":{time_us},"kind":"commit","commit":{{"rev":"3l","operation":"{operation}","collection":"{collection}","rkey":"3k","record":{{"$type":"{collection}","text":"hi"}},"cid":"bafyrei"}}}}"#
        )
    }

    /// Whether the scan takes the line (else it goes back to Python).
    fn taken(line: &[u8]) -> bool {
        let mut state = Scan::new(POST);
        state.line(line);
        state.handed_back.is_empty()
    }

    #[test]
    fn takes_the_events_it_can_judge() {
        assert!(taken(event(ALICE, 1, POST, "create").as_bytes()));
        assert!(taken(event("did:web:example.com", 1, "app.bsky.feed.like", "delete").as_bytes()));
        assert!(taken(format!("{}\r", event(ALICE, 1, POST, "create")).as_bytes()));
        // No commit (identity, account events), or a null one: counted without did or time.
        assert!(taken(br#"{"did":"did:plc:x","time_us":1,"kind":"identity","identity":{"seq":1}}"#));
        assert!(taken(br#"{"did":"did:plc:x","time_us":1,"kind":"identity","commit":null}"#));
        assert!(taken(br#"{"kind":"account"}"#));
        assert!(taken(br#"{}"#));
        // Unicode escapes and deep nesting in the parts only validated.
        assert!(taken(br#"{"did":"did:plc:\u0061bc","time_us":1,"kind":"commit","commit":{"operation":"create","collection":"c","record":{"t":"\ud83d\ude02\u0000"}}}"#));
        let deep = format!(r#"{{"kind":"x","record":{}{}}}"#, "[".repeat(1000), "]".repeat(1000));
        assert!(taken(deep.as_bytes()));
    }

    #[test]
    fn hands_back_what_python_must_judge() {
        let refused: [&[u8]; 14] = [
            b"",
            b"[1,2]",
            b" {\"kind\":\"account\"}",
            b"{\"kind\":\"account\"} x",
            b"{\"kind\":\"account\"",
            b"{\"did\":\"a\xff\",\"time_us\":1,\"kind\":\"commit\",\"commit\":{\"operation\":\"create\",\"collection\":\"c\"}}",
            br#"{"did":"x","did":"y","time_us":1,"kind":"commit","commit":{"operation":"create","collection":"c"}}"#,
            br#"{"did":"\ud800","time_us":1,"kind":"commit","commit":{"operation":"create","collection":"c"}}"#,
            br#"{"did":"a","time_us":99999999999999999999,"kind":"commit","commit":{"operation":"create","collection":"c"}}"#,
            br#"{"did":"a","time_us":1.5,"kind":"commit","commit":{"operation":"create","collection":"c"}}"#,
            br#"{"time_us":1,"kind":"commit","commit":{"operation":"create","collection":"c"}}"#,
            br#"{"did":"a","time_us":1,"commit":{"operation":"create","collection":"c"}}"#,
            br#"{"did":"a","time_us":1,"kind":"commit","commit":{"operation":"create"}}"#,
            br#"{"did":1,"time_us":1,"kind":"commit","commit":{"operation":"create","collection":"c"}}"#,
        ];
        for line in refused {
            assert!(!taken(line), "{}", String::from_utf8_lossy(line));
        }
        // The line goes back as it was, without its \r.
        let mut state = Scan::new(POST);
        state.line(b"[1]\r");
        assert_eq!(state.handed_back(), [b"[1]".to_vec()]);
    }

    #[test]
    fn aggregates_as_the_oracle_counts() {
        let mut state = Scan::new(POST);
        let bob = "did:plc:222222222222777777777777";
        for line in [
            event(ALICE, 3 * HOUR_US + 5, POST, "create"),
            event(ALICE, 2 * HOUR_US, POST, "create"),
            event(bob, 7, POST, "create"),
            event("did:web:a.example", 9, POST, "create"),
            event("did:web:a.example", 4, POST, "create"),
            event(ALICE, -1, "app.bsky.feed.like", "create"),
            event(ALICE, 1, "app.bsky.feed.like", "create"),
            event("did:web:b.example", 1, "app.bsky.feed.like", "create"),
            event(bob, 1, "app.bsky.feed.like", "delete"),
            r#"{"did":"did:plc:x","time_us":50,"kind":"identity"}"#.to_string(),
            "garbage".to_string(),
        ] {
            state.line(line.as_bytes());
        }
        assert_eq!((state.lines, state.documents, state.no_commit), (11, 10, 1));
        assert_eq!((state.time_min, state.time_max), (Some(-1), Some(3 * HOUR_US + 5)));
        assert_eq!(state.order, [POST, "app.bsky.feed.like"]);
        let like = &state.colls["app.bsky.feed.like"];
        assert_eq!((like.all, like.creates), (4, 3));
        assert_eq!(like.hours[23], 1); // -1 µs: 23:59:59.999999 the day before
        assert_eq!(like.hours[0], 2);
        assert_eq!(like.packed, [pack_did(ALICE.as_bytes()).unwrap(); 2]);
        assert_eq!(like.others.keys().collect::<Vec<_>>(), ["did:web:b.example"]);
        assert_eq!(state.post_others["did:web:a.example"], (4, 9));

        let mut out = Vec::new();
        write_output(&mut state, Some("ab".into()), Some(1), &mut out).unwrap();
        let newline = out.iter().position(|&c| c == b'\n').unwrap();
        let header: serde_json::Value = serde_json::from_slice(&out[..newline]).unwrap();
        assert_eq!(header["posts"], 2);
        assert_eq!(header["handed_back"], 1);
        assert_eq!(header["sha256"], "ab");
        assert_eq!(header["peak_rss"], 1);
        assert_eq!(
            header["colls"][1],
            serde_json::json!(["app.bsky.feed.like", 4, 3, like_hours(), 1, ["did:web:b.example"]])
        );
        let words: Vec<u64> = out[newline + 1..newline + 1 + 8 * 10]
            .chunks(8)
            .map(|w| u64::from_le_bytes(w.try_into().unwrap()))
            .collect();
        let (alice, bob) = (pack_did(ALICE.as_bytes()).unwrap(), pack_did(bob.as_bytes()).unwrap());
        // post: no packed dids of its own (its creates are spans); like: one did; then the spans.
        assert_eq!(words[..2], [alice.0, alice.1]);
        assert_eq!(words[2..], [alice.0, bob.0, alice.1, bob.1, 2 * HOUR_US as u64, 7, 3 * HOUR_US as u64 + 5, 7]);
        assert_eq!(&out[newline + 81..], b"\x07\x00\x00\x00garbage");
    }

    fn like_hours() -> Vec<u64> {
        let mut hours = vec![0; 24];
        hours[0] = 2;
        hours[23] = 1;
        hours
    }

    #[test]
    fn reads_lines_across_buffer_refills() {
        let long = event(ALICE, 1, POST, &"x".repeat(100));
        let text = format!("{long}\n\n{}\r\n{}", event(ALICE, 2, POST, "create"), event(ALICE, 3, POST, "create"));
        for capacity in [1, 7, 64, 1 << 20] {
            let mut state = Scan::new(POST);
            scan_buffered(&mut text.as_bytes(), &mut state, capacity).unwrap();
            assert_eq!((state.lines, state.documents, state.posts.len()), (4, 3, 2), "capacity {capacity}");
            assert_eq!(state.handed_back(), [Vec::<u8>::new()]);
        }
    }
}
