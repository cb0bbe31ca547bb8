//! Every random number docbench's native programs draw: small, fast and deterministic.
//!
//! - [`Rng`]: xoshiro256++ seeded through SplitMix64, the generator's streams (one per
//!   (seed, file, purpose)), with the samplers built on it ([`InvCdf`], [`Alias`], [`PowerLaw`]);
//! - [`mix64`] / [`hash3`]: the stateless hash that derives per-entity values (user dids, post
//!   CIDs, ...);
//! - [`SplitMix`]: a SplitMix64 sequence, which expands one hash into as many bits as needed and
//!   is the throughput client's generator ([`SplitMix::seeded`], [`SplitMix::unit`]).
//!
//! Whatever is written with these numbers (data files, the client's operations) depends on their
//! exact sequences: the tests below pin them.

#[inline(always)]
pub fn mix64(mut z: u64) -> u64 {
    // SplitMix64 finaliser: a good 64-bit bijective mixer.
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Hash of a (domain, a, b) triple; different domains give independent streams.
#[inline(always)]
pub fn hash3(domain: u64, a: u64, b: u64) -> u64 {
    mix64(mix64(domain.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ a).wrapping_add(b.wrapping_mul(0xd6e8_feb8_6659_fd93)))
}

/// SplitMix64's increment (2^64 / the golden ratio, odd).
pub const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// A SplitMix64 sequence: used to expand one hash into as many bits as needed, and the
/// throughput client's generator (fast, and enough for choosing keys and operations).
pub struct SplitMix(pub u64);

impl SplitMix {
    /// The client's stream for `seed`: state `seed ^ GOLDEN_GAMMA`, first output skipped.
    pub fn seeded(seed: u64) -> SplitMix {
        let mut sm = SplitMix(seed ^ GOLDEN_GAMMA);
        sm.next();
        sm
    }

    #[inline(always)]
    #[allow(clippy::should_implement_trait)] // an infinite stream, not an Iterator
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GOLDEN_GAMMA);
        mix64(self.0)
    }

    /// Uniform in [0, 1) from the top 53 bits.
    #[inline(always)]
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[derive(Clone)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    pub fn new(seed: u64, stream: u64, sub: u64) -> Rng {
        let mut sm = SplitMix(hash3(0x5eed, seed, stream.wrapping_mul(1_000_003).wrapping_add(sub)));
        let mut s = [sm.next(), sm.next(), sm.next(), sm.next()];
        if s == [0, 0, 0, 0] {
            s[0] = 1;
        }
        Rng { s }
    }

    #[inline(always)]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = (s[0].wrapping_add(s[3])).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1).
    #[inline(always)]
    pub fn f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in [0, n) (Lemire's multiply-shift; bias is negligible for our n).
    #[inline(always)]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    #[inline(always)]
    pub fn range(&mut self, lo: u64, hi_incl: u64) -> u64 {
        lo + self.below(hi_incl - lo + 1)
    }

    #[inline(always)]
    pub fn chance(&mut self, p: f64) -> bool {
        self.f64() < p
    }

    /// Exponential with mean 1.
    #[inline(always)]
    pub fn exp1(&mut self) -> f64 {
        -(1.0 - self.f64()).ln()
    }

    #[inline(always)]
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// Piecewise-linear inverse CDF given as (quantile, value) knots, sampled through a lookup table.
pub struct InvCdf {
    table: Vec<f64>,
}

impl InvCdf {
    /// `knots` must start at quantile 0 and end at quantile 1, increasing. If `log` is set the
    /// interpolation happens on log(value) (values must be > 0).
    pub fn new(knots: &[(f64, f64)], log: bool) -> InvCdf {
        const N: usize = 4096;
        let mut table = Vec::with_capacity(N + 1);
        for i in 0..=N {
            let q = i as f64 / N as f64;
            let mut k = 0;
            while k + 2 < knots.len() && knots[k + 1].0 < q {
                k += 1;
            }
            let (q0, v0) = knots[k];
            let (q1, v1) = knots[k + 1];
            let t = if q1 > q0 { ((q - q0) / (q1 - q0)).clamp(0.0, 1.0) } else { 0.0 };
            let v = if log { (v0.ln() + t * (v1.ln() - v0.ln())).exp() } else { v0 + t * (v1 - v0) };
            table.push(v);
        }
        InvCdf { table }
    }

    #[inline(always)]
    pub fn sample(&self, rng: &mut Rng) -> f64 {
        self.at(rng.f64())
    }

    #[inline(always)]
    pub fn at(&self, u: f64) -> f64 {
        let n = (self.table.len() - 1) as f64;
        let x = u * n;
        let i = x as usize;
        let t = x - i as f64;
        let a = self.table[i];
        let b = self.table[(i + 1).min(self.table.len() - 1)];
        a + t * (b - a)
    }
}

/// Walker alias table for a discrete distribution.
pub struct Alias {
    prob: Vec<f64>,
    alias: Vec<u32>,
}

impl Alias {
    pub fn new(weights: &[f64]) -> Alias {
        let n = weights.len();
        let total: f64 = weights.iter().sum();
        let mut scaled: Vec<f64> = weights.iter().map(|w| w * n as f64 / total).collect();
        let mut prob = vec![0.0; n];
        let mut alias = vec![0u32; n];
        let mut small: Vec<usize> = Vec::new();
        let mut large: Vec<usize> = Vec::new();
        for (i, &p) in scaled.iter().enumerate() {
            if p < 1.0 {
                small.push(i)
            } else {
                large.push(i)
            }
        }
        while let (Some(s), Some(l)) = (small.pop(), large.last().copied()) {
            prob[s] = scaled[s];
            alias[s] = l as u32;
            scaled[l] -= 1.0 - scaled[s];
            if scaled[l] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        for i in large.into_iter().chain(small) {
            prob[i] = 1.0;
            alias[i] = i as u32;
        }
        Alias { prob, alias }
    }

    #[inline(always)]
    pub fn sample(&self, rng: &mut Rng) -> usize {
        let r = rng.next_u64();
        let i = (((r >> 32) * self.prob.len() as u64) >> 32) as usize;
        let u = (r & 0xffff_ffff) as f64 * (1.0 / 4_294_967_296.0);
        if u < self.prob[i] {
            i
        } else {
            self.alias[i] as usize
        }
    }
}

/// Truncated continuous power law over ranks [0, n): density ∝ (x + q)^-s, sampled by inverse CDF.
/// With q > 0 this is a Zipf–Mandelbrot law: a flattened head, a power-law tail.
#[derive(Clone, Copy)]
pub struct PowerLaw {
    n: f64,
    a1s: f64,
    span: f64,
    inv: f64,
    q1: f64,
    log_case: bool,
    la: f64,
    lspan: f64,
}

impl PowerLaw {
    pub fn new(n: u64, s: f64, q: f64) -> PowerLaw {
        let a = q + 1.0;
        let b = q + 1.0 + n as f64;
        let log_case = (s - 1.0).abs() < 1e-9;
        let e = 1.0 - s;
        PowerLaw {
            n: n as f64,
            a1s: if log_case { 0.0 } else { a.powf(e) },
            span: if log_case { 0.0 } else { b.powf(e) - a.powf(e) },
            inv: if log_case { 0.0 } else { 1.0 / e },
            q1: a,
            log_case,
            la: a.ln(),
            lspan: b.ln() - a.ln(),
        }
    }

    #[inline(always)]
    pub fn at(&self, u: f64) -> u64 {
        let x =
            if self.log_case { (self.la + u * self.lspan).exp() } else { (self.a1s + u * self.span).powf(self.inv) };
        let r = (x - self.q1).max(0.0);
        (r.min(self.n - 1.0)) as u64
    }

    #[inline(always)]
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        self.at(rng.f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The values below were printed by the implementations before the crate became a library
    // (the generator's rng.rs and docbench-client's own splitmix64): any change to a sequence
    // changes the data files or the client's operations, so it has to be deliberate.

    #[test]
    fn xoshiro_sequences_are_pinned() {
        let mut r = Rng::new(1, 2, 3);
        let first: Vec<u64> = (0..5).map(|_| r.next_u64()).collect();
        assert_eq!(
            first,
            [2726623684440999409, 17491000422920375161, 7230685049250552784, 1951102091424869884, 11863392676362028002]
        );
        assert_eq!(r.f64(), 0.033594738207412655);
        assert_eq!(r.below(1000), 478);
        let mut r = Rng::new(0, 0, 0);
        assert_eq!(r.next_u64(), 13657845336763747077);
        let mut r = Rng::new(12345, 1, 0);
        assert_eq!(r.next_u64(), 15545634437726224115);
    }

    #[test]
    fn same_seed_same_stream_and_streams_differ() {
        let draw = |seed, stream, sub| {
            let mut r = Rng::new(seed, stream, sub);
            (0..64).map(|_| r.next_u64()).collect::<Vec<_>>()
        };
        assert_eq!(draw(7, 1, 3), draw(7, 1, 3));
        assert_ne!(draw(7, 1, 3), draw(8, 1, 3));
        assert_ne!(draw(7, 1, 3), draw(7, 2, 3));
        assert_ne!(draw(7, 1, 3), draw(7, 1, 4));
        let mut a = Rng::new(7, 1, 3);
        let mut b = a.clone();
        assert_eq!(a.next_u64(), b.next_u64());
    }

    #[test]
    fn hashes_are_pinned() {
        assert_eq!(mix64(0), 0);
        assert_eq!(mix64(1), 6238072747940578789);
        assert_eq!(hash3(1, 2, 3), 7195794922739411523);
        let mut sm = SplitMix(42);
        assert_eq!((sm.next(), sm.next()), (13679457532755275413, 2949826092126892291));
    }

    #[test]
    fn client_stream_is_the_one_docbench_client_always_drew() {
        let mut r = SplitMix::seeded(1);
        let first: Vec<u64> = (0..5).map(|_| r.next()).collect();
        assert_eq!(
            first,
            [
                4048727598324417001, 7862637804313477842, 13015481187462834606, 15212506146343009075,
                17388166129998380965
            ]
        );
        let mut r = SplitMix::seeded(0);
        assert_eq!(r.next(), 487617019471545679);
        // seed 5, client 3: the client's own generator (seed * 7919 + id).
        let mut r = SplitMix::seeded(5 * 7919 + 3);
        assert_eq!(r.next(), 9101758917558652113);
        let mut r = SplitMix::seeded(5 * 7919 + 3);
        assert_eq!([r.unit(), r.unit(), r.unit()], [0.4934073395928201, 0.4709426281946695, 0.11723830217526199]);
        // (seeds wrap: u64::MAX's stream is seed 1's two steps later)
        let mut r = SplitMix::seeded(u64::MAX);
        assert_eq!([r.next(), r.next(), r.next()], [16490336266968443936, 16834447057089888969, 4048727598324417001]);
    }

    #[test]
    fn uniforms_stay_in_range() {
        let mut r = Rng::new(3, 0, 0);
        let mut sm = SplitMix::seeded(3);
        for _ in 0..100_000 {
            let (a, b) = (r.f64(), sm.unit());
            assert!((0.0..1.0).contains(&a) && (0.0..1.0).contains(&b));
            assert!(r.below(7) < 7);
            assert!((5..=9).contains(&r.range(5, 9)));
        }
        let mean = (0..100_000).map(|_| r.exp1()).sum::<f64>() / 100_000.0;
        assert!((mean - 1.0).abs() < 0.02, "{mean}");
    }

    #[test]
    fn samplers_follow_their_distributions() {
        let mut r = Rng::new(11, 0, 0);
        let alias = Alias::new(&[1.0, 0.0, 3.0]);
        let mut counts = [0usize; 3];
        for _ in 0..40_000 {
            counts[alias.sample(&mut r)] += 1;
        }
        assert_eq!(counts[1], 0);
        assert!((counts[2] as f64 / counts[0] as f64 - 3.0).abs() < 0.2, "{counts:?}");

        let cdf = InvCdf::new(&[(0.0, 1.0), (0.5, 2.0), (1.0, 4.0)], false);
        assert_eq!((cdf.at(0.0), cdf.at(0.5), cdf.at(1.0)), (1.0, 2.0, 4.0));
        assert!((cdf.at(0.25) - 1.5).abs() < 1e-9);
        let log = InvCdf::new(&[(0.0, 1.0), (1.0, 100.0)], true);
        assert!((log.at(0.5) - 10.0).abs() < 1e-6);

        for s in [1.0, 1.5] {
            let law = PowerLaw::new(1000, s, 2.0);
            assert_eq!(law.at(0.0), 0);
            assert_eq!(law.at(1.0), 999);
            let head = (0..10_000).filter(|_| law.sample(&mut r) < 10).count();
            let tail = (0..10_000).filter(|_| law.sample(&mut r) >= 990).count();
            assert!(head > 10 * tail, "s={s}: {head} vs {tail}");
        }
    }
}
