//! Calibration of the synthetic stream against the first 1M documents of JSONBench
//! (2024-11-21 16:25:49 UTC): event mix, batch commits, user activity and time lags.
//! Every constant here is documented in docs of docbench (methodology §3) and checked by
//! `docbench bench generate` / tests/test_generate.py.

use crate::rng::{hash3, PowerLaw};

/// First `time_us` of the dataset: 2024-11-21 16:25:49.000167 UTC.
pub const T0: u64 = 1_732_206_349_000_167;
/// The fixed user population (user i's did is derived from hash(seed, i)); 2^10 * 5^7, so the
/// affine permutations below need a multiplier prime to 2 and 5. Large enough that the 8.5M
/// distinct followers of the first 1000m events are a fraction of it.
pub const POPULATION: u64 = 80_000_000;
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
    // Third-party lexicons: absent from the first 1M events, present by 100m.
    Top8Theme,
    KollectiveCatalog,
    KollectiveProfile,
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
            Coll::Top8Theme => b"app.top8.theme",
            Coll::KollectiveCatalog => b"app.kollective.catalog",
            Coll::KollectiveProfile => b"app.kollective.profile",
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

/// First event index (0-based, over the whole dataset) of each segment of the event mix:
/// A = the first 1M events (the published 1M figures), B = up to 100m, C = beyond. The mix of a
/// segment is what the published figures at its end imply for the events since its start.
pub const SEGMENT_STARTS: [u64; 3] = [0, 1_000_000, 100_000_000];

/// The mix segment of event `index`.
#[inline]
pub fn segment_of(index: u64) -> usize {
    SEGMENT_STARTS.iter().rposition(|&s| index >= s).unwrap_or(0)
}

/// One entry of the event mix. `per_million[s]` is the number of *events* per 1M documents in
/// segment s; batch commits (one did, one rev, consecutive lines) start with probability
/// `batch_p` and hold `batch_max` events with probability `batch_at_max`, else uniformly
/// `batch_min..=batch_max`.
#[derive(Clone, Copy)]
pub struct KindSpec {
    pub kind: Kind,
    pub per_million: [f64; 3],
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

const fn k(kind: Kind, a: f64, b: f64, c: f64) -> KindSpec {
    KindSpec { kind, per_million: [a, b, c], batch_p: 0.0, batch_min: 1, batch_max: 1, batch_at_max: 0.0 }
}

const fn kb(kind: Kind, per_million: [f64; 3], batch_p: f64, lo: u32, hi: u32, at_max: f64) -> KindSpec {
    KindSpec { kind, per_million, batch_p, batch_min: lo, batch_max: hi, batch_at_max: at_max }
}

use Coll::*;
use Op::*;

/// Events per 1M documents, per segment.
///
/// A: the published JSONBench 1M figures per collection (like 448,944; follow 360,374; post
/// 90,816; repost 58,540; block 14,040; profile 11,762; listitem 8,103; listblock 895;
/// starterpack 405; list 356; threadgate 255; postgate 104; generator 74; no collection 5,328)
/// and the creates of the seven largest; the remaining split between delete and update is chosen
/// so that deletes : updates is about 7 : 1, dominated by unfollows and profile updates.
/// B: (figure at 100m - figure at 1m) / 99 from the published 100m creates and Q1 counts; the
/// small collections keep A's split of operations. C: the creates of the eight largest from the
/// published 1000m figures, (1000m - 100m) / 900; their deletes keep B's share of the creates,
/// everything else (profile updates and deletes included) B's rate.
pub const KINDS: &[KindSpec] = &[
    kb(Kind::Commit(Like, Create), [444_523.0, 445_273.0, 469_380.0], 0.008, 2, 3, 0.0),
    k(Kind::Commit(Like, Delete), 4_421.0, 4_684.0, 4_935.0),
    kb(Kind::Commit(Follow, Create), [337_978.0, 342_776.0, 301_152.0], 0.012, 2, 20, 0.4),
    k(Kind::Commit(Follow, Delete), 22_396.0, 20_882.0, 18_362.0),
    k(Kind::Commit(Post, Create), 86_812.0, 83_749.0, 90_549.0),
    k(Kind::Commit(Post, Delete), 4_004.0, 3_626.0, 3_923.0),
    k(Kind::Commit(Repost, Create), 56_993.0, 54_646.0, 57_544.0),
    k(Kind::Commit(Repost, Delete), 1_547.0, 1_588.0, 1_671.0),
    k(Kind::Commit(Block, Create), 13_838.0, 14_075.0, 16_088.0),
    k(Kind::Commit(Block, Delete), 202.0, 260.0, 297.0),
    k(Kind::Commit(Profile, Create), 5_337.0, 4_998.0, 2_974.0),
    k(Kind::Commit(Profile, Update), 4_819.0, 4_633.0, 4_633.0),
    k(Kind::Commit(Profile, Delete), 1_606.0, 1_544.0, 1_544.0),
    kb(Kind::Commit(ListItem, Create), [7_568.0, 7_391.0, 7_021.0], 0.06, 2, 12, 0.0),
    k(Kind::Commit(ListItem, Delete), 535.0, 1_756.0, 1_657.0),
    // Identity events; 12% of them are followed by an account event of the same did.
    k(Kind::Identity, 4_650.0, 5_272.7, 5_272.7),
    k(Kind::Account, 120.0, 136.0, 136.0),
];

/// Kinds too rare for a random draw to give their published counts (a Poisson count of 3 is 0
/// one time in twenty; one of 104 is off by 10% one time in three): each is placed on a lattice
/// of the event index with a random phase, `per_million[s]` per 1M events of segment s, so the
/// first N events hold its expected count to within one at every scale. The small collections
/// of the table above (list blocks, starter packs, lists, thread and post gates, feed
/// generators) and Q1 at 100m's rare ones: labeler.service 40, app.top8.theme 684,
/// app.kollective.catalog 39, app.kollective.profile 3.
pub const RARE: &[(Kind, [f64; 3])] = &[
    (Kind::Commit(ListBlock, Create), [850.0, 816.6, 743.0]),
    (Kind::Commit(ListBlock, Delete), [45.0, 45.2, 41.0]),
    (Kind::Commit(StarterPack, Create), [225.0, 197.9, 197.9]),
    (Kind::Commit(StarterPack, Update), [140.0, 123.1, 123.1]),
    (Kind::Commit(StarterPack, Delete), [40.0, 35.2, 35.2]),
    (Kind::Commit(List, Create), [215.0, 216.9, 216.9]),
    (Kind::Commit(List, Update), [90.0, 90.8, 90.8]),
    (Kind::Commit(List, Delete), [51.0, 51.4, 51.4]),
    (Kind::Commit(Threadgate, Create), [180.0, 202.7, 202.7]),
    (Kind::Commit(Threadgate, Update), [50.0, 56.3, 56.3]),
    (Kind::Commit(Threadgate, Delete), [25.0, 28.1, 28.1]),
    (Kind::Commit(Postgate, Create), [78.0, 95.8, 95.8]),
    (Kind::Commit(Postgate, Update), [20.0, 24.6, 24.6]),
    (Kind::Commit(Postgate, Delete), [6.0, 7.4, 7.4]),
    (Kind::Commit(Generator, Create), [30.0, 31.0, 31.0]),
    (Kind::Commit(Generator, Update), [40.0, 41.3, 41.3]),
    (Kind::Commit(Generator, Delete), [4.0, 4.1, 4.1]),
    (Kind::Commit(Labeler, Create), [1.0, 0.091, 0.091]),
    (Kind::Commit(Labeler, Update), [3.0, 0.273, 0.273]),
    (Kind::Commit(Top8Theme, Create), [0.0, 5.50, 5.50]),
    (Kind::Commit(Top8Theme, Update), [0.0, 1.06, 1.06]),
    (Kind::Commit(Top8Theme, Delete), [0.0, 0.35, 0.35]),
    (Kind::Commit(KollectiveCatalog, Create), [0.0, 0.394, 0.394]),
    (Kind::Commit(KollectiveProfile, Create), [0.0, 0.0303, 0.0303]),
];

/// Share of identity events immediately followed by an account event (same did).
pub const IDENTITY_THEN_ACCOUNT: f64 = 0.12;

/// One truncated Zipf–Mandelbrot law over `n` active users: density ∝ (rank + q)^-s.
pub type Law = (u64, f64, f64);
/// A window of `.0` users that moves `.1` users per event through the population: at event `i`
/// of the dataset it holds users ⌊.1 · i⌋ - .0 + 1 ..= ⌊.1 · i⌋ (before the permutation).
pub type Window = (u64, f64);

/// Activity of users per collection: a share `.0` of the selections follows the stationary
/// law `.1` (the regular users, the same all along), the rest picks uniformly in the moving
/// window `.2` (users who become active, stay a while and stop), each mapped into the
/// population by its own permutation. A stationary model cannot follow the real growth of
/// distinct users between 1m and 100m (too few at 10m, too many at 100m); the moving window
/// does. Fitted (native/docbench-gen/calibrate/fit.py, with the exact expectation of
/// calibrate/users.py) so that the distinct users among the creates of the first 1m, 10m, 100m
/// and 1000m events are the published ones (1m: like 117,617; follow 63,957; post 50,464;
/// repost 26,581; block 5,785; listitem 1,078; listblock 449; 10m: like 694,849; follow
/// 463,192; post 327,190; repost 188,549; block 45,808; listitem 7,097; listblock 5,104 of
/// 9,994 creates, per create; 100m and 1000m: methodology §3). Profiles are created once per
/// new user: uniform over the population (plus the re-creating users of `PROFILE_POOL`).
pub fn activity(c: Coll) -> (f64, Law, Window) {
    const NONE: Window = (1, 0.0);
    match c {
        Like => (0.8640, (189_953, 1.1299, 10.0), (2_457_950, 4.4263e-3)),
        Follow => (0.8748, (399_706, 1.3112, 10.0), (2_548_556, 6.5373e-3)),
        Post => (0.7456, (256_803, 0.9686, 10.0), (1_280_336, 2.7277e-3)),
        Repost => (0.7364, (453_722, 1.1928, 10.0), (586_285, 1.6452e-3)),
        Block => (0.7155, (56_899, 1.4335, 10.0), (319_515, 1.1383e-3)),
        ListItem => (0.8915, (141_467, 1.8933, 10.0), (38_024, 1.2510e-4)),
        ListBlock => (0.5139, (80_000_000, 3.5000, 10.0), (122_582, 3.4116e-4)),
        Profile => (1.0, (POPULATION, 0.0, 0.0), NONE),
        _ => (1.0, (2_000_000, 0.9, 10.0), NONE),
    }
}

/// Profile records re-created over and over: the published creates minus distinct users is
/// 0 at 1m and about 85,000 at both 100m and 1000m, so the repeats all come from segment B. A
/// pool of `.1` users makes a share `.0` of B's profile creates (about 95,000 records).
pub const PROFILE_POOL: (f64, u64) = (0.193, 12_000);

/// A user-selection model: ranks from a power law, mapped into [0, POPULATION) bijectively;
/// with a drift, rank r at event i is position ⌊drift · i⌋ - r before the mapping.
#[derive(Clone, Copy)]
pub struct UserModel {
    pub pl: PowerLaw,
    a: u64,
    b: u64,
    drift: f64,
}

impl UserModel {
    pub fn new(seed: u64, salt: u64, n: u64, s: f64, q: f64) -> UserModel {
        let mut a = hash3(0xa11ce, seed, salt) % POPULATION;
        // a must be coprime with POPULATION = 2^10 * 5^7.
        if a % 2 == 0 {
            a += 1;
        }
        while a % 5 == 0 {
            a += 2;
        }
        UserModel {
            pl: PowerLaw::new(n.min(POPULATION), s, q),
            a,
            b: hash3(0xb0b, seed, salt) % POPULATION,
            drift: 0.0,
        }
    }

    /// A uniform window (`Window`).
    pub fn window(seed: u64, salt: u64, w: Window) -> UserModel {
        UserModel { drift: w.1, ..UserModel::new(seed, salt, w.0, 0.0, 0.0) }
    }

    #[inline(always)]
    fn map(&self, position: u64) -> u64 {
        ((position as u128 * self.a as u128 + self.b as u128) % POPULATION as u128) as u64
    }

    #[inline(always)]
    pub fn user_at(&self, u: f64) -> u64 {
        self.map(self.pl.at(u))
    }

    /// The user at `u` for event `index` of the dataset (moving with the drift).
    #[inline(always)]
    pub fn user_at_event(&self, u: f64, index: u64) -> u64 {
        let front = (self.drift * index as f64) as u64 % POPULATION;
        self.map((front + POPULATION - self.pl.at(u)) % POPULATION)
    }
}

/// Stationary law and moving window mixed: one uniform draw picks the part (below
/// `head_share`) and the rank in it.
#[derive(Clone, Copy)]
pub struct UserMix {
    head_share: f64,
    head: UserModel,
    window: UserModel,
}

impl UserMix {
    pub fn new(seed: u64, salt: u64, c: Coll) -> UserMix {
        let (w, h, window) = activity(c);
        UserMix {
            head_share: w,
            head: UserModel::new(seed, salt, h.0, h.1, h.2),
            window: UserModel::window(seed, salt + 1_000, window),
        }
    }

    /// The user of a selection at event `index` of the dataset.
    #[inline(always)]
    pub fn user_at(&self, u: f64, index: u64) -> u64 {
        if u < self.head_share {
            self.head.user_at(u / self.head_share)
        } else {
            self.window.user_at_event((u - self.head_share) / (1.0 - self.head_share), index)
        }
    }
}

/// The event rate: rate(t) = trend(t) * cycle(UTC hour of t), in events per second.
///
/// The cycle is piecewise linear through one value per UTC hour (busiest in the UTC evening and
/// night, quietest in the UTC morning, 2x between them); the trend is piecewise linear through
/// knots at the published spans and constant after the last one, its values the solution of
/// "the first N events span the published time" for N = 1m (13.55 min), 10m (2.2 h), 100m
/// (18.5 h) and 1000m (12.34 days), integrated on the grid below (calibrate/rate.py).
pub const CYCLE: [f64; 24] = [
    1.55, 1.6, 1.6, 1.55, 1.45, 1.3, 1.1, 0.95, 0.85, 0.8, 0.8, 0.8, 0.82, 0.86, 0.9, 0.94, 0.98, 1.02, 1.08, 1.16,
    1.25, 1.35, 1.45, 1.5,
];
/// (seconds after T0, events per second before the cycle).
pub const TREND: [(f64, f64); 4] = [(0.0, 1419.166), (7_920.0, 1340.857), (66_600.0, 1490.369), (153_000.0, 875.113)];
/// Integration step of the cumulative event count, seconds.
pub const RATE_STEP_S: f64 = 60.0;
/// Second of the UTC day at T0.
const T0_SECOND_OF_DAY: f64 = 16.0 * 3600.0 + 25.0 * 60.0 + 49.000167;

/// Events per second at `t` seconds after T0.
pub fn rate_at(t: f64) -> f64 {
    let mean = CYCLE.iter().sum::<f64>() / 24.0;
    let h = ((T0_SECOND_OF_DAY + t) / 3600.0) % 24.0;
    let i = h.floor() as usize % 24;
    let f = h - h.floor();
    let cycle = (CYCLE[i] + f * (CYCLE[(i + 1) % 24] - CYCLE[i])) / mean;
    let trend = match TREND.iter().position(|&(k, _)| k > t) {
        None => TREND[TREND.len() - 1].1,
        Some(0) => TREND[0].1,
        Some(j) => {
            let (t0, v0) = TREND[j - 1];
            let (t1, v1) = TREND[j];
            v0 + (t - t0) / (t1 - t0) * (v1 - v0)
        }
    };
    trend * cycle
}

/// Seconds after T0 at which the stream has produced `events` events: the cumulative rate on a
/// RATE_STEP_S grid (trapezoids), linear within a step. Every file computes it from t = 0 in
/// the same order, so file k's window is the same whichever process generates it.
pub fn seconds_at_event(events: u64) -> f64 {
    let target = events as f64;
    let mut done = 0.0;
    let mut t = 0.0;
    let mut r = rate_at(0.0);
    loop {
        let r_next = rate_at(t + RATE_STEP_S);
        let step = (r + r_next) / 2.0 * RATE_STEP_S;
        if done + step >= target {
            return t + (target - done) / step * RATE_STEP_S;
        }
        done += step;
        t += RATE_STEP_S;
        r = r_next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_are_the_published_ones() {
        let close = |events: u64, seconds: f64| (seconds_at_event(events) / seconds - 1.0).abs() < 0.002;
        assert!(close(1_000_000, 13.55 * 60.0));
        assert!(close(10_000_000, 2.2 * 3600.0));
        assert!(close(100_000_000, 18.5 * 3600.0));
        assert!(close(1_000_000_000, 12.34 * 86_400.0));
    }

    #[test]
    fn the_window_moves_with_the_event_index() {
        // 4 users moving one user every 2 events: events 0-1 see positions -3..=0, events
        // 6-7 positions 0..=3 (before the permutation).
        let w = UserModel::window(1, 5, (4, 0.5));
        let users = |index: u64| {
            let mut v: Vec<u64> = (0..400).map(|k| w.user_at_event((k as f64 + 0.5) / 400.0, index)).collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        assert_eq!(users(0), users(1));
        assert_eq!(users(0).len(), 4);
        let later = users(6);
        assert_eq!(later.len(), 4);
        assert_eq!(users(0).iter().filter(|u| later.contains(u)).count(), 1);
        let still = UserModel::window(1, 5, (4, 0.0));
        assert_eq!(still.user_at_event(0.3, 0), still.user_at_event(0.3, 1_000_000_000));
        assert!(users(u64::MAX / 4).iter().all(|&u| u < POPULATION));
    }

    #[test]
    fn segments() {
        assert_eq!(segment_of(0), 0);
        assert_eq!(segment_of(999_999), 0);
        assert_eq!(segment_of(1_000_000), 1);
        assert_eq!(segment_of(100_000_000), 2);
    }
}
