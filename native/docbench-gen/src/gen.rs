//! Event generation: one Jetstream event per call, hand-written JSON into a byte buffer.
//!
//! Key order follows Jetstream: top level `did, time_us, kind, <payload>`; commit
//! `rev, operation, collection, rkey, record, cid` (deletes have no record/cid); inside records
//! keys are sorted bytewise (`$type` first), except blobs which Jetstream writes as
//! `$type, ref, mimeType, size`.

use crate::ids::{push_cid_hash, push_cid_rng, push_iso, push_plc, push_tid, TsFmt};
use crate::json;
use crate::model::Coll::*;
use crate::model::*;
use crate::rng::{hash3, mix64, Alias, InvCdf, PowerLaw, Rng};
use crate::text::{push_ascii_lower, TextGen};

const SEC: f64 = 1_000_000.0;
/// Referenced posts are identified by (10-second bucket of their creation, index in bucket).
const BUCKET_US: u64 = 10_000_000;
const YEAR_US: f64 = 365.25 * 86_400.0 * SEC;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Hard {
    NulEscape,
    LoneSurrogate,
    BigInt,
    DeepNesting,
    LongText,
}

impl Hard {
    pub const ALL: [Hard; 5] = [Hard::NulEscape, Hard::LoneSurrogate, Hard::BigInt, Hard::DeepNesting, Hard::LongText];

    pub fn name(self) -> &'static str {
        match self {
            Hard::NulEscape => "nul_escape",
            Hard::LoneSurrogate => "lone_surrogate",
            Hard::BigInt => "bigint",
            Hard::DeepNesting => "deep_nesting",
            Hard::LongText => "long_text",
        }
    }
}

/// Nesting depth of the `deep_nesting` hard document's extra record field.
pub const DEEP_LEVELS: usize = 1000;
/// Text size of the `long_text` hard document.
pub const LONG_TEXT_BYTES: usize = 50_000;

/// Share of image embeds whose author describes every image at length (transcribed
/// screenshots and comics). They make the real stream's documents of 4 KiB and more, about 35
/// per million events (inferred from the published DuckDB sizes): nearly every DuckDB row group
/// (122,880 rows) holds one, which is why DuckDB 1.1.3 stored JSONBench's events uncompressed
/// (README, "DuckDB").
pub const DESCRIBED_IMAGES: f64 = 0.018;
/// Length of such a description in graphemes, log-uniform between a paragraph and the Bluesky
/// app's limit of 2,000 graphemes.
pub const LONG_ALT_GRAPHEMES: (f64, f64) = (200.0, 2000.0);

#[derive(Clone, Copy)]
enum FacetVal {
    Mention(u64),
    Link(usize, usize),
    Tag(usize, usize),
}

#[derive(Clone, Copy)]
struct Facet {
    start: usize,
    end: usize,
    val: FacetVal,
}

#[derive(Clone, Copy)]
struct Batch {
    remaining: u32,
    coll: Coll,
    user: u64,
    rev_ts: u64,
    clock: u64,
    created: i64,
    fmt: TsFmt,
    rkey_ts: u64,
    list_key: u64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum EmbedKind {
    None,
    Images,
    External,
    Record,
    RecordWithMedia,
    Video,
}

pub struct Gen<'t> {
    seed: u64,
    tg: &'t TextGen,
    pub rng: Rng,
    pub hard_rng: Rng,
    /// Decides and writes the long image descriptions: its own stream, so that the rare long
    /// documents leave every other document as the main stream makes it.
    alt_rng: Rng,
    kinds: Vec<KindSpec>,
    /// One alias table per mix segment.
    kind_alias: Vec<Alias>,
    users: Vec<UserMix>,
    profile_pool: UserModel,
    /// Index (over the whole dataset) of the next event, its mix segment and where that ends.
    index: u64,
    segment: usize,
    segment_end: u64,
    /// Lattice-placed rare events of this file (event index, kind), in order.
    rare: Vec<(u64, Kind)>,
    next_rare: usize,
    uniform: UserModel,
    popular: UserModel,
    block_target: UserModel,
    lag: InvCdf,
    del_age: InvCdf,
    reply_age: InvCdf,
    subject_age: InvCdf,
    old_age: InvCdf,
    gif_pl: PowerLaw,
    post_j: PowerLaw,
    batch: Option<Batch>,
    pending_account: Option<u64>,
    txt: Vec<u8>,
    alt: Vec<u8>,
    fval: Vec<u8>,
    url: Vec<u8>,
    facets: Vec<Facet>,
}

#[inline(always)]
fn unit(h: u64) -> f64 {
    (h >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// First event index after segment `seg` (u64::MAX for the last one).
fn segment_end(seg: usize) -> u64 {
    SEGMENT_STARTS.get(seg + 1).copied().unwrap_or(u64::MAX)
}

/// The rare events (model.rs `RARE`) among events [first, end) of the dataset, in order: kind
/// i's j-th event of segment s is at index start(s) + ⌊(j + φ_i) · 1e6 / rate⌋, φ_i a phase from
/// the seed, so any file computes its share alone and the counts are exact to within one.
fn rare_events(seed: u64, first: u64, end: u64) -> Vec<(u64, Kind)> {
    let mut out = Vec::new();
    for (i, &(kind, rates)) in RARE.iter().enumerate() {
        let phase = unit(hash3(77, seed, i as u64));
        for (seg, &rate) in rates.iter().enumerate() {
            let (lo, hi) = (SEGMENT_STARTS[seg].max(first), segment_end(seg).min(end));
            if rate <= 0.0 || lo >= hi {
                continue;
            }
            let spacing = 1e6 / rate;
            let at = |j: u64| SEGMENT_STARTS[seg] + ((j as f64 + phase) * spacing) as u64;
            let mut j = (((lo - SEGMENT_STARTS[seg]) as f64 / spacing - phase).floor().max(0.0)) as u64;
            while at(j) < lo {
                j += 1;
            }
            while at(j) < hi {
                out.push((at(j), kind));
                j += 1;
            }
        }
    }
    out.sort_by_key(|&(index, _)| index);
    out
}

impl<'t> Gen<'t> {
    /// The generator of `events` events starting at event `first_event` of the dataset.
    pub fn new(seed: u64, file: u64, first_event: u64, events: u64, tg: &'t TextGen) -> Gen<'t> {
        let kinds: Vec<KindSpec> = KINDS.to_vec();
        // Selection weight of a kind = its events / mean events per selection (batches).
        let kind_alias = (0..SEGMENT_STARTS.len())
            .map(|seg| Alias::new(&kinds.iter().map(|k| k.per_million[seg] / k.mean_len()).collect::<Vec<f64>>()))
            .collect();
        let all = [
            Like, Follow, Post, Repost, Block, Profile, ListItem, ListBlock, StarterPack, List, Threadgate, Postgate,
            Generator, Labeler, Top8Theme, KollectiveCatalog, KollectiveProfile,
        ];
        let users = all.iter().map(|&c| UserMix::new(seed, c as u64 + 1, c)).collect();
        let segment = segment_of(first_event);
        Gen {
            seed,
            tg,
            rng: Rng::new(seed, file, 1),
            hard_rng: Rng::new(seed, file, 2),
            alt_rng: Rng::new(seed, file, 6),
            kind_alias,
            kinds,
            users,
            profile_pool: UserModel::new(seed, 103, PROFILE_POOL.1, 0.0, 0.0),
            index: first_event,
            segment,
            segment_end: segment_end(segment),
            rare: rare_events(seed, first_event, first_event + events),
            next_rare: 0,
            uniform: UserModel::new(seed, 100, POPULATION, 0.0, 0.0),
            popular: UserModel::new(seed, 101, POPULATION, 1.0, 20.0),
            block_target: UserModel::new(seed, 102, POPULATION, 1.1, 10.0),
            // Commit time lags behind time_us (seconds): median ~25 s, p90 ~16 min.
            lag: InvCdf::new(
                &[
                    (0.0, 0.08),
                    (0.01, 0.19),
                    (0.05, 1.6),
                    (0.1, 2.7),
                    (0.25, 4.3),
                    (0.5, 25.4),
                    (0.75, 135.0),
                    (0.9, 976.0),
                    (0.95, 1200.0),
                    (0.99, 1490.0),
                    (1.0, 3200.0),
                ],
                true,
            ),
            // Age of the record a delete removes (seconds): median ~1 day.
            del_age: InvCdf::new(
                &[
                    (0.0, 5.0),
                    (0.05, 26.0),
                    (0.1, 80.0),
                    (0.3, 10_000.0),
                    (0.5, 100_000.0),
                    (0.8, 580_000.0),
                    (0.95, 3.0e6),
                    (1.0, 5.0e7),
                ],
                true,
            ),
            // Age of the post a reply answers (seconds).
            reply_age: InvCdf::new(
                &[(0.0, 5.0), (0.3, 300.0), (0.6, 1800.0), (0.85, 14_400.0), (0.95, 86_400.0), (1.0, 2.6e6)],
                true,
            ),
            // Age of the post a like / repost / quote refers to (seconds): median ~3 h.
            subject_age: InvCdf::new(
                &[
                    (0.0, 20.0),
                    (0.05, 260.0),
                    (0.1, 660.0),
                    (0.2, 1_350.0),
                    (0.3, 3_100.0),
                    (0.5, 10_500.0),
                    (0.6, 18_600.0),
                    (0.75, 51_000.0),
                    (0.9, 126_000.0),
                    (0.95, 435_000.0),
                    (1.0, 3.0e7),
                ],
                true,
            ),
            // Age of long-lived records (profile createdAt, lists) (seconds).
            old_age: InvCdf::new(&[(0.0, 60.0), (0.2, 86_400.0), (0.6, 2.6e6), (1.0, 5.0e7)], true),
            gif_pl: PowerLaw::new(200, 1.0, 2.0),
            post_j: PowerLaw::new(4096, 1.15, 1.0),
            batch: None,
            pending_account: None,
            txt: Vec::with_capacity(64 * 1024),
            alt: Vec::with_capacity(8 * 1024),
            fval: Vec::with_capacity(1024),
            url: Vec::with_capacity(256),
            facets: Vec::with_capacity(16),
        }
    }

    // ------------------------------------------------------------------ identifiers

    fn push_did(&self, o: &mut Vec<u8>, u: u64) {
        let h1 = hash3(11, self.seed, u);
        if h1 % 25_000 == 7 {
            o.extend_from_slice(b"did:web:");
            self.tg.handle_stem(mix64(h1), o);
            o.extend_from_slice(b".example.social");
        } else {
            push_plc(o, h1, hash3(12, self.seed, u));
        }
    }

    #[inline]
    fn user_clock(&self, u: u64) -> u64 {
        hash3(13, self.seed, u) & 31
    }

    #[inline]
    fn user_for(&mut self, c: Coll) -> u64 {
        if c == Profile && self.segment == 1 && self.rng.chance(PROFILE_POOL.0) {
            return self.profile_pool.user_at(self.rng.f64());
        }
        let u = self.rng.f64();
        self.users[c as usize].user_at(u, self.index)
    }

    /// Key of a referenced post created `age` before `t`; popular posts (small index in their
    /// bucket) are referenced often, so the same subject recurs like in the real stream.
    fn post_key(&mut self, t: u64, age_s: f64) -> u64 {
        let ts = t.saturating_sub((age_s * SEC) as u64);
        let j = self.post_j.sample(&mut self.rng);
        ((ts / BUCKET_US) << 12) | j
    }

    /// `{"cid":"...","uri":"at://<did>/<nsid>/<tid>"}` for the record identified by `key`.
    fn push_ref(&self, o: &mut Vec<u8>, key: u64, author: Option<u64>, nsid: &[u8]) {
        let h = hash3(21, self.seed, key ^ author.map(|a| a << 24).unwrap_or(0));
        let u = author.unwrap_or_else(|| self.popular.user_at(unit(h)));
        let ts = (key >> 12) * BUCKET_US + mix64(h ^ 5) % BUCKET_US;
        o.extend_from_slice(b"{\"cid\":\"");
        push_cid_hash(o, h ^ 0xc1d, false);
        o.extend_from_slice(b"\",\"uri\":\"at://");
        self.push_did(o, u);
        o.push(b'/');
        o.extend_from_slice(nsid);
        o.push(b'/');
        push_tid(o, ts, (h >> 13) & 31);
        o.extend_from_slice(b"\"}");
    }

    /// `at://<did>/<nsid>/<tid>` of a long-lived record of user `u` (lists, starter packs).
    fn push_owned_uri(&self, o: &mut Vec<u8>, u: u64, nsid: &[u8], idx: u64) {
        let h = hash3(31, self.seed, u * 16 + idx);
        let ts = T0 - (unit(h) * YEAR_US * 0.9) as u64;
        o.extend_from_slice(b"at://");
        self.push_did(o, u);
        o.push(b'/');
        o.extend_from_slice(nsid);
        o.push(b'/');
        push_tid(o, ts, (h >> 7) & 31);
    }

    // ------------------------------------------------------------------ times

    /// (commit time for the rev TID, createdAt, its format).
    fn times(&mut self, t: u64, backdate_p: f64) -> (u64, i64, TsFmt) {
        let lag = (self.lag.sample(&mut self.rng) * SEC) as u64;
        let ct = t.saturating_sub(lag);
        let r = self.rng.f64();
        let created = if r < 0.975 {
            ct as i64 - (self.rng.exp1() * 0.15 * SEC) as i64
        } else if r < 0.99 {
            // Client clock ahead: createdAt in the future.
            ct as i64 + (2.0 * SEC * (3600.0f64).powf(self.rng.f64())) as i64
        } else if r < 0.998 - backdate_p {
            ct as i64 - (60.0 * SEC * (4320.0f64).powf(self.rng.f64())) as i64
        } else {
            // Backdated by months to years (imports, broken clocks).
            ct as i64 - (YEAR_US * (0.1 + 12.0 * self.rng.f64() * self.rng.f64())) as i64
        };
        let f = self.rng.f64();
        let fmt = if f < 0.972 {
            TsFmt::Millis
        } else if f < 0.986 {
            TsFmt::Micros
        } else if f < 0.995 {
            TsFmt::Seconds
        } else {
            TsFmt::Offset
        };
        (ct, created, fmt)
    }

    fn created_at(&self, o: &mut Vec<u8>, created: i64, fmt: TsFmt) {
        o.extend_from_slice(b"\"createdAt\":\"");
        push_iso(o, created, fmt);
        o.push(b'"');
    }

    // ------------------------------------------------------------------ envelope

    fn head(&self, o: &mut Vec<u8>, t: u64, u: u64, kind: &[u8]) {
        o.extend_from_slice(b"{\"did\":\"");
        self.push_did(o, u);
        o.extend_from_slice(b"\",\"time_us\":");
        json::uint(o, t);
        o.extend_from_slice(b",\"kind\":\"");
        o.extend_from_slice(kind);
        o.extend_from_slice(b"\",\"");
        o.extend_from_slice(kind);
        o.extend_from_slice(b"\":{");
    }

    #[allow(clippy::too_many_arguments)]
    fn commit_head(&self, o: &mut Vec<u8>, t: u64, u: u64, rev_ts: u64, clock: u64, op: Op, c: Coll) {
        self.head(o, t, u, b"commit");
        o.extend_from_slice(b"\"rev\":\"");
        push_tid(o, rev_ts, clock);
        o.extend_from_slice(match op {
            Op::Create => b"\",\"operation\":\"create\",\"collection\":\"".as_slice(),
            Op::Update => b"\",\"operation\":\"update\",\"collection\":\"",
            Op::Delete => b"\",\"operation\":\"delete\",\"collection\":\"",
        });
        o.extend_from_slice(c.nsid());
        o.extend_from_slice(b"\",\"rkey\":\"");
    }

    fn record_start(&self, o: &mut Vec<u8>, c: Coll) {
        o.extend_from_slice(b"\",\"record\":{\"$type\":\"");
        o.extend_from_slice(c.nsid());
        o.extend_from_slice(b"\",");
    }

    fn commit_tail(&mut self, o: &mut Vec<u8>) {
        o.extend_from_slice(b"},\"cid\":\"");
        push_cid_rng(o, &mut self.rng, false);
        o.extend_from_slice(b"\"}}\n");
    }

    // ------------------------------------------------------------------ dispatch

    /// Write one event (one line) at `time_us` = `t`.
    pub fn event(&mut self, o: &mut Vec<u8>, t: u64) {
        let index = self.index;
        self.index += 1;
        if index >= self.segment_end {
            self.segment = segment_of(index);
            self.segment_end = segment_end(self.segment);
        }
        if let Some(b) = self.batch {
            self.batch_item(o, t, b);
            return;
        }
        if let Some(u) = self.pending_account.take() {
            self.account(o, t, u);
            return;
        }
        // A rare event due here (or during the batch that just ended) comes first.
        if self.next_rare < self.rare.len() && index >= self.rare[self.next_rare].0 {
            let kind = self.rare[self.next_rare].1;
            self.next_rare += 1;
            let u = match kind {
                Kind::Commit(c, _) => self.user_for(c),
                _ => self.uniform.user_at(self.rng.f64()),
            };
            return self.single(o, t, kind, u);
        }
        let spec = self.kinds[self.kind_alias[self.segment].sample(&mut self.rng)];
        match spec.kind {
            Kind::Identity => {
                let u = self.uniform.user_at(self.rng.f64());
                self.identity(o, t, u);
                if self.rng.chance(IDENTITY_THEN_ACCOUNT) {
                    self.pending_account = Some(u);
                }
            }
            Kind::Account => {
                let u = self.uniform.user_at(self.rng.f64());
                self.account(o, t, u)
            }
            Kind::Commit(c, op) => {
                let u = self.user_for(c);
                if op == Op::Create && spec.batch_p > 0.0 && self.rng.chance(spec.batch_p) {
                    let len = if self.rng.chance(spec.batch_at_max) {
                        spec.batch_max
                    } else {
                        self.rng.range(spec.batch_min as u64, spec.batch_max as u64) as u32
                    };
                    self.start_batch(o, t, c, u, len);
                } else {
                    self.single(o, t, spec.kind, u)
                }
            }
        }
    }

    /// One commit (not a batch) of `kind` by user `u`.
    fn single(&mut self, o: &mut Vec<u8>, t: u64, kind: Kind, u: u64) {
        match kind {
            Kind::Commit(c, Op::Create) => self.create(o, t, c, u),
            Kind::Commit(c, Op::Update) => self.update(o, t, c, u),
            Kind::Commit(c, Op::Delete) => self.delete(o, t, c, u),
            Kind::Identity => self.identity(o, t, u),
            Kind::Account => self.account(o, t, u),
        }
    }

    fn create(&mut self, o: &mut Vec<u8>, t: u64, c: Coll, u: u64) {
        let backdate = if c == Post { 0.004 } else { 0.0005 };
        let (ct, created, fmt) = self.times(t, backdate);
        let clock = self.user_clock(u);
        let rkey_clock = if self.rng.chance(0.83) { clock } else { self.rng.below(32) };
        let rkey_ts = ct.saturating_sub((self.rng.exp1() * 0.015 * SEC) as u64);
        self.commit_head(o, t, u, ct, clock, Op::Create, c);
        match c {
            Profile | Labeler | Top8Theme | KollectiveProfile => o.extend_from_slice(b"self"),
            Generator => self.feed_slug(o),
            _ => push_tid(o, rkey_ts, rkey_clock),
        }
        self.record_start(o, c);
        match c {
            Post => self.post_body(o, t, u, created, fmt, None),
            Profile => self.profile_body(o, t, created, fmt, false),
            Like | Repost | Follow | Block | ListItem | ListBlock => {
                self.created_at(o, created, fmt);
                self.simple_body(o, t, c, u);
            }
            _ => self.misc_body(o, t, c, u, created, fmt),
        }
        self.commit_tail(o);
    }

    /// Likes, reposts, follows, blocks, list items and list blocks after createdAt.
    fn simple_body(&mut self, o: &mut Vec<u8>, t: u64, c: Coll, u: u64) {
        match c {
            Like | Repost => {
                let age = self.subject_age.sample(&mut self.rng);
                let key = self.post_key(t, age);
                o.extend_from_slice(b",\"subject\":");
                self.push_ref(o, key, None, Post.nsid());
            }
            Follow => {
                o.extend_from_slice(b",\"subject\":\"");
                let s = if self.rng.chance(0.7) {
                    self.popular.user_at(self.rng.f64())
                } else {
                    self.uniform.user_at(self.rng.f64())
                };
                self.push_did(o, s);
                o.push(b'"');
            }
            Block => {
                o.extend_from_slice(b",\"subject\":\"");
                let s = self.block_target.user_at(self.rng.f64());
                self.push_did(o, s);
                o.push(b'"');
            }
            ListItem => {
                let idx = self.rng.below(3);
                self.listitem_body(o, u, idx);
            }
            _ => {
                o.extend_from_slice(b",\"subject\":\"");
                let owner = self.popular.user_at(self.rng.f64().powf(0.5));
                let idx = self.rng.below(2);
                self.push_owned_uri(o, owner, List.nsid(), idx);
                o.push(b'"');
            }
        }
    }

    fn update(&mut self, o: &mut Vec<u8>, t: u64, c: Coll, u: u64) {
        let (ct, created, fmt) = self.times(t, 0.0);
        let clock = self.user_clock(u);
        self.commit_head(o, t, u, ct, clock, Op::Update, c);
        match c {
            Profile | Labeler | Top8Theme | KollectiveProfile => o.extend_from_slice(b"self"),
            Generator => self.feed_slug(o),
            _ => {
                let age = self.old_age.sample(&mut self.rng);
                push_tid(o, ct.saturating_sub((age * SEC) as u64), self.rng.below(32));
            }
        }
        self.record_start(o, c);
        // Updates keep the record's original createdAt.
        let age = self.old_age.sample(&mut self.rng);
        let created = created - (age * SEC) as i64;
        match c {
            Profile => self.profile_body(o, t, created, fmt, true),
            _ => self.misc_body(o, t, c, u, created, fmt),
        }
        self.commit_tail(o);
    }

    fn delete(&mut self, o: &mut Vec<u8>, t: u64, c: Coll, u: u64) {
        let (ct, _, _) = self.times(t, 0.0);
        let clock = self.user_clock(u);
        self.commit_head(o, t, u, ct, clock, Op::Delete, c);
        match c {
            Profile | Labeler | Top8Theme | KollectiveProfile => o.extend_from_slice(b"self"),
            Generator => self.feed_slug(o),
            _ => {
                let age = self.del_age.sample(&mut self.rng);
                push_tid(o, ct.saturating_sub((age * SEC) as u64), self.rng.below(32));
            }
        }
        o.extend_from_slice(b"\"}}\n");
    }

    // ------------------------------------------------------------------ batches

    fn start_batch(&mut self, o: &mut Vec<u8>, t: u64, c: Coll, u: u64, len: u32) {
        let (ct, created, fmt) = self.times(t, 0.0);
        let b = Batch {
            remaining: len,
            coll: c,
            user: u,
            rev_ts: ct,
            clock: self.user_clock(u),
            created,
            fmt,
            rkey_ts: ct.saturating_sub(1000 + self.rng.below(50_000)),
            list_key: self.rng.below(3),
        };
        self.batch_item(o, t, b);
    }

    fn batch_item(&mut self, o: &mut Vec<u8>, t: u64, mut b: Batch) {
        let c = b.coll;
        self.commit_head(o, t, b.user, b.rev_ts, b.clock, Op::Create, c);
        push_tid(o, b.rkey_ts, b.clock);
        self.record_start(o, c);
        self.created_at(o, b.created, b.fmt);
        match c {
            ListItem => self.listitem_body(o, b.user, b.list_key),
            _ => self.simple_body(o, t, c, b.user),
        }
        self.commit_tail(o);
        b.remaining -= 1;
        b.rkey_ts += 1;
        b.created += 1000 + self.rng.below(3000) as i64;
        self.batch = if b.remaining > 0 { Some(b) } else { None };
    }

    fn listitem_body(&mut self, o: &mut Vec<u8>, u: u64, idx: u64) {
        o.extend_from_slice(b",\"list\":\"");
        self.push_owned_uri(o, u, List.nsid(), idx);
        o.extend_from_slice(b"\",\"subject\":\"");
        let s = if self.rng.chance(0.5) {
            self.popular.user_at(self.rng.f64())
        } else {
            self.uniform.user_at(self.rng.f64())
        };
        self.push_did(o, s);
        o.push(b'"');
    }

    // ------------------------------------------------------------------ identity / account

    fn seq(&mut self, t: u64) -> u64 {
        SEQ0 + (t - T0) * 19 / 20_000
    }

    fn identity(&mut self, o: &mut Vec<u8>, t: u64, u: u64) {
        self.head(o, t, u, b"identity");
        o.extend_from_slice(b"\"did\":\"");
        self.push_did(o, u);
        if self.rng.chance(0.985) {
            o.extend_from_slice(b"\",\"handle\":\"");
            self.tg.handle(hash3(41, self.seed, u), o);
        }
        o.extend_from_slice(b"\",\"seq\":");
        let seq = self.seq(t);
        json::uint(o, seq);
        o.extend_from_slice(b",\"time\":\"");
        let lag = if self.rng.chance(0.9) { 0.45 + 0.25 * self.rng.f64() } else { 15.0 + 30.0 * self.rng.f64() };
        push_iso(o, t as i64 - (lag * SEC) as i64, TsFmt::Millis);
        o.extend_from_slice(b"\"}}\n");
    }

    fn account(&mut self, o: &mut Vec<u8>, t: u64, u: u64) {
        self.head(o, t, u, b"account");
        let r = self.rng.f64();
        o.extend_from_slice(if r < 0.8 {
            b"\"active\":true,\"did\":\"".as_slice()
        } else {
            b"\"active\":false,\"did\":\""
        });
        self.push_did(o, u);
        o.extend_from_slice(b"\",\"seq\":");
        let seq = self.seq(t) + 1;
        json::uint(o, seq);
        if r >= 0.8 {
            o.extend_from_slice(if r < 0.92 {
                b",\"status\":\"deactivated\"".as_slice()
            } else if r < 0.97 {
                b",\"status\":\"takendown\""
            } else {
                b",\"status\":\"deleted\""
            });
        }
        o.extend_from_slice(b",\"time\":\"");
        let lag = 0.45 + 0.25 * self.rng.f64();
        push_iso(o, t as i64 - (lag * SEC) as i64, TsFmt::Millis);
        o.extend_from_slice(b"\"}}\n");
    }

    // ------------------------------------------------------------------ record bodies

    fn blob(&mut self, o: &mut Vec<u8>, mime: &[u8], size: u64) {
        o.extend_from_slice(b"{\"$type\":\"blob\",\"ref\":{\"$link\":\"");
        push_cid_rng(o, &mut self.rng, true);
        o.extend_from_slice(b"\"},\"mimeType\":\"");
        o.extend_from_slice(mime);
        o.extend_from_slice(b"\",\"size\":");
        json::uint(o, size);
        o.push(b'}');
    }

    fn image_size(&mut self) -> u64 {
        (20_000.0 * (50.0f64).powf(self.rng.f64().powf(0.8))) as u64 + self.rng.below(1000)
    }

    fn aspect(&mut self, o: &mut Vec<u8>) {
        const COMMON: &[(u32, u32)] = &[
            (2000, 1500),
            (1500, 2000),
            (1000, 1000),
            (2000, 2000),
            (1080, 1350),
            (2000, 1125),
            (1125, 2000),
            (1200, 675),
            (1536, 2048),
            (2048, 1536),
            (1179, 2556),
            (2000, 1333),
        ];
        let (w, h) = if self.rng.chance(0.45) {
            *self.rng.pick(COMMON)
        } else {
            (self.rng.range(300, 2000) as u32, self.rng.range(300, 2000) as u32)
        };
        o.extend_from_slice(b"\"aspectRatio\":{\"height\":");
        json::uint(o, h as u64);
        o.extend_from_slice(b",\"width\":");
        json::uint(o, w as u64);
        o.push(b'}');
    }

    fn images(&mut self, o: &mut Vec<u8>, lang: usize, bigint: bool) {
        let r = self.rng.f64();
        let n = if r < 0.72 {
            1
        } else if r < 0.83 {
            2
        } else if r < 0.89 {
            3
        } else {
            4
        };
        let described = self.alt_rng.chance(DESCRIBED_IMAGES);
        o.extend_from_slice(b"{\"$type\":\"app.bsky.embed.images\",\"images\":[");
        for i in 0..n {
            if i > 0 {
                o.push(b',');
            }
            o.extend_from_slice(b"{\"alt\":");
            // The main stream draws the same whether or not the images are described.
            let short = self.rng.chance(0.15);
            let mut txt = std::mem::take(&mut self.txt);
            if short {
                txt.clear();
                let len = self.rng.range(10, 220) as usize;
                self.tg.text(&mut self.rng, lang, len, &mut txt);
            }
            if described {
                self.long_alt(o, lang);
            } else if short {
                json::str(o, &txt);
            } else {
                o.extend_from_slice(b"\"\"");
            }
            self.txt = txt;
            o.push(b',');
            if self.rng.chance(0.93) {
                self.aspect(o);
                o.push(b',');
            }
            o.extend_from_slice(b"\"image\":");
            let m = self.rng.f64();
            let mime: &[u8] = if m < 0.86 {
                b"image/jpeg"
            } else if m < 0.96 {
                b"image/png"
            } else {
                b"image/webp"
            };
            let size = self.image_size();
            if bigint && i == 0 {
                // Hard document: a blob size far beyond 64 bits.
                o.extend_from_slice(b"{\"$type\":\"blob\",\"ref\":{\"$link\":\"");
                push_cid_rng(o, &mut self.rng, true);
                o.extend_from_slice(
                    b"\"},\"mimeType\":\"image/jpeg\",\"size\":340282366920938463463374607431768211457}",
                );
            } else {
                self.blob(o, mime, size);
            }
            o.push(b'}');
        }
        o.extend_from_slice(b"]}");
    }

    /// A long image description (`LONG_ALT_GRAPHEMES`) in paragraphs, from `alt_rng`.
    fn long_alt(&mut self, o: &mut Vec<u8>, lang: usize) {
        let (lo, hi) = LONG_ALT_GRAPHEMES;
        let graphemes = lo * (hi / lo).powf(self.alt_rng.f64());
        let target = self.tg.scaled_len(lang, graphemes);
        let mut alt = std::mem::take(&mut self.alt);
        alt.clear();
        loop {
            let paragraph = self.alt_rng.range(150, 700) as usize;
            self.tg.text(&mut self.alt_rng, lang, paragraph.min(target - alt.len()), &mut alt);
            while alt.last().is_some_and(|&b| b == b'\n' || b == b' ') {
                alt.pop();
            }
            if alt.len() + 2 >= target {
                break;
            }
            alt.extend_from_slice(b"\n\n");
        }
        json::str(o, &alt);
        self.alt = alt;
    }

    /// One long image description in each language, for the version fingerprint.
    pub fn long_alt_sample(&mut self, o: &mut Vec<u8>) {
        for lang in 0..self.tg.langs.len() {
            self.long_alt(o, lang);
        }
    }

    fn video(&mut self, o: &mut Vec<u8>, lang: usize) {
        o.extend_from_slice(b"{\"$type\":\"app.bsky.embed.video\",");
        if self.rng.chance(0.1) {
            o.extend_from_slice(b"\"alt\":");
            let mut txt = std::mem::take(&mut self.txt);
            txt.clear();
            let len = self.rng.range(10, 120) as usize;
            self.tg.text(&mut self.rng, lang, len, &mut txt);
            json::str(o, &txt);
            self.txt = txt;
            o.push(b',');
        }
        self.aspect(o);
        o.extend_from_slice(b",\"video\":");
        let size = (200_000.0 * (100.0f64).powf(self.rng.f64())) as u64;
        self.blob(o, b"video/mp4", size);
        o.push(b'}');
    }

    fn external(&mut self, o: &mut Vec<u8>, lang: usize, gif: bool) {
        o.extend_from_slice(b"{\"$type\":\"app.bsky.embed.external\",\"external\":{\"description\":\"");
        let mut txt = std::mem::take(&mut self.txt);
        let mut title = Vec::with_capacity(128);
        if gif {
            // GIF picker: the description is "ALT: " + title.
            let idx = self.gif_pl.sample(&mut self.rng);
            let mut r = Rng::new(self.seed, 777, idx);
            title.extend_from_slice(b"a ");
            let n = r.range(3, 11);
            for i in 0..n {
                if i > 0 {
                    title.push(b' ');
                }
                title.extend_from_slice(self.tg.word(&mut r, 0).as_bytes());
            }
            o.extend_from_slice(b"ALT: ");
            json::str_body(o, &title);
        } else if self.rng.chance(0.82) {
            txt.clear();
            let len = (self.rng.f64() * self.rng.f64() * 300.0) as usize + 20;
            self.tg.text(&mut self.rng, lang, len, &mut txt);
            json::str_body(o, &txt);
        }
        o.extend_from_slice(b"\",");
        if gif || self.rng.chance(0.78) {
            o.extend_from_slice(b"\"thumb\":");
            let size = self.image_size() / 4 + 5_000;
            self.blob(o, b"image/jpeg", size);
            o.push(b',');
        }
        o.extend_from_slice(b"\"title\":");
        if !gif {
            let len = self.rng.range(12, 100) as usize;
            self.tg.text(&mut self.rng, lang, len, &mut title);
        }
        json::str(o, &title);
        o.extend_from_slice(b",\"uri\":");
        json::str(o, &self.url);
        o.extend_from_slice(b"}}");
        self.txt = txt;
    }

    fn record_embed(&mut self, o: &mut Vec<u8>, t: u64, u: u64, typed: bool) {
        if typed {
            o.extend_from_slice(b"{\"$type\":\"app.bsky.embed.record\",\"record\":");
        } else {
            o.extend_from_slice(b"\"record\":");
        }
        let age = self.subject_age.sample(&mut self.rng);
        let key = self.post_key(t, age);
        let author = if self.rng.chance(0.12) { Some(u) } else { None };
        self.push_ref(o, key, author, Post.nsid());
        if typed {
            o.push(b'}');
        }
    }

    /// The body of an `app.bsky.feed.post` record, from `createdAt` on (without the closing
    /// brace). `hard` turns the post into one of the hard documents.
    fn post_body(&mut self, o: &mut Vec<u8>, t: u64, u: u64, created: i64, fmt: TsFmt, hard: Option<Hard>) {
        // Language, embed and reply decisions first.
        let has_langs = self.rng.chance(0.94);
        let (code, lang) = if has_langs || self.rng.chance(0.5) { self.tg.pick_code(&mut self.rng) } else { ("en", 0) };
        let second_lang = has_langs && self.rng.chance(0.03);
        let e = self.rng.f64();
        let mut embed = if e < 0.66 {
            EmbedKind::None
        } else if e < 0.83 {
            EmbedKind::Images
        } else if e < 0.905 {
            EmbedKind::External
        } else if e < 0.96 {
            EmbedKind::Record
        } else if e < 0.977 {
            EmbedKind::RecordWithMedia
        } else {
            EmbedKind::Video
        };
        if hard == Some(Hard::BigInt) {
            embed = EmbedKind::Images;
        }
        let gif = embed == EmbedKind::External && self.rng.chance(0.28);
        let is_reply = self.rng.chance(0.53);

        // Text and facets.
        let mut txt = std::mem::take(&mut self.txt);
        txt.clear();
        self.facets.clear();
        self.fval.clear();
        self.url.clear();
        if embed == EmbedKind::External {
            if gif {
                let mut url = std::mem::take(&mut self.url);
                self.tg.gif_url(&mut self.rng, &mut url);
                self.url = url;
            } else {
                let mut url = std::mem::take(&mut self.url);
                self.tg.url(&mut self.rng, &mut url);
                self.url = url;
            }
        }
        if self.rng.chance(0.035) {
            let m = self.popular.user_at(self.rng.f64());
            let start = txt.len();
            txt.push(b'@');
            self.tg.handle(hash3(41, self.seed, m), &mut txt);
            self.facets.push(Facet { start, end: txt.len(), val: FacetVal::Mention(m) });
            txt.push(b' ');
        }
        let empty = match embed {
            EmbedKind::Images | EmbedKind::Video | EmbedKind::RecordWithMedia => self.rng.chance(0.13),
            _ => self.rng.chance(0.01),
        };
        if hard == Some(Hard::LongText) {
            while txt.len() < LONG_TEXT_BYTES {
                self.tg.text(&mut self.rng, lang, 4096, &mut txt);
                txt.extend_from_slice(b"\n\n");
            }
            txt.truncate(LONG_TEXT_BYTES);
            // Do not cut a multi-byte character.
            while txt.last().is_some_and(|&b| b & 0xc0 == 0x80 || b >= 0xc0) {
                txt.pop();
            }
        } else if !empty {
            let base = self.tg.post_len.sample(&mut self.rng);
            let len = self.tg.scaled_len(lang, base);
            self.tg.text(&mut self.rng, lang, len, &mut txt);
        }
        if hard == Some(Hard::NulEscape) {
            let at = txt.len() / 2;
            let at = (0..=at).rev().find(|&i| i == 0 || txt[i] == b' ').unwrap_or(0);
            txt.insert(at, 0);
        }
        if !empty && self.rng.chance(0.105) {
            let n = if self.rng.chance(0.6) { 1 } else { self.rng.range(2, 5) };
            for _ in 0..n {
                if !txt.is_empty() {
                    txt.push(if self.rng.chance(0.8) { b' ' } else { b'\n' });
                }
                let tag = self.tg.tag(&mut self.rng).as_bytes();
                let start = txt.len();
                txt.push(b'#');
                txt.extend_from_slice(tag);
                let vs = self.fval.len();
                self.fval.extend_from_slice(tag);
                self.facets.push(Facet { start, end: txt.len(), val: FacetVal::Tag(vs, self.fval.len()) });
            }
        }
        let link_in_text = (embed == EmbedKind::External && !gif && self.rng.chance(0.75)) || self.rng.chance(0.02);
        if link_in_text {
            if self.url.is_empty() {
                let mut url = std::mem::take(&mut self.url);
                self.tg.url(&mut self.rng, &mut url);
                self.url = url;
            }
            if !txt.is_empty() {
                txt.extend_from_slice(if self.rng.chance(0.7) { b" ".as_slice() } else { b"\n\n" });
            }
            let start = txt.len();
            let shown = &self.url[8..];
            if shown.len() > 30 {
                txt.extend_from_slice(&shown[..27]);
                txt.extend_from_slice(b"...");
            } else {
                txt.extend_from_slice(shown);
            }
            let vs = self.fval.len();
            self.fval.extend_from_slice(&self.url);
            self.facets.push(Facet { start, end: txt.len(), val: FacetVal::Link(vs, self.fval.len()) });
            if embed != EmbedKind::External {
                self.url.clear();
            }
        }

        // Record, keys in bytewise order.
        self.created_at(o, created, fmt);
        match embed {
            EmbedKind::None => {}
            EmbedKind::Images => {
                o.extend_from_slice(b",\"embed\":");
                self.images(o, lang, hard == Some(Hard::BigInt));
            }
            EmbedKind::External => {
                o.extend_from_slice(b",\"embed\":");
                self.external(o, lang, gif);
            }
            EmbedKind::Record => {
                o.extend_from_slice(b",\"embed\":");
                self.record_embed(o, t, u, true);
            }
            EmbedKind::RecordWithMedia => {
                o.extend_from_slice(b",\"embed\":{\"$type\":\"app.bsky.embed.recordWithMedia\",\"media\":");
                if self.rng.chance(0.85) {
                    self.images(o, lang, false);
                } else {
                    self.video(o, lang);
                }
                o.extend_from_slice(b",\"record\":");
                o.extend_from_slice(b"{\"$type\":\"app.bsky.embed.record\",");
                self.record_embed(o, t, u, false);
                o.extend_from_slice(b"}}");
            }
            EmbedKind::Video => {
                o.extend_from_slice(b",\"embed\":");
                self.video(o, lang);
            }
        }
        if !self.facets.is_empty() {
            o.extend_from_slice(b",\"facets\":[");
            let typed = self.rng.chance(0.06);
            for i in 0..self.facets.len() {
                let f = self.facets[i];
                if i > 0 {
                    o.push(b',');
                }
                o.push(b'{');
                if typed {
                    o.extend_from_slice(b"\"$type\":\"app.bsky.richtext.facet\",");
                }
                o.extend_from_slice(b"\"features\":[{\"$type\":\"app.bsky.richtext.facet#");
                match f.val {
                    FacetVal::Mention(m) => {
                        o.extend_from_slice(b"mention\",\"did\":\"");
                        self.push_did(o, m);
                        o.push(b'"');
                    }
                    FacetVal::Link(a, b) => {
                        o.extend_from_slice(b"link\",\"uri\":");
                        json::str(o, &self.fval[a..b]);
                    }
                    FacetVal::Tag(a, b) => {
                        o.extend_from_slice(b"tag\",\"tag\":");
                        json::str(o, &self.fval[a..b]);
                    }
                }
                o.extend_from_slice(b"}],\"index\":{\"byteEnd\":");
                json::uint(o, f.end as u64);
                o.extend_from_slice(b",\"byteStart\":");
                json::uint(o, f.start as u64);
                o.extend_from_slice(b"}}");
            }
            o.push(b']');
        }
        if embed == EmbedKind::Images && self.rng.chance(0.03) {
            o.extend_from_slice(
                b",\"labels\":{\"$type\":\"com.atproto.label.defs#selfLabels\",\"values\":[{\"val\":\"",
            );
            o.extend_from_slice(self.rng.pick(&["porn", "sexual", "nudity", "graphic-media"]).as_bytes());
            o.extend_from_slice(b"\"}]}");
        }
        if has_langs {
            o.extend_from_slice(b",\"langs\":[\"");
            o.extend_from_slice(code.as_bytes());
            if second_lang {
                o.extend_from_slice(if code == "en" { b"\",\"ja".as_slice() } else { b"\",\"en" });
            }
            o.extend_from_slice(b"\"]");
        }
        if hard == Some(Hard::DeepNesting) {
            o.extend_from_slice(b",\"nested\":");
            for _ in 0..DEEP_LEVELS - 1 {
                o.extend_from_slice(b"{\"n\":");
            }
            o.extend_from_slice(b"{}");
            for _ in 0..DEEP_LEVELS - 1 {
                o.push(b'}');
            }
        }
        if is_reply {
            let age = self.reply_age.sample(&mut self.rng);
            let pkey = self.post_key(t, age);
            let self_thread = self.rng.chance(0.15);
            let pauthor = if self_thread { Some(u) } else { None };
            o.extend_from_slice(b",\"reply\":{\"parent\":");
            self.push_ref(o, pkey, pauthor, Post.nsid());
            o.extend_from_slice(b",\"root\":");
            if self.rng.chance(0.5) {
                self.push_ref(o, pkey, pauthor, Post.nsid());
            } else {
                let extra = self.reply_age.sample(&mut self.rng) * 3.0;
                let rkey = self.post_key(t, age + extra);
                let rauthor = if self_thread && self.rng.chance(0.6) { Some(u) } else { None };
                self.push_ref(o, rkey, rauthor, Post.nsid());
            }
            o.push(b'}');
        }
        if self.rng.chance(0.004) {
            o.extend_from_slice(b",\"tags\":[]");
        }
        o.extend_from_slice(b",\"text\":");
        if hard == Some(Hard::LoneSurrogate) {
            // A high surrogate escape with no low surrogate after it: valid JSON syntax, not a
            // valid Unicode scalar value.
            let at = txt.len() / 2;
            let at = (0..=at).rev().find(|&i| i == 0 || txt[i] == b' ').unwrap_or(0);
            o.push(b'"');
            json::str_body(o, &txt[..at]);
            o.extend_from_slice(b"\\ud83d");
            json::str_body(o, &txt[at..]);
            o.push(b'"');
        } else {
            json::str(o, &txt);
        }
        self.txt = txt;
    }

    /// `app.bsky.actor.profile` after `$type`: new accounts write an avatar and an empty
    /// displayName; updates carry the full profile.
    fn profile_body(&mut self, o: &mut Vec<u8>, t: u64, created: i64, fmt: TsFmt, update: bool) {
        if self.rng.chance(if update { 0.92 } else { 0.8 }) {
            o.extend_from_slice(b"\"avatar\":");
            let m: &[u8] = if self.rng.chance(0.8) { b"image/jpeg" } else { b"image/png" };
            let size = self.image_size() / 2 + 10_000;
            self.blob(o, m, size);
            o.push(b',');
        }
        if update && self.rng.chance(0.45) {
            o.extend_from_slice(b"\"banner\":");
            let size = self.image_size();
            self.blob(o, b"image/jpeg", size);
            o.push(b',');
        }
        if !update || self.rng.chance(0.9) {
            self.created_at(o, created, if update { TsFmt::Millis } else { fmt });
            o.push(b',');
        }
        let (_, lang) = self.tg.pick_code(&mut self.rng);
        if update && self.rng.chance(0.85) {
            o.extend_from_slice(b"\"description\":");
            let mut txt = std::mem::take(&mut self.txt);
            txt.clear();
            let len = (self.rng.f64() * 230.0) as usize + 5;
            self.tg.text(&mut self.rng, lang, len, &mut txt);
            if self.rng.chance(0.25) {
                txt.extend_from_slice(b"\n\n");
                let mut url = Vec::new();
                self.tg.url(&mut self.rng, &mut url);
                txt.extend_from_slice(&url[8..]);
            }
            json::str(o, &txt);
            self.txt = txt;
            o.push(b',');
        } else if !update && self.rng.chance(0.06) {
            o.extend_from_slice(b"\"description\":\"\",");
        }
        o.extend_from_slice(b"\"displayName\":");
        if update || self.rng.chance(0.08) {
            let mut name = Vec::with_capacity(64);
            self.tg.display_name(&mut self.rng, &mut name);
            json::str(o, &name);
        } else {
            o.extend_from_slice(b"\"\"");
        }
        if !update && self.rng.chance(0.25) {
            o.extend_from_slice(b",\"joinedViaStarterPack\":{\"cid\":\"");
            let owner = self.popular.user_at(self.rng.f64());
            push_cid_hash(o, hash3(51, self.seed, owner), false);
            o.extend_from_slice(b"\",\"uri\":\"");
            self.push_owned_uri(o, owner, StarterPack.nsid(), 0);
            o.extend_from_slice(b"\"}");
        }
        if update && self.rng.chance(0.25) {
            o.extend_from_slice(b",\"pinnedPost\":");
            let age = self.old_age.sample(&mut self.rng);
            let key = self.post_key(t, age);
            let u = self.rng.next_u64() % POPULATION;
            self.push_ref(o, key, Some(u), Post.nsid());
        }
    }

    fn feed_slug(&mut self, o: &mut Vec<u8>) {
        if self.rng.chance(0.5) {
            for _ in 0..13 {
                o.push(b"abcdefghijklmnopqrstuvwxyz234567"[self.rng.below(32) as usize]);
            }
        } else {
            push_ascii_lower(o, self.tg.word(&mut self.rng, 0));
            o.push(b'-');
            push_ascii_lower(o, self.tg.tag(&mut self.rng));
        }
    }

    fn short_text(&mut self, o: &mut Vec<u8>, lang: usize, lo: u64, hi: u64) {
        let mut txt = std::mem::take(&mut self.txt);
        txt.clear();
        let len = self.rng.range(lo, hi) as usize;
        self.tg.text(&mut self.rng, lang, len, &mut txt);
        json::str(o, &txt);
        self.txt = txt;
    }

    /// Long-tail collections, after `$type`, createdAt included (in key order).
    #[allow(clippy::too_many_arguments)]
    fn misc_body(&mut self, o: &mut Vec<u8>, t: u64, c: Coll, u: u64, created: i64, fmt: TsFmt) {
        let (_, lang) = self.tg.pick_code(&mut self.rng);
        if !matches!(c, Threadgate | Generator) {
            self.created_at(o, created, fmt);
        }
        match c {
            List => {
                if self.rng.chance(0.6) {
                    o.extend_from_slice(b",\"description\":");
                    self.short_text(o, lang, 10, 200);
                }
                o.extend_from_slice(b",\"name\":");
                self.short_text(o, lang, 4, 30);
                o.extend_from_slice(if self.rng.chance(0.7) {
                    b",\"purpose\":\"app.bsky.graph.defs#curatelist\"".as_slice()
                } else {
                    b",\"purpose\":\"app.bsky.graph.defs#modlist\""
                });
            }
            StarterPack => {
                if self.rng.chance(0.8) {
                    o.extend_from_slice(b",\"description\":");
                    self.short_text(o, lang, 20, 250);
                }
                if self.rng.chance(0.4) {
                    o.extend_from_slice(b",\"feeds\":[");
                    let n = self.rng.range(1, 3);
                    for i in 0..n {
                        if i > 0 {
                            o.push(b',');
                        }
                        o.extend_from_slice(b"{\"uri\":\"at://");
                        let owner = self.popular.user_at(self.rng.f64());
                        self.push_did(o, owner);
                        o.extend_from_slice(b"/app.bsky.feed.generator/");
                        self.feed_slug(o);
                        o.extend_from_slice(b"\"}");
                    }
                    o.push(b']');
                }
                o.extend_from_slice(b",\"list\":\"");
                self.push_owned_uri(o, u, List.nsid(), 3);
                o.extend_from_slice(b"\",\"name\":");
                self.short_text(o, lang, 6, 40);
                if self.rng.chance(0.5) {
                    o.extend_from_slice(b",\"updatedAt\":\"");
                    push_iso(o, t as i64 - (self.rng.f64() * 5.0 * SEC) as i64, TsFmt::Millis);
                    o.push(b'"');
                }
            }
            Threadgate => {
                o.extend_from_slice(b"\"allow\":[");
                let n = self.rng.below(3);
                for i in 0..n {
                    if i > 0 {
                        o.push(b',');
                    }
                    match self.rng.below(3) {
                        0 => o.extend_from_slice(b"{\"$type\":\"app.bsky.feed.threadgate#mentionRule\"}"),
                        1 => o.extend_from_slice(b"{\"$type\":\"app.bsky.feed.threadgate#followingRule\"}"),
                        _ => {
                            o.extend_from_slice(b"{\"$type\":\"app.bsky.feed.threadgate#listRule\",\"list\":\"");
                            self.push_owned_uri(o, u, List.nsid(), 0);
                            o.extend_from_slice(b"\"}");
                        }
                    }
                }
                o.extend_from_slice(b"],");
                self.created_at(o, created, fmt);
                if self.rng.chance(0.3) {
                    o.extend_from_slice(b",\"hiddenReplies\":[\"at://");
                    let other = self.uniform.user_at(self.rng.f64());
                    self.push_did(o, other);
                    o.extend_from_slice(b"/app.bsky.feed.post/");
                    push_tid(o, t - (self.rng.f64() * 3600.0 * SEC) as u64, self.rng.below(32));
                    o.extend_from_slice(b"\"]");
                }
                o.extend_from_slice(b",\"post\":\"at://");
                self.push_did(o, u);
                o.extend_from_slice(b"/app.bsky.feed.post/");
                push_tid(o, t - (self.rng.f64() * 600.0 * SEC) as u64, self.rng.below(32));
                o.push(b'"');
            }
            Postgate => {
                o.extend_from_slice(b",\"detachedEmbeddingUris\":[],\"embeddingRules\":[{\"$type\":\"app.bsky.feed.postgate#disableRule\"}],\"post\":\"at://");
                self.push_did(o, u);
                o.extend_from_slice(b"/app.bsky.feed.post/");
                push_tid(o, t - (self.rng.f64() * 600.0 * SEC) as u64, self.rng.below(32));
                o.push(b'"');
            }
            Generator => {
                if self.rng.chance(0.6) {
                    o.extend_from_slice(b"\"avatar\":");
                    let size = self.image_size() / 3 + 5_000;
                    self.blob(o, b"image/jpeg", size);
                    o.push(b',');
                }
                self.created_at(o, created, fmt);
                o.extend_from_slice(b",\"description\":");
                self.short_text(o, lang, 20, 250);
                o.extend_from_slice(b",\"did\":\"did:web:");
                let host = ["skyfeed.me", "bsky.app", "goodfeeds.co", "blueskyfeeds.com", "feeds.example.social"];
                o.extend_from_slice(self.rng.pick(&host).as_bytes());
                o.extend_from_slice(b"\",\"displayName\":");
                self.short_text(o, lang, 4, 24);
            }
            Top8Theme => {
                o.extend_from_slice(b",\"accentColor\":\"#");
                let rgb = self.rng.below(1 << 24);
                o.extend_from_slice(format!("{rgb:06x}").as_bytes());
                o.extend_from_slice(b"\",\"theme\":");
                let themes = ["\"classic\"", "\"dark\"", "\"glitter\"", "\"myspace\"", "\"retro\""];
                o.extend_from_slice(self.rng.pick(&themes).as_bytes());
            }
            KollectiveCatalog => {
                o.extend_from_slice(b",\"description\":");
                self.short_text(o, lang, 10, 120);
                o.extend_from_slice(b",\"name\":");
                self.short_text(o, lang, 4, 30);
            }
            KollectiveProfile => {
                o.extend_from_slice(b",\"displayName\":");
                self.short_text(o, lang, 4, 24);
            }
            Labeler => {
                o.extend_from_slice(b",\"policies\":{\"labelValueDefinitions\":[");
                let n = self.rng.range(1, 4);
                let mut names: Vec<Vec<u8>> = Vec::new();
                for i in 0..n {
                    if i > 0 {
                        o.push(b',');
                    }
                    let mut id = Vec::new();
                    push_ascii_lower(&mut id, self.tg.word(&mut self.rng, 0));
                    id.push(b'-');
                    push_ascii_lower(&mut id, self.tg.word(&mut self.rng, 0));
                    o.extend_from_slice(
                        b"{\"adultOnly\":false,\"blurs\":\"none\",\"defaultSetting\":\"warn\",\"identifier\":",
                    );
                    json::str(o, &id);
                    o.extend_from_slice(b",\"locales\":[{\"description\":");
                    self.short_text(o, 0, 20, 120);
                    o.extend_from_slice(b",\"lang\":\"en\",\"name\":");
                    self.short_text(o, 0, 4, 20);
                    o.extend_from_slice(b"}],\"severity\":\"inform\"}");
                    names.push(id);
                }
                o.extend_from_slice(b"],\"labelValues\":[");
                for (i, id) in names.iter().enumerate() {
                    if i > 0 {
                        o.push(b',');
                    }
                    json::str(o, id);
                }
                o.extend_from_slice(b"]}");
            }
            _ => {}
        }
    }

    // ------------------------------------------------------------------ hard documents

    /// A hard document: a valid, well-formed post create at time `t` that some systems refuse.
    pub fn hard_event(&mut self, o: &mut Vec<u8>, t: u64, kind: Hard) {
        std::mem::swap(&mut self.rng, &mut self.hard_rng);
        // The regular documents after a hard one do not depend on where hard ones are.
        let alt_rng = self.alt_rng.clone();
        let u = self.user_for(Post);
        let (ct, created, _) = self.times(t, 0.0);
        let clock = self.user_clock(u);
        self.commit_head(o, t, u, ct, clock, Op::Create, Post);
        push_tid(o, ct.saturating_sub(50_000), clock);
        self.record_start(o, Post);
        self.post_body(o, t, u, created, TsFmt::Millis, Some(kind));
        self.commit_tail(o);
        self.alt_rng = alt_rng;
        std::mem::swap(&mut self.rng, &mut self.hard_rng);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rare_events_hold_their_expected_counts_whatever_the_split() {
        let count = |events: &[(u64, Kind)], kind: Kind| events.iter().filter(|e| e.1 == kind).count() as f64;
        let whole = rare_events(1, 0, 100_000_000);
        let mut split = Vec::new();
        for k in 0..100u64 {
            split.extend(rare_events(1, k * 1_000_000, (k + 1) * 1_000_000));
        }
        assert_eq!(whole, split);
        for &(kind, rates) in RARE {
            let expected = rates[0] + 99.0 * rates[1];
            // (within one per segment: two segments here)
            assert!((count(&whole, kind) - expected).abs() <= 2.0, "{kind:?}: {} vs {expected}", count(&whole, kind));
        }
        // app.kollective.profile: 3 at 100m, none in the first 1M.
        assert_eq!(count(&whole, Kind::Commit(KollectiveProfile, Op::Create)), 3.0);
        let third_party =
            |e: &(u64, Kind)| matches!(e.1, Kind::Commit(Top8Theme | KollectiveCatalog | KollectiveProfile, _));
        assert!(!rare_events(1, 0, 1_000_000).iter().any(third_party));
        assert!(whole.iter().any(third_party));
    }
}
