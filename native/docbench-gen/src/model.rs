//! Calibration of the synthetic stream against the first 1M documents of JSONBench
//! (2024-11-21 16:25:49 UTC): event mix, batch commits, user activity and time lags.
//! Every constant here is documented in docs of docbench (methodology §3) and checked by
//! `docbench bench generate` / tests/test_generate.py.

use crate::rng::{hash3, PowerLaw};

/// First `time_us` of the dataset: 2024-11-21 16:25:49.000167 UTC.
pub const T0: u64 = 1_732_206_349_000_167;
/// Events per second of `time_us`.
pub const RATE: f64 = 1230.0;
/// The fixed user population (user i's did is derived from hash(seed, i)).
pub const POPULATION: u64 = 8_000_000;
/// Firehose sequence number at T0 (identity/account `seq`), and its growth per microsecond.
pub const SEQ0: u64 = 4_148_295_184;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Coll {
    Like = 0,
    Follow,
    Post,
    Repost,
    Block,
    Profile,
    ListItem,
    ListBlock,
    StarterPack,
    List,
    Threadgate,
    Postgate,
    Generator,
    Labeler,
}

impl Coll {
    pub fn nsid(self) -> &'static [u8] {
        match self {
            Coll::Like => b"app.bsky.feed.like",
            Coll::Follow => b"app.bsky.graph.follow",
            Coll::Post => b"app.bsky.feed.post",
            Coll::Repost => b"app.bsky.feed.repost",
            Coll::Block => b"app.bsky.graph.block",
            Coll::Profile => b"app.bsky.actor.profile",
            Coll::ListItem => b"app.bsky.graph.listitem",
            Coll::ListBlock => b"app.bsky.graph.listblock",
            Coll::StarterPack => b"app.bsky.graph.starterpack",
            Coll::List => b"app.bsky.graph.list",
            Coll::Threadgate => b"app.bsky.feed.threadgate",
            Coll::Postgate => b"app.bsky.feed.postgate",
            Coll::Generator => b"app.bsky.feed.generator",
            Coll::Labeler => b"app.bsky.labeler.service",
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Op {
    Create,
    Update,
    Delete,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    Commit(Coll, Op),
    Identity,
    Account,
}

/// One entry of the event mix. `per_million` is the number of *events* per 1M documents;
/// batch commits (one did, one rev, consecutive lines) start with probability `batch_p` and
/// hold `batch_max` events with probability `batch_at_max`, else uniformly `batch_min..=batch_max`.
#[derive(Clone, Copy)]
pub struct KindSpec {
    pub kind: Kind,
    pub per_million: f64,
    pub batch_p: f64,
    pub batch_min: u32,
    pub batch_max: u32,
    pub batch_at_max: f64,
}

impl KindSpec {
    pub fn mean_len(&self) -> f64 {
        let mean_batch = self.batch_at_max * self.batch_max as f64
            + (1.0 - self.batch_at_max) * (self.batch_min + self.batch_max) as f64 / 2.0;
        1.0 + self.batch_p * (mean_batch - 1.0)
    }
}

const fn k(kind: Kind, per_million: f64) -> KindSpec {
    KindSpec { kind, per_million, batch_p: 0.0, batch_min: 1, batch_max: 1, batch_at_max: 0.0 }
}

const fn kb(kind: Kind, per_million: f64, batch_p: f64, lo: u32, hi: u32, at_max: f64) -> KindSpec {
    KindSpec { kind, per_million, batch_p, batch_min: lo, batch_max: hi, batch_at_max: at_max }
}

use Coll::*;
use Op::*;

/// Events per 1M documents. Totals per collection are the published JSONBench 1M figures
/// (like 448,944; follow 360,374; post 90,816; repost 58,540; block 14,040; profile 11,762;
/// listitem 8,103; listblock 895; starterpack 405; list 356; threadgate 255; postgate 104;
/// generator 74; labeler.service 4; no collection 5,328) and so are the creates of the seven
/// largest; the remaining split between delete and update is chosen so that deletes : updates
/// is about 7 : 1, dominated by unfollows and profile updates.
pub const KINDS: &[KindSpec] = &[
    kb(Kind::Commit(Like, Create), 444_523.0, 0.008, 2, 3, 0.0),
    k(Kind::Commit(Like, Delete), 4_421.0),
    kb(Kind::Commit(Follow, Create), 337_978.0, 0.012, 2, 20, 0.4),
    k(Kind::Commit(Follow, Delete), 22_396.0),
    k(Kind::Commit(Post, Create), 86_812.0),
    k(Kind::Commit(Post, Delete), 4_004.0),
    k(Kind::Commit(Repost, Create), 56_993.0),
    k(Kind::Commit(Repost, Delete), 1_547.0),
    k(Kind::Commit(Block, Create), 13_838.0),
    k(Kind::Commit(Block, Delete), 202.0),
    k(Kind::Commit(Profile, Create), 5_337.0),
    k(Kind::Commit(Profile, Update), 4_819.0),
    k(Kind::Commit(Profile, Delete), 1_606.0),
    kb(Kind::Commit(ListItem, Create), 7_568.0, 0.06, 2, 12, 0.0),
    k(Kind::Commit(ListItem, Delete), 535.0),
    k(Kind::Commit(ListBlock, Create), 850.0),
    k(Kind::Commit(ListBlock, Delete), 45.0),
    k(Kind::Commit(StarterPack, Create), 225.0),
    k(Kind::Commit(StarterPack, Update), 140.0),
    k(Kind::Commit(StarterPack, Delete), 40.0),
    k(Kind::Commit(List, Create), 215.0),
    k(Kind::Commit(List, Update), 90.0),
    k(Kind::Commit(List, Delete), 51.0),
    k(Kind::Commit(Threadgate, Create), 180.0),
    k(Kind::Commit(Threadgate, Update), 50.0),
    k(Kind::Commit(Threadgate, Delete), 25.0),
    k(Kind::Commit(Postgate, Create), 78.0),
    k(Kind::Commit(Postgate, Update), 20.0),
    k(Kind::Commit(Postgate, Delete), 6.0),
    k(Kind::Commit(Generator, Create), 30.0),
    k(Kind::Commit(Generator, Update), 40.0),
    k(Kind::Commit(Generator, Delete), 4.0),
    k(Kind::Commit(Labeler, Create), 1.0),
    k(Kind::Commit(Labeler, Update), 3.0),
    // Identity events; 12% of them are followed by an account event of the same did.
    k(Kind::Identity, 4_650.0),
    k(Kind::Account, 120.0),
];

/// Share of identity events immediately followed by an account event (same did).
pub const IDENTITY_THEN_ACCOUNT: f64 = 0.12;

/// Activity of users per collection: rank ~ Zipf–Mandelbrot(s, q) over `n` active users, mapped
/// into the population by an affine permutation. (n, s, q) are calibrated so that the distinct
/// users among creates at 1M match the published Q2 figures (like 117,617; follow 63,957;
/// post 50,464; repost 26,581; block 5,785; listitem 1,078; profile 5,337) and keep growing
/// sub-linearly with scale.
pub fn activity(c: Coll) -> (u64, f64, f64) {
    match c {
        Like => (6_000_000, 1.2076, 100.0),
        Follow => (5_000_000, 1.2931, 100.0),
        Post => (4_000_000, 0.9662, 10.0),
        Repost => (3_000_000, 1.0568, 10.0),
        Block => (2_000_000, 1.1663, 10.0),
        ListItem => (500_000, 1.519, 10.0),
        Profile => (POPULATION, 0.0, 0.0),
        _ => (2_000_000, 0.9, 10.0),
    }
}

/// A user-selection model: ranks from a power law, mapped into [0, POPULATION) bijectively.
#[derive(Clone, Copy)]
pub struct UserModel {
    pub pl: PowerLaw,
    a: u64,
    b: u64,
}

impl UserModel {
    pub fn new(seed: u64, salt: u64, n: u64, s: f64, q: f64) -> UserModel {
        let mut a = hash3(0xa11ce, seed, salt) % POPULATION;
        // a must be coprime with POPULATION = 2^9 * 5^6.
        if a % 2 == 0 {
            a += 1;
        }
        while a % 5 == 0 {
            a += 2;
        }
        UserModel { pl: PowerLaw::new(n.min(POPULATION), s, q), a, b: hash3(0xb0b, seed, salt) % POPULATION }
    }

    #[inline(always)]
    pub fn user_at(&self, u: f64) -> u64 {
        let r = self.pl.at(u);
        ((r as u128 * self.a as u128 + self.b as u128) % POPULATION as u128) as u64
    }
}
